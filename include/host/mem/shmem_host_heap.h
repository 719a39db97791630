/* Forwarding header: the original's include path host/mem/shmem_host_heap.h. Everything is declared in shmem.h. */
#include "../../shmem.h"

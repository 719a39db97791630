/* Forwarding header: the original's include path host/utils/shmem_host_exception.h. Everything is declared in shmem.h. */
#include "../../shmem.h"

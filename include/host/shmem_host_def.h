/* Forwarding header: the original's include path host/shmem_host_def.h. Everything is declared in shmem.h. */
#include "../shmem.h"

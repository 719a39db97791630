/* Forwarding header: the original's include path host/init/shmem_host_init.h. Everything is declared in shmem.h. */
#include "../../shmem.h"

/* Forwarding header: the original's include path host/utils/shmem_log.h. Everything is declared in shmem.h. */
#include "../../shmem.h"

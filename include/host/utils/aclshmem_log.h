/* Forwarding header: host/utils/aclshmem_log.h, an include path of earlier releases of the original.
   Everything is declared in shmem.h. */
#include "../../shmem.h"

/* Forwarding header: host_device/aclshmem_common_types.h, an include path of earlier releases of the original.
   Everything is declared in shmem.h. */
#include "../shmem.h"

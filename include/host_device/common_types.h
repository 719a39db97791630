/* Forwarding header: host_device/common_types.h, an include path of earlier releases of the original.
   Everything is declared in shmem.h. */
#include "../shmem.h"

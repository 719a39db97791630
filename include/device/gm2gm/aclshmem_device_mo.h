/* Forwarding header: device/gm2gm/aclshmem_device_mo.h, an include path of earlier releases of the original.
   The whole device API of the CPU device mode is declared in device/shmem_device.h. */
#include "../shmem_device.h"

/* Forwarding header: device/gm2gm/engine/shmem_device_udma.h, an include path of the original.
   The whole device API of the CPU device mode is declared in device/shmem_device.h. */
#include "../../shmem_device.h"

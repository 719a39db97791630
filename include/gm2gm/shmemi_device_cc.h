/* Forwarding header for kernels that include the original's internal device header gm2gm/shmemi_device_cc.h (from its src/device
   include directory): the CPU device mode declares the helpers they use in device/shmem_device.h. */
#include "../device/shmem_device.h"

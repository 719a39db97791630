/* Forwarding header: the original's include path device/gm2gm/shmem_device_p2p_sync.h. The whole device API of the CPU device
   mode is declared in device/shmem_device.h. */
#include "../shmem_device.h"

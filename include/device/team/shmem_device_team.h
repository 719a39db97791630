/* Forwarding header: the original's include path device/team/shmem_device_team.h. The whole device API of the CPU device
   mode is declared in device/shmem_device.h. */
#include "../shmem_device.h"

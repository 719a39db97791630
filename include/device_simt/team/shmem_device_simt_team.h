/* Forwarding header: the original's include path device_simt/team/shmem_device_simt_team.h. The whole SIMT API of the CPU
   device mode is declared in device_simt/shmem_device_simt.h. */
#include "../shmem_device_simt.h"

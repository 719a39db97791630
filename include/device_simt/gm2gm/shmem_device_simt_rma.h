/* Forwarding header: the original's include path device_simt/gm2gm/shmem_device_simt_rma.h. The whole SIMT API of the CPU
   device mode is declared in device_simt/shmem_device_simt.h. */
#include "../shmem_device_simt.h"

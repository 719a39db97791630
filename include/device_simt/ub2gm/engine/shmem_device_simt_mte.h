/* Forwarding header: device_simt/ub2gm/engine/shmem_device_simt_mte.h, an include path of the original.
   The whole SIMT API of the CPU device mode is declared in device_simt/shmem_device_simt.h. */
#include "../../shmem_device_simt.h"

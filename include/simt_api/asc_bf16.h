/* Forwarding header: the original's include path simt_api/asc_bf16.h; the SIMT runtime of the CPU device mode
   is declared in simt_api/asc_simt.h (half and bfloat16_t come from device/aclshmem_cpu.h). */
#include "asc_simt.h"

/* Forwarding header for programs that include the original's internal host header
   shmemi_host_common.h: shmem.h, and the host-visible state g_state_host (default_stream and the
   per-core notifies notify_arr that kernels record with aclshmemx_sdma_notify_record). */
#include "shmem.h"
extern aclshmem_host_state_t g_state_host;

/* Forwarding header for programs that include the original's internal host header
   shmemi_host_common.h: shmem.h, the host-visible state g_state_host (default_stream and the
   per-core notifies notify_arr that kernels record with aclshmemx_sdma_notify_record) and, for C++,
   the internal call aclshmemi_control_barrier_all() (a barrier of every PE; 0 or an error code),
   which upstream examples' host programs call. */
#ifndef ACLSHMEM_SHMEMI_HOST_COMMON_H
#define ACLSHMEM_SHMEMI_HOST_COMMON_H
#include "shmem.h"
extern aclshmem_host_state_t g_state_host;
#ifdef __cplusplus
int32_t aclshmemi_control_barrier_all();
#endif
#endif

/*
 * runtime/rt_ffts.h - the part of the CANN runtime's FFTS header that host programs of kernels
 * use (libascendcl.so of this package implements it): the rtError_t status type and the query of
 * the FFTS control address that host code hands to kernels (util_set_ffts_config). The CPU has no
 * FFTS: the address and length are 0.
 */
#ifndef ACLSHMEM_RUNTIME_RT_FFTS_H
#define ACLSHMEM_RUNTIME_RT_FFTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t rtError_t;
#define RT_ERROR_NONE 0

/* Writes the FFTS control address and its length (both 0 on the CPU). RT_ERROR_NONE; a NULL
   pointer: 100000 (ACL_ERROR_INVALID_PARAM). */
rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len);

#ifdef __cplusplus
}
#endif

#endif

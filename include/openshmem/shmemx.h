/* OpenSHMEM extensions of libaclshmem (beyond the standard API of <shmem.h>). The CANN SHMEM API
 * (aclshmem_*, aclshmemx_*) is available from the same library through <shmem.h> of the include/
 * directory, in another translation unit. */
#ifndef ACLSHMEM_OPENSHMEM_SHMEMX_H
#define ACLSHMEM_OPENSHMEM_SHMEMX_H
#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds of a monotonic clock (an arbitrary origin: take differences), as Sandia OpenSHMEM's
 * extension of the same name, which benchmarks written for it call; HAVE_SHMEMX_WTIME tells them
 * it is there. Needs no shmem_init. */
#define HAVE_SHMEMX_WTIME 1
double shmemx_wtime(void);

#ifdef __cplusplus
}
#endif

#endif

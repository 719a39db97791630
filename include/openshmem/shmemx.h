/* OpenSHMEM extensions of libaclshmem: none beyond the standard API yet; the CANN SHMEM API
 * (aclshmem_*, aclshmemx_*) is available from the same library through <shmem.h> of the include/
 * directory, in another translation unit. */
#ifndef ACLSHMEM_OPENSHMEM_SHMEMX_H
#define ACLSHMEM_OPENSHMEM_SHMEMX_H
#include <shmem.h>
#endif

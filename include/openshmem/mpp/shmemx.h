/* <mpp/shmemx.h>: the same as <shmemx.h> (see mpp/shmem.h). */
#ifndef ACLSHMEM_OPENSHMEM_MPP_SHMEMX_H
#define ACLSHMEM_OPENSHMEM_MPP_SHMEMX_H
#include <shmemx.h>
#endif

/* The header path of the SGI/Cray SHMEM era (<mpp/shmem.h>), which older OpenSHMEM programs still
 * include: the same as <shmem.h> (OpenSHMEM 1.5 names only <shmem.h>). */
#ifndef ACLSHMEM_OPENSHMEM_MPP_SHMEM_H
#define ACLSHMEM_OPENSHMEM_MPP_SHMEM_H
#include <shmem.h>
#endif

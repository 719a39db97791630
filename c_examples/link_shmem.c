/*
 * link_shmem.c - a program linked against libshmem.so, the original CANN SHMEM library name.
 *
 * Start it with the launcher, e.g.  aclshmrun -n 2 ./link_shmem
 *
 * The CMake project links this file to <prefix>/lib/libshmem.so (a symlink to libaclshmem.so), the way
 * existing programs built with -lshmem are linked; it only initialises, synchronises and finalizes.
 * Exits non-zero and prints "FAIL: ..." on any error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "shmem.h"

int main(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int ret;
    int me;
    int npes;

    ret = aclshmemx_set_attr_from_env(&attr);
    if (ret != 0) {
        fprintf(stderr, "FAIL: [link_shmem] aclshmemx_set_attr_from_env returned %d "
                        "(run this program through aclshmrun)\n", ret);
        return 1;
    }
    ret = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (ret != 0) {
        fprintf(stderr, "FAIL: [link_shmem, PE %d] aclshmemx_init_attr returned %d\n", attr.my_pe, ret);
        return 1;
    }
    me = aclshmem_my_pe();
    npes = aclshmem_n_pes();
    if (me != attr.my_pe || npes != attr.n_pes) {
        fprintf(stderr, "FAIL: [link_shmem, PE %d] PE queries say %d of %d, attributes say %d of %d\n",
                attr.my_pe, me, npes, attr.my_pe, attr.n_pes);
        return 1;
    }
    aclshmem_barrier_all();
    ret = aclshmem_finalize();
    if (ret != 0) {
        fprintf(stderr, "FAIL: [link_shmem, PE %d] aclshmem_finalize returned %d\n", me, ret);
        return 1;
    }
    if (me == 0) {
        printf("link_shmem: OK (%d PEs, linked as libshmem.so)\n", npes);
    }
    return 0;
}

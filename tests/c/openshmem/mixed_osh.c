/* Both APIs in one process: this translation unit uses the OpenSHMEM header, mixed_acl.c the CANN
 * SHMEM header (whose shmem_* alias macros never meet these declarations). One runtime: a block
 * from aclshmem_malloc is a valid target of shmem_* calls and the PE numbers agree.
 *
 * The finalize orders (argument): "acl_first" initialises the aclshmem API first and finalizes it
 * (aclshmem_finalize) before shmem_finalize; "osh_only" calls aclshmem_finalize on the instance
 * shmem_init made. Either way the OpenSHMEM calls work until shmem_finalize, which ends it. */
#include <string.h>

#include "osh_util.h"

int acl_side_pe(void);
int *acl_side_alloc(void);
void acl_side_put(int *dest, int value, int pe);
int acl_side_init(void);
int acl_side_finalize(void);
int acl_side_status(void);

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "acl_first") == 0 && acl_side_init() != 0) {
        printf("FAIL: aclshmem init\n");
        return 1;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(acl_side_pe() == me, "same PE number in both APIs");
    int *block = acl_side_alloc();
    CHECK(block != NULL && shmem_addr_accessible(block, right), "aclshmem block is symmetric for shmem_*");
    shmem_int_p(&block[0], me, right);
    acl_side_put(&block[1], 100 + me, right);
    shmem_barrier_all();
    CHECK(block[0] == left && block[1] == 100 + left, "both APIs write the same heap");
    shmem_barrier_all();
    if (*mode) {
        /* the aclshmem API lets go; OpenSHMEM still has the instance until shmem_finalize */
        CHECK(acl_side_finalize() == 0, "aclshmem_finalize");
        int *x = shmem_malloc(sizeof(int));
        CHECK(x != NULL, "shmem_malloc after aclshmem_finalize");
        if (x) {
            *x = -1;
            shmem_barrier_all();
            shmem_int_p(x, me, right);
            shmem_barrier_all();
            CHECK(*x == left, "RMA after aclshmem_finalize: %d", *x);
            shmem_free(x);
        }
        shmem_barrier_all();
    }
    return osh_done("mixed");
}

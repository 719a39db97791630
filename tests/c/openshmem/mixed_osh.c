/* Both APIs in one process: this translation unit uses the OpenSHMEM header, mixed_acl.c the CANN
 * SHMEM header (whose shmem_* alias macros never meet these declarations). One runtime: a block
 * from aclshmem_malloc is a valid target of shmem_* calls and the PE numbers agree. */
#include "osh_util.h"

int acl_side_pe(void);
int *acl_side_alloc(void);
void acl_side_put(int *dest, int value, int pe);

int main(void) {
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
    return osh_done("mixed");
}

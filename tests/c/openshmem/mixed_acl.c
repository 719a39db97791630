/* The CANN SHMEM half of the mixed program (built with include/, the aclshmem header). */
#include <shmem.h>

int acl_side_pe(void) { return aclshmem_my_pe(); }
int *acl_side_alloc(void) { return (int *)aclshmem_malloc(64); }
void acl_side_put(int *dest, int value, int pe) { aclshmem_int32_p(dest, value, pe); }

int acl_side_init(void) {
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_from_env(&attr) != 0) return -1;
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}
int acl_side_finalize(void) { return aclshmem_finalize(); }
int acl_side_status(void) { return aclshmemx_init_status(); }

/* The CANN SHMEM half of the mixed program (built with include/, the aclshmem header). */
#include <shmem.h>

int acl_side_pe(void) { return aclshmem_my_pe(); }
int *acl_side_alloc(void) { return (int *)aclshmem_malloc(64); }
void acl_side_put(int *dest, int value, int pe) { aclshmem_int32_p(dest, value, pe); }

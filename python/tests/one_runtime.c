/* Built by test_one_runtime.py against libaclshmem.so and loaded with ctypes next to the shmem package. */
#include "shmem.h"

int c_my_pe(void) { return aclshmem_my_pe(); }
int c_n_pes(void) { return aclshmem_n_pes(); }
int c_init_status(void) { return aclshmemx_init_status(); }
void *c_heap_base(void) { return aclshmemx_get_heap_base(DEVICE_SIDE); }

/* Reads sym[0] locally, writes it into sym[1] of the next PE; returns the local value. */
int c_read_and_put(int *sym)
{
    int v = sym[0];
    aclshmem_int32_p(&sym[1], v, (aclshmem_my_pe() + 1) % aclshmem_n_pes());
    aclshmem_quiet();
    return v;
}

/* A program that defines globals named like the library's exported g_state and g_state_host (the
   original's host copies of its state records) for its own purposes: the library must not write
   into them (tests/api.rs). Runs under aclshmrun; exit 0 = the program's globals kept their values
   and the library worked. */
#include <stdio.h>
#include "shmem.h"

long g_state[4] = {11, 22, 33, 44};
int g_state_host = 7;

#define CHECK(c) do { if (!(c)) { printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #c); return 1; } } while (0)

static int untouched(void)
{
    return g_state[0] == 11 && g_state[1] == 22 && g_state[2] == 33 && g_state[3] == 44 && g_state_host == 7;
}

int main(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_from_env(&attr) == 0);
    CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) == 0);
    CHECK(untouched());
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, aclshmem_n_pes(), &t) == 0);
    aclshmem_team_destroy(t);
    int *p = (int *)aclshmem_calloc(16, sizeof(int));
    CHECK(p != NULL);
    aclshmem_int32_p(p, aclshmem_my_pe() + 1, (aclshmem_my_pe() + 1) % aclshmem_n_pes());
    aclshmem_barrier_all();
    CHECK(p[0] == (aclshmem_my_pe() + aclshmem_n_pes() - 1) % aclshmem_n_pes() + 1);
    CHECK(untouched());
    aclshmem_free(p);
    CHECK(aclshmem_finalize() == 0);
    CHECK(untouched());
    printf("OK g_state_clash\n");
    return 0;
}

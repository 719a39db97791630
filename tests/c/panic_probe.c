/* panic_probe.c - a C caller of aclshmemx_test_panic, exported by crates/panic-probe (tests/panic.rs).
 * Before init and, under aclshmrun, after init: the panic becomes ACLSHMEM_INNER_ERROR, the process
 * survives, and later calls work (init, allocation, RMA, barrier, finalize). Exits non-zero on the
 * first failed check; prints "OK panic" on PE 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

int aclshmemx_test_panic(int what); /* not in shmem.h: exported by crates/panic-probe only */

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #c);                  \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* before init */
    CHECK(aclshmemx_test_panic(1) == ACLSHMEM_INNER_ERROR);
    CHECK(aclshmemx_test_panic(2) == ACLSHMEM_INNER_ERROR);
    CHECK(aclshmem_my_pe() == -1);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_from_env(&attr) == 0);
    CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) == 0);
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    /* after init: a panic in one call leaves the instance usable */
    CHECK(aclshmemx_test_panic(3) == ACLSHMEM_INNER_ERROR);
    int *x = (int *)aclshmem_malloc(sizeof(int));
    CHECK(x != NULL);
    *x = -1;
    aclshmem_barrier_all();
    aclshmem_int32_p(x, me, (me + 1) % n);
    aclshmem_barrier_all();
    CHECK(*x == (me + n - 1) % n);
    CHECK(aclshmemx_test_panic(4) == ACLSHMEM_INNER_ERROR);
    aclshmem_free(x);
    CHECK(aclshmem_finalize() == 0);
    if (me == 0) {
        printf("OK panic\n");
    }
    return 0;
}

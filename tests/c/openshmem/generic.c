/* C11 type-generic selection of <shmem.h> (built with -std=c11 -Wall -Wextra -Werror): RMA, AMO,
 * wait/test and collectives through the generic names, with and without a context. */
#include "osh_util.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    double *d = shmem_malloc(4 * sizeof(double));
    long *l = shmem_calloc(4, sizeof(long));
    unsigned int *u = shmem_calloc(2, sizeof(unsigned int));
    float *f = shmem_malloc(2 * sizeof(float));
    double ds[4] = {me, me + 0.5, me + 1.0, me + 1.5};
    shmem_put(d, ds, 4, right);
    shmem_barrier_all();
    CHECK(d[1] == left + 0.5, "generic put");
    double dg[4];
    shmem_get(dg, d, 4, right);
    CHECK(dg[0] == me, "generic get");
    shmem_put(SHMEM_CTX_DEFAULT, d, ds, 2, right);
    shmem_p(&l[0], (long)me, right);
    shmem_barrier_all();
    CHECK(shmem_g(&l[0], me) == left, "generic p/g");
    const long *cl = l;
    CHECK(shmem_g(cl, me) == left, "generic g on const");
    shmem_atomic_add(&l[1], 3L, 0);
    long old = shmem_atomic_fetch_add(SHMEM_CTX_DEFAULT, &l[2], 1L, 0);
    (void)old;
    shmem_atomic_or(&u[0], 1u << (me % 32), 0);
    shmem_atomic_set(&f[0], 1.5f, right);
    shmem_barrier_all();
    if (me == 0) CHECK(l[1] == 3L * n && l[2] == n, "generic atomics");
    CHECK(shmem_atomic_fetch(&f[0], me) == 1.5f, "generic float fetch");
    shmem_atomic_set(&l[3], 5L, right);
    shmem_wait_until(&l[3], SHMEM_CMP_EQ, 5L);
    CHECK(shmem_test(&l[3], SHMEM_CMP_GE, 5L) == 1, "generic test");
    long *r = shmem_malloc(sizeof(long)), *s = shmem_malloc(sizeof(long));
    *s = me;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, r, s, 1);
    CHECK(*r == (long)n * (n - 1) / 2, "generic sum_reduce");
    shmem_broadcast(SHMEM_TEAM_WORLD, r, s, 1, 0);
    CHECK(*r == 0, "generic broadcast");
    shmem_free(r);
    shmem_free(s);
    shmem_free(f);
    shmem_free(u);
    shmem_free(l);
    shmem_free(d);
    return osh_done("generic");
}

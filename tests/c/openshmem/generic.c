/* C11 type-generic selection of <shmem.h> (built with -std=c11 -Wall -Wextra -Werror): RMA, AMO,
 * wait/test and collectives through the generic names, with and without a context; the fixed-width
 * types of the bitwise families; the deprecated (1.4) generic AMO names; the in-place broadcast. */
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
    /* the in-place broadcast (dest == source) */
    *s = me * 10 + 7;
    shmem_broadcast(SHMEM_TEAM_WORLD, s, s, 1, n - 1);
    CHECK(*s == (n - 1) * 10 + 7, "in-place generic broadcast: %ld", *s);
    /* fixed-width types that only the bitwise families have: int32_t/int64_t AMOs, int8_t..int64_t
     * bitwise reductions */
    int32_t *i32 = shmem_calloc(2, sizeof(int32_t));
    int64_t *i64 = shmem_calloc(2, sizeof(int64_t));
    shmem_barrier_all();
    shmem_atomic_or(&i32[0], (int32_t)1 << (me % 31), 0);
    shmem_atomic_xor(SHMEM_CTX_DEFAULT, &i64[0], (int64_t)1 << (me % 63), 0);
    shmem_barrier_all();
    if (me == 0) {
        int32_t want32 = 0;
        int64_t want64 = 0;
        for (int p = 0; p < n; p++) {
            want32 |= (int32_t)1 << (p % 31);
            want64 ^= (int64_t)1 << (p % 63);
        }
        CHECK(shmem_atomic_fetch_and(&i32[0], (int32_t)-1, 0) == want32, "generic int32_t fetch_and");
        CHECK(shmem_atomic_fetch_xor(&i64[0], (int64_t)0, 0) == want64, "generic int64_t fetch_xor");
        shmem_atomic_and(&i32[0], (int32_t)0, 0);
        CHECK(shmem_atomic_fetch_or(&i64[1], (int64_t)6, 0) == 0, "generic int64_t fetch_or");
        CHECK(i32[0] == 0 && i64[1] == 6, "generic int32_t and / int64_t fetch_or results");
    }
    int8_t *b8 = shmem_malloc(2 * sizeof(int8_t));
    int16_t *b16 = shmem_malloc(2 * sizeof(int16_t));
    b8[0] = (int8_t)(0x70 | me);
    b16[0] = (int16_t)(1 << (me % 15));
    i32[1] = (int32_t)(me == 0 ? -1 : 0x0f0f);
    shmem_barrier_all();
    shmem_and_reduce(SHMEM_TEAM_WORLD, &b8[1], &b8[0], 1);
    shmem_or_reduce(SHMEM_TEAM_WORLD, &b16[1], &b16[0], 1);
    shmem_xor_reduce(SHMEM_TEAM_WORLD, &i64[1], &i64[1], 1); /* in place */
    shmem_and_reduce(SHMEM_TEAM_WORLD, &i32[0], &i32[1], 1);
    int8_t want8 = 0x7f;
    int16_t want16 = 0;
    int64_t want_x = 0;
    for (int p = 0; p < n; p++) {
        want8 &= (int8_t)(0x70 | p);
        want16 |= (int16_t)(1 << (p % 15));
        want_x ^= p == 0 ? 6 : 0;
    }
    CHECK(b8[1] == want8 && b16[1] == want16, "generic int8_t and / int16_t or reduce: %d %d", b8[1], b16[1]);
    CHECK(i64[1] == want_x, "generic in-place int64_t xor reduce: %ld", (long)i64[1]);
    CHECK(i32[0] == (n == 1 ? -1 : 0x0f0f), "generic int32_t and reduce: %d", (int)i32[0]);
    /* the signed basic types Sandia OpenSHMEM also gives the bitwise team reductions (the 1.4
     * `_to_all` types): by the generic names and by their own */
    long long *ll = shmem_malloc(2 * sizeof(long long));
    short *sh = shmem_malloc(2 * sizeof(short));
    int *in = shmem_malloc(2 * sizeof(int));
    long *lo = shmem_malloc(2 * sizeof(long));
    ll[0] = (long long)1 << (32 + me % 31);
    sh[0] = (short)(0x7ff0 | me);
    in[0] = 1 << (me % 31);
    lo[0] = -1L ^ (1L << (me % 63));
    shmem_barrier_all();
    shmem_or_reduce(SHMEM_TEAM_WORLD, &ll[1], &ll[0], 1);
    shmem_and_reduce(SHMEM_TEAM_WORLD, &sh[1], &sh[0], 1);
    shmem_int_xor_reduce(SHMEM_TEAM_WORLD, &in[1], &in[0], 1);
    shmem_long_and_reduce(SHMEM_TEAM_WORLD, &lo[1], &lo[0], 1);
    long long want_ll = 0;
    short want_sh = 0x7fff;
    int want_in = 0;
    long want_lo = -1L;
    for (int p = 0; p < n; p++) {
        want_ll |= (long long)1 << (32 + p % 31);
        want_sh &= (short)(0x7ff0 | p);
        want_in ^= 1 << (p % 31);
        want_lo &= -1L ^ (1L << (p % 63));
    }
    CHECK(ll[1] == want_ll && sh[1] == want_sh, "generic long long or / short and reduce: %llx %x", ll[1], sh[1]);
    CHECK(in[1] == want_in && lo[1] == want_lo, "int xor / long and reduce: %x %lx", in[1], lo[1]);
    /* the deprecated (1.4) generic AMO names */
    shmem_barrier_all();
    if (me == 0) l[0] = 0;
    shmem_barrier_all();
    shmem_add(&l[0], 2L, 0);
    shmem_inc(&l[0], 0);
    (void)shmem_fadd(&l[0], 1L, 0);
    (void)shmem_finc(&l[0], 0);
    (void)shmem_fadd(&u[1], 2u, 0); /* the 1.4 tables: unsigned types too */
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_fetch(&l[0], 0) == 5L * n, "deprecated generic add/inc/fadd/finc: %ld", l[0]);
        const long *cl0 = &l[0];
        CHECK(shmem_fetch(cl0, 0) == 5L * n, "deprecated generic fetch on const");
        CHECK(shmem_fetch(&u[1], 0) == 2u * (unsigned)n, "deprecated generic fadd/fetch on unsigned int");
        shmem_set(&l[0], 9L, 0);
        CHECK(shmem_swap(&l[0], 10L, 0) == 9L, "deprecated generic set/swap");
        CHECK(shmem_cswap(&l[0], 10L, 11L, 0) == 10L && l[0] == 11L, "deprecated generic cswap");
        shmem_set(&f[1], 2.5f, 0);
        CHECK(shmem_swap(&f[1], 3.5f, 0) == 2.5f && shmem_fetch(&f[1], 0) == 3.5f, "deprecated generic float");
    }
    shmem_barrier_all();
    shmem_free(b16);
    shmem_free(b8);
    shmem_free(i64);
    shmem_free(i32);
    shmem_free(r);
    shmem_free(s);
    shmem_free(f);
    shmem_free(u);
    shmem_free(l);
    shmem_free(d);
    return osh_done("generic");
}

/* OpenSHMEM 1.5 chapters 9.4, 9.5, 9.9: teams (strided, 2-D, translate, config, destroy), contexts
 * over a team, team-based collectives and reductions, and the deprecated active-set collectives
 * with several PE_start/logPE_stride/PE_size shapes. */
#include <complex.h>
#include <string.h>
#include "osh_util.h"

static long *new_psync(void) {
    long *p = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++) p[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    return p;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();

    /* ---- teams ---- */
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == n, "shared = world on one node");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "invalid team");
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_config_t conf = {.num_contexts = 2};
    int neven = (n + 1) / 2;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, neven, &conf, SHMEM_TEAM_NUM_CONTEXTS, &even) == 0, "split");
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID && shmem_team_my_pe(even) == me / 2, "even my_pe");
        CHECK(shmem_team_n_pes(even) == neven, "even n_pes");
        CHECK(shmem_team_translate_pe(even, 1 % neven, SHMEM_TEAM_WORLD) == (1 % neven) * 2, "translate");
        shmem_team_config_t got = {0};
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 2, "config");
        /* a context over the team: PE numbers are team indices */
        shmem_ctx_t ctx;
        CHECK(shmem_team_create_ctx(even, 0, &ctx) == 0, "team ctx");
        shmem_team_t back;
        CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == even, "ctx_get_team");
        int *box = shmem_calloc(1, sizeof(int)); /* collective over the world: all PEs call it below too */
        (void)box;
        shmem_ctx_destroy(ctx);
    } else {
        CHECK(even == SHMEM_TEAM_INVALID, "odd PEs get SHMEM_TEAM_INVALID");
        int *box = shmem_calloc(1, sizeof(int));
        (void)box;
    }
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1 % n, even) == (me % 2 == 0 && (1 % n) % 2 == 0 ? (1 % n) / 2 : -1) ||
          me % 2 == 1, "translate odd to even");
    shmem_team_t xt, yt;
    int xr = n >= 2 ? 2 : 1;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d");
    CHECK(shmem_team_my_pe(xt) == me % xr && shmem_team_my_pe(yt) == me / xr, "2d indices");
    shmem_barrier_all();

    /* ---- team-based collectives on the world ---- */
    /* 4 longs per PE, and room for collect32 of 1 + 2 + ... + n ints below */
    size_t words = 4 * (size_t)n + (size_t)n * (n + 1) / 4 + 1;
    long *src = shmem_malloc(words * sizeof(long));
    long *dst = shmem_malloc(words * sizeof(long));
    for (int i = 0; i < 4 * n; i++) src[i] = me * 1000 + i;
    shmem_barrier_all();
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 4, n - 1) == 0, "broadcast rc");
    for (int i = 0; i < 4; i++) CHECK(dst[i] == (n - 1) * 1000 + i, "broadcast [%d]=%ld", i, dst[i]);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 2);
    for (int p = 0; p < n; p++) CHECK(dst[2 * p + 1] == p * 1000 + 1, "fcollect");
    shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, 1);
    for (int p = 0; p < n; p++) CHECK(dst[p] == p * 1000, "collect");
    shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, 2);
    for (int p = 0; p < n; p++) CHECK(dst[2 * p] == p * 1000 + 2 * me, "alltoall");
    shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, 2, 1, 1);
    for (int p = 0; p < n; p++) CHECK(dst[2 * p] == p * 1000 + me, "alltoalls");
    shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8, 0);
    CHECK(dst[0] == 0, "broadcastmem");

    /* reductions */
    int *ia = shmem_malloc(2 * sizeof(int));
    int *ib = shmem_malloc(2 * sizeof(int));
    ia[0] = me + 1;
    ia[1] = -me;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, ib, ia, 2);
    CHECK(ib[0] == n * (n + 1) / 2, "int sum");
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, ib, ia, 2);
    CHECK(ib[0] == 1 && ib[1] == -(n - 1), "int min");
    unsigned long *ua = shmem_malloc(sizeof(unsigned long)), *ub = shmem_malloc(sizeof(unsigned long));
    *ua = 1UL << (me % 64);
    shmem_ulong_or_reduce(SHMEM_TEAM_WORLD, ub, ua, 1);
    CHECK(*ub == (n >= 64 ? ~0UL : (1UL << n) - 1), "ulong or");
    double *da = shmem_malloc(sizeof(double)), *db = shmem_malloc(sizeof(double));
    *da = 1.0 + me;
    shmem_double_prod_reduce(SHMEM_TEAM_WORLD, db, da, 1);
    double fact = 1;
    for (int i = 1; i <= n; i++) fact *= i;
    CHECK(*db == fact, "double prod");
    shmem_double_max_reduce(SHMEM_TEAM_WORLD, db, da, 1);
    CHECK(*db == n, "double max");
    double _Complex *ca = shmem_malloc(sizeof(double _Complex)), *cb = shmem_malloc(sizeof(double _Complex));
    *ca = me + 1.0 * I;
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, cb, ca, 1);
    CHECK(creal(*cb) == n * (n - 1) / 2 && cimag(*cb) == n, "complexd sum");
    if (me % 2 == 0) {
        shmem_int_sum_reduce(even, ib, ia, 1);
        int want = 0;
        for (int p = 0; p < n; p += 2) want += p + 1;
        CHECK(ib[0] == want, "sum over the even team %d want %d", ib[0], want);
        CHECK(shmem_team_sync(even) == 0, "team_sync");
    }
    shmem_barrier_all();

    /* ---- deprecated active-set forms ---- */
    long *ps = new_psync();
    long *pwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(long));
    struct { int start, logstride, size; } shapes[] = {
        {0, 0, n}, {n > 1 ? 1 : 0, 0, n > 1 ? n - 1 : 1}, {0, 1, (n + 1) / 2}, {0, 2, (n + 3) / 4}, {n - 1, 0, 1},
    };
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int start = shapes[s].start, ls = shapes[s].logstride, size = shapes[s].size, st = 1 << ls;
        int in = me >= start && (me - start) % st == 0 && (me - start) / st < size;
        if (in) {
            int idx = (me - start) / st;
            for (int rep = 0; rep < 3; rep++) shmem_barrier(start, ls, size, ps);
            /* broadcast64: the root's dest is not written */
            for (int i = 0; i < 4 * n; i++) dst[i] = -7;
            shmem_broadcast64(dst, src, 3, size - 1, start, ls, size, ps);
            int root = start + (size - 1) * st;
            if (idx != size - 1) CHECK(dst[2] == root * 1000 + 2, "broadcast64 shape %u", s);
            else CHECK(dst[2] == -7, "broadcast64 root untouched");
            /* collect32: member k contributes k + 1 ints */
            int *c32 = (int *)src;
            int *d32 = (int *)dst;
            for (int i = 0; i < idx + 1; i++) c32[i] = me * 10 + i;
            shmem_collect32(d32, c32, (size_t)idx + 1, start, ls, size, ps);
            int at = 0;
            for (int k = 0; k < size; k++)
                for (int i = 0; i <= k; i++, at++)
                    CHECK(d32[at] == (start + k * st) * 10 + i, "collect32 shape %u", s);
            for (int i = 0; i < 4 * n; i++) src[i] = me * 1000 + i;
            shmem_fcollect64(dst, src, 2, start, ls, size, ps);
            for (int k = 0; k < size; k++) CHECK(dst[2 * k + 1] == (start + k * st) * 1000 + 1, "fcollect64");
            shmem_alltoall64(dst, src, 1, start, ls, size, ps);
            for (int k = 0; k < size; k++) CHECK(dst[k] == (start + k * st) * 1000 + idx, "alltoall64");
            shmem_alltoalls64(dst, src, 1, 2, 1, start, ls, size, ps);
            for (int k = 0; k < size; k++) CHECK(dst[k] == (start + k * st) * 1000 + 2 * idx, "alltoalls64");
            /* reductions */
            long one = me;
            src[0] = one;
            shmem_long_sum_to_all(dst, src, 1, start, ls, size, pwrk, ps);
            long want = 0;
            for (int k = 0; k < size; k++) want += start + k * st;
            CHECK(dst[0] == want, "long_sum_to_all shape %u: %ld want %ld", s, dst[0], want);
            shmem_long_max_to_all(src, src, 1, start, ls, size, pwrk, ps);
            CHECK(src[0] == root, "max_to_all in place");
            for (int i = 0; i < 4 * n; i++) src[i] = me * 1000 + i;
        }
        shmem_barrier_all();
    }
    /* a broadcast beyond the small-message path, whole job and a strided set: root's dest untouched */
    {
        size_t big = 8192;
        long *bs = shmem_malloc(big * sizeof(long)), *bd = shmem_malloc(big * sizeof(long));
        for (size_t i = 0; i < big; i++) {
            bs[i] = me * 100000 + (long)i;
            bd[i] = -5;
        }
        shmem_barrier_all();
        int root = n - 1;
        shmem_broadcast64(bd, bs, big, root, 0, 0, n, ps);
        if (me != root) CHECK(bd[big - 1] == root * 100000 + (long)big - 1, "big broadcast64");
        else CHECK(bd[0] == -5 && bd[big - 1] == -5, "big broadcast64 root untouched");
        shmem_barrier_all();
        if (me % 2 == 0 && n > 2) {
            for (size_t i = 0; i < big; i++) bd[i] = -5;
            shmem_broadcast64(bd, bs, big, 0, 0, 1, (n + 1) / 2, ps);
            if (me != 0) CHECK(bd[7] == 7, "big strided broadcast64");
            else CHECK(bd[7] == -5, "big strided broadcast64 root untouched");
        }
        shmem_barrier_all();
        shmem_free(bd);
        shmem_free(bs);
    }
    /* collectives of no data may name no buffers (NULL), as RMA of no data may */
    {
        CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, NULL, NULL, 0, 0) == 0, "0-element broadcast");
        CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, NULL, NULL, 0, n - 1) == 0, "0-byte broadcastmem");
        CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "0-element collect");
        CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "0-element fcollect");
        CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "0-element alltoall");
        CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, NULL, NULL, 1, 1, 0) == 0, "0-element alltoalls");
        CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "0-element sum_reduce");
        CHECK(shmem_uint_and_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "0-element and_reduce");
        shmem_barrier_all();
        shmem_broadcast64(NULL, NULL, 0, 0, 0, 0, n, ps);
        shmem_barrier_all();
        shmem_fcollect32(NULL, NULL, 0, 0, 0, n, ps);
        shmem_barrier_all();
        shmem_long_sum_to_all(NULL, NULL, 0, 0, 0, n, pwrk, ps);
        shmem_barrier_all();
        /* the library still works */
        long *z = shmem_malloc(sizeof(long));
        *z = me;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, z, z, 1, n - 1);
        CHECK(*z == n - 1, "broadcast after the 0-element collectives: %ld", *z);
        shmem_free(z);
    }
    shmem_free(pwrk);
    shmem_free(ps);
    if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    return osh_done("coll_teams");
}

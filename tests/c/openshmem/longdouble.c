/* OpenSHMEM 1.5 sections 9.9.7 (team reductions) and the deprecated active-set reductions for
 * long double: sum, prod, min and max, checked with values that double arithmetic gets wrong
 * (differences below double's precision, products beyond double's range), over the world team,
 * a strided sub-team and several active sets, short and long arrays (every reduction path of the
 * core), in place, and through the C11 type-generic names. Also the single-element RMA
 * (shmem_[ctx_]longdouble_p/g), called directly and through the symbols the library exports. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "osh_util.h"

/* 2^e as a long double, by repeated multiplication (exact; no libm needed) */
static long double pow2(int e) {
    long double x = 1.0L;
    for (; e > 0; e--) x *= 2.0L;
    for (; e < 0; e++) x /= 2.0L;
    return x;
}

static long *new_psync(void) {
    long *p = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) p[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    return p;
}

/* the value PE p holds at index i, for each operation */
static long double v_sum(int p, size_t i) { return (long double)(i % 7) + (p + 1) * pow2(-50); }
static long double v_prod(int p, size_t i) { return (i % 2 ? (long double)(p % 3 + 1) : pow2(1000 + p)); }
static long double v_mm(int p, size_t i) { return 1.0L + (long double)(i % 5) + ((p + (int)i) % 8) * pow2(-58); }

static int failures_of(const char *what, long double *got, int *members, int size, size_t nel, int op) {
    int bad = 0;
    for (size_t i = 0; i < nel; i++) {
        long double want;
        if (op == 0) {
            want = 0;
            for (int k = 0; k < size; k++) want += v_sum(members[k], i);
        } else if (op == 1) {
            want = 1;
            for (int k = 0; k < size; k++) want *= v_prod(members[k], i);
        } else {
            want = v_mm(members[0], i);
            for (int k = 1; k < size; k++) {
                long double x = v_mm(members[k], i);
                if (op == 2 ? x > want : x < want) want = x;
            }
        }
        if (got[i] != want) {
            if (bad++ == 0)
                CHECK(0, "%s nel %zu [%zu]: %.25Lg want %.25Lg", what, nel, i, got[i], want);
        }
    }
    return bad;
}

static void fill(long double *a, int me, size_t nel, int op) {
    for (size_t i = 0; i < nel; i++) a[i] = op == 0 ? v_sum(me, i) : op == 1 ? v_prod(me, i) : v_mm(me, i);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const size_t sizes[] = {1, 5, 1500}; /* 1500 * 16 B: beyond the direct-reduction limit */
    size_t maxn = 1500;
    long double *src = shmem_malloc(maxn * sizeof(long double));
    long double *dst = shmem_malloc(maxn * sizeof(long double));
    long double *pwrk = shmem_malloc(maxn * sizeof(long double) + SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(long double));
    int *members = malloc(sizeof(int) * (size_t)n);
    const char *names[] = {"sum", "prod", "max", "min"};

    /* the precision checks mean something: double loses what long double keeps */
    CHECK(sizeof(long double) == 16, "long double is 16 bytes");
    CHECK((double)(1.0L + pow2(-58)) == 1.0 && 1.0L + pow2(-58) != 1.0L, "long double precision");

    /* team reductions over the world team */
    for (int k = 0; k < n; k++) members[k] = k;
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t nel = sizes[s];
        for (int op = 0; op < 4; op++) {
            fill(src, me, nel, op > 2 ? 2 : op);
            for (size_t i = 0; i < nel; i++) dst[i] = -1;
            int rc = op == 0 ? shmem_longdouble_sum_reduce(SHMEM_TEAM_WORLD, dst, src, nel)
                   : op == 1 ? shmem_longdouble_prod_reduce(SHMEM_TEAM_WORLD, dst, src, nel)
                   : op == 2 ? shmem_longdouble_max_reduce(SHMEM_TEAM_WORLD, dst, src, nel)
                             : shmem_longdouble_min_reduce(SHMEM_TEAM_WORLD, dst, src, nel);
            CHECK(rc == 0, "%s_reduce rc %d", names[op], rc);
            failures_of(names[op], dst, members, n, nel, op > 2 ? 3 : op);
            /* in place */
            fill(src, me, nel, op > 2 ? 2 : op);
            if (op == 0) shmem_longdouble_sum_reduce(SHMEM_TEAM_WORLD, src, src, nel);
            else if (op == 3) shmem_longdouble_min_reduce(SHMEM_TEAM_WORLD, src, src, nel);
            else continue;
            failures_of("in place", src, members, n, nel, op);
        }
    }

    /* a strided sub-team: the even PEs */
    shmem_team_t even = SHMEM_TEAM_INVALID;
    int neven = (n + 1) / 2;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, neven, NULL, 0, &even);
    if (even != SHMEM_TEAM_INVALID) {
        for (int k = 0; k < neven; k++) members[k] = 2 * k;
        fill(src, me, 5, 0);
        shmem_longdouble_sum_reduce(even, dst, src, 5);
        failures_of("even team sum", dst, members, neven, 5, 0);
        fill(src, me, 5, 1);
        shmem_longdouble_prod_reduce(even, dst, src, 5);
        failures_of("even team prod", dst, members, neven, 5, 1);
        shmem_team_destroy(even);
    }
    shmem_barrier_all();

    /* C11 type-generic names select the long double functions */
    for (int k = 0; k < n; k++) members[k] = k;
    fill(src, me, 3, 0);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 3);
    failures_of("generic sum", dst, members, n, 3, 0);
    fill(src, me, 3, 2);
    shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 3);
    failures_of("generic max", dst, members, n, 3, 2);

    /* deprecated active-set forms */
    long *ps = new_psync();
    struct { int start, logstride, size; } shapes[] = {
        {0, 0, n}, {n > 1 ? 1 : 0, 0, n > 1 ? n - 1 : 1}, {0, 1, (n + 1) / 2}, {n - 1, 0, 1},
    };
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int start = shapes[s].start, ls = shapes[s].logstride, size = shapes[s].size, st = 1 << ls;
        int in = me >= start && (me - start) % st == 0 && (me - start) / st < size;
        if (in) {
            for (int k = 0; k < size; k++) members[k] = start + k * st;
            for (unsigned z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                size_t nel = sizes[z];
                int ne = (int)nel;
                fill(src, me, nel, 0);
                shmem_longdouble_sum_to_all(dst, src, ne, start, ls, size, pwrk, ps);
                failures_of("sum_to_all", dst, members, size, nel, 0);
                fill(src, me, nel, 1);
                shmem_longdouble_prod_to_all(dst, src, ne, start, ls, size, pwrk, ps);
                failures_of("prod_to_all", dst, members, size, nel, 1);
                fill(src, me, nel, 2);
                shmem_longdouble_max_to_all(dst, src, ne, start, ls, size, pwrk, ps);
                failures_of("max_to_all", dst, members, size, nel, 2);
                shmem_longdouble_min_to_all(src, src, ne, start, ls, size, pwrk, ps);
                failures_of("min_to_all in place", src, members, size, nel, 3);
            }
        }
        shmem_barrier_all();
    }

    /* single-element RMA: the full precision travels both ways, by the header's names and by the
       exported symbols (a binding that looks them up at run time, as a foreign-function layer) */
    {
        typedef void (*p_fn)(long double *, long double, int);
        typedef long double (*g_fn)(const long double *, int);
        typedef void (*ctx_p_fn)(shmem_ctx_t, long double *, long double, int);
        typedef long double (*ctx_g_fn)(shmem_ctx_t, const long double *, int);
        p_fn p;
        g_fn g;
        ctx_p_fn cp;
        ctx_g_fn cg;
        /* (memcpy: ISO C has no conversion from an object pointer to a function pointer) */
        void *sym[4] = {dlsym(RTLD_DEFAULT, "shmem_longdouble_p"), dlsym(RTLD_DEFAULT, "shmem_longdouble_g"),
                        dlsym(RTLD_DEFAULT, "shmem_ctx_longdouble_p"), dlsym(RTLD_DEFAULT, "shmem_ctx_longdouble_g")};
        memcpy(&p, &sym[0], sizeof p);
        memcpy(&g, &sym[1], sizeof g);
        memcpy(&cp, &sym[2], sizeof cp);
        memcpy(&cg, &sym[3], sizeof cg);
        CHECK(p && g && cp && cg, "shmem_[ctx_]longdouble_p/g are exported symbols");
        int right = (me + 1) % n, left = (me + n - 1) % n;
        long double mine = 1.0L + (me + 1) * pow2(-60), theirs = 1.0L + (left + 1) * pow2(-60);
        for (int way = 0; way < 3 && p && g && cp && cg; way++) {
            dst[0] = dst[1] = 0;
            shmem_barrier_all();
            if (way == 0) {
                shmem_longdouble_p(&dst[0], mine, right);
                shmem_ctx_longdouble_p(SHMEM_CTX_DEFAULT, &dst[1], -mine, right);
            } else if (way == 1) {
                p(&dst[0], mine, right);
                cp(SHMEM_CTX_DEFAULT, &dst[1], -mine, right);
            } else {
                shmem_p(&dst[0], mine, right);
                shmem_p(SHMEM_CTX_DEFAULT, &dst[1], -mine, right);
            }
            shmem_barrier_all();
            CHECK(dst[0] == theirs && dst[1] == -theirs, "way %d: p got %.25Lg %.25Lg", way, dst[0], dst[1]);
            long double a = way == 0 ? shmem_longdouble_g(&dst[0], left) : way == 1 ? g(&dst[0], left) : shmem_g(&dst[0], left);
            long double b = way == 0 ? shmem_ctx_longdouble_g(SHMEM_CTX_DEFAULT, &dst[1], left)
                          : way == 1 ? cg(SHMEM_CTX_DEFAULT, &dst[1], left)
                                     : shmem_g(SHMEM_CTX_DEFAULT, &dst[1], left);
            /* left's dst holds what its own left neighbour put: left - 1 */
            long double want = 1.0L + (((left + n - 1) % n) + 1) * pow2(-60);
            CHECK(a == want && b == -want, "way %d: g got %.25Lg %.25Lg want %.25Lg", way, a, b, want);
            shmem_barrier_all();
        }
    }

    free(members);
    shmem_free(ps);
    shmem_free(pwrk);
    shmem_free(dst);
    shmem_free(src);
    return osh_done("longdouble");
}

/* OpenSHMEM 1.5 chapters 9.1, 9.3, 9.6-9.8, 9.10-9.12 on every PE count: setup and query, memory,
 * RMA (typed, sized, mem, nbi, strided, p/g, ctx), AMOs (standard, bitwise, extended, nbi,
 * deprecated), signals, point-to-point waits and tests, ordering, locks. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <string.h>
#include <stdint.h>
#include "osh_util.h"
#include <shmemx.h>
#include <time.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* setup and query */
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    CHECK(strstr(name, "libaclshmem") != NULL, "name %s", name);
    CHECK(_my_pe() == me && _num_pes() == n, "deprecated queries");
    CHECK(shmem_pe_accessible(n - 1) && !shmem_pe_accessible(n), "pe_accessible");
    /* the shmemx_wtime extension: a monotonic clock in seconds */
#ifndef HAVE_SHMEMX_WTIME
#error "shmemx.h defines HAVE_SHMEMX_WTIME"
#endif
    double t0 = shmemx_wtime();
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double t1 = shmemx_wtime();
    CHECK(t1 - t0 >= 0.019 && t1 - t0 < 60.0, "shmemx_wtime measures a 20 ms sleep: %f s", t1 - t0);
    shmem_pcontrol(0);
    shmem_pcontrol(2, "extra", 3.5); /* variadic: extra arguments are allowed and ignored */

    /* memory */
    long *a = shmem_malloc(64 * sizeof(long));
    CHECK(a != NULL, "malloc");
    CHECK(shmem_addr_accessible(a, right), "addr_accessible heap");
    int stack_var;
    CHECK(!shmem_addr_accessible(&stack_var, right), "addr_accessible stack");
    CHECK(shmem_ptr(a, right) != NULL, "shmem_ptr on one node");
    double *z = shmem_calloc(16, sizeof(double));
    for (int i = 0; i < 16; i++) CHECK(z[i] == 0.0, "calloc zero");
    char *al = shmem_align(4096, 100);
    CHECK(al && ((uintptr_t)al % 4096) == 0, "align");
    for (int i = 0; i < 64; i++) a[i] = me * 1000 + i;
    a = shmem_realloc(a, 128 * sizeof(long));
    CHECK(a && a[63] == me * 1000 + 63, "realloc keeps contents");
    shmem_barrier_all();

    /* typed RMA */
    int *ibuf = shmem_malloc(32 * sizeof(int));
    int src[32];
    for (int i = 0; i < 32; i++) src[i] = me * 100 + i;
    shmem_int_put(ibuf, src, 32, right);
    shmem_barrier_all();
    for (int i = 0; i < 32; i++) CHECK(ibuf[i] == left * 100 + i, "int_put [%d] = %d", i, ibuf[i]);
    int got[32];
    shmem_int_get(got, ibuf, 32, right);
    for (int i = 0; i < 32; i++) CHECK(got[i] == me * 100 + i, "int_get");
    shmem_barrier_all();
    /* nbi + quiet */
    double dsrc[8], *dbuf = shmem_malloc(8 * sizeof(double));
    for (int i = 0; i < 8; i++) dsrc[i] = me + i * 0.5;
    shmem_double_put_nbi(dbuf, dsrc, 8, right);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 8; i++) CHECK(dbuf[i] == left + i * 0.5, "double_put_nbi");
    double dget[8];
    shmem_double_get_nbi(dget, dbuf, 8, left);
    shmem_quiet();
    CHECK(dget[3] == ((left + n - 1) % n) + 1.5, "double_get_nbi");
    shmem_barrier_all();
    /* sized and mem */
    uint64_t *w = shmem_malloc(16 * sizeof(uint64_t));
    uint64_t wsrc[16];
    for (int i = 0; i < 16; i++) wsrc[i] = ((uint64_t)me << 32) | i;
    shmem_put64(w, wsrc, 16, right);
    shmem_barrier_all();
    CHECK(w[5] == (((uint64_t)left << 32) | 5), "put64");
    shmem_barrier_all();
    shmem_putmem(w, wsrc, 3, right);
    shmem_barrier_all();
    CHECK(((char *)w)[2] == ((char *)wsrc)[2], "putmem");
    uint32_t g32[2];
    shmem_get32(g32, w, 2, me);
    CHECK(g32[0] == ((uint32_t *)w)[0], "get32");
    /* strided */
    shmem_barrier_all();
    long lsrc[10];
    for (int i = 0; i < 10; i++) lsrc[i] = me * 10 + i;
    for (int i = 0; i < 20; i++) a[i] = -1;
    shmem_barrier_all();
    shmem_long_iput(a, lsrc, 2, 1, 5, right); /* a[0,2,4,6,8] = lsrc[0..5) */
    shmem_barrier_all();
    CHECK(a[4] == left * 10 + 2 && a[1] == -1, "long_iput a[4]=%ld a[1]=%ld", a[4], a[1]);
    long lget[5];
    shmem_long_iget(lget, a, 1, 2, 5, right);
    CHECK(lget[2] == me * 10 + 2, "long_iget");
    shmem_barrier_all();
    /* p / g */
    shmem_short_p((short *)&ibuf[0], (short)(me + 7), right);
    shmem_barrier_all();
    CHECK(*(short *)&ibuf[0] == left + 7, "short_p");
    CHECK(shmem_short_g((short *)&ibuf[0], right) == me + 7, "short_g");
    shmem_barrier_all();
    /* long double as bytes */
    long double *ld = shmem_malloc(4 * sizeof(long double));
    long double ldv[4] = {1.5L * me, 2.5L, 3.5L, 4.5L};
    shmem_longdouble_put(ld, ldv, 4, right);
    shmem_barrier_all();
    CHECK(ld[0] == 1.5L * left && ld[3] == 4.5L, "longdouble_put");
    shmem_longdouble_p(&ld[1], 9.25L, right);
    shmem_barrier_all();
    CHECK(ld[1] == 9.25L && shmem_longdouble_g(&ld[1], right) == 9.25L, "longdouble_p/g");
    shmem_barrier_all();
    /* ctx forms */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
    shmem_ctx_int_put_nbi(ctx, ibuf, src, 4, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(ibuf[3] == left * 100 + 3, "ctx_int_put_nbi");
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();

    /* AMOs */
    long *ctr = shmem_calloc(4, sizeof(long));
    shmem_barrier_all();
    long old = shmem_long_atomic_fetch_add(&ctr[0], me + 1, 0);
    (void)old;
    shmem_long_atomic_inc(&ctr[1], 0);
    shmem_long_atomic_add(&ctr[2], 2, 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(ctr[0] == (long)n * (n + 1) / 2, "fetch_add sum %ld", ctr[0]);
        CHECK(ctr[1] == n && ctr[2] == 2L * n, "inc/add");
    }
    shmem_barrier_all();
    unsigned int *bits = shmem_calloc(1, sizeof(unsigned int));
    shmem_barrier_all();
    shmem_uint_atomic_or(bits, 1u << me, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(*bits == (n >= 32 ? 0xffffffffu : (1u << n) - 1), "uint or %x", *bits);
    shmem_barrier_all();
    if (me == 0) {
        unsigned int f = shmem_uint_atomic_fetch_xor(bits, 1u, 0);
        CHECK(f & 1u, "fetch_xor");
        int cs = shmem_int_atomic_compare_swap(&ibuf[5], 12345, 1, right);
        (void)cs;
        float fv = shmem_float_atomic_swap((float *)&ibuf[6], 2.5f, right);
        (void)fv;
        CHECK(shmem_float_atomic_fetch((float *)&ibuf[6], right) == 2.5f, "float swap/fetch");
        long fetched = 0;
        shmem_long_atomic_fetch_inc_nbi(&fetched, &ctr[3], right);
        shmem_quiet();
        CHECK(fetched == 0, "fetch_inc_nbi");
        CHECK(shmem_long_fadd(&ctr[3], 5, right) == 1, "deprecated fadd");
        CHECK(shmem_long_finc(&ctr[3], right) == 6, "deprecated finc");
        CHECK(shmem_long_cswap(&ctr[3], 7, 70, right) == 7, "deprecated cswap");
        CHECK(shmem_long_g(&ctr[3], right) == 70, "after cswap");
    }
    shmem_barrier_all();

    /* signals */
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    int *payload = shmem_malloc(8 * sizeof(int));
    shmem_barrier_all();
    shmem_int_put_signal(payload, src, 8, sig, 1, SHMEM_SIGNAL_ADD, right);
    uint64_t s = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    CHECK(s == 1 && payload[7] == left * 100 + 7, "put_signal data before signal");
    CHECK(shmem_signal_fetch(sig) == 1, "signal_fetch");
    shmem_barrier_all();
    shmem_putmem_signal_nbi(payload, src, 4, sig, 42, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 42);
    shmem_barrier_all();
    /* large ones (over UCX past the one-message size): blocking, then _nbi, each with its own
     * source (the _nbi one untouched until the quiet of the barrier) */
    {
        size_t big = 96 * 1024;
        unsigned char *bdst = shmem_malloc(2 * big);
        unsigned char *bsrc = malloc(2 * big);
        for (size_t k = 0; k < 2 * big; k++) bsrc[k] = (unsigned char)(k * 7 + me);
        shmem_barrier_all();
        shmem_putmem_signal(bdst, bsrc, big, sig, 8, SHMEM_SIGNAL_ADD, right);
        memset(bsrc, 0xEE, big); /* the blocking form's source is reusable */
        /* GE: the left neighbour's next signal (60) may already have replaced the 50 */
        shmem_signal_wait_until(sig, SHMEM_CMP_GE, 50);
        shmem_uint64_put_signal_nbi((uint64_t *)(bdst + big), (uint64_t *)(bsrc + big), big / 8, sig, 60,
                                    SHMEM_SIGNAL_SET, right);
        shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 60);
        size_t bad = 0;
        for (size_t k = 0; k < 2 * big; k++) bad += bdst[k] != (unsigned char)(k * 7 + left);
        CHECK(bad == 0, "large put_signal: %zu bytes differ when the signal was seen", bad);
        shmem_barrier_all();
        free(bsrc);
        shmem_free(bdst);
    }

    /* point-to-point waits and tests */
    int *flags = shmem_calloc((size_t)n, sizeof(int));
    shmem_barrier_all();
    shmem_int_atomic_set(&flags[me], me + 1, right);
    shmem_int_wait_until(&flags[left], SHMEM_CMP_EQ, left + 1);
    int status[64] = {0};
    size_t idx[64];
    shmem_barrier_all();
    /* every PE sets its slot on PE 0's array */
    shmem_int_atomic_set(&flags[me], 100 + me, 0);
    if (me == 0) {
        shmem_int_wait_until_all(flags, (size_t)n, NULL, SHMEM_CMP_GE, 100);
        size_t any = shmem_int_wait_until_any(flags, (size_t)n, status, SHMEM_CMP_GE, 100);
        CHECK(any < (size_t)n, "wait_until_any %zu", any);
        size_t some = shmem_int_wait_until_some(flags, (size_t)n, idx, status, SHMEM_CMP_GE, 100);
        CHECK(some == (size_t)n, "wait_until_some %zu", some);
        CHECK(shmem_int_test_all(flags, (size_t)n, NULL, SHMEM_CMP_GE, 100) == 1, "test_all");
        CHECK(shmem_int_test(&flags[0], SHMEM_CMP_EQ, 100) == 1, "test");
        CHECK(shmem_int_test_any(flags, (size_t)n, NULL, SHMEM_CMP_LT, 0) == SIZE_MAX, "test_any none");
        /* every element holds: n calls of test_any return every index once (round robin, so a
         * loop serving whichever element holds reaches them all) */
        {
            int seen[64] = {0};
            for (int k = 0; k < n; k++) {
                size_t i = shmem_int_test_any(flags, (size_t)n, NULL, SHMEM_CMP_GE, 100);
                CHECK(i < (size_t)n, "test_any %zu", i);
                if (i < (size_t)n) seen[i]++;
            }
            for (int i = 0; i < n; i++) CHECK(seen[i] == 1, "test_any returned index %d %d times in %d calls", i, seen[i], n);
        }
        int want[64];
        for (int i = 0; i < n; i++) want[i] = 100 + i;
        shmem_int_wait_until_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want);
        CHECK(shmem_int_test_some_vector(flags, (size_t)n, idx, NULL, SHMEM_CMP_EQ, want) == (size_t)n, "test_some_vector");
        for (int i = 0; i < n; i++) status[i] = 1;
        CHECK(shmem_int_wait_until_any(flags, (size_t)n, status, SHMEM_CMP_GE, 100) == SIZE_MAX, "all excluded");
    }
    shmem_barrier_all();

    /* locks: every PE increments a counter on PE 0 under the lock, non-atomically */
    long *lock = shmem_calloc(1, sizeof(long));
    long *count = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    for (int k = 0; k < 50; k++) {
        shmem_set_lock(lock);
        long v = shmem_long_g(count, 0);
        shmem_long_p(count, v + 1, 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0) CHECK(*count == 50L * n, "lock count %ld", *count);
    if (me == 0) {
        CHECK(shmem_test_lock(lock) == 0, "test_lock takes a free lock");
        CHECK(shmem_test_lock(lock) == 1, "test_lock sees it held");
        shmem_clear_lock(lock);
    }
    shmem_fence();
    shmem_barrier_all();
    shmem_free(lock);
    shmem_free(count);
    shmem_free(flags);
    shmem_free(sig);
    shmem_free(payload);
    shmem_free(bits);
    shmem_free(ctr);
    shmem_free(ld);
    shmem_free(w);
    shmem_free(dbuf);
    shmem_free(ibuf);
    shmem_free(al);
    shmem_free(z);
    shmem_free(a);
    return osh_done("rma_amo");
}

/*
 * perf_rma.c: RMA micro-benchmarks, one source for two libraries (see bench_api.h).
 *
 * PE 0 measures against PE 1; PE 1 (and any other PE) waits in a barrier. Every timed loop runs a
 * warm-up first and is then repeated BENCH_REPS times; the MEDIAN of the repetitions is printed.
 * After each figure the data that moved is checked, so a call that does nothing cannot score.
 *
 * Output (stdout of PE 0), one line per figure:
 *   RESULT <figure> <size-bytes> <value> <unit>
 *   SKIP   <figure> <reason>
 *   INFO   <key> <value>
 * Errors go to stderr and make the exit status non-zero.
 *
 * Environment:
 *   BENCH_REPS    repetitions of each timed loop (default 15)
 *   BENCH_SCALE   multiplies every iteration count (default 1.0; e.g. 0.1 for a smoke run)
 *   BENCH_BW_MB   streaming buffer size in MiB (default: 2 x last-level cache, at least 64 and at
 *                 most 128: Open MPI 4.1's OSHMEM cannot allocate two buffers larger than 128 MiB,
 *                 whatever SHMEM_SYMMETRIC_SIZE says, and some VMs report a last-level cache of
 *                 100 MiB or more)
 *   BENCH_PIN     1 (default): pin PE i to the i-th CPU it may run on; 0: leave placement alone
 */
#define _GNU_SOURCE
#include "bench_api.h"
#include "bench_common.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MiB (1024UL * 1024UL)
#define MAX_LAT_SIZE (4 * MiB)
#define NBI_BATCH 1000

static const size_t lat_sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
#define N_LAT_SIZES (sizeof(lat_sizes) / sizeof(lat_sizes[0]))


/* Keeps the compiler from dropping or reordering memory work around a timed region. */

/* Iterations of a latency loop for a message of `bytes`: many for small messages, at least 20. */
static long lat_iters(size_t bytes)
{
    long n = (long)((64 * MiB) / bytes);
    if (n > 10000) n = 10000;
    if (n < 20) n = 20;
    return scaled(n);
}

static unsigned char pattern_for(size_t bytes, int salt)
{
    unsigned char p = (unsigned char)((bytes * 2654435761u) >> 7) ^ (unsigned char)(salt * 73);
    return p ? p : 0x5a;
}

/* Checks first, middle and last byte (and a sparse sample between) of buf[0..bytes) == pat. */
static int check_bytes(const char *what, const unsigned char *buf, size_t bytes, unsigned char pat)
{
    size_t step = bytes > 4096 ? bytes / 64 : 1;
    for (size_t i = 0; i < bytes; i += step) {
        if (buf[i] != pat) goto bad;
    }
    if (buf[bytes / 2] != pat || buf[bytes - 1] != pat) goto bad;
    return 0;
bad:
    fprintf(stderr, "ERROR pe %d: %s (%zu bytes): data did not arrive\n", me, what, bytes);
    failures++;
    return 1;
}

static size_t llc_bytes(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (!f) return 0;
    char buf[64] = {0};
    size_t v = 0;
    if (fgets(buf, sizeof buf, f)) {
        char *end = NULL;
        v = strtoul(buf, &end, 10);
        if (end && (*end == 'K' || *end == 'k')) v *= 1024;
        else if (end && (*end == 'M' || *end == 'm')) v *= MiB;
    }
    fclose(f);
    return v;
}

/* ---------------------------------------------------------------- figure 1: put latency */
static void fig_put_lat(unsigned char *src, unsigned char *dst)
{
    if (!bench_have_putmem() || !bench_have_quiet()) {
        skip("put_lat", "missing:putmem/quiet");
        return;
    }
    for (size_t k = 0; k < N_LAT_SIZES; k++) {
        size_t s = lat_sizes[k];
        unsigned char pat = pattern_for(s, 1);
        bench_barrier_all();
        if (me == 0) {
            memset(src, pat, s);
            long n = lat_iters(s);
            double t[MAX_REPS];
            for (long i = 0; i < n / 10 + 10; i++) { bench_putmem(dst, src, s, 1); bench_quiet(); }
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (long i = 0; i < n; i++) { bench_putmem(dst, src, s, 1); bench_quiet(); }
                t[r] = (now_s() - t0) / (double)n * 1e6;
            }
            result("put_lat", s, median(t, reps), "us");
        }
        bench_barrier_all();
        if (me == 1) check_bytes("put_lat", dst, s, pat);
    }
}

/* ---------------------------------------------------------------- figure 2: get latency */
static void fig_get_lat(unsigned char *src, unsigned char *dst)
{
    if (!bench_have_getmem()) {
        skip("get_lat", "missing:getmem");
        return;
    }
    for (size_t k = 0; k < N_LAT_SIZES; k++) {
        size_t s = lat_sizes[k];
        unsigned char pat = pattern_for(s, 2);
        bench_barrier_all();
        if (me == 1) memset(src, pat, s);
        if (me == 0) memset(dst, 0, s);
        bench_barrier_all();
        if (me == 0) {
            long n = lat_iters(s);
            double t[MAX_REPS];
            for (long i = 0; i < n / 10 + 10; i++) bench_getmem(dst, src, s, 1);
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (long i = 0; i < n; i++) bench_getmem(dst, src, s, 1);
                clobber();
                t[r] = (now_s() - t0) / (double)n * 1e6;
            }
            result("get_lat", s, median(t, reps), "us");
            check_bytes("get_lat", dst, s, pat);
        }
    }
}

/* ---------------------------------------------------------------- figure 3: put_nbi message rate */
static void fig_nbi_rate(int64_t *src, int64_t *dst)
{
    if (!bench_have_putmem_nbi() || !bench_have_quiet()) {
        skip("nbi_rate", "missing:putmem_nbi/quiet");
        return;
    }
    bench_barrier_all();
    if (me == 0) {
        for (int i = 0; i < NBI_BATCH; i++) src[i] = 1000000 + i;
        long batches = scaled(200);
        double rate[MAX_REPS];
        for (int w = 0; w < 5; w++) {
            for (int i = 0; i < NBI_BATCH; i++) bench_putmem_nbi(&dst[i], &src[i], 8, 1);
            bench_quiet();
        }
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long b = 0; b < batches; b++) {
                for (int i = 0; i < NBI_BATCH; i++) bench_putmem_nbi(&dst[i], &src[i], 8, 1);
                bench_quiet();
            }
            rate[r] = (double)(batches * NBI_BATCH) / (now_s() - t0) / 1e6;
        }
        result("nbi_rate", 8, median(rate, reps), "Mmsg/s");
    }
    bench_barrier_all();
    if (me == 1) {
        for (int i = 0; i < NBI_BATCH; i++) {
            if (dst[i] != 1000000 + i) {
                fprintf(stderr, "ERROR pe 1: nbi_rate: slot %d holds %lld\n", i, (long long)dst[i]);
                failures++;
                break;
            }
        }
    }
}

/* ------------------------------------------- figure 3b: get_nbi rate, strided iput/iget of 1000 int64 */
#define STRIDED_N 1000
static void fig_getnbi_strided(int64_t *src, int64_t *dst)
{
    if (!bench_have_getmem_nbi() || !bench_have_quiet()) {
        skip("getnbi_rate", "missing:getmem_nbi/quiet");
    } else {
        /* PE 1's src holds 2000000 + i; PE 0 gets them into its dst */
        if (me == 1) for (int i = 0; i < NBI_BATCH; i++) src[i] = 2000000 + i;
        bench_barrier_all();
        if (me == 0) {
            long batches = scaled(200);
            double rate[MAX_REPS];
            for (int w = 0; w < 5; w++) {
                for (int i = 0; i < NBI_BATCH; i++) bench_getmem_nbi(&dst[i], &src[i], 8, 1);
                bench_quiet();
            }
            for (int r = 0; r < reps; r++) {
                memset(dst, 0, NBI_BATCH * sizeof(int64_t));
                double t0 = now_s();
                for (long b = 0; b < batches; b++) {
                    for (int i = 0; i < NBI_BATCH; i++) bench_getmem_nbi(&dst[i], &src[i], 8, 1);
                    bench_quiet();
                }
                rate[r] = (double)(batches * NBI_BATCH) / (now_s() - t0) / 1e6;
            }
            for (int i = 0; i < NBI_BATCH; i++) {
                if (dst[i] != 2000000 + i) {
                    fprintf(stderr, "ERROR pe 0: getnbi_rate: slot %d holds %lld\n", i, (long long)dst[i]);
                    failures++;
                    break;
                }
            }
            result("getnbi_rate", 8, median(rate, reps), "Mmsg/s");
        }
        bench_barrier_all();
    }
    if (!bench_have_strided() || !bench_have_quiet()) {
        skip("iput_lat", "missing:int64_iput/iget/quiet");
        skip("iget_lat", "missing:int64_iput/iget/quiet");
        return;
    }
    /* iput: PE 0's src[0..1000) to every other element of PE 1's dst; iget: back, from stride 2 */
    if (me == 1) memset(dst, 0, 2 * STRIDED_N * sizeof(int64_t));
    bench_barrier_all();
    if (me == 0) {
        for (int i = 0; i < STRIDED_N; i++) src[i] = 3000000 + i;
        long n = scaled(20);
        double t[MAX_REPS];
        for (int w = 0; w < 3; w++) { bench_int64_iput(dst, src, 2, 1, STRIDED_N, 1); bench_quiet(); }
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++) { bench_int64_iput(dst, src, 2, 1, STRIDED_N, 1); bench_quiet(); }
            t[r] = (now_s() - t0) / (double)n * 1e6;
        }
        result("iput_lat", STRIDED_N * 8, median(t, reps), "us");
        int64_t *back = src + STRIDED_N;
        for (int w = 0; w < 3; w++) bench_int64_iget(back, dst, 1, 2, STRIDED_N, 1);
        for (int r = 0; r < reps; r++) {
            memset(back, 0, STRIDED_N * sizeof(int64_t));
            double t0 = now_s();
            for (long i = 0; i < n; i++) bench_int64_iget(back, dst, 1, 2, STRIDED_N, 1);
            t[r] = (now_s() - t0) / (double)n * 1e6;
        }
        for (int i = 0; i < STRIDED_N; i++) {
            if (back[i] != 3000000 + i) {
                fprintf(stderr, "ERROR pe 0: iget_lat: element %d holds %lld\n", i, (long long)back[i]);
                failures++;
                break;
            }
        }
        result("iget_lat", STRIDED_N * 8, median(t, reps), "us");
    }
    bench_barrier_all();
}

/* ---------------------------------------------------------------- figure 4: 8-byte p, g, typed put */
static void fig_scalar(int64_t *src, int64_t *dst)
{
    long n = scaled(20000);
    double t[MAX_REPS];

    /* p + quiet */
    if (bench_have_int64_p() && bench_have_quiet()) {
        bench_barrier_all();
        int64_t last = 0;
        if (me == 0) {
            for (long i = 0; i < n / 10 + 10; i++) { bench_int64_p(dst, (int64_t)i, 1); bench_quiet(); }
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (long i = 0; i < n; i++) { bench_int64_p(dst, (int64_t)(r * n + i), 1); bench_quiet(); }
                t[r] = (now_s() - t0) / (double)n * 1e6;
            }
            result("p_lat", 8, median(t, reps), "us");
        }
        last = (int64_t)((reps - 1) * n + n - 1);
        bench_barrier_all();
        if (me == 1 && *dst != last) {
            fprintf(stderr, "ERROR pe 1: p_lat: final value %lld, expected %lld\n", (long long)*dst, (long long)last);
            failures++;
        }
    } else {
        skip("p_lat", "missing:int64_p/quiet");
    }

    /* g */
    if (bench_have_int64_g()) {
        bench_barrier_all();
        if (me == 1) src[0] = 0x0123456789abcdefLL;
        bench_barrier_all();
        if (me == 0) {
            volatile int64_t sink = 0;
            int64_t acc = 0;
            for (long i = 0; i < n / 10 + 10; i++) acc ^= bench_int64_g(src, 1);
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (long i = 0; i < n; i++) acc += bench_int64_g(src, 1);
                t[r] = (now_s() - t0) / (double)n * 1e6;
            }
            sink = acc;
            (void)sink;
            result("g_lat", 8, median(t, reps), "us");
            int64_t v = bench_int64_g(src, 1);
            if (v != 0x0123456789abcdefLL) {
                fprintf(stderr, "ERROR pe 0: g_lat: read %llx\n", (unsigned long long)v);
                failures++;
            }
        }
    } else {
        skip("g_lat", "missing:int64_g");
    }

    /* typed 8-byte put + quiet */
    if (bench_have_int64_put() && bench_have_quiet()) {
        bench_barrier_all();
        if (me == 0) {
            for (long i = 0; i < n / 10 + 10; i++) { src[1] = i; bench_int64_put(dst + 1, src + 1, 1); bench_quiet(); }
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (long i = 0; i < n; i++) { src[1] = (int64_t)(r * n + i); bench_int64_put(dst + 1, src + 1, 1); bench_quiet(); }
                t[r] = (now_s() - t0) / (double)n * 1e6;
            }
            result("put64_lat", 8, median(t, reps), "us");
        }
        bench_barrier_all();
        int64_t last = (int64_t)((reps - 1) * n + n - 1);
        if (me == 1 && dst[1] != last) {
            fprintf(stderr, "ERROR pe 1: put64_lat: final value %lld, expected %lld\n", (long long)dst[1], (long long)last);
            failures++;
        }
    } else {
        skip("put64_lat", "missing:int64_put/quiet");
    }
}

/* ---------------------------------------------------------------- figure 5: streaming bandwidth */
static void fig_bandwidth(unsigned char *src, unsigned char *dst, size_t bytes)
{
    int have_put = bench_have_putmem() && bench_have_quiet();
    /* First touch: every page of every buffer is faulted in before any timing. */
    memset(src, 0x11 + me, bytes);
    memset(dst, 0, bytes);
    bench_barrier_all();
    if (me == 0) {
        long iters = scaled(3);
        double put[MAX_REPS], cpy[MAX_REPS];
        if (have_put) { bench_putmem(dst, src, bytes, 1); bench_quiet(); }
        memcpy(dst, src, bytes);
        clobber();
        for (int r = 0; r < reps; r++) {
            /* Alternate the two in every repetition so both see the same machine noise. */
            if (have_put) {
                double t0 = now_s();
                for (long i = 0; i < iters; i++) { bench_putmem(dst, src, bytes, 1); bench_quiet(); }
                put[r] = (double)bytes * (double)iters / (now_s() - t0) / 1e9;
            }
            double t0 = now_s();
            for (long i = 0; i < iters; i++) { memcpy(dst, src, bytes); clobber(); }
            cpy[r] = (double)bytes * (double)iters / (now_s() - t0) / 1e9;
        }
        double mc = median(cpy, reps);
        result("bw_memcpy", bytes, mc, "GB/s");
        if (have_put) {
            double mp = median(put, reps);
            result("bw_put", bytes, mp, "GB/s");
            result("bw_put_frac_memcpy", bytes, mp / mc, "fraction");
        }
    }
    if (!have_put) skip("bw_put", "missing:putmem/quiet");
    bench_barrier_all();
    if (me == 1 && have_put) check_bytes("bw_put", dst, bytes, 0x11);
}

int main(void)
{
    /* Big enough for two streaming buffers; the launch script sets these too. */
    setenv("ACLSHMEM_LOCAL_MEM_SIZE", "512M", 0);
    setenv("SHMEM_SYMMETRIC_SIZE", "512M", 0);

    const char *e;
    reps = 15; /* RMA figures are short: more repetitions than bench_common.h's default */
    if ((e = getenv("BENCH_REPS"))) reps = atoi(e);
    if (reps < 1) reps = 1;
    if (reps > MAX_REPS) reps = MAX_REPS;
    if ((e = getenv("BENCH_SCALE"))) scale = atof(e);
    if (!(scale > 0)) scale = 1.0;

    if (bench_init() != 0) {
        fprintf(stderr, "ERROR: init failed\n");
        return 1;
    }
    me = bench_my_pe();
    npes = bench_n_pes();
    if (npes < 2) {
        if (me == 0) fprintf(stderr, "ERROR: run with at least 2 PEs\n");
        bench_finalize();
        return 1;
    }
    pin_self();

    size_t llc = llc_bytes();
    size_t bw_bytes = 64 * MiB;
    if (2 * llc > bw_bytes) bw_bytes = 2 * llc;
    if (bw_bytes > 128 * MiB) bw_bytes = 128 * MiB;
    if ((e = getenv("BENCH_BW_MB")) && atol(e) > 0) bw_bytes = (size_t)atol(e) * MiB;
    if (bw_bytes < MAX_LAT_SIZE) bw_bytes = MAX_LAT_SIZE;

    unsigned char *src = bench_malloc(bw_bytes);
    unsigned char *dst = bench_malloc(bw_bytes);
    if (!src || !dst) {
        fprintf(stderr, "ERROR pe %d: symmetric allocation of 2 x %zu bytes failed\n", me, bw_bytes);
        bench_finalize();
        return 1;
    }
    memset(src, 0, MAX_LAT_SIZE);
    memset(dst, 0, MAX_LAT_SIZE);

    if (me == 0) {
        printf("INFO lib %s\n", BENCH_LIB_NAME);
        printf("INFO n_pes %d\n", npes);
        printf("INFO reps %d\n", reps);
        printf("INFO scale %g\n", scale);
        printf("INFO llc_bytes %zu\n", llc);
        printf("INFO bw_bytes %zu\n", bw_bytes);
        fflush(stdout);
    }

    fig_put_lat(src, dst);
    fig_get_lat(src, dst);
    fig_nbi_rate((int64_t *)src, (int64_t *)dst);
    fig_getnbi_strided((int64_t *)src, (int64_t *)dst);
    fig_scalar((int64_t *)src, (int64_t *)dst);
    fig_bandwidth(src, dst, bw_bytes);

    bench_barrier_all();
    bench_free(dst);
    bench_free(src);
    bench_finalize();
    if (failures) fprintf(stderr, "ERROR pe %d: %d check(s) failed\n", me, failures);
    return failures ? 1 : 0;
}

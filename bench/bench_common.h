/*
 * bench_common.h: helpers shared by bench/perf_rma.c, perf_sync.c and perf_coll.c (timing, medians,
 * output lines, pinning, PE 0 -> all agreement). Include after bench_api.h, in one source file.
 *
 * Output lines (stdout of PE 0):
 *   RESULT <figure> <size-bytes or n-pes> <value> <unit>
 *   SKIP   <figure> <reason>
 *   INFO   <key> <value...>
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 101

static int me, npes, reps = 11, failures = 0;
static double scale = 1.0;
static int64_t *bench_ctl; /* symmetric: PE 0 -> all agreement word */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Keeps the compiler from dropping or reordering memory work around a timed region. */
static inline void clobber(void) { __asm__ __volatile__("" ::: "memory"); }

static long scaled(long n)
{
    long s = (long)((double)n * scale);
    return s < 1 ? 1 : s;
}

static __attribute__((unused)) double env_double(const char *name, double dflt)
{
    const char *e = getenv(name);
    double v = e ? atof(e) : dflt;
    return v > 0 ? v : dflt;
}

/* Whether `name` appears in the comma-separated env list `var` (unset or empty: everything). */
static __attribute__((unused)) int selected(const char *var, const char *name)
{
    const char *e = getenv(var);
    if (!e || !*e) return 1;
    size_t n = strlen(name);
    for (const char *p = e; *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!q) break;
        p = q + 1;
    }
    return 0;
}

static void result(const char *fig, size_t size, double value, const char *unit)
{
    printf("RESULT %s %zu %.6g %s\n", fig, size, value, unit);
    fflush(stdout);
}

static void skip(const char *fig, const char *reason)
{
    if (me == 0) {
        printf("SKIP %s %s\n", fig, reason);
        fflush(stdout);
    }
}

static __attribute__((unused)) void fail(const char *fmt_what, long long got, long long want)
{
    fprintf(stderr, "ERROR pe %d: %s: got %lld, expected %lld\n", me, fmt_what, got, want);
    failures++;
}

/* Pins PE i to the (i mod n)-th CPU it may run on (BENCH_PIN=0: leave placement alone). */
static void pin_self(void)
{
    const char *e = getenv("BENCH_PIN");
    if (e && strcmp(e, "0") == 0) return;
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    int n = CPU_COUNT(&allowed), want = me % (n > 0 ? n : 1), k = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &allowed)) continue;
        if (k++ == want) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (sched_setaffinity(0, sizeof one, &one) == 0 && me == 0)
                printf("INFO pinned pe_i->cpu(i_mod_%d)\n", n);
            return;
        }
    }
}

/* Collective: every PE returns PE 0's `v` (outside timed regions only). */
__attribute__((unused)) static int64_t agree(int64_t v)
{
    bench_barrier_all();
    if (me == 0) {
        for (int pe = 0; pe < npes; pe++) bench_int64_p(bench_ctl, v, pe);
        bench_quiet();
    }
    bench_barrier_all();
    int64_t got = *(volatile int64_t *)bench_ctl;
    bench_barrier_all();
    return got;
}

/* Iterations so that one repetition takes about `rep_s` seconds, given PE 0's estimate `per_op_s`. */
static __attribute__((unused)) long iters_for(double per_op_s, double rep_s, long lo, long hi)
{
    long n = per_op_s > 0 ? (long)(rep_s / per_op_s) : hi;
    if (n < lo) n = lo;
    if (n > hi) n = hi;
    return n;
}

/* Common start: env knobs, init, PE ids, pinning, agreement word. Returns 0 or exits. */
static __attribute__((unused)) int bench_start(int min_pes)
{
    const char *e;
    if ((e = getenv("BENCH_REPS"))) reps = atoi(e);
    if (reps < 1) reps = 1;
    if (reps > MAX_REPS) reps = MAX_REPS;
    if ((e = getenv("BENCH_SCALE"))) scale = atof(e);
    if (!(scale > 0)) scale = 1.0;
    if (bench_init() != 0) {
        fprintf(stderr, "ERROR: init failed\n");
        exit(1);
    }
    me = bench_my_pe();
    npes = bench_n_pes();
    if (npes < min_pes) {
        if (me == 0) fprintf(stderr, "ERROR: run with at least %d PEs\n", min_pes);
        bench_finalize();
        exit(1);
    }
    pin_self();
    bench_ctl = bench_malloc(64);
    if (!bench_ctl) {
        fprintf(stderr, "ERROR pe %d: symmetric allocation failed\n", me);
        bench_finalize();
        exit(1);
    }
    *bench_ctl = 0;
    if (me == 0) {
        printf("INFO lib %s\n", BENCH_LIB_NAME);
        printf("INFO n_pes %d\n", npes);
        printf("INFO reps %d\n", reps);
        printf("INFO scale %g\n", scale);
        fflush(stdout);
    }
    bench_barrier_all();
    return 0;
}

static __attribute__((unused)) int bench_end(void)
{
    bench_barrier_all();
    bench_free(bench_ctl);
    bench_finalize();
    if (failures) fprintf(stderr, "ERROR pe %d: %d check(s) failed\n", me, failures);
    return failures ? 1 : 0;
}

#endif /* BENCH_COMMON_H */

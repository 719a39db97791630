/*
 * perf_sync.c: signal, wait and atomic micro-benchmarks, one source for two libraries (see
 * bench_api.h for the calls each library uses and the OpenSHMEM 1.4 equivalents on the OSHMEM side).
 *
 * Figures (BENCH_SYNC_FIGS, comma-separated, selects; default all):
 *   pair   PE 0 against PE 1 (other PEs wait in a barrier):
 *          amo_fadd   int64 atomic fetch-add on PE 1, latency per call          (us)
 *          amo_cswap  int64 atomic compare-swap on PE 1 (always succeeds), latency (us)
 *          sig_pingpong  8-byte put-with-signal + signal wait, half round trip  (us)
 *          wait_pingpong int32_p + int32_wait_until(EQ), half round trip        (us)
 *   ring   a token goes around all PEs: PE i waits for its signal, then forwards the 8-byte token to
 *          PE i+1 with put-with-signal. Laps are timed on PE 0:
 *          ring_hop   microseconds per hop (median over repetitions)            (us)
 *          ring_laps  laps completed in the timed repetitions (the run is capped by BENCH_RING_S)
 * Every timed loop has a warm-up and is repeated BENCH_REPS times; the MEDIAN is printed. Every
 * figure checks its data (fetched values, final counter, token payloads).
 *
 * Environment: BENCH_REPS (default 11), BENCH_SCALE (iteration multiplier, default 1),
 * BENCH_RING_S (time budget of the ring's timed part, default 2.5 s), BENCH_PIN (default 1).
 */
#define _GNU_SOURCE
#include "bench_api.h"
#include "bench_common.h"

struct sym {
    int64_t ctr;       /* AMO target */
    int64_t buf;       /* put-with-signal payload destination */
    int64_t out;       /* put-with-signal payload source */
    int32_t flag;      /* wait_until ping-pong word */
    int32_t pad;
    bench_sig_t sig;   /* signal word */
};

/* ---------------------------------------------------------------- atomics */
static void fig_amo(struct sym *s)
{
    if (!bench_have_amo()) {
        skip("amo_fadd", "missing:int64_atomic_fetch_add/compare_swap");
        return;
    }
    long n = scaled(20000), warm = n / 10 + 10;
    double t[MAX_REPS];
    long long total = warm + (long long)reps * n;

    /* fetch-add: every call returns the previous count */
    s->ctr = 0;
    bench_barrier_all();
    if (me == 0) {
        int64_t expect = 0;
        long bad = 0;
        for (long i = 0; i < warm; i++) bad += bench_int64_fetch_add(&s->ctr, 1, 1) != expect++;
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++) bad += bench_int64_fetch_add(&s->ctr, 1, 1) != expect++;
            t[r] = (now_s() - t0) / (double)n * 1e6;
        }
        result("amo_fadd", 8, median(t, reps), "us");
        if (bad) fail("amo_fadd: fetched values out of sequence (count)", bad, 0);
    }
    bench_barrier_all();
    if (me == 1 && s->ctr != total) fail("amo_fadd: final counter", s->ctr, total);

    /* compare-swap: ctr k -> k+1, each call must succeed and return k */
    bench_barrier_all();
    s->ctr = 0;
    bench_barrier_all();
    if (me == 0) {
        int64_t k = 0;
        long bad = 0;
        for (long i = 0; i < warm; i++, k++) bad += bench_int64_compare_swap(&s->ctr, k, k + 1, 1) != k;
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++, k++) bad += bench_int64_compare_swap(&s->ctr, k, k + 1, 1) != k;
            t[r] = (now_s() - t0) / (double)n * 1e6;
        }
        result("amo_cswap", 8, median(t, reps), "us");
        if (bad) fail("amo_cswap: failed swaps (count)", bad, 0);
    }
    bench_barrier_all();
    if (me == 1 && s->ctr != total) fail("amo_cswap: final value", s->ctr, total);
}

/* ---------------------------------------------------------------- put-with-signal ping-pong */
static void fig_sig_pingpong(struct sym *s)
{
    if (!bench_have_signal()) {
        skip("sig_pingpong", "missing:putmem_signal/signal_wait_until");
        return;
    }
    long n = scaled(10000), warm = n / 10 + 10;
    double t[MAX_REPS];
    s->sig = 0;
    s->buf = 0;
    bench_barrier_all();
    int64_t v = 0;
    long bad = 0;
    if (me == 0) {
        for (long i = 0; i < warm; i++) {
            s->out = ++v;
            bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, v, 1);
            bench_signal_wait_ge(&s->sig, v);
            bad += *(volatile int64_t *)&s->buf != v;
        }
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++) {
                s->out = ++v;
                bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, v, 1);
                bench_signal_wait_ge(&s->sig, v);
                bad += *(volatile int64_t *)&s->buf != v;
            }
            t[r] = (now_s() - t0) / (double)n * 1e6 / 2;
        }
        result("sig_pingpong", 8, median(t, reps), "us");
    } else if (me == 1) {
        long total = warm + (long)reps * n;
        for (long i = 0; i < total; i++) {
            ++v;
            bench_signal_wait_ge(&s->sig, v);
            s->out = *(volatile int64_t *)&s->buf;
            bad += s->out != v;
            bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, v, 0);
        }
    }
    if (bad) fail("sig_pingpong: payloads not visible with the signal (count)", bad, 0);
    bench_barrier_all();
}

/* ---------------------------------------------------------------- p + wait_until ping-pong */
static void fig_wait_pingpong(struct sym *s)
{
    if (!bench_have_wait()) {
        skip("wait_pingpong", "missing:int32_p/int32_wait_until");
        return;
    }
    long n = scaled(10000), warm = n / 10 + 10;
    double t[MAX_REPS];
    s->flag = 0;
    bench_barrier_all();
    int32_t v = 0;
    if (me == 0) {
        for (long i = 0; i < warm; i++) {
            bench_int32_p(&s->flag, ++v, 1);
            bench_int32_wait_eq(&s->flag, v);
        }
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++) {
                bench_int32_p(&s->flag, ++v, 1);
                bench_int32_wait_eq(&s->flag, v);
            }
            t[r] = (now_s() - t0) / (double)n * 1e6 / 2;
        }
        result("wait_pingpong", 4, median(t, reps), "us");
    } else if (me == 1) {
        long total = warm + (long)reps * n;
        for (long i = 0; i < total; i++) {
            bench_int32_wait_eq(&s->flag, ++v);
            bench_int32_p(&s->flag, v, 0);
        }
    }
    bench_barrier_all();
    if (me < 2 && *(volatile int32_t *)&s->flag != v) fail("wait_pingpong: final flag", s->flag, v);
}

/* ---------------------------------------------------------------- ring of signal waits */
static void fig_ring(struct sym *s)
{
    if (!bench_have_signal()) {
        skip("ring_hop", "missing:putmem_signal/signal_wait_until");
        return;
    }
    double budget = env_double("BENCH_RING_S", 2.5);
    int next = (me + 1) % npes;
    s->sig = 0;
    s->buf = 0;
    bench_barrier_all();
    long bad = 0;
    int64_t k = 0; /* tokens seen by this PE; the signal value of the k-th token is k */
    if (me == 0) {
        double t[MAX_REPS], start = now_s(), lap_s = 0;
        int done = 0;
        long laps = 0;
        /* Warm-up: laps for about 50 ms (at least 2); their mean sizes a repetition. */
        long wlaps = 0;
        double w0 = now_s();
        do {
            s->out = ++k;
            bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, k, next);
            bench_signal_wait_ge(&s->sig, k);
            bad += *(volatile int64_t *)&s->buf != k;
            lap_s = (now_s() - w0) / (double)++wlaps;
        } while (wlaps < 2 || (now_s() - w0 < 0.05 && wlaps < 100000));
        long per_rep = iters_for(lap_s, budget / reps, 1, scaled(1000000));
        start = now_s();
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (long l = 0; l < per_rep; l++) {
                s->out = ++k;
                bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, k, next);
                bench_signal_wait_ge(&s->sig, k);
                bad += *(volatile int64_t *)&s->buf != k;
            }
            double t1 = now_s();
            t[done++] = (t1 - t0) / (double)(per_rep * npes) * 1e6;
            laps += per_rep;
            if (t1 - start > 1.5 * budget) break; /* the estimate was off: report what we have */
        }
        /* Stop token (payload -1) goes once around. */
        s->out = -1;
        ++k;
        bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, k, next);
        bench_signal_wait_ge(&s->sig, k);
        result("ring_hop", (size_t)npes, median(t, done), "us");
        result("ring_laps", (size_t)npes, (double)laps, "laps");
        printf("INFO ring npes=%d reps_done=%d laps_per_rep=%ld timed_s=%.3f\n", npes, done, per_rep,
               now_s() - start);
        fflush(stdout);
    } else {
        for (;;) {
            ++k;
            bench_signal_wait_ge(&s->sig, k);
            int64_t v = *(volatile int64_t *)&s->buf;
            s->out = v;
            bench_putmem_signal(&s->buf, &s->out, 8, &s->sig, k, next);
            if (v < 0) break;
            bad += v != k;
        }
    }
    if (bad) fail("ring: token payload did not match its signal (count)", bad, 0);
    bench_barrier_all();
}

int main(void)
{
    setenv("ACLSHMEM_LOCAL_MEM_SIZE", "64M", 0);
    setenv("SHMEM_SYMMETRIC_SIZE", "64M", 0);
    bench_start(2);
    if (!bench_have_int64_p() || !bench_have_quiet()) {
        fprintf(stderr, "ERROR: the library lacks int64_p/quiet, which the benchmark's bookkeeping uses\n");
        return 1;
    }
    struct sym *s = bench_malloc(sizeof *s);
    if (!s) {
        fprintf(stderr, "ERROR pe %d: symmetric allocation failed\n", me);
        return 1;
    }
    memset(s, 0, sizeof *s);
    if (me == 0) {
        printf("INFO signal %s\n", BENCH_SIGNAL_NOTE);
        printf("INFO amo %s\n", BENCH_AMO_NOTE);
        fflush(stdout);
    }
    bench_barrier_all();

    if (selected("BENCH_SYNC_FIGS", "pair")) {
        fig_amo(s);
        fig_sig_pingpong(s);
        fig_wait_pingpong(s);
    }
    if (selected("BENCH_SYNC_FIGS", "ring")) fig_ring(s);

    bench_barrier_all();
    bench_free(s);
    return bench_end();
}

/*
 * perf_coll.c: collectives over all PEs (the world team), one source for two libraries (see
 * bench_api.h; OSHMEM 4.1 has no teams, so its side uses the OpenSHMEM 1.4 active-set forms).
 *
 * Figures (BENCH_COLL_FIGS, comma-separated, selects; default all). Figure names carry the PE
 * count, the size column is the message size in bytes (per PE block for fcollect and alltoall):
 *   barrier          barrier_all latency; the size column is the number of PEs     (us)
 *   bcast_<N>pe      broadcast from PE 0, 8 B .. 1 MiB                              (us)
 *   reduce_<N>pe     int64 sum reduction, 8 B .. 1 MiB (1 .. 131072 elements)       (us)
 *   fcollect_<N>pe   fcollect, 8 B / 4 KiB / 256 KiB per PE                         (us)
 *   collect_<N>pe    collect (the variable-size form; every PE gives the same size), as fcollect (us)
 *   alltoall_<N>pe   alltoall, 8 B / 4 KiB / 256 KiB per PE pair                    (us)
 *
 * Method: warm-up calls, then 5 calls on PE 0's clock size the repetition (about BENCH_REP_MS,
 * default 20 ms); every PE runs the same agreed count. One repetition is: barrier; n back-to-back
 * calls; barrier; PE 0 reports (elapsed / n), so the time includes every PE finishing. The MEDIAN
 * of BENCH_REPS (default 11) repetitions is printed; a figure stops early after BENCH_FIG_S
 * (default 1.5 s) and reports the median of what it has. After each figure every PE checks its
 * result (broadcast bytes, reduction sums, collected and exchanged blocks).
 *
 * BENCH_HOP=1 with 2 PEs on one node: every repetition is preceded by 200 round trips of two cache
 * lines between PE 0 and PE 1 over a plain shared mapping (no library involved), and each figure
 * also prints <figure>@hop: the median over repetitions of (time per call / one-way hop time),
 * unit "hops". On a VM whose two vCPUs move between host cores, the hop time changes from run to
 * run (here 0.07 / 0.12 / 0.3 us) and every 2-PE figure with it; the @hop figures compare two
 * libraries measured in different runs without that factor.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_api.h"
#include "bench_common.h"

#define KiB 1024UL
#define MiB (1024UL * 1024UL)

static const size_t bcast_sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144, 1048576};
static const size_t block_sizes[] = {8, 4096, 262144};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_BCAST (1 * MiB)
#define MAX_BLOCK (256 * KiB)

static double rep_s = 0.02, fig_budget_s = 1.5;

/* BENCH_HOP: two cache lines shared by PE 0 and PE 1 (each written by one of them), or NULL */
static volatile int64_t *hop_line;
static int64_t hop_seq;

static void hop_setup(void)
{
    const char *e = getenv("BENCH_HOP");
    if (npes != 2 || !e || strcmp(e, "1") != 0) return;
    char name[64];
    snprintf(name, sizeof name, "/perf_coll_hop_%lld", (long long)agree((int64_t)getpid()));
    int fd = -1;
    if (me == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, 4096) != 0) {
            close(fd);
            fd = -1;
        }
    }
    bench_barrier_all();
    if (me == 1) fd = shm_open(name, O_RDWR, 0);
    void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0) close(fd);
    /* both must have it: PE 1 tells PE 0, PE 0 tells both */
    if (me == 1) {
        bench_int64_p(bench_ctl + 1, p != MAP_FAILED, 0);
        bench_quiet();
    }
    bench_barrier_all();
    int64_t both = agree(p != MAP_FAILED && *(volatile int64_t *)(bench_ctl + 1));
    if (me == 0) shm_unlink(name);
    if (both) {
        hop_line = p;
    } else {
        if (p != MAP_FAILED) munmap(p, 4096);
        if (me == 0) printf("INFO hop unavailable (shm_open/mmap failed)\n");
    }
}

/* One-way time of a cache line between PE 0 and PE 1 (us), from one batch of 200 round trips
 * (PE 0 writes its line, PE 1 answers in its own line 64 bytes further). */
static double hop_us(void)
{
    const int rounds = 200;
    volatile int64_t *mine = hop_line + (me == 0 ? 0 : 8), *theirs = hop_line + (me == 0 ? 8 : 0);
    double t0 = now_s();
    for (int i = 0; i < rounds; i++) {
        int64_t v = ++hop_seq;
        if (me == 0) {
            __atomic_store_n(mine, v, __ATOMIC_RELEASE);
            while (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) != v) {
                if (now_s() - t0 > 5) goto stuck;
            }
        } else {
            while (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) != v) {
                if (now_s() - t0 > 5) goto stuck;
            }
            __atomic_store_n(mine, v, __ATOMIC_RELEASE);
        }
    }
    return (now_s() - t0) / (2.0 * rounds) * 1e6;
stuck:
    fprintf(stderr, "ERROR pe %d: the hop round trips stopped (the other PE is gone)\n", me);
    exit(1);
}

/*
 * Times the collective expression CALL (which evaluates to 0 on success) as described at the head
 * and prints RESULT <fig> <size> <median us> us on PE 0.
 */
#define TIMED(fig, size, CALL)                                                                        \
    do {                                                                                              \
        int rc_ = 0, done_ = 0;                                                                       \
        double t_[MAX_REPS], h_[MAX_REPS];                                                            \
        bench_barrier_all();                                                                          \
        for (int w_ = 0; w_ < 3; w_++) rc_ |= (CALL);                                                 \
        bench_barrier_all();                                                                          \
        double c0_ = now_s();                                                                         \
        for (int w_ = 0; w_ < 5; w_++) rc_ |= (CALL);                                                 \
        bench_barrier_all();                                                                          \
        long n_ = (long)agree(iters_for((now_s() - c0_) / 5, rep_s, 1, scaled(20000)));               \
        double f0_ = now_s();                                                                         \
        for (int r_ = 0; r_ < reps; r_++) {                                                           \
            bench_barrier_all();                                                                      \
            double hop_ = hop_line ? hop_us() : 0;                                                    \
            if (hop_line) bench_barrier_all();                                                        \
            double t0_ = now_s();                                                                     \
            for (long i_ = 0; i_ < n_; i_++) rc_ |= (CALL);                                           \
            bench_barrier_all();                                                                      \
            t_[done_] = (now_s() - t0_) / (double)n_ * 1e6;                                           \
            h_[done_] = hop_ > 0 ? t_[done_] / hop_ : 0;                                              \
            done_++;                                                                                  \
            if (agree(me == 0 && now_s() - f0_ > fig_budget_s)) break;                                \
        }                                                                                             \
        if (rc_) {                                                                                    \
            fprintf(stderr, "ERROR pe %d: %s (%zu): the call returned an error\n", me, fig, (size_t)(size)); \
            failures++;                                                                               \
        }                                                                                             \
        if (me == 0) result(fig, (size_t)(size), median(t_, done_), "us");                           \
        if (me == 0 && hop_line) {                                                                    \
            char hf_[64];                                                                             \
            snprintf(hf_, sizeof hf_, "%s@hop", fig);                                                 \
            result(hf_, (size_t)(size), median(h_, done_), "hops");                                  \
        }                                                                                             \
    } while (0)

/* Checks a sparse sample (and the last byte) of buf[0..bytes) == pat. */
static void check_bytes(const char *what, size_t size, const unsigned char *buf, size_t bytes,
                        unsigned char pat)
{
    size_t step = bytes > 4096 ? bytes / 64 : 1;
    for (size_t i = 0; i < bytes; i += step) {
        if (buf[i] != pat) goto bad;
    }
    if (buf[bytes - 1] != pat) goto bad;
    return;
bad:
    fprintf(stderr, "ERROR pe %d: %s (%zu bytes): data did not arrive\n", me, what, size);
    failures++;
}

static int barrier_call(void)
{
    bench_barrier_all();
    return 0;
}

static void fig_barrier(void)
{
    TIMED("barrier", npes, barrier_call());
}

static void fig_bcast(unsigned char *src, unsigned char *dst)
{
    char fig[32];
    snprintf(fig, sizeof fig, "bcast_%dpe", npes);
    if (!bench_have_broadcast()) {
        skip(fig, "missing:broadcastmem");
        return;
    }
    for (size_t k = 0; k < NELEM(bcast_sizes); k++) {
        size_t s = bcast_sizes[k];
        unsigned char pat = (unsigned char)(0x31 + 7 * k);
        memset(src, me == 0 ? pat : 0, s);
        memset(dst, 0, s);
        TIMED(fig, s, bench_broadcast(dst, src, s, 0));
        if (me != 0 || BENCH_BCAST_WRITES_ROOT) check_bytes(fig, s, dst, s, pat);
    }
}

static void fig_reduce(int64_t *src, int64_t *dst)
{
    char fig[32];
    snprintf(fig, sizeof fig, "reduce_%dpe", npes);
    if (!bench_have_reduce()) {
        skip(fig, "missing:int64_sum_reduce");
        return;
    }
    for (size_t k = 0; k < NELEM(bcast_sizes); k++) {
        size_t s = bcast_sizes[k], n = s / 8;
        for (size_t i = 0; i < n; i++) {
            src[i] = (int64_t)(me + 1) + (int64_t)(i % 7);
            dst[i] = 0;
        }
        TIMED(fig, s, bench_int64_sum_reduce(dst, src, n));
        int64_t base = (int64_t)npes * (npes + 1) / 2;
        size_t step = n > 512 ? n / 64 + 1 : 1;
        for (size_t i = 0; i < n; i += step) {
            int64_t want = base + (int64_t)npes * (int64_t)(i % 7);
            if (dst[i] != want) {
                fail(fig, dst[i], want);
                break;
            }
        }
        int64_t want_last = base + (int64_t)npes * (int64_t)((n - 1) % 7);
        if (dst[n - 1] != want_last) fail(fig, dst[n - 1], want_last);
    }
}

static void fig_fcollect(unsigned char *src, unsigned char *dst)
{
    char fig[32];
    snprintf(fig, sizeof fig, "fcollect_%dpe", npes);
    if (!bench_have_fcollect()) {
        skip(fig, "missing:fcollectmem");
        return;
    }
    for (size_t k = 0; k < NELEM(block_sizes); k++) {
        size_t s = block_sizes[k];
        memset(src, 0x20 + me, s);
        memset(dst, 0, s * npes);
        TIMED(fig, s, bench_fcollect(dst, src, s));
        for (int j = 0; j < npes; j++) check_bytes(fig, s, dst + (size_t)j * s, s, (unsigned char)(0x20 + j));
    }
}

static void fig_collect(unsigned char *src, unsigned char *dst)
{
    char fig[32];
    snprintf(fig, sizeof fig, "collect_%dpe", npes);
    if (!bench_have_collect()) {
        skip(fig, "missing:collectmem");
        return;
    }
    for (size_t k = 0; k < NELEM(block_sizes); k++) {
        size_t s = block_sizes[k];
        memset(src, 0x40 + me, s);
        memset(dst, 0, s * npes);
        TIMED(fig, s, bench_collect(dst, src, s));
        for (int j = 0; j < npes; j++) check_bytes(fig, s, dst + (size_t)j * s, s, (unsigned char)(0x40 + j));
    }
}

static void fig_alltoall(unsigned char *src, unsigned char *dst)
{
    char fig[32];
    snprintf(fig, sizeof fig, "alltoall_%dpe", npes);
    if (!bench_have_alltoall()) {
        skip(fig, "missing:alltoallmem");
        return;
    }
    for (size_t k = 0; k < NELEM(block_sizes); k++) {
        size_t s = block_sizes[k];
        for (int j = 0; j < npes; j++) memset(src + (size_t)j * s, (me * 16 + j + 1) & 0xff, s);
        memset(dst, 0, s * npes);
        TIMED(fig, s, bench_alltoall(dst, src, s));
        for (int i = 0; i < npes; i++)
            check_bytes(fig, s, dst + (size_t)i * s, s, (unsigned char)((i * 16 + me + 1) & 0xff));
    }
}

int main(void)
{
    setenv("ACLSHMEM_LOCAL_MEM_SIZE", "64M", 0);
    setenv("SHMEM_SYMMETRIC_SIZE", "64M", 0);
    rep_s = env_double("BENCH_REP_MS", 20) / 1000.0;
    fig_budget_s = env_double("BENCH_FIG_S", 1.5);
    bench_start(2);
    if (!bench_have_int64_p() || !bench_have_quiet()) {
        fprintf(stderr, "ERROR: the library lacks int64_p/quiet, which the benchmark's bookkeeping uses\n");
        return 1;
    }
    int want_data = selected("BENCH_COLL_FIGS", "bcast") || selected("BENCH_COLL_FIGS", "reduce") ||
                    selected("BENCH_COLL_FIGS", "fcollect") || selected("BENCH_COLL_FIGS", "collect") ||
                    selected("BENCH_COLL_FIGS", "alltoall");
    size_t bytes = MAX_BCAST;
    if ((size_t)npes * MAX_BLOCK > bytes) bytes = (size_t)npes * MAX_BLOCK;
    if (!want_data) bytes = 64;
    unsigned char *src = bench_malloc(bytes), *dst = bench_malloc(bytes);
    if (!src || !dst || (want_data && bench_coll_setup(MAX_BCAST) != 0)) {
        fprintf(stderr, "ERROR pe %d: symmetric allocation failed (2 x %zu bytes)\n", me, bytes);
        return 1;
    }
    memset(src, 0, bytes);
    memset(dst, 0, bytes);
    if (me == 0) {
        printf("INFO coll %s\n", BENCH_COLL_NOTE);
        printf("INFO rep_ms %g fig_budget_s %g\n", rep_s * 1e3, fig_budget_s);
        fflush(stdout);
    }

    hop_setup();
    if (selected("BENCH_COLL_FIGS", "barrier")) fig_barrier();
    if (selected("BENCH_COLL_FIGS", "bcast")) fig_bcast(src, dst);
    if (selected("BENCH_COLL_FIGS", "reduce")) fig_reduce((int64_t *)src, (int64_t *)dst);
    if (selected("BENCH_COLL_FIGS", "fcollect")) fig_fcollect(src, dst);
    if (selected("BENCH_COLL_FIGS", "collect")) fig_collect(src, dst);
    if (selected("BENCH_COLL_FIGS", "alltoall")) fig_alltoall(src, dst);

    if (want_data) bench_coll_teardown();
    bench_barrier_all();
    bench_free(dst);
    bench_free(src);
    return bench_end();
}

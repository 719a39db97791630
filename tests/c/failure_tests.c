/*
 * failure_tests.c - failure scenarios of the bootstrap and the job lifetime: PEs that never
 * arrive or stop arriving, zero timeouts, aclshmem_global_exit, PEs that die, many PEs on few
 * cores, hostile clients of the config store. Driven by tests/failures.rs, which starts the PEs
 * either under aclshmrun or by hand (ACLSHMEM_MY_PE, ACLSHMEM_N_PES, ACLSHMEM_IP_PORT set per
 * process): `failure_tests <scenario>`.
 *
 * Environment read here (besides the launcher's variables):
 *   FT_INIT_TIMEOUT  option_attr.shm_init_timeout in seconds (default 20)
 *   FT_OP_TIMEOUT    option_attr.control_operation_timeout in seconds (default 20)
 *   FT_DELAY_MS      sleep this long before init (scenario `arrive`)
 *   FT_PE            the PE that misbehaves (skips, exits, dies), default 2
 *   FT_STATUS        the status passed to aclshmem_global_exit, default 7
 *   FT_MODE          where the others wait when FT_PE dies: barrier, wait or reduce
 *   FT_SKIP_SLEEP_MS how long the skipping PE of `late_malloc` stays before it leaves
 *   FT_STOP_FILE     `hostile`, `loop`: the loop ends once this file exists (checked by PE 0)
 *   FT_READY_FILE    `loop`: PE 0 creates it once every PE is in the loop
 *   FT_SIGUSR1       `loop`: 1 installs a SIGUSR1 handler (SA_RESTART) that counts signals
 *   FT_FORK_PE       `loop`: this PE forks a child that sleeps FT_CHILD_SLEEP_S seconds (default
 *                    30) holding every descriptor it inherited, then exits
 *
 * Result lines the Rust side parses: `RESULT ...`. A broken expectation prints
 * `FAIL: <scenario>: <what> (pe X)` and exits 1; PE 0 prints `OK <scenario>` when a scenario
 * that is meant to end normally passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#include "test_util.h"


static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int env_int_or(const char *name, int dflt)
{
    const char *v = getenv(name);
    return (v == NULL || *v == '\0') ? dflt : atoi(v);
}

/* The attributes of the environment, with the bootstrap timeouts of FT_INIT_TIMEOUT and
 * FT_OP_TIMEOUT (20 s each unless set). */
static aclshmemx_init_attr_t env_attr(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    CHECK(attr.my_pe == g_pe, "set_attr_from_env: my_pe %d, ACLSHMEM_MY_PE %d", attr.my_pe, g_pe);
    attr.option_attr.shm_init_timeout = (uint32_t)env_int_or("FT_INIT_TIMEOUT", 20);
    attr.option_attr.control_operation_timeout = (uint32_t)env_int_or("FT_OP_TIMEOUT", 20);
    return attr;
}

static void init_env(void)
{
    aclshmemx_init_attr_t attr = env_attr();
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
}

static void ok(void)
{
    if (g_pe == 0) {
        say("OK %s", g_scenario);
    }
}

/* Ring exchange through aclshmem_ptr on a fresh block: every PE writes `tag` into its right
 * neighbour's copy, then checks what its left neighbour wrote. */
static void ring_check(uint64_t tag)
{
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    volatile uint64_t *slot = aclshmem_malloc(sizeof(uint64_t));
    CHECK(slot != NULL, "ring %llu: aclshmem_malloc(8) returned NULL", (unsigned long long)tag);
    *slot = 0;
    aclshmem_barrier_all();
    volatile uint64_t *right = aclshmem_ptr((void *)slot, (me + 1) % n);
    CHECK(right != NULL, "ring %llu: aclshmem_ptr to the right neighbour is NULL", (unsigned long long)tag);
    *right = tag * 1000 + (uint64_t)me;
    aclshmem_barrier_all();
    uint64_t want = tag * 1000 + (uint64_t)((me + n - 1) % n);
    CHECK(*slot == want, "ring %llu: slot holds %llu, expected %llu", (unsigned long long)tag,
          (unsigned long long)*slot, (unsigned long long)want);
    aclshmem_barrier_all();
    aclshmem_free((void *)slot);
}

/* Stays alive (for the job to end this process) and fails when nothing did within `secs`. */
static void linger(const char *what, int secs) __attribute__((noreturn));
static void linger(const char *what, int secs)
{
    sleep_ms(1000L * secs);
    fail("%s: still running after %d s", what, secs);
}

/* ------------------------------------------------------------------------------------------ */
/* arrive: init where some PE never comes (or comes too late); prints the result and exits 0.   */
/* ------------------------------------------------------------------------------------------ */
static void scenario_arrive(void)
{
    int delay = env_int_or("FT_DELAY_MS", 0);
    if (delay > 0) {
        say("pe %d sleeps %d ms before init", g_pe, delay);
        sleep_ms(delay);
    }
    aclshmemx_init_attr_t attr = env_attr();
    double t0 = now_s();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    double dt = now_s() - t0;
    int status = aclshmemx_init_status();
    say("RESULT pe=%d init_rc=%d elapsed=%.2f status=%d", g_pe, rc, dt, status);
    if (rc != 0) {
        CHECK(status == ACLSHMEM_STATUS_NOT_INITIALIZED, "init failed with %d but init_status is %d", rc,
              status);
    }
    _exit(0);
}

/* ------------------------------------------------------------------------------------------ */
/* late_malloc: PE FT_PE skips an allocation the others make.                                  */
/* ------------------------------------------------------------------------------------------ */
static void scenario_late_malloc(void)
{
    init_env();
    const int skipper = env_int_or("FT_PE", 2);
    /* a first allocation everybody makes: the heap works */
    int *warm = aclshmem_malloc(256);
    CHECK(warm != NULL, "the first (symmetric) aclshmem_malloc returned NULL");
    aclshmem_barrier_all();
    if (g_pe == skipper) {
        int ms = env_int_or("FT_SKIP_SLEEP_MS", 5000);
        say("pe %d skips the allocation and leaves after %d ms", g_pe, ms);
        sleep_ms(ms);
        /* leaves without finalizing: the others, if still waiting, learn it died */
        _exit(0);
    }
    double t0 = now_s();
    void *p = aclshmem_malloc(4096);
    double dt = now_s() - t0;
    say("RESULT pe=%d malloc=%s elapsed=%.2f", g_pe, p == NULL ? "NULL" : "ok", dt);
    /* wait to be ended by PE FT_PE's departure */
    linger("after the failed allocation", 30);
}

/* ------------------------------------------------------------------------------------------ */
/* zero_timeout: a zero control_operation_timeout or shm_init_timeout is an invalid value.      */
/* ------------------------------------------------------------------------------------------ */
static void scenario_zero_timeout(void)
{
    aclshmemx_init_attr_t attr = env_attr();
    attr.option_attr.control_operation_timeout = 0;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), ACLSHMEM_INVALID_VALUE);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    attr = env_attr();
    attr.option_attr.shm_init_timeout = 0;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), ACLSHMEM_INVALID_VALUE);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    attr = env_attr();
    attr.option_attr.shm_init_timeout = 0;
    attr.option_attr.control_operation_timeout = 0;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), ACLSHMEM_INVALID_VALUE);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    /* the rejected attempts left nothing behind: a valid init works */
    init_env();
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    ring_check(1);
    CHECK_RC(aclshmem_finalize(), 0);
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* global_exit: PE FT_PE ends the job with FT_STATUS while the others wait in a barrier.        */
/* ------------------------------------------------------------------------------------------ */
static void scenario_global_exit(void)
{
    init_env();
    const int leaver = env_int_or("FT_PE", 2);
    const int status = env_int_or("FT_STATUS", 7);
    aclshmem_barrier_all();
    if (g_pe == leaver) {
        sleep_ms(300); /* the others are in the barrier by now */
        say("pe %d calls aclshmem_global_exit(%d)", g_pe, status);
        aclshmem_global_exit(status);
        fail("aclshmem_global_exit returned");
    }
    say("pe %d waits in aclshmem_barrier_all", g_pe);
    aclshmem_barrier_all();
    fail("aclshmem_barrier_all returned although PE %d never entered it", leaver);
}

/* exit_in_handler: PE FT_PE ends (exit without finalize) while every other PE is inside its own
   exit, in an exit handler that sleeps. The library thread that notices the lost PE ends the
   process at once with _exit: the program's other exit handler must not run from that thread
   while the main thread is still in the first one (two threads running the exit handlers crash). */
static void exit_handler_second(void)
{
    say("RESULT second exit handler ran on %s", gettid() == getpid() ? "the main thread" : "another thread");
}

static void exit_handler_first(void)
{
    say("RESULT pe=%d sleeps in its exit handler", g_pe);
    sleep_ms(4000);
}

static void scenario_exit_in_handler(void)
{
    init_env();
    const int leaver = env_int_or("FT_PE", 1);
    aclshmem_barrier_all();
    if (g_pe == leaver) {
        sleep_ms(500); /* the others are in their exit handlers by now */
        exit(0);
    }
    atexit(exit_handler_second);
    atexit(exit_handler_first); /* runs first */
    exit(0);
}

/* global_exit before init: only this process exits. Every PE but FT_PE just lives on a bit. */
static void scenario_exit_before_init(void)
{
    const int leaver = env_int_or("FT_PE", 1);
    const int status = env_int_or("FT_STATUS", 5);
    if (g_pe == leaver) {
        say("pe %d calls aclshmem_global_exit(%d) before init", g_pe, status);
        aclshmem_global_exit(status);
        fail("aclshmem_global_exit returned");
    }
    sleep_ms(1500);
    say("RESULT pe=%d still alive", g_pe);
    _exit(0);
}

/* ------------------------------------------------------------------------------------------ */
/* die: PE FT_PE is killed (SIGKILL; FT_HOW=exit1: exits with status 1) while the others wait  */
/* in FT_MODE.                                                                                   */
/* ------------------------------------------------------------------------------------------ */
static void scenario_die(void)
{
    init_env();
    const int victim = env_int_or("FT_PE", 2);
    const char *mode = getenv("FT_MODE");
    if (mode == NULL) {
        mode = "barrier";
    }
    int32_t *flag = aclshmem_malloc(sizeof(int32_t));
    int64_t *src = aclshmem_malloc(4 * sizeof(int64_t));
    int64_t *dst = aclshmem_malloc(4 * sizeof(int64_t));
    CHECK(flag != NULL && src != NULL && dst != NULL, "aclshmem_malloc returned NULL");
    *flag = 0;
    for (int i = 0; i < 4; i++) {
        src[i] = g_pe + i;
        dst[i] = -1;
    }
    /* one reduction everybody makes: the collective works */
    CHECK_RC(aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, 4), 0);
    aclshmem_barrier_all();
    if (g_pe == victim) {
        sleep_ms(500); /* the others are waiting by now */
        say("pe %d dies now (pid %d)", g_pe, (int)getpid());
        const char *how = getenv("FT_HOW");
        if (how != NULL && strcmp(how, "exit1") == 0) {
            exit(1); /* as a program that fails (an uncaught Python exception exits so) */
        }
        raise(SIGKILL);
        fail("survived SIGKILL");
    }
    say("pe %d waits in %s", g_pe, mode);
    if (strcmp(mode, "barrier") == 0) {
        aclshmem_barrier_all();
    } else if (strcmp(mode, "wait") == 0) {
        aclshmem_int32_wait_until(flag, ACLSHMEM_CMP_EQ, 1);
    } else if (strcmp(mode, "reduce") == 0) {
        int rc = aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, 4);
        fail("aclshmem_int64_sum_reduce returned %d without PE %d", rc, victim);
    } else {
        fail("unknown FT_MODE \"%s\"", mode);
    }
    fail("%s returned although PE %d died", mode, victim);
}

/* ------------------------------------------------------------------------------------------ */
/* scale: init, barriers, malloc/free, a ring exchange and finalize on many PEs.                */
/* ------------------------------------------------------------------------------------------ */
static void scenario_scale(void)
{
    double t0 = now_s();
    init_env();
    double t_init = now_s() - t0;
    for (int i = 0; i < 3; i++) {
        aclshmem_barrier_all();
    }
    void *blocks[4];
    for (int i = 0; i < 4; i++) {
        blocks[i] = aclshmem_malloc((size_t)(i + 1) * 4096);
        CHECK(blocks[i] != NULL, "aclshmem_malloc(%d) returned NULL", (i + 1) * 4096);
        memset(blocks[i], g_pe, (size_t)(i + 1) * 4096);
    }
    aclshmem_barrier_all();
    for (int i = 3; i >= 0; i--) {
        aclshmem_free(blocks[i]);
    }
    ring_check(7);
    ring_check(8);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    if (g_pe == 0) {
        say("RESULT init=%.2f total=%.2f", t_init, now_s() - t0);
    }
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* hostile: barriers and allocations in a loop until FT_STOP_FILE exists (PE 0 decides).        */
/* ------------------------------------------------------------------------------------------ */
static void scenario_hostile(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    const char *stop_file = getenv("FT_STOP_FILE");
    CHECK(stop_file != NULL, "FT_STOP_FILE not set");
    volatile int32_t *stop = aclshmem_malloc(sizeof(int32_t));
    CHECK(stop != NULL, "aclshmem_malloc(stop) returned NULL");
    *stop = 0;
    aclshmem_barrier_all();
    if (me == 0) {
        say("HOSTILE_READY %s", getenv("ACLSHMEM_IP_PORT"));
    }
    volatile int32_t *stop0 = aclshmem_ptr((void *)stop, 0);
    CHECK(stop0 != NULL, "aclshmem_ptr(stop, 0) is NULL");
    double t0 = now_s();
    int iter = 0;
    for (;;) {
        if (me == 0 && (access(stop_file, F_OK) == 0 || now_s() - t0 > 60.0)) {
            *stop = 1;
        }
        aclshmem_barrier_all();
        if (*stop0) {
            break;
        }
        size_t len = 64 + (size_t)(iter % 7) * 512;
        unsigned char *p = aclshmem_malloc(len);
        CHECK(p != NULL, "iteration %d: aclshmem_malloc(%zu) returned NULL", iter, len);
        unsigned char *right = aclshmem_ptr(p, (me + 1) % n);
        CHECK(right != NULL, "iteration %d: aclshmem_ptr is NULL", iter);
        right[len - 1] = (unsigned char)(me + iter);
        aclshmem_barrier_all();
        unsigned char want = (unsigned char)((me + n - 1) % n + iter);
        CHECK(p[len - 1] == want, "iteration %d: got %u, expected %u", iter, p[len - 1], want);
        aclshmem_barrier_all();
        aclshmem_free(p);
        iter++;
        sleep_ms(20);
    }
    aclshmem_free((void *)stop);
    double t_fin = now_s();
    CHECK_RC(aclshmem_finalize(), 0);
    say("RESULT pe=%d iterations=%d finalize=%.2f", me, iter, now_s() - t_fin);
    CHECK(iter > 0, "no iteration ran");
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* loop: barriers until FT_STOP_FILE exists (PE 0 decides), then finalize. Used to stop, signal */
/* and kill PEs of a running job from the outside.                                              */
/* ------------------------------------------------------------------------------------------ */
static volatile sig_atomic_t g_usr1;

static void on_usr1(int sig)
{
    (void)sig;
    g_usr1 = g_usr1 + 1;
}

static void scenario_loop(void)
{
    if (env_int_or("FT_SIGUSR1", 0) == 1) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction(SIGUSR1) failed");
    }
    init_env();
    const int me = aclshmem_my_pe();
    const char *stop_file = getenv("FT_STOP_FILE");
    CHECK(stop_file != NULL, "FT_STOP_FILE not set");
    const char *ready_file = getenv("FT_READY_FILE");
    volatile int32_t *stop = aclshmem_malloc(sizeof(int32_t));
    CHECK(stop != NULL, "aclshmem_malloc(stop) returned NULL");
    *stop = 0;
    volatile int32_t *stop0 = aclshmem_ptr((void *)stop, 0);
    CHECK(stop0 != NULL, "aclshmem_ptr(stop, 0) is NULL");
    if (me == env_int_or("FT_FORK_PE", -1)) {
        pid_t child = fork();
        CHECK(child >= 0, "fork failed");
        if (child == 0) {
            /* keeps every inherited descriptor but the test's output pipes */
            FILE *null_out = freopen("/dev/null", "w", stdout);
            FILE *null_err = freopen("/dev/null", "w", stderr);
            (void)null_out;
            (void)null_err;
            sleep_ms(1000L * env_int_or("FT_CHILD_SLEEP_S", 30));
            _exit(0);
        }
        say("pe %d forked child %d", me, (int)child);
    }
    say("LOOP pe=%d pid=%d", me, (int)getpid());
    aclshmem_barrier_all();
    if (me == 0 && ready_file != NULL) {
        FILE *f = fopen(ready_file, "w");
        CHECK(f != NULL, "cannot create %s", ready_file);
        fclose(f);
    }
    double t0 = now_s();
    long iter = 0;
    for (;;) {
        if (me == 0 && (access(stop_file, F_OK) == 0 || now_s() - t0 > 90.0)) {
            *stop = 1;
        }
        aclshmem_barrier_all();
        if (*stop0) {
            break;
        }
        aclshmem_barrier_all();
        iter++;
        if (iter % 16 == 0) {
            sleep_ms(5);
        }
    }
    aclshmem_free((void *)stop);
    CHECK_RC(aclshmem_finalize(), 0);
    say("RESULT pe=%d iterations=%ld usr1=%d", me, iter, (int)g_usr1);
    CHECK(iter > 0, "no iteration ran");
    ok();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *pe = getenv("ACLSHMEM_MY_PE");
    g_pe = pe != NULL ? atoi(pe) : -1;
    if (argc != 2) {
        fprintf(stderr, "usage: %s <scenario>\n", argv[0]);
        return 2;
    }
    g_scenario = argv[1];
    static const struct {
        const char *name;
        void (*run)(void);
    } scenarios[] = {
        {"arrive", scenario_arrive},
        {"late_malloc", scenario_late_malloc},
        {"zero_timeout", scenario_zero_timeout},
        {"global_exit", scenario_global_exit},
        {"exit_before_init", scenario_exit_before_init},
        {"exit_in_handler", scenario_exit_in_handler},
        {"die", scenario_die},
        {"scale", scenario_scale},
        {"hostile", scenario_hostile},
        {"loop", scenario_loop},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(g_scenario, scenarios[i].name) == 0) {
            scenarios[i].run();
            return 0;
        }
    }
    fprintf(stderr, "unknown scenario %s\n", g_scenario);
    return 2;
}

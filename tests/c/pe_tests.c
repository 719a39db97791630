/*
 * pe_tests.c - multi-PE scenarios of the host API (init/finalize, heap, aclshmem_ptr, barriers,
 * bootstrap robustness). Run under aclshmrun: `aclshmrun -n N pe_tests <scenario>`.
 *
 * Every failed check prints `FAIL: <scenario>: <what> (pe X)` and exits 1; PE 0 prints
 * `OK <scenario>` when the scenario passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#include "test_util.h"

#define MIB ((size_t)1 << 20)
#define EXTRA ((size_t)ACLSHMEM_EXTRA_SIZE)

static int g_npes = -1;

/* The attributes the launcher's environment describes. The bootstrap timeouts are lowered from
 * 120 s to 20 s so that a stuck bootstrap turns into a reported error before the launcher's
 * --timeout kills the job. */
static aclshmemx_init_attr_t env_attr(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    CHECK(attr.my_pe == g_pe, "set_attr_from_env: my_pe %d, ACLSHMEM_MY_PE %d", attr.my_pe, g_pe);
    CHECK(attr.n_pes == g_npes, "set_attr_from_env: n_pes %d, ACLSHMEM_N_PES %d", attr.n_pes, g_npes);
    CHECK(attr.local_mem_size > 0, "set_attr_from_env: local_mem_size 0");
    CHECK(attr.option_attr.shm_init_timeout == DEFAULT_TIMEOUT &&
              attr.option_attr.control_operation_timeout == DEFAULT_TIMEOUT,
          "set_attr_from_env: timeouts %u/%u, expected the defaults", attr.option_attr.shm_init_timeout,
          attr.option_attr.control_operation_timeout);
    attr.option_attr.shm_init_timeout = 20;
    attr.option_attr.control_operation_timeout = 20;
    return attr;
}

static aclshmemx_init_attr_t init_env(void)
{
    aclshmemx_init_attr_t attr = env_attr();
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    return attr;
}

static void finalize_ok(void)
{
    CHECK_RC(aclshmem_finalize(), 0);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
}

static void ok(void)
{
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
    fflush(stdout);
}

static int in_range(const void *p, const void *base, size_t len)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return base != NULL && a >= b && a < b + len;
}

/* Ring exchange through aclshmem_ptr on a fresh block: every PE writes `tag` into its right
 * neighbour's copy, then checks what its left neighbour wrote. */
static void ring_check(uint64_t tag, const char *where)
{
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    volatile uint64_t *slot = aclshmem_malloc(sizeof(uint64_t));
    CHECK(slot != NULL, "%s: aclshmem_malloc(8) returned NULL", where);
    *slot = 0;
    aclshmem_barrier_all();
    /* a store into the neighbour's mapped copy on this node, a put to another node */
    volatile uint64_t *right = aclshmem_ptr((void *)slot, (me + 1) % n);
    uint64_t value = tag * 1000 + (uint64_t)me;
    if (right != NULL) {
        *right = value;
    } else {
        aclshmem_putmem((void *)slot, &value, sizeof value, (me + 1) % n);
    }
    aclshmem_barrier_all();
    uint64_t want = tag * 1000 + (uint64_t)((me + n - 1) % n);
    CHECK(*slot == want, "%s: slot holds %llu, expected %llu", where, (unsigned long long)*slot,
          (unsigned long long)want);
    aclshmem_free((void *)slot);
}

/* ------------------------------------------------------------------------------------------ */
/* 1. init_finalize                                                                           */
/* ------------------------------------------------------------------------------------------ */
static void scenario_init_finalize(void)
{
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    aclshmemx_init_attr_t attr = init_env();
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    CHECK(aclshmem_my_pe() == g_pe, "my_pe %d != ACLSHMEM_MY_PE %d", aclshmem_my_pe(), g_pe);
    CHECK(aclshmem_n_pes() == g_npes, "n_pes %d != ACLSHMEM_N_PES %d", aclshmem_n_pes(), g_npes);

    /* a repeated init is refused and leaves the instance usable */
    aclshmemx_init_attr_t again = attr;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &again), ACLSHMEM_INNER_ERROR);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    ring_check(1, "after a refused second init");

    /* unknown instance: refused, nothing released */
    CHECK_RC(aclshmemx_finalize(12345), ACLSHMEM_INNER_ERROR);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    ring_check(2, "after aclshmemx_finalize(12345)");

    finalize_ok();

    for (int cycle = 0; cycle < 5; cycle++) {
        aclshmemx_init_attr_t a = env_attr();
        int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a);
        CHECK(rc == 0, "re-init cycle %d returned %d", cycle, rc);
        CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_IS_INITIALIZED, "cycle %d: status %d", cycle,
              aclshmemx_init_status());
        CHECK(aclshmem_my_pe() == g_pe && aclshmem_n_pes() == g_npes, "cycle %d: my_pe %d n_pes %d",
              cycle, aclshmem_my_pe(), aclshmem_n_pes());
        size_t len = 64 * 1024 + (size_t)cycle * 4096;
        unsigned char *p = aclshmem_malloc(len);
        CHECK(p != NULL, "cycle %d: aclshmem_malloc(%zu) returned NULL", cycle, len);
        memset(p, 0x5A + cycle, len);
        aclshmem_barrier_all();
        for (int pe = 0; pe < g_npes; pe++) {
            /* mapped on this node; read back with gets from another node */
            unsigned char *q = aclshmem_ptr(p, pe);
            unsigned char first, last;
            if (q != NULL) {
                first = q[0];
                last = q[len - 1];
            } else {
                aclshmem_getmem(&first, p, 1, pe);
                aclshmem_getmem(&last, p + len - 1, 1, pe);
            }
            CHECK(first == 0x5A + cycle && last == 0x5A + cycle, "cycle %d: PE %d's block holds %#x/%#x", cycle,
                  pe, first, last);
        }
        aclshmem_barrier_all();
        ring_check(10 + (uint64_t)cycle, "re-init cycle");
        aclshmem_free(p);
        if (cycle == 3) {
            CHECK_RC(aclshmemx_finalize(0), 0);
            CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
        } else {
            finalize_ok();
        }
    }
    CHECK_RC(aclshmemx_finalize(12345), ACLSHMEM_INNER_ERROR);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 2. init_status_phases                                                                      */
/* ------------------------------------------------------------------------------------------ */
static volatile unsigned g_seen_status; /* bit s set when status s was observed */
static volatile int g_log_calls;
static volatile int g_bad_status;

static void status_logger(int level, const char *msg)
{
    (void)level;
    (void)msg;
    int s = aclshmemx_init_status();
    g_log_calls++;
    if (s >= 0 && s < 3) {
        g_seen_status |= 1u << s;
    } else {
        g_bad_status = s;
    }
}

static void scenario_init_status_phases(void)
{
    CHECK_RC(aclshmemx_set_extern_logger(status_logger), 0);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    aclshmemx_init_attr_t attr = env_attr();
    g_seen_status = 0;
    g_log_calls = 0;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    unsigned seen = g_seen_status;
    CHECK(g_log_calls > 0, "the extern logger received no message during init");
    CHECK(g_bad_status == 0, "init_status returned %d inside the logger", g_bad_status);
    CHECK(seen & (1u << ACLSHMEM_STATUS_SHM_CREATED),
          "status 1 (SHM_CREATED) never observed during init (seen mask %#x, %d messages)", seen,
          g_log_calls);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    aclshmem_barrier_all();
    finalize_ok();
    CHECK(g_bad_status == 0, "init_status returned %d inside the logger", g_bad_status);
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 3. attr_validation                                                                         */
/* ------------------------------------------------------------------------------------------ */
static void expect_init(const aclshmemx_init_attr_t *attr, aclshmemx_bootstrap_t flags, int expected,
                        const char *what)
{
    aclshmemx_init_attr_t a = *attr;
    double t0 = now_s();
    int rc = aclshmemx_init_attr(flags, &a);
    double dt = now_s() - t0;
    if (rc == 0) {
        aclshmem_finalize();
    }
    CHECK(rc == expected, "init with %s returned %d, expected %d", what, rc, expected);
    CHECK(dt < 10.0, "init with %s took %.1f s", what, dt);
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED, "status %d after init with %s",
          aclshmemx_init_status(), what);
}

/* A TCP port on 127.0.0.1 that nobody listens on (bound and released again). */
static int unused_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "bind: %s", strerror(errno));
    socklen_t len = sizeof sa;
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0, "getsockname: %s", strerror(errno));
    close(fd);
    return ntohs(sa.sin_port);
}

static void scenario_attr_validation(void)
{
    const aclshmemx_init_attr_t base = env_attr();
    aclshmemx_init_attr_t a;

    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, NULL);
    CHECK(rc == ACLSHMEM_INVALID_PARAM, "init(NULL) returned %d", rc);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    a = base; a.my_pe = -1;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "my_pe -1");
    a = base; a.n_pes = 0;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "n_pes 0");
    a = base; a.n_pes = -3;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "n_pes -3");
    a = base; a.n_pes = ACLSHMEM_MAX_PES + 1;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "n_pes 16385");
    a = base; a.my_pe = a.n_pes;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_PARAM, "my_pe == n_pes");
    a = base; a.my_pe = a.n_pes + 7;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_PARAM, "my_pe > n_pes");
    a = base; a.local_mem_size = 0;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "local_mem_size 0");
    a = base; a.local_mem_size = ACLSHMEM_MAX_LOCAL_SIZE + 1;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "local_mem_size 40 GiB + 1");
    a = base; a.local_mem_size = UINT64_MAX;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "local_mem_size UINT64_MAX");
    a = base; a.option_attr.shm_init_timeout = 0;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "shm_init_timeout 0");
    a = base; a.option_attr.control_operation_timeout = 0;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "control_operation_timeout 0");
    a = base; a.option_attr.data_op_engine_type = (data_op_engine_type_t)0;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "data_op_engine_type 0");
    a = base; a.option_attr.data_op_engine_type = (data_op_engine_type_t)0x10;
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_VALUE, "data_op_engine_type 0x10");
    a = base;
    expect_init(&a, 0, ACLSHMEM_INVALID_PARAM, "bootstrap flags 0");
    a = base;
    expect_init(&a, 1U << 5, ACLSHMEM_INVALID_PARAM, "bootstrap flags 1<<5");

    static const char *const bad_urls[] = {
        "",
        "127.0.0.1:9000",
        "tcp://127.0.0.1",
        "tcp://127.0.0.1:1024",
        "tcp://127.0.0.1:70000",
        "tcp://127.0.0.1:",
        "tcp://127.0.0.1:9x00",
        "tcp6://::1:9000",
        "udp://127.0.0.1:9000",
    };
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        char what[128];
        a = base;
        memset(a.ip_port, 0, sizeof a.ip_port);
        snprintf(a.ip_port, sizeof a.ip_port, "%s", bad_urls[i]);
        snprintf(what, sizeof what, "ip_port \"%s\"", bad_urls[i]);
        expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INVALID_PARAM, what);
    }

    /* valid format, nobody listening: PE 1 of a 2-PE job gives up with INNER_ERROR */
    a = base;
    a.my_pe = 1;
    a.n_pes = 2;
    a.option_attr.shm_init_timeout = 2;
    a.option_attr.control_operation_timeout = 2;
    int port = unused_port();
    memset(a.ip_port, 0, sizeof a.ip_port);
    snprintf(a.ip_port, sizeof a.ip_port, "tcp://127.0.0.1:%d", port);
    expect_init(&a, ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEM_INNER_ERROR, "an unreachable config store");

    /* none of that left state behind: a normal init works */
    a = base;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a), 0);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    CHECK(aclshmem_my_pe() == g_pe && aclshmem_n_pes() == g_npes, "my_pe %d n_pes %d after init",
          aclshmem_my_pe(), aclshmem_n_pes());
    ring_check(3, "after the rejected inits");
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 4. heap                                                                                    */
/* ------------------------------------------------------------------------------------------ */
static void scenario_heap(void)
{
    aclshmemx_init_attr_t attr = init_env();
    const size_t lms = (size_t)attr.local_mem_size;
    const size_t heap_size = lms + EXTRA;
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    char *dbase = aclshmemx_get_heap_base(DEVICE_SIDE);
    CHECK(dbase != NULL, "device heap base is NULL after init");

    CHECK(aclshmem_malloc(0) == NULL, "aclshmem_malloc(0) is not NULL");

    /* the whole user share of the heap, then more than the heap */
    char *big = aclshmem_malloc(lms);
    CHECK(big != NULL, "aclshmem_malloc(local_mem_size = %zu) returned NULL", lms);
    CHECK(in_range(big, dbase, heap_size) && in_range(big + lms - 1, dbase, heap_size),
          "block of local_mem_size not inside the heap");
    big[0] = 1;
    big[lms - 1] = 2;
    aclshmem_free(big);
    CHECK(aclshmem_malloc(lms + 7 * MIB) == NULL, "aclshmem_malloc(local_mem_size + 7 MiB) not NULL");
    CHECK(aclshmem_malloc(heap_size + 1) == NULL, "aclshmem_malloc(heap_size + 1) not NULL");
    CHECK(aclshmem_malloc(SIZE_MAX) == NULL, "aclshmem_malloc(SIZE_MAX) not NULL");

    /* free reuse on a clean heap */
    char *r1 = aclshmem_malloc(8192);
    CHECK(r1 != NULL, "aclshmem_malloc(8192) NULL");
    aclshmem_free(r1);
    char *r2 = aclshmem_malloc(8192);
    CHECK(r2 == r1, "malloc after free of the same size: %p, first was %p", (void *)r2, (void *)r1);
    aclshmem_free(r2);

    /* asymmetric request: NULL everywhere, logged with every size */
    void *asym = aclshmem_malloc(12340 + (size_t)me * 16);
    CHECK(n == 1 || asym == NULL, "asymmetric aclshmem_malloc returned %p", asym);
    if (asym != NULL) {
        aclshmem_free(asym);
    }

    /* a normal allocation afterwards works and is symmetric */
    char *p = aclshmem_malloc(4096);
    CHECK(p != NULL, "aclshmem_malloc(4096) after the asymmetric call returned NULL");
    uint64_t *offs = aclshmem_malloc((size_t)n * sizeof(uint64_t));
    CHECK(offs != NULL, "aclshmem_malloc(offsets) NULL");
    uint64_t my_off = (uint64_t)(p - dbase);
    for (int pe = 0; pe < n; pe++) {
        volatile uint64_t *remote = aclshmem_ptr(offs, pe);
        CHECK(remote != NULL, "aclshmem_ptr(offs, %d) NULL", pe);
        remote[me] = my_off;
    }
    aclshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        CHECK(((volatile uint64_t *)offs)[pe] == my_off, "PE %d got offset %#llx, this PE %#llx", pe,
              (unsigned long long)offs[pe], (unsigned long long)my_off);
    }
    aclshmem_barrier_all();

    aclshmem_free(offs);
    aclshmem_free(p);

    /* calloc zeroes a recycled block */
    const size_t zlen = 256 * 1024;
    unsigned char *dirty = aclshmem_malloc(zlen);
    CHECK(dirty != NULL, "aclshmem_malloc(%zu) NULL", zlen);
    memset(dirty, 0xAB, zlen);
    aclshmem_free(dirty);
    unsigned char *clean = aclshmem_calloc(zlen / 64, 64);
    CHECK(clean != NULL, "aclshmem_calloc(%zu, 64) NULL", zlen / 64);
    CHECK(clean == dirty, "calloc of the freed size did not reuse the block (%p vs %p)", (void *)clean,
          (void *)dirty);
    for (size_t i = 0; i < zlen; i++) {
        CHECK(clean[i] == 0, "calloc byte %zu is %#x", i, clean[i]);
    }
    aclshmem_free(clean);
    unsigned char *xclean = aclshmemx_calloc(100, 3, DEVICE_SIDE);
    CHECK(xclean != NULL, "aclshmemx_calloc(100, 3, DEVICE_SIDE) NULL");
    for (size_t i = 0; i < 300; i++) {
        CHECK(xclean[i] == 0, "aclshmemx_calloc byte %zu is %#x", i, xclean[i]);
    }
    aclshmemx_free(xclean, DEVICE_SIDE);
    CHECK(aclshmem_calloc(0, 16) == NULL, "aclshmem_calloc(0, 16) not NULL");
    CHECK(aclshmem_calloc(16, 0) == NULL, "aclshmem_calloc(16, 0) not NULL");
    CHECK(aclshmem_calloc(SIZE_MAX, 2) == NULL, "aclshmem_calloc(SIZE_MAX, 2) not NULL");
    CHECK(aclshmem_calloc(2, SIZE_MAX) == NULL, "aclshmem_calloc(2, SIZE_MAX) not NULL");
    CHECK(aclshmem_calloc((SIZE_MAX >> 4) + 2, 16) == NULL, "aclshmem_calloc wrapping to a small size");

    /* alignment */
    char *pad = aclshmem_malloc(48); /* move the next free block off any large alignment */
    CHECK(pad != NULL, "aclshmem_malloc(48) NULL");
    char *a4k = aclshmem_align(4096, 100);
    CHECK(a4k != NULL && ((uintptr_t)a4k % 4096) == 0, "aclshmem_align(4096) gave %p", (void *)a4k);
    char *a1m = aclshmem_align(1 << 20, 100);
    CHECK(a1m != NULL && ((uintptr_t)a1m % (1 << 20)) == 0, "aclshmem_align(1 MiB) gave %p", (void *)a1m);
    CHECK(in_range(a1m, dbase, heap_size), "aligned block outside the heap");
    CHECK(aclshmem_align(3, 64) == NULL, "aclshmem_align(3, 64) not NULL");
    CHECK(aclshmem_align(0, 64) == NULL, "aclshmem_align(0, 64) not NULL");
    CHECK(aclshmem_align(64, 0) == NULL, "aclshmem_align(64, 0) not NULL");
    a1m[99] = 7;
    a4k[99] = 7;
    aclshmem_free(a1m);
    aclshmem_free(a4k);
    aclshmem_free(pad);

    /* bad frees: logged, nothing freed, heap intact */
    uint64_t *live = aclshmem_malloc(4096);
    CHECK(live != NULL, "aclshmem_malloc(4096) NULL");
    for (int i = 0; i < 512; i++) {
        live[i] = 0x1122334455667788ull + (uint64_t)i;
    }
    aclshmem_free((char *)live + 16); /* interior pointer */
    int on_stack = 0;
    aclshmem_free(&on_stack); /* not in the heap */
    aclshmem_free(NULL);
    uint64_t *other = aclshmem_malloc(4096); /* must not overlap `live` */
    CHECK(other != NULL, "aclshmem_malloc after bad frees NULL");
    CHECK((char *)other >= (char *)live + 4096 || (char *)other + 4096 <= (char *)live,
          "block %p overlaps the live block %p after an interior free", (void *)other, (void *)live);
    memset(other, 0, 4096);
    for (int i = 0; i < 512; i++) {
        CHECK(live[i] == 0x1122334455667788ull + (uint64_t)i, "live block word %d corrupted", i);
    }
    aclshmem_free(other);
    aclshmem_free(live);
    aclshmem_free(live); /* double free */
    uint64_t *x1 = aclshmem_malloc(4096);
    uint64_t *x2 = aclshmem_malloc(4096);
    CHECK(x1 != NULL && x2 != NULL && x1 != x2, "after a double free: two mallocs gave %p and %p",
          (void *)x1, (void *)x2);
    aclshmem_free(x2);
    aclshmem_free(x1);
    big = aclshmem_malloc(lms);
    CHECK(big != NULL, "aclshmem_malloc(local_mem_size) after the bad frees returned NULL");
    aclshmem_free(big);
    ring_check(4, "heap after bad frees");

    /* HOST_SIDE heap */
    CHECK(aclshmemx_get_heap_base(HOST_SIDE) == NULL, "HOST_SIDE heap base not NULL before its first use");
    char *h = aclshmemx_malloc(4096, HOST_SIDE);
    CHECK(h != NULL, "aclshmemx_malloc(4096, HOST_SIDE) NULL");
    char *hbase = aclshmemx_get_heap_base(HOST_SIDE);
    CHECK(hbase != NULL, "HOST_SIDE heap base NULL after an allocation");
    CHECK(hbase != dbase, "HOST_SIDE and DEVICE_SIDE heap bases are equal");
    CHECK(in_range(h, hbase, heap_size) && in_range(h + 4095, hbase, heap_size),
          "HOST_SIDE block %p outside [%p, +%zu)", (void *)h, (void *)hbase, heap_size);
    CHECK(!in_range(h, dbase, heap_size), "HOST_SIDE block lies in the device heap");
    CHECK(!in_range(dbase, hbase, heap_size) && !in_range(hbase, dbase, heap_size),
          "HOST_SIDE and DEVICE_SIDE heaps overlap");
    CHECK(aclshmemx_get_heap_base(DEVICE_SIDE) == dbase, "device heap base changed");
    CHECK(aclshmem_ptr(h, me) == h, "aclshmem_ptr(host block, my_pe) != block");
    memset(h, 0, 4096);
    aclshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        volatile unsigned char *r = aclshmem_ptr(h, pe);
        CHECK(r != NULL, "aclshmem_ptr(host block, %d) NULL", pe);
        CHECK(pe == me || !in_range((const void *)r, hbase, heap_size),
              "aclshmem_ptr(host block, %d) points into this PE's own host heap", pe);
        r[me] = (unsigned char)(0xC0 + me);
    }
    aclshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        CHECK((unsigned char)h[pe] == 0xC0 + pe, "host block byte %d is %#x", pe, (unsigned char)h[pe]);
    }
    aclshmem_barrier_all();
    /* both heaps lie at the same address on every PE (ACLSHMEM_HEAP_SAME_ADDRESS, on by default) */
    const char *same = getenv("ACLSHMEM_HEAP_SAME_ADDRESS");
    uint64_t mine[2] = {(uint64_t)(uintptr_t)dbase, (uint64_t)(uintptr_t)aclshmemx_get_heap_base(HOST_SIDE)};
    uint64_t *all = aclshmem_malloc((size_t)n * sizeof mine);
    CHECK(all != NULL, "aclshmem_malloc(bases) NULL");
    for (int pe = 0; pe < n; pe++) {
        aclshmem_putmem(all + 2 * me, mine, sizeof mine, pe);
    }
    aclshmem_barrier_all();
    for (int pe = 0; pe < n && !(same != NULL && strcmp(same, "0") == 0); pe++) {
        CHECK(all[2 * pe] == mine[0] && all[2 * pe + 1] == mine[1],
              "PE %d maps its heaps at %#llx / %#llx, this PE at %#llx / %#llx", pe,
              (unsigned long long)all[2 * pe], (unsigned long long)all[2 * pe + 1],
              (unsigned long long)mine[0], (unsigned long long)mine[1]);
    }
    aclshmem_barrier_all();
    aclshmem_free(all);
    char *d = aclshmemx_malloc(4096, DEVICE_SIDE);
    CHECK(d != NULL && in_range(d, dbase, heap_size), "aclshmemx_malloc(DEVICE_SIDE) gave %p", (void *)d);
    aclshmemx_free(d, DEVICE_SIDE);
    char *ha = aclshmemx_align(4096, 10, HOST_SIDE);
    CHECK(ha != NULL && (uintptr_t)ha % 4096 == 0 && in_range(ha, hbase, heap_size),
          "aclshmemx_align(4096, 10, HOST_SIDE) gave %p", (void *)ha);
    aclshmemx_free(ha, HOST_SIDE);
    aclshmemx_free(h, HOST_SIDE);
    char *h2 = aclshmemx_malloc(4096, HOST_SIDE);
    CHECK(h2 == h, "HOST_SIDE block not reused after aclshmemx_free (%p vs %p)", (void *)h2, (void *)h);
    aclshmemx_free(h2, HOST_SIDE);
    char *hbig = aclshmemx_malloc(lms, HOST_SIDE);
    CHECK(hbig != NULL, "aclshmemx_malloc(local_mem_size, HOST_SIDE) NULL");
    aclshmemx_free(hbig, HOST_SIDE);
    CHECK(aclshmemx_malloc(4096, (aclshmem_mem_type_t)7) == NULL, "aclshmemx_malloc(4096, 7) not NULL");
    CHECK(aclshmemx_calloc(1, 4096, (aclshmem_mem_type_t)7) == NULL, "aclshmemx_calloc(.., 7) not NULL");
    CHECK(aclshmemx_align(64, 4096, (aclshmem_mem_type_t)7) == NULL, "aclshmemx_align(.., 7) not NULL");
    CHECK(aclshmemx_get_heap_base((aclshmem_mem_type_t)7) == NULL, "aclshmemx_get_heap_base(7) not NULL");

    ring_check(5, "end of heap");
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 5. ptr                                                                                     */
/* ------------------------------------------------------------------------------------------ */
static void scenario_ptr(void)
{
    aclshmemx_init_attr_t attr = init_env();
    const size_t heap_size = (size_t)attr.local_mem_size + EXTRA;
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    char *dbase = aclshmemx_get_heap_base(DEVICE_SIDE);
    CHECK(dbase != NULL, "device heap base NULL");

    volatile uint64_t *slots = aclshmem_malloc((size_t)n * sizeof(uint64_t));
    CHECK(slots != NULL, "aclshmem_malloc(slots) NULL");
    CHECK(aclshmem_ptr((void *)slots, me) == (void *)slots, "aclshmem_ptr(p, my_pe) != p");
    for (int pe = 0; pe < n; pe++) {
        char *a = aclshmem_ptr((char *)slots, pe);
        char *b = aclshmem_ptr((char *)slots + 1, pe);
        CHECK(a != NULL && b != NULL, "aclshmem_ptr(.., %d) NULL", pe);
        CHECK(b - a == 1, "aclshmem_ptr(p+1, %d) - aclshmem_ptr(p, %d) == %td", pe, pe, b - a);
        CHECK(pe == me || a != (char *)slots, "aclshmem_ptr(p, %d) == p on PE %d", pe, me);
        char *last = aclshmem_ptr(dbase + heap_size - 1, pe);
        CHECK(last != NULL, "aclshmem_ptr(last heap byte, %d) NULL", pe);
        CHECK(last - a == (dbase + heap_size - 1) - (char *)slots,
              "offsets not preserved by aclshmem_ptr for PE %d", pe);
    }
    for (int i = 0; i < n; i++) {
        slots[i] = 0;
    }
    aclshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        volatile uint64_t *r = aclshmem_ptr((void *)slots, pe);
        r[me] = ((uint64_t)me << 32) | (uint64_t)(pe + 1);
    }
    aclshmem_barrier_all();
    for (int i = 0; i < n; i++) {
        uint64_t want = ((uint64_t)i << 32) | (uint64_t)(me + 1);
        CHECK(slots[i] == want, "slot %d holds %#llx, expected %#llx", i, (unsigned long long)slots[i],
              (unsigned long long)want);
    }
    aclshmem_barrier_all();

    int on_stack = 0;
    CHECK(aclshmem_ptr((void *)slots, -1) == NULL, "aclshmem_ptr(p, -1) not NULL");
    CHECK(aclshmem_ptr((void *)slots, n) == NULL, "aclshmem_ptr(p, n_pes) not NULL");
    CHECK(aclshmem_ptr((void *)slots, ACLSHMEM_MAX_PES) == NULL, "aclshmem_ptr(p, MAX_PES) not NULL");
    CHECK(aclshmem_ptr(&on_stack, 0) == NULL, "aclshmem_ptr(stack pointer, 0) not NULL");
    CHECK(aclshmem_ptr(NULL, 0) == NULL, "aclshmem_ptr(NULL, 0) not NULL");
    CHECK(aclshmem_ptr(dbase + heap_size, 0) == NULL, "aclshmem_ptr(heap end, 0) not NULL");
    CHECK(aclshmem_ptr(dbase - 1, 0) == NULL, "aclshmem_ptr(heap base - 1, 0) not NULL");
    CHECK(aclshmem_ptr(dbase, me) == dbase, "aclshmem_ptr(heap base, my_pe) != heap base");

    aclshmem_free((void *)slots);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* reserved: the library's region at the start of the device heap is not a user block          */
/* ------------------------------------------------------------------------------------------ */
static void scenario_reserved(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    const int right = (me + 1) % n;
    unsigned char *dbase = aclshmemx_get_heap_base(DEVICE_SIDE);
    CHECK(dbase != NULL, "device heap base NULL");
    /* frees of the region: refused (logged), nothing freed */
    aclshmem_free(dbase);
    aclshmem_free(dbase + 512);
    aclshmemx_free(dbase + 512, DEVICE_SIDE);
    /* data operations aimed at it: refused, nothing written anywhere */
    uint64_t v = 0xdeadbeefcafef00dull;
    aclshmem_putmem(dbase + 512, &v, sizeof v, right);
    aclshmem_uint64_p((uint64_t *)(void *)(dbase + 512), v, right);
    aclshmem_int64_atomic_set((int64_t *)(void *)(dbase + 512), 7, right);
    CHECK(aclshmem_int64_atomic_fetch_add((int64_t *)(void *)(dbase + 512), 1, right) == 0,
          "atomic on the reserved region returned a value");
    aclshmemx_signal_op_on_stream((int32_t *)(void *)dbase, 1, ACLSHMEM_SIGNAL_SET, right, NULL);
    aclshmemx_putmem_signal(dbase + 512, &v, sizeof v, dbase, 1, ACLSHMEM_SIGNAL_SET, right);
    CHECK(aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, (int64_t *)(void *)(dbase + 512),
                                    (int64_t *)(void *)(dbase + 512), 1) == ACLSHMEM_INVALID_PARAM,
          "a reduction into the reserved region was accepted");
    uint64_t got = 1;
    aclshmem_getmem(&got, dbase + 512, sizeof got, right);
    CHECK(got == 1, "a get from the reserved region wrote the destination");

    /* barriers still work (they would hang if the sync pool had been overwritten or handed out) */
    for (int i = 0; i < 100; i++) {
        aclshmem_barrier_all();
    }
    /* the next allocations come after the region */
    size_t reserved = 512 + (size_t)ACLSHMEM_MAX_TEAMS * 64 * 5 * 8 + (size_t)ACLSHMEM_MAX_TEAMS * 64;
    unsigned char *p = aclshmem_malloc(64);
    CHECK(p != NULL, "aclshmem_malloc(64) NULL");
    CHECK(p >= dbase + reserved, "aclshmem_malloc handed out %p inside the reserved region [%p, +%zu)", (void *)p,
          (void *)dbase, reserved);
    CHECK(aclshmem_ptr(dbase, me) == dbase, "aclshmem_ptr(heap base, my_pe) != heap base");
    /* a user block freed as the other heap's: refused with that reason, the block stays live */
    aclshmemx_free(p, HOST_SIDE);
    unsigned char *q = aclshmem_malloc(64);
    CHECK(q != NULL && q != p, "the block freed with the wrong mem_type was handed out again (%p)", (void *)q);
    aclshmem_free(q);
    aclshmem_free(p);
    aclshmem_barrier_all();
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* stalls: the last PE arrives late (run with ACLSHMEM_STALL_WARNING / ACLSHMEM_COLLECTIVE_TIMEOUT) */
/* ------------------------------------------------------------------------------------------ */
static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ACLSHMEM_STALL_WARNING=1: the others warn (naming the late PE) and then complete the barrier. */
static void scenario_stall_warning(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    aclshmem_barrier_all();
    if (me == n - 1) {
        sleep_s(2.5);
    }
    aclshmem_barrier_all();
    aclshmem_barrier_all();
    finalize_ok();
    ok();
}

/* ACLSHMEM_COLLECTIVE_TIMEOUT=1: a split over the world fails with ACLSHMEM_TIMEOUT_ERROR on the
 * PEs that waited, within a few seconds, instead of hanging; the late PE fails too (its partners
 * left); finalize still works. */
static void scenario_stall_timeout(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    aclshmem_barrier_all();
    if (me == n - 1) {
        sleep_s(3.0);
    }
    double t0 = now_s();
    aclshmem_team_t t = 4242;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_TIMEOUT_ERROR);
    double took = now_s() - t0;
    CHECK(t == ACLSHMEM_TEAM_INVALID, "timed-out split left *new_team = %d", t);
    CHECK(took < 2.9, "the timed-out split took %.2f s with a 1 s limit", took);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* threads: one-sided calls from 4 threads of every PE at once (the header's thread-safety note) */
/* ------------------------------------------------------------------------------------------ */
#define TH_N 4
#define TH_ROUNDS 2000
#define TH_WORDS 64

static uint64_t *g_th_data;    /* [TH_N][TH_WORDS] per PE: thread t of the left PE writes row t */
static int64_t *g_th_counter;  /* on every PE: incremented by every thread of every PE */
static uint64_t *g_th_got;     /* [TH_N][TH_WORDS] local: what thread t read back */

static void *thread_body(void *arg)
{
    const int t = (int)(intptr_t)arg;
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    const int right = (me + 1) % n;
    for (int r = 0; r < TH_ROUNDS; r++) {
        uint64_t v[TH_WORDS];
        for (int i = 0; i < TH_WORDS; i++) {
            v[i] = ((uint64_t)me << 48) | ((uint64_t)t << 40) | ((uint64_t)r << 8) | (uint64_t)i;
        }
        aclshmem_putmem(&g_th_data[t * TH_WORDS], v, sizeof v, right);
        aclshmem_getmem(&g_th_got[t * TH_WORDS], &g_th_data[t * TH_WORDS], sizeof v, right);
        for (int i = 0; i < TH_WORDS; i++) {
            if (g_th_got[t * TH_WORDS + i] != v[i]) {
                printf("FAIL: %s: thread %d round %d word %d read back %#llx (pe %d)\n", g_scenario, t, r, i,
                       (unsigned long long)g_th_got[t * TH_WORDS + i], me);
                exit(1);
            }
        }
        for (int pe = 0; pe < n; pe++) {
            aclshmem_int64_atomic_add(g_th_counter, 1, pe);
        }
        if (r % 100 == 0) {
            aclshmem_quiet();
            aclshmem_fence();
        }
    }
    return NULL;
}

static void scenario_threads(void)
{
    init_env();
    const int n = aclshmem_n_pes();
    g_th_data = aclshmem_calloc(TH_N * TH_WORDS, sizeof(uint64_t));
    g_th_counter = aclshmem_calloc(1, sizeof(int64_t));
    CHECK(g_th_data != NULL && g_th_counter != NULL, "allocation failed");
    g_th_got = calloc(TH_N * TH_WORDS, sizeof(uint64_t));
    aclshmem_barrier_all();
    pthread_t th[TH_N];
    for (int t = 0; t < TH_N; t++) {
        CHECK(pthread_create(&th[t], NULL, thread_body, (void *)(intptr_t)t) == 0, "pthread_create");
    }
    for (int t = 0; t < TH_N; t++) {
        pthread_join(th[t], NULL);
    }
    aclshmem_barrier_all();
    int64_t want = (int64_t)n * TH_N * TH_ROUNDS;
    CHECK(*(volatile int64_t *)g_th_counter == want, "counter %lld, expected %lld (lost atomic updates)",
          (long long)*(volatile int64_t *)g_th_counter, (long long)want);
    aclshmem_free(g_th_counter);
    aclshmem_free(g_th_data);
    free(g_th_got);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* finalize_race: finalize while other threads keep calling (a program error, spec 11.2): no   */
/* crash -- finalize waits for the calls in progress, later calls fail as before init          */
/* ------------------------------------------------------------------------------------------ */
static volatile int g_race_stop;
static int64_t *g_race_buf;

static void *race_body(void *arg)
{
    const int t = (int)(intptr_t)arg;
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int64_t v[8] = {0}, got[8];
    long calls = 0;
    while (!g_race_stop) {
        int pe = (me + t) % n;
        v[0] = calls;
        aclshmem_putmem(&g_race_buf[t * 8], v, sizeof v, pe);
        aclshmem_getmem(got, &g_race_buf[t * 8], sizeof got, pe);
        (void)aclshmem_int64_atomic_fetch_add(&g_race_buf[64 + t], 1, pe);
        (void)aclshmem_ptr(g_race_buf, pe);
        (void)aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD);
        calls++;
    }
    return (void *)calls;
}

static void scenario_finalize_race(void)
{
    init_env();
    g_race_buf = aclshmem_calloc(128, sizeof(int64_t));
    CHECK(g_race_buf != NULL, "allocation failed");
    aclshmem_barrier_all();
    pthread_t th[TH_N];
    for (int t = 0; t < TH_N; t++) {
        CHECK(pthread_create(&th[t], NULL, race_body, (void *)(intptr_t)t) == 0, "pthread_create");
    }
    sleep_s(0.2);
    int rc = aclshmem_finalize();
    g_race_stop = 1;
    long total = 0;
    for (int t = 0; t < TH_N; t++) {
        void *calls = NULL;
        pthread_join(th[t], &calls);
        total += (long)calls;
    }
    CHECK_RC(rc, 0);
    CHECK(total > 0, "the threads made no call");
    /* the library is usable again */
    init_env();
    aclshmem_barrier_all();
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 6. barrier                                                                                 */
/* ------------------------------------------------------------------------------------------ */
static void scenario_barrier(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    volatile uint64_t *slot = aclshmem_calloc(1, sizeof(uint64_t));
    CHECK(slot != NULL, "aclshmem_calloc(1, 8) NULL");
    /* the right neighbour's slot: a store when it is on this node, else a put (other nodes) */
    volatile uint64_t *right = aclshmem_ptr((void *)slot, (me + 1) % n);
    /* PE_TESTS_ROUNDS: more rounds for a job that must still run when a test kills a node */
    const char *rounds_env = getenv("PE_TESTS_ROUNDS");
    const uint64_t rounds = rounds_env != NULL ? strtoull(rounds_env, NULL, 10) : 2000;
    aclshmem_barrier_all();
    for (uint64_t round = 1; round <= rounds; round++) {
        if (right != NULL) {
            *right = round;
        } else {
            aclshmem_putmem((void *)slot, &round, sizeof round, (me + 1) % n);
        }
        if (round % 2) {
            aclshmem_barrier_all();
        } else {
            aclshmem_sync_all();
        }
        uint64_t got = *slot;
        CHECK(got == round, "round %llu: slot written by the left neighbour holds %llu",
              (unsigned long long)round, (unsigned long long)got);
        if (round % 2) {
            aclshmem_sync_all();
        } else {
            aclshmem_barrier_all();
        }
    }
    aclshmem_free((void *)slot);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 7. before_after                                                                            */
/* ------------------------------------------------------------------------------------------ */
static void check_uninitialised_heap_calls(const char *when, void *stale)
{
    int on_stack = 0;
    CHECK(aclshmem_malloc(64) == NULL, "%s: aclshmem_malloc not NULL", when);
    CHECK(aclshmem_calloc(4, 16) == NULL, "%s: aclshmem_calloc not NULL", when);
    CHECK(aclshmem_align(64, 64) == NULL, "%s: aclshmem_align not NULL", when);
    CHECK(aclshmemx_malloc(64, DEVICE_SIDE) == NULL, "%s: aclshmemx_malloc(DEVICE_SIDE) not NULL", when);
    CHECK(aclshmemx_malloc(64, HOST_SIDE) == NULL, "%s: aclshmemx_malloc(HOST_SIDE) not NULL", when);
    CHECK(aclshmemx_calloc(4, 16, DEVICE_SIDE) == NULL, "%s: aclshmemx_calloc not NULL", when);
    CHECK(aclshmemx_align(64, 64, HOST_SIDE) == NULL, "%s: aclshmemx_align not NULL", when);
    aclshmem_free(&on_stack);
    aclshmem_free(NULL);
    aclshmemx_free(&on_stack, DEVICE_SIDE);
    aclshmemx_free(&on_stack, HOST_SIDE);
    aclshmemx_free(NULL, HOST_SIDE);
    CHECK(aclshmemx_get_heap_base(DEVICE_SIDE) == NULL, "%s: device heap base not NULL", when);
    CHECK(aclshmemx_get_heap_base(HOST_SIDE) == NULL, "%s: host heap base not NULL", when);
    CHECK(aclshmem_ptr(&on_stack, 0) == NULL, "%s: aclshmem_ptr(stack, 0) not NULL", when);
    if (stale != NULL) {
        CHECK(aclshmem_ptr(stale, 0) == NULL, "%s: aclshmem_ptr(stale heap pointer, 0) not NULL", when);
        aclshmem_free(stale);
    }
    aclshmem_barrier_all();
    aclshmem_sync_all();
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED, "%s: init_status %d", when,
          aclshmemx_init_status());
}

static void scenario_before_after(void)
{
    check_uninitialised_heap_calls("before init", NULL);
    CHECK(aclshmem_my_pe() == -1, "before init: my_pe %d", aclshmem_my_pe());
    CHECK(aclshmem_n_pes() == -1, "before init: n_pes %d", aclshmem_n_pes());
    CHECK_RC(aclshmem_finalize(), 0);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    int major = -7, minor = -7;
    aclshmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor == 1, "version %d.%d", major, minor);
    major = -7;
    aclshmem_info_get_version(&major, NULL);
    aclshmem_info_get_version(NULL, &minor);
    aclshmem_info_get_version(NULL, NULL);
    CHECK(major == -7, "aclshmem_info_get_version(&major, NULL) wrote major");
    char name[ACLSHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof name);
    aclshmem_info_get_name(name);
    CHECK(memchr(name, '\0', sizeof name) != NULL, "name not NUL-terminated");
    CHECK(strcmp(name, "ACLSHMEM v1.1.1") == 0, "name \"%s\"", name);
    aclshmem_info_get_name(NULL);

    aclshmem_instance_ctx *ctx = aclshmemx_instance_ctx_get();
    CHECK(ctx != NULL, "aclshmemx_instance_ctx_get() NULL before init");
    CHECK(ctx->id == 0, "instance ctx id %llu before init", (unsigned long long)ctx->id);
    CHECK_RC(aclshmemx_instance_ctx_set(0), 0);
    CHECK_RC(aclshmemx_instance_ctx_set(5), ACLSHMEM_INNER_ERROR);
    CHECK(aclshmemx_instance_ctx_get() != NULL && aclshmemx_instance_ctx_get()->id == 0,
          "current instance changed by a refused aclshmemx_instance_ctx_set(5)");
    CHECK_RC(aclshmemx_set_log_level(3), 0);
    CHECK_RC(aclshmemx_set_log_level(9), ACLSHMEM_INVALID_VALUE);
    CHECK_RC(aclshmemx_set_log_level(-1), ACLSHMEM_INVALID_VALUE);
    CHECK_RC(aclshmemx_set_log_level(3), 0);

    init_env();
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    ctx = aclshmemx_instance_ctx_get();
    CHECK(ctx != NULL && ctx->id == 0, "instance ctx after init");
    char *p = aclshmem_malloc(256);
    CHECK(p != NULL, "aclshmem_malloc(256) NULL");
    char *h = aclshmemx_malloc(256, HOST_SIDE);
    CHECK(h != NULL, "aclshmemx_malloc(256, HOST_SIDE) NULL");
    CHECK(aclshmem_ptr(p, 0) != NULL, "aclshmem_ptr(p, 0) NULL while initialised");
    ring_check(6, "before_after");
    finalize_ok();

    check_uninitialised_heap_calls("after finalize", p);
    CHECK(aclshmem_ptr(h, 0) == NULL, "after finalize: aclshmem_ptr(stale host pointer, 0) not NULL");
    CHECK(aclshmem_my_pe() == g_pe, "after finalize: my_pe %d, expected the last value %d", aclshmem_my_pe(),
          g_pe);
    CHECK(aclshmem_n_pes() == g_npes, "after finalize: n_pes %d, expected the last value %d", aclshmem_n_pes(),
          g_npes);
    CHECK_RC(aclshmem_finalize(), 0);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    ctx = aclshmemx_instance_ctx_get();
    CHECK(ctx != NULL && ctx->id == 0, "instance ctx after finalize");
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 8. scale                                                                                   */
/* ------------------------------------------------------------------------------------------ */
static void scenario_scale(void)
{
    init_env();
    for (int i = 0; i < 50; i++) {
        aclshmem_barrier_all();
    }
    ring_check(7, "scale");
    void *p = aclshmem_malloc(MIB);
    CHECK(p != NULL, "aclshmem_malloc(1 MiB) NULL");
    aclshmem_free(p);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 9. stray                                                                                   */
/* ------------------------------------------------------------------------------------------ */
static int store_port(void)
{
    const char *url = getenv("ACLSHMEM_IP_PORT");
    CHECK(url != NULL, "ACLSHMEM_IP_PORT not set");
    const char *prefix = "tcp://127.0.0.1:";
    CHECK(strncmp(url, prefix, strlen(prefix)) == 0, "unexpected ACLSHMEM_IP_PORT \"%s\"", url);
    int port = atoi(url + strlen(prefix));
    CHECK(port > 0 && port < 65536, "bad port in \"%s\"", url);
    return port;
}

static int store_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect to the store: %s", strerror(errno));
    struct timeval tv = {15, 0};
    CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0, "SO_RCVTIMEO: %s", strerror(errno));
    return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
    const char *b = buf;
    while (len > 0) {
        ssize_t k = send(fd, b, len, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        CHECK(k > 0, "send to the store: %s", strerror(errno));
        b += k;
        len -= (size_t)k;
    }
}

/* Reads until the store closes the connection; fails if it is still open after 15 s. */
static void expect_closed(int fd, const char *what)
{
    char buf[4096];
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k == 0) {
            break;
        }
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            CHECK(errno == ECONNRESET, "%s: the store kept the connection open (%s)", what, strerror(errno));
            break;
        }
    }
    close(fd);
}

static void put_u32(unsigned char **p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        *(*p)++ = (unsigned char)(v >> (8 * i));
    }
}

static void scenario_stray(void)
{
    init_env();
    const int n = aclshmem_n_pes();
    if (aclshmem_my_pe() == 0) {
        int port = store_port();

        /* (a) 64 bytes of garbage: an HTTP request, whose first bytes read as a huge length */
        char garbage[64];
        memset(garbage, ' ', sizeof garbage);
        memcpy(garbage, "GET / HTTP/1.1\r\nHost: localhost\r\n", 33);
        int fd = store_connect(port);
        send_all(fd, garbage, sizeof garbage);
        expect_closed(fd, "garbage");

        /* (a') 64 bytes with a plausible length and an unknown frame kind */
        unsigned char junk[64];
        unsigned char *w = junk;
        put_u32(&w, 60);
        *w++ = 0xEE;
        for (unsigned i = 5; i < sizeof junk; i++) {
            junk[i] = (unsigned char)(i * 37u + 11u);
        }
        fd = store_connect(port);
        send_all(fd, junk, sizeof junk);
        expect_closed(fd, "unknown frame kind");

        /* (b) a well-formed hello with a wrong token, claiming to be PE 1 */
        const char *token = "0123456789abcdef0123456789abcdef";
        const char *real = getenv("ACLSHMEM_JOB_TOKEN");
        if (real != NULL && strcmp(real, token) == 0) {
            token = "fedcba9876543210fedcba9876543210";
        }
        unsigned char hello[128];
        uint32_t tlen = (uint32_t)strlen(token);
        w = hello + 4;
        *w++ = 1;        /* kind: hello */
        put_u32(&w, 1);  /* version */
        put_u32(&w, tlen);
        memcpy(w, token, tlen);
        w += tlen;
        put_u32(&w, n > 1 ? 1 : 0); /* pe */
        put_u32(&w, (uint32_t)n);   /* n_pes */
        uint32_t body = (uint32_t)(w - hello - 4);
        unsigned char *lw = hello;
        put_u32(&lw, body);
        fd = store_connect(port);
        send_all(fd, hello, (size_t)(w - hello));
        expect_closed(fd, "wrong token");

        /* (c) connect, say nothing, close */
        fd = store_connect(port);
        close(fd);
    }
    for (int i = 0; i < 20; i++) {
        aclshmem_barrier_all();
    }
    ring_check(8, "after stray connections");
    void *p = aclshmem_malloc(MIB);
    CHECK(p != NULL, "aclshmem_malloc after stray connections NULL");
    aclshmem_free(p);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* wait_long: PE 1 arrives at a barrier a second late, after a put; the others wait for it     */
/* (run with ACLSHMEM_COLLECTIVE_TIMEOUT=0, which means no limit: every barrier failed at once) */
/* ------------------------------------------------------------------------------------------ */
static void scenario_wait_long(void)
{
    init_env();
    int32_t *x = aclshmem_malloc(sizeof(int32_t));
    CHECK(x != NULL, "malloc");
    *x = 0;
    aclshmem_barrier_all();
    if (g_pe == 1) {
        sleep(1);
        aclshmem_int32_p(x, 42, 0);
    }
    aclshmem_barrier_all();
    if (g_pe == 0) {
        CHECK(*x == 42, "after the barrier: %d, expected 42 (the barrier did not wait)", *x);
    }
    aclshmem_barrier_all();
    aclshmem_free(x);
    CHECK(aclshmem_finalize() == 0, "finalize");
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 10. hang                                                                                   */
/* ------------------------------------------------------------------------------------------ */
static void scenario_hang(void)
{
    const char *dir = getenv("PE_TESTS_PID_DIR");
    if (dir != NULL) {
        char path[4096], tmp[4096];
        snprintf(path, sizeof path, "%s/pid.%d", dir, g_pe);
        snprintf(tmp, sizeof tmp, "%s/.pid.%d.tmp", dir, g_pe);
        FILE *f = fopen(tmp, "w");
        CHECK(f != NULL, "cannot write %s", tmp);
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        CHECK(rename(tmp, path) == 0, "rename %s: %s", tmp, strerror(errno));
    }
    init_env();
    aclshmem_barrier_all();
    if (g_pe == 0) {
        const char *job = getenv("ACLSHMEM_JOB_ID");
        printf("JOB_ID %s\n", job != NULL ? job : "?");
        fflush(stdout);
    }
    aclshmem_barrier_all();
    sleep(60);
    finalize_ok();
    ok();
}

/* get_loop: PE 0 gets from the last PE in a loop and prints how long each slow call took (a test
   takes the last PE's node away meanwhile: past ACLSHMEM_UCX_TIMEOUT the job ends, so no slow
   call returns); the last PE waits for a word never set. */
static void scenario_get_loop(void)
{
    init_env();
    const int me = aclshmem_my_pe(), last = aclshmem_n_pes() - 1;
    char *buf = aclshmem_calloc(1, 4096);
    int32_t *never = aclshmem_calloc(1, sizeof(int32_t));
    char local[4096];
    aclshmem_barrier_all();
    if (me == 0) {
        const char *job = getenv("ACLSHMEM_JOB_ID");
        printf("JOB_ID %s\n", job != NULL ? job : "?");
        fflush(stdout);
    }
    if (me == last) {
        aclshmem_int32_wait_until(never, ACLSHMEM_CMP_EQ, 1);
    } else if (me == 0) {
        int slow = 0;
        for (long i = 0; slow < 3; i++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            if (getenv("PE_LOOP_PUT") != NULL) {
                aclshmem_putmem(buf, local, sizeof local, last); /* blocking: delivered at return */
            } else {
                aclshmem_getmem(local, buf, sizeof local, last);
            }
            clock_gettime(CLOCK_MONOTONIC, &b);
            double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
            if (dt > 1.0 || slow > 0) {
                slow++;
                printf("SLOW_GET %d took %.1f s\n", slow, dt);
                fflush(stdout);
            }
            usleep(1000);
        }
        printf("GET_LOOP_DONE\n");
        fflush(stdout);
    }
    sleep(600);
}

/* ------------------------------------------------------------------------------------------ */
/* 11. quiet_waits: every PE streams puts to its right neighbour, completes them with quiet,    */
/* gets a little back, then signals it and waits for its left neighbour's signal, round after   */
/* round until killed (a test takes a node away meanwhile). With PE_TESTS_REMOTE_PEERS=1 (one  */
/* PE per node) every other PE is on another node: aclshmem_ptr must be NULL for each.          */
/* ------------------------------------------------------------------------------------------ */
static void scenario_quiet_waits(void)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    const size_t len = 64 * 1024;
    uint64_t *flag = aclshmem_calloc(1, sizeof(uint64_t));
    char *buf = aclshmem_malloc(len);
    char *local = malloc(len);
    CHECK(flag != NULL && buf != NULL && local != NULL, "allocation failed");
    memset(local, me, len);
    const char *remote = getenv("PE_TESTS_REMOTE_PEERS");
    if (remote != NULL && strcmp(remote, "1") == 0) {
        for (int pe = 0; pe < n; pe++) {
            CHECK(pe == me || aclshmem_ptr(flag, pe) == NULL, "aclshmem_ptr(flag, %d) is not NULL", pe);
        }
    }
    aclshmem_barrier_all();
    if (me == 0) {
        printf("JOB_ID %s\n", getenv("ACLSHMEM_JOB_ID") != NULL ? getenv("ACLSHMEM_JOB_ID") : "?");
        fflush(stdout);
    }
    const int right = (me + 1) % n;
    int64_t small[8];
    for (uint64_t round = 1; round <= 1000000; round++) {
        aclshmem_putmem_nbi(buf, local, len, right);
        aclshmem_quiet();
        /* small gets (gathered into requests over UCX): _nbi ones completed by quiet, a strided one */
        for (int k = 0; k < 4; k++) {
            aclshmem_getmem_nbi(&small[k], buf + 8 * k, 8, right);
        }
        aclshmem_quiet();
        aclshmem_int64_iget(small + 4, (int64_t *)buf, 1, 2, 4, right);
        aclshmem_uint64_p(flag, round, right);
        aclshmem_quiet();
        aclshmem_uint64_wait_until(flag, ACLSHMEM_CMP_GE, round);
    }
    free(local);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 12. open_files: with every peer through UCX (the test sets ACLSHMEM_TRANSPORT=ucx), a soft    */
/* open-file limit too low for an endpoint to each peer is raised at init, within the hard      */
/* limit: at least 2 descriptors per peer plus 256.                                              */
static void scenario_open_files(void)
{
    struct rlimit lim;
    CHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0, "getrlimit: %s", strerror(errno));
    CHECK(lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= 1024, "hard open-file limit %llu is too low for this test",
          (unsigned long long)lim.rlim_max);
    lim.rlim_cur = 64;
    CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0, "setrlimit: %s", strerror(errno));
    init_env();
    struct rlimit after;
    CHECK(getrlimit(RLIMIT_NOFILE, &after) == 0, "getrlimit: %s", strerror(errno));
    /* what the library reserves: UCX two per peer, PE 0's config store two per PE and 4; plus
     * 256 spare (nothing reserved: the limit stays) */
    const char *transport = getenv("ACLSHMEM_TRANSPORT");
    rlim_t need = (transport != NULL && strcmp(transport, "ucx") == 0 ? 2 * (rlim_t)(g_npes - 1) : 0) +
                  (g_pe == 0 ? 2 * (rlim_t)g_npes + 4 : 0);
    rlim_t want = need > 0 ? need + 256 : 64;
    CHECK(after.rlim_cur >= want, "soft open-file limit %llu after init, want at least %llu",
          (unsigned long long)after.rlim_cur, (unsigned long long)want);
    CHECK(after.rlim_max == lim.rlim_max, "the hard limit changed");
    aclshmem_barrier_all();
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* closed_std: a program that closed its standard streams before init (a daemon, `prog >&-`)    */
/* keeps writing to them: the library's descriptors never take numbers 0-2 (a config store      */
/* socket took 1, the program's printf went into it and the job died of SIGPIPE); the closed    */
/* ones are /dev/null after init. The streams are restored after finalize to report.            */
static void scenario_closed_std(void)
{
    int saved_out = dup(1), saved_err = dup(2);
    CHECK(saved_out > 2 && saved_err > 2, "dup of the standard streams");
    close(0);
    close(1);
    close(2);
    init_env();
    char links[3][256];
    for (int fd = 0; fd < 3; fd++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, links[fd], sizeof links[fd] - 1);
        links[fd][n > 0 ? n : 0] = '\0';
    }
    for (int i = 0; i < 300; i++) {
        printf("a line of the program's own output, number %d, to a stream it closed\n", i);
        fprintf(stderr, "and one to its closed stderr, number %d\n", i);
    }
    fflush(stdout);
    for (int i = 0; i < 20; i++) {
        aclshmem_barrier_all();
    }
    int rc = aclshmem_finalize();
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    clearerr(stdout);
    clearerr(stderr);
    CHECK_RC(rc, 0);
    for (int fd = 0; fd < 3; fd++) {
        CHECK(strcmp(links[fd], "/dev/null") == 0, "descriptor %d after init is %s, not /dev/null", fd, links[fd]);
    }
    ok();
}

/* ------------------------------------------------------------------------------------------ */
/* 13. no_finalize: a program that returns from main with status 0 without aclshmem_finalize is  */
/* finalized at exit, once the others are done too. PE 0 (which runs the config store) returns  */
/* right after a barrier; the others read its memory for 300 ms, then return: every PE ends with */
/* status 0 (the first PE out used to end the others as a lost PE, status 1).                    */
static void scenario_no_finalize(void)
{
    init_env();
    int64_t *w = aclshmem_malloc(sizeof(int64_t));
    CHECK(w != NULL, "aclshmem_malloc returned NULL");
    *w = 1000 + g_pe;
    aclshmem_barrier_all();
    if (g_pe == 0) {
        ok();
        return;
    }
    double until = now_s() + 0.3;
    while (now_s() < until) {
        int64_t v = aclshmem_int64_g(w, 0);
        CHECK(v == 1000, "g from PE 0 after it returned from main: %lld", (long long)v);
    }
}

/* leave_barrier / leave_reduce: the last PE returns from main (status 0, no finalize) after a
   barrier, while the others make one more barrier (or reduction), which cannot complete without
   it: it fails on every one of them within seconds, on every node (across nodes the PEs of the
   other nodes waited for ever for the leaver's node leader), and the job then finalizes with
   status 0. */
static void leave_early(int reduce)
{
    init_env();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int32_t *src = aclshmem_calloc(4, sizeof(int32_t));
    int32_t *dst = aclshmem_calloc(4, sizeof(int32_t));
    aclshmem_barrier_all();
    if (me == n - 1) {
        return;
    }
    double t0 = now_s();
    if (reduce) {
        CHECK(aclshmem_int32_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, 4) != 0,
              "a reduction without the PE that left succeeded");
    } else {
        aclshmem_barrier_all();
    }
    CHECK(now_s() - t0 < 15.0, "the call waited %.1f s for the PE that left", now_s() - t0);
    finalize_ok();
    ok();
}
static void scenario_leave_barrier(void) { leave_early(0); }
static void scenario_leave_reduce(void) { leave_early(1); }

/* 14. no_finalize_stuck: PE 1 returns from main while PE 0 is busy outside the library for    */
/* longer than the bootstrap's operation timeout (3 s here): PE 1's finalize at exit fails, and  */
/* it ends the job (status 1, with a message) instead of leaving quietly while PE 0 would go on  */
/* to wait for it for ever. PE 0 prints a FAIL line if it is still running after 15 s.          */
static void scenario_no_finalize_stuck(void)
{
    aclshmemx_init_attr_t attr = env_attr();
    attr.option_attr.control_operation_timeout = 3;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    aclshmem_barrier_all();
    if (g_pe != 0) {
        return;
    }
    sleep(15);
    printf("FAIL: [PE 0] still running 15 s after the others' finalize at exit failed\n");
    fflush(stdout);
    exit(1);
}

/* alloc_crossed: PE 0 allocates while the others wait in a barrier, then the reverse (a program
 * error). The allocation agrees through the bootstrap: PE 0 finds a PE in the barrier and gives
 * the step up at once (not after the operation timeout, 5 s here), and the others' allocations,
 * made later, fail at once too (that bootstrap step failed), instead of completing it with PE 0's
 * stale part and leaving them with a block PE 0 lacks. The heaps stay symmetric: a well-formed
 * allocation afterwards holds what the left neighbour put into it. */
static void scenario_alloc_crossed(void)
{
    aclshmemx_init_attr_t attr = env_attr();
    attr.option_attr.control_operation_timeout = 5;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    if (g_pe == 0) {
        double t0 = now_s();
        CHECK(aclshmem_malloc(64) == NULL, "an allocation against a barrier succeeded");
        CHECK(now_s() - t0 < 3.0, "the allocation against a barrier took %.1f s", now_s() - t0);
        aclshmem_barrier_all();
        aclshmem_barrier_all();
    } else {
        aclshmem_barrier_all();
        double t0 = now_s();
        CHECK(aclshmem_malloc(64) == NULL, "an allocation against a barrier succeeded");
        CHECK(now_s() - t0 < 1.5, "the late allocation waited %.1f s for a step that had failed", now_s() - t0);
        aclshmem_barrier_all();
    }
    int64_t *p = aclshmem_malloc(64);
    CHECK(p != NULL, "a well-formed allocation failed");
    aclshmem_int64_p(p, 1000 + g_pe, (g_pe + 1) % g_npes);
    aclshmem_barrier_all();
    CHECK(*p == 1000 + (g_pe + g_npes - 1) % g_npes, "the block holds %lld: the heaps differ", (long long)*p);
    aclshmem_free(p);
    finalize_ok();
    ok();
}

/* ------------------------------------------------------------------------------------------ */
int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s <scenario>\n", argv[0]);
        return 2;
    }
    g_scenario = argv[1];
    g_pe = env_int("ACLSHMEM_MY_PE");
    g_npes = env_int("ACLSHMEM_N_PES");

    static const struct {
        const char *name;
        void (*run)(void);
    } scenarios[] = {
        {"init_finalize", scenario_init_finalize},
        {"init_status_phases", scenario_init_status_phases},
        {"attr_validation", scenario_attr_validation},
        {"heap", scenario_heap},
        {"ptr", scenario_ptr},
        {"reserved", scenario_reserved},
        {"threads", scenario_threads},
        {"finalize_race", scenario_finalize_race},
        {"stall_warning", scenario_stall_warning},
        {"stall_timeout", scenario_stall_timeout},
        {"barrier", scenario_barrier},
        {"before_after", scenario_before_after},
        {"scale", scenario_scale},
        {"stray", scenario_stray},
        {"hang", scenario_hang},
        {"get_loop", scenario_get_loop},
        {"wait_long", scenario_wait_long},
        {"quiet_waits", scenario_quiet_waits},
        {"open_files", scenario_open_files},
        {"no_finalize", scenario_no_finalize},
        {"closed_std", scenario_closed_std},
        {"leave_barrier", scenario_leave_barrier},
        {"leave_reduce", scenario_leave_reduce},
        {"no_finalize_stuck", scenario_no_finalize_stuck},
        {"alloc_crossed", scenario_alloc_crossed},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(scenarios[i].name, argv[1]) == 0) {
            scenarios[i].run();
            return 0;
        }
    }
    fail("unknown scenario");
}

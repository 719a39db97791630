/*
 * stream_tests.c - multi-PE scenarios of the stream-ordered host calls (spec 7, 8.3.6, 8.3.8, 8.4,
 * 8.5.1, 8.6, 8.8): aclshmemx_putmem/getmem/quiet/signal_op/signal_wait_until_on_stream,
 * aclshmemx_barrier[_all]_on_stream, aclshmemx_handle_wait (completion, then a barrier of the team),
 * util_get_ffts_config and the profiling
 * readout, driven the way CANN SHMEM host programs drive them:
 *
 *     aclInit(NULL); aclrtSetDevice(my_pe % 16); aclrtCreateStream(&s);
 *     aclshmemx_init_attr(...); ... on-stream calls ...; aclrtSynchronizeStream(s);
 *     aclshmem_finalize(); aclrtDestroyStream(s); aclrtResetDevice(dev); aclFinalize();
 *
 * Built twice:
 *   - with the CPU ACL runtime (-laclshmem -lascendcl): every scenario but `inline`; the on-stream
 *     calls are queued on the streams and the host returns at once;
 *   - with -DSTREAM_TESTS_NO_ACL and only -laclshmem (no ACL runtime in the process): the `inline`
 *     scenario, where the same calls run inline on the calling thread.
 *
 * Run under aclshmrun: `aclshmrun -n N stream_tests <scenario>`. Every failed check prints
 * `FAIL: <scenario>: <what> (pe X)` and exits 1; PE 0 prints `OK <scenario>` when the scenario
 * passed. Lines starting with `MARK ` tell the harness where the program is (log-order checks).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#include "test_util.h"
#ifndef STREAM_TESTS_NO_ACL
#include <acl/acl.h>
#endif

#define ACL_DEVICES 16
#define STREAM_FAILED 507000 /* ACL_ERROR_RT_INTERNAL_ERROR: what a failed on-stream call reports */
#define SYNC_TIMEOUT 507046  /* ACL_ERROR_RT_STREAM_SYNC_TIMEOUT */

static int g_npes = -1;
static int g_me, g_n, g_left, g_right;

static void mark(const char *what)
{
    printf("MARK %s\n", what);
    fflush(stdout);
}

static __attribute__((unused)) void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The byte `i` of the block that PE `pe` sends in round `round`. */
static uint8_t pat(int pe, int round, size_t i)
{
    return (uint8_t)(pe * 37 + round * 11 + (int)(i % 251) * 3 + 1);
}

static void fill(uint8_t *buf, size_t len, int pe, int round)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = pat(pe, round, i);
    }
}

/* Fails unless `buf` holds PE `pe`'s block of round `round`. */
static void expect(const uint8_t *buf, size_t len, int pe, int round, const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != pat(pe, round, i)) {
            fail("%s: byte %zu of %zu is 0x%02x, expected 0x%02x (pe %d's block of round %d)", what, i, len,
                 buf[i], pat(pe, round, i), pe, round);
        }
    }
}

static void expect_zero(const uint8_t *buf, size_t len, const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != 0) {
            fail("%s: byte %zu of %zu is 0x%02x, expected 0 (untouched)", what, i, len, buf[i]);
        }
    }
}

static void shmem_begin(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    /* a stuck bootstrap becomes a reported error before the launcher's --timeout */
    attr.option_attr.shm_init_timeout = 20;
    attr.option_attr.control_operation_timeout = 20;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    g_me = aclshmem_my_pe();
    g_n = aclshmem_n_pes();
    CHECK(g_me == g_pe && g_n == g_npes, "my_pe/n_pes %d/%d, launcher said %d/%d", g_me, g_n, g_pe, g_npes);
    g_right = (g_me + 1) % g_n;
    g_left = (g_me + g_n - 1) % g_n;
}

static void *sym_alloc(size_t bytes)
{
    void *p = aclshmem_malloc(bytes);
    CHECK(p != NULL, "aclshmem_malloc(%zu) returned NULL", bytes);
    memset(p, 0, bytes);
    return p;
}

#ifndef STREAM_TESTS_NO_ACL

/* ---------------------------------------------------------------------------------------------- */
/* With the ACL runtime                                                                           */
/* ---------------------------------------------------------------------------------------------- */

static int device_id(void)
{
    return g_pe % ACL_DEVICES;
}

/* The upstream prologue: runtime, device, the program's stream. */
static aclrtStream acl_begin(void)
{
    CHECK_RC(aclInit(NULL), ACL_SUCCESS);
    CHECK_RC(aclrtSetDevice(device_id()), ACL_SUCCESS);
    aclrtStream s = NULL;
    CHECK_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    CHECK(s != NULL, "aclrtCreateStream gave a NULL stream");
    return s;
}

static void *host_alloc(size_t bytes)
{
    void *p = NULL;
    CHECK_RC(aclrtMallocHost(&p, bytes), ACL_SUCCESS);
    CHECK(p != NULL, "aclrtMallocHost(%zu) gave NULL", bytes);
    memset(p, 0, bytes);
    return p;
}

/* The upstream epilogue. PE 0 prints OK after a last barrier, so OK means every PE got there. */
static void acl_end(aclrtStream s)
{
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    CHECK_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    CHECK_RC(aclrtResetDevice(device_id()), ACL_SUCCESS);
    CHECK_RC(aclFinalize(), ACL_SUCCESS);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
}

/* ---- ring --------------------------------------------------------------------------------------
 * Stream-ordered ring exchange: put to the right neighbour, barrier on the stream, get from the
 * left neighbour's send buffer, quiet, synchronize, check. Three variants:
 *   A. one synchronize per round (send/receive slots double-buffered by round parity);
 *   B. many rounds queued behind each other, one synchronize at the end (a slot per round);
 *   C. NULL stream (the library's internal stream) for putmem/getmem/quiet, completed by the host
 *      barrier, which per spec 7 completes the internal stream's earlier work.
 */
#define RING_ROUNDS 40
#define RING_BYTES 4096
#define RING_BATCH 24
#define RING_NULL_ROUNDS 6
#define RING_NULL_BYTES ((size_t)4 << 20)

static void scenario_ring(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();

    uint8_t *send = sym_alloc(2 * RING_BYTES);
    uint8_t *recv = sym_alloc(2 * RING_BYTES);
    uint8_t *got = host_alloc(RING_BYTES);
    uint8_t *bsend = sym_alloc((size_t)RING_BATCH * RING_BYTES);
    uint8_t *brecv = sym_alloc((size_t)RING_BATCH * RING_BYTES);
    uint8_t *bgot = host_alloc((size_t)RING_BATCH * RING_BYTES);
    uint8_t *nsend = sym_alloc(RING_NULL_BYTES);
    uint8_t *nrecv = sym_alloc(RING_NULL_BYTES);
    uint8_t *ngot = host_alloc(RING_NULL_BYTES);
    aclshmem_barrier_all();

    /* A: a synchronize per round */
    for (int r = 0; r < RING_ROUNDS; r++) {
        size_t slot = (size_t)(r % 2) * RING_BYTES;
        fill(send + slot, RING_BYTES, g_me, r);
        memset(got, 0, RING_BYTES);
        aclshmemx_putmem_on_stream(recv + slot, send + slot, RING_BYTES, g_right, s);
        aclshmemx_barrier_all_on_stream(s);
        aclshmemx_getmem_on_stream(got, send + slot, RING_BYTES, g_left, s);
        aclshmemx_quiet_on_stream(s);
        CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
        expect(recv + slot, RING_BYTES, g_left, r, "A: block put by the left neighbour");
        expect(got, RING_BYTES, g_left, r, "A: block got from the left neighbour");
    }

    /* B: every round queued, one synchronize */
    for (int r = 0; r < RING_BATCH; r++) {
        fill(bsend + (size_t)r * RING_BYTES, RING_BYTES, g_me, 1000 + r);
    }
    for (int r = 0; r < RING_BATCH; r++) {
        size_t off = (size_t)r * RING_BYTES;
        aclshmemx_putmem_on_stream(brecv + off, bsend + off, RING_BYTES, g_right, s);
        aclshmemx_barrier_all_on_stream(s);
        aclshmemx_getmem_on_stream(bgot + off, bsend + off, RING_BYTES, g_left, s);
    }
    aclshmemx_quiet_on_stream(s);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    for (int r = 0; r < RING_BATCH; r++) {
        size_t off = (size_t)r * RING_BYTES;
        expect(brecv + off, RING_BYTES, g_left, 1000 + r, "B: block put by the left neighbour");
        expect(bgot + off, RING_BYTES, g_left, 1000 + r, "B: block got from the left neighbour");
    }
    aclshmem_barrier_all();

    /* C': NULL stream = the library's internal stream, completed by aclrtSynchronizeDevice (spec 7) */
    fill(nsend, RING_NULL_BYTES, g_me, 3000);
    aclshmemx_putmem_on_stream(nrecv, nsend, RING_NULL_BYTES, g_right, NULL);
    aclshmemx_quiet_on_stream(NULL);
    CHECK_RC(aclrtSynchronizeDevice(), ACL_SUCCESS);
    aclshmem_barrier_all();
    expect(nrecv, RING_NULL_BYTES, g_left, 3000, "C': block put on the NULL stream after aclrtSynchronizeDevice");
    aclshmem_barrier_all(); /* everyone checked before nrecv is written again */

    /* C: the same, completed by the host barrier, which per spec 7 completes the internal stream's
     * earlier work (the original launches its barrier kernel on that stream) */
    for (int r = 0; r < RING_NULL_ROUNDS; r++) {
        fill(nsend, RING_NULL_BYTES, g_me, 2000 + r);
        memset(ngot, 0, RING_NULL_BYTES);
        aclshmemx_putmem_on_stream(nrecv, nsend, RING_NULL_BYTES, g_right, NULL);
        aclshmemx_quiet_on_stream(NULL);
        aclshmem_barrier_all();
        expect(nrecv, RING_NULL_BYTES, g_left, 2000 + r,
               "C: block put on the NULL (internal) stream, checked after aclshmem_barrier_all");
        aclshmemx_getmem_on_stream(ngot, nsend, RING_NULL_BYTES, g_left, NULL);
        aclshmemx_quiet_on_stream(NULL);
        aclshmem_barrier_all();
        expect(ngot, RING_NULL_BYTES, g_left, 2000 + r,
               "C: block got on the NULL (internal) stream, checked after aclshmem_barrier_all");
    }

    aclrtFreeHost(got);
    aclrtFreeHost(bgot);
    aclrtFreeHost(ngot);
    aclshmem_free(send);
    aclshmem_free(recv);
    aclshmem_free(bsend);
    aclshmem_free(brecv);
    aclshmem_free(nsend);
    aclshmem_free(nrecv);
    acl_end(s);
}

/* ---- wait_before_put ---------------------------------------------------------------------------
 * PE 0 queues a signal wait, then a get of its own data and a host-visible marker, on its stream,
 * and only THEN tells PE 1 (host put) to send: the host thread is not blocked by the queued wait
 * (else PE 1 would never be told and the job would hang), and the stream does not run past the wait
 * before the signal. Round 0: PE 1 sends with putmem_on_stream + signal_op_on_stream(SET 42);
 * round 1: with the host put-with-signal (SET 43).
 */
#define WAIT_BYTES 8192

static atomic_int g_marker;
static _Atomic double g_marker_at;

static void marker_fn(void *arg)
{
    (void)arg;
    atomic_store(&g_marker_at, now_s());
    atomic_fetch_add(&g_marker, 1);
}

static void scenario_wait_before_put(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();
    CHECK(g_n >= 2, "needs 2 PEs");

    int32_t *sig = sym_alloc(sizeof(int32_t));
    int32_t *go = sym_alloc(sizeof(int32_t));
    uint8_t *data = sym_alloc(WAIT_BYTES);
    uint8_t *copy = host_alloc(WAIT_BYTES);
    uint8_t *src = host_alloc(WAIT_BYTES);
    aclshmem_barrier_all();

    for (int round = 0; round < 2; round++) {
        int32_t want = 42 + round;
        if (g_me == 0) {
            double t0 = now_s();
            aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, want, s);
            aclshmemx_getmem_on_stream(copy, data, WAIT_BYTES, 0, s);
            CHECK_RC(aclrtLaunchHostFunc(s, marker_fn, NULL), ACL_SUCCESS);
            double queued = now_s() - t0;
            CHECK(queued < 2.0, "round %d: queueing the wait + get took %.3f s: the host was blocked", round,
                  queued);
            sleep_ms(100);
            CHECK(atomic_load(&g_marker) == round,
                  "round %d: the stream ran past signal_wait_until_on_stream before the signal was sent", round);
            if (round == 0) {
                expect_zero(copy, WAIT_BYTES, "round 0: get queued behind the wait");
            } else {
                expect(copy, WAIT_BYTES, 1, 0, "round 1: get queued behind the wait (still round 0's copy)");
            }
            CHECK(atomic_load_explicit((_Atomic int32_t *)sig, memory_order_acquire) != want,
                  "round %d: signal already %d before PE 1 was told to send", round, want);
            double told = now_s();
            aclshmem_int32_p(go, round + 1, 1); /* host put: PE 1 may send now */
            CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
            CHECK(atomic_load(&g_marker) == round + 1, "round %d: marker ran %d times", round,
                  atomic_load(&g_marker));
            CHECK(atomic_load(&g_marker_at) >= told, "round %d: marker ran before PE 1 was told to send", round);
            CHECK(*sig == want, "round %d: signal word %d, expected %d", round, *sig, want);
            expect(copy, WAIT_BYTES, 1, round, "data got after the signal wait");
        } else if (g_me == 1) {
            aclshmem_int32_wait_until(go, ACLSHMEM_CMP_EQ, round + 1);
            fill(src, WAIT_BYTES, 1, round);
            if (round == 0) {
                aclshmemx_putmem_on_stream(data, src, WAIT_BYTES, 0, s);
                aclshmemx_signal_op_on_stream(sig, want, ACLSHMEM_SIGNAL_SET, 0, s);
                CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
            } else {
                aclshmemx_putmem_signal(data, src, WAIT_BYTES, sig, want, ACLSHMEM_SIGNAL_SET, 0);
            }
        }
        aclshmem_barrier_all();
    }

    aclrtFreeHost(copy);
    aclrtFreeHost(src);
    acl_end(s);
}

/* ---- phases ------------------------------------------------------------------------------------
 * barrier_on_stream separating two phases of on-stream puts: phase 1 puts my block into the right
 * neighbour's p1; phase 2 forwards my p1 (written by the left neighbour in phase 1) into the right
 * neighbour's p2, so phase 2 reads what phase 1 wrote; a get of the right neighbour's p2 at the end.
 * One member is slow to start every round, so a barrier that does not wait shows up as stale data.
 * First over ACLSHMEM_TEAM_WORLD, then over the evens/odds teams of a strided split (a PE outside a
 * team holds ACLSHMEM_TEAM_INVALID: a no-op), then with NULL (the ACL default stream).
 */
#define PHASE_BYTES 2048
#define PHASE_ROUNDS 10

/* One round of the two phases over `team` (members `members`, my index `idx`, neighbours given as
 * world PEs). */
static void phase_round(aclrtStream s, aclshmem_team_t team, int members, int idx, int right, int left,
                        int left2, uint8_t *src, uint8_t *p1, uint8_t *p2, uint8_t *got, int round,
                        const char *what)
{
    char ctx[128];
    fill(src, PHASE_BYTES, g_me, round);
    memset(got, 0, PHASE_BYTES);
    if (idx == round % members) {
        sleep_ms(20); /* a slow member */
    }
    aclshmemx_putmem_on_stream(p1, src, PHASE_BYTES, right, s);
    aclshmemx_barrier_on_stream(team, s);
    aclshmemx_putmem_on_stream(p2, p1, PHASE_BYTES, right, s);
    aclshmemx_barrier_on_stream(team, s);
    aclshmemx_getmem_on_stream(got, p2, PHASE_BYTES, right, s);
    aclshmemx_quiet_on_stream(s);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    snprintf(ctx, sizeof ctx, "%s round %d: p1 (phase 1)", what, round);
    expect(p1, PHASE_BYTES, left, round, ctx);
    snprintf(ctx, sizeof ctx, "%s round %d: p2 (phase 2 forwarded phase 1)", what, round);
    expect(p2, PHASE_BYTES, left2, round, ctx);
    snprintf(ctx, sizeof ctx, "%s round %d: right neighbour's p2", what, round);
    expect(got, PHASE_BYTES, left, round, ctx);
    aclshmem_barrier(team); /* nobody starts the next round before every member checked this one */
}

static void scenario_phases(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();

    uint8_t *p1 = sym_alloc(PHASE_BYTES);
    uint8_t *p2 = sym_alloc(PHASE_BYTES);
    uint8_t *src = host_alloc(PHASE_BYTES);
    uint8_t *got = host_alloc(PHASE_BYTES);
    aclshmem_barrier_all();

    int left2 = (g_me + 2 * g_n - 2) % g_n;
    for (int r = 0; r < PHASE_ROUNDS; r++) {
        phase_round(s, ACLSHMEM_TEAM_WORLD, g_n, g_me, g_right, g_left, left2, src, p1, p2, got, r, "world");
    }
    aclshmem_barrier_all();

    /* split teams: evens {0, 2, ...} and odds {1, 3, ...} */
    aclshmem_team_t evens = ACLSHMEM_TEAM_INVALID, odds = ACLSHMEM_TEAM_INVALID;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, (g_n + 1) / 2, &evens), 0);
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 1, 2, g_n / 2, &odds), 0);
    aclshmem_team_t mine = g_me % 2 == 0 ? evens : odds;
    aclshmem_team_t other = g_me % 2 == 0 ? odds : evens;
    CHECK(mine != ACLSHMEM_TEAM_INVALID, "not a member of my parity's team");
    CHECK(other == ACLSHMEM_TEAM_INVALID, "member of the other parity's team (handle %d)", other);
    int m = aclshmem_team_n_pes(mine);
    int idx = aclshmem_team_my_pe(mine);
    CHECK(m >= 1 && idx >= 0 && idx < m, "team size %d, my index %d", m, idx);
    int t_right = aclshmem_team_translate_pe(mine, (idx + 1) % m, ACLSHMEM_TEAM_WORLD);
    int t_left = aclshmem_team_translate_pe(mine, (idx + m - 1) % m, ACLSHMEM_TEAM_WORLD);
    int t_left2 = aclshmem_team_translate_pe(mine, (idx + 2 * m - 2) % m, ACLSHMEM_TEAM_WORLD);
    CHECK(t_right >= 0 && t_left >= 0 && t_left2 >= 0, "translate_pe failed");
    for (int r = 0; r < PHASE_ROUNDS; r++) {
        /* the other team's handle is INVALID here: a no-op in stream order */
        aclshmemx_barrier_on_stream(other, s);
        phase_round(s, mine, m, idx, t_right, t_left, t_left2, src, p1, p2, got, 100 + r,
                    g_me % 2 == 0 ? "evens" : "odds");
    }
    aclshmem_barrier_all();
    aclshmem_team_destroy(mine);

    /* NULL stream: the barriers go to the ACL default stream of this thread's device */
    for (int r = 0; r < 3; r++) {
        fill(src, PHASE_BYTES, g_me, 200 + r);
        if (g_me == r % g_n) {
            sleep_ms(20);
        }
        aclshmemx_putmem_on_stream(p1, src, PHASE_BYTES, g_right, s);
        CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
        aclshmemx_barrier_all_on_stream(NULL);
        aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, NULL);
        CHECK_RC(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
        expect(p1, PHASE_BYTES, g_left, 200 + r, "p1 after barriers on the NULL (default) stream");
        aclshmem_barrier_all(); /* nobody overwrites p1 before its owner checked it */
    }

    aclrtFreeHost(src);
    aclrtFreeHost(got);
    acl_end(s);
}

/* ---- many_streams ------------------------------------------------------------------------------
 * 8 streams per PE; stream k puts to PE (me + k + 1) % n, interleaved round by round, each put
 * followed by a signal ADD of 1 to a counter on the target; every stream quieted and synchronized.
 * Every region of every PE must hold exactly its sender's block, untouched regions stay zero, and
 * each counter equals the number of puts aimed at its PE.
 */
#define MS_STREAMS 8
#define MS_ROUNDS 12
#define MS_BYTES 1024

static void scenario_many_streams(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();

    aclrtStream ss[MS_STREAMS];
    for (int k = 0; k < MS_STREAMS; k++) {
        ss[k] = NULL;
        CHECK_RC(aclrtCreateStream(&ss[k]), ACL_SUCCESS);
    }
    size_t region = (size_t)MS_ROUNDS * MS_BYTES;
    uint8_t *dst = sym_alloc((size_t)g_n * MS_STREAMS * region);
    int32_t *counter = sym_alloc(sizeof(int32_t));
    uint8_t *src = host_alloc((size_t)MS_STREAMS * region);
    for (int k = 0; k < MS_STREAMS; k++) {
        for (int r = 0; r < MS_ROUNDS; r++) {
            fill(src + k * region + (size_t)r * MS_BYTES, MS_BYTES, g_me, k * 100 + r);
        }
    }
    aclshmem_barrier_all();

    for (int r = 0; r < MS_ROUNDS; r++) {
        for (int k = 0; k < MS_STREAMS; k++) {
            int target = (g_me + k + 1) % g_n;
            size_t off = ((size_t)g_me * MS_STREAMS + k) * region + (size_t)r * MS_BYTES;
            aclshmemx_putmem_on_stream(dst + off, src + k * region + (size_t)r * MS_BYTES, MS_BYTES, target, ss[k]);
            aclshmemx_signal_op_on_stream(counter, 1, ACLSHMEM_SIGNAL_ADD, target, ss[k]);
        }
    }
    for (int k = 0; k < MS_STREAMS; k++) {
        aclshmemx_quiet_on_stream(ss[k]);
    }
    for (int k = 0; k < MS_STREAMS; k++) {
        CHECK_RC(aclrtSynchronizeStream(ss[k]), ACL_SUCCESS);
    }
    aclshmem_barrier_all();

    int expected_count = 0;
    for (int p = 0; p < g_n; p++) {
        for (int k = 0; k < MS_STREAMS; k++) {
            const uint8_t *reg = dst + ((size_t)p * MS_STREAMS + k) * region;
            char what[96];
            snprintf(what, sizeof what, "region of pe %d stream %d", p, k);
            if ((p + k + 1) % g_n == g_me) {
                expected_count += MS_ROUNDS;
                for (int r = 0; r < MS_ROUNDS; r++) {
                    expect(reg + (size_t)r * MS_BYTES, MS_BYTES, p, k * 100 + r, what);
                }
            } else {
                expect_zero(reg, region, what);
            }
        }
    }
    CHECK(*counter == expected_count, "signal counter %d, expected %d", *counter, expected_count);

    for (int k = 0; k < MS_STREAMS; k++) {
        CHECK_RC(aclrtDestroyStream(ss[k]), ACL_SUCCESS);
    }
    aclrtFreeHost(src);
    acl_end(s);
}

/* ---- destroy_pending ---------------------------------------------------------------------------
 * PE 0 queues, on a fresh stream, a signal wait that PE 1 satisfies only ~200 ms later, then a get
 * of PE 1's data, a put of it back to PE 1 and a signal to PE 1; then destroys the stream at once.
 * The destroy must drain (return only after the queued work ran, with ACL_SUCCESS), not crash, not
 * hang, and everything queued must have happened.
 */
#define DESTROY_BYTES 4096
#define DESTROY_DELAY_MS 200

static void scenario_destroy_pending(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();
    CHECK(g_n >= 2, "needs 2 PEs");

    int32_t *sig = sym_alloc(sizeof(int32_t));
    int32_t *go = sym_alloc(sizeof(int32_t));
    int32_t *ack = sym_alloc(sizeof(int32_t));
    uint8_t *data = sym_alloc(DESTROY_BYTES);
    uint8_t *echo = sym_alloc(DESTROY_BYTES);
    uint8_t *copy = host_alloc(DESTROY_BYTES);
    if (g_me == 1) {
        fill(data, DESTROY_BYTES, 1, 77);
    }
    aclshmem_barrier_all();

    if (g_me == 0) {
        aclrtStream d = NULL;
        CHECK_RC(aclrtCreateStream(&d), ACL_SUCCESS);
        aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 7, d);
        aclshmemx_getmem_on_stream(copy, data, DESTROY_BYTES, 1, d);
        aclshmemx_putmem_on_stream(echo, copy, DESTROY_BYTES, 1, d);
        aclshmemx_quiet_on_stream(d);
        aclshmemx_signal_op_on_stream(ack, 1, ACLSHMEM_SIGNAL_SET, 1, d);
        double t0 = now_s();
        aclshmem_int32_p(go, 1, 1); /* PE 1 satisfies the wait DESTROY_DELAY_MS from now */
        CHECK_RC(aclrtDestroyStream(d), ACL_SUCCESS);
        double took = now_s() - t0;
        CHECK(*sig == 7, "destroy returned before the queued signal wait was satisfied (sig %d)", *sig);
        CHECK(took >= DESTROY_DELAY_MS / 2000.0, "destroy took %.3f s: it did not wait for the queued work",
              took);
        expect(copy, DESTROY_BYTES, 1, 77, "data got by the destroyed stream's queued get");
    } else if (g_me == 1) {
        aclshmem_int32_wait_until(go, ACLSHMEM_CMP_EQ, 1);
        sleep_ms(DESTROY_DELAY_MS);
        aclshmem_int32_p(sig, 7, 0);
        aclshmem_int32_wait_until(ack, ACLSHMEM_CMP_EQ, 1);
        expect(echo, DESTROY_BYTES, 1, 77, "data put back by PE 0's destroyed stream");
    }
    aclshmem_barrier_all();

    /* PE 1 destroys a stream holding a wait (satisfied by PE 0 later), a barrier that the other PEs
     * meet with their host barrier, and a signal to PE 0 */
    aclshmem_int32_p(sig, 0, g_me);
    aclshmem_int32_p(go, 0, g_me);
    aclshmem_int32_p(ack, 0, g_me);
    aclshmem_barrier_all();
    if (g_me == 1) {
        aclrtStream d = NULL;
        CHECK_RC(aclrtCreateStream(&d), ACL_SUCCESS);
        aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, 3, d);
        aclshmemx_barrier_all_on_stream(d); /* PE 0 joins with a host barrier */
        aclshmemx_signal_op_on_stream(ack, 5, ACLSHMEM_SIGNAL_ADD, 0, d);
        aclshmem_int32_p(go, 1, 0);
        CHECK_RC(aclrtDestroyStream(d), ACL_SUCCESS);
        CHECK(*sig >= 3, "destroy returned before the queued wait was satisfied (sig %d)", *sig);
    } else if (g_me == 0) {
        aclshmem_int32_wait_until(go, ACLSHMEM_CMP_EQ, 1);
        sleep_ms(DESTROY_DELAY_MS / 2);
        aclshmem_int32_p(sig, 3, 1);
        aclshmem_barrier_all(); /* meets PE 1's queued barrier; the other PEs' host barrier */
        aclshmem_int32_wait_until(ack, ACLSHMEM_CMP_EQ, 5);
    } else {
        aclshmem_barrier_all();
    }
    aclshmem_barrier_all();

    aclrtFreeHost(copy);
    acl_end(s);
}

/* ---- sync_timeout ------------------------------------------------------------------------------
 * A queued signal wait nobody satisfies: aclrtSynchronizeStreamWithTimeout(s, 200) returns
 * ACL_ERROR_RT_STREAM_SYNC_TIMEOUT after about 200 ms and the get queued behind the wait has not
 * run; after the host puts the expected value into its own word, synchronize returns 0 and the get
 * has run.
 */
#define TIMEOUT_BYTES 256

static void scenario_sync_timeout(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();

    int32_t *sig = sym_alloc(sizeof(int32_t));
    uint8_t *data = sym_alloc(TIMEOUT_BYTES);
    uint8_t *copy = host_alloc(TIMEOUT_BYTES);
    fill(data, TIMEOUT_BYTES, g_me, 5);
    aclshmem_barrier_all();

    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 5, s);
    aclshmemx_getmem_on_stream(copy, data, TIMEOUT_BYTES, g_me, s);
    double t0 = now_s();
    int rc = aclrtSynchronizeStreamWithTimeout(s, 200);
    double took = now_s() - t0;
    CHECK(rc == SYNC_TIMEOUT, "aclrtSynchronizeStreamWithTimeout(s, 200) returned %d, expected %d", rc,
          SYNC_TIMEOUT);
    CHECK(took >= 0.15 && took < 5.0, "the 200 ms timeout took %.3f s", took);
    expect_zero(copy, TIMEOUT_BYTES, "get queued behind the unsatisfied wait");
    /* still pending */
    CHECK_RC(aclrtSynchronizeStreamWithTimeout(s, 20), SYNC_TIMEOUT);
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    CHECK_RC(aclrtStreamQuery(s, &status), ACL_SUCCESS);
    CHECK(status == ACL_STREAM_STATUS_NOT_READY, "aclrtStreamQuery: status %d while the wait is pending", (int)status);

    aclshmem_int32_p(sig, 5, g_me); /* the host satisfies its own stream's wait */
    t0 = now_s();
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    took = now_s() - t0;
    CHECK(took < 5.0, "synchronize after the signal took %.3f s", took);
    expect(copy, TIMEOUT_BYTES, g_me, 5, "get queued behind the satisfied wait");
    CHECK_RC(aclrtStreamQuery(s, &status), ACL_SUCCESS);
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "aclrtStreamQuery: status %d after synchronize", (int)status);
    CHECK_RC(aclrtSynchronizeStreamWithTimeout(s, 1000), ACL_SUCCESS);

    aclrtFreeHost(copy);
    acl_end(s);
}

/* ---- errors ------------------------------------------------------------------------------------
 * Calls before init are refused (logged, nothing queued: synchronize returns 0); an on-stream put or
 * get with an address outside the symmetric heap, or a PE out of range, fails when the stream runs
 * it: the next synchronize returns 507000 (and the one after it 0), the log names the call, and the
 * stream goes on with later work; a bad sig_op / cmp is logged at call time and nothing is queued;
 * util_get_ffts_config() == 0 before and after init.
 */
static void scenario_errors(void)
{
    aclrtStream s = acl_begin();
    int32_t local_word = 0;
    uint8_t local[64];
    memset(local, 0, sizeof local);
    aclshmem_handle_t world = {ACLSHMEM_TEAM_WORLD};

    /* before init */
    CHECK(util_get_ffts_config() == 0, "util_get_ffts_config() before init = %llu",
          (unsigned long long)util_get_ffts_config());
    aclshmemx_putmem_on_stream(local, local, sizeof local, 0, s);
    aclshmemx_getmem_on_stream(local, local, sizeof local, 0, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_signal_op_on_stream(&local_word, 1, ACLSHMEM_SIGNAL_SET, 0, s);
    aclshmemx_signal_wait_until_on_stream(&local_word, ACLSHMEM_CMP_EQ, 99, s); /* would never end */
    aclshmemx_barrier_all_on_stream(s);
    aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, s);
    aclshmemx_handle_wait(world, s);
    aclshmemx_putmem_on_stream(local, local, sizeof local, 0, NULL);
    aclshmem_prof_pe_t *prof = (aclshmem_prof_pe_t *)(uintptr_t)0x1234;
    aclshmemx_get_prof(&prof, false);
    CHECK(prof == (aclshmem_prof_pe_t *)(uintptr_t)0x1234, "aclshmemx_get_prof before init wrote *out_profs");
    CHECK_RC(aclrtSynchronizeStreamWithTimeout(s, 5000), ACL_SUCCESS);
    CHECK(local_word == 0, "signal_op before init wrote the word");
    mark("before_init_done");

    shmem_begin();
    CHECK(util_get_ffts_config() == 0, "util_get_ffts_config() after init = %llu",
          (unsigned long long)util_get_ffts_config());
    uint8_t *box = sym_alloc(64);
    int32_t *sig = sym_alloc(sizeof(int32_t));
    uint8_t *src = host_alloc(64);
    fill(src, 64, g_me, 9);
    aclshmem_barrier_all();

    /* out-of-heap destination: fails on the stream, later work still runs */
    aclshmemx_putmem_on_stream(local, src, sizeof local, g_right, s);
    aclshmemx_putmem_on_stream(box, src, 64, g_right, s);
    CHECK_RC(aclrtSynchronizeStream(s), STREAM_FAILED);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS); /* reported once */
    expect_zero(local, sizeof local, "out-of-heap put destination");
    aclshmem_barrier_all();
    expect(box, 64, g_left, 9, "put queued after the failing put");
    mark("put_error_done");

    /* out-of-heap source of a get */
    aclshmemx_getmem_on_stream(src, local, sizeof local, g_right, s);
    CHECK_RC(aclrtSynchronizeStream(s), STREAM_FAILED);
    mark("get_error_done");

    /* PE out of range */
    aclshmemx_putmem_on_stream(box, src, 64, g_n, s);
    aclshmemx_putmem_on_stream(box, src, 64, -1, s);
    CHECK_RC(aclrtSynchronizeStream(s), STREAM_FAILED);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);

    /* bad sig_op: logged now, nothing queued (a queued bad op would fail the synchronize) */
    aclshmemx_signal_op_on_stream(sig, 9, 7, g_me, s);
    mark("bad_sig_op_returned");
    aclshmemx_signal_op_on_stream(sig, 9, -1, g_me, s);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(*sig == 0, "signal word %d after bad sig_op calls", *sig);

    /* bad cmp: logged now, nothing queued (a queued bad wait would fail or never end) */
    aclshmemx_signal_wait_until_on_stream(sig, 6, 0, s);
    mark("bad_cmp_returned");
    aclshmemx_signal_wait_until_on_stream(sig, -1, 0, s);
    CHECK_RC(aclrtSynchronizeStreamWithTimeout(s, 5000), ACL_SUCCESS);

    /* the stream still works */
    aclshmem_barrier_all(); /* everyone checked its word */
    aclshmemx_signal_op_on_stream(sig, 4, ACLSHMEM_SIGNAL_ADD, g_right, s);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    aclshmem_barrier_all();
    CHECK(*sig == 4, "signal word %d, expected 4", *sig);

    aclrtFreeHost(src);
    acl_end(s);
}

/* ---- prof --------------------------------------------------------------------------------------
 * With SHMEM_CYCLE_PROF_PE=0: a known mix of on-stream operations on every PE; PE 0's readout holds
 * exactly those counts per frame (0 put, 1 get, 2 quiet, 3 signal, 4 signal wait, 5 barrier, 6
 * handle wait) in block 0 and nothing elsewhere; the counts follow later operations; on the other
 * PEs *out_profs stays untouched and verbose prints nothing. PE 0 prints the table twice
 * (get_prof(NULL, true) and show_prof), between MARK lines.
 */
static void scenario_prof(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();

    uint8_t *box = sym_alloc(256);
    int32_t *sig = sym_alloc(sizeof(int32_t));
    uint8_t *src = host_alloc(256);
    uint8_t *dst = host_alloc(256);
    fill(src, 256, g_me, 1);
    aclshmem_barrier_all();
    aclshmem_handle_t world = {ACLSHMEM_TEAM_WORLD};

    /* 3 puts, 2 gets, 1 quiet, 1 signal, 1 signal wait, 3 barriers, 1 handle wait */
    aclshmemx_putmem_on_stream(box, src, 256, g_right, s);
    aclshmemx_putmem_on_stream(box, src, 128, g_right, s);
    aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_ADD, g_right, s);
    aclshmemx_barrier_all_on_stream(s);
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, 1, s);
    aclshmemx_getmem_on_stream(dst, box, 256, g_left, s);
    aclshmemx_putmem_on_stream(box, src, 64, g_right, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_handle_wait(world, s);
    aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, s);
    aclshmemx_getmem_on_stream(dst, box, 256, g_left, s);
    aclshmemx_barrier_all_on_stream(s);
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    /* the left neighbour's box was written by its own left neighbour */
    expect(dst, 256, (g_me + 2 * g_n - 2) % g_n, 1, "data got in the profiled run");
    aclshmem_barrier_all();

    static const int64_t want[7] = {3, 2, 1, 1, 1, 3, 1};
    if (g_me == 0) {
        aclshmem_prof_pe_t *p = NULL;
        aclshmemx_get_prof(&p, false);
        CHECK(p != NULL, "aclshmemx_get_prof(&p, false) left p NULL on the profiled PE");
        CHECK(p->pe_id == 0, "pe_id %d", p->pe_id);
        for (int f = 0; f < ACLSHMEM_CYCLE_PROF_FRAME_CNT; f++) {
            int64_t c = p->block_prof[0].ccount[f];
            int64_t expect_c = f < 7 ? want[f] : 0;
            CHECK(c == expect_c, "block 0 frame %d: count %lld, expected %lld", f, (long long)c,
                  (long long)expect_c);
            CHECK(p->block_prof[0].cycles[f] >= 0, "block 0 frame %d: negative cycles", f);
            if (expect_c == 0) {
                CHECK(p->block_prof[0].cycles[f] == 0, "block 0 frame %d: cycles without a count", f);
            }
        }
        CHECK(p->block_prof[0].cycles[5] > 0, "barrier frame: 0 cycles for 3 barriers");
        for (int b = 1; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++) {
            for (int f = 0; f < ACLSHMEM_CYCLE_PROF_FRAME_CNT; f++) {
                CHECK(p->block_prof[b].ccount[f] == 0 && p->block_prof[b].cycles[f] == 0,
                      "block %d frame %d not zero", b, f);
            }
        }
        /* the readout follows later operations */
        aclshmemx_putmem_on_stream(box, src, 8, g_right, s);
        CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
        aclshmem_prof_pe_t *q = NULL;
        aclshmemx_get_prof(&q, false);
        CHECK(q != NULL && q->block_prof[0].ccount[0] == 4, "put count after one more put: %lld",
              q ? (long long)q->block_prof[0].ccount[0] : -1LL);
    } else {
        aclshmem_prof_pe_t *sentinel = (aclshmem_prof_pe_t *)(uintptr_t)0x5678;
        aclshmem_prof_pe_t *p = sentinel;
        aclshmemx_get_prof(&p, false);
        CHECK(p == sentinel, "aclshmemx_get_prof wrote *out_profs on a PE that is not profiled");
        aclshmemx_get_prof(&p, true);
        CHECK(p == sentinel, "aclshmemx_get_prof(verbose) wrote *out_profs on a PE that is not profiled");
    }
    aclshmem_barrier_all();
    mark("verbose_begin");
    aclshmemx_get_prof(NULL, false); /* nothing at all */
    aclshmemx_get_prof(NULL, true);
    fflush(stdout);
    mark("show_prof");
    aclshmemx_show_prof();
    fflush(stdout);
    mark("verbose_end");

    aclrtFreeHost(src);
    aclrtFreeHost(dst);
    acl_end(s);
}

/* ---- finalize_pending --------------------------------------------------------------------------
 * Finalize while the program's stream still holds work: a host function keeps the stream busy for
 * PENDING_DELAY_MS; behind it a put and a signal to the right neighbour, a quiet, a wait for the
 * left neighbour's signal and a get of what it put into a host buffer. The program calls
 * aclshmem_finalize without synchronizing the stream. The queued operations captured their
 * instance when they were queued, so finalize waits for them (they run on that instance and
 * succeed) before its barrier and the unmapping: it returns 0 after at least the delay, the host
 * buffer then holds the left neighbour's data, and the stream synchronizes without error. */
#define PENDING_DELAY_MS 300
#define PENDING_BYTES 4096

static void pending_sleep_fn(void *arg)
{
    (void)arg;
    sleep_ms(PENDING_DELAY_MS);
}

static void scenario_finalize_pending(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();
    uint8_t *dst = sym_alloc(PENDING_BYTES);
    int32_t *sig = sym_alloc(sizeof(int32_t));
    uint8_t *src = host_alloc(PENDING_BYTES);
    uint8_t *got = host_alloc(PENDING_BYTES);
    fill(src, PENDING_BYTES, g_me, 5);
    aclshmem_barrier_all();

    CHECK_RC(aclrtLaunchHostFunc(s, pending_sleep_fn, NULL), ACL_SUCCESS);
    aclshmemx_putmem_on_stream(dst, src, PENDING_BYTES, g_right, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_SET, g_right, s);
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 1, s);
    aclshmemx_getmem_on_stream(got, dst, PENDING_BYTES, g_me, s);
    double t0 = now_s();
    CHECK_RC(aclshmem_finalize(), 0);
    double took = now_s() - t0;
    mark("finalized");
    CHECK(took >= PENDING_DELAY_MS / 2000.0, "finalize returned after %.3f s, before the stream's work ran", took);
    expect(got, PENDING_BYTES, g_left, 5, "data of the left neighbour, got by the pending stream");
    /* every queued operation ran on its instance before the heaps went: no error on the stream */
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    CHECK_RC(aclrtResetDevice(device_id()), ACL_SUCCESS);
    CHECK_RC(aclFinalize(), ACL_SUCCESS);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
}

/* ---- ctx_switch -----------------------------------------------------------------------------------
 * Two instances; operations queued on a stream while instance 0 is current run on instance 0 even
 * when the program switched to instance 1 before the stream reached them (they capture their
 * instance when queued). Instance 0's buffers are not in instance 1's heap, so an operation that
 * looked its instance up when it ran would fail. Needs SHMEM_INSTANCE_PORT_RANGE. */
static void scenario_ctx_switch(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();
    uint8_t *d0 = sym_alloc(PENDING_BYTES);
    int32_t *sig0 = sym_alloc(sizeof(int32_t));
    uint8_t *src = host_alloc(PENDING_BYTES);
    fill(src, PENDING_BYTES, g_me, 9);

    aclshmemx_init_attr_t a1 = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&a1), 0);
    a1.instance_id = 1;
    a1.option_attr.shm_init_timeout = 20;
    a1.option_attr.control_operation_timeout = 20;
    strcpy(a1.ip_port, "tcp://127.0.0.1:0");
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a1), 0);
    CHECK(aclshmemx_instance_ctx_get()->id == 1, "instance 1 is not current after its init");
    uint8_t *d1 = sym_alloc(PENDING_BYTES);

    CHECK_RC(aclshmemx_instance_ctx_set(0), 0);
    aclshmem_barrier_all();
    CHECK_RC(aclrtLaunchHostFunc(s, pending_sleep_fn, NULL), ACL_SUCCESS);
    aclshmemx_putmem_on_stream(d0, src, PENDING_BYTES, g_right, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_signal_op_on_stream(sig0, 1, ACLSHMEM_SIGNAL_SET, g_right, s);
    /* the stream is still asleep: switch before it reaches the queued operations */
    CHECK_RC(aclshmemx_instance_ctx_set(1), 0);
    mark("switched");
    CHECK_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    expect_zero(d1, PENDING_BYTES, "instance 1's buffer (the queued put belongs to instance 0)");
    aclshmem_barrier_all(); /* instance 1 */

    CHECK_RC(aclshmemx_instance_ctx_set(0), 0);
    aclshmem_int32_wait_until(sig0, ACLSHMEM_CMP_EQ, 1);
    expect(d0, PENDING_BYTES, g_left, 9, "instance 0's buffer, put while instance 1 was current");
    aclshmem_barrier_all();
    CHECK_RC(aclshmemx_finalize(1), 0);
    acl_end(s);
}

/* ---- self_signal_device -----------------------------------------------------------------------
 * The original's own tests: put-with-signal (typed, sized, byte, _nbi) to the calling PE itself with
 * the signal word in local device memory from aclrtMalloc (not symmetric), read back with
 * aclrtMemcpy. Accepted exactly then; a signal word in freed device memory, in plain host memory,
 * or aimed at another PE is refused and left unchanged. aclshmem_signal_wait_until waits on the
 * device word, and refuses the plain host word instead of waiting forever. */
static int32_t read_dev(const int32_t *dev)
{
    int32_t v = -1;
    CHECK_RC(aclrtMemcpy(&v, sizeof v, dev, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return v;
}

static void scenario_self_signal_device(void)
{
    aclrtStream s = acl_begin();
    shmem_begin();
    int32_t *dst = sym_alloc(64 * sizeof(int32_t));
    int32_t src[64];
    for (int i = 0; i < 64; i++) {
        src[i] = g_me * 100 + i;
    }
    void *dev = NULL;
    CHECK_RC(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    int32_t *sig = (int32_t *)dev;
    int32_t zero = 0;
    CHECK_RC(aclrtMemcpy(sig, sizeof zero, &zero, sizeof zero, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);

    aclshmem_int32_put_signal(dst, src, 64, (uint8_t *)sig, 5, ACLSHMEM_SIGNAL_SET, g_me);
    CHECK(read_dev(sig) == 5, "typed put_signal to self: device signal %d, expected 5", read_dev(sig));
    CHECK(dst[63] == src[63], "typed put_signal to self: data not copied");
    aclshmem_int32_put_signal_nbi(dst, src, 64, (uint8_t *)sig, 2, ACLSHMEM_SIGNAL_ADD, g_me);
    aclshmem_quiet();
    CHECK(read_dev(sig) == 7, "typed put_signal_nbi ADD to self: device signal %d, expected 7", read_dev(sig));
    aclshmem_put32_signal(dst, src, 64, sig, 11, ACLSHMEM_SIGNAL_SET, g_me);
    CHECK(read_dev(sig) == 11, "sized put_signal to self: device signal %d, expected 11", read_dev(sig));
    aclshmemx_putmem_signal(dst, src, sizeof src, sig, 1, ACLSHMEM_SIGNAL_ADD, g_me);
    CHECK(read_dev(sig) == 12, "putmem_signal to self: device signal %d, expected 12", read_dev(sig));
    aclshmemx_putmem_signal_nbi(dst, src, sizeof src, sig, 20, ACLSHMEM_SIGNAL_SET, g_me);
    aclshmem_quiet();
    CHECK(read_dev(sig) == 20, "putmem_signal_nbi to self: device signal %d, expected 20", read_dev(sig));

    /* refused: another PE, plain host memory, freed device memory */
    if (g_n > 1) {
        aclshmem_int32_put_signal(dst, src, 64, (uint8_t *)sig, 99, ACLSHMEM_SIGNAL_SET, g_right);
        CHECK(read_dev(sig) == 20, "a device signal word aimed at PE %d was written", g_right);
    }
    int32_t host_word = 3;
    aclshmem_int32_put_signal(dst, src, 64, (uint8_t *)&host_word, 99, ACLSHMEM_SIGNAL_SET, g_me);
    CHECK(host_word == 3, "a plain host signal word was written");
    /* waits: on the device word (a signal word, whose condition holds), and on the plain host word,
       which nothing could ever signal: refused (logged), not waited on forever */
    aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, 20);
    aclshmem_signal_wait_until(&host_word, ACLSHMEM_CMP_EQ, 99);
    CHECK_RC(aclrtFree(dev), ACL_SUCCESS);
    void *dev2 = NULL;
    CHECK_RC(aclrtMallocHost(&dev2, 64), ACL_SUCCESS);
    int32_t *pinned = (int32_t *)dev2;
    *pinned = 4;
    aclshmem_int32_put_signal(dst, src, 64, (uint8_t *)pinned, 99, ACLSHMEM_SIGNAL_SET, g_me);
    CHECK(*pinned == 4, "an aclrtMallocHost signal word was written (only device memory is accepted)");
    CHECK_RC(aclrtFreeHost(dev2), ACL_SUCCESS);
    acl_end(s);
}

#else /* STREAM_TESTS_NO_ACL */

/* ---------------------------------------------------------------------------------------------- */
/* Without an ACL runtime                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* ---- inline ------------------------------------------------------------------------------------
 * No ACL runtime in the process (the program is not linked with libascendcl): every on-stream call
 * runs inline, so its effect is complete when it returns; NULL streams throughout.
 */
#define INLINE_ROUNDS 20
#define INLINE_BYTES 4096

static void scenario_inline(void)
{
    CHECK(dlsym(RTLD_DEFAULT, "aclrtLaunchHostFunc") == NULL,
          "an ACL runtime is loaded: this build must not link libascendcl");
    CHECK(util_get_ffts_config() == 0, "util_get_ffts_config() before init");
    shmem_begin();
    CHECK(util_get_ffts_config() == 0, "util_get_ffts_config() after init");

    uint8_t *send = sym_alloc(INLINE_BYTES);
    uint8_t *recv = sym_alloc(INLINE_BYTES);
    int32_t *sig = sym_alloc(sizeof(int32_t));
    uint8_t *got = malloc(INLINE_BYTES);
    CHECK(got != NULL, "malloc");
    aclshmem_handle_t world = {ACLSHMEM_TEAM_WORLD};
    aclshmem_barrier_all();

    for (int r = 0; r < INLINE_ROUNDS; r++) {
        fill(send, INLINE_BYTES, g_me, r);
        memset(got, 0, INLINE_BYTES);
        aclshmemx_putmem_on_stream(recv, send, INLINE_BYTES, g_right, NULL);
        aclshmemx_quiet_on_stream(NULL);
        aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_ADD, g_right, NULL);
        aclshmemx_barrier_all_on_stream(NULL);
        /* inline: both complete when the barrier returned */
        expect(recv, INLINE_BYTES, g_left, r, "inline put, checked right after the inline barrier");
        CHECK(*sig == r + 1, "round %d: signal %d, expected %d", r, *sig, r + 1);
        aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, r + 1, NULL); /* satisfied */
        aclshmemx_getmem_on_stream(got, send, INLINE_BYTES, g_left, NULL);
        expect(got, INLINE_BYTES, g_left, r, "inline get, checked right after it returned");
        aclshmemx_handle_wait(world, NULL);
        aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, NULL); /* nobody refills send too early */
    }

    /* a handle wait ends with a barrier of the team, as the original's kernel does: once ours
       returned, what the left neighbour put before its own handle wait has landed, also when the
       neighbour comes late */
    for (int r = 0; r < 3; r++) {
        if ((g_me + r) % 2 == 1) {
            sleep_ms(150);
        }
        fill(send, INLINE_BYTES, g_me, 40 + r);
        aclshmemx_putmem_on_stream(recv, send, INLINE_BYTES, g_right, NULL);
        aclshmemx_handle_wait(world, NULL);
        expect(recv, INLINE_BYTES, g_left, 40 + r, "put by the left neighbour before its handle wait");
        aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, NULL); /* nobody refills send too early */
    }

    /* a failing call is logged and returns (no stream to report it) */
    uint8_t local[64];
    memset(local, 0, sizeof local);
    aclshmemx_putmem_on_stream(local, send, sizeof local, g_right, NULL);
    expect_zero(local, sizeof local, "out-of-heap inline put destination");
    mark("inline_error_returned");

    free(got);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
}


/* The ACL runtime loaded after init (`dlopen(RTLD_GLOBAL)`, as Python's `shmem.streams` does): the
   stream calls made before ran inline, the ones after go on the runtime's streams. A wait queued on
   a stream must return at once although its signal comes later from the left neighbour, who sets
   it only after its own wait call returned: run inline, every PE would wait for ever (the job's
   timeout fails the test). The library path is $STREAM_TESTS_ACL_LIB. */
static void scenario_late_runtime(void)
{
    CHECK(dlsym(RTLD_DEFAULT, "aclrtLaunchHostFunc") == NULL,
          "an ACL runtime is loaded: this build must not link libascendcl");
    shmem_begin();
    int32_t *sig = sym_alloc(sizeof(int32_t));
    int32_t *box = sym_alloc(sizeof(int32_t));
    *sig = 0;
    *box = 0;
    aclshmem_barrier_all();
    /* before the runtime: inline (and the library's look for it misses) */
    int32_t one = 1;
    aclshmemx_putmem_on_stream(box, &one, sizeof one, g_right, NULL);
    aclshmem_barrier_all();
    CHECK(*box == 1, "inline put before the runtime was loaded: %d", *box);

    const char *path = getenv("STREAM_TESTS_ACL_LIB");
    CHECK(path != NULL, "STREAM_TESTS_ACL_LIB not set");
    void *acl = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    CHECK(acl != NULL, "dlopen %s: %s", path, dlerror());
    int (*init)(const char *) = (int (*)(const char *))dlsym(acl, "aclInit");
    int (*set_device)(int32_t) = (int (*)(int32_t))dlsym(acl, "aclrtSetDevice");
    int (*create)(void **) = (int (*)(void **))dlsym(acl, "aclrtCreateStream");
    int (*sync)(void *) = (int (*)(void *))dlsym(acl, "aclrtSynchronizeStream");
    int (*destroy)(void *) = (int (*)(void *))dlsym(acl, "aclrtDestroyStream");
    CHECK(init && set_device && create && sync && destroy, "ACL entry points missing");
    CHECK_RC(init(NULL), 0);
    CHECK_RC(set_device(0), 0);
    void *stream = NULL;
    CHECK_RC(create(&stream), 0);

    *box = 0;
    aclshmem_barrier_all();
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, 1, stream);
    mark("late_runtime_wait_returned");
    /* ordered after the wait on the stream: lands only once the signal came */
    int32_t two = 2;
    aclshmemx_putmem_on_stream(box, &two, sizeof two, g_right, stream);
    aclshmem_int32_p(sig, 1, g_right);
    CHECK_RC(sync(stream), 0);
    aclshmem_barrier_all();
    CHECK(*sig == 1, "signal %d", *sig);
    CHECK(*box == 2, "put queued after the wait: %d", *box);

    CHECK_RC(destroy(stream), 0);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
}

#endif /* STREAM_TESTS_NO_ACL */

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
#ifndef STREAM_TESTS_NO_ACL
        {"ring", scenario_ring},
        {"wait_before_put", scenario_wait_before_put},
        {"phases", scenario_phases},
        {"many_streams", scenario_many_streams},
        {"destroy_pending", scenario_destroy_pending},
        {"sync_timeout", scenario_sync_timeout},
        {"errors", scenario_errors},
        {"prof", scenario_prof},
        {"finalize_pending", scenario_finalize_pending},
        {"ctx_switch", scenario_ctx_switch},
        {"self_signal_device", scenario_self_signal_device},
#else
        {"inline", scenario_inline},
        {"late_runtime", scenario_late_runtime},
#endif
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(scenarios[i].name, argv[1]) == 0) {
            scenarios[i].run();
            return 0;
        }
    }
    fail("unknown scenario (this build has %zu)", sizeof scenarios / sizeof scenarios[0]);
}

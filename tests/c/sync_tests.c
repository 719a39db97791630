/*
 * sync_tests.c - multi-PE scenarios of put-with-signal, signal waits, the typed wait/test families
 * and the host atomics. Run under aclshmrun: `aclshmrun -n N sync_tests <scenario> [rounds]`.
 *
 * Scenarios: producer_consumer, wait_families, edge_cases, atomics, cas_lock, ring_waits.
 *
 * Every failed check prints `FAIL: <scenario>: <what> (pe X)` and exits 1; PE 0 prints
 * `OK <scenario>` when the scenario passed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#include "test_util.h"
#include "peer_util.h"

static int g_npes = -1;
static size_t g_heap_size; /* local_mem_size + ACLSHMEM_EXTRA_SIZE */

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void init(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_from_env(&attr) == 0, "aclshmemx_set_attr_from_env failed");
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    CHECK(rc == 0, "aclshmemx_init_attr returned %d", rc);
    g_heap_size = (size_t)attr.local_mem_size + (size_t)ACLSHMEM_EXTRA_SIZE;
    g_pe = aclshmem_my_pe();
    g_npes = aclshmem_n_pes();
}

static void finish(void)
{
    aclshmem_barrier_all();
    int rc = aclshmem_finalize();
    CHECK(rc == 0, "aclshmem_finalize returned %d", rc);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
        fflush(stdout);
    }
}

static void *sym_calloc(size_t n, size_t size)
{
    void *p = aclshmem_calloc(n, size);
    CHECK(p != NULL, "aclshmem_calloc(%zu, %zu) returned NULL", n, size);
    return p;
}

/* ------------------------------------------------------------------------------------------ */
/* Every put-with-signal family behind one dispatcher: 11 typed x {blocking, nbi}, 5 sized x    */
/* {blocking, nbi}, putmem x {blocking, nbi}, and the original's alias shmem_put_double_mem_signal */
/* (spec 14-A2: its misspelled target is exported here). `bytes` must be a multiple of 16.     */
/* ------------------------------------------------------------------------------------------ */

#define NFAM 35

static const char *const g_fam_names[NFAM] = {
    "float_put_signal",  "float_put_signal_nbi",  "double_put_signal", "double_put_signal_nbi",
    "int8_put_signal",   "int8_put_signal_nbi",   "int16_put_signal",  "int16_put_signal_nbi",
    "int32_put_signal",  "int32_put_signal_nbi",  "int64_put_signal",  "int64_put_signal_nbi",
    "uint8_put_signal",  "uint8_put_signal_nbi",  "uint16_put_signal", "uint16_put_signal_nbi",
    "uint32_put_signal", "uint32_put_signal_nbi", "uint64_put_signal", "uint64_put_signal_nbi",
    "char_put_signal",   "char_put_signal_nbi",   "put8_signal",       "put8_signal_nbi",
    "put16_signal",      "put16_signal_nbi",      "put32_signal",      "put32_signal_nbi",
    "put64_signal",      "put64_signal_nbi",      "put128_signal",     "put128_signal_nbi",
    "putmem_signal",     "putmem_signal_nbi",     "shmem_put_double_mem_signal",
};

static int fam_is_nbi(int f)
{
    return f % 2 == 1;
}

static void put_signal_fam(int f, void *dst, void *src, size_t bytes, void *sig, int32_t signal, int op, int pe)
{
    switch (f) {
#define TYPED_CASE(I, NAME, T)                                                                                    \
    case 2 * (I):                                                                                                 \
        aclshmem_##NAME##_put_signal((T *)dst, (T *)src, bytes / sizeof(T), (uint8_t *)sig, signal, op, pe);     \
        break;                                                                                                    \
    case 2 * (I) + 1:                                                                                             \
        aclshmem_##NAME##_put_signal_nbi((T *)dst, (T *)src, bytes / sizeof(T), (uint8_t *)sig, signal, op, pe); \
        break;
        TYPED_CASE(0, float, float)
        TYPED_CASE(1, double, double)
        TYPED_CASE(2, int8, int8_t)
        TYPED_CASE(3, int16, int16_t)
        TYPED_CASE(4, int32, int32_t)
        TYPED_CASE(5, int64, int64_t)
        TYPED_CASE(6, uint8, uint8_t)
        TYPED_CASE(7, uint16, uint16_t)
        TYPED_CASE(8, uint32, uint32_t)
        TYPED_CASE(9, uint64, uint64_t)
        TYPED_CASE(10, char, char)
#undef TYPED_CASE
#define SIZED_CASE(I, BITS)                                                                                  \
    case 22 + 2 * (I):                                                                                       \
        aclshmem_put##BITS##_signal(dst, src, bytes / ((BITS) / 8), (int32_t *)sig, signal, op, pe);     \
        break;                                                                                               \
    case 23 + 2 * (I):                                                                                       \
        aclshmem_put##BITS##_signal_nbi(dst, src, bytes / ((BITS) / 8), (int32_t *)sig, signal, op, pe); \
        break;
        SIZED_CASE(0, 8)
        SIZED_CASE(1, 16)
        SIZED_CASE(2, 32)
        SIZED_CASE(3, 64)
        SIZED_CASE(4, 128)
#undef SIZED_CASE
    case 32:
        aclshmemx_putmem_signal(dst, src, bytes, sig, signal, op, pe);
        break;
    case 33:
        aclshmemx_putmem_signal_nbi(dst, src, bytes, sig, signal, op, pe);
        break;
    case 34:
        shmem_put_double_mem_signal((double *)dst, (double *)src, bytes / sizeof(double), (uint8_t *)sig, signal, op,
                                    pe);
        break;
    default:
        fail("bad family %d", f);
    }
    if (fam_is_nbi(f)) {
        aclshmem_quiet(); /* the source buffer is reused afterwards */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* producer_consumer                                                                           */
/* ------------------------------------------------------------------------------------------ */

#define PC_BLOCK 1024

static uint8_t pc_byte(int round, int sender, size_t j)
{
    return (uint8_t)(round * 131 + sender * 17 + (int)j * 7 + (int)(j >> 8) * 3 + 1);
}

static void scenario_producer_consumer(int rounds)
{
    const int me = g_pe, n = g_npes;
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    uint8_t *blk = sym_calloc(PC_BLOCK, 1);
    int32_t *ctl = sym_calloc(4, sizeof(int32_t)); /* [0] data signal, [1] ack signal */
    int32_t *ackdata = sym_calloc(4, sizeof(int32_t));
    volatile int32_t *vctl = ctl;
    uint8_t src[PC_BLOCK];
    int32_t acksrc[4];
    aclshmem_barrier_all();

    double t0 = now_s();
    for (int r = 1; r <= rounds; r++) {
        const int add_phase = (r / 50) % 2 == 1; /* SET r, or ADD 1 (the word then also reads r) */
        const int op = add_phase ? ACLSHMEM_SIGNAL_ADD : ACLSHMEM_SIGNAL_SET;
        /* the right neighbour must have consumed round r-1 before its block is overwritten */
        if (r > 1) {
            aclshmem_signal_wait_until(&ctl[1], ACLSHMEM_CMP_GE, r - 1);
            CHECK(vctl[1] == r - 1, "round %d: ack word %d after waiting for >= %d", r, vctl[1], r - 1);
            volatile int32_t *va = ackdata;
            CHECK(va[0] == r - 1 && va[1] == right && va[2] == ((r - 1) ^ 0x5a5a) && va[3] == ~(r - 1),
                  "round %d: ack payload {%d, %d, %d, %d} from pe %d is stale or torn", r, va[0], va[1], va[2],
                  va[3], right);
        }
        const int fam = r % NFAM;
        const size_t len = 16 * (size_t)(1 + (r * 7) % (PC_BLOCK / 16));
        for (size_t j = 0; j < len; j++) {
            src[j] = pc_byte(r, me, j);
        }
        put_signal_fam(fam, blk, src, len, &ctl[0], add_phase ? 1 : r, op, right);

        aclshmem_signal_wait_until(&ctl[0], ACLSHMEM_CMP_GE, r);
        int32_t s = vctl[0];
        CHECK(s == r, "round %d (%s): signal word %d after waiting for >= %d", r, g_fam_names[fam], s, r);
        volatile uint8_t *vb = blk;
        for (size_t j = 0; j < len; j++) {
            uint8_t want = pc_byte(r, left, j);
            if (vb[j] != want) {
                int stale = vb[j] == pc_byte(r - 1, left, j);
                fail("round %d (%s, %zu bytes, %s): byte %zu is 0x%02x, expected 0x%02x%s", r, g_fam_names[fam],
                     len, add_phase ? "ADD" : "SET", j, vb[j], want, stale ? " (the previous round's data)" : "");
            }
        }
        /* ack to the left neighbour: its round r block has been read */
        acksrc[0] = r;
        acksrc[1] = me;
        acksrc[2] = r ^ 0x5a5a;
        acksrc[3] = ~r;
        const int ackfam = (r * 5 + 3) % NFAM;
        put_signal_fam(ackfam, ackdata, acksrc, sizeof acksrc, &ctl[1], add_phase ? 1 : r, op, left);
    }
    double dt = now_s() - t0;
    aclshmem_barrier_all();
    if (me == 0) {
        printf("producer_consumer: %d PEs, %d rounds, %.1f us per round\n", n, rounds, dt * 1e6 / rounds);
    }
    aclshmem_free(ackdata);
    aclshmem_free(ctl);
    aclshmem_free(blk);
}

/* ------------------------------------------------------------------------------------------ */
/* wait_families                                                                                */
/* ------------------------------------------------------------------------------------------ */

#define NW 8
#define DELAY_US 1500
static const int g_status[NW] = {0, 1, 0, 0, 1, 0, 0, 0}; /* elements 1 and 4 excluded */
static const size_t g_included[] = {0, 2, 3, 5, 6, 7};
#define NINCL (sizeof g_included / sizeof g_included[0])

static const struct {
    int cmp;
    const char *name;
    int init, newv, val;
} g_steps[6] = {
    {ACLSHMEM_CMP_EQ, "EQ", 10, 20, 20}, {ACLSHMEM_CMP_NE, "NE", 20, 21, 20}, {ACLSHMEM_CMP_GT, "GT", 21, 30, 25},
    {ACLSHMEM_CMP_GE, "GE", 30, 40, 40}, {ACLSHMEM_CMP_LT, "LT", 40, 5, 10},  {ACLSHMEM_CMP_LE, "LE", 50, 7, 7},
};

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* `count` indices in `got` (any order) must be exactly `want[0..nwant)` (ascending). */
static void check_indices(const char *ty, const char *what, size_t count, size_t *got, const size_t *want,
                          size_t nwant)
{
    CHECK(count == nwant, "%s %s: count %zu, expected %zu", ty, what, count, nwant);
    qsort(got, count, sizeof *got, cmp_size);
    for (size_t i = 0; i < nwant; i++) {
        CHECK(got[i] == want[i], "%s %s: index #%zu is %zu, expected %zu", ty, what, i, got[i], want[i]);
    }
}

#define SET_ALL(T, v)                    \
    do {                                  \
        for (int i_ = 0; i_ < NW; i_++) { \
            viv[i_] = (T)(v);             \
        }                                 \
    } while (0)

#define DEFINE_WAIT_FAMILIES(NAME, T)                                                                                \
    static void wait_families_##NAME(void)                                                                           \
    {                                                                                                                \
        const char *ty = #NAME;                                                                                      \
        const int me = g_pe;                                                                                         \
        T *iv = sym_calloc(NW, sizeof(T));                                                                           \
        volatile T *viv = iv;                                                                                        \
        T cv[NW];                                                                                                    \
        size_t idx[NW], res;                                                                                         \
        int ires;                                                                                                    \
        for (int i = 0; i < NW; i++) {                                                                               \
            cv[i] = (T)(10 + i);                                                                                     \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until with every operator; test before and after */                                                 \
        for (int k = 0; k < 6; k++) {                                                                                \
            if (me == 0) {                                                                                           \
                viv[0] = (T)g_steps[k].init;                                                                         \
                ires = 7;                                                                                            \
                aclshmem_##NAME##_test(iv, g_steps[k].cmp, (T)g_steps[k].val, &ires);                                \
                CHECK(ires == 0, "%s test %s %d on %d gave %d before the update", ty, g_steps[k].name,               \
                      g_steps[k].val, g_steps[k].init, ires);                                                        \
            }                                                                                                        \
            aclshmem_barrier_all();                                                                                  \
            if (me == 1) {                                                                                           \
                sleep_us(DELAY_US);                                                                                  \
                aclshmem_##NAME##_p(&iv[0], (T)g_steps[k].newv, 0);                                                  \
            } else if (me == 0) {                                                                                    \
                aclshmem_##NAME##_wait_until(iv, g_steps[k].cmp, (T)g_steps[k].val);                                 \
                CHECK(viv[0] == (T)g_steps[k].newv, "%s wait_until %s %d returned with value %lld, expected %d", ty, \
                      g_steps[k].name, g_steps[k].val, (long long)viv[0], g_steps[k].newv);                          \
                ires = 7;                                                                                            \
                aclshmem_##NAME##_test(iv, g_steps[k].cmp, (T)g_steps[k].val, &ires);                                \
                CHECK(ires == 1, "%s test %s %d on %d gave %d after the update", ty, g_steps[k].name,                \
                      g_steps[k].val, g_steps[k].newv, ires);                                                        \
            }                                                                                                        \
            aclshmem_barrier_all();                                                                                  \
        }                                                                                                            \
        /* wait */                                                                                                   \
        if (me == 0) {                                                                                               \
            viv[0] = (T)3;                                                                                           \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            sleep_us(DELAY_US);                                                                                      \
            aclshmem_##NAME##_p(&iv[0], (T)4, 0);                                                                    \
        } else if (me == 0) {                                                                                        \
            aclshmem_##NAME##_wait(iv, (T)3);                                                                        \
            CHECK(viv[0] == (T)4, "%s wait(3) returned with value %lld", ty, (long long)viv[0]);                     \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_all with a status mask: PE 1 fills the included elements one by one */                         \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 0);                                                                                              \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                               \
            CHECK(res == SIZE_MAX, "%s test_any before all: %zu", ty, res);                                          \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some(iv, NW, idx, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                         \
            CHECK(res == 0, "%s test_some before all: %zu", ty, res);                                                \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            for (size_t j = 0; j < NINCL; j++) {                                                                     \
                sleep_us(DELAY_US / 4);                                                                              \
                aclshmem_##NAME##_p(&iv[g_included[j]], (T)9, 0);                                                    \
            }                                                                                                        \
        } else if (me == 0) {                                                                                        \
            aclshmem_##NAME##_wait_until_all(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9);                               \
            for (int i = 0; i < NW; i++) {                                                                           \
                T want = g_status[i] ? (T)0 : (T)9;                                                                  \
                CHECK(viv[i] == want, "%s wait_until_all returned with element %d = %lld", ty, i,                    \
                      (long long)viv[i]);                                                                            \
            }                                                                                                        \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some(iv, NW, idx, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                         \
            check_indices(ty, "test_some after all", res, idx, g_included, NINCL);                                   \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                               \
            CHECK(res < NW && g_status[res] == 0, "%s test_any after all: %zu", ty, res);                            \
            /* NULL status: every element takes part; all are >= 0 */                                               \
            aclshmem_##NAME##_wait_until_all(iv, NW, NULL, ACLSHMEM_CMP_GE, (T)0);                                   \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_any: the excluded elements already satisfy the condition */                                    \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 0);                                                                                              \
            viv[1] = (T)9;                                                                                           \
            viv[4] = (T)9;                                                                                           \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                               \
            CHECK(res == SIZE_MAX, "%s test_any before any: %zu (excluded elements counted?)", ty, res);             \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any(iv, NW, NULL, ACLSHMEM_CMP_EQ, (T)9, &res);                                   \
            CHECK(res == 1 || res == 4, "%s test_any with NULL status: %zu, expected 1 or 4", ty, res);              \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some(iv, NW, idx, NULL, ACLSHMEM_CMP_EQ, (T)9, &res);                             \
            {                                                                                                        \
                static const size_t w14[] = {1, 4};                                                                  \
                check_indices(ty, "test_some with NULL status", res, idx, w14, 2);                                   \
            }                                                                                                        \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            sleep_us(DELAY_US);                                                                                      \
            aclshmem_##NAME##_p(&iv[6], (T)9, 0);                                                                    \
        } else if (me == 0) {                                                                                        \
            res = 77;                                                                                                \
            aclshmem_##NAME##_wait_until_any(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                         \
            CHECK(res == 6, "%s wait_until_any: index %zu, expected 6", ty, res);                                    \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any(iv, NW, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                               \
            CHECK(res == 6, "%s test_any after any: %zu, expected 6", ty, res);                                      \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some(iv, NW, idx, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                         \
            {                                                                                                        \
                static const size_t w6[] = {6};                                                                      \
                check_indices(ty, "test_some after any", res, idx, w6, 1);                                           \
            }                                                                                                        \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_some: satisfied at once (0 and 3 included, 1 and 4 excluded) */                                \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 0);                                                                                              \
            viv[0] = viv[1] = viv[3] = viv[4] = (T)9;                                                                \
            res = 77;                                                                                                \
            aclshmem_##NAME##_wait_until_some(iv, NW, idx, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                   \
            static const size_t w03[] = {0, 3};                                                                      \
            check_indices(ty, "wait_until_some (already satisfied)", res, idx, w03, 2);                              \
            SET_ALL(T, 0);                                                                                              \
            viv[1] = viv[4] = (T)9;                                                                                  \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_some: PE 1 sets element 7 later */                                                             \
        if (me == 1) {                                                                                               \
            sleep_us(DELAY_US);                                                                                      \
            aclshmem_##NAME##_p(&iv[7], (T)9, 0);                                                                    \
        } else if (me == 0) {                                                                                        \
            res = 77;                                                                                                \
            aclshmem_##NAME##_wait_until_some(iv, NW, idx, g_status, ACLSHMEM_CMP_EQ, (T)9, &res);                   \
            static const size_t w7[] = {7};                                                                          \
            check_indices(ty, "wait_until_some", res, idx, w7, 1);                                                   \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_all_vector (GE cv[i]) */                                                                       \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 0);                                                                                              \
            ires = 7;                                                                                                \
            aclshmem_##NAME##_test_all_vector(iv, NW, g_status, ACLSHMEM_CMP_GE, cv, &ires);                         \
            CHECK(ires == 0, "%s test_all_vector before all_vector: %d", ty, ires);                                  \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any_vector(iv, NW, g_status, ACLSHMEM_CMP_GE, cv, &res);                          \
            CHECK(res == SIZE_MAX, "%s test_any_vector before all_vector: %zu", ty, res);                            \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, g_status, ACLSHMEM_CMP_GE, cv, &res);                    \
            CHECK(res == 0, "%s test_some_vector before all_vector: %zu", ty, res);                                  \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            for (size_t j = 0; j < NINCL; j++) {                                                                     \
                size_t i = g_included[j];                                                                            \
                sleep_us(DELAY_US / 4);                                                                              \
                aclshmem_##NAME##_p(&iv[i], (T)(10 + i + i % 2), 0);                                                 \
            }                                                                                                        \
        } else if (me == 0) {                                                                                        \
            aclshmem_##NAME##_wait_until_all_vector(iv, NW, g_status, ACLSHMEM_CMP_GE, cv);                          \
            for (int i = 0; i < NW; i++) {                                                                           \
                T want = g_status[i] ? (T)0 : (T)(10 + i + i % 2);                                                   \
                CHECK(viv[i] == want, "%s wait_until_all_vector returned with element %d = %lld", ty, i,             \
                      (long long)viv[i]);                                                                            \
            }                                                                                                        \
            ires = 7;                                                                                                \
            aclshmem_##NAME##_test_all_vector(iv, NW, g_status, ACLSHMEM_CMP_GE, cv, &ires);                         \
            CHECK(ires == 1, "%s test_all_vector after all_vector: %d", ty, ires);                                   \
            ires = 7;                                                                                                \
            aclshmem_##NAME##_test_all_vector(iv, NW, NULL, ACLSHMEM_CMP_GE, cv, &ires);                             \
            CHECK(ires == 0, "%s test_all_vector with NULL status: %d", ty, ires);                                   \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, g_status, ACLSHMEM_CMP_GE, cv, &res);                    \
            check_indices(ty, "test_some_vector after all_vector", res, idx, g_included, NINCL);                     \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, g_status, ACLSHMEM_CMP_GT, cv, &res);                    \
            {                                                                                                        \
                static const size_t wodd[] = {3, 5, 7};                                                              \
                check_indices(ty, "test_some_vector GT", res, idx, wodd, 3);                                         \
            }                                                                                                        \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_any_vector (EQ cv[i]); element 2 gets cv[3] first (no match for element 2) */                  \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 0);                                                                                              \
            viv[1] = cv[1];                                                                                          \
            viv[4] = cv[4];                                                                                          \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any_vector(iv, NW, g_status, ACLSHMEM_CMP_EQ, cv, &res);                          \
            CHECK(res == SIZE_MAX, "%s test_any_vector before any_vector: %zu", ty, res);                            \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            aclshmem_##NAME##_p(&iv[2], cv[3], 0);                                                                   \
            sleep_us(DELAY_US);                                                                                      \
            aclshmem_##NAME##_p(&iv[5], cv[5], 0);                                                                   \
        } else if (me == 0) {                                                                                        \
            res = 77;                                                                                                \
            aclshmem_##NAME##_wait_until_any_vector(iv, NW, g_status, ACLSHMEM_CMP_EQ, cv, &res);                    \
            CHECK(res == 5, "%s wait_until_any_vector: index %zu, expected 5", ty, res);                             \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any_vector(iv, NW, g_status, ACLSHMEM_CMP_EQ, cv, &res);                          \
            CHECK(res == 5, "%s test_any_vector after any_vector: %zu", ty, res);                                    \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, NULL, ACLSHMEM_CMP_EQ, cv, &res);                        \
            static const size_t w145[] = {1, 4, 5};                                                                  \
            check_indices(ty, "test_some_vector NULL status after any_vector", res, idx, w145, 3);                   \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        /* wait_until_some_vector (LT cv[i]); the excluded elements already satisfy it */                            \
        if (me == 0) {                                                                                               \
            SET_ALL(T, 50);                                                                                             \
            viv[1] = viv[4] = (T)0;                                                                                  \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, g_status, ACLSHMEM_CMP_LT, cv, &res);                    \
            CHECK(res == 0, "%s test_some_vector before some_vector: %zu", ty, res);                                 \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        if (me == 1) {                                                                                               \
            sleep_us(DELAY_US);                                                                                      \
            aclshmem_##NAME##_p(&iv[3], (T)12, 0);                                                                   \
        } else if (me == 0) {                                                                                        \
            res = 77;                                                                                                \
            aclshmem_##NAME##_wait_until_some_vector(iv, NW, idx, g_status, ACLSHMEM_CMP_LT, cv, &res);              \
            static const size_t w3[] = {3};                                                                          \
            check_indices(ty, "wait_until_some_vector", res, idx, w3, 1);                                            \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_some_vector(iv, NW, idx, NULL, ACLSHMEM_CMP_LE, cv, &res);                        \
            static const size_t w134[] = {1, 3, 4};                                                                  \
            check_indices(ty, "test_some_vector LE NULL status", res, idx, w134, 3);                                 \
            ires = 7;                                                                                                \
            aclshmem_##NAME##_test_all_vector(iv, NW, g_status, ACLSHMEM_CMP_NE, cv, &ires);                         \
            CHECK(ires == 1, "%s test_all_vector NE: %d", ty, ires);                                                 \
            res = 77;                                                                                                \
            aclshmem_##NAME##_test_any_vector(iv, NW, g_status, ACLSHMEM_CMP_LE, cv, &res);                          \
            CHECK(res == 3, "%s test_any_vector LE: %zu", ty, res);                                                  \
        }                                                                                                            \
        aclshmem_barrier_all();                                                                                      \
        aclshmem_free(iv);                                                                                           \
    }

/* Types of the wait/test families (no double). */
#define WAIT_TYPES(X)       \
    X(float, float)         \
    X(int8, int8_t)         \
    X(int16, int16_t)       \
    X(int32, int32_t)       \
    X(int64, int64_t)       \
    X(uint8, uint8_t)       \
    X(uint16, uint16_t)     \
    X(uint32, uint32_t)     \
    X(uint64, uint64_t)     \
    X(char, char)

WAIT_TYPES(DEFINE_WAIT_FAMILIES)

static void scenario_wait_families(void)
{
    CHECK(g_npes == 2, "wait_families needs 2 PEs, got %d", g_npes);
#define RUN_WAIT(NAME, T) wait_families_##NAME();
    WAIT_TYPES(RUN_WAIT)
#undef RUN_WAIT
}

/* ------------------------------------------------------------------------------------------ */
/* edge_cases                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define NE 4

#define DEFINE_EDGE(NAME, T)                                                                                        \
    static void edge_##NAME(void)                                                                                   \
    {                                                                                                               \
        const char *ty = #NAME;                                                                                     \
        T *iv = sym_calloc(NE, sizeof(T)); /* all 0: EQ 1 never holds */                                            \
        T cv[NE] = {(T)1, (T)1, (T)1, (T)1};                                                                        \
        static const int excl[NE] = {1, 1, 1, 1};                                                                   \
        size_t idx[NE], res;                                                                                        \
        int ires;                                                                                                   \
        const int EQ = ACLSHMEM_CMP_EQ;                                                                             \
        /* pass 0: nelems 0; pass 1: every element excluded -- nothing takes part */                                \
        for (int pass = 0; pass < 2; pass++) {                                                                      \
            size_t n = pass == 0 ? 0 : NE;                                                                          \
            const int *st = pass == 0 ? NULL : excl;                                                                \
            const char *what = pass == 0 ? "nelems 0" : "all excluded";                                             \
            aclshmem_##NAME##_wait_until_all(iv, n, st, EQ, (T)1);                                                  \
            aclshmem_##NAME##_wait_until_all_vector(iv, n, st, EQ, cv);                                             \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_any(iv, n, st, EQ, (T)1, &res);                                            \
            CHECK(res == SIZE_MAX, "%s wait_until_any %s: %zu", ty, what, res);                                     \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_any_vector(iv, n, st, EQ, cv, &res);                                       \
            CHECK(res == SIZE_MAX, "%s wait_until_any_vector %s: %zu", ty, what, res);                              \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_some(iv, n, idx, st, EQ, (T)1, &res);                                      \
            CHECK(res == 0, "%s wait_until_some %s: %zu", ty, what, res);                                           \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_some_vector(iv, n, idx, st, EQ, cv, &res);                                 \
            CHECK(res == 0, "%s wait_until_some_vector %s: %zu", ty, what, res);                                    \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_any(iv, n, st, EQ, (T)1, &res);                                                  \
            CHECK(res == SIZE_MAX, "%s test_any %s: %zu", ty, what, res);                                           \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_some(iv, n, idx, st, EQ, (T)1, &res);                                            \
            CHECK(res == 0, "%s test_some %s: %zu", ty, what, res);                                                 \
            ires = 7;                                                                                               \
            aclshmem_##NAME##_test_all_vector(iv, n, st, EQ, cv, &ires);                                            \
            CHECK(ires == 1, "%s test_all_vector %s: %d", ty, what, ires);                                          \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_any_vector(iv, n, st, EQ, cv, &res);                                             \
            CHECK(res == SIZE_MAX, "%s test_any_vector %s: %zu", ty, what, res);                                    \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_some_vector(iv, n, idx, st, EQ, cv, &res);                                       \
            CHECK(res == 0, "%s test_some_vector %s: %zu", ty, what, res);                                          \
        }                                                                                                           \
        /* bad arguments: pass 0 NULL ivars, pass 1 invalid cmp 9, pass 2 invalid cmp -1, pass 3 ivars     */     \
        /* outside the symmetric heap (a local array; ivars are symmetric, spec 8.5.2): no waiting         */     \
        T local_iv[NE] = {0};                                                                                       \
        for (int pass = 0; pass < 4; pass++) {                                                                      \
            T *p = pass == 0 ? NULL : pass == 3 ? local_iv : iv;                                                    \
            int c = pass == 0 || pass == 3 ? EQ : pass == 1 ? 9 : -1;                                               \
            const char *what = pass == 0 ? "NULL ivars" : pass == 1 ? "cmp 9" : pass == 2 ? "cmp -1" : "local ivars"; \
            /* with EQ the all/any/some forms would wait forever on 0 == 1 */                                       \
            aclshmem_##NAME##_wait_until(p, c, (T)1);                                                               \
            aclshmem_##NAME##_wait_until_all(p, NE, NULL, c, (T)1);                                                 \
            aclshmem_##NAME##_wait_until_all_vector(p, NE, NULL, c, cv);                                            \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_any(p, NE, NULL, c, (T)1, &res);                                           \
            CHECK(res == SIZE_MAX, "%s wait_until_any %s: %zu", ty, what, res);                                     \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_any_vector(p, NE, NULL, c, cv, &res);                                      \
            CHECK(res == SIZE_MAX, "%s wait_until_any_vector %s: %zu", ty, what, res);                              \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_some(p, NE, idx, NULL, c, (T)1, &res);                                     \
            CHECK(res == 0, "%s wait_until_some %s: %zu", ty, what, res);                                           \
            res = 77;                                                                                               \
            aclshmem_##NAME##_wait_until_some_vector(p, NE, idx, NULL, c, cv, &res);                                \
            CHECK(res == 0, "%s wait_until_some_vector %s: %zu", ty, what, res);                                    \
            /* the test forms on 0 with value 0: EQ would hold, so a "none" result shows the rejection */           \
            ires = 7;                                                                                               \
            aclshmem_##NAME##_test(p, pass == 0 ? EQ : c, (T)0, &ires);                                             \
            CHECK(ires == 0, "%s test %s: %d", ty, what, ires);                                                     \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_any(p, NE, NULL, c, (T)0, &res);                                                 \
            CHECK(res == SIZE_MAX, "%s test_any %s: %zu", ty, what, res);                                           \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_some(p, NE, idx, NULL, c, (T)0, &res);                                           \
            CHECK(res == 0, "%s test_some %s: %zu", ty, what, res);                                                 \
            T zeros[NE] = {0};                                                                                      \
            ires = 7;                                                                                               \
            aclshmem_##NAME##_test_all_vector(p, NE, NULL, c, zeros, &ires);                                        \
            CHECK(ires == 0, "%s test_all_vector %s: %d", ty, what, ires);                                          \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_any_vector(p, NE, NULL, c, zeros, &res);                                         \
            CHECK(res == SIZE_MAX, "%s test_any_vector %s: %zu", ty, what, res);                                    \
            res = 77;                                                                                               \
            aclshmem_##NAME##_test_some_vector(p, NE, idx, NULL, c, zeros, &res);                                   \
            CHECK(res == 0, "%s test_some_vector %s: %zu", ty, what, res);                                          \
        }                                                                                                           \
        /* NULL cmp_values with nelems > 0: bad arguments, no waiting */                                            \
        aclshmem_##NAME##_wait_until_all_vector(iv, NE, NULL, EQ, NULL);                                            \
        res = 77;                                                                                                   \
        aclshmem_##NAME##_wait_until_any_vector(iv, NE, NULL, EQ, NULL, &res);                                      \
        CHECK(res == SIZE_MAX, "%s wait_until_any_vector NULL cmp_values: %zu", ty, res);                           \
        res = 77;                                                                                                   \
        aclshmem_##NAME##_wait_until_some_vector(iv, NE, idx, NULL, EQ, NULL, &res);                                \
        CHECK(res == 0, "%s wait_until_some_vector NULL cmp_values: %zu", ty, res);                                 \
        res = 77;                                                                                                   \
        aclshmem_##NAME##_test_any_vector(iv, NE, NULL, EQ, NULL, &res);                                            \
        CHECK(res == SIZE_MAX, "%s test_any_vector NULL cmp_values: %zu", ty, res);                                 \
        res = 77;                                                                                                   \
        aclshmem_##NAME##_test_some_vector(iv, NE, idx, NULL, EQ, NULL, &res);                                      \
        CHECK(res == 0, "%s test_some_vector NULL cmp_values: %zu", ty, res);                                       \
        /* NULL res_out: satisfied conditions, valid and invalid cmp -- must not crash */                           \
        aclshmem_##NAME##_wait_until_any(iv, NE, NULL, EQ, (T)0, NULL);                                             \
        aclshmem_##NAME##_wait_until_any_vector(iv, NE, NULL, ACLSHMEM_CMP_LT, cv, NULL);                           \
        aclshmem_##NAME##_wait_until_some(iv, NE, idx, NULL, EQ, (T)0, NULL);                                       \
        aclshmem_##NAME##_wait_until_some_vector(iv, NE, idx, NULL, ACLSHMEM_CMP_LT, cv, NULL);                     \
        aclshmem_##NAME##_test(iv, EQ, (T)0, NULL);                                                                 \
        aclshmem_##NAME##_test_any(iv, NE, NULL, EQ, (T)0, NULL);                                                   \
        aclshmem_##NAME##_test_some(iv, NE, idx, NULL, EQ, (T)0, NULL);                                             \
        aclshmem_##NAME##_test_all_vector(iv, NE, NULL, ACLSHMEM_CMP_LT, cv, NULL);                                 \
        aclshmem_##NAME##_test_any_vector(iv, NE, NULL, ACLSHMEM_CMP_LT, cv, NULL);                                 \
        aclshmem_##NAME##_test_some_vector(iv, NE, idx, NULL, ACLSHMEM_CMP_LT, cv, NULL);                           \
        aclshmem_##NAME##_wait_until_any(iv, NE, NULL, 9, (T)0, NULL);                                              \
        aclshmem_##NAME##_wait_until_some(iv, NE, idx, NULL, 9, (T)0, NULL);                                        \
        aclshmem_##NAME##_test(iv, 9, (T)0, NULL);                                                                  \
        aclshmem_##NAME##_test_any(iv, NE, NULL, 9, (T)0, NULL);                                                    \
        aclshmem_##NAME##_test_some(iv, NE, idx, NULL, 9, (T)0, NULL);                                              \
        aclshmem_##NAME##_test_all_vector(iv, NE, NULL, 9, cv, NULL);                                               \
        aclshmem_##NAME##_test_any_vector(iv, NE, NULL, 9, cv, NULL);                                               \
        aclshmem_##NAME##_test_some_vector(iv, NE, idx, NULL, 9, cv, NULL);                                         \
        /* the valid forms still give exact answers on the same memory */                                           \
        ires = 7;                                                                                                   \
        aclshmem_##NAME##_test(iv, EQ, (T)0, &ires);                                                                \
        CHECK(ires == 1, "%s test EQ 0 on 0: %d", ty, ires);                                                        \
        res = 77;                                                                                                   \
        aclshmem_##NAME##_wait_until_some(iv, NE, idx, NULL, EQ, (T)0, &res);                                       \
        {                                                                                                           \
            static const size_t w0123[] = {0, 1, 2, 3};                                                             \
            check_indices(ty, "wait_until_some on satisfied elements", res, idx, w0123, 4);                         \
        }                                                                                                           \
        for (int i = 0; i < NE; i++) {                                                                              \
            CHECK(iv[i] == (T)0, "%s: element %d changed to %lld", ty, i, (long long)iv[i]);                        \
        }                                                                                                           \
        /* the comparisons use the type's own ordering: (T)-1 is negative for signed types, the                     \
         * maximum for unsigned ones; conditions that hold are satisfied at once */                                 \
        {                                                                                                           \
            const T a_ = (T)-1, b_ = (T)1;                                                                          \
            const int want_[6] = {a_ == b_, a_ != b_, a_ > b_, a_ >= b_, a_ < b_, a_ <= b_};                        \
            iv[0] = a_;                                                                                             \
            for (int c_ = 0; c_ < 6; c_++) {                                                                        \
                ires = 7;                                                                                           \
                aclshmem_##NAME##_test(iv, c_, b_, &ires);                                                          \
                CHECK(ires == want_[c_], "%s test %s: (T)-1 against 1 gave %d, expected %d", ty, g_steps[c_].name,  \
                      ires, want_[c_]);                                                                             \
                res = 77;                                                                                           \
                aclshmem_##NAME##_test_any(iv, 1, NULL, c_, b_, &res);                                              \
                CHECK(res == (want_[c_] ? 0 : SIZE_MAX), "%s test_any %s on (T)-1: %zu", ty, g_steps[c_].name,      \
                      res);                                                                                         \
                if (want_[c_]) {                                                                                    \
                    aclshmem_##NAME##_wait_until(iv, c_, b_);                                                       \
                }                                                                                                   \
            }                                                                                                       \
            iv[0] = (T)0;                                                                                           \
        }                                                                                                           \
        aclshmem_free(iv);                                                                                          \
    }

WAIT_TYPES(DEFINE_EDGE)

#define PS_BYTES 64

static void edge_put_signal(void)
{
    const int me = g_pe, n = g_npes;
    const int tgt = (me + 1) % n;
    uint8_t *dst = sym_calloc(2 * PS_BYTES, 1); /* the second half must never be written */
    int32_t *sig = sym_calloc(4, sizeof(int32_t));
    uint8_t src[PS_BYTES];
    uint8_t local_dst[PS_BYTES];
    int32_t local_sig[2] = {0, 0};
    memset(src, 0xab, sizeof src);
    memset(local_dst, 0, sizeof local_dst);
    /* the target's copies: mapped on this node, read with a get when it runs on another node */
    const int tgt_local = peer_same_node(tgt);
    uint8_t *rdst = peer_map(dst, tgt, tgt_local);
    int32_t *rsig = peer_map(sig, tgt, tgt_local);
    uint8_t vrdst[2 * PS_BYTES];
    int32_t vrsig[4];
#define PEEK_TARGET()                                                 \
    do {                                                              \
        peer_read(vrdst, dst, rdst, sizeof vrdst, tgt);               \
        peer_read(vrsig, sig, rsig, sizeof vrsig, tgt);               \
    } while (0)
    void *misaligned1 = (void *)((uintptr_t)sig + 1);
    void *misaligned2 = (void *)((uintptr_t)sig + 2);
    aclshmem_barrier_all();

    static const char *const bad_names[] = {
        "sig_op 7", "sig_op -1", "sig_addr +1 byte", "sig_addr +2 bytes", "sig_addr outside the heap",
        "sig_addr NULL", "pe n_pes", "pe -1", "dst outside the heap",
    };
    for (int f = 0; f < NFAM; f++) {
        for (int b = 0; b < 9; b++) {
            void *d = dst, *s = sig;
            int op = ACLSHMEM_SIGNAL_SET, pe = tgt;
            switch (b) {
            case 0: op = 7; break;
            case 1: op = -1; break;
            case 2: s = misaligned1; break;
            case 3: s = misaligned2; break;
            case 4: s = local_sig; break;
            case 5: s = NULL; break;
            case 6: pe = n; break;
            case 7: pe = -1; break;
            case 8: d = local_dst; break;
            }
            put_signal_fam(f, d, src, PS_BYTES, s, 5, op, pe);
            /* my own calls are the only writers of the target's buffers */
            PEEK_TARGET();
            for (int j = 0; j < 2 * PS_BYTES; j++) {
                CHECK(vrdst[j] == 0, "%s with %s wrote data: byte %d of pe %d is 0x%02x", g_fam_names[f], bad_names[b],
                      j, tgt, vrdst[j]);
            }
            for (int j = 0; j < 4; j++) {
                CHECK(vrsig[j] == 0, "%s with %s wrote the signal: word %d of pe %d is 0x%x", g_fam_names[f],
                      bad_names[b], j, tgt, (unsigned)vrsig[j]);
            }
            CHECK(local_sig[0] == 0 && local_sig[1] == 0, "%s with %s wrote the local (non-symmetric) signal word",
                  g_fam_names[f], bad_names[b]);
            for (int j = 0; j < PS_BYTES; j++) {
                CHECK(local_dst[j] == 0, "%s with %s wrote local (non-symmetric) dst memory", g_fam_names[f],
                      bad_names[b]);
            }
        }
    }
    /* ranges straddling the end of the heap: dst (64 bytes from 32 before the end), sig_addr at
     * the end, sig_addr 2 bytes before the end (4 bytes would straddle) */
    uint8_t *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    CHECK(base != NULL && dst >= base && dst + PS_BYTES <= base + g_heap_size,
          "dst %p outside the device heap [%p, +%zu)", (void *)dst, (void *)base, g_heap_size);
    uint8_t *end = base + g_heap_size;
    uint8_t *rtail_map = peer_map(end - 32, tgt, tgt_local);
    uint8_t rtail[32];
    for (int f = 0; f < NFAM; f++) {
        uint8_t before[32];
        peer_read(before, end - 32, rtail_map, 32, tgt);
        put_signal_fam(f, end - 32, src, PS_BYTES, sig, 5, ACLSHMEM_SIGNAL_SET, tgt);
        peer_read(rtail, end - 32, rtail_map, 32, tgt);
        for (int j = 0; j < 32; j++) {
            CHECK(rtail[j] == before[j], "%s with dst straddling the heap end wrote byte %d before the end",
                  g_fam_names[f], j);
        }
        put_signal_fam(f, dst, src, PS_BYTES, end, 5, ACLSHMEM_SIGNAL_SET, tgt);
        put_signal_fam(f, dst, src, PS_BYTES, end - 2, 5, ACLSHMEM_SIGNAL_ADD, tgt);
        put_signal_fam(f, dst, src, PS_BYTES, end - 4, 5, 9, tgt); /* last word of the heap, bad sig_op */
        PEEK_TARGET();
        peer_read(rtail, end - 32, rtail_map, 32, tgt);
        for (int j = 0; j < 4; j++) {
            CHECK(vrsig[j] == 0, "%s with dst straddling the heap end wrote the signal", g_fam_names[f]);
        }
        for (int j = 0; j < PS_BYTES; j++) {
            CHECK(vrdst[j] == 0, "%s with sig_addr at the heap end wrote data: byte %d is 0x%02x", g_fam_names[f], j,
                  vrdst[j]);
        }
        CHECK(rtail[28] == before[28] && rtail[29] == before[29] && rtail[30] == before[30] &&
                  rtail[31] == before[31],
              "%s changed the last word of the heap", g_fam_names[f]);
    }
    aclshmem_barrier_all();
    /* after a barrier: my own copy (written by my left neighbour) is untouched as well */
    for (int j = 0; j < PS_BYTES; j++) {
        CHECK(((volatile uint8_t *)dst)[j] == 0, "local dst byte %d changed by a rejected put_signal: 0x%02x", j,
              ((volatile uint8_t *)dst)[j]);
    }
    for (int j = 0; j < 4; j++) {
        CHECK(((volatile int32_t *)sig)[j] == 0, "local signal word %d changed by a rejected put_signal", j);
    }
    aclshmem_barrier_all();
    /* positive control: every family writes the data, then SET, then ADD */
    for (int f = 0; f < NFAM; f++) {
        for (int j = 0; j < PS_BYTES; j++) {
            src[j] = (uint8_t)(f * 3 + j + 1);
        }
        put_signal_fam(f, dst, src, PS_BYTES, sig, 1000 + f, ACLSHMEM_SIGNAL_SET, tgt);
        PEEK_TARGET();
        CHECK(vrsig[0] == 1000 + f, "%s SET: signal %d, expected %d", g_fam_names[f], vrsig[0], 1000 + f);
        for (int j = 0; j < PS_BYTES; j++) {
            CHECK(vrdst[j] == src[j], "%s: byte %d is 0x%02x, expected 0x%02x", g_fam_names[f], j, vrdst[j], src[j]);
        }
        for (int j = PS_BYTES; j < 2 * PS_BYTES; j++) {
            CHECK(vrdst[j] == 0, "%s of %d bytes wrote byte %d", g_fam_names[f], PS_BYTES, j);
        }
        put_signal_fam(f, dst, src, PS_BYTES, sig, -3, ACLSHMEM_SIGNAL_ADD, tgt);
        PEEK_TARGET();
        CHECK(vrsig[0] == 997 + f, "%s ADD -3: signal %d, expected %d", g_fam_names[f], vrsig[0], 997 + f);
        CHECK(vrsig[1] == 0, "%s touched the word after the signal", g_fam_names[f]);
    }
    aclshmem_barrier_all();
    /* a rejected call after a successful one leaves everything as it was */
    memset(src, 0x5c, sizeof src);
    put_signal_fam(32, dst, src, PS_BYTES, sig, 1, 7, tgt);
    PEEK_TARGET();
    CHECK(vrsig[0] == 997 + NFAM - 1, "rejected putmem_signal changed the signal to %d", vrsig[0]);
    CHECK(vrdst[0] == (uint8_t)((NFAM - 1) * 3 + 1), "rejected putmem_signal changed the data");
#undef PEEK_TARGET
    aclshmem_barrier_all();
    aclshmem_free(sig);
    aclshmem_free(dst);
}

static void edge_signal_wait(void)
{
    int32_t *sig = sym_calloc(2, sizeof(int32_t));
    double t0 = now_s();
    aclshmem_signal_wait_until(sig, 9, 5);
    aclshmem_signal_wait_until(sig, -1, 5);
    aclshmem_signal_wait_until(sig, 6, 5);
    aclshmem_signal_wait_until(NULL, ACLSHMEM_CMP_EQ, 5);
    aclshmem_signal_wait_until((int32_t *)((uintptr_t)sig + 1), ACLSHMEM_CMP_EQ, 5);
    aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, 0);
    aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_LT, 1);
    aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_NE, 1);
    double dt = now_s() - t0;
    CHECK(dt < 2.0, "signal_wait_until edge cases took %.2f s", dt);
    CHECK(sig[0] == 0 && sig[1] == 0, "signal_wait_until changed the word");
    aclshmem_free(sig);
}

static void scenario_edge_cases(void)
{
    double t0 = now_s();
#define RUN_EDGE(NAME, T) edge_##NAME();
    WAIT_TYPES(RUN_EDGE)
#undef RUN_EDGE
    edge_signal_wait();
    CHECK(now_s() - t0 < 10.0, "edge cases took %.1f s (something waited)", now_s() - t0);
    aclshmem_barrier_all();
    edge_put_signal();
}

/* ------------------------------------------------------------------------------------------ */
/* atomics                                                                                      */
/* ------------------------------------------------------------------------------------------ */

#define AMO_ITERS 10000

static void atomics_counters(void)
{
    const int me = g_pe, n = g_npes;
    int64_t *c = sym_calloc(4, sizeof(int64_t));
    int *ci = sym_calloc(1, sizeof(int));
    aclshmem_barrier_all();
    int64_t prev_fa = -1, prev_fi = -1;
    for (int k = 0; k < AMO_ITERS; k++) {
        int64_t old = aclshmem_int64_atomic_fetch_add(&c[0], 1, 0);
        CHECK(old > prev_fa && old < (int64_t)AMO_ITERS * n, "fetch_add #%d returned %lld after %lld", k,
              (long long)old, (long long)prev_fa);
        prev_fa = old;
        aclshmem_int64_atomic_add(&c[1], me + 1, 0);
        aclshmem_int64_atomic_inc(&c[2], 0);
        old = aclshmem_int64_atomic_fetch_inc(&c[3], 0);
        CHECK(old > prev_fi && old < (int64_t)AMO_ITERS * n, "fetch_inc #%d returned %lld after %lld", k,
              (long long)old, (long long)prev_fi);
        prev_fi = old;
        if (k < 2000) {
            aclshmem_int_atomic_fetch_add(ci, 3, 0);
        }
    }
    aclshmem_barrier_all();
    if (me == 0) {
        volatile int64_t *vc = c;
        int64_t want = (int64_t)AMO_ITERS * n;
        CHECK(vc[0] == want, "fetch_add total %lld, expected %lld", (long long)vc[0], (long long)want);
        CHECK(vc[1] == (int64_t)AMO_ITERS * n * (n + 1) / 2, "add total %lld, expected %lld", (long long)vc[1],
              (long long)AMO_ITERS * n * (n + 1) / 2);
        CHECK(vc[2] == want, "inc total %lld, expected %lld", (long long)vc[2], (long long)want);
        CHECK(vc[3] == want, "fetch_inc total %lld, expected %lld", (long long)vc[3], (long long)want);
        CHECK(*(volatile int *)ci == 3 * 2000 * n, "int fetch_add total %d, expected %d", *(volatile int *)ci,
              3 * 2000 * n);
    } else {
        volatile int64_t *vc = c;
        CHECK(vc[0] == 0 && vc[1] == 0 && vc[2] == 0 && vc[3] == 0, "counters on pe %d (not the target) changed",
              me);
    }
    aclshmem_barrier_all();
    aclshmem_free(ci);
    aclshmem_free(c);
}

/* set/fetch/swap/compare_swap/fetch_add/fetch_inc/inc/add and the nbi forms of one type, each PE on
 * its own slot of the right neighbour. V1..V3 chosen to catch truncation (64-bit types > 2^32). */
#define DEFINE_AMO_STD(NAME, T, V1, V2, V3)                                                                        \
    static void amo_std_##NAME(void)                                                                               \
    {                                                                                                              \
        const char *ty = #NAME;                                                                                    \
        const int me = g_pe, n = g_npes, tgt = (me + 1) % n, left = (me + n - 1) % n;                              \
        T *slot = sym_calloc((size_t)n, sizeof(T));                                                                \
        T *d = &slot[me];                                                                                          \
        const T v1 = (T)(V1), v2 = (T)(V2), v3 = (T)(V3);                                                          \
        T old, f;                                                                                                  \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_##NAME##_atomic_set(d, v1, tgt);                                                                  \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == v1, "%s set/fetch: %lld, expected %lld", ty, (long long)old, (long long)v1);                  \
        old = aclshmem_##NAME##_atomic_swap(d, v2, tgt);                                                           \
        CHECK(old == v1, "%s swap returned %lld, expected %lld", ty, (long long)old, (long long)v1);               \
        old = aclshmem_##NAME##_atomic_compare_swap(d, v1, v3, tgt);                                               \
        CHECK(old == v2, "%s failing compare_swap returned %lld, expected %lld", ty, (long long)old, (long long)v2); \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == v2, "%s failing compare_swap changed the value to %lld", ty, (long long)old);                 \
        old = aclshmem_##NAME##_atomic_compare_swap(d, v2, v3, tgt);                                               \
        CHECK(old == v2, "%s compare_swap returned %lld, expected %lld", ty, (long long)old, (long long)v2);       \
        T e = v3;                                                                                                  \
        old = aclshmem_##NAME##_atomic_fetch_add(d, (T)5, tgt);                                                    \
        CHECK(old == e, "%s fetch_add returned %lld, expected %lld", ty, (long long)old, (long long)e);            \
        e = (T)(e + 5);                                                                                            \
        old = aclshmem_##NAME##_atomic_fetch_inc(d, tgt);                                                          \
        CHECK(old == e, "%s fetch_inc returned %lld, expected %lld", ty, (long long)old, (long long)e);            \
        e = (T)(e + 1);                                                                                            \
        aclshmem_##NAME##_atomic_inc(d, tgt);                                                                      \
        e = (T)(e + 1);                                                                                            \
        aclshmem_##NAME##_atomic_add(d, (T)3, tgt);                                                                \
        e = (T)(e + 3);                                                                                            \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == e, "%s after inc/add: %lld, expected %lld", ty, (long long)old, (long long)e);                \
        /* nbi forms */                                                                                            \
        f = (T)99;                                                                                                 \
        aclshmem_##NAME##_atomic_fetch_nbi(&f, d, tgt);                                                            \
        aclshmem_quiet();                                                                                          \
        CHECK(f == e, "%s fetch_nbi stored %lld, expected %lld", ty, (long long)f, (long long)e);                  \
        f = (T)99;                                                                                                 \
        aclshmem_##NAME##_atomic_swap_nbi(&f, d, v1, tgt);                                                         \
        aclshmem_quiet();                                                                                          \
        CHECK(f == e, "%s swap_nbi stored %lld, expected %lld", ty, (long long)f, (long long)e);                   \
        f = (T)99;                                                                                                 \
        aclshmem_##NAME##_atomic_compare_swap_nbi(&f, d, v1, v2, tgt);                                             \
        aclshmem_quiet();                                                                                          \
        CHECK(f == v1, "%s compare_swap_nbi stored %lld, expected %lld", ty, (long long)f, (long long)v1);         \
        f = (T)99;                                                                                                 \
        aclshmem_##NAME##_atomic_fetch_inc_nbi(&f, d, tgt);                                                        \
        aclshmem_quiet();                                                                                          \
        CHECK(f == v2, "%s fetch_inc_nbi stored %lld, expected %lld", ty, (long long)f, (long long)v2);            \
        f = (T)99;                                                                                                 \
        aclshmem_##NAME##_atomic_fetch_add_nbi(&f, d, (T)7, tgt);                                                  \
        aclshmem_quiet();                                                                                          \
        CHECK(f == (T)(v2 + 1), "%s fetch_add_nbi stored %lld, expected %lld", ty, (long long)f,                   \
              (long long)(T)(v2 + 1));                                                                             \
        e = (T)(v2 + 8);                                                                                           \
        /* the target's copy: mapped on this node, else read back with a get (other nodes) */                   \
        T *rd = aclshmem_ptr(d, tgt);                                                                              \
        T seen = (T)0;                                                                                             \
        if (rd != NULL) {                                                                                          \
            seen = *(volatile T *)rd;                                                                              \
        } else {                                                                                                   \
            aclshmem_getmem(&seen, d, sizeof(T), tgt);                                                             \
        }                                                                                                          \
        CHECK(seen == e, "%s: pe %d's copy is %lld, expected %lld", ty, tgt, (long long)seen, (long long)e);       \
        /* bad PE, out-of-heap, NULL and misaligned destinations: 0 returned, nothing changed */                   \
        T outside = (T)42;                                                                                         \
        T *mis = (T *)((uintptr_t)d + 1);                                                                          \
        T *bad_d[4] = {d, d, &outside, NULL};                                                                      \
        int bad_pe[4] = {n, -1, tgt, tgt};                                                                         \
        for (int b = 0; b < 5; b++) {                                                                              \
            T *bd = b < 4 ? bad_d[b] : mis;                                                                        \
            int bp = b < 4 ? bad_pe[b] : tgt;                                                                      \
            T got_ = aclshmem_##NAME##_atomic_fetch(bd, bp);                                                       \
            CHECK(got_ == (T)0, "%s fetch with bad argument #%d returned %lld", ty, b, (long long)got_);           \
            CHECK(aclshmem_##NAME##_atomic_swap(bd, v3, bp) == (T)0, "%s swap with bad argument #%d", ty, b);      \
            CHECK(aclshmem_##NAME##_atomic_compare_swap(bd, e, v3, bp) == (T)0,                                    \
                  "%s compare_swap with bad argument #%d", ty, b);                                                 \
            CHECK(aclshmem_##NAME##_atomic_fetch_add(bd, (T)1, bp) == (T)0, "%s fetch_add with bad argument #%d", \
                  ty, b);                                                                                          \
            CHECK(aclshmem_##NAME##_atomic_fetch_inc(bd, bp) == (T)0, "%s fetch_inc with bad argument #%d", ty, b); \
            aclshmem_##NAME##_atomic_set(bd, v3, bp);                                                              \
            aclshmem_##NAME##_atomic_inc(bd, bp);                                                                  \
            aclshmem_##NAME##_atomic_add(bd, (T)1, bp);                                                            \
            aclshmem_##NAME##_atomic_fetch_add_nbi(&f, bd, (T)1, bp);                                              \
            aclshmem_##NAME##_atomic_swap_nbi(&f, bd, v3, bp);                                                     \
            aclshmem_quiet();                                                                                      \
            if (rd != NULL) {                                                                                      \
                seen = *(volatile T *)rd;                                                                          \
            } else {                                                                                               \
                aclshmem_getmem(&seen, d, sizeof(T), tgt);                                                         \
            }                                                                                                      \
            CHECK(seen == e, "%s bad argument #%d changed pe %d's value to %lld", ty, b, tgt, (long long)seen);    \
            CHECK(*(volatile T *)&outside == (T)42, "%s bad argument #%d changed a non-symmetric variable", ty,    \
                  b);                                                                                              \
        }                                                                                                          \
        aclshmem_barrier_all();                                                                                    \
        CHECK(((volatile T *)slot)[left] == e, "%s: my slot written by pe %d is %lld, expected %lld", ty, left,    \
              (long long)((volatile T *)slot)[left], (long long)e);                                                \
        CHECK(((volatile T *)slot)[me] == 0, "%s: slot %d written by someone", ty, me);                            \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_free(slot);                                                                                       \
    }

#define DEFINE_AMO_BITS(NAME, T, INIT, M1, M2, M3)                                                                  \
    static void amo_bits_##NAME(void)                                                                              \
    {                                                                                                              \
        const char *ty = #NAME;                                                                                    \
        const int me = g_pe, n = g_npes, tgt = (me + 1) % n;                                                       \
        T *slot = sym_calloc((size_t)n, sizeof(T));                                                                \
        T *d = &slot[me];                                                                                          \
        T e = (T)(INIT), old, f;                                                                                   \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_##NAME##_atomic_set(d, e, tgt);                                                                   \
        old = aclshmem_##NAME##_atomic_fetch_and(d, (T)(M1), tgt);                                                 \
        CHECK(old == e, "%s fetch_and returned %llx", ty, (unsigned long long)old);                                \
        e = (T)(e & (T)(M1));                                                                                      \
        aclshmem_##NAME##_atomic_and(d, (T)(M2), tgt);                                                             \
        e = (T)(e & (T)(M2));                                                                                      \
        old = aclshmem_##NAME##_atomic_fetch_or(d, (T)(M3), tgt);                                                  \
        CHECK(old == e, "%s fetch_or returned %llx, expected %llx", ty, (unsigned long long)old,                   \
              (unsigned long long)e);                                                                              \
        e = (T)(e | (T)(M3));                                                                                      \
        aclshmem_##NAME##_atomic_or(d, (T)(M1), tgt);                                                              \
        e = (T)(e | (T)(M1));                                                                                      \
        old = aclshmem_##NAME##_atomic_fetch_xor(d, (T)(M2), tgt);                                                 \
        CHECK(old == e, "%s fetch_xor returned %llx, expected %llx", ty, (unsigned long long)old,                  \
              (unsigned long long)e);                                                                              \
        e = (T)(e ^ (T)(M2));                                                                                      \
        aclshmem_##NAME##_atomic_xor(d, (T)(M3), tgt);                                                             \
        e = (T)(e ^ (T)(M3));                                                                                      \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == e, "%s after and/or/xor: %llx, expected %llx", ty, (unsigned long long)old,                   \
              (unsigned long long)e);                                                                              \
        f = (T)0x55;                                                                                               \
        aclshmem_##NAME##_atomic_fetch_and_nbi(&f, d, (T)(M3), tgt);                                               \
        aclshmem_quiet();                                                                                          \
        CHECK(f == e, "%s fetch_and_nbi stored %llx, expected %llx", ty, (unsigned long long)f,                    \
              (unsigned long long)e);                                                                              \
        e = (T)(e & (T)(M3));                                                                                      \
        f = (T)0x55;                                                                                               \
        aclshmem_##NAME##_atomic_fetch_or_nbi(&f, d, (T)(M2), tgt);                                                \
        aclshmem_quiet();                                                                                          \
        CHECK(f == e, "%s fetch_or_nbi stored %llx, expected %llx", ty, (unsigned long long)f,                     \
              (unsigned long long)e);                                                                              \
        e = (T)(e | (T)(M2));                                                                                      \
        f = (T)0x55;                                                                                               \
        aclshmem_##NAME##_atomic_fetch_xor_nbi(&f, d, (T)(M1), tgt);                                               \
        aclshmem_quiet();                                                                                          \
        CHECK(f == e, "%s fetch_xor_nbi stored %llx, expected %llx", ty, (unsigned long long)f,                    \
              (unsigned long long)e);                                                                              \
        e = (T)(e ^ (T)(M1));                                                                                      \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == e, "%s after the nbi forms: %llx, expected %llx", ty, (unsigned long long)old,                \
              (unsigned long long)e);                                                                              \
        CHECK(aclshmem_##NAME##_atomic_fetch_or(d, (T)1, n) == (T)0, "%s fetch_or with pe n_pes", ty);             \
        CHECK(aclshmem_##NAME##_atomic_fetch_and(d, (T)0, -1) == (T)0, "%s fetch_and with pe -1", ty);             \
        CHECK(aclshmem_##NAME##_atomic_fetch_xor(NULL, (T)1, tgt) == (T)0, "%s fetch_xor on NULL", ty);            \
        aclshmem_##NAME##_atomic_and(d, (T)0, n);                                                                  \
        aclshmem_##NAME##_atomic_xor((T *)((uintptr_t)d + 1), (T)1, tgt);                                          \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == e, "%s changed by bad arguments: %llx, expected %llx", ty, (unsigned long long)old,           \
              (unsigned long long)e);                                                                              \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_free(slot);                                                                                       \
    }

#define BIG64 0x123456789abLL
DEFINE_AMO_STD(int, int, -7, 0x40000001, 123456)
DEFINE_AMO_STD(long, long, -7, BIG64, -BIG64)
DEFINE_AMO_STD(longlong, long long, -70000000000LL, BIG64, 77)
DEFINE_AMO_STD(uint, unsigned int, 0xfffffff0u, 0x80000001u, 0xfffffffeu)
DEFINE_AMO_STD(ulong, unsigned long, 0xfffffffffffffff0ULL, BIG64, 0x100000000ULL)
DEFINE_AMO_STD(ulonglong, unsigned long long, 0xfffffffffffffff0ULL, BIG64, 0xfffffffeULL)
DEFINE_AMO_STD(int32, int32_t, -7, 0x7ffffff0, -100000)
DEFINE_AMO_STD(int64, int64_t, -7, BIG64, -BIG64)
DEFINE_AMO_STD(uint32, uint32_t, 0xfffffff0u, 0x80000001u, 0xfffffffeu)
DEFINE_AMO_STD(uint64, uint64_t, 0xfffffffffffffff0ULL, BIG64, 0xfffffffeULL)
DEFINE_AMO_STD(size, size_t, 0xfffffffffffffff0ULL, BIG64, 0x100000000ULL)
DEFINE_AMO_STD(ptrdiff, ptrdiff_t, -7, BIG64, -BIG64)

#define M64A 0xff00ff00f0f0f0f0ULL
#define M64B 0x0fffffff0ffffff3ULL
#define M64C 0x8000000100000008ULL
DEFINE_AMO_BITS(uint, unsigned int, 0xdeadbeefu, 0xff00ff0fu, 0x0ffffff3u, 0x80000008u)
DEFINE_AMO_BITS(ulong, unsigned long, 0xdeadbeefcafef00dULL, M64A, M64B, M64C)
DEFINE_AMO_BITS(ulonglong, unsigned long long, 0xdeadbeefcafef00dULL, M64A, M64B, M64C)
DEFINE_AMO_BITS(int32, int32_t, 0xdeadbeefu, 0xff00ff0fu, 0x0ffffff3u, 0x80000008u)
DEFINE_AMO_BITS(int64, int64_t, 0xdeadbeefcafef00dULL, M64A, M64B, M64C)
DEFINE_AMO_BITS(uint32, uint32_t, 0xdeadbeefu, 0xff00ff0fu, 0x0ffffff3u, 0x80000008u)
DEFINE_AMO_BITS(uint64, uint64_t, 0xdeadbeefcafef00dULL, M64A, M64B, M64C)

#define DEFINE_AMO_FP(NAME, T, V1, V2, V3)                                                                         \
    static void amo_fp_##NAME(void)                                                                                \
    {                                                                                                              \
        const char *ty = #NAME;                                                                                    \
        const int me = g_pe, n = g_npes, tgt = (me + 1) % n;                                                       \
        T *slot = sym_calloc((size_t)n, sizeof(T));                                                                \
        T *d = &slot[me];                                                                                          \
        T old, f;                                                                                                  \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_##NAME##_atomic_set(d, (T)(V1), tgt);                                                             \
        old = aclshmem_##NAME##_atomic_fetch(d, tgt);                                                              \
        CHECK(old == (T)(V1), "%s set/fetch: %g", ty, (double)old);                                                \
        old = aclshmem_##NAME##_atomic_swap(d, (T)(V2), tgt);                                                      \
        CHECK(old == (T)(V1), "%s swap returned %g", ty, (double)old);                                             \
        f = (T)0;                                                                                                  \
        aclshmem_##NAME##_atomic_fetch_nbi(&f, d, tgt);                                                            \
        aclshmem_quiet();                                                                                          \
        CHECK(f == (T)(V2), "%s fetch_nbi stored %g", ty, (double)f);                                              \
        f = (T)0;                                                                                                  \
        aclshmem_##NAME##_atomic_swap_nbi(&f, d, (T)(V3), tgt);                                                    \
        aclshmem_quiet();                                                                                          \
        CHECK(f == (T)(V2), "%s swap_nbi stored %g", ty, (double)f);                                               \
        CHECK(aclshmem_##NAME##_atomic_fetch(d, tgt) == (T)(V3), "%s after swap_nbi", ty);                        \
        CHECK(aclshmem_##NAME##_atomic_fetch(d, n) == (T)0, "%s fetch with pe n_pes", ty);                         \
        CHECK(aclshmem_##NAME##_atomic_swap(d, (T)1, -1) == (T)0, "%s swap with pe -1", ty);                       \
        T outside = (T)(V1);                                                                                       \
        CHECK(aclshmem_##NAME##_atomic_swap(&outside, (T)1, tgt) == (T)0, "%s swap outside the heap", ty);         \
        aclshmem_##NAME##_atomic_set(&outside, (T)2, tgt);                                                         \
        CHECK(*(volatile T *)&outside == (T)(V1), "%s set outside the heap changed it", ty);                       \
        aclshmem_##NAME##_atomic_set(d, (T)5, n);                                                                  \
        CHECK(aclshmem_##NAME##_atomic_fetch(d, tgt) == (T)(V3), "%s changed by bad arguments", ty);              \
        aclshmem_barrier_all();                                                                                    \
        aclshmem_free(slot);                                                                                       \
    }

DEFINE_AMO_FP(float, float, 1.5f, -2.25f, 3.0e30f)
DEFINE_AMO_FP(double, double, 1.5, -2.25e-300, 1.0e300)

/* every PE owns one bit of a uint64 word on PE 0 (bits above 32 included for 3+ PEs) */
static void atomics_bits_contended(void)
{
    const int me = g_pe, n = g_npes;
    uint64_t *w = sym_calloc(2, sizeof(uint64_t));
    const uint64_t bit = 1ULL << (me * 17 + 1);
    uint64_t all = 0;
    for (int p = 0; p < n; p++) {
        all |= 1ULL << (p * 17 + 1);
    }
    aclshmem_barrier_all();
    for (int k = 0; k <= 1000; k++) {
        uint64_t old;
        if (k % 2 == 0) {
            old = aclshmem_uint64_atomic_fetch_or(w, bit, 0);
            CHECK((old & bit) == 0, "fetch_or #%d: my bit already set (old %llx)", k, (unsigned long long)old);
        } else {
            old = aclshmem_uint64_atomic_fetch_and(w, ~bit, 0);
            CHECK((old & bit) != 0, "fetch_and #%d: my bit lost (old %llx)", k, (unsigned long long)old);
        }
        CHECK((old & ~all) == 0, "foreign bits in %llx", (unsigned long long)old);
        if (k % 7 == 0) {
            /* non-fetching forms on the second word */
            aclshmem_uint64_atomic_or(&w[1], bit, 0);
            aclshmem_uint64_atomic_xor(&w[1], bit, 0);
            aclshmem_uint64_atomic_xor(&w[1], bit, 0);
            aclshmem_uint64_atomic_and(&w[1], ~0ULL, 0);
        }
    }
    aclshmem_barrier_all();
    if (me == 0) {
        CHECK(*(volatile uint64_t *)w == all, "or/and word %llx, expected %llx", (unsigned long long)*w,
              (unsigned long long)all);
        CHECK(*(volatile uint64_t *)&w[1] == all, "or/xor/and word %llx, expected %llx", (unsigned long long)w[1],
              (unsigned long long)all);
    }
    aclshmem_barrier_all();
    for (int k = 0; k < 1001; k++) {
        uint64_t old = aclshmem_uint64_atomic_fetch_xor(w, bit, 0);
        CHECK(((old & bit) != 0) == (k % 2 == 0), "fetch_xor #%d: my bit %s (old %llx)", k,
              (old & bit) ? "set" : "clear", (unsigned long long)old);
    }
    aclshmem_barrier_all();
    if (me == 0) {
        CHECK(*(volatile uint64_t *)w == 0, "xor word %llx, expected 0", (unsigned long long)*w);
    }
    aclshmem_barrier_all();
    aclshmem_free(w);
}

static void scenario_atomics(void)
{
    atomics_counters();
    atomics_bits_contended();
    amo_std_int();
    amo_std_long();
    amo_std_longlong();
    amo_std_uint();
    amo_std_ulong();
    amo_std_ulonglong();
    amo_std_int32();
    amo_std_int64();
    amo_std_uint32();
    amo_std_uint64();
    amo_std_size();
    amo_std_ptrdiff();
    amo_bits_uint();
    amo_bits_ulong();
    amo_bits_ulonglong();
    amo_bits_int32();
    amo_bits_int64();
    amo_bits_uint32();
    amo_bits_uint64();
    amo_fp_float();
    amo_fp_double();
}

/* ------------------------------------------------------------------------------------------ */
/* cas_lock                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define LOCK_ITERS 500

static void scenario_cas_lock(void)
{
    const int me = g_pe, n = g_npes;
    int64_t *lock = sym_calloc(1, sizeof(int64_t));
    int64_t *counter = sym_calloc(1, sizeof(int64_t));
    int32_t *inside = sym_calloc(1, sizeof(int32_t));
    long contended = 0;
    aclshmem_barrier_all();
    double t0 = now_s();
    for (int k = 0; k < LOCK_ITERS; k++) {
        int spins = 0;
        for (;;) {
            int64_t old = aclshmem_int64_atomic_compare_swap(lock, 0, me + 1, 0);
            if (old == 0) {
                break;
            }
            CHECK(old >= 1 && old <= n && old != me + 1, "lock word %lld while acquiring", (long long)old);
            contended++;
            if (++spins > 16) {
                sched_yield();
            }
        }
        int32_t in = aclshmem_int32_atomic_fetch_add(inside, 1, 0);
        CHECK(in == 0, "iteration %d: %d other PE(s) inside the critical section", k, in);
        int64_t v = -1;
        aclshmem_getmem(&v, counter, sizeof v, 0);
        CHECK(v >= k && v < (int64_t)LOCK_ITERS * n, "iteration %d: counter %lld", k, (long long)v);
        v++;
        /* hold the lock a little (and sometimes give the core away) so that the others contend */
        double until = now_s() + 2e-6;
        while (now_s() < until) {
        }
        if (k % 4 == 0) {
            sched_yield();
        }
        aclshmem_putmem(counter, &v, sizeof v, 0);
        int64_t holder = aclshmem_int64_atomic_fetch(lock, 0);
        CHECK(holder == me + 1, "iteration %d: lock holder %lld, expected %d", k, (long long)holder, me + 1);
        in = aclshmem_int32_atomic_fetch_add(inside, -1, 0);
        CHECK(in == 1, "iteration %d: inside count %d on leaving", k, in);
        aclshmem_quiet();
        aclshmem_int64_atomic_set(lock, 0, 0);
    }
    double dt = now_s() - t0;
    aclshmem_barrier_all();
    if (me == 0) {
        int64_t v = *(volatile int64_t *)counter;
        CHECK(v == (int64_t)LOCK_ITERS * n, "counter %lld, expected %lld", (long long)v, (long long)LOCK_ITERS * n);
        CHECK(*(volatile int64_t *)lock == 0, "lock still held: %lld", (long long)*lock);
    }
    printf("cas_lock: pe %d, %d acquisitions in %.2f s, %ld failed attempts\n", me, LOCK_ITERS, dt, contended);
    aclshmem_barrier_all();
    aclshmem_free(inside);
    aclshmem_free(counter);
    aclshmem_free(lock);
}

/* ------------------------------------------------------------------------------------------ */
/* ring_waits                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void scenario_ring_waits(int trips)
{
    const int me = g_pe, n = g_npes, next = (me + 1) % n;
    int64_t *tok = sym_calloc(2, sizeof(int64_t));
    int32_t *sig = sym_calloc(1, sizeof(int32_t));
    volatile int64_t *vtok = tok;
    aclshmem_barrier_all();
    double t0 = now_s();
    for (int t = 1; t <= trips; t++) {
        int64_t out[2];
        if (me != 0) {
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, t);
            CHECK(*(volatile int32_t *)sig == t, "trip %d: signal %d", t, *(volatile int32_t *)sig);
            CHECK(vtok[0] == (int64_t)t * 1000 + me - 1 && vtok[1] == -t, "trip %d: token {%lld, %lld}", t,
                  (long long)vtok[0], (long long)vtok[1]);
        }
        out[0] = (int64_t)t * 1000 + me;
        out[1] = -t;
        if (t % 2 == 0) {
            aclshmem_int64_put_signal(tok, out, 2, (uint8_t *)sig, t, ACLSHMEM_SIGNAL_SET, next);
        } else {
            aclshmemx_putmem_signal(tok, out, sizeof out, sig, 1, ACLSHMEM_SIGNAL_ADD, next);
        }
        if (me == 0) {
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, t);
            CHECK(*(volatile int32_t *)sig == t, "trip %d: signal %d", t, *(volatile int32_t *)sig);
            CHECK(vtok[0] == (int64_t)t * 1000 + n - 1 && vtok[1] == -t, "trip %d: token {%lld, %lld}", t,
                  (long long)vtok[0], (long long)vtok[1]);
        }
    }
    double dt = now_s() - t0;
    aclshmem_barrier_all();
    if (me == 0) {
        printf("ring_waits: %d PEs, %d round trips in %.3f s, %.1f us per round trip, %.1f us per hop\n", n, trips,
               dt, dt * 1e6 / trips, dt * 1e6 / trips / n);
    }
    aclshmem_free(sig);
    aclshmem_free(tok);
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s <scenario> [rounds]\n", argv[0]);
        return 2;
    }
    g_scenario = argv[1];
    int count = argc > 2 ? atoi(argv[2]) : 0;
    init();
    if (strcmp(argv[1], "producer_consumer") == 0) {
        scenario_producer_consumer(count > 0 ? count : 2000);
    } else if (strcmp(argv[1], "wait_families") == 0) {
        scenario_wait_families();
    } else if (strcmp(argv[1], "edge_cases") == 0) {
        scenario_edge_cases();
    } else if (strcmp(argv[1], "atomics") == 0) {
        scenario_atomics();
    } else if (strcmp(argv[1], "cas_lock") == 0) {
        scenario_cas_lock();
    } else if (strcmp(argv[1], "ring_waits") == 0) {
        scenario_ring_waits(count > 0 ? count : 200);
    } else {
        fail("unknown scenario");
    }
    finish();
    return 0;
}

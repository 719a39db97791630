/*
 * bcast_tests.c - broadcast scenarios that stress the pipelined paths (the eager broadcast across
 * nodes, collectives/eager.rs; the barrier-free one on one node, collectives/small.rs). Run under
 * aclshmrun (tests/multinode.rs runs it across the virtual cluster, tests/teams.rs on one node):
 *   back_to_back  thousands of broadcasts without barriers, every root and size 1..80 bytes, mixed
 *                 with reductions (1 and 8192 longs: the leaders' mailboxes across nodes) and larger
 *                 broadcasts (512, 513, 1025, 4000 bytes; 4097, 65536 and 200000: the mailboxes, in
 *                 parts of 64 KiB; 300000),
 *                 on the world
 *                 team, on teams created and destroyed over the same slot and on a team in a slot
 *                 of 8 or more;
 *   asymmetric    members naming different roots: every member names the next one (all fail, the
 *                 team stays usable), then one member believes it is the root (every member learns
 *                 within 32 calls; calls that succeed deliver the right data; the team is released
 *                 and the world team still works);
 *   asymmetric_length  (across nodes, one PE per node: the eager broadcast) member 1 names 600 bytes,
 *                 the others 64 (then 40000 against 64, 64000 against 40000, and 131072 against 65536: the
 *                 mailboxes, 2 parts against 1):
 *                 member 1 fails instead of waiting for ever, every member learns within 32
 *                 calls, the world team still works;
 *   asymmetric_nodes  (across nodes, several PEs per node: the hierarchical broadcast) member 1
 *                 names itself the root, the others member 0: member 1 fails, nobody returns 0
 *                 with member 1's data or without root 0's.
 * Prints "OK <scenario>" from PE 0 when nothing failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <shmem.h>
#include "test_util.h"

static int g_npes = -1;

static void init(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    attr.option_attr.shm_init_timeout = 20;
    attr.option_attr.control_operation_timeout = 20;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    CHECK(aclshmem_my_pe() == g_pe && aclshmem_n_pes() == g_npes, "my_pe/n_pes after init");
}

static void finish(void)
{
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
    fflush(stdout);
}

static unsigned char pattern(int pe, int iter, size_t i)
{
    return (unsigned char)(pe * 131 + iter * 7 + (int)i * 3 + 1);
}

enum { BIG = 300000, PAD = 8, RBIG = 8192 };
/* the larger sizes, in turn: around the eager path's limits (64 bytes on later team slots, 512 on
   the first ones, 4096 in the big ring) and beyond (the mailboxes) */
static const size_t bigger[] = {512, 513, 1025, 4000, 4097, 65536, 200000, BIG};
#define NBIGGER (sizeof bigger / sizeof bigger[0])

/* `iters` broadcasts on `team` (size n, my index me) with varying roots and sizes, no barriers. */
static void run_calls(aclshmem_team_t team, int me, int n, int iters, unsigned char *src, unsigned char *dst,
                      long *rsrc, long *rdst)
{
    for (int it = 0; it < iters; it++) {
        int root = (it * 7 + it / 3) % n;
        size_t len = 1 + (size_t)((it * 13) % 80);
        if (it % 97 == 96) {
            len = bigger[(it / 97) % NBIGGER]; /* a larger one in between */
        }
        for (size_t i = 0; i < len; i++) {
            src[i] = pattern(me, it, i);
        }
        memset(dst, 0xee, len + PAD);
        CHECK_RC(aclshmem_broadcastmem(team, dst, src, len, root), 0);
        for (size_t i = 0; i < len; i++) {
            CHECK(dst[i] == pattern(root, it, i), "call %d (root %d, %zu bytes): byte %zu is %u, expected %u", it,
                  root, len, i, dst[i], pattern(root, it, i));
        }
        for (size_t i = len; i < len + PAD; i++) {
            CHECK(dst[i] == 0xee, "call %d (%zu bytes) wrote past the end", it, len);
        }
        if (it % 50 == 49) {
            /* one element, or RBIG (64 KiB: the leaders' mailboxes across nodes) */
            size_t rn = it % 150 == 149 ? RBIG : 1;
            for (size_t i = 0; i < rn; i++) {
                rsrc[i] = me + it + (long)i;
            }
            CHECK_RC(aclshmem_long_sum_reduce(team, rdst, rsrc, rn), 0);
            for (size_t i = 0; i < rn; i++) {
                long want = (long)n * (it + (long)i) + (long)n * (n - 1) / 2;
                CHECK(rdst[i] == want, "reduce after call %d [%zu]: %ld, expected %ld", it, i, rdst[i], want);
            }
        }
    }
}

static void scenario_back_to_back(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    unsigned char *src = aclshmem_malloc(BIG + PAD), *dst = aclshmem_malloc(BIG + PAD);
    long *rsrc = aclshmem_malloc(RBIG * sizeof(long)), *rdst = aclshmem_malloc(RBIG * sizeof(long));
    CHECK(src && dst && rsrc && rdst, "malloc");
    aclshmem_barrier_all();
    run_calls(ACLSHMEM_TEAM_WORLD, me, n, 2000, src, dst, rsrc, rdst);
    /* teams over the same slot, created and destroyed: call numbers restart with each */
    for (int round = 0; round < 3; round++) {
        aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        run_calls(t, aclshmem_team_my_pe(t), n, 150 + round * 37, src, dst, rsrc, rdst);
        aclshmem_team_destroy(t);
    }
    /* a team in a later slot (the first 8 hold the world team and 7 live teams): its eager
       ring lives in the sync pool, with room for payloads up to 64 bytes only */
    aclshmem_team_t held[7];
    for (int i = 0; i < 7; i++) {
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &held[i]), 0);
    }
    aclshmem_team_t late = ACLSHMEM_TEAM_INVALID;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &late), 0);
    CHECK(late >= 8, "the ninth live team has handle %d, expected a slot of 8 or more", (int)late);
    run_calls(late, aclshmem_team_my_pe(late), n, 300, src, dst, rsrc, rdst);
    aclshmem_team_destroy(late);
    for (int i = 0; i < 7; i++) {
        aclshmem_team_destroy(held[i]);
    }
    run_calls(ACLSHMEM_TEAM_WORLD, me, n, 200, src, dst, rsrc, rdst);
    aclshmem_free(rdst);
    aclshmem_free(rsrc);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

static void scenario_asymmetric(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int64_t *src = aclshmem_malloc(8 * sizeof(int64_t)), *dst = aclshmem_malloc(8 * sizeof(int64_t));
    CHECK(src && dst, "malloc");
    for (int i = 0; i < 8; i++) {
        src[i] = (int64_t)me * 1000 + i;
    }
    aclshmem_barrier_all();
    /* every member names the next one: nobody acts as a root for anybody */
    CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, 1, (me + 1) % n), ACLSHMEM_INVALID_PARAM);
    aclshmem_barrier_all();
    for (int root = 0; root < n; root++) {
        CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, 4, root), 0);
        for (int i = 0; i < 4; i++) {
            CHECK(dst[i] == (int64_t)root * 1000 + i, "after the asymmetric call: root %d element %d", root, i);
        }
    }
    /* member 1 believes it is the root, everybody else names member 0; then well-formed calls */
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    int failed = 0;
    for (int call = 0; call <= 32; call++) {
        int root = (call == 0 && me == 1) ? 1 : 0;
        memset(dst, 0xff, 8 * sizeof(int64_t));
        int rc = aclshmem_int64_broadcast(t, dst, src, 2, root);
        if (rc == ACLSHMEM_INVALID_PARAM) {
            failed++;
        } else {
            CHECK_RC(rc, 0);
            for (int i = 0; i < 2; i++) {
                CHECK(dst[i] == (int64_t)root * 1000 + i, "call %d root %d element %d: %lld", call, root, i,
                      (long long)dst[i]);
            }
        }
    }
    CHECK(failed >= 1, "the asymmetric broadcast was never reported on this PE");
    aclshmem_barrier_all();
    aclshmem_team_destroy(t);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, 3, n - 1), 0);
    for (int i = 0; i < 3; i++) {
        CHECK(dst[i] == (int64_t)(n - 1) * 1000 + i, "world team after the released one: element %d", i);
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* Across nodes with several PEs per node (the hierarchical broadcast): member 1, on member 0's
 * node, believes it is the root while everybody else names member 0, 20 times on fresh teams.
 * Member 1 fails every call (it compares with its node's leader before it sends), and a call
 * that returns 0 anywhere delivered member 0's data: member 1's once reached the other nodes'
 * destinations, and their calls returned 0 with it. */
static void scenario_asymmetric_nodes(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int64_t *src = aclshmem_malloc(2 * sizeof(int64_t)), *dst = aclshmem_malloc(2 * sizeof(int64_t));
    CHECK(src && dst, "malloc");
    /* 100 calls: a member that returned success with the data of a leader that never got it showed
       in about one run of 8 with 20 calls */
    for (int call = 0; call < 100; call++) {
        src[0] = (int64_t)me * 1000 + call;
        src[1] = (int64_t)me * 1000 + call + 1;
        aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        memset(dst, 0xff, 2 * sizeof(int64_t));
        int rc = aclshmem_int64_broadcast(t, dst, src, 2, me == 1 ? 1 : 0);
        if (me == 1) {
            CHECK(rc == ACLSHMEM_INVALID_PARAM, "call %d: the member naming itself got %d", call, rc);
        } else if (rc == 0) {
            CHECK(dst[0] == call && dst[1] == call + 1, "call %d returned 0 with %lld, %lld (root 0's: %d, %d)",
                  call, (long long)dst[0], (long long)dst[1], call, call + 1);
        } else {
            CHECK_RC(rc, ACLSHMEM_INVALID_PARAM);
        }
        aclshmem_barrier_all();
        aclshmem_team_destroy(t);
        aclshmem_barrier_all();
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

static void scenario_asymmetric_length(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    enum { MAXN = 24000 };
    int64_t *src = aclshmem_malloc(MAXN * sizeof(int64_t)), *dst = aclshmem_malloc(MAXN * sizeof(int64_t));
    CHECK(src && dst, "malloc");
    for (int i = 0; i < MAXN; i++) {
        src[i] = (int64_t)me * 1000 + i;
    }
    /* elements member 1 names in the first call, and the others (every call) */
    static const size_t pairs[][2] = {{75, 8}, {5000, 8}, {8000, 5000}, {16384, 8192}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        int failed = 0, failed_first = 0;
        for (int call = 0; call <= 32; call++) {
            size_t nelems = (call == 0 && me == 1) ? pairs[p][0] : pairs[p][1];
            memset(dst, 0xff, MAXN * sizeof(int64_t));
            int rc = aclshmem_int64_broadcast(t, dst, src, nelems, 0);
            if (rc == ACLSHMEM_INVALID_PARAM) {
                failed++;
                failed_first += call == 0;
            } else {
                CHECK_RC(rc, 0);
                for (size_t i = 0; i < nelems; i++) {
                    CHECK(dst[i] == (int64_t)i, "call %d element %zu: %lld", call, i, (long long)dst[i]);
                }
            }
        }
        CHECK(failed >= 1, "lengths %zu/%zu: the asymmetric broadcast was never reported on this PE", pairs[p][0],
              pairs[p][1]);
        CHECK(me != 1 || failed_first == 1, "lengths %zu/%zu: member 1 named another length and its call did not fail",
              pairs[p][0], pairs[p][1]);
        aclshmem_barrier_all();
        aclshmem_team_destroy(t);
        aclshmem_barrier_all();
    }
    CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, 75, n - 1), 0);
    for (int i = 0; i < 75; i++) {
        CHECK(dst[i] == (int64_t)(n - 1) * 1000 + i, "world team after the released one: element %d", i);
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

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
    if (strcmp(argv[1], "asymmetric_length") == 0) {
        scenario_asymmetric_length();
    } else if (strcmp(argv[1], "back_to_back") == 0) {
        scenario_back_to_back();
    } else if (strcmp(argv[1], "asymmetric") == 0) {
        scenario_asymmetric();
    } else if (strcmp(argv[1], "asymmetric_nodes") == 0) {
        scenario_asymmetric_nodes();
    } else {
        fail("unknown scenario");
    }
    return 0;
}

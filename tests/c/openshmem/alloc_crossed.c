/* Collective allocation, free and team splits made by some PEs while the others wait in a barrier
 * of the program, or make another collective call (a program error), run with
 * ACLSHMEM_OSHMEM_ON_ERROR=continue: every such call fails on the PEs that made it (NULL, nothing
 * freed, a nonzero split), each barrier ends once every PE called one, and the heap stays
 * symmetric: the next well-formed allocation returns the same address on every PE and puts into
 * it land. (They used to meet each other's barriers: the allocation failed on one PE and
 * succeeded on the others, whose heaps then differed.) */
#include "osh_util.h"

static long addrs[64];

/* Every PE's `p` is the same address, and a put into it reaches the right neighbour. */
static void check_symmetric(long *p, const char *what) {
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(p != NULL, "%s: a well-formed allocation failed", what);
    if (p == NULL) return;
    shmem_long_p(&addrs[me], (long)p, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int i = 1; i < n; i++)
            CHECK(addrs[i] == addrs[0], "%s: PE %d got %#lx, PE 0 %#lx", what, i, addrs[i], addrs[0]);
    shmem_long_p(p, 1000 + me, (me + 1) % n);
    shmem_barrier_all();
    CHECK(*p == 1000 + (me + n - 1) % n, "%s: %ld arrived", what, *p);
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *src = shmem_calloc(n, sizeof(long)), *dst = shmem_calloc(n * n, sizeof(long));
    shmem_barrier_all();

    /* 1. PE 0 allocates while the others wait in a barrier, then the reverse */
    if (me == 0) {
        CHECK(shmem_malloc(64) == NULL, "allocation against a barrier succeeded");
        shmem_barrier_all();
        shmem_barrier_all();
    } else {
        shmem_barrier_all();
        CHECK(shmem_malloc(64) == NULL, "allocation against a barrier succeeded");
        shmem_barrier_all();
    }
    long *p = shmem_malloc(64);
    check_symmetric(p, "after allocations against barriers");

    /* 2. the same with frees: nothing is freed, then a well-formed free works */
    if (me == 0) {
        shmem_free(p);
        shmem_barrier_all();
        shmem_barrier_all();
    } else {
        shmem_barrier_all();
        shmem_free(p);
        shmem_barrier_all();
    }
    check_symmetric(p, "the block after frees against barriers (still allocated)");
    shmem_free(p);
    long *q = shmem_malloc(64);
    check_symmetric(q, "after a well-formed free");

    /* 3. 2-D team splits (collective over the parent) against barriers */
    shmem_team_t xt = SHMEM_TEAM_INVALID, yt = SHMEM_TEAM_INVALID;
    if (me == 0) {
        CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &xt, NULL, 0, &yt) != 0,
              "split against a barrier succeeded");
        CHECK(xt == SHMEM_TEAM_INVALID && yt == SHMEM_TEAM_INVALID, "failed split made a team");
        shmem_barrier_all();
        shmem_barrier_all();
    } else {
        shmem_barrier_all();
        CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &xt, NULL, 0, &yt) != 0,
              "split against a barrier succeeded");
        CHECK(xt == SHMEM_TEAM_INVALID && yt == SHMEM_TEAM_INVALID, "failed split made a team");
        shmem_barrier_all();
    }
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &xt, NULL, 0, &yt) == 0, "well-formed split failed");
    if (yt != SHMEM_TEAM_INVALID) {
        /* x range 1: every x team is one PE, the y team is the whole job */
        CHECK(shmem_team_n_pes(yt) == n && shmem_team_my_pe(yt) == me, "the split's y team");
        src[0] = me + 1;
        CHECK(shmem_long_sum_reduce(yt, dst, src, 1) == 0 && dst[0] == (long)n * (n + 1) / 2,
              "a reduction on the new team: %ld", dst[0]);
        shmem_team_destroy(yt);
    }
    if (xt != SHMEM_TEAM_INVALID) shmem_team_destroy(xt);

    /* 3b. strided splits (made by the new team's members only) against barriers: the first
     * member finds a member in the barrier, or a member finds the first member there */
    shmem_team_t st = SHMEM_TEAM_INVALID;
    if (me == 0) {
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &st) != 0,
              "strided split against a barrier succeeded");
        CHECK(st == SHMEM_TEAM_INVALID, "failed strided split made a team");
        shmem_barrier_all();
        shmem_barrier_all();
    } else {
        shmem_barrier_all();
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &st) != 0,
              "strided split against a barrier succeeded");
        CHECK(st == SHMEM_TEAM_INVALID, "failed strided split made a team");
        shmem_barrier_all();
    }
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &st) == 0, "well-formed strided split failed");
    if (st != SHMEM_TEAM_INVALID) {
        src[0] = me + 1;
        CHECK(shmem_long_sum_reduce(st, dst, src, 1) == 0 && dst[0] == (long)n * (n + 1) / 2,
              "a reduction on the strided team: %ld", dst[0]);
        shmem_team_destroy(st);
    }

    /* 4. an allocation against another collective call: both fail, on every PE */
    for (int i = 0; i < n; i++) src[i] = me;
    if (me == 0) {
        CHECK(shmem_malloc(128) == NULL, "allocation against an fcollect succeeded");
    } else {
        CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 1) != 0, "fcollect against an allocation succeeded");
    }
    long *r = shmem_malloc(128);
    check_symmetric(r, "after an allocation against an fcollect");
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "well-formed fcollect failed");
    for (int i = 0; i < n; i++) CHECK(dst[i] == i, "fcollect block %d: %ld", i, dst[i]);
    shmem_free(r);
    shmem_free(q);
    return osh_done("alloc_crossed");
}

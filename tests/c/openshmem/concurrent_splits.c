/* Three threads of every PE split three different parent teams (copies of the world team) at
 * once, ROUNDS times each (OpenSHMEM 1.5 allows collectives on different teams from different
 * threads under SHMEM_THREAD_MULTIPLE): per round a strided split of the whole parent, its two
 * halves by parity (every PE calls both; non-members get SHMEM_TEAM_INVALID) and a 2-D split.
 * Every new team must have the right size and members (a sum reduction of the members' world PE
 * numbers over it), and no two teams held at one time by the threads of a PE may share a handle. */
#include <pthread.h>
#include <string.h>

#include "osh_util.h"

#define THREADS 3
#define ROUNDS 40
#define HELD 5

static shmem_team_t parents[THREADS];
static shmem_team_t held[THREADS][HELD];
static long *src[THREADS], *dst[THREADS];
static int n_pes, me;

/* records `team` as held by thread t in place k; no other place of any thread may hold it */
static void hold(int t, int k, shmem_team_t team) {
    if (team == SHMEM_TEAM_INVALID) return;
    __atomic_store_n(&held[t][k], team, __ATOMIC_SEQ_CST);
    for (int u = 0; u < THREADS; u++) {
        for (int j = 0; j < HELD; j++) {
            if (u == t && j == k) continue;
            CHECK(__atomic_load_n(&held[u][j], __ATOMIC_SEQ_CST) != team,
                  "thread %d place %d and thread %d place %d hold one handle %p", t, k, u, j, (void *)team);
        }
    }
}

/* the team must be world PEs first, first + stride, ... (n of them) */
static void check_team(int t, shmem_team_t team, int first, int stride, int n) {
    CHECK(shmem_team_n_pes(team) == n, "thread %d: team of %d PEs, expected %d", t, shmem_team_n_pes(team), n);
    int idx = shmem_team_my_pe(team);
    CHECK(idx >= 0 && first + idx * stride == me, "thread %d: index %d in a team from %d by %d", t, idx, first,
          stride);
    CHECK(shmem_team_translate_pe(team, idx, SHMEM_TEAM_WORLD) == me, "thread %d: translate", t);
    src[t][0] = me;
    CHECK(shmem_long_sum_reduce(team, dst[t], src[t], 1) == 0, "thread %d: reduce", t);
    long want = 0;
    for (int i = 0; i < n; i++) want += first + i * stride;
    CHECK(dst[t][0] == want, "thread %d: sum of the members %ld, expected %ld", t, dst[t][0], want);
}

static void *splitter(void *arg) {
    int t = (int)(long)arg;
    shmem_team_t parent = parents[t];
    for (int r = 0; r < ROUNDS; r++) {
        shmem_team_t all = SHMEM_TEAM_INVALID, half[2] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
        shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
        CHECK(shmem_team_split_strided(parent, 0, 1, n_pes, NULL, 0, &all) == 0, "thread %d: split", t);
        hold(t, 0, all);
        check_team(t, all, 0, 1, n_pes);
        for (int p = 0; p < 2 && p < n_pes; p++) {
            int size = (n_pes - p + 1) / 2;
            CHECK(shmem_team_split_strided(parent, p, 2, size, NULL, 0, &half[p]) == 0, "thread %d: half", t);
            CHECK((half[p] != SHMEM_TEAM_INVALID) == (me % 2 == p), "thread %d: half %d membership", t, p);
            hold(t, 1 + p, half[p]);
            if (half[p] != SHMEM_TEAM_INVALID) check_team(t, half[p], p, 2, size);
        }
        CHECK(shmem_team_split_2d(parent, 2, NULL, 0, &x, NULL, 0, &y) == 0, "thread %d: split_2d", t);
        hold(t, 3, x);
        hold(t, 4, y);
        int xs = me / 2 * 2;
        check_team(t, x, xs, 1, n_pes - xs < 2 ? n_pes - xs : 2);
        check_team(t, y, me % 2, 2, (n_pes - me % 2 + 1) / 2);
        CHECK(shmem_team_sync(all) == 0, "thread %d: sync", t);
        shmem_team_t mine[HELD] = {all, half[0], half[1], x, y};
        for (int k = 0; k < HELD; k++) {
            if (mine[k] == SHMEM_TEAM_INVALID) continue;
            __atomic_store_n(&held[t][k], SHMEM_TEAM_INVALID, __ATOMIC_SEQ_CST);
            shmem_team_destroy(mine[k]);
        }
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0 && provided == SHMEM_THREAD_MULTIPLE,
          "init_thread");
    n_pes = shmem_n_pes();
    me = shmem_my_pe();
    for (int t = 0; t < THREADS; t++) {
        for (int k = 0; k < HELD; k++) held[t][k] = SHMEM_TEAM_INVALID;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n_pes, NULL, 0, &parents[t]) == 0, "parent");
        src[t] = shmem_malloc(sizeof(long));
        dst[t] = shmem_malloc(sizeof(long));
    }
    pthread_t th[THREADS];
    for (int t = 1; t < THREADS; t++) CHECK(pthread_create(&th[t], NULL, splitter, (void *)(long)t) == 0, "create");
    splitter((void *)0L);
    for (int t = 1; t < THREADS; t++) CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");
    shmem_barrier_all();
    for (int t = 0; t < THREADS; t++) {
        shmem_free(src[t]);
        shmem_free(dst[t]);
        shmem_team_destroy(parents[t]);
    }
    return osh_done("concurrent_splits");
}

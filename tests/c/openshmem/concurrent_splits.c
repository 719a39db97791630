/* Two threads of every PE split two different parent teams (copies of the world team) at once,
 * 200 times each (OpenSHMEM 1.5 allows splits of different parents from different threads).
 * This library creates teams one at a time per PE: a split that starts while another thread's
 * is under way ends the job with a message saying so. What must never happen: both threads
 * handed one handle, a team of the wrong size, or a hang. */
#include <pthread.h>

#include "osh_util.h"

static shmem_team_t parents[2];
static shmem_team_t current[2];
static int n_pes;

static void *splitter(void *arg) {
    int t = (int)(long)arg;
    for (int i = 0; i < 200; i++) {
        shmem_team_t team = SHMEM_TEAM_INVALID;
        CHECK(shmem_team_split_strided(parents[t], 0, 1, n_pes, NULL, 0, &team) == 0, "split");
        CHECK(team != SHMEM_TEAM_INVALID && shmem_team_n_pes(team) == n_pes, "team of %d PEs",
              shmem_team_n_pes(team));
        __atomic_store_n(&current[t], team, __ATOMIC_SEQ_CST);
        CHECK(__atomic_load_n(&current[1 - t], __ATOMIC_SEQ_CST) != team, "both threads hold handle %p",
              (void *)team);
        CHECK(shmem_team_sync(team) == 0, "sync");
        __atomic_store_n(&current[t], SHMEM_TEAM_INVALID, __ATOMIC_SEQ_CST);
        shmem_team_destroy(team);
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0 && provided == SHMEM_THREAD_MULTIPLE,
          "init_thread");
    n_pes = shmem_n_pes();
    for (int t = 0; t < 2; t++) {
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n_pes, NULL, 0, &parents[t]) == 0, "parent");
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, splitter, (void *)1L) == 0, "pthread_create");
    splitter((void *)0L);
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
    shmem_barrier_all();
    return osh_done("concurrent_splits");
}

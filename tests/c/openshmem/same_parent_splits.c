/* Two threads of every PE split the same parent (SHMEM_TEAM_WORLD) at the same moment, 20 times
 * (released together by a pthread barrier): overlapping collective calls on one team, which the
 * specification forbids. The split that finds another of its parent under way ends the job with a
 * message saying so (it returned an error and the program went on, its partners possibly waiting
 * in that split). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

#include <shmem.h>

static pthread_barrier_t together;
static int n_pes;

static void *splitter(void *arg) {
    (void)arg;
    for (int i = 0; i < 20; i++) {
        pthread_barrier_wait(&together);
        shmem_team_t team = SHMEM_TEAM_INVALID;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n_pes, NULL, 0, &team) == 0) {
            shmem_team_destroy(team);
        }
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    n_pes = shmem_n_pes();
    pthread_barrier_init(&together, NULL, 2);
    pthread_t th;
    pthread_create(&th, NULL, splitter, NULL);
    splitter(NULL);
    pthread_join(th, NULL);
    printf("FAIL: [PE %d] the program went on after overlapping splits of one parent\n", shmem_my_pe());
    shmem_finalize();
    return 1;
}

/* SHMEM_THREAD_MULTIPLE: 4 threads per PE doing RMA and AMOs at once. */
#include <pthread.h>
#include "osh_util.h"

#define THREADS 4
#define ITERS 500
static long *counter;
static long *slots;

static void *work(void *arg) {
    int t = (int)(long)arg, me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < ITERS; i++) {
        shmem_long_atomic_inc(counter, (me + 1) % n);
        long v = me * 100 + t;
        shmem_long_put(&slots[me * THREADS + t], &v, 1, (me + i) % n);
    }
    shmem_quiet();
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread");
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int q = -1;
    shmem_query_thread(&q);
    CHECK(q == SHMEM_THREAD_MULTIPLE, "query_thread");
    int n = shmem_n_pes(), me = shmem_my_pe();
    counter = shmem_calloc(1, sizeof(long));
    slots = shmem_calloc((size_t)n * THREADS, sizeof(long));
    shmem_barrier_all();
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, work, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    shmem_barrier_all();
    CHECK(*counter == (long)THREADS * ITERS, "counter %ld", *counter);
    (void)me;
    shmem_barrier_all();
    return osh_done("threads");
}

/* Locks through UCX with its progress thread off: the lock word lives on PE 0, the other PEs'
 * atomics on it land only while PE 0 is inside a library call that progresses; PE 0 waiting in
 * shmem_set_lock must be one (it spun on its own word, and every PE waited for ever). Each holder
 * also reads from another PE and adds to a counter, as a critical section does. */
#include "osh_util.h"

#define ROUNDS 20

static long lock;    /* symmetric: a static of the program */
static long counter; /* on PE 0 */
static long value;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    value = me;
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        shmem_set_lock(&lock);
        long v = shmem_long_g(&value, (me + 1) % n);
        CHECK(v == (me + 1) % n, "round %d: value of the next PE %ld", r, v);
        long c = shmem_long_g(&counter, 0);
        shmem_long_p(&counter, c + 1, 0);
        shmem_quiet();
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    if (me == 0) CHECK(counter == (long)ROUNDS * n, "counter %ld, expected %ld", counter, (long)ROUNDS * n);
    return osh_done("lock_progress");
}

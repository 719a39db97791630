/* Polling a word of one's own with a library call other than a wait: the last PE spins on its
 * own word with each of fetch, g and compare-swap (and a CAS lock on its own word that the others
 * also take) while the others update it over the network transport. Over UCX without the
 * progress thread such a loop let the others' atomics and puts to this PE wait for ever (only
 * waits, tests and locks drove the transport). */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "osh_util.h"

static long flag;
static long lock_word;
static long counter;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), last = n - 1;
    const char *modes[] = {"fetch", "g", "cas", "put"};
    for (int m = 0; m < 4; m++) {
        flag = 0;
        shmem_barrier_all();
        if (me == last) {
            long seen = 0, spins = 0;
            while (seen != n - 1) {
                switch (m) {
                case 0: seen = shmem_long_atomic_fetch(&flag, last); break;
                case 1: seen = shmem_long_g(&flag, last); break;
                default: seen = shmem_long_atomic_compare_swap(&flag, -1, -1, last); break;
                }
                spins++;
            }
            CHECK(seen == n - 1, "%s: saw %ld", modes[m], seen);
        } else {
            nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
            if (m == 3) {
                shmem_long_atomic_add(&flag, 1, last);
            } else {
                shmem_long_atomic_inc(&flag, last);
            }
        }
        shmem_barrier_all();
    }
    /* a CAS spin lock on the last PE's word, taken by every PE, the last one too */
    for (int i = 0; i < 20; i++) {
        while (shmem_long_atomic_compare_swap(&lock_word, 0, me + 1, last) != 0) {
        }
        long c = shmem_long_g(&counter, last);
        shmem_long_p(&counter, c + 1, last);
        shmem_quiet();
        shmem_long_atomic_set(&lock_word, 0, last);
    }
    shmem_barrier_all();
    if (me == last) CHECK(counter == 20L * n, "counter %ld, expected %ld", counter, 20L * n);
    return osh_done("self_poll");
}

/* The memory routines that perform no action (OpenSHMEM 1.5, 9.3: a size of 0, freeing NULL)
 * return at once without a barrier: PE 0 alone makes each of them, then every PE allocates and
 * uses a block. They used to be collective calls: the others' next barrier met PE 0's
 * allocation step and the job ended. */
#include <stdint.h>

#include "osh_util.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (me == 0) {
        shmem_free(NULL);
        CHECK(shmem_malloc(0) == NULL, "malloc(0)");
        CHECK(shmem_calloc(0, 8) == NULL, "calloc(0, 8)");
        CHECK(shmem_align(64, 0) == NULL, "align(64, 0)");
        CHECK(shmem_align(3, 0) == NULL, "align(3, 0)");
        CHECK(shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE) == NULL, "malloc_with_hints(0)");
        CHECK(shmem_realloc(NULL, 0) == NULL, "realloc(NULL, 0)");
        shfree(NULL);
        CHECK(shmalloc(0) == NULL, "shmalloc(0)");
    }
    shmem_barrier_all();
    long *x = shmem_malloc(sizeof(long));
    CHECK(x != NULL, "malloc after the no-action calls");
    if (x != NULL) {
        *x = -1;
        shmem_barrier_all();
        shmem_long_p(x, me, (me + 1) % n);
        shmem_barrier_all();
        CHECK(*x == (me + n - 1) % n, "neighbour's value %ld", *x);
        shmem_free(x);
    }
    return osh_done("no_action");
}

/* Bad input: by default the call prints a message naming itself and the argument and the job ends
 * with status 1 (argument "abort"); with ACLSHMEM_OSHMEM_ON_ERROR=continue the call does nothing. */
#include <string.h>
#include "osh_util.h"

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;
    int local[4] = {1, 2, 3, 4};
    int *sym = shmem_calloc(4, sizeof(int));
    shmem_barrier_all();
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        if (me == 0) shmem_int_put(sym, local, 4, 99);
        shmem_barrier_all();
        printf("FAIL: the job was not ended\n");
        return 1;
    }
    shmem_int_put(local, local, 4, right); /* dest not symmetric: nothing happens */
    shmem_int_put(sym, local, 4, 99);      /* PE out of range */
    CHECK(shmem_int_g(NULL, right) == 0, "g of NULL returns 0");
    CHECK(shmem_long_atomic_fetch_add(NULL, 1, right) == 0, "AMO on NULL returns 0");
    /* the program writes its lock variable while holding the lock (undefined): the next
     * shmem_set_lock finds the lock's state inconsistent and reports it instead of spinning */
    long *lock = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    if (me == 0) {
        shmem_set_lock(lock);
        *lock = 1;
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    shmem_set_lock(lock);
    shmem_barrier_all();
    CHECK(sym[0] == 0 && sym[3] == 0, "nothing written");
    shmem_sync(SHMEM_TEAM_WORLD);
    return osh_done("errors");
}

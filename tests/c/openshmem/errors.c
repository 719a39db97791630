/* Bad input: by default the call prints a message naming itself and the argument and the job ends
 * with status 1 (argument "abort"); with ACLSHMEM_OSHMEM_ON_ERROR=continue the call does nothing. */
#include <stdlib.h>
#include <string.h>
#include "osh_util.h"

static long psync_ok[SHMEM_BCAST_SYNC_SIZE]; /* symmetric: a static of the program */

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;
    int local[4] = {1, 2, 3, 4};
    int *sym = shmem_calloc(4, sizeof(int));
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) psync_ok[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        if (me == 0) shmem_int_put(sym, local, 4, 99);
        shmem_barrier_all();
        printf("FAIL: the job was not ended\n");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "null_out") == 0) {
        /* a NULL output pointer of a call with a return code is bad input too */
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, NULL);
        shmem_barrier_all();
        printf("FAIL: the job was not ended\n");
        return 1;
    }
    /* NULL output pointers: reported, the calls return nonzero (with continue) */
    CHECK(shmem_ctx_create(0, NULL) != 0, "ctx_create(NULL)");
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, NULL) != 0, "team_create_ctx(NULL)");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, NULL) != 0, "ctx_get_team(NULL)");
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, 0, NULL) != 0, "team_get_config(NULL)");
    /* a destroyed team's handle: the message names the handle the program passed (this surface's
     * number, not the core's slot, which may equal another live handle) */
    {
        shmem_team_t gone = SHMEM_TEAM_INVALID;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &gone) == 0, "split");
        shmem_team_destroy(gone);
        CHECK(shmem_int_sum_reduce(gone, sym, sym + 1, 1) != 0, "reduction on a destroyed team");
        fprintf(stderr, "DESTROYED_TEAM %p\n", (void *)gone);
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
    /* deprecated active-set calls over the whole job with a bad pSync: NULL, not symmetric (on
     * the stack), misaligned; and an active set reaching past the last PE. Each is reported and
     * does nothing, the same on every PE, so nobody waits. */
    long stack_psync[SHMEM_BCAST_SYNC_SIZE];
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) stack_psync[i] = SHMEM_SYNC_VALUE;
    long *bsrc = shmem_malloc(8), *bdst = shmem_malloc(8);
    *bsrc = 7;
    *bdst = 0;
    shmem_barrier_all();
    shmem_broadcast64(bdst, bsrc, 1, 0, 0, 0, n, NULL);
    shmem_broadcast64(bdst, bsrc, 1, 0, 0, 0, n, stack_psync);
    shmem_broadcast64(bdst, bsrc, 1, 0, 0, 0, n, (long *)((char *)psync_ok + 1));
    shmem_barrier(0, 0, n + 1, psync_ok);
    shmem_barrier_all();
    CHECK(*bdst == 0, "no bad broadcast wrote");
    shmem_broadcast64(bdst, bsrc, 1, 0, 0, 0, n, psync_ok);
    CHECK(*bdst == (me == 0 ? 0 : 7), "the good broadcast wrote every member but the root");
    /* members naming different strides in a strided all-to-all (PE 0 another dest stride):
       reported on every member (the team's agreement compares element size, strides and count),
       nothing written past dest, and the team's next one works */
    long *asrc = shmem_malloc(4 * n * sizeof(long)), *adst = shmem_malloc((4 * n + 8) * sizeof(long));
    for (int i = 0; i < 4 * n; i++) asrc[i] = me * 1000 + i;
    for (int i = 0; i < 4 * n + 8; i++) adst[i] = -5;
    shmem_barrier_all();
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, adst, asrc, me == 0 ? 2 : 1, 1, 2) != 0,
          "alltoalls with another dest stride on PE 0 returned 0");
    for (int i = 4 * n; i < 4 * n + 8; i++) CHECK(adst[i] == -5, "alltoalls wrote past dest");
    shmem_barrier_all();
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, adst, asrc, 1, 1, 2) == 0, "alltoalls after");
    for (int p = 0; p < n; p++)
        CHECK(adst[2 * p] == p * 1000 + 2 * me && adst[2 * p + 1] == p * 1000 + 2 * me + 1, "alltoalls data");
    shmem_sync(SHMEM_TEAM_WORLD);
    /* shmem_realloc of memory that is no symmetric block: reported as an error (as shmem_free's),
       not only a NULL */
    int *plain = malloc(16);
    CHECK(shmem_realloc(plain, 64) == NULL, "realloc of plain memory returned a block");
    free(plain);
    return osh_done("errors");
}

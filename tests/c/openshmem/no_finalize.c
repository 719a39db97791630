/* Programs that initialise with shmem_init and return from main without shmem_finalize (many
 * older programs and test suites do; Sandia OpenSHMEM and Open MPI's OSHMEM finalize them at
 * exit, and so does this library).
 *   reads    the PEs other than 0 return at once after a barrier; PE 0 then reads and writes their
 *            memory (program data and heap) for a while and returns last: every PE ends with 0
 *   race     2000 barriers, broadcasts and reductions, then every PE returns at once: a PE that
 *            left must never make a peer still finishing the last call fail
 *   subteam  PE 0 returns after splitting off a team of the others, which then go on with 200
 *            barriers, broadcasts and fcollects among themselves: nothing waits for PE 0
 *   fork     every PE forks a child that calls exit(0) (running the exit handlers it inherited):
 *            the child is no PE and must not finalize or leave on the PE's behalf; PE 1 then
 *            enters a barrier 3 s late, and the others must simply wait for it
 *   early    PE 1 returns with status 3 right after init (a program ending early on an error)
 *            while the others wait in shmem_barrier_all: PE 1 is not finalized, the job ends at
 *            once as when a PE dies, with status 3
 *   early0   PE 1 returns with status 0 right after init while the others wait in
 *            shmem_barrier_all: they end the job naming PE 1
 *   early_coll  the same with the others in shmem_long_fcollect over the world team
 *   early_wait  PE 1 returns 0 while PE 0 waits in shmem_long_wait_until for a word nobody sets
 *            and the other PEs return 0 too: PE 0 ends the job (nothing can end its wait) */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <shmem.h>

static long data[64]; /* symmetric: program data */

static int fail(int me, const char *what, long got, long want) {
    printf("FAIL: [PE %d] %s: %ld, expected %ld\n", me, what, got, want);
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "reads";
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *heap = shmem_malloc(64 * sizeof(long));
    long *src = shmem_malloc(64 * sizeof(long));
    long *dst = shmem_malloc(64 * (size_t)n * sizeof(long));
    if (!heap || !src || !dst) return fail(me, "shmem_malloc", 0, 1);
    for (int i = 0; i < 64; i++) {
        data[i] = me * 1000 + i;
        heap[i] = me * 2000 + i;
        src[i] = me;
    }
    if (strncmp(mode, "early", 5) == 0) {
        if (n < 2) return fail(me, "needs PEs", n, 2);
        if (me == 1) return strcmp(mode, "early") == 0 ? 3 : 0;
        if (strcmp(mode, "early") == 0 || strcmp(mode, "early0") == 0) {
            shmem_barrier_all();
        } else if (strcmp(mode, "early_coll") == 0) {
            shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 1);
        } else if (me == 0) {
            static long never;
            shmem_long_wait_until(&never, SHMEM_CMP_NE, 0);
        } else {
            return 0;
        }
        printf("FAIL: [PE %d] %s returned although PE 1 left\n", me, mode);
        fflush(stdout);
        return 1;
    }
    shmem_barrier_all();
    if (strcmp(mode, "reads") == 0) {
        if (me != 0) return 0;
        usleep(300000); /* the others are in their exit by now */
        for (int round = 0; round < 50; round++) {
            for (int pe = 1; pe < n; pe++) {
                long got = shmem_long_g(&data[round], pe);
                if (got != pe * 1000 + round) return fail(me, "g of program data", got, pe * 1000 + round);
                long buf[64];
                shmem_long_get(buf, heap, 64, pe);
                if (buf[round] != pe * 2000 + round) return fail(me, "get of heap", buf[round], pe * 2000 + round);
                shmem_long_p(&heap[round], -round, pe);
                shmem_quiet();
                if (shmem_long_g(&heap[round], pe) != -round) return fail(me, "p then g", shmem_long_g(&heap[round], pe), -round);
                if (shmem_long_atomic_fetch_add(&data[63], 1, pe) != pe * 1000 + 63 + round)
                    return fail(me, "fetch-add", 0, pe * 1000 + 63 + round);
            }
        }
        printf("OK no_finalize\nOK reads\n");
        fflush(stdout);
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        pid_t child = fork();
        if (child == 0) exit(0);
        int status = -1;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return fail(me, "fork", status, 0);
        if (me == 1) sleep(3);
        shmem_barrier_all();
        if (me == 0) {
            printf("OK no_finalize\nOK fork\n");
            fflush(stdout);
        }
        return 0;
    }
    if (strcmp(mode, "race") == 0) {
        for (int i = 0; i < 2000; i++) {
            shmem_barrier_all();
            shmem_long_broadcast(SHMEM_TEAM_WORLD, heap, src, 1, i % n);
            if (heap[0] != i % n) return fail(me, "broadcast", heap[0], i % n);
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, heap, src, 1);
            if (heap[0] != (long)n * (n - 1) / 2) return fail(me, "sum", heap[0], (long)n * (n - 1) / 2);
        }
        if (me == 0) {
            printf("OK no_finalize\nOK race\n");
            fflush(stdout);
        }
        return 0;
    }
    if (strcmp(mode, "subteam") == 0) {
        shmem_team_t rest = SHMEM_TEAM_INVALID;
        if (n > 1 && shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &rest) != 0)
            return fail(me, "split", 1, 0);
        shmem_barrier_all();
        if (me == 0) return 0;
        int tme = shmem_team_my_pe(rest), tn = shmem_team_n_pes(rest);
        if (me == 1) usleep(300000); /* PE 0 has left by now */
        for (int i = 0; i < 200; i++) {
            shmem_team_sync(rest);
            shmem_long_broadcast(rest, heap, src, 1, i % tn);
            if (heap[0] != i % tn + 1) return fail(me, "team broadcast", heap[0], i % tn + 1);
            shmem_long_fcollect(rest, dst, src, 1);
            for (int j = 0; j < tn; j++)
                if (dst[j] != j + 1) return fail(me, "team fcollect", dst[j], j + 1);
        }
        (void)tme;
        if (me == 1) {
            printf("OK no_finalize\nOK subteam\n");
            fflush(stdout);
        }
        return 0;
    }
    return fail(me, "unknown mode", 0, 1);
}

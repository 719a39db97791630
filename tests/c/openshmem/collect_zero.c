/* shmem_collect where some PEs contribute nothing and pass NULL as their source (allowed: no
 * data is read from it), with every contribution pattern: PE 0 alone empty, every even PE empty,
 * all but the last empty. Every PE's dest must hold the others' blocks in PE order, and nothing
 * past them may change. Through a transport the empty PE's dest was filled with zeros: it pulled
 * the others' blocks from the address of its own (NULL) source. */
#include "osh_util.h"

#define MAX 3

static int count(int pattern, int pe, int n) {
    switch (pattern) {
    case 0: return pe == 0 ? 0 : MAX;
    case 1: return pe % 2 == 0 ? 0 : 1 + pe % MAX;
    default: return pe == n - 1 ? MAX : 0;
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *src = shmem_malloc(MAX * sizeof(long));
    long *dst = shmem_malloc((MAX * n + 1) * sizeof(long));
    for (int pattern = 0; pattern < 3; pattern++) {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < MAX; i++) src[i] = 1000 * pattern + 100 * me + 10 * round + i;
            for (int i = 0; i < MAX * n + 1; i++) dst[i] = -7;
            shmem_barrier_all();
            int mine = count(pattern, me, n);
            CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, mine == 0 ? NULL : src, mine) == 0, "collect");
            int k = 0;
            for (int pe = 0; pe < n; pe++) {
                for (int i = 0; i < count(pattern, pe, n); i++, k++) {
                    long want = 1000 * pattern + 100 * pe + 10 * round + i;
                    CHECK(dst[k] == want, "pattern %d round %d: dst[%d] = %ld, expected %ld", pattern, round, k,
                          dst[k], want);
                }
            }
            CHECK(dst[k] == -7, "pattern %d: dst[%d] past the blocks = %ld", pattern, k, dst[k]);
            shmem_barrier_all();
        }
    }
    shmem_free(dst);
    shmem_free(src);
    return osh_done("collect_zero");
}

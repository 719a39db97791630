/* shmem_finalize completes what the PE issued before it (OpenSHMEM 1.5: its implicit barrier
 * makes pending communication complete): each PE writes into program data of
 * its right neighbour, then calls shmem_finalize with no quiet or barrier of its own. After
 * finalize every PE reads its own copies (program data stays readable after finalize) and checks
 * what its left neighbour wrote. Over a network transport a put still in flight at finalize must
 * land before any PE returns. The argument names the one operation issued:
 *   put    an 8-byte shmem_long_put      nbi    an 8-element shmem_long_put_nbi
 *   p      a shmem_long_p                amo    a shmem_long_atomic_add
 *   big    a 4 MiB shmem_long_put        all    all of these, the big put first */
#include <stdio.h>
#include <string.h>
#include <shmem.h>

#define BIG (512 * 1024) /* longs: 4 MiB */

static long big[BIG];
static long small[8];
static long word;
static long sum;

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int all = strcmp(mode, "all") == 0;
    int do_put = all || strcmp(mode, "put") == 0, do_nbi = all || strcmp(mode, "nbi") == 0;
    int do_p = all || strcmp(mode, "p") == 0, do_amo = all || strcmp(mode, "amo") == 0;
    int do_big = all || strcmp(mode, "big") == 0;
    static long src[BIG];
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (long i = 0; i < BIG; i++) src[i] = (long)me * 1000003L + i;
    long s8[8];
    for (int i = 0; i < 8; i++) s8[i] = me * 100 + i;
    shmem_barrier_all(); /* every PE initialised its data before any put lands */
    if (do_big) shmem_long_put(big, src, BIG, right);
    if (do_amo) shmem_long_atomic_add(&sum, me + 1, right);
    if (do_nbi) shmem_long_put_nbi(small, s8, 8, right);
    if (do_put) shmem_long_put(&small[0], &s8[0], 1, right);
    if (do_p) shmem_long_p(&word, 7 + me, right);
    shmem_finalize();
    int bad = 0;
    for (long i = 0; do_big && i < BIG && bad < 3; i++) {
        if (big[i] != (long)left * 1000003L + i) {
            printf("FAIL: [PE %d] big[%ld] = %ld, expected %ld\n", me, i, big[i],
                   (long)left * 1000003L + i);
            bad++;
        }
    }
    for (int i = 0; i < (do_nbi ? 8 : do_put ? 1 : 0); i++) {
        if (small[i] != left * 100 + i) {
            printf("FAIL: [PE %d] small[%d] = %ld, expected %d\n", me, i, small[i], left * 100 + i);
            bad++;
        }
    }
    if (do_p && word != 7 + left) {
        printf("FAIL: [PE %d] word = %ld, expected %d\n", me, word, 7 + left);
        bad++;
    }
    if (do_amo && sum != left + 1) {
        printf("FAIL: [PE %d] sum = %ld, expected %d\n", me, sum, left + 1);
        bad++;
    }
    if (bad) return 1;
    printf("OK finalize_completes %s PE %d\n", mode, me);
    return 0;
}

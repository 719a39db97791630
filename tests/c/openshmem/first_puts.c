/* Puts issued the moment shmem_init returns land: every PE, straight after init (no barrier
 * first), puts its stamp into program data of every other PE (a blocking put, a p and a
 * put-with-signal), then a barrier completes them and every PE checks what it received. Across
 * nodes the first PE out of init may send before a slower peer has finished its own init: the
 * peer must already accept messages to its memory (a put it dropped was still acknowledged, so
 * the barrier passed with stale data). */
#include <stdio.h>
#include <stdint.h>
#include <shmem.h>

#define MAX_PES 64

static long got[MAX_PES][4];
static long word[MAX_PES];
static long data[MAX_PES][2];
static uint64_t sig[MAX_PES];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n > MAX_PES) {
        printf("FAIL: [PE %d] at most %d PEs\n", me, MAX_PES);
        shmem_global_exit(1);
    }
    long stamp[4] = {me + 1, me + 101, me + 1001, me + 10001};
    long two[2] = {me + 7, me + 77};
    for (int k = 1; k < n; k++) {
        int pe = (me + k) % n;
        shmem_long_put(got[me], stamp, 4, pe);
        shmem_long_p(&word[me], me + 5, pe);
        shmem_long_put_signal(data[me], two, 2, &sig[me], 1, SHMEM_SIGNAL_ADD, pe);
    }
    shmem_barrier_all();
    int bad = 0;
    for (int j = 0; j < n; j++) {
        if (j == me) continue;
        for (int i = 0; i < 4; i++) {
            long want = j + (i == 0 ? 1 : i == 1 ? 101 : i == 2 ? 1001 : 10001);
            if (got[j][i] != want) {
                printf("FAIL: [PE %d] got[%d][%d] = %ld, expected %ld\n", me, j, i, got[j][i], want);
                bad++;
            }
        }
        if (word[j] != j + 5) {
            printf("FAIL: [PE %d] word[%d] = %ld, expected %d\n", me, j, word[j], j + 5);
            bad++;
        }
        if (sig[j] != 1 || data[j][0] != j + 7 || data[j][1] != j + 77) {
            printf("FAIL: [PE %d] from PE %d: signal %llu, data %ld %ld\n", me, j,
                   (unsigned long long)sig[j], data[j][0], data[j][1]);
            bad++;
        }
    }
    shmem_finalize();
    if (bad) return 1;
    printf("OK first_puts PE %d\n", me);
    return 0;
}

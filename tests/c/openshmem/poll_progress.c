/* Polling loops see remote updates by themselves: every PE puts into its right neighbour, then
 * spins on a test routine (no wait, no quiet, no barrier) until its left neighbour's update shows.
 * Run over UCX with the progress thread off (tests/openshmem.rs): only the polling call itself can
 * then move the neighbour's message from the socket into memory, so a test routine that does not
 * drive the transport spins for ever (the harness's timeout fails the run). */
#include <stdint.h>
#include "osh_util.h"

#define N 4

static int flag;
static int vec[N];
static uint64_t sig;
static long data;

/* spins until `cond` holds; the harness's timeout ends a PE that never sees it */
#define POLL_UNTIL(cond)                                                                           \
    do {                                                                                           \
        while (!(cond)) {                                                                          \
        }                                                                                          \
    } while (0)

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n;

    /* shmem_test */
    shmem_int_p(&flag, 1, right);
    POLL_UNTIL(shmem_int_test(&flag, SHMEM_CMP_EQ, 1));
    shmem_quiet();
    shmem_barrier_all();

    /* test_all, test_any, test_some and their vector forms, one element per round */
    size_t idx[N];
    int status[N] = {0};
    int want[N] = {1, 2, 3, 4};
    for (int i = 0; i < N; i++) {
        shmem_int_p(&vec[i], i + 1, right);
        switch (i) {
        case 0:
            POLL_UNTIL(shmem_int_test_any(vec, N, NULL, SHMEM_CMP_EQ, 1) == 0);
            break;
        case 1:
            POLL_UNTIL(shmem_int_test_some(vec, N, idx, NULL, SHMEM_CMP_EQ, 2) == 1);
            CHECK(idx[0] == 1, "test_some index %zu", idx[0]);
            break;
        case 2:
            status[0] = status[1] = 1; /* only elements 2 and 3 take part */
            POLL_UNTIL(shmem_int_test_any_vector(vec, N, status, SHMEM_CMP_EQ, want) == 2);
            status[0] = status[1] = 0;
            break;
        default:
            POLL_UNTIL(shmem_int_test_all_vector(vec, N, NULL, SHMEM_CMP_EQ, want));
            POLL_UNTIL(shmem_int_test_all(vec, N, NULL, SHMEM_CMP_GT, 0));
            POLL_UNTIL(shmem_int_test_some_vector(vec, N, idx, NULL, SHMEM_CMP_EQ, want) == N);
            break;
        }
        shmem_quiet();
        shmem_barrier_all();
    }

    /* shmem_signal_fetch after a put-with-signal */
    long payload = 1000 + me;
    shmem_long_put_signal_nbi(&data, &payload, 1, &sig, 7, SHMEM_SIGNAL_SET, right);
    POLL_UNTIL(shmem_signal_fetch(&sig) == 7);
    int left = (me + n - 1) % n;
    CHECK(data == 1000 + left, "data %ld after the signal", data);
    shmem_quiet();
    shmem_barrier_all();

    return osh_done("poll_progress");
}

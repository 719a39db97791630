/* The symmetric heap's size.
 *
 * HEAP_EXPECT_MB (default 8): the heap size the run sets up (SHMEM_SYMMETRIC_SIZE=8M, or nothing
 * for the default of 512 MiB). An allocation 1 MiB smaller fits and works at both ends, 1 MiB
 * larger does not. */
#include <stdint.h>

#include "osh_util.h"

int main(void) {
    const char *e = getenv("HEAP_EXPECT_MB");
    size_t mb = e ? (size_t)atol(e) : 8;
    shmem_init();
    size_t len = (mb - 1) << 20;
    unsigned char *fits = shmem_malloc(len);
    CHECK(fits != NULL, "%zu MiB fit in a %zu MiB heap", mb - 1, mb);
    if (fits) {
        /* the heap works end to end: the neighbour's first and last bytes */
        int me = shmem_my_pe(), n = shmem_n_pes();
        fits[0] = fits[len - 1] = 0;
        shmem_barrier_all();
        shmem_uint8_p(&fits[0], (uint8_t)(me + 1), (me + 1) % n);
        shmem_uint8_p(&fits[len - 1], (uint8_t)(me + 2), (me + 1) % n);
        shmem_barrier_all();
        int from = (me + n - 1) % n;
        CHECK(fits[0] == from + 1 && fits[len - 1] == from + 2, "neighbour's puts at both ends");
        shmem_free(fits);
    }
    void *too_big = shmem_malloc((mb + 1) << 20);
    CHECK(too_big == NULL, "%zu MiB do not fit in a %zu MiB heap", mb + 1, mb);
    return osh_done("heap_size");
}

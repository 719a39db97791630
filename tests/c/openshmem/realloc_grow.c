/* shmem_realloc in place (run with a 64 MiB heap): the only block grows from 24 to 48 MiB (a new
 * block would have to fit beside the old one: 72 MiB, and realloc returned NULL), keeping its
 * contents, and the grown part is symmetric (a neighbour's put into it lands); it shrinks to
 * 1 MiB and the space after it is usable again; a block with a live block after it still grows
 * (moved, contents kept). */
#include <stdint.h>
#include <string.h>

#include "osh_util.h"

#define MIB (1024L * 1024L)

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *a = shmem_malloc(24 * MIB);
    CHECK(a != NULL, "malloc 24 MiB");
    long words = 24 * MIB / (long)sizeof(long);
    for (long i = 0; i < words; i++) a[i] = i ^ me;
    long *b = shmem_realloc(a, 48 * MIB);
    CHECK(b != NULL, "realloc of the only block to 48 MiB of a 64 MiB heap");
    if (b != NULL) {
        CHECK(b == a, "grown in place (%p, was %p)", (void *)b, (void *)a);
        long bad = 0;
        for (long i = 0; i < words; i++) bad += b[i] != (i ^ me);
        CHECK(bad == 0, "%ld words changed by the realloc", bad);
        long last = 48 * MIB / (long)sizeof(long) - 1;
        b[last] = -1;
        shmem_barrier_all();
        shmem_long_p(&b[last], me, (me + 1) % n);
        shmem_barrier_all();
        CHECK(b[last] == (me + n - 1) % n, "the grown part's last word holds %ld", b[last]);
        long *c = shmem_realloc(b, MIB);
        CHECK(c == b, "shrunk in place (%p, was %p)", (void *)c, (void *)b);
        CHECK(c != NULL && c[5] == (5 ^ me), "contents kept by the shrink");
        long *big = shmem_malloc(60 * MIB);
        CHECK(big != NULL, "the space after the shrunk block is free again (60 MiB)");
        shmem_free(big);
        /* a live block right after it: the realloc moves it, contents kept */
        long *next = shmem_malloc(MIB);
        CHECK(next != NULL, "malloc after the block");
        long *d = shmem_realloc(c, 4 * MIB);
        CHECK(d != NULL && d != c, "moved when it cannot grow in place (%p, was %p)", (void *)d, (void *)c);
        if (d != NULL) {
            long bad2 = 0;
            for (long i = 0; i < MIB / (long)sizeof(long); i++) bad2 += d[i] != (i ^ me);
            CHECK(bad2 == 0, "%ld words changed by the moving realloc", bad2);
            /* PEs asking for different sizes: NULL on every PE (logged), the block kept */
            if (n > 1) {
                long *e = shmem_realloc(d, me == 0 ? 2 * MIB : 3 * MIB);
                CHECK(e == NULL, "an asymmetric realloc returned %p", (void *)e);
                CHECK(d[7] == (7 ^ me), "the block changed under an asymmetric realloc");
            }
            shmem_free(d);
        }
        shmem_free(next);
    }
    return osh_done("realloc_grow");
}

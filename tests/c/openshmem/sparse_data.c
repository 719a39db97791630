/* Program data nobody wrote costs no shared memory: shmem_init moves the program's writable data
 * onto shared memory, and only the pages holding something take memory there; the rest is taken
 * when first written. A 96 MiB static array (.bss) of which FILL_MB MiB (default 0) are written
 * before shmem_init: its untouched pages are not resident after init, puts reach them at both
 * ends, and the pages written before init kept their contents. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "osh_util.h"

#define BIG (96u << 20)
static unsigned char big[BIG];

int main(void) {
    const char *e = getenv("FILL_MB");
    size_t fill = e ? (size_t)atol(e) << 20 : 0;
    if (fill > BIG) fill = BIG;
    memset(big, 7, fill);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(shmem_addr_accessible(big, (me + 1) % n), "the array is symmetric");
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = BIG / (size_t)page, resident = 0;
    unsigned char *vec = malloc(pages);
    uintptr_t start = (uintptr_t)big, first = (start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    size_t whole = (BIG - (first - start)) / (size_t)page;
    CHECK(vec != NULL && mincore((void *)first, whole * (size_t)page, vec) == 0, "mincore");
    for (size_t i = 0; vec && i < whole; i++) resident += vec[i] & 1;
    /* the pages written before init, plus a few shared with other data at the edges */
    size_t expect = fill / (size_t)page + 4;
    CHECK(resident <= expect, "%zu of %zu pages resident after init, at most %zu expected", resident, whole,
          expect);
    CHECK(fill == 0 || (big[0] == 7 && big[fill - 1] == 7), "contents written before init kept");
    shmem_barrier_all();
    /* the untouched pages work as any: the neighbour's first and last bytes */
    shmem_uint8_p(&big[BIG - 1], (uint8_t)(me + 1), (me + 1) % n);
    shmem_uint8_p(&big[fill], (uint8_t)(me + 2), (me + 1) % n);
    shmem_barrier_all();
    int from = (me + n - 1) % n;
    CHECK(big[BIG - 1] == from + 1 && (fill == BIG || big[fill] == from + 2), "puts into untouched pages");
    free(vec);
    return osh_done("sparse_data");
}

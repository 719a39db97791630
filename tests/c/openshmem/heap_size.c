/* SHMEM_SYMMETRIC_SIZE sizes the symmetric heap (run with SHMEM_SYMMETRIC_SIZE=8M). */
#include "osh_util.h"

int main(void) {
    shmem_init();
    void *fits = shmem_malloc(7u << 20);
    CHECK(fits != NULL, "7 MiB fit in an 8 MiB heap");
    shmem_free(fits);
    void *too_big = shmem_malloc(9u << 20);
    CHECK(too_big == NULL, "9 MiB do not fit in an 8 MiB heap");
    return osh_done("heap_size");
}

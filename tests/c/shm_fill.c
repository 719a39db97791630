/* shm_fill.c - heaps keep working when /dev/shm fills up after init (tests/shm_space.rs).
 *
 * Run on 2 PEs under aclshmrun in a private mount namespace whose /dev/shm is a small tmpfs. After
 * init, PE 0 fills the rest of /dev/shm with a file; then every PE writes every byte of a block
 * of its heap and puts it to its neighbour. With the heap's pages reserved at creation this works;
 * with pages allocated on first touch the first write past the free space ends the PE with SIGBUS.
 * A HOST_SIDE allocation afterwards (a new heap that no longer fits) returns NULL on every PE.
 * Exits non-zero on the first failed check; PE 0 prints "OK shm_fill". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            printf("FAIL: shm_fill: %s:%d: %s\n", __FILE__, __LINE__, #c);  \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define BLOCK ((size_t)12 << 20)
#define FILLER "/dev/shm/aclshmem-test-filler"

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_from_env(&attr) == 0);
    CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) == 0);
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    unsigned char *p = aclshmem_malloc(BLOCK);
    CHECK(p != NULL);
    if (me == 0) {
        int fd = open(FILLER, O_CREAT | O_WRONLY | O_TRUNC, 0600);
        CHECK(fd >= 0);
        static unsigned char chunk[1 << 16];
        memset(chunk, 0xAB, sizeof chunk);
        size_t total = 0;
        for (;;) {
            ssize_t w = write(fd, chunk, sizeof chunk);
            if (w <= 0) {
                CHECK(w < 0 && errno == ENOSPC);
                break;
            }
            total += (size_t)w;
        }
        close(fd);
        printf("filled /dev/shm with %zu more bytes\n", total);
    }
    aclshmem_barrier_all();
    memset(p, me + 1, BLOCK); /* every page of the block */
    aclshmem_barrier_all();
    unsigned char *tmp = malloc(BLOCK);
    CHECK(tmp != NULL);
    memset(tmp, 0x40 + me, BLOCK);
    aclshmem_putmem(p, tmp, BLOCK, (me + 1) % n);
    aclshmem_barrier_all();
    int left = (me + n - 1) % n;
    CHECK(p[0] == 0x40 + left && p[BLOCK - 1] == 0x40 + left);
    /* a new heap no longer fits: a clean NULL on every PE */
    void *h = aclshmemx_malloc(1 << 20, HOST_SIDE);
    CHECK(h == NULL);
    aclshmem_barrier_all();
    if (me == 0) {
        unlink(FILLER);
    }
    free(tmp);
    aclshmem_free(p);
    CHECK(aclshmem_finalize() == 0);
    if (me == 0) {
        printf("OK shm_fill\n");
    }
    return 0;
}

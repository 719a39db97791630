/* A PE waiting inside a collective allocation routine still serves its peers: PE 1 enters
 * shmem_free / shmem_malloc / shmem_calloc / shmem_realloc at once, while PE 0 first (after a
 * pause, so PE 1 is surely waiting) gets from PE 1, fetches an atomic of PE 1 and puts + quiets
 * to PE 1, then joins. Over a network transport without the library's progress thread
 * (ACLSHMEM_UCX_PROGRESS_THREAD=0: remote operations are served only while the target is inside
 * a library call), PE 1's wait must drive the transport, or PE 0 waits for ever.
 * Argument: free | malloc | calloc | realloc. 2 or more PEs (PE 0 and PE 1 take part). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <shmem.h>

static char src[4096];
static long counter;
static long landed;

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "free";
    shmem_init();
    int me = shmem_my_pe();
    memset(src, 'a' + me, sizeof src);
    counter = 100 + me;
    void *p = shmem_malloc(256);
    shmem_barrier_all();
    int bad = 0;
    if (me == 0) {
        usleep(200000);
        char dst[4096];
        shmem_getmem(dst, src, sizeof dst, 1);
        if (dst[0] != 'b' || dst[sizeof dst - 1] != 'b') {
            printf("FAIL: [PE 0] get from PE 1 read %c..%c\n", dst[0], dst[sizeof dst - 1]);
            bad++;
        }
        long old = shmem_long_atomic_fetch_add(&counter, 5, 1);
        if (old != 101) {
            printf("FAIL: [PE 0] fetch-add on PE 1 returned %ld, expected 101\n", old);
            bad++;
        }
        shmem_long_p(&landed, 42, 1);
        shmem_quiet();
    }
    if (strcmp(what, "free") == 0) {
        shmem_free(p);
        p = NULL;
    } else if (strcmp(what, "malloc") == 0) {
        void *q = shmem_malloc(512);
        shmem_free(q);
    } else if (strcmp(what, "calloc") == 0) {
        long *q = shmem_calloc(64, sizeof(long));
        if (!q || q[63] != 0) bad++;
        shmem_free(q);
    } else if (strcmp(what, "realloc") == 0) {
        p = shmem_realloc(p, 1024);
        if (!p) bad++;
    } else {
        printf("FAIL: unknown mode %s\n", what);
        bad++;
    }
    shmem_barrier_all();
    if (me == 1 && (counter != 106 || landed != 42)) {
        printf("FAIL: [PE 1] counter %ld (expected 106), landed %ld (expected 42)\n", counter, landed);
        bad++;
    }
    shmem_free(p);
    shmem_finalize();
    if (bad) return 1;
    printf("[PE %d] %s: OK get_during_collective\n", me, what);
    return 0;
}

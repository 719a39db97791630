#define _DEFAULT_SOURCE /* usleep */
/* Unique-id initialisation, the way CANN SHMEM programs do it without a launcher's rendezvous
 * address: PE 0 creates the id, the program distributes the 136 bytes (here through a file), every
 * PE initialises with ACLSHMEMX_INIT_WITH_UNIQUEID.
 *
 * Usage: uid_file <path-of-id-file>   (PE number and count from ACLSHMEM_MY_PE / ACLSHMEM_N_PES,
 * or RANK / WORLD_SIZE). Where PE 0 listens: SHMEM_UID_SESSION_ID (e.g. 127.0.0.1:0) or the first
 * network interface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "shmem.h"

static int env_int(const char *a, const char *b) {
    const char *v = getenv(a);
    if (!v) v = getenv(b);
    return v ? atoi(v) : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s <id-file>\n", argv[0]); return 2; }
    int me = env_int("ACLSHMEM_MY_PE", "RANK"), n = env_int("ACLSHMEM_N_PES", "WORLD_SIZE");
    char tmp[4096];
    aclshmemx_uniqueid_t uid;
    if (me == 0) {
        if (aclshmemx_get_uniqueid(&uid) != 0) { printf("FAIL: aclshmemx_get_uniqueid\n"); return 1; }
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&uid, sizeof uid, 1, f) != 1 || fclose(f) != 0 || rename(tmp, argv[1]) != 0) {
            printf("FAIL: cannot write %s\n", argv[1]);
            return 1;
        }
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(argv[1], "rb")); i++) usleep(10000);
        if (!f || fread(&uid, sizeof uid, 1, f) != 1) { printf("FAIL: no id in %s\n", argv[1]); return 1; }
        fclose(f);
    }
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(me, n, 16 << 20, &uid, &attr) != 0) { printf("FAIL: set args\n"); return 1; }
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0) { printf("FAIL: init returned %d\n", rc); return 1; }
    int *x = (int *)aclshmem_malloc(sizeof(int));
    *(int *)aclshmem_ptr(x, (me + 1) % n) = me;
    aclshmem_barrier_all();
    if (*x != (me + n - 1) % n) { printf("FAIL: ring value %d on PE %d\n", *x, me); return 1; }
    aclshmem_free(x);
    if (me == 0) {
        unlink(argv[1]);
        printf("uid_file: OK (%d PEs)\n", n);
    }
    return aclshmem_finalize();
}

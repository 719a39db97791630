/*
 * hello.c - the smallest aclshmem program.
 *
 * Start it with the launcher, e.g.  aclshmrun -n 4 ./hello
 *
 * Initialises from the launcher's environment, prints one line per PE, checks the PE queries and the
 * library version/name, synchronises once and finalizes. Exits non-zero and prints "FAIL: ..." on any
 * error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem.h"

static int g_pe = -1;

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL: [hello, PE %d] ", g_pe);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(NULL);
    exit(1);
}

/* Reads an integer environment variable set by aclshmrun; -1 if missing or malformed. */
static long env_int(const char *name)
{
    const char *s = getenv(name);
    char *end = NULL;
    long v;
    if (s == NULL || *s == '\0') {
        return -1;
    }
    v = strtol(s, &end, 10);
    return (*end == '\0') ? v : -1;
}

int main(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    char name[ACLSHMEM_MAX_NAME_LEN];
    int major = -1;
    int minor = -1;
    int ret;
    int me;
    int npes;

    ret = aclshmemx_set_attr_from_env(&attr);
    if (ret != 0) {
        fail("aclshmemx_set_attr_from_env returned %d (run this program through aclshmrun)", ret);
    }
    g_pe = attr.my_pe;

    if (aclshmemx_init_status() != ACLSHMEM_STATUS_NOT_INITIALIZED) {
        fail("init status before init is %d, expected %d", aclshmemx_init_status(),
             (int)ACLSHMEM_STATUS_NOT_INITIALIZED);
    }
    ret = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (ret != 0) {
        fail("aclshmemx_init_attr returned %d", ret);
    }
    if (aclshmemx_init_status() != ACLSHMEM_STATUS_IS_INITIALIZED) {
        fail("init status after init is %d, expected %d", aclshmemx_init_status(),
             (int)ACLSHMEM_STATUS_IS_INITIALIZED);
    }

    me = aclshmem_my_pe();
    npes = aclshmem_n_pes();
    printf("Hello from PE %d of %d\n", me, npes);
    fflush(stdout);

    if (me != env_int("ACLSHMEM_MY_PE")) {
        fail("aclshmem_my_pe() = %d but ACLSHMEM_MY_PE = %ld", me, env_int("ACLSHMEM_MY_PE"));
    }
    if (npes != env_int("ACLSHMEM_N_PES")) {
        fail("aclshmem_n_pes() = %d but ACLSHMEM_N_PES = %ld", npes, env_int("ACLSHMEM_N_PES"));
    }
    if (me != attr.my_pe || npes != attr.n_pes) {
        fail("PE queries (%d of %d) disagree with the attributes (%d of %d)", me, npes, attr.my_pe,
             attr.n_pes);
    }

    aclshmem_info_get_version(&major, &minor);
    if (major != 1 || minor != 1) {
        fail("aclshmem_info_get_version gave %d.%d, expected 1.1", major, minor);
    }
    memset(name, 'x', sizeof(name));
    aclshmem_info_get_name(name);
    if (memchr(name, '\0', sizeof(name)) == NULL) {
        fail("aclshmem_info_get_name wrote no NUL terminator within %d bytes", ACLSHMEM_MAX_NAME_LEN);
    }
    if (strcmp(name, "ACLSHMEM v1.1.1") != 0) {
        fail("aclshmem_info_get_name gave \"%s\", expected \"ACLSHMEM v1.1.1\"", name);
    }

    aclshmem_barrier_all();

    ret = aclshmem_finalize();
    if (ret != 0) {
        fail("aclshmem_finalize returned %d", ret);
    }
    if (aclshmemx_init_status() != ACLSHMEM_STATUS_NOT_INITIALIZED) {
        fail("init status after finalize is %d, expected %d", aclshmemx_init_status(),
             (int)ACLSHMEM_STATUS_NOT_INITIALIZED);
    }

    if (me == 0) {
        printf("hello: OK (%d PEs, %s)\n", npes, name);
    }
    return 0;
}

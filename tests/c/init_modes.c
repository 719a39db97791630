/* Init modes other than DEFAULT-with-ip_port (spec 8.1, 9.1), driven by tests/init_modes.rs and,
 * across nodes (uid_cycles, multi_instance), by tests/multinode.rs.
 * argv[1] = scenario, argv[2] = scratch directory for the unique-id file (on a file system every
 * node sees). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include "shmem.h"

#define CHECK(c) do { if (!(c)) { printf("FAIL: %s: %s:%d: %s (pe %d)\n", scenario, __FILE__, __LINE__, #c, me); return 1; } } while (0)

static const char *scenario;
static int me = -1, n = -1;

/* PE 0 makes a unique id and hands it to the others through a file named by `tag`. */
static int share_uid(const char *dir, const char *tag, aclshmemx_uniqueid_t *uid) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s.id", dir, tag);
    if (me == 0) {
        if (aclshmemx_get_uniqueid(uid) != 0) return -1;
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(uid, sizeof *uid, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) return -1;
        return 0;
    }
    FILE *f = NULL;
    for (int i = 0; i < 3000 && !(f = fopen(path, "rb")); i++) usleep(10000);
    if (!f) return -1;
    int ok = fread(uid, sizeof *uid, 1, f) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* Each PE writes to its right neighbour: a store through aclshmem_ptr when the neighbour's heap is
 * mapped here (same node), else aclshmem_int_p (another node: UCX). */
/* open descriptors of this process */
static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int k = 0;
    if (d == NULL) return -1;
    while (readdir(d) != NULL) k++;
    closedir(d);
    return k;
}

static int ring(void) {
    /* the current instance's numbering (an instance may number the PEs its own way) */
    int my = aclshmem_my_pe(), np = aclshmem_n_pes();
    int *x = (int *)aclshmem_malloc(sizeof(int));
    if (!x) return -1;
    int *r = (int *)aclshmem_ptr(x, (my + 1) % np);
    if (r != NULL) {
        *r = my + 1000;
    } else {
        aclshmem_int32_p(x, my + 1000, (my + 1) % np);
    }
    aclshmem_barrier_all();
    int ok = *x == (my + np - 1) % np + 1000;
    aclshmem_free(x);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    scenario = argv[1];
    const char *dir = argv[2];
    me = atoi(getenv("ACLSHMEM_MY_PE"));
    n = atoi(getenv("ACLSHMEM_N_PES"));
    aclshmemx_uniqueid_t uid;
    char tag[64];
    if (strcmp(scenario, "uid_cycles") == 0) {
        /* 20 init/finalize cycles, alternating UNIQUEID mode, DEFAULT mode with an ip_port, and
         * DEFAULT mode falling back to the unique id in comm_args */
        for (int cycle = 0; cycle < 20; cycle++) {
            aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
            attr.option_attr.shm_init_timeout = 30;
            attr.option_attr.control_operation_timeout = 30;
            int mode = cycle % 3, rc;
            if (mode == 1) {
                CHECK(aclshmemx_set_attr_from_env(&attr) == 0);
                rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
            } else {
                snprintf(tag, sizeof tag, "cycle%d", cycle);
                CHECK(share_uid(dir, tag, &uid) == 0);
                CHECK(aclshmemx_set_attr_uniqueid_args(me, n, 8 << 20, &uid, &attr) == 0);
                rc = aclshmemx_init_attr(mode == 0 ? ACLSHMEMX_INIT_WITH_UNIQUEID : ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
            }
            if (rc != 0) printf("FAIL: %s: cycle %d mode %d init returned %d (pe %d)\n", scenario, cycle, mode, rc, me);
            CHECK(rc == 0);
            CHECK(aclshmem_my_pe() == me && aclshmem_n_pes() == n);
            CHECK(ring() == 0);
            /* the device-state record kernels read is this instance's (the heap sizes of the modes
             * differ): a record of an earlier cycle was once found again at the same address */
            aclshmem_device_host_state_t *st = aclshmemx_dev_state();
            CHECK(st != NULL && st->heap_size == attr.local_mem_size + ACLSHMEM_EXTRA_SIZE);
            CHECK(st->heap_base == aclshmemx_get_heap_base(DEVICE_SIDE));
            CHECK(aclshmem_finalize() == 0);
        }
    } else if (strcmp(scenario, "uid_errors") == 0) {
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        CHECK(aclshmemx_get_uniqueid(NULL) == ACLSHMEM_INVALID_PARAM);
        attr.my_pe = me; attr.n_pes = n; attr.local_mem_size = 1 << 20;
        /* no unique id */
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) == ACLSHMEM_INVALID_PARAM);
        memset(&uid, 0, sizeof uid);
        attr.comm_args = &uid;
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) == ACLSHMEM_INVALID_PARAM);
        /* DEFAULT with neither a valid ip_port nor a unique id */
        strcpy(attr.ip_port, "tcp://127.0.0.1");
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) == ACLSHMEM_INVALID_PARAM);
        /* malformed address variables */
        setenv("SHMEM_UID_SESSION_ID", "127.0.0.1", 1);
        memset(&uid, 0xAB, sizeof uid);
        CHECK(aclshmemx_get_uniqueid(&uid) == ACLSHMEM_INVALID_PARAM);
        /* zero-filled with the version before the failure (spec 8.1) */
        CHECK(uid.version == ACLSHMEM_UNIQUEID_VERSION && uid.my_pe == 0 && uid.n_pes == 0);
        for (size_t i = 0; i < sizeof uid.internal; i++) CHECK(uid.internal[i] == 0);
        setenv("SHMEM_UID_SESSION_ID", "no-such-host.invalid:4000", 1);
        CHECK(aclshmemx_get_uniqueid(&uid) == ACLSHMEM_NOT_INITED);
        unsetenv("SHMEM_UID_SESSION_ID");
        setenv("SHMEM_UID_SOCK_IFNAME", "nosuchif0", 1);
        CHECK(aclshmemx_get_uniqueid(&uid) == ACLSHMEM_INVALID_PARAM);
        /* an interface by name works: loopback, IPv4 */
        setenv("SHMEM_UID_SOCK_IFNAME", "lo:inet4", 1);
        CHECK(aclshmemx_get_uniqueid(&uid) == 0);
        CHECK(uid.version == ACLSHMEM_UNIQUEID_VERSION);
        unsetenv("SHMEM_UID_SOCK_IFNAME");
        CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED);
        /* a failed init closes the socket kept for its id (each attempt of a retrying program
         * leaked one), and the id still works afterwards */
        setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0", 1);
        aclshmemx_init_attr_t ok = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        /* (the first init keeps a descriptor for good: count from after one cycle) */
        CHECK(aclshmemx_get_uniqueid(&uid) == 0);
        CHECK(aclshmemx_set_attr_uniqueid_args(me, n, 1 << 20, &uid, &ok) == 0);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &ok) == 0);
        CHECK(aclshmem_finalize() == 0);
        int fds = count_fds();
        for (int i = 0; i < 20; i++) {
            CHECK(aclshmemx_get_uniqueid(&uid) == 0);
            CHECK(aclshmemx_set_attr_uniqueid_args(me, n, 1 << 20, &uid, &ok) == 0);
            aclshmemx_init_attr_t bad = ok;
            bad.option_attr.control_operation_timeout = 0;
            CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &bad) == ACLSHMEM_INVALID_VALUE);
        }
        CHECK(count_fds() == fds);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &ok) == 0);
        CHECK(ring() == 0);
        CHECK(aclshmem_finalize() == 0);
        CHECK(count_fds() == fds);
        /* ids nobody uses: at most 64 sockets are kept (one is counted in `fds` already: the
         * lo:inet4 id above was never used) */
        for (int i = 0; i < 100; i++) CHECK(aclshmemx_get_uniqueid(&uid) == 0);
        CHECK(count_fds() == fds + 63);
        unsetenv("SHMEM_UID_SESSION_ID");
    } else if (strcmp(scenario, "uid_ipv6") == 0) {
        setenv("SHMEM_UID_SESSION_ID", "[::1]:0", 1);
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        CHECK(share_uid(dir, "v6", &uid) == 0);
        CHECK(aclshmemx_set_attr_uniqueid_args(me, n, 8 << 20, &uid, &attr) == 0);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) == 0);
        CHECK(ring() == 0);
        CHECK(aclshmem_finalize() == 0);
    } else if (strcmp(scenario, "multi_instance") == 0) {
        /* instance 0 from the launcher's ip_port; instance 1 on SHMEM_INSTANCE_PORT_RANGE start + 1 of
         * the same host (PE 0's node) */
        aclshmemx_init_attr_t a0 = ACLSHMEMX_INIT_ATTR_INITIALIZER, a1 = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        CHECK(aclshmemx_set_attr_from_env(&a0) == 0);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a0) == 0);
        int *x0 = (int *)aclshmem_malloc(sizeof(int));
        CHECK(x0 != NULL);
        a1 = a0;
        a1.instance_id = 1;
        /* instance 1 numbers the PEs its own way: PE 0 stays (it serves the config store at the
         * address above, on its node), the others rotate */
        a1.my_pe = me == 0 ? 0 : me % (n - 1) + 1;
        char host[sizeof a0.ip_port], port0[sizeof a0.ip_port + 8];
        strcpy(host, a0.ip_port);
        char *colon = strrchr(host, ':');
        CHECK(colon != NULL && colon > host + 6);
        *colon = 0; /* tcp://HOST */
        snprintf(port0, sizeof port0, "%s:0", host);
        CHECK(strlen(port0) < sizeof a1.ip_port);
        strcpy(a1.ip_port, port0);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a1) == 0);
        const char *range = getenv("SHMEM_INSTANCE_PORT_RANGE");
        char expect[sizeof a0.ip_port + 16];
        snprintf(expect, sizeof expect, "%s:%d", host, atoi(range) + 1);
        CHECK(strcmp(a1.ip_port, expect) == 0); /* rewritten in place */
        CHECK(aclshmemx_instance_ctx_get()->id == 1);
        CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_IS_INITIALIZED);
        int *x1 = (int *)aclshmem_malloc(sizeof(int));
        CHECK(x1 != NULL && aclshmem_ptr(x0, aclshmem_my_pe()) == NULL); /* instance 0's heap is not instance 1's */
        CHECK(ring() == 0);
        aclshmem_team_t t;
        CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t) == ACLSHMEM_NOT_SUPPORTED);
        CHECK(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD) == ACLSHMEM_NOT_SUPPORTED);
        /* profiling is per instance: SHMEM_CYCLE_PROF_PE names a PE of each instance's numbering,
         * and the record carries that number (no record anywhere when the variable is unset) */
        const char *prof_var = getenv("SHMEM_CYCLE_PROF_PE");
        int prof_pe = prof_var ? atoi(prof_var) : -1;
        aclshmem_prof_pe_t *prof = NULL;
        aclshmemx_get_prof(&prof, false);
        CHECK((a1.my_pe == prof_pe) == (prof != NULL) && (prof == NULL || prof->pe_id == prof_pe));
        /* switch back and forth */
        CHECK(aclshmemx_instance_ctx_set(0) == 0);
        prof = NULL;
        aclshmemx_get_prof(&prof, false);
        CHECK((me == prof_pe) == (prof != NULL) && (prof == NULL || prof->pe_id == prof_pe));
        CHECK(aclshmemx_instance_ctx_get()->id == 0 && aclshmem_ptr(x0, me) != NULL && aclshmem_ptr(x1, me) == NULL);
        CHECK(ring() == 0);
        CHECK(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD) == me);
        CHECK(aclshmemx_instance_ctx_set(1) == 0 && aclshmem_ptr(x1, aclshmem_my_pe()) != NULL);
        CHECK(aclshmemx_instance_ctx_set(9) == ACLSHMEM_INNER_ERROR);
        /* each instance has its own device-state record, and asking for one frees no other (one
         * record per process was replaced, so instance 0's was freed while still in use) */
        aclshmem_device_host_state_t *st1 = aclshmemx_dev_state();
        void *base1 = aclshmemx_get_heap_base(DEVICE_SIDE);
        CHECK(aclshmemx_instance_ctx_set(0) == 0);
        aclshmem_device_host_state_t *st0 = aclshmemx_dev_state();
        void *base0 = aclshmemx_get_heap_base(DEVICE_SIDE);
        CHECK(st0 != NULL && st1 != NULL && st0 != st1 && base0 != base1);
        CHECK(aclshmemx_instance_ctx_set(1) == 0 && aclshmemx_dev_state() == st1);
        CHECK(st0->heap_base == base0 && st1->heap_base == base1 && st0->mype == me && st1->mype == a1.my_pe);
        /* bad multi-instance attributes */
        aclshmemx_init_attr_t a2 = a0;
        a2.instance_id = 2;
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a2) == ACLSHMEM_INVALID_VALUE); /* port not 0 */
        strcpy(a2.ip_port, port0);
        a2.instance_id = 1000;
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a2) == ACLSHMEM_INVALID_VALUE); /* beyond the range */
        a2.instance_id = 2;
        a2.ip_port[0] = 0;
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a2) == ACLSHMEM_INVALID_VALUE); /* empty ip_port */
        CHECK(aclshmemx_instance_ctx_get()->id == 1); /* failed inits leave the current instance */
        strcpy(a1.ip_port, port0);
        CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a1) == ACLSHMEM_INNER_ERROR); /* initialised */
        CHECK(aclshmemx_finalize(7) == ACLSHMEM_INNER_ERROR);
        /* finalize instance 1 from instance 0: instance 0 is current and intact afterwards */
        CHECK(aclshmemx_instance_ctx_set(0) == 0);
        CHECK(aclshmemx_finalize(1) == 0);
        CHECK(aclshmemx_instance_ctx_get()->id == 0);
        /* a finalized instance is unknown again: no switch to it */
        CHECK(aclshmemx_instance_ctx_set(1) == ACLSHMEM_INNER_ERROR);
        CHECK(aclshmemx_instance_ctx_get()->id == 0);
        /* nor finalized again (spec 8.1: unknown id) */
        CHECK(aclshmemx_finalize(1) == ACLSHMEM_INNER_ERROR);
        CHECK(aclshmemx_instance_ctx_get()->id == 0);
        CHECK(ring() == 0 && aclshmem_ptr(x0, me) != NULL);
        aclshmem_free(x0);
        CHECK(aclshmem_finalize() == 0);
    } else {
        printf("FAIL: unknown scenario %s\n", scenario);
        return 1;
    }
    if (me == 0) printf("OK %s\n", scenario);
    return 0;
}

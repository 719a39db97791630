/* Probes of single calls, driven by tests/api.rs; argv[1] selects the check, exit 0 = holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shmem.h"

#define CHECK(c) do { if (!(c)) { printf("FAIL: %s:%d: %s\n", argv[1], __LINE__, #c); return 1; } } while (0)

int main(int argc, char **argv) {
    if (argc < 2) return 99;
    if (strcmp(argv[1], "uid_args") == 0) {
        aclshmemx_uniqueid_t uid; /* ACLSHMEM_UNIQUEID_INITIALIZER warns under -Wextra, as the original */
        memset(&uid, 0, sizeof uid);
        uid.version = ACLSHMEM_UNIQUEID_VERSION;
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        strcpy(attr.ip_port, "tcp://127.0.0.1:9999");
        CHECK(aclshmemx_set_attr_uniqueid_args(0, 2, 1024, NULL, &attr) == ACLSHMEM_INVALID_PARAM);
        CHECK(aclshmemx_set_attr_uniqueid_args(0, 2, 1024, &uid, NULL) == ACLSHMEM_INVALID_PARAM);
        CHECK(aclshmemx_set_attr_uniqueid_args(0, 2, (int64_t)ACLSHMEM_MAX_LOCAL_SIZE + 1, &uid, &attr) == ACLSHMEM_INVALID_VALUE);
        CHECK(aclshmemx_set_attr_uniqueid_args(0, ACLSHMEM_MAX_PES + 1, 1024, &uid, &attr) == ACLSHMEM_INVALID_VALUE);
        CHECK(aclshmemx_set_attr_uniqueid_args(ACLSHMEM_MAX_PES, 2, 1024, &uid, &attr) == ACLSHMEM_INVALID_VALUE);
        CHECK(attr.my_pe == 0 && attr.n_pes == 0 && attr.comm_args == NULL); /* untouched on failure */
        /* lower bounds are init's to check, as in the original (spec 8.1): stored as given, and
           init refuses them with ACLSHMEM_INVALID_VALUE */
        static const struct { int pe, n; int64_t size; } low[] = {{-1, 2, 1024}, {0, 0, 1024}, {0, -4, 1024},
                                                                  {0, 2, 0}, {0, 2, -1024}};
        for (size_t i = 0; i < sizeof low / sizeof low[0]; i++) {
            aclshmemx_init_attr_t a = ACLSHMEMX_INIT_ATTR_INITIALIZER;
            CHECK(aclshmemx_set_attr_uniqueid_args(low[i].pe, low[i].n, low[i].size, &uid, &a) == 0);
            CHECK(a.my_pe == low[i].pe && a.n_pes == low[i].n && a.local_mem_size == (uint64_t)low[i].size);
            CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a) == ACLSHMEM_INVALID_VALUE);
            CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED);
        }
        CHECK(aclshmemx_set_attr_uniqueid_args(1, 4, 4096, &uid, &attr) == 0);
        CHECK(attr.my_pe == 1 && attr.n_pes == 4 && attr.local_mem_size == 4096);
        CHECK(attr.comm_args == (void *)&uid && strcmp(attr.ip_port, "tcp://127.0.0.1:9999") == 0);
        CHECK(attr.option_attr.control_operation_timeout == 120);
        return 0;
    }
    if (strcmp(argv[1], "from_env") == 0) { /* prints what it read; the test compares */
        aclshmemx_init_attr_t attr;
        memset(&attr, 0x5a, sizeof attr);
        int rc = aclshmemx_set_attr_from_env(&attr);
        if (rc != 0) {
            unsigned char *b = (unsigned char *)&attr;
            for (size_t i = 0; i < sizeof attr; i++) CHECK(b[i] == 0x5a); /* untouched on failure */
            printf("rc=%d\n", rc);
            return 0;
        }
        CHECK(aclshmemx_set_attr_from_env(NULL) == ACLSHMEM_INVALID_PARAM);
        CHECK(attr.option_attr.version == 65560 && attr.option_attr.data_op_engine_type == ACLSHMEM_DATA_OP_MTE);
        CHECK(attr.option_attr.shm_init_timeout == 120 && attr.option_attr.control_operation_timeout == 120);
        CHECK(attr.option_attr.shm_create_timeout == 120 && attr.option_attr.sockFd == 0);
        CHECK(attr.comm_args == NULL && attr.instance_id == 0);
        printf("rc=0 my_pe=%d n_pes=%d ip_port=%s local_mem_size=%llu\n", attr.my_pe, attr.n_pes, attr.ip_port,
               (unsigned long long)attr.local_mem_size);
        return 0;
    }
    if (strcmp(argv[1], "init_rc") == 0) { /* under the launcher: init and print the code */
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        CHECK(aclshmemx_set_attr_from_env(&attr) == 0);
        int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
        printf("init_rc=%d status=%d\n", rc, aclshmemx_init_status());
        if (rc == 0) {
            int *p = (int *)aclshmem_calloc(1024, sizeof(int));
            CHECK(p != NULL && p[1023] == 0);
            aclshmem_barrier_all();
            aclshmem_free(p);
            CHECK(aclshmem_finalize() == 0);
        }
        return 0;
    }
    return 99;
}

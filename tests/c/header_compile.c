/* Compiled as C11, C++14 and C++17 with -Wall -Wextra -Werror -pedantic by tests/header.rs.
 * Uses the header the way programs written against the original do. */
#include "shmem.h"

/* constants usable where the original allows them */
static char name_buf[ACLSHMEM_MAX_NAME_LEN];
static char ip_buf[ACLSHMEM_MAX_IP_PORT_LEN];
static char uid_inner[ACLSHMEM_UNIQUE_ID_INNER_LEN];
static aclshmemx_sync_bit sync_bits;
static const unsigned long extra = ACLSHMEM_EXTRA_SIZE;
static const int timeout = DEFAULT_TIMEOUT;

int use_header(void);
int use_header(void) {
    aclshmem_error_code_t rc = ACLSHMEM_SUCCESS;
    aclshmemx_bootstrap_t flags = ACLSHMEMX_INIT_WITH_DEFAULT;
    aclshmemx_init_status_t st = ACLSHMEM_STATUS_NOT_INITIALIZED;
    aclshmem_mem_type_t mt = DEVICE_SIDE;
    aclshmem_team_t team = ACLSHMEM_TEAM_WORLD;
    aclshmem_signal_op_type_t sop = ACLSHMEM_SIGNAL_ADD;
    aclshmem_cmp_op_type_t cmp = ACLSHMEM_CMP_LE;
    data_op_engine_type_t eng = ACLSHMEM_DATA_OP_MTE;
    aclshmem_transport_t tr = ACLSHMEM_TRANSPORT_MTE;
    aclshmem_block_mode_t bm = NBI;
    aclshmem_handle_t handle = {ACLSHMEM_TEAM_WORLD};
    aclshmem_team_config_t cfg;
    aclshmem_ub_config_t ub = {0, 0, 0};
    aclshmem_mte_config_t mte = ub;
    aclshmem_instance_ctx *ctx = aclshmemx_instance_ctx_get();
    Result r = 0;
    shmem_error_code_t alias_rc = ACLSHMEM_INVALID_PARAM;
    int major = 0, minor = 0;
#ifdef __cplusplus
    aclshmemx_init_attr_t attr; /* C++: member-initialiser defaults */
    attr.my_pe = 0;
    attr.n_pes = 1;
    attr.local_mem_size = 1024;
    void *p = aclshmemx_malloc(64); /* default argument DEVICE_SIDE */
    aclshmemx_free(p);
    void *base = aclshmemx_get_heap_base();
#else
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    void *p = aclshmemx_malloc(64, DEVICE_SIDE);
    void *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    aclshmemx_free(p, DEVICE_SIDE);
#endif
    (void)cfg; (void)mte; (void)base; (void)sync_bits; (void)uid_inner; (void)ip_buf;
    aclshmem_info_get_version(&major, &minor);
    aclshmem_info_get_name(name_buf);
    shmem_info_get_name(name_buf);
    rc = (aclshmem_error_code_t)aclshmemx_init_attr(flags, &attr);
    st = (aclshmemx_init_status_t)shmem_init_status();
    aclshmem_barrier_all();
    (void)shmem_my_pe();
    (void)shmem_n_pes();
    (void)aclshmem_ptr(p, 0);
    aclshmem_free(shmem_malloc(16));
    aclshmem_free(aclshmem_calloc(1, 16));
    aclshmem_free(aclshmem_align(64, 16));
    aclshmem_sync_all();
    (void)aclshmemx_set_log_level(3);
    (void)shmem_set_log_level(3);
    (void)aclshmemx_instance_ctx_set(0);
    (void)shmem_finalize();
    (void)aclshmemx_finalize(0);
    return (int)rc + (int)st + (int)mt + team + (int)sop + (int)cmp + (int)eng + (int)tr + (int)bm +
           handle.team_id + (int)(extra & 1) + timeout + r + (int)alias_rc + (ctx != NULL) + major + minor;
}

int main(void) { return 0; }

/* the p2p declaration generators re-declare the exported prototypes compatibly */
#ifdef __cplusplus
extern "C" {
#endif
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_ALL);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_ANY);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_SOME);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_ALL_VECTOR);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_ANY_VECTOR);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_WAIT_UNTIL_SOME_VECTOR);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST_ANY);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST_SOME);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST_ALL_VECTOR);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST_ANY_VECTOR);
ACLSHMEM_P2P_SYNC_TYPE_FUNC(ACLSHMEM_TEST_SOME_VECTOR);
#ifdef __cplusplus
}
#endif

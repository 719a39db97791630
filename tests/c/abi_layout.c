/* Compiled as C11 and C++14 by tests/abi.rs: every public type's size, alignment and field offsets,
 * and the constants, equal the numbers of spec sections 3-5. Compilation is the test. */
#include <stddef.h>
#include "shmem.h"

#ifdef __cplusplus
#define ASSERT(c) static_assert(c, #c)
#define ALIGNOF(t) alignof(t)
#else
#define ASSERT(c) _Static_assert(c, #c)
#define ALIGNOF(t) _Alignof(t)
#endif
#define LAYOUT(t, size, align) ASSERT(sizeof(t) == (size)); ASSERT(ALIGNOF(t) == (align))
#define OFF(t, f, off) ASSERT(offsetof(t, f) == (off))

LAYOUT(aclshmem_init_optional_attr_t, 24, 4);
OFF(aclshmem_init_optional_attr_t, version, 0);
OFF(aclshmem_init_optional_attr_t, data_op_engine_type, 4);
OFF(aclshmem_init_optional_attr_t, shm_init_timeout, 8);
OFF(aclshmem_init_optional_attr_t, shm_create_timeout, 12);
OFF(aclshmem_init_optional_attr_t, control_operation_timeout, 16);
OFF(aclshmem_init_optional_attr_t, sockFd, 20);

LAYOUT(aclshmemx_init_attr_t, 120, 8);
OFF(aclshmemx_init_attr_t, my_pe, 0);
OFF(aclshmemx_init_attr_t, n_pes, 4);
OFF(aclshmemx_init_attr_t, ip_port, 8);
OFF(aclshmemx_init_attr_t, local_mem_size, 72);
OFF(aclshmemx_init_attr_t, option_attr, 80);
OFF(aclshmemx_init_attr_t, comm_args, 104);
OFF(aclshmemx_init_attr_t, instance_id, 112);

LAYOUT(aclshmemx_uniqueid_t, 136, 4);
OFF(aclshmemx_uniqueid_t, version, 0);
OFF(aclshmemx_uniqueid_t, my_pe, 4);
OFF(aclshmemx_uniqueid_t, n_pes, 8);
OFF(aclshmemx_uniqueid_t, internal, 12);

LAYOUT(aclshmem_team_config_t, 64, 8);
OFF(aclshmem_team_config_t, num_contexts, 4);
OFF(aclshmem_team_config_t, uniqueid, 8);
OFF(aclshmem_team_config_t, padding, 16);

LAYOUT(aclshmemx_team_t, 131160, 8);
OFF(aclshmemx_team_t, team_idx, 16);
OFF(aclshmemx_team_t, config, 24);
OFF(aclshmemx_team_t, pe_mapping, 88);

LAYOUT(aclshmem_handle_t, 4, 4);
LAYOUT(aclshmem_instance_ctx, 16, 8);
OFF(aclshmem_instance_ctx, instance, 8);
LAYOUT(aclshmem_ub_config_t, 16, 8);
OFF(aclshmem_ub_config_t, ub_size, 8);
OFF(aclshmem_ub_config_t, sync_id, 12);
LAYOUT(aclshmem_mte_config_t, 16, 8);
LAYOUT(aclshmem_udma_config_t, 16, 8);
LAYOUT(aclshmem_prof_block_t, 16384, 8);
OFF(aclshmem_prof_block_t, cycles, 8192);
LAYOUT(aclshmem_prof_pe_t, 1048584, 8);
OFF(aclshmem_prof_pe_t, block_prof, 8);

LAYOUT(aclshmem_device_host_state_t, 32992, 8);
OFF(aclshmem_device_host_state_t, heap_base, 16);
OFF(aclshmem_device_host_state_t, sdma_host_heap_base, 72);
OFF(aclshmem_device_host_state_t, topo_list, 80);
OFF(aclshmem_device_host_state_t, heap_size, 16464);
OFF(aclshmem_device_host_state_t, team_pools, 16472);
OFF(aclshmem_device_host_state_t, sync_pool, 32856);
OFF(aclshmem_device_host_state_t, core_sync_counter, 32880);
OFF(aclshmem_device_host_state_t, is_aclshmem_initialized, 32888);
OFF(aclshmem_device_host_state_t, is_aclshmem_created, 32889);
OFF(aclshmem_device_host_state_t, mte_config, 32896);
OFF(aclshmem_device_host_state_t, udma_config, 32944);
OFF(aclshmem_device_host_state_t, qp_info, 32960);
OFF(aclshmem_device_host_state_t, profs, 32976);
OFF(aclshmem_device_host_state_t, signal_addr, 32984);

LAYOUT(aclshmem_host_state_t, 400, 8);
OFF(aclshmem_host_state_t, default_event_id, 8);
OFF(aclshmem_host_state_t, default_block_num, 12);
OFF(aclshmem_host_state_t, notify_arr, 16);

ASSERT(sizeof(aclshmem_error_code_t) == 4);
ASSERT(sizeof(aclshmemx_bootstrap_t) == 4);
ASSERT(sizeof(aclshmem_transport_t) == 1);
ASSERT(sizeof(aclshmemx_init_status_t) == 4);
ASSERT(sizeof(aclshmem_team_t) == 4);
ASSERT(sizeof(aclshmemx_team_uniqueid_t) == 8);
ASSERT(sizeof(aclshmemx_sync_bit) == 64);
ASSERT(sizeof(aclshmem_decrypt_handler) == 8);
ASSERT(sizeof(aclrtStream) == 8);

/* error codes (spec 4.1) */
ASSERT(ACLSHMEM_SUCCESS == 0 && ACLSHMEM_INVALID_PARAM == -1 && ACLSHMEM_INVALID_VALUE == -2);
ASSERT(ACLSHMEM_SMEM_ERROR == -3 && ACLSHMEM_INNER_ERROR == -4 && ACLSHMEM_NOT_INITED == -5);
ASSERT(ACLSHMEM_BOOTSTRAP_ERROR == -6 && ACLSHMEM_TIMEOUT_ERROR == -7 && ACLSHMEM_MALLOC_FAILED == -8);
ASSERT(ACLSHMEM_DL_FUNC_FAILED == -9 && ACLSHMEM_INNER_TIMEOUT == -10 && ACLSHMEM_UNDER_API_UNLOAD == -11);
ASSERT(ACLSHMEM_NOT_SUPPORTED == -100);
/* other enums (spec 4.2-4.10) */
ASSERT(ACLSHMEMX_INIT_WITH_DEFAULT == 1u && ACLSHMEMX_INIT_WITH_MPI == 2u && ACLSHMEMX_INIT_WITH_UNIQUEID == 8u);
ASSERT(ACLSHMEMX_INIT_MAX == 0x80000000u);
ASSERT(ACLSHMEM_STATUS_NOT_INITIALIZED == 0 && ACLSHMEM_STATUS_SHM_CREATED == 1);
ASSERT(ACLSHMEM_STATUS_IS_INITIALIZED == 2 && ACLSHMEM_STATUS_INVALID == 2147483647);
ASSERT(ACLSHMEM_TRANSPORT_MTE == 1 && ACLSHMEM_TRANSPORT_ROCE == 2 && ACLSHMEM_TRANSPORT_SDMA == 4);
ASSERT(ACLSHMEM_TRANSPORT_UDMA == 8);
ASSERT(ACLSHMEM_TEAM_INVALID == -1 && ACLSHMEM_TEAM_WORLD == 0);
ASSERT(ACLSHMEM_DATA_OP_MTE == 1 && ACLSHMEM_DATA_OP_SDMA == 2 && ACLSHMEM_DATA_OP_ROCE == 4);
ASSERT(ACLSHMEM_DATA_OP_UDMA == 8 && ACLSHMEM_DATA_OP_MAX == 8);
ASSERT(HOST_SIDE == 0 && DEVICE_SIDE == 1);
ASSERT(ACLSHMEM_SIGNAL_SET == 0 && ACLSHMEM_SIGNAL_ADD == 1);
ASSERT(ACLSHMEM_CMP_EQ == 0 && ACLSHMEM_CMP_NE == 1 && ACLSHMEM_CMP_GT == 2 && ACLSHMEM_CMP_GE == 3);
ASSERT(ACLSHMEM_CMP_LT == 4 && ACLSHMEM_CMP_LE == 5);
ASSERT(NO_NBI == 0 && NBI == 1);
/* constants (spec 3) */
ASSERT(ACLSHMEM_UNIQUE_ID_INNER_LEN == 124 && DEFAULT_TIMEOUT == 120);
ASSERT(ACLSHMEM_UNIQUEID_VERSION == 65672);
ASSERT(ACLSHMEM_MAJOR_VERSION == 1 && ACLSHMEM_MINOR_VERSION == 1 && ACLSHMEM_MAX_NAME_LEN == 256);
ASSERT(ACLSHMEM_VENDOR_MAJOR_VER == 1 && ACLSHMEM_VENDOR_MINOR_VER == 1 && ACLSHMEM_VENDOR_PATCH_VER == 1);
ASSERT(ACLSHMEM_MAX_IP_PORT_LEN == 64);
ASSERT(ACLSHMEM_MAX_PES == 16384 && ACLSHMEM_MAX_TEAMS == 2048 && ACLSHMEM_SIGNAL_SIZE == 8);
ASSERT(ACLSHMEM_MAX_LOCAL_SIZE == 42949672960UL);
ASSERT(TEAM_CONFIG_PADDING == 48 && SCALAR_DATA_CACHELINE_SIZE == 64 && L2_CACHELINE_SIZE == 512);
ASSERT(ACLSHMEM_PAGE_SIZE == 2097152UL && ACLSHMEM_STARS_NOTIFY_ADDR_OFFSET == 14336);
ASSERT(ACLSHMEM_SDMA_FLAG_LENGTH == 64 && ACLSHMEM_UDMA_MTE_STAGING_UB_SIZE == 128U);
ASSERT(ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE == 128U);
ASSERT(ALIGN_TO(5, 4) == 8 && ALIGH_TO(8, 4) == 8 && ALIGN_UP(5, 4) == 8);
ASSERT(ACLSHMEM_SYNCBIT_SIZE == 64 && ACLSHMEMI_SYNCBIT_SIZE == 64 && SYNC_LOG_MAX_PES == 5);
ASSERT(ACLSHMEM_BARRIER_TG_DISSEM_KVAL == 8 && SYNC_ARRAY_SIZE == 2560 && SYNC_COUNTER_SIZE == 64);
ASSERT(SYNC_POOL_SIZE == 5242880 && SYNC_COUNTERS_SIZE == 131072);
ASSERT(ACLSHMEM_MAX_AIV_PER_NPU == 48 && ACLSHMEM_LOG_MAX_AIV_PER_NPU == 6);
ASSERT(ACLSHMEM_CORE_SYNC_POOL_SIZE == 18432 && ACLSHMEM_CORE_SYNC_COUNTER_SIZE == 64);
ASSERT(ACLSHMEM_EXTRA_SIZE_UNALIGNED == 5242880 && ACLSHMEM_EXTRA_SIZE_UNALIGHED == 5242880);
ASSERT(ACLSHMEM_EXTRA_SIZE == 6291456UL);
ASSERT(ACLSHMEM_HEAP_ALIGNMENT_SIZE == 1073741824UL);
ASSERT(ACLSHMEM_CYCLE_PROF_MAX_BLOCK == 64 && ACLSHMEM_CYCLE_PROF_FRAME_CNT == 1024);

/* initialisers keep working */
static aclshmemx_uniqueid_t uid_init = {ACLSHMEM_UNIQUEID_VERSION, 0, 0, {0}};
#ifndef __cplusplus
static aclshmemx_init_attr_t attr_init = ACLSHMEMX_INIT_ATTR_INITIALIZER;
#endif

int main(void) {
#ifdef __cplusplus
    aclshmemx_init_attr_t attr_init; /* member-initialiser defaults (spec 5.3) */
#endif
    int ok = uid_init.version == 65672 && attr_init.option_attr.version == 65560 &&
             attr_init.option_attr.data_op_engine_type == ACLSHMEM_DATA_OP_MTE &&
             attr_init.option_attr.shm_init_timeout == 120 && attr_init.option_attr.shm_create_timeout == 120 &&
             attr_init.option_attr.control_operation_timeout == 120 && attr_init.option_attr.sockFd == 0 &&
             attr_init.comm_args == NULL && attr_init.instance_id == 0 && attr_init.ip_port[0] == 0;
    return ok ? 0 : 1;
}

// Fragment of include/shmem.h: cbindgen's `after_includes`, written after the include guard and
// before the generated declarations: types, constants and macros with C/C++ variants cbindgen
// cannot express (their Rust mirrors are excluded in cbindgen.toml).
// The leading `//` lines of a fragment are notes: the header build (xtask/src/header.rs, run by
// tests/header.rs and `cargo xtask codegen`) drops them, inlines each `#include "..."` of a file
// of cbindgen/, and hands the text to cbindgen.
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#else
/* C++ programs of the original's examples use std::copy_n and std::min, strlen, strerror and
   std::memcpy having included only this header and acl/acl.h (the original's toolchain reaches
   <algorithm> and <cstring> through them) */
#include <algorithm>
#include <cstring>
#endif

/* ---- thread safety ----
 * Init, finalize, aclshmemx_instance_ctx_set and the collective calls (allocation, frees, barriers,
 * syncs, team splits and destroys, collectives) are made by one thread of a PE at a time, in the same
 * order on every PE. One-sided calls (put, get and their _nbi, strided and scalar forms, put-with-
 * signal, signal operations, atomics, quiet, fence, aclshmem_ptr, the wait/test families) may be made
 * from several threads of a PE at once, also while another thread runs a collective call. No call
 * should run while another thread of the same process finalizes the instance it uses (a program
 * error, as in OpenSHMEM); if one does, it does not crash: finalize first waits, up to 10 s, for the
 * calls already in progress on other threads and for the operations queued on streams, and calls
 * that start after finalize began fail as before init. A call still in progress after that time
 * (a wait that never ends) makes finalize return an error and leave the instance's memory mapped. */

/* ---- portability helpers (spec section 6) ---- */
#if defined(__cplusplus)
#define ACLSHMEM_ENUM_BASE(T) : T
#define ACLSHMEM_DEFAULT_ARG(x) = x
#else
#define ACLSHMEM_ENUM_BASE(T)
#define ACLSHMEM_DEFAULT_ARG(x)
#endif

#ifndef ACLSHMEM_HOST_API
#define ACLSHMEM_HOST_API __attribute__((visibility("default")))
#endif

/* The only ACL type in host signatures; available without any ACL header. Guarded: the ACL
 * headers (acl/acl.h) declare it too, and C99 refuses a repeated typedef. */
#ifndef ACLSHMEM_ACLRT_STREAM_DECLARED
#define ACLSHMEM_ACLRT_STREAM_DECLARED
typedef void *aclrtStream;
#endif

/* ---- host/shmem_host_def.h constants ---- */
#ifdef __cplusplus
constexpr uint16_t ACLSHMEM_UNIQUE_ID_INNER_LEN = 124;
constexpr int DEFAULT_TIMEOUT = 120;
#else
enum { ACLSHMEM_UNIQUE_ID_INNER_LEN = 124, DEFAULT_TIMEOUT = 120 };
#endif

#define ACLSHMEM_MAJOR_VERSION 1
#define ACLSHMEM_MINOR_VERSION 1
#define ACLSHMEM_MAX_NAME_LEN 256
#define ACLSHMEM_VENDOR_MAJOR_VER 1
#define ACLSHMEM_VENDOR_MINOR_VER 1
#define ACLSHMEM_VENDOR_PATCH_VER 1
#define ACLSHMEM_MAX_IP_PORT_LEN 64

/* ---- host_device/shmem_common_types.h constants ---- */
#define ACLSHMEM_MAX_PES 16384
#define ACLSHMEM_MAX_TEAMS 2048
#define ACLSHMEM_SIGNAL_SIZE 8
#define ACLSHMEM_MAX_LOCAL_SIZE (40UL * 1024 * 1024 * 1024)
#define TEAM_CONFIG_PADDING 48
#define SCALAR_DATA_CACHELINE_SIZE 64
#define L2_CACHELINE_SIZE 512
#define ACLSHMEM_PAGE_SIZE (1024UL * 1024UL * 2)
#define ACLSHMEM_STARS_NOTIFY_ADDR_OFFSET (14 * 1024)
#define ACLSHMEM_SDMA_FLAG_LENGTH 64
#define ACLSHMEM_UDMA_MTE_STAGING_UB_SIZE 128U
#define ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE 128U
#define ALIGN_TO(size, page) (((size) + (page) - 1) / (page) * (page))
#define ALIGH_TO ALIGN_TO
#define ACLSHMEM_SYNCBIT_SIZE SCALAR_DATA_CACHELINE_SIZE
#define ACLSHMEMI_SYNCBIT_SIZE ACLSHMEM_SYNCBIT_SIZE
#define SYNC_LOG_MAX_PES 5
#define ACLSHMEM_BARRIER_TG_DISSEM_KVAL 8
#define SYNC_ARRAY_SIZE (ACLSHMEM_SYNCBIT_SIZE * SYNC_LOG_MAX_PES * ACLSHMEM_BARRIER_TG_DISSEM_KVAL)
#define SYNC_COUNTER_SIZE ACLSHMEM_SYNCBIT_SIZE
#define SYNC_POOL_SIZE (SYNC_ARRAY_SIZE * ACLSHMEM_MAX_TEAMS)
#define SYNC_COUNTERS_SIZE (SYNC_COUNTER_SIZE * ACLSHMEM_MAX_TEAMS)
#define ACLSHMEM_MAX_AIV_PER_NPU 48
#define ACLSHMEM_LOG_MAX_AIV_PER_NPU 6
/* queue pairs per peer connection of the RoCE and UDMA engines (aclshmemx_set_qp_num accepts
   1..ACLSHMEM_MAX_QP_NUM) and the SDMA channels of a device (1..ACLSHMEM_SDMA_MAX_CHAN for SDMA), as
   newer original headers define them */
#define ACLSHMEM_MAX_QP_NUM 32
#define ACLSHMEM_SDMA_MAX_CHAN 40
#define ACLSHMEM_CORE_SYNC_POOL_SIZE (ACLSHMEM_MAX_AIV_PER_NPU * ACLSHMEM_LOG_MAX_AIV_PER_NPU * ACLSHMEM_SYNCBIT_SIZE)
#define ACLSHMEM_CORE_SYNC_COUNTER_SIZE ACLSHMEM_SYNCBIT_SIZE
#define ACLSHMEM_EXTRA_SIZE_UNALIGNED SYNC_POOL_SIZE
#define ACLSHMEM_EXTRA_SIZE_UNALIGHED ACLSHMEM_EXTRA_SIZE_UNALIGNED
#define ACLSHMEM_EXTRA_SIZE ALIGN_TO(ACLSHMEM_EXTRA_SIZE_UNALIGNED, ACLSHMEM_PAGE_SIZE)
#ifdef __cplusplus
constexpr uint64_t ACLSHMEM_HEAP_ALIGNMENT_SIZE = (1UL << 30UL);
#else
#define ACLSHMEM_HEAP_ALIGNMENT_SIZE ((uint64_t)1 << 30)
#endif
#ifndef ALIGN_UP
#define ALIGN_UP(val, al) (((val) + ((al) - 1)) & ~((al) - 1))
#endif
#define ACLSHMEM_CYCLE_PROF_MAX_BLOCK 64
#define ACLSHMEM_CYCLE_PROF_FRAME_CNT 1024

/* ---- family generator macros (spec 3.3) ---- */
#define ACLSHMEM_TYPE_FUNC(FUNC) \
    FUNC(float, float);          \
    FUNC(double, double);        \
    FUNC(int8, int8_t);          \
    FUNC(int16, int16_t);        \
    FUNC(int32, int32_t);        \
    FUNC(int64, int64_t);        \
    FUNC(uint8, uint8_t);        \
    FUNC(uint16, uint16_t);      \
    FUNC(uint32, uint32_t);      \
    FUNC(uint64, uint64_t);      \
    FUNC(char, char)

#define ACLSHMEM_P2P_SYNC_TYPE_FUNC(FUNC) \
    FUNC(float, float);                   \
    FUNC(int8, int8_t);                   \
    FUNC(int16, int16_t);                 \
    FUNC(int32, int32_t);                 \
    FUNC(int64, int64_t);                 \
    FUNC(uint8, uint8_t);                 \
    FUNC(uint16, uint16_t);               \
    FUNC(uint32, uint32_t);               \
    FUNC(uint64, uint64_t);               \
    FUNC(char, char)

#define ACLSHMEM_SIZE_FUNC(FUNC)  \
    FUNC(8);                      \
    FUNC(16);                     \
    FUNC(32);                     \
    FUNC(64);                     \
    FUNC(128)

/* ---- enumerations (spec section 4) ---- */
/** Return codes of every int-returning call. */
typedef enum aclshmem_error_code_t ACLSHMEM_ENUM_BASE(int) {
    ACLSHMEM_SUCCESS = 0,
    ACLSHMEM_INVALID_PARAM = -1,
    ACLSHMEM_INVALID_VALUE = -2,
    ACLSHMEM_SMEM_ERROR = -3,
    ACLSHMEM_INNER_ERROR = -4,
    ACLSHMEM_NOT_INITED = -5,
    ACLSHMEM_BOOTSTRAP_ERROR = -6,
    ACLSHMEM_TIMEOUT_ERROR = -7,
    ACLSHMEM_MALLOC_FAILED = -8,
    ACLSHMEM_DL_FUNC_FAILED = -9,
    ACLSHMEM_INNER_TIMEOUT = -10,
    ACLSHMEM_UNDER_API_UNLOAD = -11,
    ACLSHMEM_NOT_SUPPORTED = -100
} aclshmem_error_code_t;

/** Bootstrap flags of aclshmemx_init_attr. */
#ifdef __cplusplus
typedef enum aclshmemx_bootstrap_t : unsigned int {
    ACLSHMEMX_INIT_WITH_DEFAULT = 1U << 0,
    ACLSHMEMX_INIT_WITH_MPI = 1U << 1,
    ACLSHMEMX_INIT_WITH_UNIQUEID = 1U << 3,
    ACLSHMEMX_INIT_MAX = 1U << 31
} aclshmemx_bootstrap_t;
#else
typedef unsigned int aclshmemx_bootstrap_t;
#define ACLSHMEMX_INIT_WITH_DEFAULT (1U << 0)
#define ACLSHMEMX_INIT_WITH_MPI (1U << 1)
#define ACLSHMEMX_INIT_WITH_UNIQUEID (1U << 3)
#define ACLSHMEMX_INIT_MAX (1U << 31)
#endif

/** Phase reported by aclshmemx_init_status. */
typedef enum aclshmemx_init_status_t {
    ACLSHMEM_STATUS_NOT_INITIALIZED = 0,
    ACLSHMEM_STATUS_SHM_CREATED,
    ACLSHMEM_STATUS_IS_INITIALIZED,
    ACLSHMEM_STATUS_INVALID = INT_MAX
} aclshmemx_init_status_t;

#ifdef __cplusplus
typedef enum aclshmem_transport_t : uint8_t {
    ACLSHMEM_TRANSPORT_MTE = 1 << 0,
    ACLSHMEM_TRANSPORT_ROCE = 1 << 1,
    ACLSHMEM_TRANSPORT_SDMA = 1 << 2,
    ACLSHMEM_TRANSPORT_UDMA = 1 << 3
} aclshmem_transport_t;
#else
typedef uint8_t aclshmem_transport_t;
enum {
    ACLSHMEM_TRANSPORT_MTE = 1 << 0,
    ACLSHMEM_TRANSPORT_ROCE = 1 << 1,
    ACLSHMEM_TRANSPORT_SDMA = 1 << 2,
    ACLSHMEM_TRANSPORT_UDMA = 1 << 3
};
#endif

typedef enum aclshmem_team_index_t {
    ACLSHMEM_TEAM_INVALID = -1,
    ACLSHMEM_TEAM_WORLD = 0
} aclshmem_team_index_t;

/** Transport mask of aclshmem_init_optional_attr_t (valid: 0x1..0xF). */
typedef enum data_op_engine_type_t {
    ACLSHMEM_DATA_OP_MTE = 0x01,
    ACLSHMEM_DATA_OP_SDMA = 0x02,
    ACLSHMEM_DATA_OP_ROCE = 0x04,
    ACLSHMEM_DATA_OP_UDMA = 0x08,
    ACLSHMEM_DATA_OP_MAX = 0x08
} data_op_engine_type_t;

/** Which symmetric heap: HOST_SIDE and DEVICE_SIDE are two separate heaps (both CPU memory here). */
typedef enum aclshmem_mem_type_t {
    HOST_SIDE = 0,
    DEVICE_SIDE = 1
} aclshmem_mem_type_t;

typedef enum aclshmem_signal_op_type_t {
    ACLSHMEM_SIGNAL_SET = 0,
    ACLSHMEM_SIGNAL_ADD = 1
} aclshmem_signal_op_type_t;

typedef enum aclshmem_cmp_op_type_t {
    ACLSHMEM_CMP_EQ = 0,
    ACLSHMEM_CMP_NE,
    ACLSHMEM_CMP_GT,
    ACLSHMEM_CMP_GE,
    ACLSHMEM_CMP_LT,
    ACLSHMEM_CMP_LE
} aclshmem_cmp_op_type_t;

typedef enum aclshmem_block_mode_t {
    NO_NBI = 0,
    NBI = 1
} aclshmem_block_mode_t;

/* ---- typedefs and structs (spec section 5) ---- */
typedef int aclshmem_team_t;
typedef uint64_t aclshmemx_team_uniqueid_t;
typedef int32_t aclshmemx_sync_bit[ACLSHMEM_SYNCBIT_SIZE / sizeof(int32_t)];
#define aclshmemi_sync_bit aclshmemx_sync_bit
typedef int32_t Result;

typedef struct {
    int version;
    data_op_engine_type_t data_op_engine_type;
    uint32_t shm_init_timeout;
    uint32_t shm_create_timeout;
    uint32_t control_operation_timeout;
    int32_t sockFd;
} aclshmem_init_optional_attr_t;

/**
 * Attributes of aclshmemx_init_attr. C++ callers get the original member-initialiser defaults;
 * C callers start from ACLSHMEMX_INIT_ATTR_INITIALIZER (same values) or aclshmemx_set_attr_from_env.
 */
typedef struct aclshmemx_init_attr_t {
    int my_pe;
    int n_pes;
#ifdef __cplusplus
    char ip_port[ACLSHMEM_MAX_IP_PORT_LEN] = {};
    uint64_t local_mem_size;
    aclshmem_init_optional_attr_t option_attr = {(1 << 16) + sizeof(aclshmem_init_optional_attr_t),
        ACLSHMEM_DATA_OP_MTE, DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, 0};
    void *comm_args = nullptr;
    uint64_t instance_id = 0;
#else
    char ip_port[ACLSHMEM_MAX_IP_PORT_LEN];
    uint64_t local_mem_size;
    aclshmem_init_optional_attr_t option_attr;
    void *comm_args;
    uint64_t instance_id;
#endif
} aclshmemx_init_attr_t;

/** Diagnostic level of aclshmemx_report_exception (host/utils/shmem_host_exception.h). */
typedef enum aclshmemx_exception_report_level {
    ACLSHMEMX_EXCEPTION_REPORT_INFO = 0,
    ACLSHMEMX_EXCEPTION_REPORT_DEBUG = 1,
} aclshmemx_exception_report_level_t;

/** The program's exception callback: the ACL runtime's exception info, opaque, valid during the call. */
typedef void (*aclshmemx_exception_info_callback_t)(void *exception_info);

/** Physical-allocation handle of a buffer given to aclshmemx_init_attr_with_buffers (an aclrtDrvMemHandle). */
typedef void *aclshmemx_drv_mem_handle_t;
/** Pointer to a fabric share handle (not supported on the CPU: must be NULL). */
typedef const void *aclshmemx_mem_fabric_handle_t;

/** Optional sharing attributes of one buffer of aclshmemx_init_attr_with_buffers (64 bytes). */
typedef struct aclshmemx_buffer_optional_attr_t {
#ifdef __cplusplus
    aclshmemx_drv_mem_handle_t mem_handle = nullptr;
    aclshmemx_mem_fabric_handle_t fabric_handle = nullptr;
    uint64_t reserved[6] = {};
#else
    aclshmemx_drv_mem_handle_t mem_handle;
    aclshmemx_mem_fabric_handle_t fabric_handle;
    uint64_t reserved[6];
#endif
} aclshmemx_buffer_optional_attr_t;

/** One caller-mapped device buffer that becomes a fixed part of the symmetric heap (64 bytes). */
typedef struct aclshmemx_buffer_desc_t {
#ifdef __cplusplus
    void *addr = nullptr;
    uint64_t size = 0;
    const aclshmemx_buffer_optional_attr_t *optional_attr = nullptr;
    uint64_t reserved[5] = {};
#else
    void *addr;
    uint64_t size;
    const aclshmemx_buffer_optional_attr_t *optional_attr;
    uint64_t reserved[5];
#endif
} aclshmemx_buffer_desc_t;

/** Extension: the C equivalent of the C++ member-initialiser defaults of aclshmemx_init_attr_t. */
#define ACLSHMEMX_INIT_ATTR_INITIALIZER                                                             \
    { 0, 0, {0}, 0,                                                                                \
      { (1 << 16) + (int)sizeof(aclshmem_init_optional_attr_t), ACLSHMEM_DATA_OP_MTE, DEFAULT_TIMEOUT, \
        DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, 0 },                                                     \
      NULL, 0 }

/** Password decryptor for an encrypted TLS private key (C: pointer instead of C++ reference). */
#ifdef __cplusplus
typedef int (*aclshmem_decrypt_handler)(const char *cipherText, size_t cipherTextLen, char *plainText,
                                        size_t &plainTextLen);
#else
typedef int (*aclshmem_decrypt_handler)(const char *cipherText, size_t cipherTextLen, char *plainText,
                                        size_t *plainTextLen);
#endif

typedef struct {
    int32_t version;
    int my_pe;
    int n_pes;
    char internal[ACLSHMEM_UNIQUE_ID_INNER_LEN];
} aclshmemx_uniqueid_t;

#ifdef __cplusplus
constexpr int32_t ACLSHMEM_UNIQUEID_VERSION = (1 << 16) + sizeof(aclshmemx_uniqueid_t);
#else
#define ACLSHMEM_UNIQUEID_VERSION ((int32_t)((1 << 16) + sizeof(aclshmemx_uniqueid_t)))
#endif

#define ACLSHMEM_UNIQUEID_INITIALIZER                   \
    {                                                   \
        ACLSHMEM_UNIQUEID_VERSION,                      \
        {                                               \
            0                                           \
        }                                               \
    }

typedef struct {
    int32_t version;
    int32_t num_contexts;
    aclshmemx_team_uniqueid_t uniqueid;
    char padding[TEAM_CONFIG_PADDING];
} aclshmem_team_config_t;
#ifdef __cplusplus
static_assert(sizeof(aclshmem_team_config_t) == 64, "aclshmem_team_config_t must be 64 bytes.");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(aclshmem_team_config_t) == 64, "aclshmem_team_config_t must be 64 bytes.");
#else
/* C99 (-std=gnu99 -pedantic refuses _Static_assert): an array of negative size otherwise */
typedef char aclshmem_team_config_t_must_be_64_bytes[sizeof(aclshmem_team_config_t) == 64 ? 1 : -1];
#endif

typedef struct {
    int mype;
    int start;
    int stride;
    int size;
    int team_idx;
    aclshmem_team_config_t config;
    int32_t pe_mapping[2 * ACLSHMEM_MAX_PES];
} aclshmemx_team_t;

typedef struct aclshmem_handle_t {
    aclshmem_team_t team_id;
} aclshmem_handle_t;

typedef struct {
    uint64_t id;
    void *instance;
} aclshmem_instance_ctx;

typedef struct {
    int64_t aclshmem_ub;
    uint32_t ub_size;
#ifdef __cplusplus
    /* event_id: the member's name in earlier releases (kernels read mte_config.event_id) */
    union {
        uint32_t sync_id;
        uint32_t event_id;
    };
#else
    uint32_t sync_id;
#endif
} aclshmem_ub_config_t;
typedef aclshmem_ub_config_t aclshmem_mte_config_t;
typedef aclshmem_ub_config_t aclshmem_sdma_config_t;
typedef aclshmem_ub_config_t aclshmem_rdma_config_t;
typedef aclshmem_ub_config_t aclshmem_udma_config_t;

typedef struct {
    int64_t ccount[ACLSHMEM_CYCLE_PROF_FRAME_CNT];
    int64_t cycles[ACLSHMEM_CYCLE_PROF_FRAME_CNT];
} aclshmem_prof_block_t;

typedef struct {
    int32_t pe_id;
    aclshmem_prof_block_t block_prof[ACLSHMEM_CYCLE_PROF_MAX_BLOCK];
} aclshmem_prof_pe_t;

typedef struct {
    int version;
    int mype;
    int npes;
    void *heap_base;
    void *host_heap_base;
    void **p2p_device_heap_base;
    void **rdma_device_heap_base;
    void **sdma_device_heap_base;
    void **p2p_host_heap_base;
    void **rdma_host_heap_base;
    void **sdma_host_heap_base;
    uint8_t topo_list[ACLSHMEM_MAX_PES];
    size_t heap_size;
    aclshmemx_team_t *team_pools[ACLSHMEM_MAX_TEAMS];
    uint64_t sync_pool;
    uint64_t sync_counter;
    uint64_t core_sync_pool;
    uint64_t core_sync_counter;
    bool is_aclshmem_initialized;
    bool is_aclshmem_created;
    aclshmem_mte_config_t mte_config;
    aclshmem_sdma_config_t sdma_config;
    aclshmem_rdma_config_t rdma_config;
    aclshmem_udma_config_t udma_config;
    uint64_t qp_info;
    uint64_t sdma_workspace_addr;
    aclshmem_prof_pe_t *profs;
    uint64_t signal_addr;
} aclshmem_device_host_state_t;

typedef struct {
    void *default_stream;
    int8_t default_event_id;
    uint32_t default_block_num;
    void *notify_arr[ACLSHMEM_MAX_AIV_PER_NPU];
} aclshmem_host_state_t;

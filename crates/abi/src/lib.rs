//! `#[repr(C)]` mirrors of every public type of the original headers (spec sections 3-5).
//!
//! The C declarations of these types are kept verbatim in the header fragments `cbindgen/*.h` (they need `#ifdef
//! __cplusplus` variants cbindgen cannot express); this file is the Rust view used by the exports,
//! and the `const` asserts at the bottom pin both to the spec's sizes and offsets. `tests/c/abi_layout.c`
//! asserts the same numbers from the C side.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{align_of, offset_of, size_of};

pub const ACLSHMEM_UNIQUE_ID_INNER_LEN: usize = 124;
pub const DEFAULT_TIMEOUT: u32 = 120;
pub const ACLSHMEM_MAJOR_VERSION: c_int = 1;
pub const ACLSHMEM_MINOR_VERSION: c_int = 1;
pub const ACLSHMEM_VENDOR_MAJOR_VER: c_int = 1;
pub const ACLSHMEM_VENDOR_MINOR_VER: c_int = 1;
pub const ACLSHMEM_VENDOR_PATCH_VER: c_int = 1;
pub const ACLSHMEM_MAX_NAME_LEN: usize = 256;
pub const ACLSHMEM_MAX_IP_PORT_LEN: usize = 64;
pub const ACLSHMEM_MAX_PES: usize = 16384;
pub const ACLSHMEM_MAX_TEAMS: usize = 2048;
pub const ACLSHMEM_MAX_LOCAL_SIZE: u64 = 40 * 1024 * 1024 * 1024;
pub const ACLSHMEM_PAGE_SIZE: u64 = 2 * 1024 * 1024;
pub const SCALAR_DATA_CACHELINE_SIZE: usize = 64;
pub const ACLSHMEM_SYNCBIT_SIZE: usize = SCALAR_DATA_CACHELINE_SIZE;
pub const SYNC_LOG_MAX_PES: usize = 5;
pub const ACLSHMEM_BARRIER_TG_DISSEM_KVAL: usize = 8;
pub const SYNC_ARRAY_SIZE: usize = ACLSHMEM_SYNCBIT_SIZE * SYNC_LOG_MAX_PES * ACLSHMEM_BARRIER_TG_DISSEM_KVAL;
pub const SYNC_COUNTER_SIZE: usize = ACLSHMEM_SYNCBIT_SIZE;
pub const SYNC_POOL_SIZE: usize = SYNC_ARRAY_SIZE * ACLSHMEM_MAX_TEAMS;
pub const SYNC_COUNTERS_SIZE: usize = SYNC_COUNTER_SIZE * ACLSHMEM_MAX_TEAMS;
pub const ACLSHMEM_EXTRA_SIZE_UNALIGNED: u64 = SYNC_POOL_SIZE as u64;
/// `ALIGN_TO(ACLSHMEM_EXTRA_SIZE_UNALIGNED, ACLSHMEM_PAGE_SIZE)` = 6 MiB.
pub const ACLSHMEM_EXTRA_SIZE: u64 =
    ACLSHMEM_EXTRA_SIZE_UNALIGNED.div_ceil(ACLSHMEM_PAGE_SIZE) * ACLSHMEM_PAGE_SIZE;
pub const ACLSHMEM_CYCLE_PROF_MAX_BLOCK: usize = 64;
pub const ACLSHMEM_CYCLE_PROF_FRAME_CNT: usize = 1024;
pub const ACLSHMEM_MAX_AIV_PER_NPU: usize = 48;
/// `aclshmemx_set_qp_num`'s largest queue-pair count of the RoCE and UDMA engines.
pub const ACLSHMEM_MAX_QP_NUM: u32 = 32;
/// The SDMA channels of a device: `aclshmemx_set_qp_num`'s largest count for SDMA.
pub const ACLSHMEM_SDMA_MAX_CHAN: u32 = 40;
pub const TEAM_CONFIG_PADDING: usize = 48;
pub const ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE: u32 = 128;

// aclshmemx_bootstrap_t
pub const ACLSHMEMX_INIT_WITH_DEFAULT: u32 = 1 << 0;
pub const ACLSHMEMX_INIT_WITH_MPI: u32 = 1 << 1;
pub const ACLSHMEMX_INIT_WITH_UNIQUEID: u32 = 1 << 3;
pub const ACLSHMEMX_INIT_MAX: u32 = 1 << 31;

// aclshmemx_init_status_t
pub const ACLSHMEM_STATUS_NOT_INITIALIZED: c_int = 0;
pub const ACLSHMEM_STATUS_SHM_CREATED: c_int = 1;
pub const ACLSHMEM_STATUS_IS_INITIALIZED: c_int = 2;
pub const ACLSHMEM_STATUS_INVALID: c_int = c_int::MAX;

// aclshmem_team_index_t
pub const ACLSHMEM_TEAM_INVALID: c_int = -1;
pub const ACLSHMEM_TEAM_WORLD: c_int = 0;

// data_op_engine_type_t
pub const ACLSHMEM_DATA_OP_MTE: c_int = 0x01;
pub const ACLSHMEM_DATA_OP_SDMA: c_int = 0x02;
pub const ACLSHMEM_DATA_OP_ROCE: c_int = 0x04;
pub const ACLSHMEM_DATA_OP_UDMA: c_int = 0x08;

// aclshmem_mem_type_t
pub const HOST_SIDE: c_int = 0;
pub const DEVICE_SIDE: c_int = 1;

/// `aclshmem_init_optional_attr_t` (spec 5.2).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOptionalAttr {
    pub version: c_int,
    /// `data_op_engine_type_t`, received as a plain int: callers may pass any bit pattern.
    pub data_op_engine_type: c_int,
    pub shm_init_timeout: u32,
    pub shm_create_timeout: u32,
    pub control_operation_timeout: u32,
    pub sock_fd: i32,
}

impl Default for InitOptionalAttr {
    /// The C++ member-initialiser defaults of the original header.
    fn default() -> Self {
        InitOptionalAttr {
            version: (1 << 16) + size_of::<InitOptionalAttr>() as c_int,
            data_op_engine_type: ACLSHMEM_DATA_OP_MTE,
            shm_init_timeout: DEFAULT_TIMEOUT,
            shm_create_timeout: DEFAULT_TIMEOUT,
            control_operation_timeout: DEFAULT_TIMEOUT,
            sock_fd: 0,
        }
    }
}

/// `aclshmemx_buffer_optional_attr_t`: optional sharing attributes of one buffer given to
/// `aclshmemx_init_attr_with_buffers` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BufferOptionalAttr {
    /// `aclshmemx_drv_mem_handle_t`: the physical allocation behind the buffer, or NULL.
    pub mem_handle: *mut c_void,
    /// `aclshmemx_mem_fabric_handle_t`: a fabric share handle, or NULL.
    pub fabric_handle: *const c_void,
    pub reserved: [u64; 6],
}

/// `aclshmemx_buffer_desc_t`: one caller-mapped device buffer that becomes a fixed part of the
/// symmetric heap (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BufferDesc {
    pub addr: *mut c_void,
    pub size: u64,
    pub optional_attr: *const BufferOptionalAttr,
    pub reserved: [u64; 5],
}

const _: () = assert!(size_of::<BufferOptionalAttr>() == 64 && size_of::<BufferDesc>() == 64);

/// Most buffers `aclshmemx_init_attr_with_buffers` takes (the original's limit).
pub const ACLSHMEM_MAX_USER_BUFFERS: usize = 1024;

/// `aclshmemx_init_attr_t` (spec 5.3).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct InitAttr {
    pub my_pe: c_int,
    pub n_pes: c_int,
    pub ip_port: [c_char; ACLSHMEM_MAX_IP_PORT_LEN],
    pub local_mem_size: u64,
    pub option_attr: InitOptionalAttr,
    pub comm_args: *mut c_void,
    pub instance_id: u64,
}

impl Default for InitAttr {
    fn default() -> Self {
        InitAttr {
            my_pe: 0,
            n_pes: 0,
            ip_port: [0; ACLSHMEM_MAX_IP_PORT_LEN],
            local_mem_size: 0,
            option_attr: InitOptionalAttr::default(),
            comm_args: std::ptr::null_mut(),
            instance_id: 0,
        }
    }
}

/// `aclshmemx_uniqueid_t` (spec 5.4).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct UniqueId {
    pub version: i32,
    pub my_pe: c_int,
    pub n_pes: c_int,
    pub internal: [c_char; ACLSHMEM_UNIQUE_ID_INNER_LEN],
}

/// `ACLSHMEM_UNIQUEID_VERSION` = (1 << 16) + sizeof(aclshmemx_uniqueid_t).
pub const ACLSHMEM_UNIQUEID_VERSION: i32 = (1 << 16) + size_of::<UniqueId>() as i32;

/// `aclshmem_team_config_t` (spec 5.5).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TeamConfig {
    pub version: i32,
    pub num_contexts: i32,
    pub uniqueid: u64,
    pub padding: [c_char; TEAM_CONFIG_PADDING],
}

/// `aclshmemx_team_t` (spec 5.6), the device-visible team record.
#[repr(C)]
pub struct TeamRecord {
    pub mype: c_int,
    pub start: c_int,
    pub stride: c_int,
    pub size: c_int,
    pub team_idx: c_int,
    pub config: TeamConfig,
    pub pe_mapping: [i32; 2 * ACLSHMEM_MAX_PES],
}

/// `aclshmem_handle_t` (spec 5.7), passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Handle {
    pub team_id: c_int,
}

/// `aclshmem_instance_ctx` (spec 5.8).
#[repr(C)]
#[derive(Debug)]
pub struct InstanceCtx {
    pub id: u64,
    pub instance: *mut c_void,
}

/// `aclshmem_ub_config_t` and its four aliases (spec 5.9).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UbConfig {
    pub aclshmem_ub: i64,
    pub ub_size: u32,
    pub sync_id: u32,
}

/// `aclshmem_prof_block_t` (spec 5.10).
#[repr(C)]
pub struct ProfBlock {
    pub ccount: [i64; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
    pub cycles: [i64; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
}

/// `aclshmem_prof_pe_t` (spec 5.10).
#[repr(C)]
pub struct ProfPe {
    pub pe_id: i32,
    pub block_prof: [ProfBlock; ACLSHMEM_CYCLE_PROF_MAX_BLOCK],
}

/// `aclshmem_device_host_state_t` (spec 5.11).
#[repr(C)]
pub struct DeviceHostState {
    pub version: c_int,
    pub mype: c_int,
    pub npes: c_int,
    pub heap_base: *mut c_void,
    pub host_heap_base: *mut c_void,
    pub p2p_device_heap_base: *mut *mut c_void,
    pub rdma_device_heap_base: *mut *mut c_void,
    pub sdma_device_heap_base: *mut *mut c_void,
    pub p2p_host_heap_base: *mut *mut c_void,
    pub rdma_host_heap_base: *mut *mut c_void,
    pub sdma_host_heap_base: *mut *mut c_void,
    pub topo_list: [u8; ACLSHMEM_MAX_PES],
    pub heap_size: usize,
    pub team_pools: [*mut TeamRecord; ACLSHMEM_MAX_TEAMS],
    pub sync_pool: u64,
    pub sync_counter: u64,
    pub core_sync_pool: u64,
    pub core_sync_counter: u64,
    pub is_aclshmem_initialized: bool,
    pub is_aclshmem_created: bool,
    pub mte_config: UbConfig,
    pub sdma_config: UbConfig,
    pub rdma_config: UbConfig,
    pub udma_config: UbConfig,
    pub qp_info: u64,
    pub sdma_workspace_addr: u64,
    pub profs: *mut ProfPe,
    pub signal_addr: u64,
}

/// `aclshmem_host_state_t` (spec 5.11).
#[repr(C)]
pub struct HostState {
    pub default_stream: *mut c_void,
    pub default_event_id: i8,
    pub default_block_num: u32,
    pub notify_arr: [*mut c_void; ACLSHMEM_MAX_AIV_PER_NPU],
}

/// `aclshmem_decrypt_handler` (spec 5.12; `size_t &` in C++ is a pointer in the ABI).
pub type DecryptHandler =
    Option<unsafe extern "C" fn(*const c_char, usize, *mut c_char, *mut usize) -> c_int>;

/// Logger callback of `aclshmemx_set_extern_logger`.
pub type ExternLogger = Option<unsafe extern "C" fn(c_int, *const c_char)>;

macro_rules! layout {
    ($t:ty, $size:expr, $align:expr $(, $field:ident @ $off:expr)*) => {
        const _: () = assert!(size_of::<$t>() == $size);
        const _: () = assert!(align_of::<$t>() == $align);
        $(const _: () = assert!(offset_of!($t, $field) == $off);)*
    };
}

layout!(InitOptionalAttr, 24, 4, version @ 0, data_op_engine_type @ 4, shm_init_timeout @ 8,
    shm_create_timeout @ 12, control_operation_timeout @ 16, sock_fd @ 20);
layout!(InitAttr, 120, 8, my_pe @ 0, n_pes @ 4, ip_port @ 8, local_mem_size @ 72, option_attr @ 80,
    comm_args @ 104, instance_id @ 112);
layout!(UniqueId, 136, 4, version @ 0, my_pe @ 4, n_pes @ 8, internal @ 12);
layout!(TeamConfig, 64, 8, version @ 0, num_contexts @ 4, uniqueid @ 8, padding @ 16);
layout!(TeamRecord, 131160, 8, mype @ 0, start @ 4, stride @ 8, size @ 12, team_idx @ 16, config @ 24,
    pe_mapping @ 88);
layout!(Handle, 4, 4, team_id @ 0);
layout!(InstanceCtx, 16, 8, id @ 0, instance @ 8);
layout!(UbConfig, 16, 8, aclshmem_ub @ 0, ub_size @ 8, sync_id @ 12);
layout!(ProfBlock, 16384, 8, ccount @ 0, cycles @ 8192);
layout!(ProfPe, 1048584, 8, pe_id @ 0, block_prof @ 8);
layout!(DeviceHostState, 32992, 8, version @ 0, mype @ 4, npes @ 8, heap_base @ 16, host_heap_base @ 24,
    p2p_device_heap_base @ 32, rdma_device_heap_base @ 40, sdma_device_heap_base @ 48,
    p2p_host_heap_base @ 56, rdma_host_heap_base @ 64, sdma_host_heap_base @ 72, topo_list @ 80,
    heap_size @ 16464, team_pools @ 16472, sync_pool @ 32856, sync_counter @ 32864,
    core_sync_pool @ 32872, core_sync_counter @ 32880, is_aclshmem_initialized @ 32888,
    is_aclshmem_created @ 32889, mte_config @ 32896, sdma_config @ 32912, rdma_config @ 32928,
    udma_config @ 32944, qp_info @ 32960, sdma_workspace_addr @ 32968, profs @ 32976,
    signal_addr @ 32984);
layout!(HostState, 400, 8, default_stream @ 0, default_event_id @ 8, default_block_num @ 12,
    notify_arr @ 16);

const _: () = assert!(ACLSHMEM_EXTRA_SIZE == 6_291_456);
const _: () = assert!(ACLSHMEM_UNIQUEID_VERSION == 65672);
const _: () = assert!(SYNC_POOL_SIZE == 5_242_880 && SYNC_COUNTERS_SIZE == 131_072);

// C type names used in export signatures, so the generated header spells them as the original does
// (cbindgen.toml excludes their definitions, which are written out verbatim in cbindgen/*.h).
#[allow(non_camel_case_types)]
pub type aclshmemx_bootstrap_t = u32;
#[allow(non_camel_case_types)]
pub type aclshmemx_exception_report_level_t = c_int;
#[allow(non_camel_case_types)]
pub type aclshmemx_exception_info_callback_t = Option<unsafe extern "C" fn(*mut c_void)>;
#[allow(non_camel_case_types)]
pub type aclshmem_mem_type_t = c_int;
#[allow(non_camel_case_types)]
pub type data_op_engine_type_t = c_int;
#[allow(non_camel_case_types)]
pub type aclshmem_team_t = c_int;
#[allow(non_camel_case_types)]
pub type aclrtStream = *mut c_void;

//! The C functions of `libaclshmem.so` this module calls (prototypes of include/shmem.h). They stay
//! undefined in `_pyshmem*.so` and bind to the library that `shmem/__init__.py` loaded RTLD_GLOBAL.

use std::ffi::{c_char, c_int, c_void};

use aclshmem_abi as abi;

unsafe extern "C" {
    pub fn aclshmemx_init_attr(flags: u32, attr: *mut abi::InitAttr) -> c_int;
    pub fn aclshmemx_set_attr_uniqueid_args(
        my_pe: c_int,
        n_pes: c_int,
        local_mem_size: i64,
        uid: *mut abi::UniqueId,
        attr: *mut abi::InitAttr,
    ) -> c_int;
    pub fn aclshmemx_set_attr_from_env(attr: *mut abi::InitAttr) -> c_int;
    pub fn aclshmemx_get_uniqueid(uid: *mut abi::UniqueId) -> c_int;
    pub fn aclshmem_finalize() -> c_int;
    pub fn aclshmemx_finalize(instance_id: u64) -> c_int;
    pub fn aclshmemx_set_qp_num(engine: c_int, qp_num: u32) -> c_int;
    pub fn aclshmemx_init_status() -> c_int;
    pub fn aclshmem_info_get_version(major: *mut c_int, minor: *mut c_int);
    pub fn aclshmem_info_get_name(name: *mut c_char);
    pub fn aclshmem_global_exit(status: c_int);
    pub fn util_get_ffts_config() -> u64;
    pub fn aclshmemx_set_config_store_tls_key(
        pk: *const c_char,
        pk_len: u32,
        pw: *const c_char,
        pw_len: u32,
        handler: abi::DecryptHandler,
    ) -> i32;
    pub fn aclshmemx_set_conf_store_tls(enable: bool, info: *const c_char, len: u32) -> i32;
    pub fn aclshmemx_set_log_level(level: c_int) -> i32;
    pub fn aclshmemx_set_extern_logger(f: abi::ExternLogger) -> i32;

    pub fn aclshmem_malloc(size: usize) -> *mut c_void;
    pub fn aclshmem_calloc(nmemb: usize, size: usize) -> *mut c_void;
    pub fn aclshmem_align(alignment: usize, size: usize) -> *mut c_void;
    pub fn aclshmem_free(ptr: *mut c_void);
    pub fn aclshmem_ptr(ptr: *mut c_void, pe: c_int) -> *mut c_void;
    pub fn aclshmemx_get_heap_base(mem_type: c_int) -> *mut c_void;

    pub fn aclshmem_my_pe() -> c_int;
    pub fn aclshmem_n_pes() -> c_int;
    pub fn aclshmem_team_my_pe(team: c_int) -> c_int;
    pub fn aclshmem_team_n_pes(team: c_int) -> c_int;
    pub fn aclshmem_team_split_strided(
        parent: c_int,
        start: c_int,
        stride: c_int,
        size: c_int,
        new: *mut c_int,
    ) -> c_int;
    pub fn aclshmem_team_split_2d(parent: c_int, x_range: c_int, x: *mut c_int, y: *mut c_int) -> c_int;
    pub fn aclshmem_team_translate_pe(src_team: c_int, src_pe: c_int, dest_team: c_int) -> c_int;
    pub fn aclshmem_team_destroy(team: c_int);
    pub fn aclshmem_team_get_config(team: c_int, config: *mut abi::TeamConfig) -> c_int;

    pub fn aclshmem_putmem(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32);
    pub fn aclshmem_getmem(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32);
    pub fn aclshmem_putmem_nbi(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32);
    pub fn aclshmem_getmem_nbi(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32);
    pub fn aclshmemx_putmem_signal(
        dst: *mut c_void,
        src: *mut c_void,
        n: usize,
        sig: *mut c_void,
        signal: i32,
        op: c_int,
        pe: c_int,
    );
    pub fn aclshmemx_putmem_signal_nbi(
        dst: *mut c_void,
        src: *mut c_void,
        n: usize,
        sig: *mut c_void,
        signal: i32,
        op: c_int,
        pe: c_int,
    );
    pub fn aclshmemx_putmem_on_stream(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32, s: *mut c_void);
    pub fn aclshmemx_getmem_on_stream(dst: *mut c_void, src: *mut c_void, n: usize, pe: i32, s: *mut c_void);
    pub fn aclshmemx_signal_op_on_stream(sig: *mut i32, signal: i32, op: c_int, pe: c_int, s: *mut c_void);
    pub fn aclshmemx_signal_wait_until_on_stream(sig: *mut i32, cmp: c_int, val: i32, s: *mut c_void);
    pub fn aclshmemx_quiet_on_stream(s: *mut c_void);
    pub fn aclshmem_signal_wait_until(sig: *mut i32, cmp: c_int, val: i32);
    pub fn aclshmem_quiet();
    pub fn aclshmem_barrier_all();
}

// the newer original bindings (multi-instance, heap kinds, engine configuration, team barriers,
// handles, profiling)
unsafe extern "C" {
    pub fn aclshmemx_instance_ctx_get() -> *mut abi::InstanceCtx;
    pub fn aclshmemx_instance_ctx_set(instance_id: u64) -> c_int;
    pub fn aclshmemx_malloc(size: usize, mem_type: c_int) -> *mut c_void;
    pub fn aclshmemx_calloc(count: usize, size: usize, mem_type: c_int) -> *mut c_void;
    pub fn aclshmemx_align(alignment: usize, size: usize, mem_type: c_int) -> *mut c_void;
    pub fn aclshmemx_free(ptr: *mut c_void, mem_type: c_int);
    pub fn aclshmemx_set_mte_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int;
    pub fn aclshmemx_set_sdma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int;
    pub fn aclshmemx_set_rdma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int;
    pub fn aclshmemx_set_udma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int;
    pub fn aclshmem_barrier(team: c_int);
    pub fn aclshmem_sync(team: c_int);
    pub fn aclshmem_sync_all();
    pub fn aclshmemx_barrier_on_stream(team: c_int, s: *mut c_void);
    pub fn aclshmemx_barrier_all_on_stream(s: *mut c_void);
    pub fn aclshmemx_handle_wait(handle: abi::Handle, s: *mut c_void);
    pub fn aclshmemx_get_prof(out: *mut *mut abi::ProfPe, verbose: bool);
    pub fn aclshmemx_show_prof();
}

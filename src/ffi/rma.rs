//! C entry points of `host/data_plane/shmem_host_rma.h` (spec 8.3).

use std::ffi::{c_int, c_void};

use super::guard;
use aclshmem_core::rma;
use aclshmem_core::runtime::{self, Engine};

/// Address of the object `ptr` (a symmetric address of the calling PE, either heap) in PE `pe`'s
/// copy, usable with ordinary loads and stores: `aclshmem_ptr(p, my_pe) == p`. NULL when not
/// initialised, when `pe` is outside [0, n_pes), when `ptr` is not inside a symmetric heap, or when
/// `pe` runs on another node. Not collective.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_ptr(ptr: *mut c_void, pe: c_int) -> *mut c_void {
    guard("aclshmem_ptr", || {
        let inst = runtime::current()?;
        Ok(inst
            .peer_ptr(ptr as usize, pe)?
            .map_or(std::ptr::null_mut(), |p| p.cast()))
    })
}

/// Copies `elem_size` **bytes** from local `src` to symmetric `dst` on PE `pe`. Blocking: the data
/// is in PE `pe`'s memory when the call returns. Errors (NULL, `dst` range outside the symmetric
/// heap, `pe` out of range, before init) are logged and nothing is written.
///
/// # Safety
/// `src` and `dst` must be NULL or valid for `elem_size` bytes (the symmetric one: inside this PE's
/// heap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_putmem(dst: *mut c_void, src: *mut c_void, elem_size: usize, pe: i32) {
    guard("aclshmem_putmem", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe { rma::put(dst.cast(), src.cast_const().cast(), elem_size, pe) }
    })
}

/// Copies `elem_size` **bytes** from symmetric `src` on PE `pe` to local `dst`. Blocking.
///
/// # Safety
/// `src` and `dst` must be NULL or valid for `elem_size` bytes (the symmetric one: inside this PE's
/// heap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_getmem(dst: *mut c_void, src: *mut c_void, elem_size: usize, pe: i32) {
    guard("aclshmem_getmem", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe { rma::get(dst.cast(), src.cast_const().cast(), elem_size, pe) }
    })
}

/// Non-blocking form of aclshmem_putmem; complete at the latest at aclshmem_quiet or a barrier
/// (to a PE of this node, reached through shared memory, this implementation completes it before
/// returning; to a PE on another node it may still be in flight).
///
/// # Safety
/// `src` and `dst` must be NULL or valid for `elem_size` bytes (the symmetric one: inside this PE's
/// heap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_putmem_nbi(dst: *mut c_void, src: *mut c_void, elem_size: usize, pe: i32) {
    guard("aclshmem_putmem_nbi", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe { rma::put_nbi(dst.cast(), src.cast_const().cast(), elem_size, pe) }
    })
}

/// Non-blocking form of aclshmem_getmem; `dst` is valid at the latest after aclshmem_quiet (from a
/// PE of this node, reached through shared memory, this implementation completes it before
/// returning; from a PE on another node it may still be in flight).
///
/// # Safety
/// `src` and `dst` must be NULL or valid for `elem_size` bytes (the symmetric one: inside this PE's
/// heap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_getmem_nbi(dst: *mut c_void, src: *mut c_void, elem_size: usize, pe: i32) {
    guard("aclshmem_getmem_nbi", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe { rma::get_nbi(dst.cast(), src.cast_const().cast(), elem_size, pe) }
    })
}

/// **Extension** (the original has quiet only on the device and on streams): completes every put,
/// get and their `_nbi` forms issued by this PE; their effects are visible to every PE afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_quiet() {
    guard("aclshmem_quiet", rma::quiet)
}

/// **Extension**: orders this PE's earlier puts before its later ones (implemented as quiet).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_fence() {
    guard("aclshmem_fence", rma::fence)
}

fn set_ub(engine: Engine, offset: u64, ub_size: u32, sync_id: u32) -> crate::Result<c_int> {
    aclshmem_core::kernel::set_ub_config(&*runtime::current()?, engine, offset, ub_size, sync_id).map(|_| 0)
}

/// Records the MTE UB scratch configuration (offset into UB, size, sync id). Returns 0, or
/// `ACLSHMEM_NOT_INITED` before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_mte_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int {
    guard("aclshmemx_set_mte_config", || {
        set_ub(Engine::Mte, offset, ub_size, sync_id)
    })
}

/// Records the SDMA UB scratch configuration. Returns 0, or `ACLSHMEM_NOT_INITED` before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_sdma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int {
    guard("aclshmemx_set_sdma_config", || {
        set_ub(Engine::Sdma, offset, ub_size, sync_id)
    })
}

/// Records the RDMA UB scratch configuration. `ub_size` below 128 → `ACLSHMEM_INVALID_VALUE`, nothing
/// changes. Returns 0, or `ACLSHMEM_NOT_INITED` before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_rdma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int {
    guard("aclshmemx_set_rdma_config", || {
        set_ub(Engine::Rdma, offset, ub_size, sync_id)
    })
}

/// Records the UDMA UB scratch configuration. `ub_size` below 128 → `ACLSHMEM_INVALID_VALUE`, nothing
/// changes. Returns 0, or `ACLSHMEM_NOT_INITED` before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_udma_config(offset: u64, ub_size: u32, sync_id: u32) -> c_int {
    guard("aclshmemx_set_udma_config", || {
        set_ub(Engine::Udma, offset, ub_size, sync_id)
    })
}

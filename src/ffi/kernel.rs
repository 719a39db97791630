//! C entry points of the CPU device mode: what the C++ device headers (`include/device/`,
//! `include/kernel_operator.h`) call. They are this library's own extension, namespaced
//! `aclshmemx_dev_*`, and not meant to be called by programs directly: kernels use the original
//! device API, which the headers map onto these and onto the host entry points.
//!
//! Device calls with the same name and parameters as a host call (barriers, RMA with a UB operand)
//! are the host entry points themselves: they behave as the device call when the calling thread
//! runs a kernel block (crates/core/src/block.rs).

use std::ffi::{CStr, c_char, c_int, c_void};

use super::{guard, guard_or};
use aclshmem_core::block::{self, KernelKind};
use aclshmem_core::error::{Error, Result};
use aclshmem_core::kernel::{self, Launch};
use aclshmem_core::p2p::{self, SignalOp};

/// Queues a kernel launch on `stream` (NULL: the ACL default stream): when it runs, `block_dim`
/// blocks (`kind` 0 = AIV only, `blockDim` contexts; 1 = MIX, two AIV contexts per block) each
/// call `func(closure)` on their own thread; `free(closure)` runs once when the launch will not run
/// again: after it ran, or (a stream captured into an ACL graph) when the graph is destroyed.
/// Returns 0 when queued; ACLSHMEM_INVALID_PARAM for a NULL `func`, `block_dim` 0 or above
/// 65535, or an unknown `kind` (then `free` is called at once). A block that fails makes the
/// stream's next synchronize fail. Without an ACL runtime in the process the launch runs before
/// this call returns, and a failure is returned (ACLSHMEM_INNER_ERROR).
///
/// # Safety
/// `func` must be safe to call concurrently from `block_dim` threads with `closure`, and
/// `closure` must stay valid until `free` is called.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_dev_launch(
    stream: *mut c_void,
    kind: u32,
    block_dim: u32,
    func: Option<unsafe extern "C" fn(closure: *mut c_void) -> c_int>,
    closure: *mut c_void,
    free: Option<unsafe extern "C" fn(closure: *mut c_void)>,
) -> c_int {
    guard("aclshmemx_dev_launch", || {
        let release = || {
            if let Some(f) = free {
                // SAFETY: the caller's closure, released as this function promises.
                unsafe { f(closure) };
            }
        };
        let Some(func) = func else {
            release();
            return Err(Error::InvalidParam("func is NULL".into()));
        };
        let kind = KernelKind::from_c(kind).inspect_err(|_| release())?;
        // from here on, dropping `l` frees the closure
        let l = Launch {
            kind,
            block_dim,
            func,
            closure,
            free,
        };
        fill_host_state();
        kernel::launch(stream, l).map(|()| 0)
    })
}

/// Called by the launcher inside a block that failed (a C++ exception, a fault), before its block
/// function returns non-zero: `why` becomes part of the launch's error message. NULL: no message.
///
/// # Safety
/// A non-NULL `why` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_dev_block_fail(why: *const c_char) {
    guard("aclshmemx_dev_block_fail", || {
        let msg = if why.is_null() {
            "the block reported a failure".to_string()
        } else {
            // SAFETY: NUL-terminated per this function's contract.
            unsafe { CStr::from_ptr(why) }.to_string_lossy().into_owned()
        };
        kernel::block_failed(msg);
        Ok(())
    })
}

/// Registers (a function) or clears (NULL) how the calling kernel block is ended at once: the
/// launcher of the device headers registers a function that jumps back into the block's entry
/// (as after a fault). The library calls it when a device call of the block fails because
/// another block of the launch failed while this one waited (a flag that block was to set never
/// comes); without it such a call returns its error.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_set_abandon(hook: Option<extern "C" fn()>) {
    guard("aclshmemx_dev_set_abandon", || {
        kernel::set_abandon(hook);
        Ok(())
    })
}

/// 1 when the calling thread runs a kernel block, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_in_kernel() -> c_int {
    guard_or("aclshmemx_dev_in_kernel", 0, || {
        Ok(block::current().is_some() as c_int)
    })
}

/// `AscendC::GetBlockIdx()`: the calling context's index (`0..blockDim` for AIV-only kernels,
/// `0..2*blockDim` on the AIVs and `0..blockDim` on the AICs of MIX kernels); 0 outside a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_block_idx() -> i64 {
    guard_or("aclshmemx_dev_block_idx", 0, || {
        Ok(block::current().map_or(0, |b| b.idx as i64))
    })
}

/// `AscendC::GetBlockNum()`: the launch's `blockDim`; 1 outside a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_block_num() -> i64 {
    guard_or("aclshmemx_dev_block_num", 1, || {
        Ok(block::current().map_or(1, |b| b.blocks as i64))
    })
}

/// `AscendC::GetSubBlockIdx()`: the AIV's index inside its block (0 or 1 in MIX kernels, 0 in
/// AIV-only kernels and on an AIC); 0 outside a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_sub_block_idx() -> i64 {
    guard_or("aclshmemx_dev_sub_block_idx", 0, || {
        Ok(block::current().map_or(0, |b| b.sub_idx() as i64))
    })
}

/// `AscendC::GetSubBlockNum()` / `GetTaskRation()`: AIV contexts per block (2 in MIX kernels, on
/// the AIC too, else 1); 1 outside a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_sub_block_num() -> i64 {
    guard_or("aclshmemx_dev_sub_block_num", 1, || {
        Ok(block::current().map_or(1, |b| b.kind.sub_blocks() as i64))
    })
}

/// The calling block's UB (192 KiB; UB address `a` is `base + a`); NULL outside a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_ub_base() -> *mut c_void {
    guard("aclshmemx_dev_ub_base", || {
        Ok(block::current().map_or(std::ptr::null_mut(), |b| b.ub.cast()))
    })
}

/// `AscendC::SyncAll()`: waits until every block context of the launch arrived. 0, or
/// ACLSHMEM_INNER_ERROR when another block of the launch failed (the rendezvous is broken) or
/// outside a kernel (ACLSHMEM_INVALID_PARAM).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_sync_all() -> c_int {
    guard("aclshmemx_dev_sync_all", || {
        let b = in_block("AscendC::SyncAll")?;
        kernel::sync_all(b, false).map(|()| 0)
    })
}

/// 1 when the calling thread runs an AIC context of a MIX kernel (`ASCEND_IS_AIC`), else 0 (an
/// AIV context, or outside a kernel).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_is_aic() -> c_int {
    guard_or("aclshmemx_dev_is_aic", 0, || {
        Ok(block::current().is_some_and(|b| b.aic) as c_int)
    })
}

/// `AscendC::SyncAll<false>()`: waits until every context of the launch, AIV and AIC, arrived
/// (contexts that already returned from the kernel do not count). Return codes as
/// [`aclshmemx_dev_sync_all`].
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_sync_all_cores() -> c_int {
    guard("aclshmemx_dev_sync_all_cores", || {
        let b = in_block("AscendC::SyncAll<false>")?;
        kernel::sync_all(b, true).map(|()| 0)
    })
}

/// `aclshmemx_barrier_vec(team)` (`all` 0) / `aclshmemx_barrier_all_vec()` (`all` non-zero, `team`
/// ignored): the device barrier with only the AIV contexts of the launch taking part; an AIC's
/// call returns at once. 0, ACLSHMEM_INVALID_PARAM outside a kernel or for a bad team, or the
/// barrier's error.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_barrier_vec(team: c_int, all: c_int) -> c_int {
    guard("aclshmemx_barrier_vec", || {
        let b = in_block("aclshmemx_barrier_vec")?;
        let team = if all != 0 { None } else { Some(team) };
        kernel::device_barrier(b, team, false).map(|()| 0)
    })
}

/// Device `aclshmemx_signal_op`: updates the 32-bit signal word at symmetric `sig_addr` on PE `pe`
/// (`ACLSHMEM_SIGNAL_SET` stores with release ordering, `ACLSHMEM_SIGNAL_ADD` adds atomically).
/// Complete on return. Another `sig_op`, a bad address or PE: logged, nothing written.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_signal_op(sig_addr: *mut i32, signal: i32, sig_op: c_int, pe: c_int) {
    guard("aclshmemx_signal_op", || {
        p2p::signal(sig_addr, signal, SignalOp::from_c(sig_op)?, pe)
    })
}

fn in_block(call: &str) -> Result<&'static block::Block> {
    block::current().ok_or_else(|| Error::InvalidParam(format!("{call} called outside a kernel block")))
}

/// The calling PE's device-state record `aclshmem_device_host_state_t` (device-api 1.8), what
/// `aclshmemi_get_state()` returns to kernels; NULL before init. `team_pools` points at a record
/// of every live team of this PE (refreshed by this call when teams were split or destroyed).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_state() -> *mut super::types::DeviceHostState {
    guard("aclshmemx_dev_state", kernel::device_state)
}

/// The PE-level barrier of `team` made by one block per PE (the RoCE engine's team sync and
/// barriers): 0, or an error code (ACLSHMEM_TEAM_INVALID: 0 at once).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_pe_barrier(team: c_int) -> c_int {
    guard("aclshmemx_dev_pe_barrier", || {
        kernel::pe_barrier(team).map(|()| 0)
    })
}

/// `int32_t aclshmemi_control_barrier_all()`: an internal host call of the original (C++ linkage,
/// declared in its `shmemi_host_common.h`, ours too) that upstream examples' host programs call
/// between phases: a barrier of every PE of the world, 0 or an error code (before init:
/// ACLSHMEM_NOT_INITED). Exported under its C++ (Itanium) name, as the original exports it.
#[unsafe(export_name = "_Z29aclshmemi_control_barrier_allv")]
pub extern "C" fn aclshmemi_control_barrier_all() -> i32 {
    guard("aclshmemi_control_barrier_all", || {
        aclshmem_core::host::barrier_all().map(|()| 0)
    })
}

/// `aclshmem_host_state_t g_state_host`: the host-visible state upstream kernels' host programs read
/// (`extern aclshmem_host_state_t g_state_host;`): `default_stream` (the library's internal stream)
/// and `notify_arr`, one ACL notify per AIV core (`ACLSHMEM_MAX_AIV_PER_NPU`), which
/// `aclshmemx_sdma_notify_record` in block `i` sets. Filled at init and at the first kernel launch
/// when an ACL runtime with notifies is in the process.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mut g_state_host: super::types::HostState = super::types::HostState {
    default_stream: std::ptr::null_mut(),
    default_event_id: 0,
    default_block_num: 0,
    notify_arr: [std::ptr::null_mut(); aclshmem_abi::ACLSHMEM_MAX_AIV_PER_NPU],
};

/// `aclshmem_device_host_state_t g_state`: the original's host copy of the device-state record,
/// which its own host test programs read (`extern aclshmem_device_host_state_t g_state;`, in our
/// `shmemi_host_common.h` too; `g_state.heap_base` is this PE's heap): a copy of what
/// [`aclshmemx_dev_state`] returns for the current instance, made when an instance is initialised
/// or made current and when teams are split or destroyed; all zero (`is_aclshmem_initialized`
/// false) before init and after the last finalize.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
// SAFETY: every field is an integer, a bool, a pointer or an array of them: all-zero is valid.
pub static mut g_state: super::types::DeviceHostState = unsafe { std::mem::zeroed() };

fn global_is_ours<T>(p: *const T, name: &str) -> bool {
    kernel::exported_global_is_ours(p.cast(), std::mem::size_of::<T>(), name)
}

/// Refreshes [`g_state`] from the current instance (zero without one).
pub(crate) fn publish_state() {
    let dst = &raw mut g_state;
    // the reference resolves once, at load: asked every time, dladdr took 16 % of a program that
    // splits teams (each split publishes)
    static OURS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*OURS.get_or_init(|| global_is_ours(dst.cast_const(), "g_state")) {
        return;
    }
    let src = kernel::device_state().ok();
    // SAFETY: `dst` is the library's `g_state` (or the program's copy of it, checked above); the
    // record `src` points at lives as long as its instance; programs only read `g_state`.
    unsafe {
        match src {
            Some(p) => std::ptr::copy_nonoverlapping(p.cast_const(), dst, 1),
            None => std::ptr::write_bytes(dst, 0, 1),
        }
    }
}

/// The notify of each AIV core (`ACLSHMEM_MAX_AIV_PER_NPU`, NULL without an ACL runtime that has
/// notifies), made once per process by [`fill_host_state`]; what `g_state_host.notify_arr` shows.
static NOTIFIES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// Makes the notifies once per process (they live as long as the process) and shows them, with the
/// library's stream, in [`g_state_host`].
pub(crate) fn fill_host_state() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let stream = aclshmem_core::stream::internal_stream_handle();
        let notifies = kernel::create_notifies(aclshmem_abi::ACLSHMEM_MAX_AIV_PER_NPU);
        let _ = NOTIFIES.set(notifies.iter().map(|&n| n as usize).collect());
        if !global_is_ours(
            (&raw const g_state_host).cast::<super::types::HostState>(),
            "g_state_host",
        ) {
            return;
        }
        // SAFETY: written once, here, before any kernel can record a notify; programs only read it.
        unsafe {
            let s = &raw mut g_state_host;
            (*s).default_stream = stream;
            (*s).default_block_num = aclshmem_abi::ACLSHMEM_MAX_AIV_PER_NPU as u32;
            for (slot, n) in (*s).notify_arr.iter_mut().zip(notifies) {
                *slot = n;
            }
        }
    });
}

/// Device queue-pair calls (`aclshmemx_sdma_qp_*`, `aclshmemx_roce_qp_*`, `aclshmemx_udma_qp_*`):
/// 0 when `qp_idx` names a configured queue pair (`aclshmemx_set_qp_num`, 1 unless set), else
/// ACLSHMEM_INVALID_VALUE, logged (the call then does nothing).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_qp_check(qp_idx: u32) -> c_int {
    guard("a queue-pair call (aclshmemx_*_qp_*)", || {
        aclshmem_core::runtime::qp::check_qp(qp_idx).map(|()| 0)
    })
}

/// Device `aclshmemx_sdma_qp_notify_record`: sets `g_state_host.notify_arr[qp_idx]` (the queue
/// pair's notify) after the earlier copies (which are complete). `qp_idx` must be a configured
/// queue pair; from `ACLSHMEM_MAX_AIV_PER_NPU` on there is no notify: nothing happens.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_qp_notify_record(qp_idx: u32) {
    guard("aclshmemx_sdma_qp_notify_record", || {
        in_block("aclshmemx_sdma_qp_notify_record")?;
        aclshmem_core::runtime::qp::check_qp(qp_idx)?;
        record_notify(qp_idx as usize)
    })
}

/// Sets notify `idx` of `g_state_host.notify_arr` (none from ACLSHMEM_MAX_AIV_PER_NPU on).
fn record_notify(idx: usize) -> Result<()> {
    if idx >= aclshmem_abi::ACLSHMEM_MAX_AIV_PER_NPU {
        return Ok(());
    }
    fill_host_state();
    let n = NOTIFIES.get().and_then(|v| v.get(idx)).copied().unwrap_or(0) as *mut c_void;
    if n.is_null() {
        return Err(Error::NotSupported(
            "no notify for this core (the ACL runtime in the process has no notifies)".into(),
        ));
    }
    kernel::notify_set(n)
}

/// Device `aclshmemx_sdma_notify_record`: sets `g_state_host.notify_arr[GetBlockIdx()]` (the
/// calling core's notify), after the core's earlier copies (which are complete). Cores from
/// `ACLSHMEM_MAX_AIV_PER_NPU` (48) on have no notify: nothing happens, as upstream. Outside a kernel,
/// or without notifies (no CPU ACL runtime): logged, nothing happens.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_dev_notify_record() {
    guard("aclshmemx_sdma_notify_record", || {
        let b = in_block("aclshmemx_sdma_notify_record")?;
        record_notify(b.idx as usize)
    })
}

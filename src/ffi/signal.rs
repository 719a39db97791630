//! C entry points of `host/data_plane/shmem_host_so.h` (spec 8.4) and `aclshmem_signal_wait_until`
//! (spec 8.5.1). The typed and sized put-with-signal families are generated into signal_typed.rs.

use std::ffi::{c_int, c_void};

use super::guard;
use aclshmem_core::p2p::{self, Cmp};

/// Copies `elem_size` **bytes** from local `src` to symmetric `dst` on PE `pe`, then updates the
/// 32-bit signal word at symmetric `sig_addr` on PE `pe` with `signal` (`ACLSHMEM_SIGNAL_SET`
/// stores, `ACLSHMEM_SIGNAL_ADD` adds atomically). The data is visible at the target before the
/// signal is (release ordering). Blocking. A bad `sig_op`, address or PE: logged, nothing written.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_putmem_signal(
    dst: *mut c_void,
    src: *mut c_void,
    elem_size: usize,
    sig_addr: *mut c_void,
    signal: i32,
    sig_op: c_int,
    pe: c_int,
) {
    guard("aclshmemx_putmem_signal", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe {
            p2p::put_signal(
                dst.cast(),
                src.cast_const().cast(),
                elem_size,
                sig_addr.cast(),
                signal,
                sig_op,
                pe,
            )
        }
    })
}

/// Non-blocking form of aclshmemx_putmem_signal (complete at the latest at quiet or a barrier; to a
/// PE of this node, reached through shared memory, this implementation completes it before
/// returning, to a PE on another node it may still be in flight).
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_putmem_signal_nbi(
    dst: *mut c_void,
    src: *mut c_void,
    elem_size: usize,
    sig_addr: *mut c_void,
    signal: i32,
    sig_op: c_int,
    pe: c_int,
) {
    guard("aclshmemx_putmem_signal_nbi", || {
        // SAFETY: the buffers satisfy this export's `# Safety` contract.
        unsafe {
            p2p::put_signal_nbi(
                dst.cast(),
                src.cast_const().cast(),
                elem_size,
                sig_addr.cast(),
                signal,
                sig_op,
                pe,
            )
        }
    })
}

/// Waits until the local 32-bit signal word `*sig_addr` satisfies `*sig_addr <cmp> cmp_val`
/// (acquire: everything the signalling PE wrote before the signal is visible afterwards). `cmp`
/// outside 0..5: logged, returns at once without waiting. Spins briefly, then yields, then sleeps
/// with bounded back-off. `sig_addr` must be symmetric or in local device memory (`aclrtMalloc`,
/// which a put-with-signal to this PE may name); another address is logged and not waited on.
///
/// # Safety
/// `sig_addr` must be NULL or point to a live 32-bit word of this PE.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_signal_wait_until(sig_addr: *mut i32, cmp: c_int, cmp_val: i32) {
    guard("aclshmem_signal_wait_until", || {
        aclshmem_core::stream::sync_internal();
        // SAFETY: forwarded from this function's contract.
        unsafe { p2p::signal_wait_until(sig_addr, "sig_addr", Cmp::from_c(cmp)?, cmp_val) }
    })
}

/// `aclshmem_double_put_signal` under the misspelled name the original header's alias
/// `shmem_put_double_mem_signal` expands to (spec 14-A2: the original exports no such symbol, so
/// a program using that alias failed to link; this library exports it, an extension).
///
/// # Safety
/// As `aclshmem_double_put_signal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_doubl_put_signal(
    dst: *mut f64,
    src: *mut f64,
    elem_size: usize,
    sig_addr: *mut u8,
    signal: i32,
    sig_op: c_int,
    pe: c_int,
) {
    // SAFETY: the same contract as the function it forwards to.
    unsafe {
        super::signal_typed::aclshmem_double_put_signal(dst, src, elem_size, sig_addr, signal, sig_op, pe)
    }
}

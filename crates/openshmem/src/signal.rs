//! Signaling operations (OpenSHMEM 1.5 chapter 9.8): put-with-signal over 64-bit signal words.
//!
//! A PE whose wait observes the signal sees the data. On this node the data is copied, then the
//! signal word is updated by one sequentially consistent atomic (set or add), both forms complete
//! on return; to a PE on another node the data and the signal go as one message, the blocking form
//! returning once the source is reusable and the `_nbi` form at once (both delivered at the latest
//! at `quiet`, as the specification says). Nothing is written when the signal address or `sig_op`
//! is bad.

use std::ffi::c_int;

use crate::ctx::{self, shmem_ctx_t};
use crate::guard;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::p2p::{self, Completion, SignalOp};
use aclshmem_core::rma;
use aclshmem_core::runtime;

/// `SHMEM_SIGNAL_SET`, `SHMEM_SIGNAL_ADD` (Sandia OpenSHMEM's values).
pub const SIGNAL_SET: c_int = 0;
pub const SIGNAL_ADD: c_int = 1;

/// Put of `n` elements of `T`, then the signal update; `nbi`: the `_nbi` form.
///
/// # Safety
/// `src` must be readable for `n` elements (and stay unchanged until `quiet` when `nbi`).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn put_signal<T>(
    c: shmem_ctx_t,
    dest: *mut T,
    src: *const T,
    n: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    nbi: bool,
) -> Result<()> {
    let pe = ctx::pe(c, pe)?;
    if sig_op != SIGNAL_SET && sig_op != SIGNAL_ADD {
        return Err(Error::InvalidParam(format!(
            "sig_op {sig_op} is neither SHMEM_SIGNAL_SET ({SIGNAL_SET}) nor SHMEM_SIGNAL_ADD ({SIGNAL_ADD})"
        )));
    }
    p2p::check_word(sig_addr, "sig_addr")?;
    let inst = runtime::current()?;
    if inst.locate(sig_addr as usize, 8).is_none() {
        return Err(Error::InvalidParam(format!(
            "sig_addr {sig_addr:p} is not symmetric"
        )));
    }

    let len = rma::bytes(n, std::mem::size_of::<T>())?;
    let op = if sig_op == SIGNAL_SET {
        SignalOp::Set
    } else {
        SignalOp::Add
    };
    let done = if nbi { Completion::Quiet } else { Completion::Local };
    // SAFETY: forwarded.
    unsafe { p2p::put_signal64(dest.cast(), src.cast(), len, sig_addr, signal, op, pe, done) }
}

/// The local signal word at `sig_addr`, read atomically after driving the transports once (a
/// loop of fetches is a wait); 0 after a (logged) bad argument.
///
/// # Safety
/// `sig_addr` must be NULL or a live symmetric `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    guard("shmem_signal_fetch", 0, || {
        // SAFETY: forwarded (read only).
        unsafe { p2p::fetch_polled(sig_addr.cast_mut(), "sig_addr") }
    })
}

/// Waits until the local signal word satisfies `*sig_addr <cmp> cmp_value` and returns its value.
///
/// # Safety
/// `sig_addr` must be NULL or a live symmetric `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_signal_wait_until(sig_addr: *mut u64, cmp: c_int, cmp_value: u64) -> u64 {
    guard("shmem_signal_wait_until", 0, || {
        // SAFETY: forwarded.
        unsafe { p2p::signal_wait_until(sig_addr, "sig_addr", crate::sync::cmp(cmp)?, cmp_value)? };
        // SAFETY: checked by the wait.
        Ok(unsafe { <u64 as aclshmem_core::Word>::load(sig_addr) })
    })
}

//! The C ABI. The only place with `#[unsafe(no_mangle)]`; one file per area of the original headers.
//!
//! Every export runs through [`guard`]: it installs logging, catches a panic, logs an error with the
//! PE and the call's name, and turns it into the return type's failure value (the error code for
//! `int`, NULL for pointers, nothing for `void`). Raw pointers become references only through the
//! helpers below, so NULL becomes `ACLSHMEM_INVALID_PARAM` in one place.
//!
//! `unsafe` lives here because C hands us raw pointers; each export documents what it requires.

#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod atomic_typed;
pub mod coll;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod coll_typed;
pub mod exception;
pub mod init;
pub mod kernel;
pub mod log;
pub mod mem;
pub mod rma;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod rma_typed;
pub mod signal;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod signal_typed;
pub mod stream;
pub mod sync;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod sync_typed;
pub mod team;
pub use aclshmem_abi as types;

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

use aclshmem_core::error::{Error, Result};
use aclshmem_core::logging;
use aclshmem_core::runtime::report;

/// What a C function returns when its core call fails.
pub trait FfiReturn {
    fn on_error(e: &Error) -> Self;
}

impl FfiReturn for c_int {
    fn on_error(e: &Error) -> Self {
        e.code()
    }
}

impl<T> FfiReturn for *mut T {
    fn on_error(_: &Error) -> Self {
        std::ptr::null_mut()
    }
}

impl FfiReturn for () {
    fn on_error(_: &Error) -> Self {}
}

/// Runs one export's body: the single place that decides what an error or a panic becomes.
/// (Public for the panic boundary's test library, `crates/panic-probe`.)
#[inline]
pub fn guard<R: FfiReturn>(call: &'static str, body: impl FnOnce() -> Result<R>) -> R {
    guard_with(call, R::on_error, body)
}

/// [`guard`] for calls that return a value rather than a status (`_g`, fetching atomics): a failure
/// is logged and returns `fail`.
#[inline]
pub(crate) fn guard_or<R>(call: &'static str, fail: R, body: impl FnOnce() -> Result<R>) -> R {
    guard_with(call, |_| fail, body)
}

#[inline]
fn guard_with<R>(call: &'static str, fail: impl FnOnce(&Error) -> R, body: impl FnOnce() -> Result<R>) -> R {
    logging::ensure();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        // out of line: the hot calls then need no stack frame of their own for the error paths
        Ok(Err(e)) => fail(&failed(call, e)),
        Err(panic) => fail(&panicked(call, panic)),
    }
}

/// Reports a failed call; returns the error for the export's return value.
#[cold]
#[inline(never)]
fn failed(call: &'static str, e: Error) -> Error {
    report(call, &e);
    // a kernel block whose launch broke while it waited ends here (nothing of this call is left
    // to drop), when its launcher registered how
    aclshmem_core::kernel::abandon_if_broken(call);
    e
}

/// Turns a panic caught at the C boundary into a reported internal error.
#[cold]
#[inline(never)]
fn panicked(call: &'static str, panic: Box<dyn std::any::Any + Send>) -> Error {
    let e = Error::from_panic(panic);
    report(call, &e);
    e
}

/// `ptr` as an exclusive reference, or `ACLSHMEM_INVALID_PARAM` naming the argument.
///
/// # Safety
/// A non-NULL `ptr` must point to a valid `T`, not aliased during the call.
pub(crate) unsafe fn arg_mut<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T> {
    // SAFETY: forwarded from the caller.
    unsafe { ptr.as_mut() }.ok_or_else(|| Error::InvalidParam(format!("{name} is NULL")))
}

//! The OpenSHMEM 1.5 surface of libaclshmem: the standard `shmem_*` C symbols, declared in
//! `include/openshmem/shmem.h`, over the same core (`aclshmem-core`) as the aclshmem C ABI.
//!
//! The root crate links this one into `libaclshmem.so`, so a process that uses both APIs has one
//! runtime, one symmetric heap and one set of PEs (`shmem_init` after `aclshmemx_init_attr`, or the
//! other way round, joins the instance that is already there).
//!
//! Layout: one file per chapter of the specification (setup, mem, rma, amo, signal, sync, team,
//! ctx, coll, lock); the typed families (one export per type of the specification's tables) are
//! generated into `typed.rs` by `cargo xtask codegen` from `xtask/src/tables.rs`, which also writes
//! their C prototypes and the C11 `_Generic` macros into `include/openshmem/shmem.h`.
//!
//! Errors: OpenSHMEM has no error codes. Every export runs through [`guard`]: bad input (NULL,
//! an address outside the symmetric memory, a PE out of range, a call before `shmem_init`) prints a
//! message naming the call and the argument, then ends the job with status 1 as
//! `shmem_global_exit(1)` does, unless `ACLSHMEM_OSHMEM_ON_ERROR=continue`, where the call does
//! nothing and returns 0 / NULL. A panic never crosses the C boundary.
//!
//! `unsafe`: C hands us raw pointers; each export documents what it requires (`# Safety`).

#![allow(non_camel_case_types)]

pub mod amo;
pub mod coll;
pub mod ctx;
pub mod lock;
pub mod longdouble;
pub mod mem;
pub mod rma;
pub mod setup;
pub mod signal;
mod statics;
pub mod sync;
pub mod team;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod typed;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU8, Ordering};

use aclshmem_core::config;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::logging;
use aclshmem_core::runtime;

pub use ctx::shmem_ctx_t;
pub use team::shmem_team_t;

pub use longdouble::LongDouble;

/// C `float _Complex` / `double _Complex`: two parts, laid out as C lays them out.
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq)]
pub struct Complex<F> {
    pub re: F,
    pub im: F,
}

macro_rules! complex_element {
    ($($f:ty),*) => {$(
        impl aclshmem_core::collectives::Element for Complex<$f> {
            const NUMBER: aclshmem_core::collectives::Number = aclshmem_core::collectives::Number::Complex;
            #[inline]
            fn apply(op: aclshmem_core::collectives::Op, a: Self, b: Self) -> Self {
                use aclshmem_core::collectives::Op;
                match op {
                    Op::Sum => Complex { re: a.re + b.re, im: a.im + b.im },
                    Op::Prod => Complex { re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re },
                    // OpenSHMEM reduces complex values with sum and prod only; nothing else is generated
                    _ => a,
                }
            }
        }
    )*};
}
complex_element!(f32, f64);

/// 0: not read yet, 1: abort, 2: continue.
static ON_ERROR: AtomicU8 = AtomicU8::new(0);

fn continue_on_error() -> bool {
    match ON_ERROR.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            // (refused at shmem_init; a call before it ends the job, as the default says)
            let cont = match config::ACLSHMEM_OSHMEM_ON_ERROR.value() {
                Ok(v) => v == "continue",
                Err(e) => {
                    aclshmem_core::logging::write_stderr(&format!("OpenSHMEM: {e}; taken as abort\n"));
                    false
                }
            };
            ON_ERROR.store(if cont { 2 } else { 1 }, Ordering::Relaxed);
            cont
        }
    }
}

/// What an export does with a failed call: logs it (PE and call), prints it on stderr, and ends
/// the job with status 1 unless `ACLSHMEM_OSHMEM_ON_ERROR=continue`.
/// Takes the error by value and is never inlined, so the hot exports carry no drop or formatting
/// code of their own (as `aclshmem::ffi::guard_with`).
#[cold]
#[inline(never)]
fn failed(call: &str, e: Error) {
    runtime::report(call, &e);
    let pe = runtime::current_pe().map_or(String::new(), |p| format!("[PE {p}] "));
    if continue_on_error() {
        aclshmem_core::logging::write_stderr(&format!(
            "{pe}OpenSHMEM error in {call}: {e} (continuing: ACLSHMEM_OSHMEM_ON_ERROR=continue)\n"
        ));
        return;
    }
    aclshmem_core::logging::write_stderr(&format!(
        "{pe}OpenSHMEM error in {call}: {e}; ending the job with status 1 (set ACLSHMEM_OSHMEM_ON_ERROR=continue to go on)\n"
    ));
    runtime::global_exit(1)
}

/// Runs one export's body: the single place that decides what an error or a panic becomes
/// (see the crate documentation); `fail` is what the call returns after an error when the program
/// asked to continue.
#[inline]
pub(crate) fn guard<R>(call: &'static str, fail: R, body: impl FnOnce() -> Result<R>) -> R {
    logging::ensure();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            failed(call, e);
            fail
        }
        Err(panic) => {
            failed(call, Error::from_panic(panic));
            fail
        }
    }
}

/// [`guard`] for calls whose failure the specification defines as a return value (allocation:
/// NULL; queries): logged only, never fatal; but a call before `shmem_init` (or after
/// `shmem_finalize`) is the program's error, handled as [`guard`] handles one.
#[inline]
pub(crate) fn guard_soft<R>(call: &'static str, fail: R, body: impl FnOnce() -> Result<R>) -> R {
    logging::ensure();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        // (NotSupported: what the library cannot do, such as two threads creating teams at
        // once, which leaves the other PEs of the call waiting: fatal as bad input is)
        Ok(Err(e @ (Error::NotInited | Error::NotSupported(_)))) => {
            failed(call, e);
            fail
        }
        Ok(Err(e)) => {
            reported(call, e);
            fail
        }
        Err(panic) => {
            reported(call, Error::from_panic(panic));
            fail
        }
    }
}

/// Logs the error of a [`guard_soft`] call (out of line, as [`failed`]).
#[cold]
#[inline(never)]
fn reported(call: &str, e: Error) {
    runtime::report(call, &e);
}

/// The output pointers of a call that has a return code (`shmem_ctx_create`, the splits, ...):
/// NULL is bad input, which ends the job as in the calls without one ([`failed`], unless
/// `ACLSHMEM_OSHMEM_ON_ERROR=continue`), rather than a quiet nonzero return the program may not
/// look at. False when one is NULL (the call then returns its failure value).
pub(crate) fn outputs_ok(call: &'static str, outs: &[(*const std::ffi::c_void, &str)]) -> bool {
    for &(p, what) in outs {
        if p.is_null() {
            logging::ensure();
            failed(call, Error::InvalidParam(format!("{what} is NULL")));
            return false;
        }
    }
    true
}

/// A NULL and alignment check naming the argument (`aclshmem_core::args::check`).
#[inline]
pub(crate) fn non_null<T>(p: *const T, what: &str) -> Result<()> {
    aclshmem_core::args::check(p, what)
}

//! Atomic memory operations (OpenSHMEM 1.5 chapter 9.7): the helpers behind the generated
//! standard, extended and bitwise AMO families of `typed.rs` (and the deprecated 1.3 names). Each
//! is one sequentially consistent atomic on PE `pe`'s copy of the symmetric `dest`, atomic with
//! respect to every other atomic on that word from any PE.

use std::ffi::c_int;

use crate::ctx::{self, shmem_ctx_t};
use aclshmem_core::atomic;
use aclshmem_core::error::Result;
use aclshmem_core::{IntWord, Word};

/// The integer read-modify-write operations of the families.
#[derive(Clone, Copy)]
#[allow(clippy::enum_variant_names)]
pub(crate) enum Fetching {
    FetchInc,
    FetchAdd,
    FetchAnd,
    FetchOr,
    FetchXor,
}

#[inline(always)]
pub(crate) fn fetch<T: Word>(c: shmem_ctx_t, source: *const T, pe: c_int) -> Result<T> {
    atomic::fetch(source, ctx::pe(c, pe)?)
}

#[inline(always)]
pub(crate) fn set<T: Word>(c: shmem_ctx_t, dest: *mut T, value: T, pe: c_int) -> Result<()> {
    atomic::set(dest, value, ctx::pe(c, pe)?)
}

#[inline(always)]
pub(crate) fn swap<T: Word>(c: shmem_ctx_t, dest: *mut T, value: T, pe: c_int) -> Result<T> {
    atomic::swap(dest, value, ctx::pe(c, pe)?)
}

#[inline(always)]
pub(crate) fn compare_swap<T: Word>(c: shmem_ctx_t, dest: *mut T, cond: T, value: T, pe: c_int) -> Result<T> {
    atomic::compare_swap(dest, cond, value, ctx::pe(c, pe)?)
}

/// The integer read-modify-write operations.
#[inline(always)]
pub(crate) fn rmw<T: IntWord>(c: shmem_ctx_t, op: Fetching, dest: *mut T, value: T, pe: c_int) -> Result<T> {
    let pe = ctx::pe(c, pe)?;
    match op {
        Fetching::FetchInc => atomic::fetch_inc(dest, pe),
        Fetching::FetchAdd => atomic::fetch_add(dest, value, pe),
        Fetching::FetchAnd => atomic::fetch_and(dest, value, pe),
        Fetching::FetchOr => atomic::fetch_or(dest, value, pe),
        Fetching::FetchXor => atomic::fetch_xor(dest, value, pe),
    }
}

/// Stores an `_nbi` result in the caller's `fetch` (the operation completed already).
///
/// # Safety
/// `fetch` must be NULL or writable.
#[inline(always)]
pub(crate) unsafe fn store<T>(fetch: *mut T, r: Result<T>) -> Result<()> {
    crate::non_null(fetch, "fetch")?;
    let v = r?;
    // SAFETY: non-NULL and writable per the caller's contract.
    unsafe { *fetch = v };
    Ok(())
}

//! Point-to-point synchronization (OpenSHMEM 1.5 chapter 9.10): the helpers behind the generated
//! wait/test families of `typed.rs`, the whole-job barriers, and the deprecated cache routines.
//!
//! Each element is read with acquire ordering: what the PE that changed it wrote before that change
//! is visible afterwards. Waits spin briefly, then yield, then sleep with bounded back-off.
//! `SHMEM_CMP_EQ` .. `SHMEM_CMP_LE` have Sandia OpenSHMEM's values (1..6).

use std::ffi::c_int;

use crate::guard;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::p2p::{self, Against, Cmp, WaitSet};
use aclshmem_core::{Word, args};

/// The comparison of an OpenSHMEM `SHMEM_CMP_*` value.
pub(crate) fn cmp(c: c_int) -> Result<Cmp> {
    Ok(match c {
        1 => Cmp::Eq,
        2 => Cmp::Ne,
        3 => Cmp::Gt,
        4 => Cmp::Ge,
        5 => Cmp::Lt,
        6 => Cmp::Le,
        _ => {
            return Err(Error::InvalidParam(format!(
                "cmp {c} is not a SHMEM_CMP_* value (1..6)"
            )));
        }
    })
}

/// What a set-valued call compares with, as C passes it.
pub(crate) enum Values<T> {
    One(T),
    Each(*const T),
}

/// The checked wait set of the C arguments.
///
/// # Safety
/// Non-NULL pointers must be valid for `n` elements (`ivars`, `status`, `Values::Each`).
unsafe fn set<'a, T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    c: c_int,
    values: Values<T>,
) -> Result<WaitSet<'a, T>> {
    let c = cmp(c)?;
    if ivars.is_null() && n > 0 {
        return Err(Error::InvalidParam("ivars is NULL".into()));
    }
    let status = if status.is_null() || n == 0 {
        None
    } else {
        // SAFETY: the caller guarantees n readable ints.
        Some(unsafe { args::slice(status, n, "status") }?)
    };
    let against = match values {
        Values::One(v) => Against::One(v),
        // SAFETY: the caller guarantees n readable values.
        Values::Each(p) => Against::Each(unsafe { args::slice(p, n, "cmp_values") }?),
    };
    // SAFETY: ivars is valid for n elements per the caller's contract.
    unsafe { WaitSet::new(ivars, n, status, c, against) }
}

/// The `indices` output of the some-forms.
///
/// # Safety
/// A non-NULL `indices` must have room for `n` indices.
unsafe fn indices<'a>(indices: *mut usize, n: usize) -> Result<&'a mut [usize]> {
    // SAFETY: the caller guarantees room for n indices.
    unsafe { args::slice_mut(indices, n, "indices") }
}

/// # Safety
/// A non-NULL `ivar` must point to a live `T`.
pub(crate) unsafe fn wait_until<T: Word>(ivar: *mut T, c: c_int, value: T) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { p2p::wait_until(ivar, cmp(c)?, value) }
}

/// # Safety
/// A non-NULL `ivar` must point to a live `T`.
pub(crate) unsafe fn test<T: Word>(ivar: *mut T, c: c_int, value: T) -> Result<c_int> {
    // SAFETY: forwarded.
    unsafe { p2p::test(ivar, cmp(c)?, value) }.map(c_int::from)
}

/// # Safety
/// As for `set`.
pub(crate) unsafe fn wait_until_all<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { set(ivars, n, status, c, v) }?.wait_all();
    Ok(())
}

/// # Safety
/// As for `set`.
pub(crate) unsafe fn wait_until_any<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<usize> {
    // SAFETY: forwarded.
    Ok(unsafe { set(ivars, n, status, c, v) }?.wait_any())
}

/// # Safety
/// As for `set` and `indices`.
pub(crate) unsafe fn wait_until_some<T: Word>(
    ivars: *mut T,
    n: usize,
    idx: *mut usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<usize> {
    // SAFETY: forwarded.
    let (s, idx) = unsafe { (set(ivars, n, status, c, v)?, indices(idx, n)?) };
    Ok(s.wait_some(idx))
}

/// # Safety
/// As for `set`.
pub(crate) unsafe fn test_all<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<c_int> {
    // SAFETY: forwarded.
    Ok(unsafe { set(ivars, n, status, c, v) }?.test_all() as c_int)
}

/// # Safety
/// As for `set`.
pub(crate) unsafe fn test_any<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<usize> {
    // SAFETY: forwarded.
    Ok(unsafe { set(ivars, n, status, c, v) }?.test_any_round_robin())
}

/// # Safety
/// As for `set` and `indices`.
pub(crate) unsafe fn test_some<T: Word>(
    ivars: *mut T,
    n: usize,
    idx: *mut usize,
    status: *const c_int,
    c: c_int,
    v: Values<T>,
) -> Result<usize> {
    // SAFETY: forwarded.
    let (s, idx) = unsafe { (set(ivars, n, status, c, v)?, indices(idx, n)?) };
    Ok(s.test_some(idx))
}

/// Barrier over all PEs: every PE's earlier puts, AMOs and stores are complete and visible to every
/// PE when it returns.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_barrier_all() {
    guard("shmem_barrier_all", (), aclshmem_core::host::barrier_all)
}

/// Synchronises all PEs (here with the completion guarantee of [`shmem_barrier_all`], which the
/// specification allows).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_sync_all() {
    guard("shmem_sync_all", (), aclshmem_core::host::barrier_all)
}

/// Deprecated cache routines: no-ops (the CPU keeps caches coherent).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_clear_cache_inv() {}

/// Deprecated: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_set_cache_inv() {}

/// Deprecated: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_clear_cache_line_inv(dest: *mut std::ffi::c_void) {
    let _ = dest;
}

/// Deprecated: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_set_cache_line_inv(dest: *mut std::ffi::c_void) {
    let _ = dest;
}

/// Deprecated: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_udcflush() {}

/// Deprecated: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_udcflush_line(dest: *mut std::ffi::c_void) {
    let _ = dest;
}

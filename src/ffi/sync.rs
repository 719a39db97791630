//! C entry points of `host/data_plane/shmem_host_cc.h` (spec 8.6) and the helpers behind the typed
//! wait/test families of `host/data_plane/shmem_host_p2p_sync.h` (spec 8.5.2).

use std::ffi::c_int;

use super::guard;
use super::types::aclshmem_team_t;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::p2p::{self, Against, Cmp, WaitSet};
use aclshmem_core::{Word, args};

/// Barrier over all PEs. Collective. Returns on every PE only after all arrived; every store and
/// put a PE issued before it is complete and visible to every PE afterwards. Before init: logged,
/// no-op. Called from a kernel block (CPU device mode): the device barrier, whose participants are
/// every block of the launch on every PE.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_barrier_all() {
    guard("aclshmem_barrier_all", || barrier(None))
}

/// Barrier over the members of `team` (collective over them); same guarantees as
/// aclshmem_barrier_all. ACLSHMEM_TEAM_INVALID (what non-members get from a split): no-op. Another
/// invalid handle: logged, no-op. Called from a kernel block (CPU device mode): the device barrier,
/// whose participants are every block of the launch on every member PE.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_barrier(team: aclshmem_team_t) {
    guard("aclshmem_barrier", || barrier(Some(team)))
}

/// Same as aclshmem_barrier (the original implements sync exactly as barrier).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_sync(team: aclshmem_team_t) {
    guard("aclshmem_sync", || barrier(Some(team)))
}

/// Same as aclshmem_barrier_all (the original implements sync exactly as barrier).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_sync_all() {
    guard("aclshmem_sync_all", || barrier(None))
}

/// The host barrier, or inside a kernel block the device barrier (all blocks of the launch on every
/// member PE, spec device-api 6.4).
fn barrier(team: Option<aclshmem_team_t>) -> Result<()> {
    match aclshmem_core::block::current() {
        Some(b) => aclshmem_core::kernel::device_barrier(b, team, true),
        None => match team {
            None => aclshmem_core::host::barrier_all(),
            Some(t) => aclshmem_core::host::team_barrier(t),
        },
    }
}

// ---- helpers of the generated wait/test families (src/ffi/sync_typed.rs) ----

/// What a set-valued call compares with, as C passes it.
pub(crate) enum Values<T> {
    One(T),
    Each(*const T),
}

/// Builds the wait set from C arguments, runs `f` on it and stores its result in `*res_out`.
/// When the arguments are bad (NULL pointers, `cmp` outside 0..5, before init) nothing is waited
/// for, `none` is stored in `*res_out` when it is non-NULL (spec 8.5.2), and the error is returned.
///
/// # Safety
/// Non-NULL pointers must be valid for `nelems` elements (`ivars`, `status`, `Values::Each`,
/// `indices`) or one element (`res_out`).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn with_set<T: Word, R: Copy>(
    ivars: *mut T,
    nelems: usize,
    status: *const c_int,
    cmp: c_int,
    values: Values<T>,
    indices: Option<*mut usize>,
    res_out: Option<(*mut R, R)>,
    f: impl FnOnce(&WaitSet<T>, &mut [usize]) -> R,
) -> Result<()> {
    aclshmem_core::stream::sync_internal();
    let prepared = (|| {
        if let Some((p, _)) = res_out {
            args::check(p, "res_out")?;
        }
        let cmp = Cmp::from_c(cmp)?;
        let status = if status.is_null() || nelems == 0 {
            None
        } else {
            // SAFETY: caller guarantees nelems readable ints.
            Some(unsafe { args::slice(status, nelems, "status") }?)
        };
        let against = match values {
            Values::One(v) => Against::One(v),
            // SAFETY: caller guarantees nelems readable values.
            Values::Each(p) => Against::Each(unsafe { args::slice(p, nelems, "cmp_values") }?),
        };
        let idx: &mut [usize] = match indices {
            None => &mut [],
            // SAFETY: caller guarantees room for nelems indices.
            Some(p) => unsafe { args::slice_mut(p, nelems, "indices") }?,
        };
        if ivars.is_null() && nelems > 0 {
            return Err(Error::InvalidParam("ivars is NULL".into()));
        }
        // SAFETY: ivars is valid for nelems elements per the caller's contract.
        let set = unsafe { WaitSet::new(ivars, nelems, status, cmp, against) }?;
        Ok((set, idx))
    })();
    match prepared {
        Ok((set, idx)) => {
            let r = f(&set, idx);
            if let Some((p, _)) = res_out {
                // SAFETY: p is non-NULL (checked) and valid per the caller's contract.
                unsafe { *p = r };
            }
            Ok(())
        }
        Err(e) => {
            if let Some((p, none)) = res_out {
                // SAFETY: as above (a NULL or misaligned res_out is left alone).
                let _ = unsafe { args::store(p, none, "res_out") };
            }
            Err(e)
        }
    }
}

/// The single-object test: `*res_out` = 1 if `*ivar cmp value` holds, else 0; 0 on bad arguments.
///
/// # Safety
/// Non-NULL `ivar` and `res_out` must be valid.
pub(crate) unsafe fn test_one<T: Word>(
    ivar: *mut T,
    cmp: c_int,
    value: T,
    res_out: *mut c_int,
) -> Result<()> {
    aclshmem_core::stream::sync_internal();
    args::check(res_out, "res_out")?;
    // SAFETY: forwarded from this function's contract.
    let r = Cmp::from_c(cmp).and_then(|c| unsafe { p2p::test(ivar, c, value) });
    // SAFETY: res_out is checked and valid per the caller's contract.
    unsafe { args::store(res_out, matches!(r, Ok(true)) as c_int, "res_out") }?;
    r.map(|_| ())
}

/// `wait_until` on one local object.
///
/// # Safety
/// A non-NULL `ivar` must point to a live `T`.
pub(crate) unsafe fn wait_one<T: Word>(ivar: *mut T, cmp: c_int, value: T) -> Result<()> {
    aclshmem_core::stream::sync_internal();
    // SAFETY: forwarded from this function's contract.
    unsafe { p2p::wait_until(ivar, Cmp::from_c(cmp)?, value) }
}

/// `wait_until_all[_vector]`: waits until every included element holds.
///
/// # Safety
/// As for [`with_set`].
pub(crate) unsafe fn all<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    v: Values<T>,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe {
        with_set::<T, usize>(ivars, n, status, cmp, v, None, None, |s, _| {
            s.wait_all();
            0
        })
    }?;
    aclshmem_core::block::check_launch()
}

/// `wait_until_any[_vector]` (`wait`) and `test_any[_vector]`: index of a holding element, or
/// SIZE_MAX (none included, or nothing holds for a test, or bad arguments).
///
/// # Safety
/// As for [`with_set`].
pub(crate) unsafe fn any<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    v: Values<T>,
    res_out: *mut usize,
    wait: bool,
) -> Result<()> {
    let f = |s: &WaitSet<T>, _: &mut [usize]| if wait { s.wait_any() } else { s.test_any() };
    // SAFETY: forwarded.
    unsafe { with_set(ivars, n, status, cmp, v, None, Some((res_out, usize::MAX)), f) }?;
    aclshmem_core::block::check_launch()
}

/// `wait_until_some[_vector]` (`wait`) and `test_some[_vector]`: number of holding elements, their
/// indices in `indices`; 0 for bad arguments or an empty set.
///
/// # Safety
/// As for [`with_set`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn some<T: Word>(
    ivars: *mut T,
    n: usize,
    indices: *mut usize,
    status: *const c_int,
    cmp: c_int,
    v: Values<T>,
    res_out: *mut usize,
    wait: bool,
) -> Result<()> {
    let f = |s: &WaitSet<T>, idx: &mut [usize]| if wait { s.wait_some(idx) } else { s.test_some(idx) };
    // SAFETY: forwarded.
    unsafe { with_set(ivars, n, status, cmp, v, Some(indices), Some((res_out, 0)), f) }?;
    aclshmem_core::block::check_launch()
}

/// `test_all_vector`: 1 when every included element holds (or none is included), else 0.
///
/// # Safety
/// As for [`with_set`].
pub(crate) unsafe fn test_all<T: Word>(
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    v: Values<T>,
    res_out: *mut c_int,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe {
        with_set(ivars, n, status, cmp, v, None, Some((res_out, 0)), |s, _| {
            s.test_all() as c_int
        })
    }
}

//! Collective routines (OpenSHMEM 1.5 chapter 9.9).
//!
//! Team-based forms run the core's team collectives (`aclshmem_core::collectives`). The deprecated
//! active-set forms (`PE_start`, `logPE_stride`, `PE_size`, `pSync`) synchronise through the
//! caller's `pSync` array, so any active set works without creating a team: word 0 of `pSync` on
//! the set's first PE counts arrivals, word 1 on every member is its release flag, word 2 carries a
//! member's element count (collect). Every word is back at `SHMEM_SYNC_VALUE` when the call returns,
//! so the same `pSync` may serve the next call at once. `pWrk` is not needed (reductions use private
//! memory) and is ignored. An active set that is the whole job (`PE_start` 0, `logPE_stride` 0,
//! `PE_size` = all PEs, the common case) runs the world team's barrier and collectives instead (same
//! results, faster; broadcast through the core's variant that leaves the root's `dest` alone, as the
//! deprecated form requires).

use std::ffi::c_int;

use crate::team::{self, shmem_team_t};
use aclshmem_core::collectives::{self, Element, Op};
use aclshmem_core::error::{Error, Result};
use aclshmem_core::p2p::{self, Cmp};
use aclshmem_core::runtime::{self, Instance};
use aclshmem_core::team::Team;
use aclshmem_core::{atomic, rma};

/// `SHMEM_SYNC_VALUE`.
pub const SYNC_VALUE: i64 = -1;
/// Every `SHMEM_*_SYNC_SIZE` (words of `pSync` this implementation uses at most).
pub const SYNC_SIZE: usize = 4;

fn run(team: shmem_team_t, f: impl FnOnce(&Instance, &Team) -> Result<()>) -> Result<c_int> {
    let s = team::slot(team)?;
    let inst = runtime::current()?;
    let t = inst.team(s)?;
    f(&inst, &t).map(|_| 0)
}

pub(crate) fn broadcast(
    team: shmem_team_t,
    dest: usize,
    source: usize,
    bytes: usize,
    root: c_int,
) -> Result<c_int> {
    run(team, |i, t| {
        collectives::broadcast(i, t, dest, source, bytes, root)
    })
}

pub(crate) fn collect(team: shmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::collect(i, t, dest, source, bytes))
}

pub(crate) fn fcollect(team: shmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::fcollect(i, t, dest, source, bytes))
}

pub(crate) fn alltoall(team: shmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::alltoall(i, t, dest, source, bytes))
}

pub(crate) fn reduce<T: Element>(
    team: shmem_team_t,
    dest: usize,
    source: usize,
    n: usize,
    op: Op,
) -> Result<c_int> {
    run(team, |i, t| collectives::reduce::<T>(i, t, dest, source, n, op))
}

/// Strided all-to-all: element k of block j of member i's `source` (stride `sst`) goes to element
/// k of block i of member j's `dest` (stride `dst`); blocks are `n` strided elements.
///
/// # Safety
/// `dest` must be a symmetric buffer writable for the strided span.
pub(crate) unsafe fn alltoalls(
    team: shmem_team_t,
    dest: *mut u8,
    source: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
) -> Result<c_int> {
    run(team, |inst, t| {
        // SAFETY: forwarded.
        unsafe { alltoalls_team(inst, t, dest, source, elem, (dst, sst), n) }
    })
}

/// [`alltoalls`] on a team: the core compares every member's element size, strides and count
/// first (the team's agreement), then the strided gets run, then the call ends on every member.
///
/// # Safety
/// As for [`alltoalls`].
unsafe fn alltoalls_team(
    inst: &Instance,
    t: &Team,
    dest: *mut u8,
    source: *const u8,
    elem: usize,
    strides: (isize, isize),
    n: usize,
) -> Result<()> {
    let m = Members::Team(*t);
    collectives::alltoalls(inst, t, elem, strides, n, || {
        // SAFETY: forwarded.
        unsafe { alltoalls_gets(&m, dest, source, elem, strides.0, strides.1, n) }
    })
}

/// The members of a collective: a team, or an active set of world PEs.
enum Members {
    Team(Team),
    Set {
        start: usize,
        stride: usize,
        size: usize,
        me: usize,
    },
}

impl Members {
    fn size(&self) -> usize {
        match self {
            Members::Team(t) => t.size,
            Members::Set { size, .. } => *size,
        }
    }
    fn me(&self) -> usize {
        match self {
            Members::Team(t) => t.my_index,
            Members::Set { me, .. } => *me,
        }
    }
    fn pe(&self, i: usize) -> i32 {
        (match self {
            Members::Team(t) => t.world_pe(i),
            Members::Set { start, stride, .. } => start + i * stride,
        }) as i32
    }
}

/// The strided gets of an all-to-all among `m` (between the call's synchronisations).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoalls_gets(
    m: &Members,
    dest: *mut u8,
    source: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
) -> Result<()> {
    let me = m.me() as isize;
    for j in 0..m.size() {
        let jj = j as isize;
        let d = dest.wrapping_offset(jj * n as isize * dst * elem as isize);
        let s = source.wrapping_offset(me * n as isize * sst * elem as isize);
        // SAFETY: the destination block lies in the caller's symmetric dest (contract); the source
        // block is checked against the heap by the core.
        unsafe { rma::iget(d, s, elem, dst, sst, n, m.pe(j))? };
    }
    Ok(())
}

// ---- active sets ----

/// The active set of the calling PE, checked. The whole job with a valid `pSync` (what most
/// programs pass) is decided inline; every other set, and every error, in [`active_set_checked`].
#[inline(always)]
fn active_set(
    inst: &Instance,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<Members> {
    if start == 0
        && log_stride == 0
        && size as usize == inst.n_pes()
        && psync.is_aligned()
        && inst.locate(psync as usize, SYNC_SIZE * 8).is_some()
    {
        return Ok(Members::Team(inst.world_team()));
    }
    active_set_checked(inst, start, log_stride, size, psync)
}

#[inline(never)]
fn active_set_checked(
    inst: &Instance,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<Members> {
    crate::non_null(psync, "pSync")?;
    if inst.locate(psync as usize, SYNC_SIZE * 8).is_none() {
        return Err(Error::InvalidParam(format!(
            "pSync {psync:p} is not a symmetric array of SHMEM_*_SYNC_SIZE longs"
        )));
    }
    if start < 0 || !(0..31).contains(&log_stride) || size < 1 {
        return Err(Error::InvalidParam(format!(
            "PE_start {start}, logPE_stride {log_stride}, PE_size {size} do not describe an active set"
        )));
    }
    let stride = 1usize << log_stride;
    let (start, size) = (start as usize, size as usize);
    let last = start + (size - 1) * stride;
    if last >= inst.n_pes() {
        return Err(Error::InvalidParam(format!(
            "active set PE_start {start}, logPE_stride {log_stride}, PE_size {size} reaches PE {last} of {}",
            inst.n_pes()
        )));
    }
    let me = inst.my_pe();
    let d = me
        .checked_sub(start)
        .filter(|d| d % stride == 0 && d / stride < size)
        .ok_or_else(|| {
            Error::InvalidParam(format!(
                "PE {me} is not in the active set PE_start {start}, logPE_stride {log_stride}, PE_size {size}"
            ))
        })?;
    if start == 0 && stride == 1 && size == inst.n_pes() {
        // the whole job: the world team's collectives and barrier (faster than pSync, same results)
        return Ok(Members::Team(inst.world_team()));
    }
    Ok(Members::Set {
        start,
        stride,
        size,
        me: d / stride,
    })
}

/// Barrier of an active set through `pSync` (see the module documentation).
/// (With the whole job, a team: only the program's `shmem_barrier` / `shmem_sync` get here; the
/// collectives take the team's own calls before.)
fn set_barrier(inst: &Instance, m: &Members, psync: *mut i64) -> Result<()> {
    if let Members::Team(t) = m {
        return collectives::program_barrier(inst, t);
    }
    rma::quiet()?;
    let n = m.size();
    if n == 1 {
        return Ok(());
    }
    let root = m.pe(0);
    let flag = psync.wrapping_add(1);
    let old = atomic::fetch_add(psync, 1, root)?;
    if old == SYNC_VALUE + (n as i64 - 1) {
        // last to arrive: reset the counter before anyone can arrive at the next barrier
        atomic::set(psync, SYNC_VALUE, root)?;
        for i in (0..n).filter(|&i| i != m.me()) {
            atomic::set(flag, 1, m.pe(i))?;
        }
    } else {
        // SAFETY: flag is a word of the caller's symmetric pSync (checked in active_set).
        unsafe { p2p::wait_until_named(flag, "pSync", Cmp::Ne, SYNC_VALUE)? };
        atomic::set(flag, SYNC_VALUE, m.pe(m.me()))?;
    }
    Ok(())
}

/// Deprecated active-set barrier: completes this PE's puts and AMOs, then waits for every member
/// of the active set.
///
/// # Safety
/// `pSync` must be a symmetric array of `SHMEM_BARRIER_SYNC_SIZE` longs set to `SHMEM_SYNC_VALUE`.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub unsafe extern "C" fn shmem_barrier(
    PE_start: c_int,
    logPE_stride: c_int,
    PE_size: c_int,
    pSync: *mut i64,
) {
    crate::guard("shmem_barrier", (), || {
        let inst = runtime::current()?;
        let m = active_set(&inst, PE_start, logPE_stride, PE_size, pSync)?;
        set_barrier(&inst, &m, pSync)
    })
}

/// Deprecated active-set synchronisation: as [`shmem_barrier`].
///
/// # Safety
/// As for [`shmem_barrier`].
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub unsafe extern "C" fn shmem_sync(PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut i64) {
    crate::guard("shmem_sync", (), || {
        let inst = runtime::current()?;
        let m = active_set(&inst, PE_start, logPE_stride, PE_size, pSync)?;
        set_barrier(&inst, &m, pSync)
    })
}

/// Active-set broadcast of `bytes` from member `root`'s `source` to every other member's `dest`
/// (the root's `dest` is not written, as the deprecated routines define).
///
/// # Safety
/// `dest` must be writable for `bytes`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn set_broadcast(
    dest: *mut u8,
    source: *const u8,
    bytes: usize,
    root: c_int,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<()> {
    let inst = runtime::current()?;
    let m = active_set(&inst, start, log_stride, size, psync)?;
    if root < 0 || root as usize >= m.size() {
        return Err(Error::InvalidParam(format!(
            "PE_root {root} is not a member index of an active set of {}",
            m.size()
        )));
    }
    if let Members::Team(t) = &m {
        return collectives::broadcast_to_others(&inst, t, dest as usize, source as usize, bytes, root);
    }
    set_barrier(&inst, &m, psync)?;
    if m.me() != root as usize {
        // SAFETY: forwarded.
        unsafe { rma::get(dest, source, bytes, m.pe(root as usize))? };
    }
    set_barrier(&inst, &m, psync)
}

/// Active-set collect (`fixed`: fcollect) of `bytes` per member, in member order.
///
/// # Safety
/// `dest` must be writable for the concatenation.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn set_collect(
    dest: *mut u8,
    source: *const u8,
    bytes: usize,
    fixed: bool,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<()> {
    let inst = runtime::current()?;
    let m = active_set(&inst, start, log_stride, size, psync)?;
    if let Members::Team(t) = &m {
        return if fixed {
            collectives::fcollect(&inst, t, dest as usize, source as usize, bytes)
        } else {
            collectives::collect(&inst, t, dest as usize, source as usize, bytes)
        };
    }
    let count = psync.wrapping_add(2);
    if !fixed {
        atomic::set(count, bytes as i64, m.pe(m.me()))?;
    }
    set_barrier(&inst, &m, psync)?;
    let mut at = 0usize;
    for i in 0..m.size() {
        let len = if fixed {
            bytes
        } else {
            atomic::fetch(count.cast_const(), m.pe(i))? as usize
        };
        // SAFETY: forwarded; dest holds the concatenation (contract).
        unsafe { rma::get(dest.wrapping_add(at), source, len, m.pe(i))? };
        at += len;
    }
    set_barrier(&inst, &m, psync)?;
    if !fixed {
        atomic::set(count, SYNC_VALUE, m.pe(m.me()))?;
    }
    Ok(())
}

/// Active-set all-to-all of blocks of `bytes` (strided when `strides` is given, in elements of
/// `elem` bytes).
///
/// # Safety
/// `dest` must be writable for every block.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn set_alltoall(
    dest: *mut u8,
    source: *const u8,
    elem: usize,
    strides: (isize, isize),
    n: usize,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<()> {
    let inst = runtime::current()?;
    let m = active_set(&inst, start, log_stride, size, psync)?;
    if let Members::Team(t) = &m {
        if strides == (1, 1) {
            let bytes = rma::bytes(n, elem)?;
            return collectives::alltoall(&inst, t, dest as usize, source as usize, bytes);
        }
        // SAFETY: forwarded.
        return unsafe { alltoalls_team(&inst, t, dest, source, elem, strides, n) };
    }
    set_barrier(&inst, &m, psync)?;
    // SAFETY: forwarded.
    unsafe { alltoalls_gets(&m, dest, source, elem, strides.0, strides.1, n)? };

    set_barrier(&inst, &m, psync)
}

/// Active-set reduction of `n` elements into every member's `dest` (`dest == source` allowed).
///
/// # Safety
/// `dest` must be writable for `n` elements; `source` a symmetric array of `n` elements.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn set_reduce<T: Element + Default>(
    dest: *mut T,
    source: *const T,
    n: c_int,
    op: Op,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    psync: *mut i64,
) -> Result<()> {
    let inst = runtime::current()?;
    let m = active_set(&inst, start, log_stride, size, psync)?;
    if n < 0 {
        return Err(Error::InvalidParam(format!("nreduce {n} is negative")));
    }
    if n > 0 {
        crate::non_null(dest, "dest")?;
    }
    let n = n as usize;
    if let Members::Team(t) = &m {
        return collectives::reduce::<T>(&inst, t, dest as usize, source as usize, n, op);
    }
    let len = rma::bytes(n, std::mem::size_of::<T>())?;
    set_barrier(&inst, &m, psync)?;
    // the accumulator and the part read: this thread's reused buffers (fresh vectors of tens of
    // KiB per call made glibc trim and fault in its heap every call)
    collectives::with_buffers::<T, ()>(n, |acc, part| {
        for i in 0..m.size() {
            let buf = if i == 0 { &mut *acc } else { &mut *part };
            // SAFETY: buf holds n elements.
            unsafe { rma::get(buf.as_mut_ptr().cast(), source.cast(), len, m.pe(i))? };
            if i > 0 {
                collectives::combine(acc, part, op);
            }
        }
        // every member has read every source before anyone overwrites its dest (dest may be
        // source)
        set_barrier(&inst, &m, psync)?;
        // SAFETY: dest is writable for n elements (contract); acc is private.
        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest, n) };
        Ok(())
    })
}

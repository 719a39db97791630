//! **Extension**: host-side collectives over teams (OpenSHMEM 1.5 shapes with the `aclshmem_`
//! prefix). The byte forms are here; the typed forms and reductions are generated into
//! coll_typed.rs and call the helpers below.
//!
//! Every collective is blocking and collective over the members of `team`; `dest` and `source`
//! must be symmetric (same call on every member). Returns 0, or ACLSHMEM_INVALID_PARAM (invalid
//! team, root outside the team, NULL or non-symmetric buffers, forbidden overlap) /
//! ACLSHMEM_NOT_INITED. On return every member's `dest` holds the result and every member may
//! reuse its `source`.

use std::ffi::{c_int, c_void};

use super::guard;
use super::types::aclshmem_team_t;
use aclshmem_core::collectives::{self, Element, Op};
use aclshmem_core::error::Result;
use aclshmem_core::runtime;

fn run(
    team: aclshmem_team_t,
    f: impl FnOnce(&runtime::Instance, &aclshmem_core::team::Team) -> Result<()>,
) -> Result<c_int> {
    let inst = runtime::current()?;
    // the team is used where the lookup returned it, not copied out of the `Result`: a wider copy
    // of fields just stored cannot be forwarded from the store buffer and waits for every earlier
    // store to reach the cache, such as a broadcast root's stores into lines its readers hold
    match inst.team(team) {
        Ok(ref t) => f(&inst, t).map(|_| 0),
        Err(e) => Err(e),
    }
}

pub(crate) fn broadcast(
    team: aclshmem_team_t,
    dest: usize,
    source: usize,
    bytes: usize,
    root: c_int,
) -> Result<c_int> {
    run(team, |i, t| {
        collectives::broadcast(i, t, dest, source, bytes, root)
    })
}

pub(crate) fn collect(team: aclshmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::collect(i, t, dest, source, bytes))
}

pub(crate) fn fcollect(team: aclshmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::fcollect(i, t, dest, source, bytes))
}

pub(crate) fn alltoall(team: aclshmem_team_t, dest: usize, source: usize, bytes: usize) -> Result<c_int> {
    run(team, |i, t| collectives::alltoall(i, t, dest, source, bytes))
}

pub(crate) fn reduce<T: Element>(
    team: aclshmem_team_t,
    dest: usize,
    source: usize,
    n: usize,
    op: Op,
) -> Result<c_int> {
    run(team, |i, t| collectives::reduce::<T>(i, t, dest, source, n, op))
}

fn bytes(n: usize, size: usize) -> Result<usize> {
    aclshmem_core::rma::bytes(n, size)
}

/// Copies `nelems` bytes of member `PE_root`'s `source` into `dest` on every member of `team`
/// (the root included). `dest` and `source` must not overlap.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub unsafe extern "C" fn aclshmem_broadcastmem(
    team: aclshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    PE_root: c_int,
) -> c_int {
    guard("aclshmem_broadcastmem", || {
        broadcast(team, dest as usize, source as usize, bytes(nelems, 1)?, PE_root)
    })
}

/// Concatenates every member's `nelems` bytes of `source` (the count may differ per member) into
/// `dest` on every member, in team order.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_collectmem(
    team: aclshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    guard("aclshmem_collectmem", || {
        collect(team, dest as usize, source as usize, nelems)
    })
}

/// Concatenates every member's `nelems` bytes of `source` (the same count everywhere) into `dest`
/// on every member, in team order.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_fcollectmem(
    team: aclshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    guard("aclshmem_fcollectmem", || {
        fcollect(team, dest as usize, source as usize, nelems)
    })
}

/// Exchanges blocks of `nelems` bytes: block j of member i's `source` goes to block i of member
/// j's `dest`.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_alltoallmem(
    team: aclshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    guard("aclshmem_alltoallmem", || {
        alltoall(team, dest as usize, source as usize, nelems)
    })
}

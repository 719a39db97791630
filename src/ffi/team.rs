//! C entry points of `host/team/shmem_host_team.h` (spec 8.7).

use std::ffi::c_int;

use super::types::{ACLSHMEM_TEAM_INVALID, TeamConfig, aclshmem_team_t};
use super::{arg_mut, guard};
use aclshmem_core::error::Error;
use aclshmem_core::runtime;
use aclshmem_core::team::{self, Team};

/// This PE's number in the current instance; -1 before the first init (the last value is kept
/// after finalize, as in the original).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_my_pe() -> c_int {
    guard("aclshmem_my_pe", || Ok(runtime::my_pe_or_last()))
}

/// Number of PEs of the current instance; -1 before the first init (kept after finalize).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_n_pes() -> c_int {
    guard("aclshmem_n_pes", || Ok(runtime::n_pes_or_last()))
}

/// A per-team query: -1 for an invalid handle or before init, ACLSHMEM_NOT_SUPPORTED in an instance
/// other than 0 (as the original).
fn query(team: aclshmem_team_t, f: impl FnOnce(&Team) -> c_int) -> c_int {
    let Ok(inst) = runtime::current() else { return -1 };
    if let Err(e) = team::check_instance(&inst) {
        return e.code();
    }
    inst.team(team).map_or(-1, |t| f(&t))
}

/// This PE's index in `team`; -1 for an invalid handle or before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_team_my_pe(team: aclshmem_team_t) -> c_int {
    guard("aclshmem_team_my_pe", || Ok(query(team, |t| t.my_index as c_int)))
}

/// Number of members of `team`; -1 for an invalid handle or before init.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_team_n_pes(team: aclshmem_team_t) -> c_int {
    guard("aclshmem_team_n_pes", || Ok(query(team, |t| t.size as c_int)))
}

/// Creates a team of the parent members `pe_start, pe_start + pe_stride, ...` (`pe_size` of them,
/// indices relative to `parent_team`). Collective over the parent team: every parent member calls
/// it with the same arguments. Members get the new handle in `*new_team`; other PEs get
/// ACLSHMEM_TEAM_INVALID and 0. The handle is agreed among the new team's members (lowest slot free
/// on all of them), whatever teams other PEs created meanwhile; up to ACLSHMEM_MAX_TEAMS (2048)
/// teams live at once. Returns 0, ACLSHMEM_INVALID_PARAM (NULL new_team, invalid parent, members
/// outside the parent, before init) or ACLSHMEM_INNER_ERROR (no free slot).
///
/// # Safety
/// `new_team` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_team_split_strided(
    parent_team: aclshmem_team_t,
    pe_start: c_int,
    pe_stride: c_int,
    pe_size: c_int,
    new_team: *mut aclshmem_team_t,
) -> c_int {
    guard("aclshmem_team_split_strided", || {
        // SAFETY: documented requirement of this function.
        let out = unsafe { arg_mut(new_team, "new_team") }?;
        *out = ACLSHMEM_TEAM_INVALID;
        let inst = runtime::current().map_err(|_| Error::InvalidParam("library not initialised".into()))?;
        if let Some(slot) = team::split_strided(&inst, parent_team, pe_start, pe_stride, pe_size)? {
            *out = slot as aclshmem_team_t;
            super::kernel::publish_state();
        }
        Ok(0)
    })
}

/// Splits `parent_team` into a 2-D grid with `x_range` columns: `*x_team` holds consecutive runs of
/// `x_range` parent members (the last may be shorter), `*y_team` the members with the same index
/// modulo `x_range`. Collective over the parent team. `x_range` larger than the parent is clamped.
/// Returns 0 or ACLSHMEM_INVALID_PARAM (NULL outputs, x_range <= 0, invalid parent, before init) /
/// ACLSHMEM_INNER_ERROR (no free slot).
///
/// # Safety
/// `x_team` and `y_team` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_team_split_2d(
    parent_team: aclshmem_team_t,
    x_range: c_int,
    x_team: *mut aclshmem_team_t,
    y_team: *mut aclshmem_team_t,
) -> c_int {
    guard("aclshmem_team_split_2d", || {
        // SAFETY: documented requirement of this function.
        let (x, y) = unsafe { (arg_mut(x_team, "x_team")?, arg_mut(y_team, "y_team")?) };
        if x_range <= 0 {
            return Err(Error::InvalidParam(format!("x_range {x_range} must be positive")));
        }
        *x = ACLSHMEM_TEAM_INVALID;
        *y = ACLSHMEM_TEAM_INVALID;
        let inst = runtime::current().map_err(|_| Error::InvalidParam("library not initialised".into()))?;
        let (xs, ys) = team::split_2d(&inst, parent_team, x_range)?;
        *x = xs as aclshmem_team_t;
        *y = ys as aclshmem_team_t;
        super::kernel::publish_state();
        Ok(0)
    })
}

/// Index in `dest_team` of the PE with index `src_pe` in `src_team`; -1 when a handle is invalid,
/// `src_pe` is out of range, or that PE is not in `dest_team`. Local.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_team_translate_pe(
    src_team: aclshmem_team_t,
    src_pe: c_int,
    dest_team: aclshmem_team_t,
) -> c_int {
    guard("aclshmem_team_translate_pe", || {
        Ok(runtime::current().map_or(-1, |inst| team::translate(&inst, src_team, src_pe, dest_team)))
    })
}

/// Releases `team` on this PE (local; every member should call it). ACLSHMEM_TEAM_WORLD or an
/// invalid handle: logged, no effect.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_team_destroy(team: aclshmem_team_t) {
    guard("aclshmem_team_destroy", || {
        team::destroy(&*runtime::current()?, team)?;
        super::kernel::publish_state();
        Ok(())
    })
}

/// Copies the configuration of `team` (all zero: contexts are not used) into `*config`. Returns 0
/// or ACLSHMEM_INVALID_PARAM (invalid team, NULL config, before init).
///
/// # Safety
/// `config` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_team_get_config(team: aclshmem_team_t, config: *mut TeamConfig) -> c_int {
    guard("aclshmem_team_get_config", || {
        // SAFETY: documented requirement of this function.
        let out = unsafe { arg_mut(config, "config") }?;
        let inst = runtime::current().map_err(|_| Error::InvalidParam("library not initialised".into()))?;
        *out = team::config(&inst, team)?;
        Ok(0)
    })
}

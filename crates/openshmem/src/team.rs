//! Teams (OpenSHMEM 1.5 chapter 9.4) over the core's teams.
//!
//! A `shmem_team_t` is an opaque pointer-sized handle: NULL is `SHMEM_TEAM_INVALID`, 1
//! `SHMEM_TEAM_WORLD` (core slot 0), 2 `SHMEM_TEAM_SHARED` (the PEs whose memory this PE addresses
//! directly, i.e. those of its node: a team split off the world team at init, with all of its PEs
//! on one node, see [`init_shared`]), and
//! core slot `s >= 1` is handle `s + 2`. Team operations that the specification gives a return
//! code (split, get_config, create_ctx) return nonzero on failure instead of ending the job.

use std::collections::HashMap;
use std::ffi::{c_int, c_long, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::{guard, guard_soft};
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime;
use aclshmem_core::team;

/// Opaque team handle of the C API (see the module documentation).
pub type shmem_team_t = *mut c_void;

/// `shmem_team_config_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct shmem_team_config_t {
    pub num_contexts: c_int,
}

/// `SHMEM_TEAM_NUM_CONTEXTS`: the config mask bit of `num_contexts`.
pub const SHMEM_TEAM_NUM_CONTEXTS: c_long = 1;

const WORLD: usize = 1;
const SHARED: usize = 2;

/// Core slot of `SHMEM_TEAM_SHARED`, -1 when this PE has none (see [`init_shared`]).
static SHARED_SLOT: AtomicI32 = AtomicI32::new(-1);

/// `num_contexts` each live team was created with.
static CONFIGS: Mutex<Option<HashMap<i32, c_int>>> = Mutex::new(None);

/// Most node groups `SHMEM_TEAM_SHARED` is built for (each takes a core team slot on every PE).
const MAX_SHARED_GROUPS: usize = 64;

/// `(start, stride, size)` of `pes` (ascending) when they form a strided set.
fn strided(pes: &[usize]) -> Option<(i32, i32, i32)> {
    let stride = if pes.len() > 1 { pes[1] - pes[0] } else { 1 };
    let ok = stride > 0 && pes.windows(2).all(|w| w[1] - w[0] == stride);
    ok.then(|| (pes[0] as i32, stride as i32, pes.len() as i32))
}

/// At init (collective): `SHMEM_TEAM_SHARED` is the set of PEs whose symmetric memory this PE can
/// address directly (`shmem_team_ptr` works for every member: the specification's definition),
/// that is the PEs of this node reached through shared memory. When that is every PE, a copy of the
/// world team split off it (a team of its own); otherwise every PE publishes its set, and for each distinct set (in the order of their first
/// PEs, the same on every PE) all PEs split it off the world team, its members keeping it as their
/// `SHMEM_TEAM_SHARED`. A set that is not strided (PEs of nodes interleaved irregularly), or more
/// than [`MAX_SHARED_GROUPS`] sets, leave `SHMEM_TEAM_SHARED` invalid on the PEs concerned (logged).
pub(crate) fn init_shared() -> Result<()> {
    let inst = runtime::current()?;
    let n = inst.n_pes();
    let base = inst.heap_base(aclshmem_core::HeapKind::Device) as usize;
    let here: Vec<usize> = (0..n)
        .filter(|&pe| matches!(inst.peer_ptr(base, pe as i32), Ok(Some(_))) || pe == inst.my_pe())
        .collect();
    if here.len() == n {
        // the same PEs as the world team, but a team of its own: collectives on the two are
        // matched separately (aliasing the world team's slot paired one team's calls with the
        // other's, with wrong results, when a program interleaved them differently on its PEs)
        let s = team::split_strided(&inst, 0, 0, 1, n as i32)?
            .ok_or_else(|| Error::Inner("SHMEM_TEAM_SHARED: this PE is not in the world team".into()))?;
        SHARED_SLOT.store(s as i32, Ordering::Relaxed);
        return Ok(());
    }
    SHARED_SLOT.store(-1, Ordering::Relaxed);
    let mine = strided(&here);
    if mine.is_none() {
        log::warn!(
            "SHMEM_TEAM_SHARED: this node's PEs {here:?} are not a strided set; SHMEM_TEAM_SHARED is SHMEM_TEAM_INVALID here"
        );
    }
    let (a, b, c) = mine.unwrap_or((-1, -1, -1));
    let word: Vec<u8> = [a, b, c].iter().flat_map(|v| v.to_le_bytes()).collect();
    let world = inst.team(0)?;
    let all = aclshmem_core::sync::exchange(&inst, &world, &word)?;
    let mut groups: Vec<(i32, i32, i32)> = Vec::new();
    for w in &all {
        let v: Vec<i32> = w
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let g = (v[0], v[1], v[2]);
        if g.0 >= 0 && !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups.sort_unstable();
    if groups.len() > MAX_SHARED_GROUPS {
        log::warn!(
            "SHMEM_TEAM_SHARED: {} groups of PEs sharing memory (more than {MAX_SHARED_GROUPS}); SHMEM_TEAM_SHARED is SHMEM_TEAM_INVALID",
            groups.len()
        );
        return Ok(());
    }
    for g in groups {
        if let Some(s) = team::split_strided(&inst, 0, g.0, g.1, g.2)?
            && Some(g) == mine
        {
            SHARED_SLOT.store(s as i32, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// The core slot of a handle, or an error naming it.
#[inline]
pub(crate) fn slot(team: shmem_team_t) -> Result<i32> {
    match team as usize {
        0 => Err(Error::InvalidParam("team is SHMEM_TEAM_INVALID".into())),
        WORLD => Ok(0),
        SHARED => match SHARED_SLOT.load(Ordering::Relaxed) {
            -1 => Err(Error::InvalidParam(
                "SHMEM_TEAM_SHARED is not available on this PE (its node's PEs are not a strided set)".into(),
            )),
            s => Ok(s),
        },
        h => {
            i32::try_from(h - 2).map_err(|_| Error::InvalidParam(format!("team {h:#x} is not a team handle")))
        }
    }
}

/// How messages of the core name core slot `s` on this surface (see
/// `aclshmem_core::team_table::TeamName`).
fn team_name(s: usize) -> Option<String> {
    let shared = SHARED_SLOT.load(Ordering::Relaxed);
    Some(if s == 0 {
        "SHMEM_TEAM_WORLD".to_string()
    } else if shared >= 0 && s == shared as usize {
        "SHMEM_TEAM_SHARED".to_string()
    } else {
        format!("OpenSHMEM handle {:#x}", s + 2)
    })
}

/// Registers [`team_name`] with the core (at `shmem_init`).
pub(crate) fn name_teams() {
    team::set_team_names(team_name);
}

/// The handle of core slot `s`.
pub(crate) fn handle(s: usize) -> shmem_team_t {
    if s == 0 {
        WORLD as shmem_team_t
    } else {
        (s + 2) as shmem_team_t
    }
}

/// World PE of member `pe` of `team`.
pub(crate) fn world_pe(team: shmem_team_t, pe: c_int) -> Result<c_int> {
    let s = slot(team)?;
    if s == 0 {
        return Ok(pe);
    }
    let t = runtime::current()?.team(s)?;
    if pe < 0 || pe as usize >= t.size {
        return Err(Error::InvalidParam(format!(
            "pe {pe} is not a member index of a team of {}",
            t.size
        )));
    }
    Ok(t.world_pe(pe as usize) as c_int)
}

fn query(team: shmem_team_t, f: impl FnOnce(&team::Team) -> c_int) -> c_int {
    let Ok(s) = slot(team) else { return -1 };
    runtime::current()
        .ok()
        .and_then(|i| i.team(s).ok())
        .map_or(-1, |t| f(&t))
}

/// This PE's index in `team`; -1 for `SHMEM_TEAM_INVALID` or a team this PE is not in.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_my_pe(team: shmem_team_t) -> c_int {
    query(team, |t| t.my_index as c_int)
}

/// Number of members of `team`; -1 for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_n_pes(team: shmem_team_t) -> c_int {
    query(team, |t| t.size as c_int)
}

fn remember(slot: usize, config: *const shmem_team_config_t, mask: c_long) {
    let n = if mask & SHMEM_TEAM_NUM_CONTEXTS != 0 && aclshmem_core::args::check(config, "config").is_ok() {
        // SAFETY: a checked config points to a readable shmem_team_config_t (caller's contract).
        unsafe { (*config).num_contexts }
    } else {
        0
    };
    CONFIGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(slot as i32, n);
}

/// Creates a team of the members `start, start + stride, ...` (`size` of them, indices in
/// `parent_team`). Collective over the parent team. Members get the new handle, others
/// `SHMEM_TEAM_INVALID`. Returns 0, or nonzero (logged; `*new_team` = `SHMEM_TEAM_INVALID`) for an
/// invalid parent or a shape outside it.
///
/// # Safety
/// `new_team` must be NULL or writable; `config` NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_split_strided(
    parent_team: shmem_team_t,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const shmem_team_config_t,
    config_mask: c_long,
    new_team: *mut shmem_team_t,
) -> c_int {
    if !crate::outputs_ok("shmem_team_split_strided", &[(new_team.cast(), "new_team")]) {
        return -1;
    }
    guard_soft("shmem_team_split_strided", -1, || {
        crate::non_null(new_team, "new_team")?;
        // SAFETY: non-NULL and writable (contract).
        unsafe { *new_team = std::ptr::null_mut() };
        let parent = slot(parent_team)?;
        let inst = runtime::current()?;
        // a stride of 0 with one member is the same team as stride 1 (allowed by the specification)
        let stride = if size == 1 && stride == 0 { 1 } else { stride };
        if let Some(s) = team::split_strided(&inst, parent, start, stride, size)? {
            remember(s, config, config_mask);
            // SAFETY: as above.
            unsafe { *new_team = handle(s) };
        }
        Ok(0)
    })
}

/// Splits `parent_team` into a 2-D grid of `xrange` columns: `*xaxis_team` holds this PE's row
/// (consecutive runs of `xrange` members), `*yaxis_team` its column. Collective over the parent.
/// Returns 0 or nonzero (logged).
///
/// # Safety
/// Output pointers must be NULL or writable; configs NULL or readable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shmem_team_split_2d(
    parent_team: shmem_team_t,
    xrange: c_int,
    xaxis_config: *const shmem_team_config_t,
    xaxis_mask: c_long,
    xaxis_team: *mut shmem_team_t,
    yaxis_config: *const shmem_team_config_t,
    yaxis_mask: c_long,
    yaxis_team: *mut shmem_team_t,
) -> c_int {
    if !crate::outputs_ok(
        "shmem_team_split_2d",
        &[
            (xaxis_team.cast(), "xaxis_team"),
            (yaxis_team.cast(), "yaxis_team"),
        ],
    ) {
        return -1;
    }
    guard_soft("shmem_team_split_2d", -1, || {
        crate::non_null(xaxis_team, "xaxis_team")?;
        crate::non_null(yaxis_team, "yaxis_team")?;
        // SAFETY: non-NULL and writable (contract).
        unsafe {
            *xaxis_team = std::ptr::null_mut();
            *yaxis_team = std::ptr::null_mut();
        }
        if xrange <= 0 {
            return Err(Error::InvalidParam(format!("xrange {xrange} must be positive")));
        }
        let parent = slot(parent_team)?;
        let inst = runtime::current()?;
        let (x, y) = team::split_2d(&inst, parent, xrange)?;
        remember(x, xaxis_config, xaxis_mask);
        remember(y, yaxis_config, yaxis_mask);
        // SAFETY: as above.
        unsafe {
            *xaxis_team = handle(x);
            *yaxis_team = handle(y);
        }
        Ok(0)
    })
}

/// Index in `dest_team` of member `src_pe` of `src_team`; -1 when it is not a member or a handle
/// is invalid.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_translate_pe(
    src_team: shmem_team_t,
    src_pe: c_int,
    dest_team: shmem_team_t,
) -> c_int {
    let (Ok(s), Ok(d)) = (slot(src_team), slot(dest_team)) else {
        return -1;
    };
    runtime::current().map_or(-1, |inst| team::translate(&inst, s, src_pe, d))
}

/// Writes the configuration `team` was created with (the fields `config_mask` selects). Returns 0,
/// or nonzero for `SHMEM_TEAM_INVALID` or a NULL `config`.
///
/// # Safety
/// `config` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_get_config(
    team: shmem_team_t,
    config_mask: c_long,
    config: *mut shmem_team_config_t,
) -> c_int {
    if !crate::outputs_ok("shmem_team_get_config", &[(config.cast_const().cast(), "config")]) {
        return -1;
    }
    guard_soft("shmem_team_get_config", -1, || {
        crate::non_null(config, "config")?;
        let s = slot(team)?;
        runtime::current()?.team(s)?;
        let n = CONFIGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&s).copied())
            .unwrap_or(0);
        if config_mask & SHMEM_TEAM_NUM_CONTEXTS != 0 {
            // SAFETY: non-NULL and writable (contract).
            unsafe { (*config).num_contexts = n };
        }
        Ok(0)
    })
}

/// Releases `team` on this PE (every member calls it). `SHMEM_TEAM_WORLD`, `SHMEM_TEAM_SHARED` and
/// `SHMEM_TEAM_INVALID` are left alone, as the specification allows.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_destroy(team: shmem_team_t) {
    guard("shmem_team_destroy", (), || {
        if matches!(team as usize, 0 | WORLD | SHARED) {
            return Ok(());
        }
        let s = slot(team)?;
        crate::ctx::destroy_team(s);
        CONFIGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(|m| m.remove(&s));
        team::destroy(&*runtime::current()?, s)
    })
}

/// [`crate::setup::shmem_ptr`] with `pe` a member index of `team`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_ptr(team: shmem_team_t, dest: *const c_void, pe: c_int) -> *mut c_void {
    match world_pe(team, pe) {
        Ok(w) => crate::setup::shmem_ptr(dest, w),
        Err(_) => std::ptr::null_mut(),
    }
}

/// Barrier over the members of `team` without the completion guarantee of a barrier on the
/// data path: here it also completes earlier puts (quiet), which the specification allows.
/// Returns 0, or nonzero for an invalid team.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_sync(team: shmem_team_t) -> c_int {
    guard("shmem_team_sync", -1, || {
        let s = slot(team)?;
        aclshmem_core::host::team_barrier(s).map(|_| 0)
    })
}

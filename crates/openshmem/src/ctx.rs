//! Communication contexts (OpenSHMEM 1.5 chapter 9.5).
//!
//! A `shmem_ctx_t` points to a [`Ctx`]: the team whose PE numbering its operations use and the
//! options it was created with. `SHMEM_CTX_DEFAULT` is the exported object
//! `aclshmem_osh_ctx_default` (world team), `SHMEM_CTX_INVALID` is NULL.
//!
//! Ordering and completion per context: `shmem_ctx_quiet(ctx)` completes every operation issued on
//! `ctx` and `shmem_ctx_fence(ctx)` orders them. On the shared-memory transport every blocking
//! operation is complete when it returns and non-blocking ones complete at the latest at the next
//! quiet of the process, so operations on one context never wait for another context's operations
//! to be issued, and a quiet on one context may also complete other contexts' operations (which
//! the specification allows: it only requires at least the context's own).

use std::ffi::{c_int, c_long};
use std::sync::Mutex;

use crate::guard_soft;
use crate::team::{self, shmem_team_t};
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime;

/// One context.
#[repr(C)]
#[derive(Debug)]
pub struct Ctx {
    magic: u64,
    /// Core slot of the context's team (0: world).
    slot: i32,
    options: c_long,
}

const MAGIC: u64 = 0x6f73_685f_6374_7821;

/// The C handle.
pub type shmem_ctx_t = *mut Ctx;

/// `SHMEM_CTX_DEFAULT`'s object. Never written.
#[unsafe(no_mangle)]
pub static aclshmem_osh_ctx_default: Ctx = Ctx {
    magic: MAGIC,
    slot: 0,
    options: 0,
};

/// Contexts created and not destroyed (addresses), so finalize and team destruction can release them.
static LIVE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// World PE for PE `pe` of `ctx`'s team.
#[inline(always)]
pub(crate) fn pe(ctx: shmem_ctx_t, pe: c_int) -> Result<c_int> {
    if std::ptr::eq(ctx.cast_const(), &aclshmem_osh_ctx_default) {
        return Ok(pe);
    }
    pe_slow(ctx, pe)
}

#[cold]
fn pe_slow(ctx: shmem_ctx_t, pe: c_int) -> Result<c_int> {
    let c = get(ctx)?;
    if c.slot == 0 {
        return Ok(pe);
    }
    team::world_pe(team::handle(c.slot as usize), pe)
}

fn get<'a>(ctx: shmem_ctx_t) -> Result<&'a Ctx> {
    // SAFETY: a non-NULL context handle comes from shmem_ctx_create / shmem_team_create_ctx (or
    // is SHMEM_CTX_DEFAULT) and stays valid until shmem_ctx_destroy, per the specification; the
    // magic word catches some misuse.
    let c = unsafe { ctx.as_ref() }.ok_or_else(|| Error::InvalidParam("ctx is SHMEM_CTX_INVALID".into()))?;
    if c.magic != MAGIC {
        return Err(Error::InvalidParam(format!("ctx {ctx:p} is not a live context")));
    }
    Ok(c)
}

/// Checks `ctx` (for the ordering routines).
pub(crate) fn check(ctx: shmem_ctx_t) -> Result<()> {
    if std::ptr::eq(ctx.cast_const(), &aclshmem_osh_ctx_default) {
        return Ok(());
    }
    get(ctx).map(|_| ())
}

fn create(slot: i32, options: c_long, out: *mut shmem_ctx_t) -> Result<c_int> {
    crate::non_null(out, "ctx")?;
    // SAFETY: non-NULL and writable (the exports' contract).
    unsafe { *out = std::ptr::null_mut() };
    runtime::current()?.team(slot)?;
    let c = Box::into_raw(Box::new(Ctx {
        magic: MAGIC,
        slot,
        options,
    }));
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(c as usize);
    // SAFETY: as above.
    unsafe { *out = c };
    Ok(0)
}

/// Creates a context over the world team with `options` (`SHMEM_CTX_SERIALIZED`, `_PRIVATE`,
/// `_NOSTORE`: accepted; every context here is thread-safe). Returns 0, or nonzero with `*ctx` =
/// `SHMEM_CTX_INVALID`.
///
/// # Safety
/// `ctx` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_create(options: c_long, ctx: *mut shmem_ctx_t) -> c_int {
    guard_soft("shmem_ctx_create", -1, || create(0, options, ctx))
}

/// Creates a context whose PE numbers are member indices of `team`. Returns 0, or nonzero with
/// `*ctx` = `SHMEM_CTX_INVALID` (invalid team).
///
/// # Safety
/// `ctx` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_create_ctx(
    team: shmem_team_t,
    options: c_long,
    ctx: *mut shmem_ctx_t,
) -> c_int {
    guard_soft("shmem_team_create_ctx", -1, || {
        if !ctx.is_null() {
            // SAFETY: non-NULL and writable (contract).
            unsafe { *ctx = std::ptr::null_mut() };
        }
        let s = team::slot(team)?;
        create(s, options, ctx)
    })
}

/// Completes the context's operations and releases it. `SHMEM_CTX_DEFAULT`, `SHMEM_CTX_INVALID`:
/// nothing happens.
///
/// # Safety
/// `ctx` must be a context handle not destroyed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_destroy(ctx: shmem_ctx_t) {
    crate::guard("shmem_ctx_destroy", (), || {
        if ctx.is_null() || std::ptr::eq(ctx.cast_const(), &aclshmem_osh_ctx_default) {
            return Ok(());
        }
        get(ctx)?;
        aclshmem_core::rma::quiet()?;
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = live.iter().position(|&c| c == ctx as usize) {
            live.swap_remove(i);
            // SAFETY: ctx came from Box::into_raw in `create` and is released once (it was live).
            drop(unsafe { Box::from_raw(ctx) });
        }
        Ok(())
    })
}

/// Writes the team of `ctx` (`SHMEM_TEAM_WORLD` for the default context). Returns 0, or nonzero
/// with `*team` = `SHMEM_TEAM_INVALID` for an invalid context.
///
/// # Safety
/// `team` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_get_team(ctx: shmem_ctx_t, team: *mut shmem_team_t) -> c_int {
    guard_soft("shmem_ctx_get_team", -1, || {
        crate::non_null(team, "team")?;
        let r = if std::ptr::eq(ctx.cast_const(), &aclshmem_osh_ctx_default) {
            Ok(0)
        } else {
            get(ctx).map(|c| c.slot)
        };
        // SAFETY: non-NULL and writable (contract).
        unsafe {
            *team = r
                .as_ref()
                .map_or(std::ptr::null_mut(), |&s| team::handle(s as usize))
        };
        r.map(|_| 0)
    })
}

/// Marks every context dead (invalid magic) and frees it: shmem_finalize.
pub(crate) fn destroy_all() {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for c in live.drain(..) {
        // SAFETY: every address in LIVE came from Box::into_raw and was not freed.
        drop(unsafe { Box::from_raw(c as *mut Ctx) });
    }
}

/// Contexts of a destroyed team become invalid (the specification makes using them an error).
pub(crate) fn destroy_team(slot: i32) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.retain(|&c| {
        // SAFETY: every address in LIVE is a live Box<Ctx>.
        let dead = unsafe { (*(c as *const Ctx)).slot } == slot;
        if dead {
            // SAFETY: as above; removed from LIVE, so freed once.
            drop(unsafe { Box::from_raw(c as *mut Ctx) });
        }
        !dead
    });
}

/// Ordering routines of a context: [`shmem_ctx_quiet`] and [`shmem_ctx_fence`].
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_quiet(ctx: shmem_ctx_t) {
    crate::guard("shmem_ctx_quiet", (), || {
        check(ctx)?;
        aclshmem_core::rma::quiet()
    })
}

/// Orders the context's puts, AMOs and signals to each PE: those issued before it are delivered
/// before those issued after it.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_fence(ctx: shmem_ctx_t) {
    crate::guard("shmem_ctx_fence", (), || {
        check(ctx)?;
        aclshmem_core::rma::fence()
    })
}

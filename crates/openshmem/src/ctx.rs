//! Communication contexts (OpenSHMEM 1.5 chapter 9.5).
//!
//! A `shmem_ctx_t` points to a [`Ctx`]: the team whose PE numbering its operations use and the
//! options it was created with. `SHMEM_CTX_DEFAULT` is the exported object
//! `aclshmem_osh_ctx_default` (world team), `SHMEM_CTX_INVALID` is NULL. Created contexts live in
//! a fixed table ([`MAX_CONTEXTS`] at once), so a handle is checked by its address alone: a
//! pointer that is not one of the table's entries, or an entry not in use (a destroyed context),
//! is refused without being read.
//!
//! Ordering and completion per context: `shmem_ctx_quiet(ctx)` completes every operation issued on
//! `ctx` and `shmem_ctx_fence(ctx)` orders them. On the shared-memory transport every blocking
//! operation is complete when it returns and non-blocking ones complete at the latest at the next
//! quiet of the process, so operations on one context never wait for another context's operations
//! to be issued, and a quiet on one context may also complete other contexts' operations (which
//! the specification allows: it only requires at least the context's own).

use std::ffi::{c_int, c_long};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use crate::guard_soft;
use crate::team::{self, shmem_team_t};
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime;

/// One context.
#[repr(C)]
#[derive(Debug)]
pub struct Ctx {
    /// [`LIVE`] while the context exists, else [`FREE`] (or [`TAKEN`] while being created).
    state: AtomicU64,
    /// Core slot of the context's team (0: world).
    slot: AtomicI32,
    /// The team handle the context was created on (`shmem_ctx_get_team` returns it:
    /// `SHMEM_TEAM_SHARED`'s slot has another handle too).
    handle: AtomicUsize,
    options: AtomicI64,
}

const LIVE: u64 = 0x6f73_685f_6374_7821;
const FREE: u64 = 0;
const TAKEN: u64 = 1;

impl Ctx {
    const fn new(state: u64) -> Ctx {
        Ctx {
            state: AtomicU64::new(state),
            slot: AtomicI32::new(0),
            handle: AtomicUsize::new(0),
            options: AtomicI64::new(0),
        }
    }

    fn slot(&self) -> i32 {
        self.slot.load(Ordering::Relaxed)
    }
}

/// The C handle.
pub type shmem_ctx_t = *mut Ctx;

/// `SHMEM_CTX_DEFAULT`'s object. Never written.
#[unsafe(no_mangle)]
pub static aclshmem_osh_ctx_default: Ctx = Ctx::new(LIVE);

/// Contexts that may exist at once (`shmem_ctx_create` fails with nonzero beyond).
pub const MAX_CONTEXTS: usize = 1024;

/// Every created context's entry.
static TABLE: [Ctx; MAX_CONTEXTS] = [const { Ctx::new(FREE) }; MAX_CONTEXTS];

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
    let slot = get(ctx)?.slot();
    if slot == 0 {
        return Ok(pe);
    }
    team::world_pe(team::handle(slot as usize), pe)
}

/// The live context `ctx` names: one of [`TABLE`]'s entries (found by address, never by reading
/// through `ctx`) that is in use.
fn get(ctx: shmem_ctx_t) -> Result<&'static Ctx> {
    if ctx.is_null() {
        return Err(Error::InvalidParam("ctx is SHMEM_CTX_INVALID".into()));
    }
    let base = TABLE.as_ptr() as usize;
    let size = std::mem::size_of::<Ctx>();
    let at = (ctx as usize).wrapping_sub(base);
    let c = at
        .is_multiple_of(size)
        .then(|| TABLE.get(at / size))
        .flatten()
        .ok_or_else(|| Error::InvalidParam(format!("ctx {ctx:p} is not a context handle")))?;
    if c.state.load(Ordering::Acquire) != LIVE {
        return Err(Error::InvalidParam(format!(
            "ctx {ctx:p} is not a live context (destroyed, or its team was)"
        )));
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

fn create(team: shmem_team_t, slot: i32, options: c_long, out: *mut shmem_ctx_t) -> Result<c_int> {
    crate::non_null(out, "ctx")?;
    // SAFETY: non-NULL and writable (the exports' contract).
    unsafe { *out = std::ptr::null_mut() };
    runtime::current()?.team(slot)?;
    let c = TABLE
        .iter()
        .find(|c| {
            c.state
                .compare_exchange(FREE, TAKEN, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        })
        .ok_or_else(|| {
            Error::InvalidParam(format!(
                "{MAX_CONTEXTS} contexts exist already: destroy one first"
            ))
        })?;
    c.slot.store(slot, Ordering::Relaxed);
    c.handle.store(team as usize, Ordering::Relaxed);
    #[allow(clippy::unnecessary_cast)] // c_long is 32 bits on some targets
    c.options.store(options as i64, Ordering::Relaxed);
    c.state.store(LIVE, Ordering::Release);
    // SAFETY: as above.
    unsafe { *out = std::ptr::from_ref(c).cast_mut() };
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
    if !crate::outputs_ok("shmem_ctx_create", &[(ctx.cast_const().cast(), "ctx")]) {
        return -1;
    }
    guard_soft("shmem_ctx_create", -1, || {
        create(team::handle(0), 0, options, ctx)
    })
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
    if !crate::outputs_ok("shmem_team_create_ctx", &[(ctx.cast_const().cast(), "ctx")]) {
        return -1;
    }
    guard_soft("shmem_team_create_ctx", -1, || {
        if aclshmem_core::args::check(ctx, "ctx").is_ok() {
            // SAFETY: non-NULL, aligned and writable (contract).
            unsafe { *ctx = std::ptr::null_mut() };
        }
        let s = team::slot(team)?;
        create(team, s, options, ctx)
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
        let c = get(ctx)?;
        aclshmem_core::rma::quiet()?;
        c.state.store(FREE, Ordering::Release);
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
    if !crate::outputs_ok("shmem_ctx_get_team", &[(team.cast_const().cast(), "team")]) {
        return -1;
    }
    guard_soft("shmem_ctx_get_team", -1, || {
        crate::non_null(team, "team")?;
        let r = if std::ptr::eq(ctx.cast_const(), &aclshmem_osh_ctx_default) {
            Ok(team::handle(0))
        } else {
            get(ctx).map(|c| c.handle.load(Ordering::Relaxed) as shmem_team_t)
        };
        // SAFETY: non-NULL and writable (contract).
        unsafe { *team = *r.as_ref().unwrap_or(&std::ptr::null_mut()) };
        r.map(|_| 0)
    })
}

/// Ends every context: shmem_finalize.
pub(crate) fn destroy_all() {
    for c in &TABLE {
        c.state.store(FREE, Ordering::Release);
    }
}

/// Contexts of a destroyed team become invalid (the specification makes using them an error).
pub(crate) fn destroy_team(slot: i32) {
    for c in TABLE.iter().filter(|c| c.slot() == slot) {
        let _ = c
            .state
            .compare_exchange(LIVE, FREE, Ordering::AcqRel, Ordering::Relaxed);
    }
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

//! The C ABI: the only place with `#[unsafe(no_mangle)]`. One file per area of `acl_rt.h`.
//!
//! Every export runs its body through `status` (or `guard_or` for the few that do not return an
//! `aclError`): it catches a panic (turned into `ACL_ERROR_RT_INTERNAL_ERROR`), records the failure
//! for `aclGetRecentErrMsg` / `aclrtGetLastError`, and converts the core `Result` into the C value.
//! Raw pointers become values only through the helpers below, so a NULL argument becomes
//! `ACL_ERROR_INVALID_PARAM` in one place. Handles are registry keys, never dereferenced.

pub mod callback;
pub mod device;
pub mod event;
pub mod exception;
pub mod graph;
pub mod init;
pub mod memory;
pub mod notify;
pub mod stream;
pub mod vmem;

use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use crate::error::{AclError, Error, Result, code};

thread_local! {
    /// Last failure code of this thread (`aclrtGetLastError` / `aclrtPeekAtLastError`).
    static LAST_ERROR: Cell<AclError> = const { Cell::new(0) };
    /// Messages of failed calls not yet read by `aclGetRecentErrMsg`, oldest first.
    static RECENT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The string the latest `aclGetRecentErrMsg` returned (kept alive until the next call).
    static RETURNED: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// At most this many messages are kept per thread.
const RECENT_LIMIT: usize = 64;

fn record_failure(call: &str, e: &Error) {
    LAST_ERROR.with(|c| c.set(e.code()));
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() == RECENT_LIMIT {
            r.remove(0);
        }
        r.push(format!("{call}: {e}"));
    });
}

fn catch<R>(call: &'static str, body: impl FnOnce() -> Result<R>) -> Result<R> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Error::new(
                code::RT_INTERNAL_ERROR,
                format!("internal panic in {call}: {what}"),
            ))
        }
    }
}

/// Runs an `aclError`-returning export's body: the single place that decides what an error or a
/// panic becomes.
pub(crate) fn status(call: &'static str, body: impl FnOnce() -> Result<()>) -> AclError {
    match catch(call, body) {
        Ok(()) => code::SUCCESS,
        Err(e) => {
            record_failure(call, &e);
            e.code()
        }
    }
}

/// [`status`] for exports returning a value: a failure is recorded and returns `fail`.
pub(crate) fn guard_or<R>(call: &'static str, fail: R, body: impl FnOnce() -> Result<R>) -> R {
    match catch(call, body) {
        Ok(v) => v,
        Err(e) => {
            record_failure(call, &e);
            fail
        }
    }
}

/// Takes (and clears) this thread's recent error messages, newest first, as one C string.
pub(crate) fn take_recent_messages() -> *const std::ffi::c_char {
    let msgs = RECENT.with(|r| std::mem::take(&mut *r.borrow_mut()));
    let text = (!msgs.is_empty())
        .then(|| {
            msgs.iter()
                .rev()
                .map(|m| m.replace('\0', " "))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .and_then(|t| CString::new(t).ok());
    RETURNED.with(|slot| {
        let mut slot = slot.borrow_mut();
        *slot = text;
        slot.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

/// This thread's last failure code; `clear` resets it to success.
pub(crate) fn last_error(clear: bool) -> AclError {
    LAST_ERROR.with(|c| if clear { c.replace(0) } else { c.get() })
}

/// Writes `value` through an output pointer, or `ACL_ERROR_INVALID_PARAM` naming the argument.
///
/// # Safety
/// A non-NULL `ptr` must be valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(ptr: *mut T, name: &str, value: T) -> Result<()> {
    if ptr.is_null() {
        return Err(Error::invalid_param(format!("{name} is NULL")));
    }
    // SAFETY: non-NULL and valid for writes per the caller's contract; `write` does not read or drop
    // the old (possibly uninitialised) value.
    unsafe { ptr.write(value) };
    Ok(())
}

/// `ACL_ERROR_INVALID_PARAM` when a required output pointer is NULL (checked before any side effect).
pub(crate) fn require<T>(ptr: *const T, name: &str) -> Result<()> {
    if ptr.is_null() {
        Err(Error::invalid_param(format!("{name} is NULL")))
    } else {
        Ok(())
    }
}

/// An opaque handle as C sees it.
pub(crate) fn to_c(handle: usize) -> *mut c_void {
    std::ptr::without_provenance_mut(handle)
}

/// The registry key of a C handle (NULL → 0).
pub(crate) fn from_c(handle: *mut c_void) -> usize {
    handle as usize
}

/// An ACL millisecond timeout: −1 = forever (`None`), 0 = poll once, > 0 = limit, < −1 →
/// `ACL_ERROR_RT_PARAM_INVALID`.
pub(crate) fn timeout_ms(ms: i32) -> Result<Option<Duration>> {
    match ms {
        -1 => Ok(None),
        ms if ms < -1 => Err(Error::rt_param(format!(
            "invalid timeout {ms} ms (use -1 or >= 0)"
        ))),
        ms => Ok(Some(Duration::from_millis(ms as u64))),
    }
}

/// A raw pointer moved into a stream job. The C caller guarantees the memory stays valid until the
/// job has run (the contract of every asynchronous ACL call).
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub *mut c_void);

// SAFETY: the pointer is only used by the job it is moved into; keeping the pointee valid and
// unaliased until then is the caller's documented obligation.
unsafe impl Send for SendPtr {}

impl SendPtr {
    /// The raw pointer. A method (not field access) so closures capture the whole `Send` wrapper.
    pub(crate) fn get(self) -> *mut c_void {
        self.0
    }
}

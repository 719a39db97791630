//! The program's signal dispositions survive loading UCX.
//!
//! Loading `libucs` (UCX 1.13, as Debian ships it) installs its own handlers for SIGILL, SIGSEGV,
//! SIGBUS and SIGFPE (print a backtrace, then end the process; `UCX_HANDLE_ERRORS`,
//! `UCX_ERROR_SIGNALS`) and for SIGHUP (a debug hook, `UCX_DEBUG_SIGNO`), whether or not UCX is
//! then used. A job that needs UCX would then behave differently from the same job on one node:
//! a program's own SIGBUS or SIGSEGV handler is never called, this library's message for heap
//! pages `/dev/shm` cannot back (`heap::sigbus`) is replaced by a UCX backtrace, and SIGHUP no
//! longer ends the process. (UCX itself made `HANDLE_ERRORS=none` its default in 1.20 for the
//! first reason.)
//!
//! So [`load`] notes every disposition before loading and, afterwards, puts back each one that a
//! handler inside `libucs` took over. A program that asked UCX for its handling (any of the three
//! variables set) keeps UCX's handlers for the signals that variable governs.
//!
//! `unsafe`: sigaction and dladdr through libc, with zero-initialised structures.

use std::ffi::CStr;

/// The signals `libucs` may take at load (its error signals and its debug signal), each with its
/// name and the variable that asks UCX to handle it.
const SIGNALS: [(libc::c_int, &str, &str); 5] = [
    (libc::SIGILL, "SIGILL", "UCX_ERROR_SIGNALS"),
    (libc::SIGSEGV, "SIGSEGV", "UCX_ERROR_SIGNALS"),
    (libc::SIGBUS, "SIGBUS", "UCX_ERROR_SIGNALS"),
    (libc::SIGFPE, "SIGFPE", "UCX_ERROR_SIGNALS"),
    (libc::SIGHUP, "SIGHUP", "UCX_DEBUG_SIGNO"),
];

/// Runs `open` (which loads UCX), then gives back the signals UCX's load took (see the module
/// documentation).
pub(super) fn load<T>(open: impl FnOnce() -> T) -> T {
    let before: Vec<Option<libc::sigaction>> = SIGNALS.iter().map(|&(s, _, _)| action(s)).collect();
    let out = open();
    let user_asked = |var: &str| {
        std::env::var_os(var).is_some()
            || (var == "UCX_ERROR_SIGNALS" && std::env::var_os("UCX_HANDLE_ERRORS").is_some())
    };
    let mut given_back = Vec::new();
    for (&(sig, name, var), old) in SIGNALS.iter().zip(before) {
        let (Some(old), Some(now)) = (old, action(sig)) else {
            continue;
        };
        if user_asked(var) || !in_ucs(now.sa_sigaction) {
            continue;
        }
        // SAFETY: `old` is the disposition sigaction reported for this signal before the load.
        if unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) } == 0 {
            given_back.push(name);
        }
    }
    if !given_back.is_empty() {
        log::debug!(
            "UCX: {} given back to the dispositions from before UCX was loaded (set \
             UCX_HANDLE_ERRORS / UCX_DEBUG_SIGNO to keep UCX's handlers)",
            given_back.join(", ")
        );
    }
    out
}

/// The current disposition of `sig`.
fn action(sig: libc::c_int) -> Option<libc::sigaction> {
    // SAFETY: a query only (no new action); the out-structure is zero-initialised.
    unsafe {
        let mut now: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(sig, std::ptr::null(), &mut now) == 0).then_some(now)
    }
}

/// Whether the handler at `handler` is code of `libucs`.
fn in_ucs(handler: libc::sighandler_t) -> bool {
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        return false;
    }
    // SAFETY: dladdr only looks the address up in the loaded objects; `info` is zero-initialised.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(handler as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return false;
        }
        let name = CStr::from_ptr(info.dli_fname).to_string_lossy();
        name.rsplit('/').next().is_some_and(|f| f.starts_with("libucs"))
    }
}

//! Initialisation, version and error reporting: `aclInit`, `aclFinalize`, `aclFinalizeReference`,
//! `aclrtGetVersion`, `aclGetRecentErrMsg`, `aclrtGetLastError`, `aclrtPeekAtLastError`.
#![allow(non_snake_case)]

use std::ffi::c_char;

use super::{guard_or, status, write_out};
use crate::error::{AclError, Error, code};
use crate::init;

/// Interface version reported by `aclrtGetVersion` (equal to the header's `ACL_*_VERSION` macros).
pub const VERSION: (i32, i32, i32) = (1, 17, 0);

/// `aclError aclInit(const char *configPath);` — `configPath` (a JSON file of dump/profiling
/// options, or NULL / "") has no effect on the CPU; its content is kept: an `aclInit` after
/// `aclFinalize` with another content than the process's first successful one returns
/// `ACL_ERROR_INVALID_PARAM` (100000). A file that cannot be read counts as no configuration
/// (logged). A second call before `aclFinalize` returns `ACL_ERROR_REPEAT_INITIALIZE` (100002),
/// which callers may ignore.
///
/// # Safety
/// `configPath` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(configPath: *const c_char) -> AclError {
    status("aclInit", || {
        let config = if configPath.is_null() {
            Vec::new()
        } else {
            // SAFETY: a NUL-terminated string (contract).
            let path = unsafe { std::ffi::CStr::from_ptr(configPath) }
                .to_string_lossy()
                .into_owned();
            if path.is_empty() {
                Vec::new()
            } else {
                std::fs::read(&path).unwrap_or_else(|e| {
                    eprintln!(
                        "ascendcl: aclInit: the configuration file {path} cannot be read ({e}); none is used"
                    );
                    Vec::new()
                })
            }
        };
        init::init(config)
    })
}

/// `aclError aclFinalize(void);` — releases all devices, contexts and streams (queued work is
/// drained first). Without a matching `aclInit` → `ACL_ERROR_REPEAT_FINALIZE` (100037).
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> AclError {
    status("aclFinalize", init::finalize)
}

/// `aclError aclFinalizeReference(uint64_t *refCount);` — drops one `aclInit` reference; the last
/// one finalizes. Writes the references left through `refCount` when it is not NULL.
///
/// # Safety
/// `refCount` must be NULL or valid for a write of `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeReference(refCount: *mut u64) -> AclError {
    status("aclFinalizeReference", || {
        let left = init::finalize_reference()?;
        if !refCount.is_null() {
            // SAFETY: non-NULL, valid for writes per this function's contract.
            unsafe { write_out(refCount, "refCount", left) }?;
        }
        Ok(())
    })
}

/// `aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);`
/// — writes 1.17.0. Any NULL → `ACL_ERROR_INVALID_PARAM`.
///
/// # Safety
/// Each pointer must be NULL or valid for a write of `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(
    majorVersion: *mut i32,
    minorVersion: *mut i32,
    patchVersion: *mut i32,
) -> AclError {
    status("aclrtGetVersion", || {
        if majorVersion.is_null() || minorVersion.is_null() || patchVersion.is_null() {
            return Err(Error::invalid_param("a version pointer is NULL"));
        }
        // SAFETY: all three are non-NULL and valid for writes per this function's contract.
        unsafe {
            write_out(majorVersion, "majorVersion", VERSION.0)?;
            write_out(minorVersion, "minorVersion", VERSION.1)?;
            write_out(patchVersion, "patchVersion", VERSION.2)
        }
    })
}

/// `const char *aclGetRecentErrMsg(void);` — this thread's failed-call messages since the previous
/// call, newest first, one per line; NULL when there are none. The string stays valid until the
/// next call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    guard_or("aclGetRecentErrMsg", std::ptr::null(), || {
        Ok(super::take_recent_messages())
    })
}

fn check_level(level: i32) -> crate::Result<()> {
    if level == 0 {
        Ok(())
    } else {
        Err(Error::invalid_param(format!("invalid aclrtLastErrLevel {level}")))
    }
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level);` — this thread's last failure code, then
/// cleared. Only `ACL_RT_THREAD_LEVEL` (0) exists; another level → `ACL_ERROR_INVALID_PARAM`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetLastError(level: i32) -> AclError {
    guard_or("aclrtGetLastError", code::INVALID_PARAM, || {
        check_level(level).map(|()| super::last_error(true))
    })
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level);` — like `aclrtGetLastError` without
/// clearing.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPeekAtLastError(level: i32) -> AclError {
    guard_or("aclrtPeekAtLastError", code::INVALID_PARAM, || {
        check_level(level).map(|()| super::last_error(false))
    })
}

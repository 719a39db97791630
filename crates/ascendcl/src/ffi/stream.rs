//! Streams and host functions: `aclrtCreateStream[WithConfig]`, `aclrtDestroyStream[Force]`,
//! `aclrtSynchronizeStream[WithTimeout]`, `aclrtStreamQuery`, `aclrtLaunchHostFunc`, and the shim's
//! own `aclshimLaunchHostFuncWithStatus` (declared in `acl/acl_shim.h`, not part of ACL).
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::{SendPtr, from_c, require, status, timeout_ms, to_c, write_out};
use crate::device;
use crate::error::{AclError, Error};

/// `aclrtHostFunc` / `aclrtCallback`: `void (*)(void *)`.
pub type HostFunc = Option<unsafe extern "C" fn(*mut c_void)>;

/// `aclshimStatusFunc`: `aclError (*)(void *)`; a non-zero result is reported by the next synchronize.
pub type StatusFunc = Option<unsafe extern "C" fn(*mut c_void) -> AclError>;

/// `aclrtStreamStatus` values.
const STREAM_STATUS_COMPLETE: i32 = 0;
const STREAM_STATUS_NOT_READY: i32 = 1;

/// # Safety
/// `stream` must be NULL or valid for a write of `aclrtStream`.
unsafe fn create(call: &'static str, stream: *mut *mut c_void, flags: u32) -> AclError {
    status(call, || {
        require(stream, "stream")?;
        let handle = device::create_stream(flags)?;
        // SAFETY: valid for writes per the caller's contract.
        unsafe { write_out(stream, "stream", to_c(handle)) }
    })
}

/// `aclError aclrtCreateStream(aclrtStream *stream);` — a new stream (own worker thread) in the
/// current context. NULL → 100000; no current context → 107002.
///
/// # Safety
/// `stream` must be NULL or valid for a write of `aclrtStream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut *mut c_void) -> AclError {
    // SAFETY: forwarded contract.
    unsafe { create("aclrtCreateStream", stream, 0) }
}

/// `aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);` —
/// as `aclrtCreateStream`; `priority` and the `ACL_STREAM_*` flags are accepted and recorded but
/// every stream runs on the CPU the same way.
///
/// # Safety
/// `stream` must be NULL or valid for a write of `aclrtStream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(
    stream: *mut *mut c_void,
    _priority: u32,
    flag: u32,
) -> AclError {
    // SAFETY: forwarded contract.
    unsafe { create("aclrtCreateStreamWithConfig", stream, flag) }
}

/// `aclError aclrtDestroyStream(aclrtStream stream);` — runs the queued work, then destroys the
/// stream. NULL → 100000; unknown/destroyed → `ACL_ERROR_RT_INVALID_HANDLE` (107017).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStream(stream: *mut c_void) -> AclError {
    status("aclrtDestroyStream", || {
        require(stream, "stream")?;
        device::destroy_stream(from_c(stream), false)
    })
}

/// `aclError aclrtDestroyStreamForce(aclrtStream stream);` — destroys the stream without running the
/// queued work (the task already running is waited for; queued events still complete).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStreamForce(stream: *mut c_void) -> AclError {
    status("aclrtDestroyStreamForce", || {
        require(stream, "stream")?;
        device::destroy_stream(from_c(stream), true)
    })
}

/// `aclError aclrtSynchronizeStream(aclrtStream stream);` — waits until everything queued on the
/// stream (NULL = the current context's default stream) has run; returns the first error a task
/// produced since the previous synchronize.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStream(stream: *mut c_void) -> AclError {
    status("aclrtSynchronizeStream", || {
        device::stream(from_c(stream))?.synchronize(None)
    })
}

/// `aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);` — as
/// `aclrtSynchronizeStream` within `timeout` ms: −1 = forever, 0 = check once, < −1 → 107000,
/// expiry → `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046; the work stays queued).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: *mut c_void, timeout: i32) -> AclError {
    status("aclrtSynchronizeStreamWithTimeout", || {
        let limit = timeout_ms(timeout)?;
        device::stream(from_c(stream))?.synchronize(limit)
    })
}

/// `aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);` — non-blocking:
/// `ACL_STREAM_STATUS_COMPLETE` (0) when all queued work has run, else `ACL_STREAM_STATUS_NOT_READY` (1).
///
/// # Safety
/// `status` must be NULL or valid for a write of a C `enum` (`int`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamQuery(stream: *mut c_void, status: *mut i32) -> AclError {
    super::status("aclrtStreamQuery", || {
        require(status, "status")?;
        let s = device::stream(from_c(stream))?;
        let value = if s.is_idle() {
            STREAM_STATUS_COMPLETE
        } else {
            STREAM_STATUS_NOT_READY
        };
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(status, "status", value) }
    })
}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args);` — enqueues
/// `fn(args)` on `stream` (NULL = default stream); it runs on the stream's worker thread after
/// earlier work and before later work. NULL `fn` → 100000.
///
/// # Safety
/// `fn` must be safe to call once with `args` from another thread at any time until the stream is
/// synchronized or destroyed; it must not synchronize or destroy its own stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchHostFunc(
    stream: *mut c_void,
    r#fn: HostFunc,
    args: *mut c_void,
) -> AclError {
    status("aclrtLaunchHostFunc", || {
        let f = r#fn.ok_or_else(|| Error::invalid_param("fn is NULL"))?;
        let s = device::stream(from_c(stream))?;
        let args = SendPtr(args);
        s.enqueue_replayable(move || {
            // SAFETY: the caller guarantees `f(args)` may be called now, on this thread.
            unsafe { f(args.get()) };
            Ok(())
        })
    })
}

/// `aclError aclshimLaunchHostFuncWithStatus(aclrtStream stream, aclshimStatusFunc fn, void *args);`
/// (shim extension) — as `aclrtLaunchHostFunc`, but `fn` returns an `aclError`: a non-zero value is
/// the stream's error, reported by its next synchronize.
///
/// # Safety
/// As `aclrtLaunchHostFunc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshimLaunchHostFuncWithStatus(
    stream: *mut c_void,
    r#fn: StatusFunc,
    args: *mut c_void,
) -> AclError {
    status("aclshimLaunchHostFuncWithStatus", || {
        let f = r#fn.ok_or_else(|| Error::invalid_param("fn is NULL"))?;
        let s = device::stream(from_c(stream))?;
        let args = SendPtr(args);
        s.enqueue_fn(move || {
            // SAFETY: the caller guarantees `f(args)` may be called now, on this thread.
            match unsafe { f(args.get()) } {
                0 => Ok(()),
                code => Err(Error::new(code, "host function on the stream returned an error")),
            }
        })
    })
}

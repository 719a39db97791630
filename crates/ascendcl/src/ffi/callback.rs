//! Host callbacks of the subscription model: `aclrtSubscribeReport`, `aclrtLaunchCallback`,
//! `aclrtProcessReport`, `aclrtUnSubscribeReport` (the core is [`crate::callback`]).
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::stream::HostFunc;
use super::{SendPtr, from_c, status};
use crate::callback;
use crate::device;
use crate::error::{AclError, Error};

/// `aclrtCallbackBlockType` values.
const CALLBACK_NO_BLOCK: i32 = 0;
const CALLBACK_BLOCK: i32 = 1;

/// `aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);` — binds the thread
/// `threadId` (its `pthread_self()` value) to `stream` (NULL = default stream): the stream's
/// callbacks run in that thread's `aclrtProcessReport`. A stream already bound →
/// `ACL_ERROR_RT_STREAM_SUBSCRIBE` (107011); a thread serving another device's streams, or a
/// 1025th thread → `ACL_ERROR_RT_PARAM_INVALID` (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSubscribeReport(threadId: u64, stream: *mut c_void) -> AclError {
    status("aclrtSubscribeReport", || {
        callback::subscribe(threadId, &*device::stream(from_c(stream))?)
    })
}

/// `aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);` — removes the binding;
/// callbacks of the stream handed over but not run yet are dropped (a blocking one lets its stream
/// go on, which reports `ACL_ERROR_RT_STREAM_NO_CB_REG` at its next synchronize). Stream not bound
/// → 107015; bound to another thread → `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnSubscribeReport(threadId: u64, stream: *mut c_void) -> AclError {
    status("aclrtUnSubscribeReport", || {
        callback::unsubscribe(threadId, &*device::stream(from_c(stream))?)
    })
}

/// `aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType
/// blockType, aclrtStream stream);` — queues `fn(userData)` on `stream`; when the stream reaches
/// it, the subscribed thread runs it in `aclrtProcessReport`. `ACL_CALLBACK_BLOCK`: later work on
/// the stream waits until it has run. NULL `fn` or another `blockType` → 100000; no thread bound
/// to the stream → `ACL_ERROR_RT_STREAM_NO_CB_REG` (107015).
///
/// # Safety
/// `fn` must be safe to call once with `userData` from the subscribed thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchCallback(
    r#fn: HostFunc,
    userData: *mut c_void,
    blockType: i32,
    stream: *mut c_void,
) -> AclError {
    status("aclrtLaunchCallback", || {
        let f = r#fn.ok_or_else(|| Error::invalid_param("fn is NULL"))?;
        let block = match blockType {
            CALLBACK_NO_BLOCK => false,
            CALLBACK_BLOCK => true,
            other => {
                return Err(Error::invalid_param(format!(
                    "blockType {other} is neither ACL_CALLBACK_NO_BLOCK (0) nor ACL_CALLBACK_BLOCK (1)"
                )));
            }
        };
        let s = device::stream(from_c(stream))?;
        let args = SendPtr(userData);
        callback::launch(
            &s,
            // SAFETY: the caller guarantees `f(userData)` may be called once on the subscribed
            // thread, which is where process() runs it.
            Box::new(move || unsafe { f(args.get()) }),
            block,
        )
    })
}

/// `aclError aclrtProcessReport(int32_t timeout);` — waits up to `timeout` ms (−1 = for ever) for
/// callbacks of the streams bound to the calling thread and runs them. `timeout` 0 or below −1 →
/// 100000; the thread bound to no stream → `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012); nothing
/// within the time → `ACL_ERROR_RT_REPORT_TIMEOUT` (507012).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtProcessReport(timeout: i32) -> AclError {
    status("aclrtProcessReport", || {
        let limit = match timeout {
            -1 => None,
            ms if ms > 0 => Some(std::time::Duration::from_millis(ms as u64)),
            ms => {
                return Err(Error::invalid_param(format!(
                    "invalid timeout {ms} ms (use -1 or a positive value)"
                )));
            }
        };
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        callback::process(me, limit)
    })
}

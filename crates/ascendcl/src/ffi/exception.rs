//! Task exception reporting: `aclrtSetExceptionInfoCallback` and the `aclrtGet*FromExceptionInfo`
//! readers (the core is [`crate::exception`]).
#![allow(non_snake_case)]

use super::{guard_or, status};
use crate::error::{AclError, Error};
use crate::exception::{self, Callback, ExceptionInfo};

/// `aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);` — sets the
/// process-wide function called when a task of any stream fails (a kernel block faulted or
/// trapped, a host function reported an error), on the stream's worker thread, before the stream's
/// next synchronize returns the error; NULL removes it. Always 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetExceptionInfoCallback(callback: Option<Callback>) -> AclError {
    status("aclrtSetExceptionInfoCallback", || {
        exception::set_callback(callback);
        Ok(())
    })
}

/// One field of a non-NULL `info`; 0xFFFFFFFF (logged) for NULL.
fn field(call: &'static str, info: *const ExceptionInfo, get: impl FnOnce(&ExceptionInfo) -> u32) -> u32 {
    guard_or(call, u32::MAX, || {
        // SAFETY: a non-NULL info is what the runtime passed to the callback (valid during it).
        let info = unsafe { info.as_ref() }.ok_or_else(|| Error::invalid_param("info is NULL"))?;
        Ok(get(info))
    })
}

/// `uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info);` — the failed task's
/// position on its stream (0 for the first task ever queued there).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetTaskIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    field("aclrtGetTaskIdFromExceptionInfo", info, |i| i.task_id)
}

/// `uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info);` — the stream's
/// number (streams are numbered from 0 in creation order, process wide).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetStreamIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    field("aclrtGetStreamIdFromExceptionInfo", info, |i| i.stream_id)
}

/// `uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info);` — the kernel
/// thread id of the stream's worker that ran the task.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetThreadIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    field("aclrtGetThreadIdFromExceptionInfo", info, |i| i.thread_id)
}

/// `uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info);` — the stream's
/// device.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetDeviceIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    field("aclrtGetDeviceIdFromExceptionInfo", info, |i| i.device_id)
}

/// `uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info);` — the error the
/// task produced (what the stream's synchronize returns).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetErrorCodeFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    field("aclrtGetErrorCodeFromExceptionInfo", info, |i| i.error_code)
}

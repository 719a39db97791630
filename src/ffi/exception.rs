//! C entry points of `host/utils/shmem_host_exception.h` (newer original releases): exception
//! reporting through the ACL runtime's exception callback (core: `runtime::exception`).

use std::ffi::c_int;

use super::guard;
use super::types::*;
use aclshmem_core::runtime::exception;

/// Registers the library's exception callback with the ACL runtime (`aclrtSetExceptionInfoCallback`,
/// process wide): when a task of a stream fails (a kernel block faulted or trapped, an on-stream
/// call failed), the library records what failed and then calls `callback` (if not NULL) with the
/// runtime's exception info, on the stream's thread. `level` (`ACLSHMEMX_EXCEPTION_REPORT_INFO` or
/// `_DEBUG`) is what `aclshmemx_report_exception` logs. Calling it again replaces the callback and
/// the level; finalize removes the runtime callback and forgets the record. Not collective; may be
/// called before init.
///
/// Returns 0; `ACLSHMEM_INVALID_PARAM` for another level; `ACLSHMEM_NOT_SUPPORTED` when the
/// process's ACL runtime has no exception callback; `ACLSHMEM_INNER_ERROR` when it refuses it.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_enable_exception_report(
    callback: aclshmemx_exception_info_callback_t,
    level: aclshmemx_exception_report_level_t,
) -> c_int {
    guard("aclshmemx_enable_exception_report", || {
        exception::enable(callback, level).map(|()| 0)
    })
}

/// At a safe point (after a stream synchronize): logs the last failed task recorded since the
/// previous report (task, stream, device, thread, error; at DEBUG also the current instance's PE,
/// heap and transports), once. Returns 0, also when nothing is pending or reporting is not enabled.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_report_exception() -> c_int {
    guard("aclshmemx_report_exception", || exception::report().map(|()| 0))
}

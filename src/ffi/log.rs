//! C entry points of `host/utils/shmem_log.h` (spec 8.8).

use std::ffi::{c_char, c_int};

use super::guard;
use aclshmem_core::logging;

/// Installs a process-wide log sink receiving every message (whatever the level) as
/// `func(level, msg)`, level 0 debug .. 4 fatal; `msg` is valid during the call only. Only the first
/// non-NULL function is kept. Always returns 0.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_set_extern_logger(
    func: Option<unsafe extern "C" fn(level: c_int, msg: *const c_char)>,
) -> i32 {
    guard("aclshmemx_set_extern_logger", || {
        logging::set_extern(func);
        Ok(0)
    })
}

/// Sets the log threshold (0 debug, 1 info, 2 warn, 3 error, 4 fatal). SHMEM_LOG_LEVEL (DEBUG, INFO,
/// WARN, ERROR, FATAL), when set, replaces `level`. Returns 0 or `ACLSHMEM_INVALID_VALUE` when the
/// resulting level is outside 0..4. Init resets the level to ERROR (subject to SHMEM_LOG_LEVEL).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_log_level(level: c_int) -> i32 {
    guard("aclshmemx_set_log_level", || logging::set_level(level).map(|_| 0))
}

/// Logs `message` at `level` (0 debug .. 4 fatal; others clamped) as coming from `file`:`line`,
/// through the library's logger (its threshold, sink and extern logger). What the C++ logging
/// macros of `shmemi_host_common.h` (`SHM_LOG_ERROR`, `ACLSHMEM_CHECK_RET`, ...) call; NULL
/// `message` logs nothing, NULL `file` logs "?".
///
/// # Safety
/// `file` and `message` must be NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_dev_log(
    level: c_int,
    file: *const c_char,
    line: c_int,
    message: *const c_char,
) {
    guard("aclshmemx_dev_log", || {
        if message.is_null() {
            return Ok(());
        }
        // SAFETY: NUL-terminated strings per this function's contract.
        let (msg, file) = unsafe {
            (
                std::ffi::CStr::from_ptr(message).to_string_lossy(),
                if file.is_null() {
                    "?".into()
                } else {
                    std::ffi::CStr::from_ptr(file).to_string_lossy()
                },
            )
        };
        logging::log_from(level, &file, u32::try_from(line).unwrap_or(0), &msg);
        Ok(())
    })
}

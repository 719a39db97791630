//! Error codes of the ACL runtime (values from `acl_base.h` and `error_codes/rt_error_codes.h`) and
//! the one error type every core function returns.

use std::fmt;

/// `aclError`: `typedef int aclError;`.
pub type AclError = i32;

/// The codes this implementation returns (a subset of the full tables in the headers).
pub mod code {
    use super::AclError;

    pub const SUCCESS: AclError = 0;
    pub const INVALID_PARAM: AclError = 100000;
    pub const REPEAT_INITIALIZE: AclError = 100002;
    pub const REPEAT_FINALIZE: AclError = 100037;
    pub const RT_PARAM_INVALID: AclError = 107000;
    pub const RT_INVALID_DEVICEID: AclError = 107001;
    pub const RT_CONTEXT_NULL: AclError = 107002;
    pub const RT_EVENT_TIMESTAMP_INVALID: AclError = 107006;
    pub const RT_EVENT_TIMESTAMP_REVERSAL: AclError = 107007;
    pub const RT_STREAM_SUBSCRIBE: AclError = 107011;
    pub const RT_THREAD_SUBSCRIBE: AclError = 107012;
    pub const RT_STREAM_NO_CB_REG: AclError = 107015;
    pub const RT_INVALID_HANDLE: AclError = 107017;
    pub const RT_WAIT_TIMEOUT: AclError = 107019;
    pub const RT_FEATURE_NOT_SUPPORT: AclError = 207000;
    pub const RT_MEMORY_ALLOCATION: AclError = 207001;
    pub const RT_MEMORY_FREE: AclError = 207002;
    pub const RT_NO_STREAM_RESOURCE: AclError = 207008;
    pub const RT_INTERNAL_ERROR: AclError = 507000;
    pub const RT_REPORT_TIMEOUT: AclError = 507012;
    pub const RT_STREAM_SYNC_TIMEOUT: AclError = 507046;
    pub const RT_EVENT_SYNC_TIMEOUT: AclError = 507047;
}

/// A failed call: the ACL code it returns and a message for `aclGetRecentErrMsg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: AclError,
    message: String,
}

impl Error {
    pub fn new(code: AclError, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// `ACL_ERROR_INVALID_PARAM` (100000): NULL pointer, zero size, invalid enum at the ACL layer.
    pub fn invalid_param(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAM, message)
    }

    /// `ACL_ERROR_RT_PARAM_INVALID` (107000): a parameter rejected by the runtime layer.
    pub fn rt_param(message: impl Into<String>) -> Self {
        Self::new(code::RT_PARAM_INVALID, message)
    }

    /// `ACL_ERROR_RT_CONTEXT_NULL` (107002): the calling thread has no current device/context.
    pub fn no_context() -> Self {
        Self::new(
            code::RT_CONTEXT_NULL,
            "no current context on this thread (call aclrtSetDevice first)",
        )
    }

    /// `ACL_ERROR_RT_INVALID_HANDLE` (107017): a handle that was never created or already destroyed.
    pub fn bad_handle(what: &str) -> Self {
        Self::new(
            code::RT_INVALID_HANDLE,
            format!("invalid or destroyed {what} handle"),
        )
    }

    pub fn code(&self) -> AclError {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (error {})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

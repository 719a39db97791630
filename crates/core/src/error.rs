//! The one error type of the library and its mapping to `aclshmem_error_code_t`.

use thiserror::Error;

/// `aclshmem_error_code_t` values (spec 4.1). Pinned by `tests/abi.rs`.
pub mod code {
    pub const SUCCESS: i32 = 0;
    pub const INVALID_PARAM: i32 = -1;
    pub const INVALID_VALUE: i32 = -2;
    pub const SMEM_ERROR: i32 = -3;
    pub const INNER_ERROR: i32 = -4;
    pub const NOT_INITED: i32 = -5;
    pub const BOOTSTRAP_ERROR: i32 = -6;
    pub const TIMEOUT_ERROR: i32 = -7;
    pub const MALLOC_FAILED: i32 = -8;
    pub const DL_FUNC_FAILED: i32 = -9;
    pub const INNER_TIMEOUT: i32 = -10;
    pub const UNDER_API_UNLOAD: i32 = -11;
    pub const NOT_SUPPORTED: i32 = -100;
}

/// Every failure the core can report. The message is what goes to the log; `code()` is what a C
/// caller sees.
#[derive(Debug, Error)]
pub enum Error {
    #[error("invalid parameter: {0}")]
    InvalidParam(String),
    #[error("invalid value: {0}")]
    InvalidValue(String),
    #[error("shared-memory error: {0}")]
    Smem(String),
    #[error("internal error: {0}")]
    Inner(String),
    #[error("library not initialised")]
    NotInited,
    /// A host name could not be resolved (the original reports ACLSHMEM_NOT_INITED for it).
    #[error("{0}")]
    Resolve(String),
    #[error("bootstrap error: {0}")]
    Bootstrap(String),
    #[error("timeout: {0}")]
    Timeout(String),
    #[error("allocation failed: {0}")]
    MallocFailed(String),
    #[error("not supported: {0}")]
    NotSupported(String),
}

impl Error {
    /// The `aclshmem_error_code_t` value of this error.
    pub fn code(&self) -> i32 {
        match self {
            Error::InvalidParam(_) => code::INVALID_PARAM,
            Error::InvalidValue(_) => code::INVALID_VALUE,
            Error::Smem(_) => code::SMEM_ERROR,
            Error::Inner(_) => code::INNER_ERROR,
            Error::NotInited | Error::Resolve(_) => code::NOT_INITED,
            Error::Bootstrap(_) => code::BOOTSTRAP_ERROR,
            Error::Timeout(_) => code::TIMEOUT_ERROR,
            Error::MallocFailed(_) => code::MALLOC_FAILED,
            Error::NotSupported(_) => code::NOT_SUPPORTED,
        }
    }

    /// The internal error a panic caught at a C boundary becomes: its message, when the payload
    /// is one (`panic!` with a literal or a formatted string).
    #[cold]
    pub fn from_panic(panic: Box<dyn std::any::Any + Send>) -> Error {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Error::Inner(format!("panic: {what}"))
    }
}

/// An invalid environment variable is an invalid value; the message names it and its value.
impl From<crate::config::ConfigError> for Error {
    fn from(e: crate::config::ConfigError) -> Self {
        Error::InvalidValue(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => Error::Timeout(e.to_string()),
            _ => Error::Bootstrap(e.to_string()),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The error of a thread the library could not start (`std::thread::Builder::spawn`): an internal
/// error naming the thread and the likely limit, not the timeout that EAGAIN would map to.
pub fn thread_error(name: &str, e: std::io::Error) -> Error {
    Error::Inner(format!(
        "cannot start the library's {name} thread: {e} (the limit of processes and threads, `ulimit -u`, \
         or of memory, reached?)"
    ))
}

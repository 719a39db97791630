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

    /// This error as one line another PE turns back into the same kind of error
    /// ([`Error::from_wire`]): its code, a space, its own text. For exchanges in which every PE
    /// reports its outcome, so all fail alike (a malformed setting on one PE is an invalid value
    /// on every PE).
    pub fn to_wire(&self) -> String {
        format!("{} {}", self.code(), self.detail())
    }

    /// The error PE `pe` reported as [`Error::to_wire`] text (`default`'s kind for text that is
    /// not one), its message naming the PE.
    pub fn from_wire(text: &str, pe: usize, default: i32) -> Error {
        let (code, why) = text
            .split_once(' ')
            .and_then(|(c, w)| Some((c.parse().ok()?, w)))
            .unwrap_or((default, text));
        Error::from_code(code, format!("PE {pe}: {why}"))
    }

    /// The error's own text, without the kind's prefix of its message.
    fn detail(&self) -> String {
        match self {
            Error::InvalidParam(m)
            | Error::InvalidValue(m)
            | Error::Smem(m)
            | Error::Inner(m)
            | Error::Resolve(m)
            | Error::Bootstrap(m)
            | Error::Timeout(m)
            | Error::MallocFailed(m)
            | Error::NotSupported(m) => m.clone(),
            Error::NotInited => self.to_string(),
        }
    }

    /// An error of another PE, received as its code and message: the same kind of error here
    /// (codes without a kind of their own, and unknown ones, are internal errors).
    fn from_code(code: i32, msg: String) -> Error {
        match code {
            code::INVALID_PARAM => Error::InvalidParam(msg),
            code::INVALID_VALUE => Error::InvalidValue(msg),
            code::SMEM_ERROR => Error::Smem(msg),
            code::NOT_INITED => Error::Resolve(msg),
            code::BOOTSTRAP_ERROR => Error::Bootstrap(msg),
            code::TIMEOUT_ERROR => Error::Timeout(msg),
            code::MALLOC_FAILED => Error::MallocFailed(msg),
            code::NOT_SUPPORTED => Error::NotSupported(msg),
            _ => Error::Inner(msg),
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

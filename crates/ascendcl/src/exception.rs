//! Task exceptions (`aclrtSetExceptionInfoCallback`): when a job of a stream fails (a kernel
//! block faulted, a host function returned an error), the process-wide callback, if one is set, is
//! called on the stream's worker thread with what failed, before the stream's next synchronize
//! reports the error.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// `aclrtExceptionInfo` (opaque to programs; read through the `aclrtGet*FromExceptionInfo` calls).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ExceptionInfo {
    pub task_id: u32,
    pub stream_id: u32,
    pub thread_id: u32,
    pub device_id: u32,
    pub error_code: u32,
}

/// `aclrtExceptionInfoCallback`.
pub type Callback = unsafe extern "C" fn(*mut ExceptionInfo);

static CALLBACK: Mutex<Option<Callback>> = Mutex::new(None);

/// Sets (or, with `None`, clears) the process-wide callback.
pub fn set_callback(cb: Option<Callback>) {
    *CALLBACK.lock().unwrap_or_else(|p| p.into_inner()) = cb;
}

/// Calls the callback, if any, with `info` (outside the lock: the callback may set another).
pub fn raise(mut info: ExceptionInfo) {
    let cb = *CALLBACK.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(cb) = cb {
        // SAFETY: the program registered this function for exactly this call; the info lives until
        // it returns.
        unsafe { cb(&mut info) };
    }
}

/// A small number per stream, in creation order (`aclrtExceptionInfo`'s stream id).
pub fn next_stream_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The calling thread's kernel thread id.
pub fn thread_id() -> u32 {
    // SAFETY: gettid has no preconditions.
    (unsafe { libc::gettid() }) as u32
}

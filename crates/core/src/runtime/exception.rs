//! `aclshmemx_enable_exception_report` / `aclshmemx_report_exception` (newer original releases):
//! the library registers its own callback with the ACL runtime (`aclrtSetExceptionInfoCallback`),
//! keeps a snapshot of the last failed task (task, stream, thread, device, error code) and forwards
//! the runtime's exception info to the program's callback, if it gave one; at a safe point the
//! program asks for a report, which logs the snapshot once (INFO) and, at DEBUG, the state of the
//! current instance and its transports.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::util::Locked;

/// The program's callback: the runtime's exception info, opaque.
pub type UserCallback = unsafe extern "C" fn(*mut c_void);

/// `ACLSHMEMX_EXCEPTION_REPORT_INFO` / `_DEBUG`.
pub const REPORT_INFO: c_int = 0;
pub const REPORT_DEBUG: c_int = 1;

#[derive(Default)]
struct State {
    /// The runtime calls [`trampoline`] (set by this module).
    registered: bool,
    user: Option<UserCallback>,
    debug: bool,
    /// The last failed task not yet reported: task, stream, thread, device, error code.
    pending: Option<[u32; 5]>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The runtime's exception callback: record, then forward to the program's callback.
unsafe extern "C" fn trampoline(info: *mut c_void) {
    let fields = crate::acl::exception_fields(info);
    let user = {
        let mut g = STATE.locked();
        let s = g.get_or_insert_with(State::default);
        s.pending = Some(fields);
        s.user
    };
    if let Some(user) = user {
        // SAFETY: the program registered this callback for the runtime's info, valid during the call.
        unsafe { user(info) };
    }
}

/// `aclshmemx_enable_exception_report`: (re)configures the program's callback and the level, and
/// registers this module's callback with the runtime.
pub fn enable(user: Option<UserCallback>, level: c_int) -> Result<()> {
    let debug = match level {
        REPORT_INFO => false,
        REPORT_DEBUG => true,
        _ => {
            return Err(Error::InvalidParam(format!(
                "level {level} is neither ACLSHMEMX_EXCEPTION_REPORT_INFO (0) nor _DEBUG (1)"
            )));
        }
    };
    let mut g = STATE.locked();
    match crate::acl::set_exception_callback(Some(trampoline)) {
        None => {
            return Err(Error::NotSupported(
                "the process's ACL runtime has no aclrtSetExceptionInfoCallback".into(),
            ));
        }
        Some(0) => {}
        Some(rc) => {
            return Err(Error::Inner(format!(
                "aclrtSetExceptionInfoCallback failed with error {rc}"
            )));
        }
    }
    let s = g.get_or_insert_with(State::default);
    s.registered = true;
    s.user = user;
    s.debug = debug;
    Ok(())
}

/// `aclshmemx_report_exception`: logs the pending snapshot, once; nothing when none is pending.
pub fn report() -> Result<()> {
    let (pending, debug) = {
        let mut g = STATE.locked();
        match g.as_mut() {
            Some(s) => (s.pending.take(), s.debug),
            None => (None, false),
        }
    };
    let Some([task, stream, thread, device, code]) = pending else {
        return Ok(());
    };
    let mut msg = format!(
        "runtime exception: task {task} of stream {stream} on device {device} (thread {thread}) failed with error {code}"
    );
    if debug {
        match super::current() {
            Ok(inst) => msg.push_str(&format!(
                "; instance {}: PE {} of {}, device heap {:#x} + {} bytes, transports: {}",
                inst.id(),
                inst.my_pe(),
                inst.n_pes(),
                inst.device().base() as usize,
                inst.device().size(),
                inst.routes().describe()
            )),
            Err(_) => msg.push_str("; no instance is initialised"),
        }
    }
    log::error!("{msg}");
    crate::logging::write_stderr(&format!("aclshmem: {msg}\n"));
    Ok(())
}

/// Finalize: the runtime's callback is cleared if this module set it, and the state goes.
pub fn clear() {
    let mut g = STATE.locked();
    if g.as_ref().is_some_and(|s| s.registered) {
        let _ = crate::acl::set_exception_callback(None);
    }
    *g = None;
}

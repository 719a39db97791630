//! `aclInit` / `aclFinalize`: the process-wide initialisation state machine.
//!
//! init → (init again: counted, `ACL_ERROR_REPEAT_INITIALIZE`) → finalize (tears everything down
//! at once) → (finalize again: `ACL_ERROR_REPEAT_FINALIZE`) → init … — any number of cycles per process.
//! The runtime calls themselves do not require `aclInit` (they work before it, as a convenience).

use std::sync::Mutex;

use crate::device;
use crate::error::{Error, Result, code};

struct State {
    initialised: bool,
    /// `aclInit` calls since the last teardown (for `aclFinalizeReference`).
    refs: u64,
    /// The configuration of the process's first successful `aclInit` (empty: none).
    first_config: Option<Vec<u8>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    initialised: false,
    refs: 0,
    first_config: None,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `aclInit`. The configuration file (dump/profiling settings) has no effect on the CPU.
/// `config` is the content of the configuration file (empty for none): a re-initialisation after
/// a finalize whose content differs from the process's first successful `aclInit`'s is refused
/// (`ACL_ERROR_INVALID_PARAM`), as CANN's runtime does.
pub fn init(config: Vec<u8>) -> Result<()> {
    let mut s = state();
    if s.initialised {
        s.refs += 1;
        return Err(Error::new(
            code::REPEAT_INITIALIZE,
            "aclInit was already called (the call is counted; its configuration is not applied)",
        ));
    }
    if s.first_config.as_ref().is_some_and(|first| *first != config) {
        return Err(Error::new(
            code::INVALID_PARAM,
            "aclInit after aclFinalize with another configuration than the process's first aclInit",
        ));
    }
    s.first_config.get_or_insert(config);
    s.refs += 1;
    s.initialised = true;
    Ok(())
}

/// True between `aclInit` and `aclFinalize`.
pub fn is_initialised() -> bool {
    state().initialised
}

/// `aclFinalize`: releases every device, context and stream at once, however many `aclInit` calls
/// preceded it. Already finalized → `ACL_ERROR_REPEAT_FINALIZE`.
pub fn finalize() -> Result<()> {
    {
        let mut s = state();
        if !s.initialised {
            return Err(Error::new(
                code::REPEAT_FINALIZE,
                "aclFinalize without a matching aclInit",
            ));
        }
        s.initialised = false;
        s.refs = 0;
    }
    device::finalize_all();
    Ok(())
}

/// `aclFinalizeReference`: drops one `aclInit` reference; the last one tears down as [`finalize`].
/// Returns the references left. None left → `ACL_ERROR_REPEAT_FINALIZE`.
pub fn finalize_reference() -> Result<u64> {
    let left = {
        let mut s = state();
        if !s.initialised || s.refs == 0 {
            return Err(Error::new(code::REPEAT_FINALIZE, "no aclInit reference left"));
        }
        s.refs -= 1;
        if s.refs == 0 {
            s.initialised = false;
        }
        s.refs
    };
    if left == 0 {
        device::finalize_all();
    }
    Ok(left)
}

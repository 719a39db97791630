//! Graph capture of a stream: `aclmdlRICaptureBegin`, `aclmdlRICaptureEnd`, `aclmdlRIExecuteAsync`,
//! `aclmdlRIDestroy`, and the shim's own `aclshimLaunchHostFuncReusable` (declared in
//! `acl/acl_shim.h`): a host function that may run once per execution of a graph (libaclshmem's
//! kernel launches use it, so captured kernels replay).
//!
//! While a stream captures, the replayable work queued on it (host functions, async copies and
//! fills, notifies, cache maintenance, reusable shim functions) is recorded instead of run; work that
//! cannot be replayed (event records and waits, one-shot shim functions) is refused with
//! `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`. Executing the graph queues the recorded steps on the given
//! stream, in capture order, as ordinary stream work.
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;

use super::{SendPtr, from_c, require, status, to_c, write_out};
use crate::device;
use crate::error::{AclError, Error, Result};
use crate::handle::{Registry, next_handle};
use crate::stream::{Run, Step, step};

/// A captured graph: its steps in capture order.
struct Graph {
    steps: Vec<Step>,
}

static GRAPHS: Registry<Graph> = Registry::new();

fn lookup(ri: *mut c_void) -> Result<Arc<Graph>> {
    require(ri, "modelRI")?;
    GRAPHS.get(from_c(ri)).ok_or_else(|| Error::bad_handle("modelRI"))
}

/// `aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);` — from now on
/// replayable work queued on `stream` (NULL = default stream) is recorded, not run. `mode` (0..2) is
/// accepted; every mode records only work queued on this stream. Already capturing → 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureBegin(stream: *mut c_void, mode: i32) -> AclError {
    status("aclmdlRICaptureBegin", || {
        if !(0..=2).contains(&mode) {
            return Err(Error::invalid_param(format!(
                "mode {mode} is not an aclmdlRICaptureMode"
            )));
        }
        device::stream(from_c(stream))?.begin_capture()
    })
}

/// `aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);` — ends the capture and
/// returns the recorded work as a graph. Not capturing → 107000; NULL `modelRI` → 100000 (the
/// capture continues).
///
/// # Safety
/// `modelRI` must be NULL or valid for a write of `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureEnd(stream: *mut c_void, modelRI: *mut *mut c_void) -> AclError {
    status("aclmdlRICaptureEnd", || {
        require(modelRI, "modelRI")?;
        let steps = device::stream(from_c(stream))?.end_capture()?;
        let handle = next_handle();
        GRAPHS.insert(handle, Arc::new(Graph { steps }));
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(modelRI, "modelRI", to_c(handle)) }
    })
}

/// `aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);` — queues the graph's
/// steps on `stream` (NULL = default stream) in capture order; may be called any number of times.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIExecuteAsync(modelRI: *mut c_void, stream: *mut c_void) -> AclError {
    status("aclmdlRIExecuteAsync", || {
        let g = lookup(modelRI)?;
        let s = device::stream(from_c(stream))?;
        for st in &g.steps {
            s.enqueue_step(Arc::clone(st))?;
        }
        Ok(())
    })
}

/// `aclError aclmdlRIDestroy(aclmdlRI modelRI);` — releases the graph; executions already queued
/// still run. NULL → 100000; unknown → 107017.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDestroy(modelRI: *mut c_void) -> AclError {
    status("aclmdlRIDestroy", || {
        require(modelRI, "modelRI")?;
        GRAPHS
            .remove(from_c(modelRI))
            .map(drop)
            .ok_or_else(|| Error::bad_handle("modelRI"))
    })
}

/// `aclshimStatusFunc` and the release callback of a reusable host function.
type StatusFunc = Option<unsafe extern "C" fn(*mut c_void) -> AclError>;
type ReleaseFunc = Option<unsafe extern "C" fn(*mut c_void)>;

/// The arguments of a reusable host function, released when the last step holding them is gone.
struct Reusable {
    f: unsafe extern "C" fn(*mut c_void) -> AclError,
    args: SendPtr,
    release: ReleaseFunc,
}

impl Drop for Reusable {
    fn drop(&mut self) {
        if let Some(r) = self.release {
            // SAFETY: the caller's release callback, called once, after the last call of `f`.
            unsafe { r(self.args.get()) };
        }
    }
}

/// `aclError aclshimLaunchHostFuncReusable(aclrtStream stream, aclshimStatusFunc fn, void *args,
/// void (*release)(void *args));` — like `aclshimLaunchHostFuncWithStatus`, but `fn(args)` may be
/// called more than once (once per execution of a graph that captured it), and `release(args)` (if
/// not NULL) is called once when it will not be called again: after its single run when the stream
/// was not capturing, when the graph is destroyed otherwise (or at once when queuing fails).
///
/// # Safety
/// `fn` must be safe to call with `args` from another thread, any number of times, until `release`
/// is called; it must not synchronize or destroy its own stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshimLaunchHostFuncReusable(
    stream: *mut c_void,
    r#fn: StatusFunc,
    args: *mut c_void,
    release: ReleaseFunc,
) -> AclError {
    // owns `args` from here: released on every path
    let held = r#fn.map(|f| Reusable {
        f,
        args: SendPtr(args),
        release,
    });
    status("aclshimLaunchHostFuncReusable", || {
        let Some(held) = held else {
            if let Some(r) = release {
                // SAFETY: the caller's release callback, called once.
                unsafe { r(args) };
            }
            return Err(Error::invalid_param("fn is NULL"));
        };
        let s = device::stream(from_c(stream))?;
        s.enqueue_step(step(move |run| {
            // the whole `Reusable` moves into the step (its fields alone are Copy): released with it
            let h = &held;
            if run == Run::Cancel {
                return Ok(());
            }
            // SAFETY: the caller guarantees `f(args)` may be called now, on this thread.
            match unsafe { (h.f)(h.args.get()) } {
                0 => Ok(()),
                code => Err(Error::new(code, "host function on the stream returned an error")),
            }
        }))
    })
}

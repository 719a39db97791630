//! Virtual devices, contexts and the stream registry.
//!
//! `set_device` counts references per device and binds the device's default context (created on
//! first use, with its own default stream) to the calling thread. The current context is per thread.
//! A reset to zero, `destroy_context` and `finalize_all` drain and stop every stream of the
//! context; a thread whose current context went away has no context any more.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::config;
use crate::error::{Error, Result, code};
use crate::handle::{Registry, next_handle};
use crate::stream::Stream;

/// A context: a device binding plus its default stream.
pub struct Context {
    handle: usize,
    device: i32,
    explicit: bool,
    alive: AtomicBool,
    default_stream: Arc<Stream>,
}

impl Context {
    fn new(device: i32, explicit: bool) -> Result<Arc<Context>> {
        let handle = next_handle();
        let default_stream = Stream::new(0, device, handle, 0)?;
        Ok(Arc::new(Context {
            handle,
            device,
            explicit,
            alive: AtomicBool::new(true),
            default_stream,
        }))
    }

    pub fn handle(&self) -> usize {
        self.handle
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    /// Created by `aclrtCreateContext` (not a device's implicit default context).
    pub fn is_explicit(&self) -> bool {
        self.explicit
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// The stream a NULL `aclrtStream` means in this context.
    pub fn default_stream(&self) -> &Arc<Stream> {
        &self.default_stream
    }
}

#[derive(Default)]
struct Slot {
    refcount: u32,
    context: Option<Arc<Context>>,
}

static DEVICES: Mutex<Option<HashMap<i32, Slot>>> = Mutex::new(None);
static CONTEXTS: Registry<Context> = Registry::new();
static STREAMS: Registry<Stream> = Registry::new();

thread_local! {
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

fn devices() -> MutexGuard<'static, Option<HashMap<i32, Slot>>> {
    DEVICES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Number of virtual devices.
pub fn device_count() -> u32 {
    config::device_count()
}

/// `ACL_ERROR_RT_INVALID_DEVICEID` unless `0 <= id < device_count()`.
pub fn check_device(id: i32) -> Result<()> {
    if id < 0 || id as u32 >= device_count() {
        return Err(Error::new(
            code::RT_INVALID_DEVICEID,
            format!("device id {id} out of range [0, {})", device_count()),
        ));
    }
    Ok(())
}

fn set_current(ctx: Option<Arc<Context>>) {
    CURRENT.with(|c| *c.borrow_mut() = ctx);
}

/// The calling thread's current context, or `ACL_ERROR_RT_CONTEXT_NULL`.
pub fn current_context() -> Result<Arc<Context>> {
    CURRENT
        .with(|c| c.borrow().clone())
        .filter(|c| c.is_alive())
        .ok_or_else(Error::no_context)
}

/// The calling thread's current device, or `ACL_ERROR_RT_CONTEXT_NULL`.
pub fn current_device() -> Result<i32> {
    current_context().map(|c| c.device)
}

/// `aclrtSetDevice`: one more reference on `id`; its default context becomes current.
pub fn set_device(id: i32) -> Result<()> {
    check_device(id)?;
    let ctx = {
        let mut guard = devices();
        let slot = guard.get_or_insert_with(HashMap::new).entry(id).or_default();
        let ctx = match &slot.context {
            Some(c) => Arc::clone(c),
            None => {
                let c = Context::new(id, false)?;
                CONTEXTS.insert(c.handle, Arc::clone(&c));
                slot.context = Some(Arc::clone(&c));
                c
            }
        };
        slot.refcount += 1;
        ctx
    };
    set_current(Some(ctx));
    Ok(())
}

/// `aclrtResetDevice` (`force == false`: one reference) / `aclrtResetDeviceForce` (all references).
/// When the count reaches zero the default context and its streams are drained and destroyed.
/// A device with no reference left → `ACL_ERROR_RT_CONTEXT_NULL`.
pub fn reset_device(id: i32, force: bool) -> Result<()> {
    check_device(id)?;
    let released = {
        let mut guard = devices();
        let slot = guard.get_or_insert_with(HashMap::new).entry(id).or_default();
        if slot.refcount == 0 {
            return Err(Error::new(
                code::RT_CONTEXT_NULL,
                format!("device {id} is not set"),
            ));
        }
        slot.refcount = if force { 0 } else { slot.refcount - 1 };
        if slot.refcount == 0 {
            slot.context.take()
        } else {
            None
        }
    };
    if let Some(ctx) = released {
        teardown(&ctx);
    }
    Ok(())
}

/// Drains and stops every stream of `ctx` and marks it dead.
fn teardown(ctx: &Arc<Context>) {
    ctx.alive.store(false, Ordering::Release);
    CONTEXTS.remove(ctx.handle);
    for s in STREAMS.remove_where(|s| s.context() == ctx.handle) {
        s.shutdown(false);
    }
    ctx.default_stream.shutdown(false);
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, ctx)) {
            *c = None;
        }
    });
}

/// `aclFinalize`: tears down every context and forgets all device references.
pub fn finalize_all() {
    let defaults: Vec<Arc<Context>> = {
        let mut guard = devices();
        guard
            .take()
            .map(|m| m.into_values().filter_map(|s| s.context).collect())
            .unwrap_or_default()
    };
    for ctx in defaults {
        teardown(&ctx);
    }
    for ctx in CONTEXTS.remove_where(|_| true) {
        teardown(&ctx);
    }
    set_current(None);
}

/// `aclrtCreateContext`: a new explicit context on `device`, made current; returns its handle.
pub fn create_context(device: i32) -> Result<usize> {
    check_device(device)?;
    let ctx = Context::new(device, true)?;
    CONTEXTS.insert(ctx.handle, Arc::clone(&ctx));
    let handle = ctx.handle;
    set_current(Some(ctx));
    Ok(handle)
}

fn lookup_context(handle: usize) -> Result<Arc<Context>> {
    CONTEXTS
        .get(handle)
        .filter(|c| c.is_alive())
        .ok_or_else(|| Error::bad_handle("context"))
}

/// `aclrtDestroyContext`: only explicit contexts; their streams are drained first.
pub fn destroy_context(handle: usize) -> Result<()> {
    let ctx = lookup_context(handle)?;
    if !ctx.explicit {
        return Err(Error::rt_param(
            "a device's default context cannot be destroyed (use aclrtResetDevice)",
        ));
    }
    teardown(&ctx);
    Ok(())
}

/// `aclrtSetCurrentContext`.
pub fn set_current_context(handle: usize) -> Result<()> {
    let ctx = lookup_context(handle)?;
    set_current(Some(ctx));
    Ok(())
}

/// `aclrtGetCurrentContext`.
pub fn current_context_handle() -> Result<usize> {
    current_context().map(|c| c.handle)
}

/// Resolves an `aclrtStream`: 0 (NULL) is the current context's default stream.
pub fn stream(handle: usize) -> Result<Arc<Stream>> {
    if handle == 0 {
        return current_context().map(|c| Arc::clone(&c.default_stream));
    }
    STREAMS.get(handle).ok_or_else(|| Error::bad_handle("stream"))
}

/// `aclrtCreateStream[WithConfig]`: a new stream in the current context; returns its handle.
pub fn create_stream(flags: u32) -> Result<usize> {
    let ctx = current_context()?;
    let handle = next_handle();
    let s = Stream::new(handle, ctx.device, ctx.handle, flags)?;
    STREAMS.insert(handle, s);
    Ok(handle)
}

/// `aclrtDestroyStream[Force]`: without `force` queued work runs first; with it, it is cancelled.
pub fn destroy_stream(handle: usize, force: bool) -> Result<()> {
    let s = STREAMS
        .remove(handle)
        .ok_or_else(|| Error::bad_handle("stream"))?;
    s.shutdown(force);
    Ok(())
}

/// `aclrtSynchronizeDevice[WithTimeout]`: waits for every stream of the current device; returns the
/// first error found (each stream's pending error is consumed).
pub fn synchronize_device(timeout: Option<Duration>) -> Result<()> {
    let device = current_device()?;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut streams: Vec<Arc<Stream>> = CONTEXTS
        .values()
        .into_iter()
        .filter(|c| c.device == device && c.is_alive())
        .map(|c| Arc::clone(&c.default_stream))
        .collect();
    streams.extend(STREAMS.values().into_iter().filter(|s| s.device() == device));
    let mut first = None;
    for s in streams {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if let Err(e) = s.synchronize(left) {
            if e.code() == code::RT_STREAM_SYNC_TIMEOUT {
                return Err(e);
            }
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

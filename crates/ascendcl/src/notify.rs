//! Notifies: one-bit flags between streams (and, through the shim's `aclshimNotifySet`, from any
//! thread, e.g. a kernel block of libaclshmem's CPU device mode).
//!
//! `record` sets the flag when its stream reaches the record; `wait_and_reset` holds its stream until
//! the flag is set, then clears it, so each record releases one wait.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, code};
use crate::stream::{Run, Stream};

/// A notify's state.
#[derive(Default)]
pub struct Notify {
    set: Mutex<bool>,
    cv: Condvar,
    /// `aclrtGetNotifyId`.
    pub id: u32,
}

impl Notify {
    pub fn new(id: u32) -> Arc<Notify> {
        Arc::new(Notify {
            id,
            ..Notify::default()
        })
    }

    fn lock(&self) -> MutexGuard<'_, bool> {
        self.set.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the flag now and wakes the waiters.
    pub fn set_now(&self) {
        *self.lock() = true;
        self.cv.notify_all();
    }

    /// Whether the flag is set.
    pub fn is_set(&self) -> bool {
        *self.lock()
    }

    /// Sets the flag once everything queued on `stream` so far has run.
    pub fn record(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        let n = Arc::clone(self);
        stream.enqueue_step(crate::stream::step(move |run| {
            if run == Run::Execute {
                n.set_now();
            }
            Ok(())
        }))
    }

    /// Later work on `stream` waits until the flag is set (at most `timeout`, else the stream
    /// reports `ACL_ERROR_RT_WAIT_TIMEOUT` at its next synchronize and goes on), then clears it.
    pub fn wait_and_reset(self: &Arc<Self>, stream: &Stream, timeout: Option<Duration>) -> Result<()> {
        let n = Arc::clone(self);
        stream.enqueue_step(crate::stream::step(move |run| {
            if run == Run::Cancel {
                return Ok(());
            }
            let deadline = timeout.map(|t| Instant::now() + t);
            let mut set = n.lock();
            while !*set {
                match deadline {
                    None => set = n.cv.wait(set).unwrap_or_else(|p| p.into_inner()),
                    Some(d) => {
                        let now = Instant::now();
                        if now >= d {
                            return Err(Error::new(code::RT_WAIT_TIMEOUT, "notify not recorded in time"));
                        }
                        set =
                            n.cv.wait_timeout(set, d - now)
                                .unwrap_or_else(|p| p.into_inner())
                                .0;
                    }
                }
            }
            *set = false;
            Ok(())
        }))
    }
}

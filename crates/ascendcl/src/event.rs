//! Events: markers recorded into a stream.
//!
//! Every record gets a sequence number; the marker job completes it (with a timestamp) when the
//! stream reaches it. A synchronize or a stream wait targets the latest record made before it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, code};
use crate::stream::{Run, Stream};

#[derive(Default)]
struct State {
    /// Sequence number of the latest record (0 = never recorded).
    recorded: u64,
    /// Highest completed sequence number.
    completed: u64,
    /// When the latest completed record completed, and its sequence number.
    stamp: Option<(u64, Instant)>,
}

/// `ACL_EVENT_SYNC`: streams may wait for the event (`aclrtStreamWaitEvent`).
pub const SYNC: u32 = 0x1;
/// `ACL_EVENT_TIME_LINE`: the event keeps timestamps (`aclrtEventElapsedTime`).
pub const TIME_LINE: u32 = 0x8;
/// `ACL_EVENT_EXTERNAL`: may not be combined with another flag.
pub const EXTERNAL: u32 = 0x20;
/// Every flag `aclrtCreateEventWithFlag` knows: `ACL_EVENT_SYNC`, `_CAPTURE_STREAM_PROGRESS`,
/// `_TIME_LINE`, `_DEVICE_USE_ONLY`, `_EXTERNAL`, `_IPC`.
pub const ALL_FLAGS: u32 = 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40;
/// The flags of an event from `aclrtCreateEvent`.
pub const PLAIN: u32 = SYNC | TIME_LINE;

/// An event handle's state.
pub struct Event {
    state: Mutex<State>,
    cv: Condvar,
    flags: u32,
}

/// Result of [`Event::query`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Complete,
    NotReady,
}

impl Event {
    /// An event as `aclrtCreateEvent` makes it.
    pub fn new() -> Arc<Event> {
        Event::with_flags(PLAIN)
    }

    /// An event with `aclrtCreateEventWithFlag`'s `flags` (checked by [`check_flags`]).
    pub fn with_flags(flags: u32) -> Arc<Event> {
        Arc::new(Event {
            state: Mutex::default(),
            cv: Condvar::new(),
            flags,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn complete(&self, seq: u64) {
        let mut s = self.lock();
        s.completed = s.completed.max(seq);
        if s.stamp.is_none_or(|(prev, _)| seq >= prev) {
            s.stamp = Some((seq, Instant::now()));
        }
        self.cv.notify_all();
    }

    /// Records the event on `stream`: it completes once everything queued there so far has run.
    pub fn record(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        let seq = {
            let mut s = self.lock();
            s.recorded += 1;
            s.recorded
        };
        let ev = Arc::clone(self);
        let queued = stream.enqueue(Box::new(move |_run: Run| {
            ev.complete(seq);
            Ok(())
        }));
        if queued.is_err() {
            self.complete(seq);
        }
        queued
    }

    /// Blocks until the latest record has completed. Never recorded: returns at once.
    /// `Some(t)` limits the wait (`ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` on expiry).
    pub fn synchronize(&self, timeout: Option<Duration>) -> Result<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = self.lock();
        let target = s.recorded;
        while s.completed < target {
            match deadline {
                None => s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(Error::new(
                            code::RT_EVENT_SYNC_TIMEOUT,
                            "event not complete in time",
                        ));
                    }
                    s = self
                        .cv
                        .wait_timeout(s, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
        Ok(())
    }

    /// `Complete` when the latest record has completed; `NotReady` while it is pending or when the
    /// event was never recorded.
    pub fn query(&self) -> Status {
        let s = self.lock();
        if s.recorded > 0 && s.completed >= s.recorded {
            Status::Complete
        } else {
            Status::NotReady
        }
    }

    /// Makes later work on `stream` wait until the event's latest record (as of now) has completed.
    /// A never-recorded event adds no wait.
    pub fn wait_on(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        if self.flags & SYNC == 0 {
            return Err(Error::rt_param(
                "the event was created without ACL_EVENT_SYNC: a stream cannot wait for it",
            ));
        }
        let target = self.lock().recorded;
        if target == 0 {
            return Ok(());
        }
        let ev = Arc::clone(self);
        stream.enqueue(Box::new(move |run| {
            if run == Run::Execute {
                let mut s = ev.lock();
                while s.completed < target {
                    s = ev.cv.wait(s).unwrap_or_else(|p| p.into_inner());
                }
            }
            Ok(())
        }))
    }

    /// Completion time of the latest record, if it has completed.
    fn timestamp(&self) -> Result<Instant> {
        if self.flags & TIME_LINE == 0 {
            return Err(Error::rt_param(
                "the event was created without ACL_EVENT_TIME_LINE: it keeps no timestamps",
            ));
        }
        let s = self.lock();
        if s.recorded == 0 {
            return Err(Error::new(code::RT_INTERNAL_ERROR, "event was never recorded"));
        }
        match s.stamp {
            Some((seq, at)) if seq == s.recorded => Ok(at),
            _ => Err(Error::new(
                code::RT_EVENT_TIMESTAMP_INVALID,
                "event has not completed yet",
            )),
        }
    }

    /// Milliseconds from `start` to `end`, both recorded and complete.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        let (a, b) = (start.timestamp()?, end.timestamp()?);
        if b < a {
            return Err(Error::new(
                code::RT_EVENT_TIMESTAMP_REVERSAL,
                "end event completed before start event",
            ));
        }
        Ok((b - a).as_secs_f64() as f32 * 1000.0)
    }
}

/// Checks `aclrtCreateEventWithFlag`'s flags: known bits only, `ACL_EVENT_EXTERNAL` alone.
pub fn check_flags(flags: u32) -> Result<()> {
    if flags & !ALL_FLAGS != 0 {
        return Err(Error::invalid_param(format!(
            "flag {flags:#x} has bits no ACL_EVENT_* flag has ({:#x})",
            flags & !ALL_FLAGS
        )));
    }
    if flags & EXTERNAL != 0 && flags != EXTERNAL {
        return Err(Error::invalid_param(format!(
            "flag {flags:#x}: ACL_EVENT_EXTERNAL cannot be combined with other flags"
        )));
    }
    Ok(())
}

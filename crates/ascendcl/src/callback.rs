//! Host callbacks of the subscription model: a program thread is bound to streams
//! (`aclrtSubscribeReport`), callbacks queued on those streams (`aclrtLaunchCallback`) are handed
//! to that thread when their stream reaches them, and the thread runs them inside
//! `aclrtProcessReport`, which it calls in a loop.
//!
//! A blocking callback holds its stream until the thread has run it; a non-blocking one lets the
//! stream go on at once. When a stream's subscription is removed (`aclrtUnSubscribeReport`, or the
//! stream is destroyed) the callbacks handed over but not yet run are dropped, and a blocking one
//! lets its stream go on with `ACL_ERROR_RT_STREAM_NO_CB_REG`, so no stream waits for a thread that
//! will never run its callback. The C layer ([`crate::ffi::stream`]) resolves handles; this module
//! holds the bindings and the queues.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, code};
use crate::stream::{Run, Stream};

/// The largest number of threads bound at once (the runtime's limit).
pub const MAX_THREADS: usize = 1024;

/// A stream as this module knows it: default streams share handle 0, so their context tells them
/// apart (handles are never reused).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StreamKey {
    handle: usize,
    context: usize,
}

impl StreamKey {
    pub fn of(s: &Stream) -> StreamKey {
        StreamKey {
            handle: s.handle(),
            context: s.context(),
        }
    }
}

/// What became of a handed-over callback.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Waiting,
    Ran,
    Dropped,
}

/// Where a blocking callback's stream waits for its outcome.
struct Done {
    outcome: Mutex<Outcome>,
    cv: Condvar,
}

impl Done {
    fn set(&self, o: Outcome) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = o;
        self.cv.notify_all();
    }

    fn wait(&self) -> Outcome {
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        while *o == Outcome::Waiting {
            o = self.cv.wait(o).unwrap_or_else(|p| p.into_inner());
        }
        *o
    }
}

/// A callback handed to its thread, not yet run.
struct Pending {
    stream: StreamKey,
    run: Box<dyn FnOnce() + Send>,
    done: Option<Arc<Done>>,
}

/// A bound thread: its device, how many streams it serves, what it has to run.
struct Bound {
    device: i32,
    streams: usize,
    queue: VecDeque<Pending>,
}

#[derive(Default)]
struct State {
    /// stream -> the thread bound to it
    streams: HashMap<StreamKey, u64>,
    threads: HashMap<u64, Bound>,
}

struct Reports {
    state: Mutex<Option<State>>,
    cv: Condvar,
}

static REPORTS: Reports = Reports {
    state: Mutex::new(None),
    cv: Condvar::new(),
};

fn lock() -> MutexGuard<'static, Option<State>> {
    REPORTS.state.lock().unwrap_or_else(|p| p.into_inner())
}

/// `aclrtSubscribeReport`: binds `thread` to stream `s`. A stream has one thread; a thread serves
/// streams of one device; at most [`MAX_THREADS`] threads.
pub fn subscribe(thread: u64, s: &Stream) -> Result<()> {
    let key = StreamKey::of(s);
    let mut g = lock();
    let st = g.get_or_insert_with(State::default);
    if let Some(&t) = st.streams.get(&key) {
        return Err(Error::new(
            code::RT_STREAM_SUBSCRIBE,
            format!("the stream is already subscribed (by thread {t:#x})"),
        ));
    }
    match st.threads.get(&thread) {
        Some(b) if b.device != s.device() => {
            return Err(Error::rt_param(format!(
                "thread {thread:#x} already serves streams of device {}, this stream is on device {}",
                b.device,
                s.device()
            )));
        }
        None if st.threads.len() >= MAX_THREADS => {
            return Err(Error::rt_param(format!(
                "{MAX_THREADS} threads are subscribed already"
            )));
        }
        _ => {}
    }
    st.threads
        .entry(thread)
        .or_insert_with(|| Bound {
            device: s.device(),
            streams: 0,
            queue: VecDeque::new(),
        })
        .streams += 1;
    st.streams.insert(key, thread);
    Ok(())
}

/// Removes stream `key`'s binding (to `thread`, when given: another thread's is an error); its
/// callbacks not yet run are dropped. A thread left with no stream is unbound.
fn unbind(key: StreamKey, thread: Option<u64>) -> Result<()> {
    let mut g = lock();
    let Some(st) = g.as_mut() else {
        return Err(not_subscribed());
    };
    let Some(&t) = st.streams.get(&key) else {
        return Err(not_subscribed());
    };
    if let Some(thread) = thread
        && thread != t
    {
        return Err(Error::new(
            code::RT_THREAD_SUBSCRIBE,
            format!("the stream is subscribed by thread {t:#x}, not {thread:#x}"),
        ));
    }
    st.streams.remove(&key);
    let mut dropped = Vec::new();
    if let Some(b) = st.threads.get_mut(&t) {
        b.streams -= 1;
        let (gone, kept): (VecDeque<Pending>, VecDeque<Pending>) =
            b.queue.drain(..).partition(|p| p.stream == key);
        b.queue = kept;
        dropped.extend(gone);
        if b.streams == 0 {
            st.threads.remove(&t);
        }
    }
    drop(g);
    for p in dropped {
        if let Some(d) = p.done {
            d.set(Outcome::Dropped);
        }
    }
    // a thread waiting in process() finds it has nothing left to serve
    REPORTS.cv.notify_all();
    Ok(())
}

/// `aclrtUnSubscribeReport`.
pub fn unsubscribe(thread: u64, s: &Stream) -> Result<()> {
    unbind(StreamKey::of(s), Some(thread))
}

/// A stream that is being destroyed: its binding, if any, goes.
pub fn forget(s: &Stream) {
    let _ = unbind(StreamKey::of(s), None);
}

fn not_subscribed() -> Error {
    Error::new(
        code::RT_STREAM_NO_CB_REG,
        "no thread is subscribed to the stream (aclrtSubscribeReport)",
    )
}

/// `aclrtLaunchCallback`: queues `f` on `s`; when the stream reaches it, it is handed to the
/// thread bound to the stream then; with `block` the stream waits until that thread has run it.
pub fn launch(s: &Stream, f: Box<dyn FnOnce() + Send>, block: bool) -> Result<()> {
    let key = StreamKey::of(s);
    if !lock().as_ref().is_some_and(|st| st.streams.contains_key(&key)) {
        return Err(not_subscribed());
    }
    s.enqueue(Box::new(move |run| {
        if run == Run::Cancel {
            return Ok(());
        }
        let done = block.then(|| {
            Arc::new(Done {
                outcome: Mutex::new(Outcome::Waiting),
                cv: Condvar::new(),
            })
        });
        {
            let mut g = lock();
            let st = g.as_mut().ok_or_else(not_subscribed)?;
            let t = *st.streams.get(&key).ok_or_else(not_subscribed)?;
            let b = st.threads.get_mut(&t).ok_or_else(not_subscribed)?;
            b.queue.push_back(Pending {
                stream: key,
                run: f,
                done: done.clone(),
            });
        }
        REPORTS.cv.notify_all();
        match done.map(|d| d.wait()) {
            Some(Outcome::Dropped) => Err(Error::new(
                code::RT_STREAM_NO_CB_REG,
                "the stream's subscription was removed before its callback ran",
            )),
            _ => Ok(()),
        }
    }))
}

/// `aclrtProcessReport` on `thread`: waits up to `timeout` (None: for ever) for callbacks of the
/// streams bound to it and runs every one that is there.
pub fn process(thread: u64, timeout: Option<Duration>) -> Result<()> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut g = lock();
    let batch: Vec<Pending> = loop {
        let Some(b) = g.as_mut().and_then(|st| st.threads.get_mut(&thread)) else {
            return Err(Error::new(
                code::RT_THREAD_SUBSCRIBE,
                format!("thread {thread:#x} is not subscribed to any stream (aclrtSubscribeReport)"),
            ));
        };
        if !b.queue.is_empty() {
            break b.queue.drain(..).collect();
        }
        g = match deadline {
            None => REPORTS.cv.wait(g).unwrap_or_else(|p| p.into_inner()),
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return Err(Error::new(
                        code::RT_REPORT_TIMEOUT,
                        format!(
                            "no callback within {} ms",
                            timeout.unwrap_or_default().as_millis()
                        ),
                    ));
                }
                REPORTS
                    .cv
                    .wait_timeout(g, d - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
    };
    drop(g);
    for p in batch {
        (p.run)();
        if let Some(d) = p.done {
            d.set(Outcome::Ran);
        }
    }
    Ok(())
}

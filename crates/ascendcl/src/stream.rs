//! A stream: an ordered queue of jobs served by one worker thread.
//!
//! Jobs run one at a time in submission order. `synchronize` waits until every job submitted before
//! the call has finished, then reports (and clears) the first error any job produced since the last
//! synchronize. A failing job does not stop the stream: later jobs still run.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, code};

/// Why a job is being called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// Normal execution on the worker thread.
    Execute,
    /// The stream was force-destroyed before the job ran: release resources, signal waiters, do no work.
    Cancel,
}

/// One unit of work. Its error, if any, is reported by the stream's next synchronize.
pub type Job = Box<dyn FnOnce(Run) -> Result<()> + Send + 'static>;

/// A replayable unit of work: what graph capture records. Called once per run (per execution of
/// the graph when captured, once otherwise); dropped when the last graph holding it is destroyed.
pub type Step = Arc<Mutex<Box<dyn FnMut(Run) -> Result<()> + Send + 'static>>>;

/// Wraps `f` as a [`Step`].
pub fn step(f: impl FnMut(Run) -> Result<()> + Send + 'static) -> Step {
    Arc::new(Mutex::new(Box::new(f)))
}

/// Runs `s` once.
pub fn run_step(s: &Step, run: Run) -> Result<()> {
    let mut f = s.lock().unwrap_or_else(|p| p.into_inner());
    (*f)(run)
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    submitted: u64,
    finished: u64,
    error: Option<Error>,
    closing: bool,
    /// While capturing (`aclmdlRICaptureBegin` .. `End`): the recorded steps, nothing runs.
    capture: Option<Vec<Step>>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// An ordered work queue with its own worker thread.
pub struct Stream {
    handle: usize,
    device: i32,
    context: usize,
    flags: u32,
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
    worker_id: ThreadId,
}

impl Stream {
    /// Creates a stream on `device`, owned by context `context`, and starts its worker.
    pub fn new(handle: usize, device: i32, context: usize, flags: u32) -> Result<Arc<Stream>> {
        let shared = Arc::new(Shared::default());
        let worker_shared = Arc::clone(&shared);
        let stream_id = crate::exception::next_stream_id();
        let worker = thread::Builder::new()
            .name(format!("acl-stream-{device}"))
            .spawn(move || serve(&worker_shared, stream_id, device))
            .map_err(|e| {
                Error::new(
                    code::RT_NO_STREAM_RESOURCE,
                    format!("cannot start stream worker: {e}"),
                )
            })?;
        let worker_id = worker.thread().id();
        Ok(Arc::new(Stream {
            handle,
            device,
            context,
            flags,
            shared,
            worker: Mutex::new(Some(worker)),
            worker_id,
        }))
    }

    pub fn handle(&self) -> usize {
        self.handle
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    pub fn context(&self) -> usize {
        self.context
    }

    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// True on this stream's own worker thread (inside one of its jobs).
    pub fn is_worker_thread(&self) -> bool {
        thread::current().id() == self.worker_id
    }

    /// Appends a job. Fails once the stream is being destroyed, and while the stream is being
    /// captured (a one-shot job cannot be replayed: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
    pub fn enqueue(&self, job: Job) -> Result<()> {
        let mut q = self.shared.lock();
        if q.closing {
            return Err(Error::bad_handle("stream"));
        }
        if q.capture.is_some() {
            return Err(Error::new(
                code::RT_FEATURE_NOT_SUPPORT,
                "this operation cannot be captured into a graph (the stream is capturing)",
            ));
        }
        q.jobs.push_back(job);
        q.submitted += 1;
        self.shared.work.notify_one();
        Ok(())
    }

    /// Appends a closure; it runs in order unless the stream is force-destroyed first.
    pub fn enqueue_fn(&self, f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        self.enqueue(Box::new(move |run| match run {
            Run::Execute => f(),
            Run::Cancel => Ok(()),
        }))
    }

    /// Appends a replayable step: recorded while the stream is capturing, else queued to run once.
    pub fn enqueue_step(&self, st: Step) -> Result<()> {
        let job: Job = {
            let mut q = self.shared.lock();
            if q.closing {
                return Err(Error::bad_handle("stream"));
            }
            if let Some(c) = q.capture.as_mut() {
                c.push(st);
                return Ok(());
            }
            let st = Arc::clone(&st);
            Box::new(move |run| run_step(&st, run))
        };
        self.enqueue(job)
    }

    /// Appends a replayable closure (see [`Stream::enqueue_step`]); it runs unless the stream is
    /// force-destroyed first.
    pub fn enqueue_replayable(&self, mut f: impl FnMut() -> Result<()> + Send + 'static) -> Result<()> {
        self.enqueue_step(step(move |run| match run {
            Run::Execute => f(),
            Run::Cancel => Ok(()),
        }))
    }

    /// `aclmdlRICaptureBegin`: later replayable work is recorded instead of run.
    pub fn begin_capture(&self) -> Result<()> {
        let mut q = self.shared.lock();
        if q.capture.is_some() {
            return Err(Error::rt_param("the stream is already capturing"));
        }
        q.capture = Some(Vec::new());
        Ok(())
    }

    /// `aclmdlRICaptureEnd`: the recorded steps; the stream runs work again.
    pub fn end_capture(&self) -> Result<Vec<Step>> {
        self.shared
            .lock()
            .capture
            .take()
            .ok_or_else(|| Error::rt_param("the stream is not capturing"))
    }

    /// Waits for every job submitted so far; `None` waits forever, `Some(0)` polls once.
    /// Returns the first error produced since the previous synchronize, or
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` when the time runs out.
    pub fn synchronize(&self, timeout: Option<Duration>) -> Result<()> {
        if self.is_worker_thread() {
            return Err(Error::rt_param(
                "a stream cannot be synchronized from one of its own tasks",
            ));
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut q = self.shared.lock();
        let target = q.submitted;
        while q.finished < target {
            match deadline {
                None => q = self.shared.done.wait(q).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(Error::new(
                            code::RT_STREAM_SYNC_TIMEOUT,
                            format!(
                                "stream still busy after {} ms",
                                timeout.unwrap_or_default().as_millis()
                            ),
                        ));
                    }
                    q = self
                        .shared
                        .done
                        .wait_timeout(q, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
        match q.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// True when every submitted job has finished (non-blocking).
    pub fn is_idle(&self) -> bool {
        let q = self.shared.lock();
        q.finished == q.submitted
    }

    /// Stops the stream. Without `force` the queued jobs run first; with `force` they are cancelled
    /// (called with [`Run::Cancel`]) and only the running job is waited for (a host callback's
    /// subscription goes first, so a blocking callback does not hold it). Idempotent. Called from
    /// the stream's own worker it does not wait (the worker exits after the current job).
    pub fn shutdown(&self, force: bool) {
        let cancelled: Vec<Job> = {
            let mut q = self.shared.lock();
            q.closing = true;
            self.shared.work.notify_all();
            if force {
                q.jobs.drain(..).collect()
            } else {
                Vec::new()
            }
        };
        if !cancelled.is_empty() {
            let n = cancelled.len() as u64;
            for job in cancelled {
                let _ = catch_unwind(AssertUnwindSafe(|| job(Run::Cancel)));
            }
            let mut q = self.shared.lock();
            q.finished += n;
            self.shared.done.notify_all();
        }
        if force {
            // a blocking host callback being run waits for its thread no longer
            crate::callback::forget(self);
        }
        if self.is_worker_thread() {
            return;
        }
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
        crate::callback::forget(self);
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.shutdown(false);
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The worker loop: run jobs in order until the stream is closing and empty. A job that fails is
/// reported to the exception callback (`crate::exception`) as task `n` (its position on the
/// stream) of stream `stream_id`.
fn serve(shared: &Shared, stream_id: u32, device: i32) {
    loop {
        let job = {
            let mut q = shared.lock();
            loop {
                if let Some(job) = q.jobs.pop_front() {
                    break Some(job);
                }
                if q.closing {
                    break None;
                }
                q = shared.work.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        let Some(job) = job else { return };
        let result = match catch_unwind(AssertUnwindSafe(|| job(Run::Execute))) {
            Ok(r) => r,
            Err(p) => Err(Error::new(
                code::RT_INTERNAL_ERROR,
                format!("stream task panicked: {}", panic_message(&*p)),
            )),
        };
        if let Err(e) = &result {
            let task_id = shared.lock().finished as u32;
            crate::exception::raise(crate::exception::ExceptionInfo {
                task_id,
                stream_id,
                thread_id: crate::exception::thread_id(),
                device_id: device.max(0) as u32,
                error_code: e.code() as u32,
            });
        }
        let mut q = shared.lock();
        q.finished += 1;
        if let Err(e) = result
            && q.error.is_none()
        {
            q.error = Some(e);
        }
        shared.done.notify_all();
    }
}

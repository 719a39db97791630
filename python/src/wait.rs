//! Waits that Ctrl-C can interrupt. A C wait cannot be left before its condition holds, and
//! Python runs its signal handlers (SIGINT's raises `KeyboardInterrupt`) only on the main thread
//! between bytecodes, so a PE blocked in a C wait ignored Ctrl-C for ever. The wait bindings
//! therefore poll the condition with the C test of the same family, with the GIL released, and
//! take the GIL back every [`SLICE`] to run the handlers (`PyErr_CheckSignals`): an exception a
//! handler raises ends the wait.
//!
//! The C semantics stay: the poll only starts once a test has shown that the arguments are good
//! and the wait would block now (a test of the opposite comparison answered yes; a test answers
//! no on bad arguments, and so it does for a set of no element). In every other case the C wait
//! itself runs: it returns at once when the condition holds, logs bad arguments as it always did,
//! and where the two tests disagree with each other because the word changed in between, it waits
//! as C does (not interruptible then). The set forms end with the C wait too once the poll saw
//! the condition hold, so their outputs (the index of `wait_until_any`, the indices of
//! `wait_until_some`) are the C function's own. Cheap checks that need no call (NULL and
//! misaligned pointers, a comparison outside 0..5, no initialised instance) send a call straight to
//! the C wait, so bad input is logged once, by the call the program made; an aligned address
//! outside the heaps is found by the tests and logged by them as well.
//!
//! Differences, documented in the README: a wait of the binding notices a switch of the current
//! instance (the C wait keeps the instance it started with, a poll would test the word against
//! the new one, so the poll pauses until the instance is current again); and the C single-word
//! wait's check that every other PE left the job (which ends it with an error after a grace
//! period) is not made by a poll.

use std::ffi::c_int;
use std::time::{Duration, Instant};

use aclshmem_abi as abi;
use pyo3::prelude::*;

use crate::ffi;

/// How long a wait polls with the GIL released before Python may run its signal handlers: the
/// longest a Ctrl-C waits to be noticed. Taking the GIL 50 times a second costs nothing a waiting
/// thread would notice.
const SLICE: Duration = Duration::from_millis(20);
/// Polls that only spin, then polls that yield the CPU until [`YIELD_FOR`], then polls with sleeps
/// doubling up to [`MAX_SLEEP`]: the shape of the library's own waits (README "Design notes"), so an
/// idle wait stops burning a core and a busy one answers within a few microseconds.
const SPINS: u32 = 64;
const YIELD_FOR: Duration = Duration::from_millis(20);
const MAX_SLEEP: Duration = Duration::from_micros(500);

/// `SIZE_MAX`: the `res_out` of `test_any` when no included element holds (or on bad arguments).
pub const NONE: usize = usize::MAX;

/// The comparison that holds exactly when `cmp` does not (`aclshmem_cmp_op_type_t`: EQ 0, NE 1,
/// GT 2, GE 3, LT 4, LE 5); None for a code outside 0..5.
pub fn negated(cmp: c_int) -> Option<c_int> {
    match cmp {
        0 => Some(1),
        1 => Some(0),
        2 => Some(5),
        5 => Some(2),
        3 => Some(4),
        4 => Some(3),
        _ => None,
    }
}

/// Whether `addr` is a non-NULL address aligned for a `T` (the words of the wait families).
pub fn aligned<T>(addr: usize) -> bool {
    addr != 0 && addr.is_multiple_of(std::mem::align_of::<T>())
}

/// Whether the current instance is initialised (before init the C wait logs and returns).
pub fn initialised() -> bool {
    // SAFETY: no arguments.
    unsafe { ffi::aclshmemx_init_status() == abi::ACLSHMEM_STATUS_IS_INITIALIZED }
}

/// The id of the current instance.
fn current_instance() -> u64 {
    // SAFETY: no arguments; the context is never NULL and lives for the process.
    unsafe { (*ffi::aclshmemx_instance_ctx_get()).id }
}

/// A wait on one word that the program wants to satisfy `cmp` (with `plausible` arguments: see
/// the module documentation). `test(c)` is the C test of comparison `c` (true: it holds); `wait`
/// the C wait, run with the GIL released when the tests cannot decide.
pub fn one(
    py: Python<'_>,
    plausible: bool,
    cmp: c_int,
    test: impl Fn(c_int) -> bool + Sync,
    wait: impl FnOnce() + Send,
) -> PyResult<()> {
    if let Some(opposite) = negated(cmp).filter(|_| plausible && initialised()) {
        // holds now: the C wait would look once and return, as this test did
        if test(cmp) {
            return Ok(());
        }
        if test(opposite) {
            // a good word that does not hold: the wait is one for the poll, which ends when the
            // C wait would (the word holds) or with Python's exception
            return poll(py, &|| test(cmp));
        }
    }
    py.allow_threads(wait);
    Ok(())
}

/// A wait on a set of words: `holds()` is a C test that answers yes when the wait would return
/// now, `blocks()` one that answers yes only for good arguments on which the wait would block
/// (called after `holds()` said no). `wait` is the C wait; it always runs in the end, with the GIL
/// released, and writes the outputs.
pub fn set<R: Send>(
    py: Python<'_>,
    plausible: bool,
    holds: impl Fn() -> bool + Sync,
    blocks: impl Fn() -> bool,
    wait: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    if plausible && initialised() && !holds() && blocks() {
        poll(py, &holds)?;
    }
    Ok(py.allow_threads(wait))
}

/// Polls `holds` (with the GIL released, in slices) until it answers yes, or until a signal
/// handler raises.
fn poll(py: Python<'_>, holds: &(dyn Fn() -> bool + Sync)) -> PyResult<()> {
    let instance = current_instance();
    let mut backoff = Backoff::new();
    loop {
        let done = py.allow_threads(|| {
            let end = Instant::now() + SLICE;
            loop {
                // a test resolves the current instance: while another thread has made another
                // one current, it would test the word against that instance (and log the error
                // each time), so the poll pauses until this wait's instance is current again
                if current_instance() == instance && holds() {
                    return true;
                }
                if Instant::now() >= end {
                    return false;
                }
                backoff.snooze();
            }
        });
        if done {
            return Ok(());
        }
        py.check_signals()?;
    }
}

/// The pause between two polls (see [`SPINS`]).
struct Backoff {
    polls: u32,
    since: Instant,
    sleep: Duration,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            polls: 0,
            since: Instant::now(),
            sleep: Duration::from_micros(1),
        }
    }

    fn snooze(&mut self) {
        if self.polls < SPINS {
            self.polls += 1;
            std::hint::spin_loop();
        } else if self.since.elapsed() < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(MAX_SLEEP);
        }
    }
}

//! The barrier-free small collectives' publish/complete ring.
//!
//! Every member owns, per buffer index, a data buffer and two words: `flag` (the call whose data
//! the buffer holds) and `pending` (a record the core uses to diagnose asymmetric calls, which the
//! protocol ignores). A call uses buffer index `seq % depth`. Every member also owns one `done`
//! word per team: the last call it completed, i.e. after which it reads nothing of any earlier call.
//!
//! Publisher of call `seq`: [`wait_done`] on every other member until it completed the buffer's
//! previous use (a call at least a ring's depth back), copy the data into the buffer, then
//! [`announce`]. Reader: [`wait_flag`], copy the data out. Every member, at the end of each call
//! (publisher or reader): [`complete`].
//!
//! Why these orderings suffice:
//! - Data: the publisher's copy is sequenced before its Release store of the flag; a reader that
//!   Acquires that flag value reads the buffer after it (no data race on the buffer).
//! - Reuse: a reader's copies of call `s` are sequenced before its Release store of `done` with a
//!   value of `s` or more; the publisher's Acquire load that sees such a value synchronizes with
//!   that store, so every reader's copy of call `s` happens-before the publisher's next overwrite
//!   of the buffer. Each `done` word is written only by its owner, with increasing calls.
//!
//! Why `done` and not a counter of acknowledgements in the publisher's memory: a reader then
//! writes only its own line (no read-modify-write of a line the publisher writes too), and a
//! publisher reads the readers' lines only when the calls it knows completed no longer cover the
//! buffer it reuses.

use crate::Word;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// The words of one buffer index of one member.
pub struct Slot<'a, W: ?Sized> {
    pub flag: &'a W,
    pub pending: &'a W,
}

impl<W: ?Sized> Clone for Slot<'_, W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W: ?Sized> Copy for Slot<'_, W> {}

/// Publisher: waits until `reached` holds for the value of a reader's `done` word (the reader
/// completed the call the publisher needs); returns that value. `snooze` may end the wait with an
/// error.
#[inline]
pub fn wait_done<W: Word + ?Sized, E>(
    done: &W,
    reached: impl Fn(u64) -> bool,
    mut snooze: impl FnMut() -> Result<(), E>,
) -> Result<u64, E> {
    loop {
        let d = done.load(Acquire);
        if reached(d) {
            return Ok(d);
        }
        snooze()?;
    }
}

/// Publisher, after copying its data into the buffer: announces call `seq` (`pending` is the
/// core's record).
#[inline]
pub fn announce<W: Word + ?Sized>(s: Slot<'_, W>, seq: u64, pending: u64) {
    s.pending.store(pending, Relaxed);
    s.flag.store(seq, Release);
}

/// Reader: waits until `flag` announces call `seq`; `snooze` gets the flag's current value and may
/// end the wait with an error.
#[inline]
pub fn wait_flag<W: Word + ?Sized, E>(
    flag: &W,
    seq: u64,
    mut snooze: impl FnMut(u64) -> Result<(), E>,
) -> Result<(), E> {
    loop {
        let f = flag.load(Acquire);
        if f == seq {
            return Ok(());
        }
        snooze(f)?;
    }
}

/// Every member, after its last read of a call: records the call (as the core encodes it) in its
/// own `done` word.
#[inline]
pub fn complete<W: Word + ?Sized>(done: &W, value: u64) {
    done.store(value, Release);
}

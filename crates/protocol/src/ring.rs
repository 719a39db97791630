//! The barrier-free small collectives' publish/acknowledge ring.
//!
//! Every member owns, per buffer index, a data buffer and three words: `flag` (the call whose data
//! the buffer holds), `ack` (acknowledgements from the readers of that call) and `pending` (the
//! number of readers expected in its low [`READERS`] bits; the high bits carry a record the core
//! uses to diagnose asymmetric calls, which the protocol ignores). A call uses buffer index
//! `seq % depth`.
//!
//! Publisher of call `seq`: [`wait_acks`] (every reader of the buffer's previous use
//! acknowledged), copy the data into the buffer, then [`announce`]. Reader: [`wait_flag`], copy the
//! data out, then [`acknowledge`].
//!
//! Why these orderings suffice:
//! - Data: the publisher's copy is sequenced before its Release store of the flag; a reader that
//!   Acquires that flag value reads the buffer after it (no data race on the buffer).
//! - Reuse: a reader's copy is sequenced before its Release increment of `ack`; the publisher's
//!   Acquire load that sees the count reach `pending` synchronizes with every increment (they form
//!   a release sequence of RMWs), so every reader's copy happens-before the publisher's next
//!   overwrite of the buffer.
//! - Reset: `ack` and `pending` are reset (Relaxed) before the flag's Release store, and the
//!   readers of the new call increment `ack` only after Acquiring that flag, so their increments
//!   come after the reset in the word's modification order. Readers of the previous use have all
//!   incremented before [`wait_acks`] returned. `pending` is only ever written by its owner, which
//!   is also the only thread comparing against it, so Relaxed is enough there.

use crate::Word;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Low bits of a `pending` word: the number of readers of the publication.
pub const READERS: u64 = 0xffff;

/// The words of one buffer index of one member.
pub struct Slot<'a, W: ?Sized> {
    pub flag: &'a W,
    pub ack: &'a W,
    pub pending: &'a W,
}

impl<W: ?Sized> Clone for Slot<'_, W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W: ?Sized> Copy for Slot<'_, W> {}

/// Publisher: waits until every reader of the buffer's previous use acknowledged it. `snooze`
/// may end the wait with an error.
#[inline]
pub fn wait_acks<W: Word + ?Sized, E>(
    s: Slot<'_, W>,
    mut snooze: impl FnMut() -> Result<(), E>,
) -> Result<(), E> {
    while s.ack.load(Acquire) < s.pending.load(Relaxed) & READERS {
        snooze()?;
    }
    Ok(())
}

/// Publisher, after copying its data into the buffer: announces call `seq` to `pending & READERS`
/// readers (`pending`'s high bits are the core's record).
#[inline]
pub fn announce<W: Word + ?Sized>(s: Slot<'_, W>, seq: u64, pending: u64) {
    s.ack.store(0, Relaxed);
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

/// Reader, after copying the data out: acknowledges the publication of `ack`'s owner.
#[inline]
pub fn acknowledge<W: Word + ?Sized>(ack: &W) {
    ack.fetch_add(1, Release);
}

//! A collective's data sent to other PEs' mailboxes ([`Transport::mail`]) in parts, and taken
//! from this PE's mailbox as the parts arrive. Used by the eager broadcast ([`super::eager`]) and
//! the node leaders' exchange of reduction partials ([`super::hier`]).
//!
//! `unsafe`: raw buffers, as the transport's calls.

use std::cell::Cell;

use crate::error::Result;
use crate::transport::{MailKey, Transport};

/// Bytes per message: a longer payload goes in parts of this size, each one tcp segment (one
/// 1 MiB message measured 970-1300 µs on 2 nodes, being fragmented, reassembled and copied).
pub(super) const PART: usize = 64 * 1024;

/// Sends `len` bytes at `src` to PE `pe`'s mailbox, part i under `key(i)`, each part with
/// `note` ([`Receiver::note`]).
///
/// # Safety
/// `src` holds `len` readable bytes.
pub(super) unsafe fn send(
    to: &dyn Transport,
    pe: usize,
    key: impl Fn(usize) -> MailKey,
    note: u64,
    src: *const u8,
    len: usize,
) -> Result<()> {
    (0..len.div_ceil(PART)).try_for_each(|i| {
        let off = i * PART;
        // SAFETY: part i lies inside the caller's `len` bytes.
        unsafe { to.mail(pe, key(i), note, src.add(off), PART.min(len - off)) }
    })
}

/// Takes the parts of one message from this PE's mailbox, in order, into a buffer of `len`
/// bytes: [`Receiver::poll`] until it says done, then [`Receiver::outcome`].
pub(super) struct Receiver {
    next: Cell<usize>,
    outcome: Cell<Option<std::result::Result<(), usize>>>,
    /// The note of every part taken so far (None: none taken; parts whose notes differ: the
    /// first part's note with every bit flipped, which no sender's note equals then).
    note: Cell<Option<u64>>,
}

impl Receiver {
    pub(super) fn new() -> Receiver {
        Receiver {
            next: Cell::new(0),
            outcome: Cell::new(None),
            note: Cell::new(None),
        }
    }

    /// The sender's note (the same on every part), once a part was taken.
    pub(super) fn note(&self) -> Option<u64> {
        self.note.get()
    }

    /// Takes the parts that arrived; true once every part is in `dst` or one had another length.
    ///
    /// # Safety
    /// `dst` holds `len` writable bytes, apart from the mailbox.
    pub(super) unsafe fn poll(
        &self,
        to: &dyn Transport,
        key: impl Fn(usize) -> MailKey,
        dst: *mut u8,
        len: usize,
    ) -> bool {
        let parts = len.div_ceil(PART);
        loop {
            let i = self.next.get();
            if i >= parts {
                self.outcome.set(Some(Ok(())));
                return true;
            }
            let off = i * PART;
            // SAFETY: part i lies inside the caller's `len` bytes.
            match unsafe { to.take_mail(key(i), dst.add(off), PART.min(len - off)) } {
                None => return false,
                Some(Ok(note)) => {
                    self.note.set(Some(match self.note.get() {
                        Some(first) if first != note => !first,
                        Some(first) => first,
                        None => note,
                    }));
                    self.next.set(i + 1)
                }
                Some(Err(n)) => {
                    self.outcome.set(Some(Err(n)));
                    return true;
                }
            }
        }
    }

    /// After [`Receiver::poll`] said done: `Err(n)` when a part held `n` bytes instead of its
    /// share of `len` (the message was of another length).
    pub(super) fn outcome(&self) -> std::result::Result<(), usize> {
        self.outcome.take().unwrap_or(Ok(()))
    }
}

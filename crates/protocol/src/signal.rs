//! Put-with-signal followed by a wait: the writer stores the data (plain stores: a `memcpy` into
//! the target's heap), then updates the target's signal word; the target waits until the signal
//! satisfies its comparison, then reads the data.
//!
//! Orderings, and why they suffice:
//! - The signal update is a Release store (`SignalOp::Set`) or a Release read-modify-write
//!   (`SignalOp::Add`): every write of the writer before it (the data) happens-before anything that
//!   acquires the value it wrote, or any later value of the word's release sequence (further adds
//!   by other writers continue that sequence, so a waiter that sees the sum of two adds has
//!   synchronised with both writers).
//! - The waiter loads the signal with Acquire: once a load returns a value some writer's update
//!   produced (or a later one in its release sequence), that writer's data writes happen-before the
//!   waiter's reads of the data. Relaxed would let the waiter's data reads see stale values on a
//!   weakly ordered CPU (AArch64, POWER) even though x86 never shows it; `tests/loom.rs` checks
//!   both the correct orderings and that a Relaxed signal is caught.
//! - The add needs only Release for the data it publishes; it is SeqCst (see [`ADD`]).
//!
//! Between processes the data and the signal live in shared mappings at different virtual
//! addresses; the hardware orders the physical locations, so the model's reasoning carries over.

use std::sync::atomic::Ordering::{self, Acquire, Release, SeqCst};

/// A word a waiter watches (any width and type the wait families take).
pub trait Watch {
    type V: Copy;
    fn load(&self, order: Ordering) -> Self::V;
}

/// A signal word in shared memory, as the writer updates it.
pub trait Signal: Watch {
    fn store(&self, value: Self::V, order: Ordering);
    fn fetch_add(&self, value: Self::V, order: Ordering) -> Self::V;
}

macro_rules! std_signal {
    ($($a:ty => $v:ty),*) => {$(
        impl Watch for $a {
            type V = $v;
            #[inline(always)]
            fn load(&self, order: Ordering) -> $v {
                <$a>::load(self, order)
            }
        }
        impl Signal for $a {
            #[inline(always)]
            fn store(&self, value: $v, order: Ordering) {
                <$a>::store(self, value, order)
            }
            #[inline(always)]
            fn fetch_add(&self, value: $v, order: Ordering) -> $v {
                <$a>::fetch_add(self, value, order)
            }
        }
    )*};
}

std_signal!(std::sync::atomic::AtomicI32 => i32, std::sync::atomic::AtomicU32 => u32,
    std::sync::atomic::AtomicI64 => i64, std::sync::atomic::AtomicU64 => u64);

/// The ordering of the signal's store (`Set`): releases the data written before it.
pub const SET: Ordering = Release;
/// The ordering of the signal's read-modify-write (`Add`): Release is what the data needs; SeqCst
/// keeps signal adds in the single total order of the other atomics of the API (all SeqCst), at no
/// cost (the same instruction as AcqRel: `lock xadd` on x86-64, `ldaddal` on AArch64).
pub const ADD: Ordering = SeqCst;
/// The ordering of the waiter's loads of the signal: acquires the data of the update it observes.
pub const WAIT: Ordering = Acquire;

/// Sets the signal to `value` after the data (the caller's writes before this call).
#[inline(always)]
pub fn set<S: Signal + ?Sized>(sig: &S, value: S::V) {
    sig.store(value, SET)
}

/// Adds `value` to the signal after the data; returns the previous value.
#[inline(always)]
pub fn add<S: Signal + ?Sized>(sig: &S, value: S::V) -> S::V {
    sig.fetch_add(value, ADD)
}

/// One look at the signal (the test form of the wait): the value, loaded with [`WAIT`].
#[inline(always)]
pub fn peek<S: Watch + ?Sized>(sig: &S) -> S::V {
    sig.load(WAIT)
}

/// Waits until `holds(value)` for a value of the signal and returns that value; `snooze` is called
/// between looks and may end the wait with an error. After it returns, the data written before the
/// update that produced the value may be read.
#[inline]
pub fn wait_until<S: Watch + ?Sized, E>(
    sig: &S,
    holds: impl Fn(S::V) -> bool,
    mut snooze: impl FnMut() -> Result<(), E>,
) -> Result<S::V, E> {
    loop {
        let v = peek(sig);
        if holds(v) {
            return Ok(v);
        }
        snooze()?;
    }
}

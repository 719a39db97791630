//! The lock-free protocols the core runs on shared memory between processes, written once over an
//! abstract 64-bit atomic word ([`Word`]; put-with-signal and its wait over [`signal::Signal`], a word
//! of the signal's width) so that the same code runs on the mapped heaps (the core
//! implements `Word` for `std::sync::atomic::AtomicU64`) and under the `loom` model checker
//! (`tests/loom.rs` wraps loom's atomics and explores every interleaving and every weak-memory
//! outcome the C/Rust memory model allows, not just what x86 does).
//!
//! Each function states which ordering each access needs and why. The waits are loops over a
//! caller-supplied `snooze` (back-off, stall warnings, timeouts and progress live in the core; the
//! model passes a yield), which may end the wait with an error.

use std::sync::atomic::Ordering;

pub mod barrier;
pub mod ring;
pub mod signal;

/// A 64-bit atomic word in shared memory.
pub trait Word {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
    fn fetch_add(&self, value: u64, order: Ordering) -> u64;
}

impl Word for std::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        std::sync::atomic::AtomicU64::load(self, order)
    }
    #[inline(always)]
    fn store(&self, value: u64, order: Ordering) {
        std::sync::atomic::AtomicU64::store(self, value, order)
    }
    #[inline(always)]
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        std::sync::atomic::AtomicU64::fetch_add(self, value, order)
    }
}

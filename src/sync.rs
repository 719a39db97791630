//! Barriers over the world team.
//!
//! Same node: a central sense-counting barrier in PE 0's copy of the team's sync-pool slot. Each PE
//! reads the generation word, then increments the arrival counter (AcqRel); the last arriver resets
//! the counter and publishes generation + 1 with Release; the others wait (spin, yield, back off)
//! until they Acquire the new generation. Every store a PE made before arriving — including puts
//! into other PEs' heaps — happens-before every PE's return: the counter's read-modify-write chain
//! carries the arrivals to the last arriver, whose Release store of the generation carries them to
//! every waiter. Across nodes the bootstrap's barrier is used instead.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::runtime::Instance;
use crate::wait::Backoff;

/// Byte offsets of the barrier words inside a team's sync-pool slot (separate cache lines).
const ARRIVE: usize = 0;
const GENERATION: usize = 64;

fn word(inst: &Instance, off: usize) -> Result<&AtomicU64> {
    let p = inst
        .device
        .peer_addr(inst.sync_pool + off, 0)
        .ok_or_else(|| Error::Inner("PE 0's heap is not mapped".into()))?;
    // SAFETY: the address lies in the sync pool reserved at init inside PE 0's mapped heap, is
    // 64-byte aligned, lives as long as the instance, and is only accessed atomically.
    Ok(unsafe { &*(p as *const AtomicU64) })
}

/// Barrier over all PEs of `inst`.
pub fn barrier_all(inst: &Instance) -> Result<()> {
    if inst.n_pes == 1 {
        std::sync::atomic::fence(Ordering::SeqCst);
        return Ok(());
    }
    if !inst.all_local {
        let _g = inst.collective.lock().unwrap_or_else(|e| e.into_inner());
        return inst.boot.barrier();
    }
    let arrive = word(inst, ARRIVE)?;
    let generation = word(inst, GENERATION)?;
    let seen = generation.load(Ordering::Acquire);
    if arrive.fetch_add(1, Ordering::AcqRel) + 1 == inst.n_pes as u64 {
        arrive.store(0, Ordering::Relaxed);
        generation.store(seen.wrapping_add(1), Ordering::Release);
        return Ok(());
    }
    let mut b = Backoff::new();
    while generation.load(Ordering::Acquire) == seen {
        b.snooze();
    }
    Ok(())
}

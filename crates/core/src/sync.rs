//! Team barriers and the team exchange area.
//!
//! Same node: a central sense-counting barrier in the sync-pool area of the team's slot, in the
//! copy of the team's first PE. Each member reads the generation word, then increments the arrival
//! counter (AcqRel); the last arriver resets the counter and publishes generation + 1 with Release;
//! the others wait (spin, yield, back off) until they Acquire the new generation. Every store a PE
//! made before arriving — puts into other PEs' heaps included — happens-before every member's
//! return: the counter's read-modify-write chain carries the arrivals to the last arriver, whose
//! Release store of the generation carries them to every waiter. Across nodes the world barrier
//! goes through the bootstrap instead.
//!
//! `unsafe`: the barrier words and exchange areas are raw addresses in the mapped heaps, turned into
//! atomics or copied after their bounds were fixed at init.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::runtime::Instance;
use crate::team::{EXCHANGE_BYTES, EXCHANGE_OFFSET, Team};
use crate::wait::Backoff;
use aclshmem_abi::SYNC_ARRAY_SIZE;

/// Byte offsets of the barrier words inside a slot's area (separate cache lines).
const ARRIVE: usize = 0;
const GENERATION: usize = 64;

/// Address of byte `off` of `slot`'s sync-pool area in world PE `pe`'s copy.
pub(crate) fn slot_addr(inst: &Instance, slot: usize, off: usize, pe: usize) -> Result<*mut u8> {
    inst.device
        .peer_addr(inst.sync_pool + slot * SYNC_ARRAY_SIZE + off, pe)
        .ok_or_else(|| {
            Error::NotSupported(format!(
                "PE {pe} is on another node: team synchronisation needs shared memory"
            ))
        })
}

fn word(inst: &Instance, slot: usize, off: usize, pe: usize) -> Result<&AtomicU64> {
    let p = slot_addr(inst, slot, off, pe)?;
    // SAFETY: the address lies in the sync pool reserved at init inside a mapped heap, is 64-byte
    // aligned, lives as long as the instance, and is only accessed atomically.
    Ok(unsafe { &*(p as *const AtomicU64) })
}

/// Barrier over the members of `team` (this PE must be one).
pub fn barrier(inst: &Instance, team: &Team) -> Result<()> {
    if team.size == 1 {
        std::sync::atomic::fence(Ordering::SeqCst);
        return Ok(());
    }
    if !inst.all_local && team.slot == 0 && team.size == inst.n_pes {
        let _g = inst.collective.lock().unwrap_or_else(|e| e.into_inner());
        return inst.boot.barrier();
    }
    let root = team.world_pe(0);
    let arrive = word(inst, team.slot, ARRIVE, root)?;
    let generation = word(inst, team.slot, GENERATION, root)?;
    let seen = generation.load(Ordering::Acquire);
    if arrive.fetch_add(1, Ordering::AcqRel) + 1 == team.size as u64 {
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

/// Barrier over all PEs of `inst`.
pub fn barrier_all(inst: &Instance) -> Result<()> {
    let world = inst.teams.lock().unwrap_or_else(|e| e.into_inner()).get(0)?;
    barrier(inst, &world)
}

/// Collective over `team`: every member publishes `data` (at most EXCHANGE_BYTES, the same length
/// everywhere); returns all members' data in team order.
pub fn exchange(inst: &Instance, team: &Team, data: &[u8]) -> Result<Vec<Vec<u8>>> {
    if data.len() > EXCHANGE_BYTES {
        return Err(Error::Inner(format!(
            "exchange of {} bytes exceeds the area",
            data.len()
        )));
    }
    let mine = slot_addr(inst, team.slot, EXCHANGE_OFFSET, inst.my_pe)?;
    // SAFETY: the exchange area of this slot in our own heap holds EXCHANGE_BYTES bytes; peers
    // read it only between the two barriers below.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), mine, data.len()) };
    barrier(inst, team)?;
    let mut out = Vec::with_capacity(team.size);
    for i in 0..team.size {
        let p = slot_addr(inst, team.slot, EXCHANGE_OFFSET, team.world_pe(i))?;
        // SAFETY: as above; every member wrote its data before the barrier.
        out.push(unsafe { std::slice::from_raw_parts(p, data.len()) }.to_vec());
    }
    barrier(inst, team)?;
    Ok(out)
}

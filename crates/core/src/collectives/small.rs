//! Barrier-free small collectives: each member publishes up to [`SMALL_MAX`] bytes in its own
//! slot area and readers poll a sequence flag, so back-to-back calls pipeline instead of paying
//! two team barriers each.
//!
//! Per member and team slot (in the sync pool, after the exchange area): DEPTH buffers used round
//! robin by sequence number, and for each buffer a flag (the sequence number it holds), an
//! acknowledgement counter and the number of readers expected. A publisher first waits until every
//! reader of the buffer's previous use acknowledged it, then copies, then stores the flag with
//! Release; a reader waits for the flag with Acquire, copies, then acknowledges (Release). With the
//! same call order on every member, a reader only ever waits for data already being published, and
//! a publisher only for readers of calls at least DEPTH back, so no wait forms a cycle.
//!
//! `unsafe`: flags and buffers are raw addresses in the mapped heaps (bounds fixed at init).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::error::Result;
use crate::instance::Instance;
use crate::sync::slot_addr;
use crate::team_table::{SMALL_OFFSET, Team};
use crate::wait::{Expired, Watch};

/// Largest payload one member publishes per call.
pub const SMALL_MAX: usize = 64;
/// Buffers per member, used round robin: a publisher may run this many calls ahead of its slowest
/// reader.
const DEPTH: usize = 16;

const FLAG: usize = 0; // [u64; DEPTH]
const ACK: usize = 8 * DEPTH; // [u64; DEPTH]
const PENDING: usize = 16 * DEPTH; // [u64; DEPTH]
const BUF: usize = 24 * DEPTH; // [[u8; SMALL_MAX]; DEPTH]
const _: () = assert!(BUF + DEPTH * SMALL_MAX <= 1408);

fn word(inst: &Instance, slot: usize, off: usize, pe: usize) -> Result<&AtomicU64> {
    let p = slot_addr(inst, slot, SMALL_OFFSET + off, pe)?;
    // SAFETY: an 8-byte aligned word of this slot's small-collective area in a mapped heap, alive
    // as long as the instance, accessed only atomically.
    Ok(unsafe { &*(p as *const AtomicU64) })
}

fn buffer(inst: &Instance, slot: usize, parity: usize, pe: usize) -> Result<*mut u8> {
    slot_addr(inst, slot, SMALL_OFFSET + BUF + parity * SMALL_MAX, pe)
}

/// A new team in `slot`: clears this PE's state of it (called before the team's first barrier).
pub fn reset(inst: &Instance, slot: usize) {
    if !inst.all_direct() {
        return;
    }
    for i in 0..DEPTH {
        for off in [FLAG, ACK, PENDING] {
            if let Ok(w) = word(inst, slot, off + 8 * i, inst.my_pe()) {
                w.store(0, Ordering::Relaxed);
            }
        }
    }
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// The next call's sequence number on `team`.
pub fn next_seq(inst: &Instance, team: &Team) -> u64 {
    inst.teams().next_seq(team.slot)
}

/// Publishes `data` (at most SMALL_MAX bytes) as call `seq` for `readers` other members.
pub fn publish(inst: &Instance, team: &Team, seq: u64, data: &[u8], readers: u64) -> Result<()> {
    let p = (seq % DEPTH as u64) as usize;
    let me = inst.my_pe();
    let (flag, ack, pending) = (
        word(inst, team.slot, FLAG + 8 * p, me)?,
        word(inst, team.slot, ACK + 8 * p, me)?,
        word(inst, team.slot, PENDING + 8 * p, me)?,
    );
    wait_acks(inst, team, seq, ack, pending)?;
    // SAFETY: our own buffer of SMALL_MAX bytes; its previous readers all acknowledged.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buffer(inst, team.slot, p, me)?, data.len()) };
    ack.store(0, Ordering::Relaxed);
    pending.store(readers, Ordering::Relaxed);
    flag.store(seq, Ordering::Release);
    Ok(())
}

/// Waits for member `owner`'s call `seq`, copies `out.len()` bytes of it starting at `at`, and
/// acknowledges it.
pub fn read(inst: &Instance, team: &Team, owner: usize, seq: u64, at: usize, out: &mut [u8]) -> Result<()> {
    let src = wait_published(inst, team, owner, seq)?;
    // SAFETY: the owner's buffer holds its published bytes (at + out.len() <= SMALL_MAX, checked by
    // the callers) and is not rewritten before we acknowledge.
    unsafe { std::ptr::copy_nonoverlapping(src.add(at), out.as_mut_ptr(), out.len()) };
    acknowledge(inst, team, owner, seq)
}

/// Waits until member `owner` published call `seq`; returns the address of its buffer.
pub fn wait_published(inst: &Instance, team: &Team, owner: usize, seq: u64) -> Result<*const u8> {
    let p = (seq % DEPTH as u64) as usize;
    let pe = team.world_pe(owner);
    let flag = word(inst, team.slot, FLAG + 8 * p, pe)?;
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "collective call {seq} on team {}: member {owner} (PE {pe}) has not published its data",
            team.slot
        )
    };
    while flag.load(Ordering::Acquire) != seq {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
    }
    Ok(buffer(inst, team.slot, p, pe)? as *const u8)
}

/// Waits until the readers of a buffer of this PE acknowledged it (before its reuse for `seq`).
fn wait_acks(inst: &Instance, team: &Team, seq: u64, ack: &AtomicU64, pending: &AtomicU64) -> Result<()> {
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "collective call {seq} on team {}: {} of {} readers of this PE's data (from call {}) have not \
             acknowledged it",
            team.slot,
            pending
                .load(Ordering::Relaxed)
                .saturating_sub(ack.load(Ordering::Relaxed)),
            pending.load(Ordering::Relaxed),
            seq.saturating_sub(DEPTH as u64)
        )
    };
    while ack.load(Ordering::Acquire) < pending.load(Ordering::Relaxed) {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
    }
    Ok(())
}

/// The error of a wait that passed `ACLSHMEM_COLLECTIVE_TIMEOUT`.
fn expired(inst: &Instance, what: String, e: Expired) -> Error {
    let msg = format!(
        "{what} after {:.1} s (ACLSHMEM_COLLECTIVE_TIMEOUT)",
        e.0.as_secs_f64()
    );
    eprintln!("aclshmem: [PE {}] {msg}", inst.my_pe());
    Error::Timeout(msg)
}

/// Tells member `owner` this PE is done with its call `seq`.
pub fn acknowledge(inst: &Instance, team: &Team, owner: usize, seq: u64) -> Result<()> {
    let p = (seq % DEPTH as u64) as usize;
    word(inst, team.slot, ACK + 8 * p, team.world_pe(owner))?.fetch_add(1, Ordering::Release);
    Ok(())
}

/// Publisher: waits until every reader acknowledged call `seq` (e.g. before the caller may reuse a
/// buffer the readers copied from directly).
pub fn wait_acknowledged(inst: &Instance, team: &Team, seq: u64) -> Result<()> {
    let p = (seq % DEPTH as u64) as usize;
    let (ack, pending) = (
        word(inst, team.slot, ACK + 8 * p, inst.my_pe())?,
        word(inst, team.slot, PENDING + 8 * p, inst.my_pe())?,
    );
    wait_acks(inst, team, seq, ack, pending)
}

/// Before `slot` is released (team destroy): waits until every reader of this PE's published
/// buffers acknowledged them, so no late acknowledgement lands in a later team of the same slot.
pub fn drain(inst: &Instance, slot: usize) -> Result<()> {
    if !inst.all_direct() {
        // the barrier-free path runs only when every member is directly addressable
        return Ok(());
    }
    let me = inst.my_pe();
    for p in 0..DEPTH {
        let (ack, pending) = (
            word(inst, slot, ACK + 8 * p, me)?,
            word(inst, slot, PENDING + 8 * p, me)?,
        );
        let mut w = Watch::new(inst.limits());
        let what = || format!("team slot {slot} being released: readers have not acknowledged buffer {p}");
        while ack.load(Ordering::Acquire) < pending.load(Ordering::Relaxed) {
            w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        }
    }
    Ok(())
}

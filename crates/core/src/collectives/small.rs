//! Barrier-free small collectives: each member publishes up to [`WIDE_MAX`] bytes (on team slots
//! below [`WIDE_SLOTS`]; [`SMALL_MAX`] on later ones) in its own ring and readers poll a sequence
//! flag, so back-to-back calls pipeline instead of paying two team barriers each.
//!
//! Per member and team slot, rings of buffers used round robin by sequence number, and for each
//! buffer a flag (the sequence number it holds), an acknowledgement counter and the number of
//! readers expected. Every slot has a narrow ring for payloads up to 64 bytes: 16 buffers in the
//! slot's sync-pool area after the exchange area (whose size is part of the ABI), or, on slots
//! below [`WIDE_SLOTS`], 128 buffers in the reserved region after the sync counters (a publisher
//! runs further ahead of its readers, so an oversubscribed node switches between PEs less often:
//! 4 PEs on 2 CPUs broadcast 8 bytes in about half the time). Those slots also have a wide ring
//! (32 buffers of 1 KiB, in the reserved region) for larger payloads ([`ring_for`]: the same on
//! every member, as the sizes are).
//! Calls of one slot share one sequence; each ring's buffers keep their own flags, so interleaved
//! calls on the two rings keep the argument below. A publisher first waits until every
//! reader of the buffer's previous use acknowledged it, then copies, then stores the flag with
//! Release; a reader waits for the flag with Acquire, copies, then acknowledges (Release). The
//! protocol's steps and the argument for their orderings are `aclshmem_protocol::ring`
//! (crates/protocol), model-checked with loom there; this module adds the layout, the waits'
//! diagnostics and the asymmetric-call records. With the
//! same call order on every member, a reader only ever waits for data already being published, and
//! a publisher only for readers of earlier calls (at least a ring's depth back), so no wait forms
//! a cycle.
//!
//! Asymmetric calls (a broadcast whose root differs between members) would break that argument and
//! wait for ever, so every member also keeps, per buffer, a record of the last call it took part in
//! and the root it named ("view"): the publisher's in the high bits of its pending word, a reader's
//! in its view word (each written only by its owner, one local store). Only once a wait has to
//! snooze do the waiters compare records: two records of the same call with different views make
//! the call fail with `ACLSHMEM_INVALID_PARAM` naming both PEs. A member waiting for a root that is
//! itself reading, or a publisher whose readers named another root, finds it at that call; a member
//! that believed itself the root when nobody else did is not waited for by anyone, so it learns at
//! the next use of that buffer (at most a ring's depth of calls later), when it waits for acknowledgements
//! that will never come. No member writes anywhere it would not have written in a correct call.
//!
//! `unsafe`: flags and buffers are raw addresses in the mapped heaps (bounds fixed at init).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::error::Result;
use crate::instance::Instance;
use crate::team_table::{
    DEEP_DEPTH, DEEP_OFFSET, DEEP_SLOT_BYTES, ENTRY, SMALL_BYTES, SMALL_OFFSET, Team, W_ACK, W_VIEW,
    WIDE_DEPTH, WIDE_SLOT_BYTES,
};
pub use crate::team_table::{WIDE_MAX, WIDE_SLOTS};
use crate::wait::{Expired, Watch};
use aclshmem_abi::SYNC_ARRAY_SIZE;
use aclshmem_protocol::ring::{self, READERS};

/// Largest payload one member publishes per call on a team slot without a wide ring (the slot's
/// part of the sync pool, whose size is part of the ABI, holds the narrow ring).
pub const SMALL_MAX: usize = 64;
/// Buffers per member of a narrow ring, used round robin: a publisher may run this many calls
/// ahead of its slowest reader.
const DEPTH: usize = 16;

// A narrow ring of depth d: [u64; d] each of flags, acknowledgements, pending words (record in the
// high 48 bits, readers in the low 16) and view words (record of the last call read from this
// buffer index), then [[u8; SMALL_MAX]; d] buffers.
const _: () = assert!(32 * DEPTH + DEPTH * SMALL_MAX <= SMALL_BYTES);
const _: () = assert!(32 * DEEP_DEPTH + DEEP_DEPTH * SMALL_MAX <= DEEP_SLOT_BYTES);
/// Readers of one publication fit the low bits of a pending word.
const _: () = assert!(aclshmem_abi::ACLSHMEM_MAX_PES as u64 <= READERS + 1);

/// The words of a buffer index.
#[derive(Clone, Copy)]
enum Word {
    Flag,
    Ack,
    Pending,
    View,
}

/// Which of a slot's rings a call uses: the narrow ring for payloads up to [`SMALL_MAX`] (its
/// flags and data sit in separate lines: measured faster for small payloads than sharing a line
/// the reader polls while the publisher writes it), the wide ring above that.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ring {
    Narrow,
    Wide,
}

/// The ring of a call publishing `len` bytes per member on team `t`, or None when `len` is too
/// large for the barrier-free path.
pub fn ring_for(t: &Team, len: usize) -> Option<Ring> {
    if len <= SMALL_MAX {
        Some(Ring::Narrow)
    } else if t.slot < WIDE_SLOTS && len <= WIDE_MAX {
        Some(Ring::Wide)
    } else {
        None
    }
}

/// The rings `slot` has.
fn rings_of(slot: usize) -> &'static [Ring] {
    if slot < WIDE_SLOTS {
        &[Ring::Narrow, Ring::Wide]
    } else {
        &[Ring::Narrow]
    }
}

/// Buffers of `slot`'s `ring`.
fn depth(slot: usize, ring: Ring) -> usize {
    match ring {
        Ring::Narrow if slot < WIDE_SLOTS => DEEP_DEPTH,
        Ring::Narrow => DEPTH,
        Ring::Wide => WIDE_DEPTH,
    }
}

/// Buffer index of call `seq` on `slot`'s `ring`.
fn index(slot: usize, ring: Ring, seq: u64) -> usize {
    (seq % depth(slot, ring) as u64) as usize
}

/// The ring with the largest buffers `t`'s slot has (for calls whose members publish different
/// sizes, which cannot choose by size).
pub fn widest_ring(t: &Team) -> Ring {
    if t.slot < WIDE_SLOTS {
        Ring::Wide
    } else {
        Ring::Narrow
    }
}

/// Largest payload of `ring`.
pub fn ring_capacity(ring: Ring) -> usize {
    match ring {
        Ring::Narrow => SMALL_MAX,
        Ring::Wide => WIDE_MAX,
    }
}

/// Device-heap offset of word `w` of buffer index `p` of `slot`'s `ring`.
fn word_off(inst: &Instance, slot: usize, ring: Ring, w: Word, p: usize) -> usize {
    match ring {
        Ring::Wide => {
            let base = inst.rings() + slot * WIDE_SLOT_BYTES;
            base + match w {
                Word::Flag => p * ENTRY,
                Word::Pending => p * ENTRY + 8,
                Word::Ack => W_ACK + p * 64,
                Word::View => W_VIEW + p * 8,
            }
        }
        Ring::Narrow => {
            let (base, d) = narrow_base(inst, slot);
            base + 8
                * d
                * match w {
                    Word::Flag => 0,
                    Word::Ack => 1,
                    Word::Pending => 2,
                    Word::View => 3,
                }
                + 8 * p
        }
    }
}

/// Device-heap offset of `slot`'s narrow ring (its words, then its buffers) and its depth.
fn narrow_base(inst: &Instance, slot: usize) -> (usize, usize) {
    if slot < WIDE_SLOTS {
        (inst.rings() + DEEP_OFFSET + slot * DEEP_SLOT_BYTES, DEEP_DEPTH)
    } else {
        (inst.sync_pool() + slot * SYNC_ARRAY_SIZE + SMALL_OFFSET, DEPTH)
    }
}

/// Device-heap offset of buffer `p` of `slot`'s `ring`.
fn buffer_off(inst: &Instance, slot: usize, ring: Ring, p: usize) -> usize {
    match ring {
        Ring::Wide => inst.rings() + slot * WIDE_SLOT_BYTES + p * ENTRY + 16,
        Ring::Narrow => {
            let (base, d) = narrow_base(inst, slot);
            base + 32 * d + p * SMALL_MAX
        }
    }
}

/// Address of device-heap offset `off` in world PE `pe`'s copy.
fn addr(inst: &Instance, off: usize, pe: usize) -> Result<*mut u8> {
    inst.device()
        .direct_addr(off, pe)
        .ok_or_else(|| Error::Inner(format!("PE {pe}'s collective buffers are not mapped here")))
}

/// A wait compares the members' records ([`disagreement`]) only once it has snoozed this many
/// times, then at every power of two: the comparison reads a line of every other member, so doing
/// it at the first snooze cost every briefly waiting reader (most of them, on an oversubscribed
/// node) 2 × (members − 1) cache misses per call. An asymmetric call is still found, a few hundred
/// snoozes (yields) later.
const COMPARE_AFTER: u64 = 256;
/// Flag bit of a call its publisher could not publish (it found an asymmetric call): the readers
/// fail instead of waiting.
const FAILED: u64 = 1 << 63;

/// A record: the call (low 32 bits of its sequence number) and the view a member had of it (for
/// a broadcast, root + 1; 0 for calls without one, which are never compared).
fn record(seq: u64, view: u16) -> u64 {
    (seq as u32 as u64) << 32 | u64::from(view) << 16
}

fn record_call(r: u64) -> u32 {
    (r >> 32) as u32
}

fn record_view(r: u64) -> u16 {
    (r >> 16) as u16
}

fn word(inst: &Instance, slot: usize, ring: Ring, w: Word, p: usize, pe: usize) -> Result<&AtomicU64> {
    let a = addr(inst, word_off(inst, slot, ring, w, p), pe)?;
    // SAFETY: an 8-byte aligned word of this slot's ring in the reserved region of a mapped heap,
    // alive as long as the instance, accessed only atomically.
    Ok(unsafe { &*(a as *const AtomicU64) })
}

fn buffer(inst: &Instance, slot: usize, ring: Ring, p: usize, pe: usize) -> Result<*mut u8> {
    addr(inst, buffer_off(inst, slot, ring, p), pe)
}

/// A new team in `slot`: clears this PE's state of it (called before the team's first barrier).
pub fn reset(inst: &Instance, slot: usize) {
    if !inst.all_direct() {
        return;
    }
    for &ring in rings_of(slot) {
        for i in 0..depth(slot, ring) {
            for kind in [Word::Flag, Word::Ack, Word::Pending, Word::View] {
                if let Ok(w) = word(inst, slot, ring, kind, i, inst.my_pe()) {
                    w.store(0, Ordering::Relaxed);
                }
            }
        }
    }
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// The next call's sequence number on `team`.
pub fn next_seq(inst: &Instance, team: &Team) -> u64 {
    inst.teams().next_seq(team.slot)
}

/// Publishes `data` (at most the ring's buffer size) as call `seq` for `readers` other members; `view`
/// as in [`record`].
pub fn publish(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    seq: u64,
    data: &[u8],
    readers: u64,
    view: u16,
) -> Result<()> {
    if data.len() > ring_capacity(ring) {
        return Err(Error::Inner(format!(
            "{} bytes do not fit a ring buffer",
            data.len()
        )));
    }
    let p = index(team.slot, ring, seq);
    let me = inst.my_pe();
    let (flag, ack, pending) = (
        word(inst, team.slot, ring, Word::Flag, p, me)?,
        word(inst, team.slot, ring, Word::Ack, p, me)?,
        word(inst, team.slot, ring, Word::Pending, p, me)?,
    );
    let slot = ring::Slot { flag, ack, pending };
    let waited = match ahead_slot(inst, team, ring, seq, slot)? {
        Some(ahead) => {
            wait_acks(inst, team, ring, seq, ahead).and_then(|()| wait_acks(inst, team, ring, seq, slot))
        }
        None => wait_acks(inst, team, ring, seq, slot),
    };
    if let Err(e) = waited {
        if matches!(e, Error::InvalidParam(_)) {
            // an asymmetric call: this call's readers would wait for ever
            flag.store(seq | FAILED, Ordering::Release);
        }
        return Err(e);
    }
    // SAFETY: our own buffer of ring_capacity(ring) bytes (checked above); its previous readers all acknowledged.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), buffer(inst, team.slot, ring, p, me)?, data.len())
    };
    ring::announce(slot, seq, record(seq, view) | readers);
    Ok(())
}

/// Waits for member `owner`'s call `seq`, copies `out.len()` bytes of it starting at `at`, and
/// acknowledges it; `view` as in [`record`].
#[allow(clippy::too_many_arguments)]
pub fn read(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    view: u16,
    at: usize,
    out: &mut [u8],
) -> Result<()> {
    if at
        .checked_add(out.len())
        .is_none_or(|end| end > ring_capacity(ring))
    {
        return Err(Error::Inner(format!(
            "{at} + {} bytes lie outside a ring buffer",
            out.len()
        )));
    }
    let src = wait_published(inst, team, ring, owner, seq, view)?;
    // SAFETY: the owner's buffer holds its published bytes (at + out.len() <= ring_capacity(ring), checked
    // above) and is not rewritten before we acknowledge.
    unsafe { std::ptr::copy_nonoverlapping(src.add(at), out.as_mut_ptr(), out.len()) };
    acknowledge(inst, team, ring, owner, seq)
}

/// Waits until member `owner` published call `seq`; returns the address of its buffer. A non-zero
/// `view` is recorded first and compared with the other members' records if the wait is long.
pub fn wait_published(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    view: u16,
) -> Result<*const u8> {
    let p = index(team.slot, ring, seq);
    let pe = team.world_pe(owner);
    let flag = word(inst, team.slot, ring, Word::Flag, p, pe)?;
    if view != 0 {
        word(inst, team.slot, ring, Word::View, p, inst.my_pe())?.store(record(seq, view), Ordering::Relaxed);
    }
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "collective call {seq} on team {}: member {owner} (PE {pe}) has not published its data",
            team.slot
        )
    };
    let mut snoozes = 0u64;
    ring::wait_flag(flag, seq, |f| {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        snoozes += 1;
        if f == seq | FAILED {
            return Err(Error::InvalidParam(format!(
                "collective call {seq} on team {}: member {owner} (PE {pe}) found an asymmetric earlier \
                 call and could not publish its data (its error names the call)",
                team.slot
            )));
        }
        if view != 0 && snoozes >= COMPARE_AFTER && snoozes.is_power_of_two() {
            disagreement(inst, team, ring, p)?;
        }
        Ok(())
    })?;
    Ok(buffer(inst, team.slot, ring, p, pe)? as *const u8)
}

/// When the buffer for call `seq` is still being read (a publisher running a ring's depth ahead
/// of its readers), the slot to wait on first: the one of this PE's call half a ring later in the
/// previous lap, if that call was this PE's (its buffer index holds that call's record), else
/// None. Every other member reads every publication of this PE, in call order, and acknowledges
/// each right after reading it; so once that later call is acknowledged by all, so is the one
/// `seq` reuses (the acknowledgement counter's final value, read with Acquire, ends a release
/// sequence of all its readers' increments, each made after their reads of the earlier buffer).
/// Waiting for half a ring at once lets the readers run through half a ring without the
/// publisher reading their acknowledgement lines after every call (each read moved the line
/// back and forth: measured 2-PE broadcast throughput), and on an oversubscribed node switches
/// to the readers once per half ring, not once per call.
fn ahead_slot<'a>(
    inst: &'a Instance,
    team: &Team,
    ring: Ring,
    seq: u64,
    own: ring::Slot<'a, AtomicU64>,
) -> Result<Option<ring::Slot<'a, AtomicU64>>> {
    if own.ack.load(Ordering::Acquire) >= own.pending.load(Ordering::Relaxed) & READERS {
        return Ok(None);
    }
    let d = depth(team.slot, ring) as u64;
    let Some(later) = (seq + d / 2).checked_sub(d) else {
        return Ok(None);
    };
    let q = index(team.slot, ring, later);
    let me = inst.my_pe();
    let pending = word(inst, team.slot, ring, Word::Pending, q, me)?;
    if record_call(pending.load(Ordering::Relaxed)) != later as u32 {
        return Ok(None);
    }
    Ok(Some(ring::Slot {
        flag: word(inst, team.slot, ring, Word::Flag, q, me)?,
        ack: word(inst, team.slot, ring, Word::Ack, q, me)?,
        pending,
    }))
}

/// Waits until the readers of a buffer of this PE acknowledged it (before its reuse for `seq`).
fn wait_acks(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    seq: u64,
    slot: ring::Slot<'_, AtomicU64>,
) -> Result<()> {
    let (ack, pending) = (slot.ack, slot.pending);
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "collective call {seq} on team {}: {} of {} readers of this PE's data (from call {}) have not \
             acknowledged it",
            team.slot,
            (pending.load(Ordering::Relaxed) & READERS).saturating_sub(ack.load(Ordering::Relaxed)),
            pending.load(Ordering::Relaxed) & READERS,
            seq.saturating_sub(depth(team.slot, ring) as u64)
        )
    };
    let mut snoozes = 0u64;
    ring::wait_acks(slot, || {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        snoozes += 1;
        if snoozes >= COMPARE_AFTER && snoozes.is_power_of_two() {
            disagreement(inst, team, ring, index(team.slot, ring, seq))?;
        }
        Ok(())
    })
}

/// Compares this PE's records of buffer index `p` (as publisher and as reader) with every other
/// member's: two records of the same call with different views are an asymmetric call.
fn disagreement(inst: &Instance, team: &Team, ring: Ring, p: usize) -> Result<()> {
    let me = inst.my_pe();
    for mine in [Word::Pending, Word::View] {
        let m = word(inst, team.slot, ring, mine, p, me)?.load(Ordering::Relaxed);
        let (call, view) = (record_call(m), record_view(m));
        if view == 0 {
            continue;
        }
        for i in (0..team.size).filter(|&i| i != team.my_index) {
            let pe = team.world_pe(i);
            for kind in [Word::Pending, Word::View] {
                let r = word(inst, team.slot, ring, kind, p, pe)?.load(Ordering::Relaxed);
                if record_call(r) == call && record_view(r) != 0 && record_view(r) != view {
                    let msg = format!(
                        "asymmetric broadcast on team {} (call {call}): every member must name the same \
                         root; this PE (PE {me}) named root {}, PE {pe} named root {}",
                        team.slot,
                        view - 1,
                        record_view(r) - 1
                    );
                    return Err(Error::InvalidParam(msg));
                }
            }
        }
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
pub fn acknowledge(inst: &Instance, team: &Team, ring: Ring, owner: usize, seq: u64) -> Result<()> {
    let p = index(team.slot, ring, seq);
    ring::acknowledge(word(inst, team.slot, ring, Word::Ack, p, team.world_pe(owner))?);
    Ok(())
}

/// Publisher: waits until every reader acknowledged call `seq` (e.g. before the caller may reuse a
/// buffer the readers copied from directly).
pub fn wait_acknowledged(inst: &Instance, team: &Team, ring: Ring, seq: u64) -> Result<()> {
    let p = index(team.slot, ring, seq);
    let me = inst.my_pe();
    let slot = ring::Slot {
        flag: word(inst, team.slot, ring, Word::Flag, p, me)?,
        ack: word(inst, team.slot, ring, Word::Ack, p, me)?,
        pending: word(inst, team.slot, ring, Word::Pending, p, me)?,
    };
    wait_acks(inst, team, ring, seq, slot)
}

/// Before `slot` is released (team destroy): waits until every reader of this PE's published
/// buffers acknowledged them, so no late acknowledgement lands in a later team of the same slot.
pub fn drain(inst: &Instance, team: &Team) -> Result<()> {
    let slot = team.slot;
    if !inst.all_direct() {
        // the barrier-free path runs only when every member is directly addressable
        return Ok(());
    }
    let me = inst.my_pe();
    for &ring in rings_of(slot) {
        for p in 0..depth(slot, ring) {
            let (ack, pending) = (
                word(inst, slot, ring, Word::Ack, p, me)?,
                word(inst, slot, ring, Word::Pending, p, me)?,
            );
            let mut w = Watch::new(inst.limits());
            let what =
                || format!("team slot {slot} being released: readers have not acknowledged buffer {p}");
            let mut snoozes = 0u64;
            while ack.load(Ordering::Acquire) < pending.load(Ordering::Relaxed) & READERS {
                w.snooze(what).map_err(|e| expired(inst, what(), e))?;
                snoozes += 1;
                if snoozes.is_power_of_two() && disagreement(inst, team, ring, p).is_err() {
                    // an asymmetric call (already reported) left readers that will never come
                    break;
                }
            }
        }
    }
    Ok(())
}

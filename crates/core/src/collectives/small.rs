//! Barrier-free small collectives: each member publishes up to [`WIDE_MAX`] bytes (on team slots
//! below [`WIDE_SLOTS`]; [`SMALL_MAX`] on later ones) in its own ring and readers poll a sequence
//! flag, so back-to-back calls pipeline instead of paying two team barriers each.
//!
//! Per member and team slot, rings of buffers used round robin by sequence number, each buffer
//! with a flag (the sequence number it holds) and a pending word (the publisher's record, below)
//! in the line of its first bytes of data; and per member and slot one done word (the last call
//! the member completed). Every slot has a narrow ring for payloads up to 64 bytes: 16 entries in
//! the slot's sync-pool area after the exchange area (whose size is part of the ABI), or, on slots
//! below [`WIDE_SLOTS`], 128 entries in the reserved region after the sync counters (a publisher
//! runs further ahead of its readers, so an oversubscribed node switches between PEs less often:
//! 4 PEs on 2 CPUs broadcast 8 bytes in about half the time). Those slots also have a wide ring
//! (32 buffers of 1 KiB, in the reserved region) for larger payloads ([`ring_for`]: the same on
//! every member, as the sizes are).
//!
//! Calls of one slot share one sequence. A reader waits for the flag with Acquire and copies; every
//! member ends every call by storing the call in its own done word (Release; [`complete`], or
//! [`next_seq`] at the start of the next call). A publisher of call `seq` first makes sure every
//! other member completed call `seq - depth / 2` (which covers the buffer's previous use, a depth
//! back), reading the others' done words only when the least call it saw at the last look no
//! longer covers it, then copies, then stores the flag with Release. A reader thus writes only its
//! own lines, and a publisher reads the readers' lines about once per half ring. The protocol's
//! steps and the argument for their orderings are `aclshmem_protocol::ring` (crates/protocol),
//! model-checked with loom there; this module adds the layout, the waits' diagnostics and the
//! asymmetric-call records. With the same call order on every member, a reader only ever waits
//! for data already being published, and a publisher only for members' completion of earlier
//! calls, so no wait forms a cycle.
//!
//! Asymmetric calls (a broadcast whose root differs between members) would break that argument and
//! wait for ever, so every member also keeps, per buffer, a record of the last call it took part in
//! and the root it named ("view"): the publisher's in its pending word, a reader's in its view word
//! (each written only by its owner, one local store). Only once a wait has to snooze do the
//! waiters compare records: two records of the same call with different views make the call fail
//! with `ACLSHMEM_INVALID_PARAM` naming both PEs. A member waiting for a root that is itself
//! reading, or a publisher whose readers named another root, finds it at that call. A member that
//! believed itself the root when nobody else did is waited for by nobody; the true root finds it
//! when it next looks at the done words ([`verify`]: at most half a ring of calls later, or when
//! the team is destroyed), by the member's view word of that call, and fails its next publication
//! so every reader learns it too. No member writes anywhere it would not have written in a correct
//! call.
//!
//! `unsafe`: flags and buffers are raw addresses in the mapped heaps (bounds fixed at init).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::error::Result;
use crate::instance::Instance;
use crate::team_table::{
    DEEP_DEPTH, DEEP_ENTRY, DEEP_OFFSET, DEEP_SLOT_BYTES, ENTRY, SMALL_BYTES, SMALL_OFFSET, Team, W_VIEW,
    WIDE_DEPTH, WIDE_SLOT_BYTES,
};
pub use crate::team_table::{WIDE_MAX, WIDE_SLOTS};
use crate::wait::{Expired, Watch};
use aclshmem_abi::SYNC_ARRAY_SIZE;
use aclshmem_protocol::ring;

/// Largest payload one member publishes per call on a team slot without a wide ring (the slot's
/// part of the sync pool, whose size is part of the ABI, holds the narrow ring).
pub const SMALL_MAX: usize = 64;
/// Buffers per member of a narrow ring, used round robin: a publisher may run this many calls
/// ahead of its slowest reader.
const DEPTH: usize = 16;

/// One entry of a narrow ring in the sync pool: flag, pending word (the publisher's record), then
/// the data (not padded to whole lines: the pool's area has no room for that).
const POOL_ENTRY: usize = 16 + SMALL_MAX;

// A narrow ring of depth d: d entries, then [u64; d] view words (record of the last call read from
// this buffer index), then, in a line of its own, the slot's done word.
const _: () = assert!(done_at(DEPTH, POOL_ENTRY) + 8 <= SMALL_BYTES);
const _: () = assert!(done_at(DEEP_DEPTH, DEEP_ENTRY) + 8 <= DEEP_SLOT_BYTES);
const _: () = assert!(16 + SMALL_MAX <= DEEP_ENTRY);

/// Offset of a slot's done word in its narrow ring area of `depth` entries of `entry` bytes.
const fn done_at(depth: usize, entry: usize) -> usize {
    (depth * (entry + 8)).next_multiple_of(64)
}

/// The words of a buffer index.
#[derive(Clone, Copy)]
enum Word {
    Flag,
    Pending,
    View,
}

/// Which of a slot's rings a call uses: the narrow ring for payloads up to [`SMALL_MAX`] (a
/// buffer's flag shares its line with the first 48 bytes of data, so a reader of a small payload
/// moves one line per call), the wide ring above that (the flag after the data: see
/// [`crate::team_table::ENTRY`]).
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
                Word::Flag => p * ENTRY + WIDE_MAX,
                Word::Pending => p * ENTRY + WIDE_MAX + 8,
                Word::View => W_VIEW + p * 8,
            }
        }
        Ring::Narrow => {
            let (base, d, entry) = narrow_base(inst, slot);
            match w {
                Word::Flag => base + p * entry,
                Word::Pending => base + p * entry + 8,
                Word::View => base + d * entry + p * 8,
            }
        }
    }
}

/// Device-heap offset of `slot`'s narrow ring (its entries, view words and done word), its depth
/// and its entries' size.
fn narrow_base(inst: &Instance, slot: usize) -> (usize, usize, usize) {
    if slot < WIDE_SLOTS {
        (
            inst.rings() + DEEP_OFFSET + slot * DEEP_SLOT_BYTES,
            DEEP_DEPTH,
            DEEP_ENTRY,
        )
    } else {
        (
            inst.sync_pool() + slot * SYNC_ARRAY_SIZE + SMALL_OFFSET,
            DEPTH,
            POOL_ENTRY,
        )
    }
}

/// Device-heap offset of buffer `p` of `slot`'s `ring`.
fn buffer_off(inst: &Instance, slot: usize, ring: Ring, p: usize) -> usize {
    match ring {
        Ring::Wide => inst.rings() + slot * WIDE_SLOT_BYTES + p * ENTRY,
        Ring::Narrow => {
            let (base, _, entry) = narrow_base(inst, slot);
            base + p * entry + 16
        }
    }
}

/// Device-heap offset of `slot`'s done word (both rings of a slot share one sequence of calls).
fn done_off(inst: &Instance, slot: usize) -> usize {
    let (base, d, entry) = narrow_base(inst, slot);
    base + done_at(d, entry)
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

/// A record: the call (low 32 bits of its sequence number), the view a member had of it (for
/// a broadcast, root + 1; 0 for calls without one, which are never compared) and the call's tag
/// (`Call::ring_tag`: its family and length; a reader compares the publisher's with its own).
fn record(seq: u64, view: u16, tag: u16) -> u64 {
    (seq as u32 as u64) << 32 | u64::from(view) << 16 | u64::from(tag)
}

fn record_tag(r: u64) -> u16 {
    r as u16
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

/// The done word of `slot` in world PE `pe`'s copy.
fn done(inst: &Instance, slot: usize, pe: usize) -> Result<&AtomicU64> {
    let a = addr(inst, done_off(inst, slot), pe)?;
    // SAFETY: an 8-byte aligned word of this slot's ring area in the reserved region of a mapped
    // heap, alive as long as the instance, accessed only atomically.
    Ok(unsafe { &*(a as *const AtomicU64) })
}

/// Bits of a done word holding the call (the rest: the team's incarnation).
const CALL_BITS: u32 = 40;
const CALL_MASK: u64 = (1 << CALL_BITS) - 1;
/// How far ahead of its own calls a member that leaves a team marks its done word ([`drain`]):
/// past any call the others can be in, within the half of the call space [`done_reached`] takes
/// for "at or after".
const LEFT_AHEAD: u64 = 1 << (CALL_BITS - 2);

/// A done word: member completed call `seq` of the team of incarnation `inc` (both truncated;
/// calls compare modulo 2^40, and members are never that many calls apart).
fn done_value(inc: u32, seq: u64) -> u64 {
    u64::from(inc) << CALL_BITS | seq & CALL_MASK
}

/// Whether done word `v` shows call `want` of the team of incarnation `inc` completed.
fn done_reached(v: u64, inc: u32, want: u64) -> bool {
    v >> CALL_BITS == done_value(inc, 0) >> CALL_BITS
        && v.wrapping_sub(want) & CALL_MASK < 1 << (CALL_BITS - 1)
}

/// The call of done word `v` in full, from call `seq` of this PE (members are less than 2^39
/// calls apart, either way: a member that does not wait for this PE can be ahead).
fn done_call(v: u64, seq: u64) -> u64 {
    let ahead = v.wrapping_sub(seq) & CALL_MASK;
    if ahead < 1 << (CALL_BITS - 1) {
        seq + ahead
    } else {
        seq.saturating_sub((1 << CALL_BITS) - ahead)
    }
}

/// A new team in `slot`: clears this PE's state of it (called before the team's first barrier).
pub fn reset(inst: &Instance, slot: usize) {
    if !inst.all_direct() {
        return;
    }
    let me = inst.my_pe();
    for &ring in rings_of(slot) {
        for i in 0..depth(slot, ring) {
            for kind in [Word::Flag, Word::Pending, Word::View] {
                if let Ok(w) = word(inst, slot, ring, kind, i, me) {
                    w.store(0, Ordering::Relaxed);
                }
            }
        }
    }
    if let Ok(d) = done(inst, slot, me) {
        d.store(
            done_value(inst.team_cells().incarnation(slot), 0),
            Ordering::Relaxed,
        );
    }
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// The next call's sequence number on `team`. Every call on a team takes one, in the same order on
/// every member; taking it also completes this PE's previous call (see [`complete`]), so calls
/// that do not use the ring, or fail, never hold up a publisher.
pub fn next_seq(inst: &Instance, team: &Team) -> u64 {
    let seq = inst.team_cells().next_seq(team.slot);
    if seq > 1 && inst.all_direct() {
        let _ = complete(inst, team, seq - 1);
    }
    seq
}

/// This PE read everything it reads of calls up to `seq` on `team` (the end of every call that
/// read from or published in the ring; [`next_seq`] does it for the others).
pub fn complete(inst: &Instance, team: &Team, seq: u64) -> Result<()> {
    let d = done(inst, team.slot, inst.my_pe())?;
    let v = done_value(inst.team_cells().incarnation(team.slot), seq);
    // a store only when the word changes: the line stays shared with the members reading it
    if d.load(Ordering::Relaxed) != v {
        ring::complete(d, v);
    }
    Ok(())
}

/// Publishes `data` (at most the ring's buffer size) as call `seq`; `view` and `tag` as in
/// [`record`].
#[allow(clippy::too_many_arguments)]
pub fn publish(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    seq: u64,
    data: &[u8],
    view: u16,
    tag: u16,
) -> Result<()> {
    if data.len() > ring_capacity(ring) {
        return Err(Error::Inner(format!(
            "{} bytes do not fit a ring buffer",
            data.len()
        )));
    }
    let p = index(team.slot, ring, seq);
    let me = inst.my_pe();
    let slot = ring::Slot {
        flag: word(inst, team.slot, ring, Word::Flag, p, me)?,
        pending: word(inst, team.slot, ring, Word::Pending, p, me)?,
    };
    // Unless every other member is known to have completed the call the buffer's previous use
    // (a ring's depth back; two calls later, see `verify`), wait until it completed the call half
    // a ring back: the next calls up to half a ring need no check (each reads a line of every
    // other member), and a publisher whose readers lag runs ahead by half a ring at a time
    // instead of looking at their lines after every call.
    let cells = inst.team_cells();
    let d = depth(team.slot, ring) as u64;
    let mut checked = Ok(());
    if seq.saturating_sub(d - 2) > cells.known(team.slot) {
        checked = wait_completed(inst, team, seq, seq - d / 2);
    }
    if checked.is_ok() && cells.known(team.slot) >= cells.verified(team.slot) + VERIFY_EVERY {
        checked = verify(inst, team, cells.known(team.slot));
    }
    if let Err(e) = checked {
        if matches!(e, Error::InvalidParam(_)) {
            // an asymmetric call: this call's readers would wait for ever, or be the only ones
            // not told
            slot.flag.store(seq | FAILED, Ordering::Release);
        }
        return Err(e);
    }
    // SAFETY: our own buffer of ring_capacity(ring) bytes (checked above); every member completed
    // the calls that read its previous use.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), buffer(inst, team.slot, ring, p, me)?, data.len())
    };
    ring::announce(slot, seq, record(seq, view, tag));
    cells.set_published(team.slot, seq, view != 0);
    Ok(())
}

/// Records `view` (a broadcast's root + 1) as this PE's view of call `seq` in `ring`, as a
/// reader's wait does: a member that made a broadcast on the barrier path (its length) read
/// nothing from the root's ring, and the root's [`verify`] looks for the view of every member.
pub fn note_view(inst: &Instance, team: &Team, ring: Ring, seq: u64, view: u16, tag: u16) -> Result<()> {
    let p = index(team.slot, ring, seq);
    word(inst, team.slot, ring, Word::View, p, inst.my_pe())?
        .store(record(seq, view, tag), Ordering::Relaxed);
    Ok(())
}

/// Waits for member `owner`'s call `seq` and copies `out.len()` bytes of it starting at `at`;
/// `view` and `tag` as in [`record`]. The caller ends the call with [`complete`].
#[allow(clippy::too_many_arguments)]
pub fn read(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    view: u16,
    tag: u16,
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
    let src = wait_published(inst, team, ring, owner, seq, view, tag)?;
    // SAFETY: the owner's buffer holds its published bytes (at + out.len() <= ring_capacity(ring), checked
    // above) and is not rewritten before we complete the call.
    unsafe { std::ptr::copy_nonoverlapping(src.add(at), out.as_mut_ptr(), out.len()) };
    Ok(())
}

/// Waits until member `owner` published call `seq`; returns the address of its buffer. A non-zero
/// `view` is recorded first and compared with the other members' records if the wait is long.
/// The publisher's tag must be `tag` (this PE's): a call of another family or length fails with
/// `ACLSHMEM_INVALID_PARAM` naming both, as does, once the wait is long, a publisher that made
/// this call on the other ring (another length) or on the barrier path (see [`elsewhere`]). A
/// failed wait completes the call (this PE reads nothing more of it).
#[allow(clippy::too_many_arguments)]
pub fn wait_published(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    view: u16,
    tag: u16,
) -> Result<*const u8> {
    let r = wait_flagged(inst, team, ring, owner, seq, view, tag);
    if let Err(Error::InvalidParam(_)) = r {
        let _ = complete(inst, team, seq);
    }
    r
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn wait_flagged(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    view: u16,
    tag: u16,
) -> Result<*const u8> {
    let p = index(team.slot, ring, seq);
    let pe = team.world_pe(owner);
    let flag = word(inst, team.slot, ring, Word::Flag, p, pe)?;
    if view != 0 {
        word(inst, team.slot, ring, Word::View, p, inst.my_pe())?
            .store(record(seq, view, tag), Ordering::Relaxed);
    }
    let mut w = Watch::new(inst.limits());
    let mut dep = crate::sync::Departure::default();
    let what = || {
        format!(
            "collective call {seq} on team {}: member {owner} (PE {pe}) has not published its data",
            crate::team_table::TeamName(team.slot)
        )
    };
    let mut snoozes = 0u64;
    ring::wait_flag(flag, seq, |f| {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        dep.check(inst, &w, || crate::sync::departed_pe(inst, pe), what)?;
        snoozes += 1;
        if f == seq | FAILED {
            return Err(Error::InvalidParam(format!(
                "collective call {seq} on team {}: member {owner} (PE {pe}) found an asymmetric earlier \
                 call and could not publish its data (its error names the call)",
                crate::team_table::TeamName(team.slot)
            )));
        }
        if snoozes >= COMPARE_AFTER && snoozes.is_power_of_two() {
            if view != 0 {
                disagreement(inst, team, ring, p)?;
            }
            elsewhere(inst, team, ring, owner, seq, tag, view != 0)?;
            // the owner waits in a barrier this PE never entered: what it published before that
            // barrier is visible now (`waits_in_barrier`), so a call still missing never comes
            if crate::sync::waits_in_barrier(inst, team, owner)
                && flag.load(Ordering::Acquire) & !FAILED != seq
            {
                return Err(in_barrier(inst, team, seq, Some(tag), owner));
            }
        }
        Ok(())
    })?;
    // the pending word follows the flag in its line (see `word_off`): no further miss
    const _: () = assert!(std::mem::size_of::<AtomicU64>() == 8);
    let theirs = record_tag(
        // SAFETY: as in `word`: the word after the flag, the pending word of the same buffer
        // index of a mapped ring
        unsafe { &*(flag as *const AtomicU64).add(1) }.load(Ordering::Relaxed),
    );
    if theirs != tag {
        let call = super::Call::from_ring_tag(theirs);
        if call.is_broadcast() && view == 0 {
            // the owner published a broadcast as its root: this PE took part (and fails), which
            // the root's `verify` must find in its view of the call. (A broadcast's reader keeps
            // the view it recorded, under its own tag: the members comparing theirs with it must
            // still find the difference.)
            note_view(inst, team, ring, seq, (owner + 1) as u16, theirs)?;
        }
        return Err(asymmetric(inst, team, seq, tag, owner, call));
    }
    Ok(buffer(inst, team.slot, ring, p, pe)? as *const u8)
}

/// The error of member `owner` making call `seq` as `theirs` where this PE made it with `tag`.
fn asymmetric(inst: &Instance, team: &Team, seq: u64, tag: u16, owner: usize, theirs: super::Call) -> Error {
    Error::InvalidParam(super::mismatch(
        inst,
        team,
        &format!("collective call {seq}"),
        &super::Call::from_ring_tag(tag),
        &format!("member {owner} (PE {})", team.world_pe(owner)),
        &theirs.name(),
    ))
}

/// The error of member `owner` waiting in a barrier of the team where this PE makes call `seq`
/// (`tag`, when known), which it will never make: the members in the barrier are told
/// ([`crate::sync::skipped`]) before this PE can arrive there.
fn in_barrier(inst: &Instance, team: &Team, seq: u64, tag: Option<u16>, owner: usize) -> Error {
    crate::sync::skipped(inst, team, seq);
    let mine = match tag {
        Some(tag) => super::Call::from_ring_tag(tag).family_name(),
        None => "a collective call".to_string(),
    };
    let msg = format!(
        "asymmetric collective call {seq} on team {}: every member must make the same collective calls \
         in the same order; this PE (PE {}) made {mine}, member {owner} (PE {}) waits in a barrier (or \
         sync) of the team instead",
        crate::team_table::TeamName(team.slot),
        inst.my_pe(),
        team.world_pe(owner)
    );
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::InvalidParam(msg)
}

/// A long wait for member `owner`'s publication of call `seq`: fails when the owner made the call
/// where this PE does not look for it, so that neither waits for ever: published on the slot's
/// other ring (another length), or only read as a broadcast's reader (its view word of the call),
/// or failed its publication there.
/// A member that made the call on the barrier path publishes its call in the narrow ring
/// (`collectives::agreed`), so it is found here or by its tag. `viewed`: this PE recorded its own
/// view of the call (a broadcast's reader).
fn elsewhere(
    inst: &Instance,
    team: &Team,
    ring: Ring,
    owner: usize,
    seq: u64,
    tag: u16,
    viewed: bool,
) -> Result<()> {
    let pe = team.world_pe(owner);
    for &r in rings_of(team.slot) {
        let p = index(team.slot, r, seq);
        if r != ring && word(inst, team.slot, r, Word::Flag, p, pe)?.load(Ordering::Acquire) == seq | FAILED {
            return Err(Error::InvalidParam(format!(
                "collective call {seq} on team {}: member {owner} (PE {pe}) found an asymmetric earlier \
                 call and could not publish its data (its error names the call)",
                crate::team_table::TeamName(team.slot)
            )));
        }
        let kinds: &[Word] = if r == ring {
            &[Word::View]
        } else {
            &[Word::Pending, Word::View]
        };
        for &w in kinds {
            let rec = word(inst, team.slot, r, w, p, pe)?.load(Ordering::Relaxed);
            if record_call(rec) == seq as u32 && record_tag(rec) != tag && record_tag(rec) != 0 {
                let call = super::Call::from_ring_tag(record_tag(rec));
                if call.is_broadcast() && !viewed {
                    // the owner published a broadcast there as its root, or read one as the view
                    // names it: this PE took part, which the root's `verify` must find (see
                    // `wait_flagged`)
                    let view = match w {
                        Word::Pending => (owner + 1) as u16,
                        _ => record_view(rec),
                    };
                    note_view(inst, team, r, seq, view, record_tag(rec))?;
                }
                return Err(asymmetric(inst, team, seq, tag, owner, call));
            }
        }
    }
    Ok(())
}

/// Before barrier number `barrier` of the program on `team` (every member mapped): when this PE
/// published broadcasts on the rings as their root since its last such barrier (such a root waits
/// for nobody), it tells the others the last one's call number with the barrier's
/// (`sync::tell_root_call`; [`told_word`]). Without such a broadcast, a load and a compare.
#[inline]
pub(crate) fn tell_broadcasts(inst: &Instance, team: &Team, barrier: u64) {
    let cells = inst.team_cells();
    let last = cells.last_broadcast(team.slot);
    if last > cells.told(team.slot) {
        cells.set_told(team.slot, last);
        tell(inst, team, told_word(barrier, last));
    }
}

/// Stores told word `v` into every other member's word: over one told at an earlier barrier, or
/// at this one about an earlier call (several roots tell at one barrier).
#[inline(never)]
fn tell(inst: &Instance, team: &Team, v: u64) {
    let newer = |cur: u64| cur >> TOLD_CALL_BITS != v >> TOLD_CALL_BITS || cur < v;
    for i in (0..team.size).filter(|&i| i != team.my_index) {
        let Some(w) = crate::sync::root_calls_of(inst, team, team.world_pe(i)) else {
            continue;
        };
        let mut cur = w.load(Ordering::Relaxed);
        // Release: with the arrival that follows; the member reads it after the barrier
        while newer(cur) {
            match w.compare_exchange_weak(cur, v, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break,
                Err(x) => cur = x,
            }
        }
    }
}

/// Bits of a told word holding the call (the barrier's number above them).
const TOLD_CALL_BITS: u32 = 40;

/// What a root tells at barrier number `barrier` about its broadcast in call `seq`: the barrier
/// names which barrier's end the call precedes (a member still leaving the previous barrier when
/// the root tells, its calls rightly behind, does not take it for its own).
fn told_word(barrier: u64, seq: u64) -> u64 {
    barrier << TOLD_CALL_BITS | seq & ((1 << TOLD_CALL_BITS) - 1)
}

/// After barrier number `barrier` of the program on `team` (every member mapped; `r` its result,
/// `before` this PE's last call before it): the others' broadcasts this PE did not make ([`tell_broadcasts`];
/// every member makes its calls before the barrier that follows them, so one whose calls end
/// before a broadcast's waited in the barrier instead) are counted as made and failed here, as
/// the calls the others failed against this barrier already were (`sync::skipped`): their numbers
/// taken, and for each broadcast among them the root's view recorded as this PE's (the root's
/// [`verify`] then finds it read), so the team's later calls match again on every member.
#[inline]
pub(crate) fn took_up(inst: &Instance, team: &Team, barrier: u64, before: u64, r: Result<()>) -> Result<()> {
    let word = crate::sync::root_calls(inst, team);
    let cells = inst.team_cells();
    let now = cells.seq(team.slot);
    // a root's broadcast told at this barrier (one told at the next barrier, by a root already
    // there while this PE left this one, is the next barrier's business)
    let told = if word >> TOLD_CALL_BITS == barrier & ((1 << (64 - TOLD_CALL_BITS)) - 1) {
        word & ((1 << TOLD_CALL_BITS) - 1)
    } else {
        0
    };
    if told <= now && now == before {
        return r;
    }
    take_up(inst, team, before, told, r)
}

#[inline(never)]
fn take_up(inst: &Instance, team: &Team, before: u64, told: u64, r: Result<()>) -> Result<()> {
    let cells = inst.team_cells();
    let next = cells.seq(team.slot) + 1;
    let mut r = r;
    if told >= next {
        cells.skip_to(team.slot, told);
        r = r.and(Err(crate::sync::taken_up(
            inst,
            team,
            next,
            told,
            "broadcasts, whose root waits for nobody: counted as made and failed here",
        )));
    }
    // the roots' views of the calls taken up (a root reuses a buffer only once every member
    // completed its call, so at most a ring's depth of calls were missed; the bound keeps a
    // corrupted word from making this loop long)
    let last = cells.seq(team.slot);
    for c in (before + 1).max(last.saturating_sub(DEEP_DEPTH as u64))..=last {
        'call: for &ring in rings_of(team.slot) {
            let p = index(team.slot, ring, c);
            for i in (0..team.size).filter(|&i| i != team.my_index) {
                let m =
                    word(inst, team.slot, ring, Word::Pending, p, team.world_pe(i))?.load(Ordering::Acquire);
                if record_call(m) == c as u32 && record_view(m) != 0 {
                    note_view(inst, team, ring, c, record_view(m), record_tag(m))?;
                    break 'call;
                }
            }
        }
    }
    r
}

/// Every ring is deeper than this (see [`publish`]).
const _: () = assert!(DEPTH >= 8 && WIDE_DEPTH >= 8 && DEEP_DEPTH >= 8);

/// A publisher checks its broadcasts' readers ([`verify`]) once at least this many more calls are
/// known completed: a broadcast whose root waits for its readers every call (the pull algorithm)
/// then reads their view lines once per this many calls, not every call. Less than half of the
/// shallowest ring, so the views checked are still the calls' (see [`verify`]).
const VERIFY_EVERY: u64 = 7;
const _: () = assert!(2 * VERIFY_EVERY < DEPTH as u64);

/// Waits until every other member of `team` completed call `want` (this PE is in call `seq`);
/// records the least call seen as known (the next [`publish`] checks the readers of this PE's
/// broadcasts up to it, [`verify`]).
fn wait_completed(inst: &Instance, team: &Team, seq: u64, want: u64) -> Result<()> {
    let inc = inst.team_cells().incarnation(team.slot);
    let mut least = seq;
    for i in (0..team.size).filter(|&i| i != team.my_index) {
        let pe = team.world_pe(i);
        let d = done(inst, team.slot, pe)?;
        let mut w = Watch::new(inst.limits());
        let mut dep = crate::sync::Departure::default();
        let what = || {
            format!(
                "collective call {seq} on team {}: member {i} (PE {pe}) has not completed call {want}, \
                 which may still read this PE's data",
                crate::team_table::TeamName(team.slot)
            )
        };
        let mut snoozes = 0u64;
        let v = ring::wait_done(
            d,
            |v| done_reached(v, inc, want),
            || {
                w.snooze(what).map_err(|e| expired(inst, what(), e))?;
                dep.check(inst, &w, || crate::sync::departed_pe(inst, pe), what)?;
                snoozes += 1;
                if snoozes >= COMPARE_AFTER && snoozes.is_power_of_two() {
                    for &ring in rings_of(team.slot) {
                        disagreement(inst, team, ring, index(team.slot, ring, seq))?;
                    }
                    // every call completes before it returns, so a member in a barrier this PE
                    // has not entered (whatever it did is visible now) never completes `want`
                    if crate::sync::waits_in_barrier(inst, team, i)
                        && !done_reached(d.load(Ordering::Acquire), inc, want)
                    {
                        return Err(in_barrier(inst, team, seq, None, i));
                    }
                }
                Ok::<(), Error>(())
            },
        )?;
        least = least.min(done_call(v, seq));
    }
    let cells = inst.team_cells();
    if least > cells.known(team.slot) {
        cells.set_known(team.slot, least);
    }
    Ok(())
}

/// Checks that every other member read this PE's broadcasts of the calls after the last checked up
/// to `upto` (which every member completed): its view word of each such call's buffer must name
/// that call and the same root. A member that named itself root (so it read nothing) or whose
/// call never came would otherwise go unnoticed, as nobody waits for it. The view words are
/// normally still the members' records of those calls: a member records a later call's view in
/// that buffer only a ring's depth later, and a publisher looks before its readers get that far
/// (in call `seq` it looks when the calls it knows completed end before `seq - depth + 2`, and a
/// reader of its call `seq` is at most in that call). A view a later call already replaced is
/// skipped: a diagnosis missed, never a false one.
fn verify(inst: &Instance, team: &Team, upto: u64) -> Result<()> {
    let cells = inst.team_cells();
    let from = cells.verified(team.slot);
    if upto <= from {
        return Ok(());
    }
    cells.set_verified(team.slot, upto);
    // only broadcasts carry a view
    let upto = upto.min(cells.last_broadcast(team.slot));
    let me = inst.my_pe();
    let rings = rings_of(team.slot);
    // the words' addresses once per check, not per call and member: index p's word lies at the
    // first one's address plus p times the distance between two
    let first = |ring: Ring, w: Word, pe: usize| -> Result<(usize, usize)> {
        let a = word(inst, team.slot, ring, w, 0, pe)? as *const AtomicU64 as usize;
        Ok((
            a,
            word_off(inst, team.slot, ring, w, 1) - word_off(inst, team.slot, ring, w, 0),
        ))
    };
    let mut pending = [(0, 0); 2];
    for (k, &ring) in rings.iter().enumerate() {
        pending[k] = first(ring, Word::Pending, me)?;
    }
    let load = |(base, step): (usize, usize), p: usize| {
        // SAFETY: `base + p * step` is index p's word of a ring of this slot (p < its depth), an
        // 8-byte aligned word of a mapped heap (see `word`).
        unsafe { &*((base + p * step) as *const AtomicU64) }.load(Ordering::Relaxed)
    };
    for i in (0..team.size).filter(|&i| i != team.my_index) {
        let pe = team.world_pe(i);
        let mut views = [(0, 0); 2];
        for (k, &ring) in rings.iter().enumerate() {
            views[k] = first(ring, Word::View, pe)?;
        }
        for c in from + 1..=upto {
            // the ring of this PE's broadcast in call c, if it published one
            let Some((k, p, mine)) = rings.iter().enumerate().find_map(|(k, &ring)| {
                let p = index(team.slot, ring, c);
                let m = load(pending[k], p);
                (record_call(m) == c as u32 && record_view(m) != 0).then_some((k, p, m))
            }) else {
                continue;
            };
            let mut theirs = load(views[k], p);
            if record_call(theirs) != c as u32 {
                // a reader of another length read (and failed) on the other ring: it took part
                for (j, &other) in rings.iter().enumerate().filter(|&(j, _)| j != k) {
                    let r = load(views[j], index(team.slot, other, c));
                    if record_call(r) == c as u32 {
                        theirs = r;
                    }
                }
            }
            let behind = (c as u32).wrapping_sub(record_call(theirs)) as i32 > 0;
            if behind || (record_call(theirs) == c as u32 && record_view(theirs) != record_view(mine)) {
                let named = if behind {
                    "did not read it (it named itself root, or did not call it)".to_string()
                } else {
                    format!("named root {}", record_view(theirs) - 1)
                };
                return Err(Error::InvalidParam(format!(
                    "asymmetric broadcast on team {} (call {c}): every member must name the same root; \
                     this PE (PE {me}) was the root, PE {pe} {named}",
                    crate::team_table::TeamName(team.slot)
                )));
            }
        }
    }
    Ok(())
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
                        crate::team_table::TeamName(team.slot),
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
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::Timeout(msg)
}

/// Publisher: waits until every other member completed call `seq` (e.g. before the caller may
/// reuse a buffer the readers copied from directly).
pub fn wait_all_completed(inst: &Instance, team: &Team, seq: u64) -> Result<()> {
    wait_completed(inst, team, seq, seq)
}

/// Before `slot` is released (team destroy): waits until every other member completed the last
/// call in which this PE published, or left the team (its done word names a later team in the
/// slot), so no buffer of this PE is being read when a later team reuses the slot.
pub fn drain(inst: &Instance, team: &Team) -> Result<()> {
    if !inst.all_direct() {
        // the barrier-free path runs only when every member is directly addressable
        return Ok(());
    }
    let cells = inst.team_cells();
    let seq = cells.seq(team.slot);
    let inc = cells.incarnation(team.slot);
    // This PE reads nothing more of the team: its done word says so for every call the others
    // made, not only for its own last one. A member that is calls behind the others (it waited in
    // a barrier while they broadcast from a root that did not wait for it) would otherwise leave
    // the root waiting here for ever for calls it never made, while it went on to the slot's next
    // team, which needs that root.
    let d = done(inst, team.slot, inst.my_pe())?;
    ring::complete(d, done_value(inc, seq + LEFT_AHEAD));
    let last = cells.published(team.slot);
    if last == 0 {
        return Ok(());
    }
    for i in (0..team.size).filter(|&i| i != team.my_index) {
        let pe = team.world_pe(i);
        let d = done(inst, team.slot, pe)?;
        let mut w = Watch::new(inst.limits());
        let mut dep = crate::sync::Departure::default();
        let what = || {
            format!(
                "team slot {} being released: member {i} (PE {pe}) has not completed call {last}",
                team.slot
            )
        };
        let mut snoozes = 0u64;
        let left = |v: u64| v >> CALL_BITS != done_value(inc, 0) >> CALL_BITS;
        while !(done_reached(d.load(Ordering::Acquire), inc, last) || left(d.load(Ordering::Relaxed))) {
            w.snooze(what).map_err(|e| expired(inst, what(), e))?;
            dep.check(inst, &w, || crate::sync::departed_pe(inst, pe), what)?;
            snoozes += 1;
            if snoozes.is_power_of_two()
                && rings_of(team.slot)
                    .iter()
                    .any(|&r| disagreement(inst, team, r, index(team.slot, r, last)).is_err())
            {
                // an asymmetric call (already reported) left members that will never complete it
                return Ok(());
            }
        }
    }
    // the calls since the last check: reported, but the team is released all the same
    if let Err(e) = verify(inst, team, last) {
        log::error!("[PE {}] team destroy: {e}", inst.my_pe());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_words_compare_calls_modulo_their_bits() {
        let v = done_value(7, 100);
        assert!(done_reached(v, 7, 100));
        assert!(done_reached(v, 7, 99));
        assert!(!done_reached(v, 7, 101));
        // another team's word never counts
        assert!(!done_reached(v, 8, 1));
        // across the wrap of the call bits
        let w = done_value(7, (1 << CALL_BITS) + 2);
        assert!(done_reached(w, 7, (1 << CALL_BITS) - 3));
        assert!(!done_reached(w, 7, (1 << CALL_BITS) + 3));
        assert_eq!(done_call(w, (1 << CALL_BITS) + 10), (1 << CALL_BITS) + 2);
        assert_eq!(done_call(v, 100), 100);
        assert_eq!(done_call(v, 90), 100);
        assert_eq!(
            done_call(done_value(7, (1 << CALL_BITS) - 1), 1 << CALL_BITS),
            (1 << CALL_BITS) - 1
        );
        // incarnations keep their low bits only
        assert!(done_reached(done_value(u32::MAX, 5), u32::MAX, 5));
    }
}

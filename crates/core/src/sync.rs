//! Team barriers and the team exchange area.
//!
//! Fast path (every member's heap mapped here): a central sense-counting barrier in the sync-pool
//! area of the team's slot, in the copy of the team's first PE: `aclshmem_protocol::barrier`
//! (crates/protocol), which argues its orderings and is model-checked with loom there. Every store
//! a PE made before arriving — puts into other PEs' heaps included — happens-before every member's
//! return.
//!
//! Generic path (some member reached through a transport): the same counter on the first member,
//! incremented with the transport's atomic fetch-add after a quiet (so this PE's earlier puts are
//! complete); the last arriver resets it and then sets the generation word in *every* member's own
//! copy, so each member polls only its local word (and drives the transports' progress meanwhile).
//!
//! `unsafe`: the barrier words and exchange areas are raw addresses in the mapped heaps, turned into
//! atomics or copied after their bounds were fixed at init.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::team_table::{EXCHANGE_BYTES, EXCHANGE_OFFSET, Team};
use crate::transport::{AmoOp, Remote, Width};
use crate::wait::{Expired, Watch};
use aclshmem_abi::{SYNC_ARRAY_SIZE, SYNC_COUNTER_SIZE};

/// Byte offsets of the barrier words inside a slot's area (separate cache lines).
const ARRIVE: usize = 0;
const GENERATION: usize = 64;

/// Device-heap offset of byte `off` of `slot`'s sync-pool area.
pub(crate) fn slot_off(inst: &Instance, slot: usize, off: usize) -> usize {
    inst.sync_pool() + slot * SYNC_ARRAY_SIZE + off
}

/// Address of byte `off` of `slot`'s sync-pool area in world PE `pe`'s copy, for the fast path.
pub(crate) fn slot_addr(inst: &Instance, slot: usize, off: usize, pe: usize) -> Result<*mut u8> {
    inst.device()
        .direct_addr(slot_off(inst, slot, off), pe)
        .ok_or_else(|| Error::Inner(format!("PE {pe}'s sync area is not mapped here")))
}

/// Byte `off` of `slot`'s sync-pool area in world PE `pe`'s copy, for a transport.
pub(crate) fn slot_remote(inst: &Instance, slot: usize, off: usize, pe: usize) -> Remote<'_> {
    Remote {
        heap: inst.device(),
        off: slot_off(inst, slot, off),
        pe,
    }
}

fn word(inst: &Instance, slot: usize, off: usize, pe: usize) -> Result<&AtomicU64> {
    let p = slot_addr(inst, slot, off, pe)?;
    // SAFETY: the address lies in the sync pool reserved at init inside a mapped heap, is 64-byte
    // aligned, lives as long as the instance, and is only accessed atomically.
    Ok(unsafe { &*(p as *const AtomicU64) })
}

/// In a member's line of the sync counters: its arrival word, the generation it waits for once it
/// arrived at a barrier ([`arrived`]; read to tell a member waits in a barrier, and to name the
/// PEs a stalled barrier waits for).
const EPOCH: usize = 0;

/// Word `off` of `slot`'s line of the sync counters in world PE `pe`'s copy, for a transport.
fn counter_remote(inst: &Instance, slot: usize, off: usize, pe: usize) -> Remote<'_> {
    Remote {
        heap: inst.device(),
        off: inst.sync_counters() + slot * SYNC_COUNTER_SIZE + off,
        pe,
    }
}

/// Word `off` of `slot`'s line of the sync counters in world PE `pe`'s copy ([`EPOCH`],
/// [`SKIPPED`], ...).
fn counter_word(inst: &Instance, slot: usize, off: usize, pe: usize) -> Option<&AtomicU64> {
    let p = inst
        .device()
        .direct_addr(inst.sync_counters() + slot * SYNC_COUNTER_SIZE + off, pe)?;
    // SAFETY: an 8-byte aligned word of the slot's line (64 bytes) in the sync counters of a
    // mapped heap, for the instance's lifetime, only accessed atomically.
    Some(unsafe { &*(p as *const AtomicU64) })
}

/// In a member's line of the sync counters: the last collective call the other members made
/// while this member waited in a barrier of the team instead (written by them, [`skipped`]; read
/// by the member when its barrier ends, [`barrier`]): the call's number (low 32 bits) in the high
/// half, and in the low half the number of that barrier among the program's barriers on the team
/// over a transport ([`PROGRAM_COUNT`]; 0 where every member is mapped), so a member still
/// leaving the barrier before it takes no call up.
const SKIPPED: usize = 8;
/// In a member's line of the sync counters, over a transport: while the member waits in a barrier
/// (or sync) the program called on the team, its next call's number (low 32 bits) in the high
/// half and the barrier's number ([`PROGRAM_COUNT`]) in the low half; 0 otherwise (written by the
/// member, read by members whose collective call met that barrier or waits for the member:
/// [`waits_in_program_barrier`]).
const IN_BARRIER: usize = 16;
/// In a member's line of the sync counters (own): the number of barriers the program called on
/// the team over a transport that this member entered.
const PROGRAM_COUNT: usize = 32;
/// In a member's line of the sync counters: the count of the node leaders' pushed exchanges
/// (`PUSH_COUNT`) the other members had reached in the calls that member missed in a barrier
/// ([`skipped_exchange`]; taken up with the calls, [`skipped_call`]).
const SKIPPED_PUSH: usize = 24;
/// In a member's line of the sync counters, every member mapped: the last call of the team that
/// another member made as the root of a broadcast on the rings, which does not wait for its
/// readers; the root stores it (fetch-max) before it arrives at its next barrier of the program
/// on the team ([`root_calls_of`]), and a member whose barrier ends behind it waited in the
/// barrier instead of that call and takes it up (`collectives::program_barrier`).
const ROOT_CALLS: usize = 40;
const _: () = assert!(ROOT_CALLS + 8 <= SYNC_COUNTER_SIZE);

/// The number of the next barrier of the program on `team` this PE enters over a transport (the
/// one a member waiting in such a barrier instead of this PE's call waits in).
fn next_program_barrier(inst: &Instance, team: &Team) -> u32 {
    (own_counter(inst, team.slot, PROGRAM_COUNT).load(Ordering::Relaxed) as u32).wrapping_add(1)
}

/// A member of `team` waits in a barrier ([`waits_in_barrier`]) where this PE made call `seq`,
/// which fails: every other member is told, before this PE can arrive at that barrier, so that
/// the members in the barrier count the calls up to `seq` as made (and failed) when it ends, and
/// the team's later calls match again on every member (the members that made the call have
/// counted it already: the mark is not theirs, [`skipped_call`]). (Several calls: broadcasts from
/// a root that waits for nobody until its ring comes round.)
pub(crate) fn skipped(inst: &Instance, team: &Team, seq: u64) {
    let at = if inst.all_direct() {
        0
    } else {
        next_program_barrier(inst, team)
    };
    tell_others(
        inst,
        team,
        SKIPPED,
        (seq as u32 as u64) << 32 | u64::from(at),
        seq,
    );
}

/// As [`skipped`], for a call that failed in the node leaders' pushed exchange number `x`
/// ([`PUSH_COUNT`]): the members in the barrier take that count up with the call, so their next
/// exchange is numbered as the others' (the entries the others pushed into their areas for `x`
/// are never taken: every exchange waits for entries of its own number).
pub(crate) fn skipped_exchange(inst: &Instance, team: &Team, seq: u64, x: u64) {
    tell_others(inst, team, SKIPPED_PUSH, x, seq);
    // (the call's number after the count: a member that sees it sees the count too)
    skipped(inst, team, seq);
}

/// Sets word `off` of every other member's line of the sync counters to `v`, about call `seq`
/// that failed (over a transport each set is complete when it returns, before this PE's next
/// arrival at a barrier).
fn tell_others(inst: &Instance, team: &Team, off: usize, v: u64, seq: u64) {
    for i in (0..team.size).filter(|&i| i != team.my_index) {
        let pe = team.world_pe(i);
        if let Err(e) = counter_op(inst, team.slot, off, pe, AmoOp::Set(v)) {
            log::error!(
                "[PE {}] telling PE {pe} that call {seq} on team {} failed: {e}",
                inst.my_pe(),
                crate::team_table::TeamName(team.slot)
            );
        }
    }
}

/// Word `off` of `slot`'s line of the sync counters in world PE `pe`'s copy, read (`Fetch`,
/// Acquire) or set (`Set`, Release): directly where it is mapped here, else through the PE's
/// transport.
fn counter_op(inst: &Instance, slot: usize, off: usize, pe: usize, op: AmoOp) -> Result<u64> {
    if let Some(w) = counter_word(inst, slot, off, pe) {
        return match op {
            AmoOp::Fetch => Ok(w.load(Ordering::Acquire)),
            AmoOp::Set(v) => {
                w.store(v, Ordering::Release);
                Ok(0)
            }
            _ => Err(Error::Inner("unexpected operation on a sync counter".into())),
        };
    }
    inst.routes()
        .to(pe)?
        .atomic(counter_remote(inst, slot, off, pe), Width::W64, op)
}

/// A barrier of `team` ended (every member mapped here): if the others made collective calls
/// while this PE waited in it ([`skipped`]: the call in which they found this PE, or another
/// member, in the barrier; their marks were stored before they arrived, so they are visible now),
/// those calls are counted as made here too, and failed, and so is the barrier.
fn skipped_call(inst: &Instance, team: &Team) -> Result<()> {
    let cells = inst.team_cells();
    let next = cells.seq(team.slot) + 1;
    let v = own_counter(inst, team.slot, SKIPPED).load(Ordering::Acquire);
    let at = v as u32;
    if v == 0 || (at != 0 && at != own_counter(inst, team.slot, PROGRAM_COUNT).load(Ordering::Relaxed) as u32)
    {
        // nothing skipped, or calls skipped in a barrier of the program this PE has not ended yet
        return Ok(());
    }
    // (32-bit call numbers, as the records compare them)
    let ahead = ((v >> 32) as u32).wrapping_sub(next as u32) as i32;
    if ahead < 0 {
        return Ok(());
    }
    let last = next + ahead as u64;
    // the calls are made here by taking their numbers; their completion is recorded when this
    // PE's next call on the team starts (as for every call, `collectives::small::next_seq`), and
    // nobody waits for it before then: the others' later calls wait for that next call anyway
    cells.skip_to(team.slot, last);
    let pushed = own_counter(inst, team.slot, SKIPPED_PUSH).load(Ordering::Relaxed);
    let count = own_word(inst, team.slot, PUSH_COUNT);
    if pushed > count.load(Ordering::Relaxed) {
        count.store(pushed, Ordering::Relaxed);
    }
    Err(taken_up(inst, team, next, last, "they failed there"))
}

/// The error of a barrier (or sync) of the program on `team` that ended with calls `next..=last`
/// of the others taken up as made and failed here (`how` says what became of them there); printed
/// too.
pub(crate) fn taken_up(inst: &Instance, team: &Team, next: u64, last: u64, how: &str) -> Error {
    let calls = if last == next {
        format!("collective call {next}")
    } else {
        format!("collective calls {next} to {last}")
    };
    let msg = format!(
        "asymmetric calls on team {}: this PE (PE {}) waited in a barrier (or sync) while the other \
         members made {calls}; {how}",
        crate::team_table::TeamName(team.slot),
        inst.my_pe()
    );
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::InvalidParam(msg)
}

/// Word `off` of `slot`'s line of the sync counters in this PE's own copy (always mapped).
fn own_counter(inst: &Instance, slot: usize, off: usize) -> &AtomicU64 {
    let p = inst
        .device()
        .local_addr(counter_remote(inst, slot, off, inst.my_pe()).off);
    // SAFETY: an 8-byte aligned word of this slot's line in the sync counters of our own heap,
    // for the instance's lifetime, only accessed atomically.
    unsafe { AtomicU64::from_ptr(p.cast()) }
}

/// Records that this PE arrived at the barrier that ends generation `seen`.
fn arrived(inst: &Instance, slot: usize, seen: u64) {
    // Release: a member that sees it ([`waits_in_barrier`]) also sees what this PE published
    // before the barrier.
    own_counter(inst, slot, EPOCH).store(seen.wrapping_add(1), Ordering::Release);
}

/// Whether member `member` of `team` waits in a barrier of the team that this PE, which is not in
/// one, has not entered: it cannot leave before this PE arrives, so whatever it publishes before
/// that barrier (a collective call's data or record) it published already, and what this PE
/// waits for from it (a call it has not published) it will never publish there. Every member
/// mapped here only (else `false`). Two members: the other's arrivals counted in this PE's
/// `ROUND` outnumber this PE's barriers (`ROUND_SEEN`); more: the member recorded its arrival at
/// the barrier that ends the team's current generation (members record once their wait lasts,
/// [`record_once`]; before that this answers `false`). Acquire: what the member wrote before the
/// barrier is visible to this PE afterwards.
pub(crate) fn waits_in_barrier(inst: &Instance, team: &Team, member: usize) -> bool {
    if !inst.all_direct() || team.size < 2 || member == team.my_index || member >= team.size {
        return false;
    }
    if team.size == 2 {
        let arrivals = own_word(inst, team.slot, ROUND).load(Ordering::Acquire);
        let entered = own_word(inst, team.slot, ROUND_SEEN).load(Ordering::Relaxed);
        return (arrivals.wrapping_sub(entered) as i64) > 0;
    }
    let Ok(generation) = word(inst, team.slot, GENERATION, team.world_pe(0)) else {
        return false;
    };
    let current = generation.load(Ordering::Acquire);
    counter_word(inst, team.slot, EPOCH, team.world_pe(member))
        .is_some_and(|epoch| epoch.load(Ordering::Acquire) == current.wrapping_add(1))
}

/// A waiter records its arrival once its wait has lasted long enough to be watched: before
/// anyone can ask who is missing (the warning comes much later), every member that arrived and
/// waits has recorded, while short waits (the common case) never pay for the store.
#[inline]
fn record_once(inst: &Instance, team: &Team, seen: u64, w: &Watch, recorded: &mut bool) {
    if !*recorded && w.watching() {
        arrived(inst, team.slot, seen);
        *recorded = true;
    }
}

/// The members of `team` that have not arrived at the barrier ending generation `seen`.
fn not_arrived(inst: &Instance, team: &Team, seen: u64) -> String {
    let target = seen.wrapping_add(1);
    let missing: Vec<String> = (0..team.size)
        .map(|i| team.world_pe(i))
        .filter(|&pe| counter_op(inst, team.slot, EPOCH, pe, AmoOp::Fetch).unwrap_or(0) != target)
        .map(|pe| pe.to_string())
        .collect();
    format!(
        "barrier over team {} ({} PEs): PE(s) {} have not arrived",
        crate::team_table::TeamName(team.slot),
        team.size,
        missing.join(", ")
    )
}

/// The error of a barrier whose wait passed `ACLSHMEM_COLLECTIVE_TIMEOUT`; the team's barrier state
/// is unusable afterwards (this PE's arrival stays counted).
fn timed_out(inst: &Instance, team: &Team, seen: u64, e: Expired) -> Error {
    let msg = format!(
        "{} after {:.1} s (ACLSHMEM_COLLECTIVE_TIMEOUT); this team cannot synchronise any more",
        not_arrived(inst, team, seen),
        e.0.as_secs_f64()
    );
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::Timeout(msg)
}

/// A new team in `slot`: clears this PE's arrival word, its [`agreed`] words, its broadcast
/// words (failure mark, count of hierarchical broadcasts, the root's data word: a word left by
/// an earlier team must not pass for a call of this one) and its count of pushed exchanges
/// (called before the team's first barrier).
pub(crate) fn reset(inst: &Instance, slot: usize) {
    arrived(inst, slot, u64::MAX);
    for off in [SKIPPED, IN_BARRIER, SKIPPED_PUSH, PROGRAM_COUNT, ROOT_CALLS] {
        own_counter(inst, slot, off).store(0, Ordering::Relaxed);
    }
    for off in [
        AGREE_VALUE,
        AGREE_LEN,
        AGREE_FAILED,
        BCAST_FAILED,
        BCAST_COUNT,
        BCAST_DATA,
        PUSH_COUNT,
    ] {
        own_word(inst, slot, off).store(0, Ordering::Relaxed);
    }
}

/// This PE's own copy of a sync word (always mapped).
pub(crate) fn own_word(inst: &Instance, slot: usize, off: usize) -> &AtomicU64 {
    let p = inst.device().local_addr(slot_off(inst, slot, off));
    // SAFETY: as in `word`, in this PE's own heap.
    unsafe { &*(p as *const AtomicU64) }
}

/// Word at byte `off` of this PE's departure notices (`Instance::departures`): the count of the
/// PEs that announced their departure at 0, one bit per PE from 64 on.
fn depart_word(inst: &Instance, off: usize) -> &AtomicU64 {
    let p = inst.device().local_addr(inst.departures() + off);
    // SAFETY: an aligned 8-byte word of the departure area reserved at init in our own heap,
    // written by peers only with atomics (the transports' or, mapped, inline ones).
    unsafe { &*(p as *const AtomicU64) }
}

/// Byte offset of the word holding PE `pe`'s bit in a departure area.
fn depart_bit_off(pe: usize) -> usize {
    64 + 8 * (pe / 64)
}

/// Whether some PE announced its departure to this one.
fn any_departed(inst: &Instance) -> bool {
    depart_word(inst, 0).load(Ordering::Acquire) != 0
}

/// Whether world PE `pe` announced its departure to this one (Acquire: what it did before is
/// visible, where it wrote this PE's memory directly).
fn departed(inst: &Instance, pe: usize) -> bool {
    pe < inst.n_pes() && depart_word(inst, depart_bit_off(pe)).load(Ordering::Acquire) & (1 << (pe % 64)) != 0
}

/// Tells every other PE that this one leaves the job without meeting it again (a program that
/// returned from `main` without `shmem_finalize`; the implicit finalize that follows waits for
/// the others). A PE still waiting for it in a barrier or a collective then fails ([`Departure`])
/// instead of waiting for ever, while its memory stays served until everyone is done. What this
/// PE issued is complete before the notices go out.
pub(crate) fn depart(inst: &Instance) -> Result<()> {
    let routes = inst.routes();
    std::sync::atomic::fence(Ordering::SeqCst);
    routes.quiet()?;
    let me = inst.my_pe();
    let base = Remote {
        heap: inst.device(),
        off: inst.departures(),
        pe: me,
    };
    // every PE is told, whatever fails for one of them (the first failure is returned)
    let mut first = Ok(());
    for pe in (0..inst.n_pes()).filter(|&pe| pe != me) {
        let at = Remote { pe, ..base };
        let told = routes.to(pe).and_then(|to| {
            to.atomic(
                at.at(depart_bit_off(me)),
                Width::W64,
                AmoOp::FetchOr(1 << (me % 64)),
            )?;
            to.atomic(at, Width::W64, AmoOp::FetchAdd(1))
        });
        if let Err(e) = told {
            first = first.and(Err(e));
        }
    }
    first.and(routes.quiet())
}

/// How long a wait goes on after it learned that a PE it needs left, before it fails: over a
/// transport, what that PE sent before leaving may still be on its way (its notice can overtake
/// a posted increment, or another member's update of this one). Mapped waits need no grace (the
/// PE's stores are visible before its notice), but take it too: a failure is not a hot path.
const DEPARTURE_GRACE: Duration = Duration::from_secs(2);

/// A wait's view of departed PEs ([`depart`]): at the looks of its [`Watch`], `gone` names a PE
/// the wait still needs that has left; the wait fails once that has held for
/// [`DEPARTURE_GRACE`] (the wait's condition was tested again all the while).
#[derive(Default)]
pub(crate) struct Departure {
    since: Option<(usize, Instant)>,
}

impl Departure {
    pub(crate) fn check(
        &mut self,
        inst: &Instance,
        w: &Watch,
        gone: impl FnOnce() -> Option<usize>,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        if !w.due() || !any_departed(inst) {
            return Ok(());
        }
        let Some(pe) = gone() else {
            self.since = None;
            return Ok(());
        };
        match self.since {
            Some((p, t)) if p == pe && t.elapsed() >= DEPARTURE_GRACE => {
                let msg = format!(
                    "PE {pe} left the job (its program ended without finalizing) while this PE still waits \
                     for it: {}",
                    what()
                );
                crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
                Err(Error::Inner(msg))
            }
            Some((p, _)) if p == pe => Ok(()),
            _ => {
                self.since = Some((pe, Instant::now()));
                Ok(())
            }
        }
    }
}

/// A point-to-point wait's view of departures (`wait_until` and the signal waits): when every
/// other PE has left the job, nothing but this PE's own threads can end the wait; after
/// [`DEPARTURE_GRACE`] of that it fails, naming the call, instead of waiting for ever (the PEs
/// that left wait at their exit for this one).
#[derive(Default)]
pub(crate) struct Alone {
    rounds: u64,
    since: Option<Instant>,
}

impl Alone {
    pub(crate) fn check(&mut self, inst: &Instance, what: &str) -> Result<()> {
        self.rounds += 1;
        if !crate::wait::is_look(self.rounds) {
            return Ok(());
        }
        let n = inst.n_pes();
        if n < 2 || (depart_word(inst, 0).load(Ordering::Acquire) as usize) < n - 1 {
            self.since = None;
            return Ok(());
        }
        match self.since {
            Some(t) if t.elapsed() >= DEPARTURE_GRACE => {
                let msg = format!(
                    "every other PE left the job (their programs ended without finalizing) while this PE \
                     waits for its word `{what}` to change: nothing else can end the wait"
                );
                crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
                Err(Error::Inner(msg))
            }
            Some(_) => Ok(()),
            None => {
                self.since = Some(Instant::now());
                Ok(())
            }
        }
    }
}

/// The first member of `team` among `members` (team indices) that left the job.
pub(crate) fn departed_member(
    inst: &Instance,
    team: &Team,
    mut members: impl Iterator<Item = usize>,
) -> Option<usize> {
    members.find_map(|i| {
        let pe = team.world_pe(i);
        departed(inst, pe).then_some(pe)
    })
}

/// Whether world PE `pe` left the job: `Some(pe)` if so (for [`Departure::check`]).
pub(crate) fn departed_pe(inst: &Instance, pe: usize) -> Option<usize> {
    departed(inst, pe).then_some(pe)
}

/// Barrier over the members of `team` (this PE must be one), inside a collective call or the
/// library's own agreement; the program's barriers and syncs are [`program_barrier`]'s.
pub fn barrier(inst: &Instance, team: &Team) -> Result<()> {
    if barrier_met(inst, team)? {
        return Err(in_program_barrier(inst, team, None));
    }
    Ok(())
}

/// [`barrier`], telling whether it met members in a barrier of the program instead
/// ([`program_barrier`]; only seen over a transport, [`barrier_generic`], and among a node's
/// members in the hierarchical barrier).
fn barrier_met(inst: &Instance, team: &Team) -> Result<bool> {
    if !inst.all_direct() && team.size > 1 {
        if let Some(r) = barrier_routed(inst, team, false) {
            return r;
        }
        return barrier_generic(inst, team, false);
    }
    barrier_mapped(inst, team).map(|()| false)
}

/// A barrier (or sync) the program called on `team`. Over a transport (one node without direct
/// access, or across nodes without hierarchy) it arrives as the program's ([`barrier_generic`]):
/// where it met the others' collective call instead of their barrier, that call fails on them
/// and this PE waits again, so the barrier ends only when every member called one; the calls the
/// others made meanwhile are then counted as made and failed here too ([`skipped_call`]).
pub fn program_barrier(inst: &Instance, team: &Team) -> Result<()> {
    if inst.all_direct() || team.size == 1 {
        return barrier_mapped(inst, team);
    }
    program_barrier_routed(inst, team)
}

/// World PE `pe`'s [`ROOT_CALLS`] word on `team` (every member mapped), which the roots of
/// broadcasts update before they arrive at a barrier of the program
/// (`collectives::small::tell_broadcasts`).
#[inline]
pub(crate) fn root_calls_of<'a>(inst: &'a Instance, team: &Team, pe: usize) -> Option<&'a AtomicU64> {
    counter_word(inst, team.slot, ROOT_CALLS, pe)
}

/// This PE's [`ROOT_CALLS`] word on `team` (read after a barrier of the program).
#[inline]
pub(crate) fn root_calls(inst: &Instance, team: &Team) -> u64 {
    own_counter(inst, team.slot, ROOT_CALLS).load(Ordering::Acquire)
}

/// [`program_barrier`] over a transport.
#[inline(never)]
fn program_barrier_routed(inst: &Instance, team: &Team) -> Result<()> {
    // (read by the others' calls that meet this barrier, or wait for this PE:
    // `waits_in_program_barrier`)
    let number = next_program_barrier(inst, team);
    own_counter(inst, team.slot, PROGRAM_COUNT).store(u64::from(number), Ordering::Relaxed);
    let mark = own_counter(inst, team.slot, IN_BARRIER);
    let next_call = (inst.team_cells().seq(team.slot) + 1) as u32;
    mark.store(u64::from(next_call) << 32 | u64::from(number), Ordering::Release);
    // (a barrier that fails leaves the mark: the team cannot synchronise any more, and the
    // others' calls that time out with it still name this PE)
    if let Some(r) = barrier_routed(inst, team, true) {
        r?;
        mark.store(0, Ordering::Release);
        return skipped_call(inst, team);
    }
    let mut result = Ok(());
    loop {
        match barrier_generic(inst, team, true) {
            Ok(true) => log::debug!(
                "[PE {}] a barrier of team {} met the others' collective call; waiting again",
                inst.my_pe(),
                crate::team_table::TeamName(team.slot)
            ),
            Ok(false) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    result?;
    mark.store(0, Ordering::Release);
    skipped_call(inst, team)
}

/// The barriers over a transport that are not [`barrier_generic`]'s: the bootstrap's, where no
/// transport reaches every PE, and the hierarchical one (`None`: neither applies); `program` as
/// in [`barrier_hier`], whose answer this returns.
fn barrier_routed(inst: &Instance, team: &Team, program: bool) -> Option<Result<bool>> {
    if team.slot == 0 && !inst.routes().reaches_all() {
        // peers no transport reaches (other nodes, in this build): the bootstrap's barrier
        let _g = inst.collective();
        return Some(inst.boot().barrier().map(|()| false));
    }
    if inst.hierarchical() {
        let g = groups(inst, team);
        if g.leaders.len() <= MAX_LEADERS {
            return Some(barrier_hier(inst, team, &g, program));
        }
    }
    None
}

/// The error of a collective call (`seq`, when it has a number on the team) whose barrier met
/// members in a barrier of the program instead ([`program_barrier`]): names the first such member
/// (its mark is read through the transport: this is the failure path only).
pub(crate) fn in_program_barrier(inst: &Instance, team: &Team, seq: Option<u64>) -> Error {
    let who = waiting_member(inst, team)
        .map(|pe| format!("PE {pe}"))
        .unwrap_or_else(|| "another member".into());
    let call = seq.map_or("a collective call".to_string(), |s| {
        format!("collective call {s}")
    });
    let msg = format!(
        "asymmetric calls on team {}: every member must make the same collective calls in the same \
         order; this PE (PE {}) made {call}, {who} waits in a barrier (or sync) of the team instead",
        crate::team_table::TeamName(team.slot),
        inst.my_pe()
    );
    Error::InvalidParam(msg)
}

/// Whether world PE `pe` waits in a barrier (or sync) of the program on `team` instead of making
/// call `seq`, which this PE makes: its [`IN_BARRIER`] mark names `seq` as its next call and the
/// barrier as the next one this PE enters (a member that made the call and then entered a
/// barrier names a later call; one read through the transport where `pe` is on another node:
/// for waits that last only).
pub(crate) fn waits_in_program_barrier(inst: &Instance, team: &Team, pe: usize, seq: u64) -> bool {
    // the barrier is the next one this PE enters: a member still leaving the previous one (its
    // mark names this call as its next, too) is not taken for it
    let expected = (seq as u32 as u64) << 32 | u64::from(next_program_barrier(inst, team));
    in_barrier_mark(inst, team, pe) == expected
}

/// World PE `pe`'s [`IN_BARRIER`] mark on `team`'s slot (0 where it cannot be read).
fn in_barrier_mark(inst: &Instance, team: &Team, pe: usize) -> u64 {
    counter_op(inst, team.slot, IN_BARRIER, pe, AmoOp::Fetch).unwrap_or(0)
}

/// The first other member of `team` whose [`IN_BARRIER`] mark says it waits in a barrier of the
/// program.
fn waiting_member(inst: &Instance, team: &Team) -> Option<usize> {
    (0..team.size)
        .filter(|&i| i != team.my_index)
        .map(|i| team.world_pe(i))
        .find(|&pe| in_barrier_mark(inst, team, pe) != 0)
}

/// A barrier with every member's heap mapped here (or a team of one).
#[inline]
fn barrier_mapped(inst: &Instance, team: &Team) -> Result<()> {
    if team.size == 1 {
        std::sync::atomic::fence(Ordering::SeqCst);
        return inst.routes().quiet();
    }
    if team.size == 2 {
        barrier_pair(inst, team)?;
        return skipped_call(inst, team);
    }
    let root = team.world_pe(0);
    let arrive = word(inst, team.slot, ARRIVE, root)?;
    let generation = word(inst, team.slot, GENERATION, root)?;
    // the protocol and its orderings: aclshmem_protocol::barrier (model-checked there)
    let mut w = Watch::new(inst.limits());
    let mut recorded = false;
    let mut dep = Departure::default();
    aclshmem_protocol::barrier::central(arrive, generation, team.size as u64, |seen| {
        barrier_snooze(inst, team, seen, &mut w, &mut recorded, &mut dep)
    })?;
    skipped_call(inst, team)
}

/// Barrier of a team of two directly addressable members: each increments the other's round-0
/// counter (`ROUND`) and waits until its own reaches its count of completed waits (`ROUND_SEEN`). Both lines move once each way, at the same time, where the central
/// barrier moves its counter and generation lines one after the other (measured: 2-PE barrier
/// 0.12–0.46 µs central, bimodal with the VM's placement). Every increment a member receives is
/// matched by one wait of its own, so the counters stay paired across the teams that reuse the
/// slot (they only grow; in all-direct jobs nothing else uses them).
fn barrier_pair(inst: &Instance, team: &Team) -> Result<()> {
    let other = team.world_pe(1 - team.my_index);
    let theirs = word(inst, team.slot, ROUND, other)?;
    let mine = own_word(inst, team.slot, ROUND);
    let seen = own_word(inst, team.slot, ROUND_SEEN);
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "barrier over team {} (2 PEs): PE(s) {other} have not arrived",
            crate::team_table::TeamName(team.slot)
        )
    };
    // the protocol and its orderings: aclshmem_protocol::barrier::pair (model-checked there)
    let mut dep = Departure::default();
    aclshmem_protocol::barrier::pair(mine, theirs, seen, || {
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        dep.check(inst, &w, || departed_pe(inst, other), what)
    })?;
    Ok(())
}

/// Words of a slot's area for the leaders' part of the hierarchical barrier, beside ARRIVE and
/// GENERATION in the first 128 bytes: per dissemination round, the counter the round's partner
/// increments (`ROUND`) and this PE's own count of that round's completed waits (`ROUND_SEEN`,
/// only ever touched by this PE). Neither is reset with the team: both only grow, over every team
/// that uses the slot, so an increment can never be lost to a member's late reset.
const ROUND: usize = 8;
const ROUND_SEEN: usize = 72;
const ROUNDS: usize = 5;
/// Words of the hierarchical broadcast (`collectives::hier`), after the round words: the word a
/// root stores in each other node's leader after the data (`BCAST_DATA`: the call and root it
/// named, sent with the data in one notification), and the acknowledgements leaders send a root
/// that let them read its source (`BCAST_ACK`, expected total in `BCAST_ACKED`, cumulative like
/// the round words). `HELD`: whether the member the others of its node copy from (in a
/// hierarchical broadcast or reduction) holds the call's result (written by that member in every
/// such call before the others read it).
pub(crate) const BCAST_DATA: usize = ROUND + 8 * ROUNDS;
pub(crate) const BCAST_ACK: usize = BCAST_DATA + 8;
pub(crate) const HELD: usize = ROUND_SEEN + 8 * ROUNDS;
pub(crate) const BCAST_ACKED: usize = HELD + 8;
const _: () = assert!(BCAST_ACK + 8 <= GENERATION && BCAST_ACKED + 8 <= EXCHANGE_OFFSET);
/// The last 32 bytes of the exchange area: the call and root each member named in the
/// hierarchical broadcast, by the parity of its count of hierarchical broadcasts on the team
/// (`BCAST_COUNT`, own, cleared with the team: each such call starts with a barrier, so a
/// member is at most one of them ahead of the slowest reader; the call number itself counts
/// the eager broadcasts too, which have no barrier, so its parity did not bound that), and the
/// failure mark of a call found asymmetric (call in the high half).
pub(crate) const BCAST_VIEW: usize = EXCHANGE_OFFSET + EXCHANGE_USABLE;
pub(crate) const BCAST_FAILED: usize = BCAST_VIEW + 16;
pub(crate) const BCAST_COUNT: usize = BCAST_FAILED + 8;
/// This member's count of the hierarchical reduction's pushed exchanges on the team (own,
/// cleared with the team; `hier::exchange_partials` numbers its entries by it).
pub(crate) const PUSH_COUNT: usize = BCAST_COUNT + 8;
/// Bytes of the exchange area [`exchange`] may use.
const EXCHANGE_USABLE: usize = EXCHANGE_BYTES - 40;
const _: () = assert!(PUSH_COUNT + 8 == EXCHANGE_OFFSET + EXCHANGE_BYTES);
/// The partials area of the hierarchical reduction's pushed exchange (`collectives::hier`): the
/// exchange area after [`agreed`]'s three words, up to the broadcast views. Leaders write into each
/// other's copies; see `hier::exchange_partials` for why it never meets the area's other uses.
pub(crate) const PARTIALS: usize = EXCHANGE_OFFSET + 24;
pub(crate) const PARTIALS_BYTES: usize = EXCHANGE_USABLE - 24;
/// Most node leaders the hierarchical barrier handles (2^ROUNDS); larger teams use the generic
/// barrier.
pub(crate) const MAX_LEADERS: usize = 1 << ROUNDS;

pub(crate) use crate::team_table::Groups;

/// The node groups of `team` (the same on every member: the node numbers are), computed once
/// per team shape and instance ([`Instance::groups`]).
#[inline]
pub(crate) fn groups(inst: &Instance, team: &Team) -> std::sync::Arc<Groups> {
    inst.groups(team)
}

/// Hierarchical barrier: every member completes its operations, the members of each node meet
/// in shared memory, the node leaders meet over the transports, the members of each node meet
/// again. Each step is a barrier, so the whole one is too: every member's earlier operations are
/// complete (its quiet) before its node's leader signals, and its leader's signal precedes every
/// other leader's release.
///
/// `program`: the program's barrier, whose node barriers are entered again while they meet the
/// node's other members in a collective call's instead (those calls fail there); else a
/// collective call's own, which goes through all its steps when it met a program's barrier (so
/// the node's members stay in step) and returns `true`.
fn barrier_hier(inst: &Instance, team: &Team, g: &Groups, program: bool) -> Result<bool> {
    inst.routes().quiet()?;
    let node = |mixed: &mut bool| -> Result<()> {
        while local_barrier_as(inst, team, g, program)? {
            *mixed = true;
            if !program {
                break;
            }
        }
        Ok(())
    };
    let mut mixed = false;
    node(&mut mixed)?;
    if g.leading(team) {
        leaders_barrier(inst, team, g)?;
    }
    node(&mut mixed)?;
    Ok(mixed && !program)
}

/// The central barrier among this node's members of `team` (words in the node leader's copy of
/// the slot), inside a collective call: where it met a member in a barrier of the program instead
/// ([`local_barrier_as`]), it has passed all the same (so a caller that goes on through its
/// steps stays in step with the node's other members) and fails with `ACLSHMEM_INVALID_PARAM`
/// naming that member. A group of one returns at once.
pub(crate) fn local_barrier(inst: &Instance, team: &Team, g: &Groups) -> Result<()> {
    if local_barrier_as(inst, team, g, false)? {
        return Err(in_program_barrier(inst, team, None));
    }
    Ok(())
}

/// [`local_barrier`], arriving as the program's barrier (`program`) or a collective call's, and
/// telling whether it met arrivals of the other kind (`aclshmem_protocol::barrier::central_as`).
fn local_barrier_as(inst: &Instance, team: &Team, g: &Groups, program: bool) -> Result<bool> {
    if g.local.len() == 1 {
        return Ok(false);
    }
    let lead = team.world_pe(g.local[0]);
    let arrive = word(inst, team.slot, ARRIVE, lead)?;
    let generation = word(inst, team.slot, GENERATION, lead)?;
    let mut w = Watch::new(inst.limits());
    let what = || {
        format!(
            "barrier over team {} ({} PEs): the {} members on this node (leader PE {lead}) have not all \
             arrived",
            crate::team_table::TeamName(team.slot),
            team.size,
            g.local.len()
        )
    };
    let mut dep = Departure::default();
    let n = g.local.len() as u64;
    aclshmem_protocol::barrier::central_as(arrive, generation, n, program, |_| {
        inst.routes().progress();
        w.snooze(what).map_err(|e| expired(inst, what(), e))?;
        // any member, not only this node's: a member on another node that left keeps its node's
        // leader, and so this node's, from ever completing the barrier (see `departed_in_barrier`)
        dep.check(inst, &w, || departed_in_barrier(inst, team), what)
    })
}

/// A member of `team` that left the job, for a barrier's waits: a barrier cannot complete once a
/// member left before arriving, wherever the wait is in the barrier's hierarchy (a node's
/// members wait for their leader, leaders for other leaders, never for the member itself); one
/// that left after it arrived left a completed barrier, which every wait sees within
/// [`DEPARTURE_GRACE`].
fn departed_in_barrier(inst: &Instance, team: &Team) -> Option<usize> {
    departed_member(inst, team, 0..team.size)
}

/// Dissemination barrier among the node leaders of `team` (this PE must be one): in round k,
/// leader i increments leader (i + 2^k)'s round-k counter with a posted atomic and waits until
/// its own has been incremented as often as it waited in that round. After ceil(log2 L) rounds
/// every leader has heard, directly or not, from every other. Earlier operations of this node's
/// members are complete (they quiet before arriving, and the increment is issued after that
/// quiet returned), so a released leader sees their data.
///
/// The increments are notifications ([`crate::transport::Transport::notify`]): a later quiet of
/// this PE does not wait for them to complete. Nothing needs it to: data ordering rests only on
/// the quiet before each increment is issued, never on the increment's completion; each one is
/// counted by its target before the target leaves that round (its wait), so none is lost; and
/// since the counters only grow and each target compares its counter with its own count of waits,
/// an increment counts for the barrier it was sent in whenever it lands. (Over UCX's tcp
/// transport a flush waits for the target's acknowledgement of every atomic, so with posted
/// increments each barrier's quiet waited for a message of the previous barrier's partner.)
pub(crate) fn leaders_barrier(inst: &Instance, team: &Team, g: &Groups) -> Result<()> {
    let l = g.leaders.len();
    let routes = inst.routes();
    let mut k = 0;
    while (1usize << k) < l {
        let partner = team.world_pe(g.leaders[(g.my_leader + (1 << k)) % l]);
        routes.to(partner)?.notify(
            slot_remote(inst, team.slot, ROUND + 8 * k, partner),
            Width::W64,
            AmoOp::FetchAdd(1),
        )?;
        let seen = own_word(inst, team.slot, ROUND_SEEN + 8 * k);
        let target = seen.load(Ordering::Relaxed).wrapping_add(1);
        seen.store(target, Ordering::Relaxed);
        let count = own_word(inst, team.slot, ROUND + 8 * k);
        let from = team.world_pe(g.leaders[(g.my_leader + l - (1 << k) % l) % l]);
        let mut w = Watch::new(inst.limits());
        let what = || {
            format!(
                "barrier over team {} ({} PEs, {l} nodes): node leader PE {from} has not arrived \
                 (round {k})",
                crate::team_table::TeamName(team.slot),
                team.size
            )
        };
        let mut dep = Departure::default();
        // Acquire: pairs with the partner's increment, after its node's completed operations
        while (count.load(Ordering::Acquire).wrapping_sub(target) as i64) < 0 {
            routes.progress();
            w.snooze(what).map_err(|e| expired(inst, what(), e))?;
            dep.check(inst, &w, || departed_in_barrier(inst, team), what)?;
        }
        k += 1;
    }
    Ok(())
}

/// The error of a wait that passed `ACLSHMEM_COLLECTIVE_TIMEOUT` (logged on stderr too).
pub(crate) fn expired(inst: &Instance, what: String, e: Expired) -> Error {
    let msg = format!(
        "{what} after {:.1} s (ACLSHMEM_COLLECTIVE_TIMEOUT); this team cannot synchronise any more",
        e.0.as_secs_f64()
    );
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::Timeout(msg)
}

/// What a program's barrier adds to the arrival counter over a transport: one arrival, counted
/// in the high half as well ([`barrier_generic`]).
const PROGRAM_ARRIVAL: u64 = 1 | 1 << 32;
/// What the last arriver adds to every member's generation word besides 1 when the barrier met
/// arrivals of both kinds.
const MIXED: u64 = 1 << 32;

/// The barrier over the transport interface (see the module documentation). `program`: this PE
/// arrives in a barrier the program called ([`program_barrier`]), else inside a collective call.
/// The arrival counter counts the program's arrivals in its high half, so the last arriver knows
/// whether every member came for the same reason; where not, it adds [`MIXED`] to every member's
/// generation, and every member returns `true`: a collective call that met a program's barrier
/// fails, the program's barrier is entered again. (No extra message: the kind travels in the
/// increments the barrier makes anyway.)
fn barrier_generic(inst: &Instance, team: &Team, program: bool) -> Result<bool> {
    let routes = inst.routes();
    // everything this PE issued is complete before it arrives
    routes.quiet()?;
    let generation = own_word(inst, team.slot, GENERATION);
    let seen = generation.load(Ordering::Acquire);
    let root = team.world_pe(0);
    let arrive = slot_remote(inst, team.slot, ARRIVE, root);
    let inc = if program { PROGRAM_ARRIVAL } else { 1 };
    let now = routes
        .to(root)?
        .atomic(arrive, Width::W64, AmoOp::FetchAdd(inc))?
        .wrapping_add(inc);
    if now & 0xffff_ffff == team.size as u64 {
        let programs = now >> 32;
        let mixed = programs != 0 && programs != team.size as u64;
        routes.to(root)?.atomic(arrive, Width::W64, AmoOp::Set(0))?;
        // every member waits for its own generation word to change: increment each one rather
        // than store this PE's next value, because the words of a reused slot need not agree
        // (a member of an earlier team in the slot passed barriers the others did not; storing
        // a value a member already held left it waiting for ever)
        let step = if mixed { 1 + MIXED } else { 1 };
        for i in 0..team.size {
            let pe = team.world_pe(i);
            let g = slot_remote(inst, team.slot, GENERATION, pe);
            routes.to(pe)?.atomic(g, Width::W64, AmoOp::FetchAdd(step))?;
        }
        return Ok(mixed);
    }
    let mut w = Watch::new(inst.limits());
    let mut recorded = false;
    let mut dep = Departure::default();
    loop {
        let g = generation.load(Ordering::Acquire);
        if g != seen {
            return Ok(g.wrapping_sub(seen) != 1);
        }
        routes.progress();
        barrier_snooze(inst, team, seen, &mut w, &mut recorded, &mut dep)?;
    }
}

/// One wait step of a barrier over `team` ending generation `seen` (central or generic): records
/// this PE's arrival once the wait is watched, snoozes (failing past the collective timeout), and
/// fails once a member that left has not arrived: a member that left never arrives, or its
/// arrival released this PE already (over a transport the last arriver's update may still be on
/// its way: [`Departure`]'s grace covers it).
fn barrier_snooze(
    inst: &Instance,
    team: &Team,
    seen: u64,
    w: &mut Watch,
    recorded: &mut bool,
    dep: &mut Departure,
) -> Result<()> {
    record_once(inst, team, seen, w, recorded);
    w.snooze(|| not_arrived(inst, team, seen))
        .map_err(|e| timed_out(inst, team, seen, e))?;
    dep.check(
        inst,
        w,
        || departed_member(inst, team, 0..team.size),
        || not_arrived(inst, team, seen),
    )
}

/// Collective over `team`: every member publishes `data` (at most EXCHANGE_BYTES, the same length
/// everywhere); returns all members' data in team order.
pub fn exchange(inst: &Instance, team: &Team, data: &[u8]) -> Result<Vec<Vec<u8>>> {
    place_exchanged(inst, team, data)?;
    barrier(inst, team)?;
    let out = read_exchanged(inst, team, data.len())?;
    barrier(inst, team)?;
    Ok(out)
}

/// [`exchange`] as the start of collective call `call` (`arg`, `len` as in [`agreed`]): the
/// members' data are read between [`agreed`]'s barriers, so a member making another collective
/// call fails this one instead of meeting its barriers.
#[allow(clippy::too_many_arguments)]
pub(crate) fn exchange_agreed<D: Fn(Said, usize) -> String + ?Sized>(
    inst: &Instance,
    team: &Team,
    call: u64,
    arg: u32,
    len: u64,
    data: &[u8],
    describe: &D,
) -> Result<Vec<Vec<u8>>> {
    place_exchanged(inst, team, data)?;
    let mut out = Vec::new();
    agreed(inst, team, call, arg, len, describe, |_| {
        out = read_exchanged(inst, team, data.len())?;
        Ok(())
    })?;
    Ok(out)
}

/// This PE's part of an exchange, in its own exchange area of `team`'s slot (before the barrier
/// after which the members read it).
pub(crate) fn place_exchanged(inst: &Instance, team: &Team, data: &[u8]) -> Result<()> {
    if data.len() > EXCHANGE_USABLE - EXCHANGE_DATA {
        return Err(Error::Inner(format!(
            "exchange of {} bytes exceeds the area",
            data.len()
        )));
    }
    let mine = inst
        .device()
        .local_addr(slot_off(inst, team.slot, EXCHANGE_OFFSET + EXCHANGE_DATA));
    // SAFETY: the exchange area of this slot in our own heap holds EXCHANGE_BYTES bytes (checked
    // above); peers read it only between the barriers that follow.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), mine, data.len()) };
    Ok(())
}

/// Every member's `n` bytes of exchanged data (between two barriers: see [`exchange`]).
pub(crate) fn read_exchanged(inst: &Instance, team: &Team, n: usize) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(team.size);
    for i in 0..team.size {
        let pe = team.world_pe(i);
        let mut part = vec![0u8; n];
        let at = slot_remote(inst, team.slot, EXCHANGE_OFFSET + EXCHANGE_DATA, pe);
        match at.direct() {
            // SAFETY: `n` bytes of the member's exchange area (checked against the area by the
            // callers); every member wrote its data before the barrier.
            Some(p) => unsafe { std::ptr::copy_nonoverlapping(p, part.as_mut_ptr(), part.len()) },
            // SAFETY: `part` is writable for its length; the range lies in the sync pool.
            None => unsafe { inst.routes().to(pe)?.get(at, part.as_mut_ptr(), part.len())? },
        }
        out.push(part);
    }
    Ok(out)
}

/// The bootstrap's allgather and barrier (the config store, MPI): every step bounded by
/// `control_operation_timeout`, so a PE that never joins makes the others fail (NULL) in that
/// time (and, with the config store, a PE that joins after that fails at once: the step failed).
/// While it waits, a PE that finds another waiting in a barrier (or sync) of the program on the
/// world team ([`world_member_in_barrier`]) gives the step up, which fails it on every PE at once
/// (that PE will not come: it cannot leave its barrier before this one arrives there). The
/// aclshmem API's allocation, as the original's control plane does it. (The other kind, a
/// numbered collective call on the world team, is `collectives::WorldAgreement`.)
pub struct BootstrapAgreement;

impl crate::instance::Agreement for BootstrapAgreement {
    fn agree(&self, inst: &Instance, call: &crate::instance::LibraryCall) -> Result<()> {
        use crate::instance::LibraryCall;
        let check = || {
            world_member_in_barrier(inst).map(|pe| {
                format!(
                    "PE {pe} waits in a barrier (or sync) of the world team instead of this collective \
                     allocation or free"
                )
            })
        };
        let parts = inst
            .routes()
            .drive_while(|| inst.boot().allgather_checked(&call.encode(), &check))?;
        let calls: Vec<Option<LibraryCall>> = parts.iter().map(|p| LibraryCall::decode(p)).collect();
        if calls.iter().all(|c| c.as_ref() == Some(call)) {
            return Ok(());
        }
        Err(Error::InvalidParam(call.differ(inst.my_pe(), &calls)))
    }
    fn barrier(&self, inst: &Instance) -> Result<()> {
        inst.routes().drive_while(|| inst.boot().barrier())
    }
}

/// A world PE that waits in a barrier (or sync) of the program on the world team, where this PE
/// is in a collective step of the library's own that no barrier meets (the bootstrap's): that PE
/// cannot leave the barrier before this one arrives there, so it will not take part in the step.
/// Where every member is mapped, [`waits_in_barrier`] (a member recorded its arrival; a member
/// still leaving the previous barrier is not in one); over a transport, the member's mark names
/// this PE's next call and next barrier ([`waits_in_program_barrier`]).
pub(crate) fn world_member_in_barrier(inst: &Instance) -> Option<usize> {
    let t = inst.world_team();
    (0..t.size)
        .filter(|&i| i != t.my_index)
        .find(|&i| member_in_barrier(inst, &t, i))
        .map(|i| t.world_pe(i))
}

/// Whether member `member` of `team` waits in a barrier (or sync) of the program on `team` where
/// this PE, not in one, is in a step of the library's own that takes no call number on the team
/// (see [`world_member_in_barrier`]).
pub(crate) fn member_in_barrier(inst: &Instance, team: &Team, member: usize) -> bool {
    if member == team.my_index || member >= team.size {
        return false;
    }
    if inst.all_direct() {
        return waits_in_barrier(inst, team, member);
    }
    let next = inst.team_cells().seq(team.slot) + 1;
    waits_in_program_barrier(inst, team, team.world_pe(member), next)
}

/// Words of a slot's exchange area that [`agreed`] uses, before the data of [`exchange`] (which
/// must not pass for a record of a call: a member waiting for another's publication reads its
/// record, `collectives::small`). The hierarchical reduction's partials overlap that data (the
/// two are never used at the same time).
const AGREE_VALUE: usize = EXCHANGE_OFFSET;
pub(crate) const AGREE_FAILED: usize = EXCHANGE_OFFSET + 16;
const AGREE_LEN: usize = EXCHANGE_OFFSET + 8;
/// Where [`exchange`]'s data starts in the exchange area (after the [`agreed`] words).
const EXCHANGE_DATA: usize = 24;

/// A 64-bit word of `slot`'s sync area in world PE `pe`'s copy: read (`AmoOp::Fetch`) or changed,
/// directly when mapped here, else through the PE's transport (the library's internal path, which
/// may address the reserved region).
pub(crate) fn remote_word(inst: &Instance, slot: usize, off: usize, pe: usize, op: AmoOp) -> Result<u64> {
    if let Ok(w) = word(inst, slot, off, pe) {
        return Ok(match op {
            AmoOp::Fetch => w.load(Ordering::Acquire),
            AmoOp::Set(v) => {
                w.store(v, Ordering::Release);
                0
            }
            _ => return Err(Error::Inner("unexpected operation on a sync word".into())),
        });
    }
    inst.routes()
        .to(pe)?
        .atomic(slot_remote(inst, slot, off, pe), Width::W64, op)
}

/// The two words a member stores for [`agreed`]: the call (high half) with its argument word,
/// and its length. Direct loads where `pe`'s copy is mapped here, else one 16-byte get.
fn agree_words(inst: &Instance, slot: usize, pe: usize) -> Result<(u64, u64)> {
    if let (Ok(v), Ok(l)) = (word(inst, slot, AGREE_VALUE, pe), word(inst, slot, AGREE_LEN, pe)) {
        return Ok((v.load(Ordering::Acquire), l.load(Ordering::Acquire)));
    }
    let mut b = [0u8; 16];
    // SAFETY: `b` is writable for 16 bytes; the two words lie next to each other in the sync pool.
    unsafe {
        inst.routes()
            .to(pe)?
            .get(slot_remote(inst, slot, AGREE_VALUE, pe), b.as_mut_ptr(), 16)?
    };
    let w = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    Ok((w(0), w(8)))
}

const _: () = assert!(AGREE_LEN == AGREE_VALUE + 8);

/// The argument word of a [`Said`] that stands for a member found in a barrier (or sync) of the
/// program where the others made a collective call (never a call's own: `collectives` names it).
pub(crate) const BARRIER_ARG: u32 = 0x7f << 24;

/// What a member of an [`agreed`] call says of it: the call's low 32 bits, the argument word and
/// the length it passed. Two members' records of one call must be equal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Said {
    pub call: u32,
    pub arg: u32,
    pub len: u64,
}

impl Said {
    fn words(&self) -> (u64, u64) {
        ((u64::from(self.call) << 32) | u64::from(self.arg), self.len)
    }

    fn from_words((v, len): (u64, u64)) -> Said {
        Said {
            call: (v >> 32) as u32,
            arg: v as u32,
            len,
        }
    }
}

/// The record world PE `pe` stored for the [`agreed`] call it is in on `slot` (or was in last).
pub(crate) fn said(inst: &Instance, slot: usize, pe: usize) -> Result<Said> {
    agree_words(inst, slot, pe).map(Said::from_words)
}

/// Stores this PE's record of a call (as [`agreed`] does) for members of its node to compare
/// ([`said`]) after a barrier.
pub(crate) fn record(inst: &Instance, slot: usize, mine: Said) {
    let (v, l) = mine.words();
    own_word(inst, slot, AGREE_VALUE).store(v, Ordering::Relaxed);
    own_word(inst, slot, AGREE_LEN).store(l, Ordering::Relaxed);
}

/// The members of an [`agreed`] call, for its body: [`Members::before_read`] and
/// [`Members::before_write`] compare a member's record with this PE's before the body moves data
/// from or to that member's buffers.
pub(crate) struct Members<'a, D: Fn(Said, usize) -> String + ?Sized> {
    inst: &'a Instance,
    team: &'a Team,
    /// None: every member's call was compared already.
    mine: Option<Said>,
    describe: &'a D,
}

impl<'a, D: Fn(Said, usize) -> String + ?Sized> Members<'a, D> {
    /// The members of a call whose records every member compared before the body.
    pub(crate) fn compared(inst: &'a Instance, team: &'a Team, describe: &'a D) -> Self {
        Members {
            inst,
            team,
            mine: None,
            describe,
        }
    }

    /// Before reading member `i`'s buffers: fails (and marks the call failed on every member)
    /// when its record of the call differs from this PE's. Only members whose copy is mapped here
    /// are compared (a load of their line): reading another one's record costs a round trip, and
    /// a read by the wrong length writes only this PE's own buffer, while the member that differs
    /// finds the difference with member 0's record and fails the call on every member.
    pub(crate) fn before_read(&self, i: usize) -> Result<()> {
        let pe = self.team.world_pe(i);
        if slot_addr(self.inst, self.team.slot, AGREE_VALUE, pe).is_err() {
            return Ok(());
        }
        self.before_write(i)
    }

    /// Before writing member `i`'s buffers: as [`Members::before_read`], but every member is
    /// compared, through its transport where its copy is not mapped (a write sized by a length
    /// the member did not pass would land outside its buffer).
    pub(crate) fn before_write(&self, i: usize) -> Result<()> {
        let pe = self.team.world_pe(i);
        let Some(mine) = self.mine else {
            return Ok(());
        };
        if i == self.team.my_index {
            return Ok(());
        }
        let theirs = said(self.inst, self.team.slot, pe)?;
        if theirs == mine {
            return Ok(());
        }
        Err(fail_all(
            self.inst,
            self.team,
            mine.call,
            (self.describe)(theirs, pe),
        ))
    }
}

/// Marks call `call` failed in every member's copy (so every member's [`agreed`] fails) and
/// returns the error `msg` describes.
fn fail_all(inst: &Instance, team: &Team, call: u32, msg: String) -> Error {
    mark_failed(inst, team, u64::from(call));
    Error::InvalidParam(msg)
}

/// Marks call `call` (its low 32 bits) failed in every member's copy; [`marked_failed`] tells.
pub(crate) fn mark_failed(inst: &Instance, team: &Team, call: u64) {
    let mark = (u64::from(call as u32) << 32) | (inst.my_pe() as u64 + 1);
    for i in 0..team.size {
        if let Err(e) = remote_word(inst, team.slot, AGREE_FAILED, team.world_pe(i), AmoOp::Set(mark)) {
            log::error!(
                "[PE {}] marking an asymmetric call failed on member {i}: {e}",
                inst.my_pe()
            );
        }
    }
}

/// Whether some member marked call `call` failed ([`mark_failed`]).
pub(crate) fn marked_failed(inst: &Instance, team: &Team, call: u64) -> bool {
    let failed = own_word(inst, team.slot, AGREE_FAILED).load(Ordering::Acquire);
    failed >> 32 == u64::from(call as u32) && failed as u32 != 0
}

/// Collective over `team` that runs `body` between two barriers, once every member is known to
/// have made the same call as member 0: the same `arg` (the family of the call and, say, its root)
/// and `len`.
///
/// Before the first barrier each member stores `call`, `arg` and `len` in its own exchange area;
/// after it, every other member compares member 0's record with its own (one read), and the body
/// compares the record of each member whose buffers it is about to touch ([`Members`]), so
/// a member that passed another length is never read beyond its source or written beyond its
/// dest. A member that finds a difference skips the rest of the body and marks the call failed in
/// every member's copy before the second barrier, so the call fails on every member with
/// `ACLSHMEM_INVALID_PARAM`, the detecting ones naming what differed (`describe(theirs, their
/// PE)`). The second barrier is always entered, so a failed `body` or a disagreement never leaves
/// the others waiting.
pub(crate) fn agreed<D: Fn(Said, usize) -> String + ?Sized>(
    inst: &Instance,
    team: &Team,
    call: u64,
    arg: u32,
    len: u64,
    describe: &D,
    body: impl FnOnce(&Members<'_, D>) -> Result<()>,
) -> Result<()> {
    let mine = Said {
        call: call as u32,
        arg,
        len,
    };
    record(inst, team.slot, mine);
    if barrier_met(inst, team)? {
        // members in a barrier of the program instead: they count this call as made and failed
        // when their barrier ends (told before this PE can arrive there), and wait in it again
        skipped(inst, team, call);
        return Err(match waiting_member(inst, team) {
            Some(pe) => Error::InvalidParam(describe(
                Said {
                    call: mine.call,
                    arg: BARRIER_ARG,
                    len: 0,
                },
                pe,
            )),
            None => in_program_barrier(inst, team, Some(call)),
        });
    }
    let mut result = Ok(());
    if team.my_index != 0 {
        let pe = team.world_pe(0);
        let first = said(inst, team.slot, pe)?;
        if first != mine {
            result = Err(fail_all(inst, team, mine.call, describe(first, pe)));
        }
    }
    if result.is_ok() {
        let members = Members {
            inst,
            team,
            mine: Some(mine),
            describe,
        };
        result = body(&members);
    }
    barrier(inst, team)?;
    let failed = own_word(inst, team.slot, AGREE_FAILED).load(Ordering::Acquire);
    if result.is_ok() && failed >> 32 == u64::from(mine.call) && failed as u32 != 0 {
        result = Err(Error::InvalidParam(format!(
            "the members passed different arguments to this collective (PE {} found the difference \
             and names it in its own error)",
            (failed as u32) - 1
        )));
    }
    result
}

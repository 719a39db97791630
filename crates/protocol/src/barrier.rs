//! Central sense-counting barrier: an arrival counter and a generation word, both in the copy of
//! the team's first member.
//!
//! Each member reads the generation (Acquire), then increments the counter (AcqRel). The last
//! arriver resets the counter (Relaxed) and publishes generation + 1 (Release); the others wait
//! until they Acquire a generation other than the one they read.
//!
//! Why these orderings suffice:
//! - Everything a member did before arriving happens-before every member's return: the increments
//!   form one release sequence on the counter (each RMW reads the previous one, and AcqRel makes
//!   each arriver acquire all earlier arrivals), so the last arriver has acquired every arrival;
//!   its Release store of the generation then carries all of them to each waiter's Acquire load.
//! - The generation read before arriving cannot already be the new one: the new generation is only
//!   stored after the last increment, which needs this member's own increment first.
//! - The Relaxed reset of the counter is ordered before the generation store in the last arriver's
//!   thread, so a member that returned (it acquired the generation) and arrives at the next
//!   barrier increments after the reset: its RMW reads 0 or a later value, never a stale count.

use crate::Word;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// One barrier of `size` members over `arrive` and `generation`; `snooze` is called while waiting
/// (with the generation being waited on) and may end the wait with an error.
#[inline]
pub fn central<W: Word + ?Sized, E>(
    arrive: &W,
    generation: &W,
    size: u64,
    mut snooze: impl FnMut(u64) -> Result<(), E>,
) -> Result<(), E> {
    let seen = generation.load(Acquire);
    if arrive.fetch_add(1, AcqRel) + 1 == size {
        arrive.store(0, Relaxed);
        generation.store(seen.wrapping_add(1), Release);
        return Ok(());
    }
    while generation.load(Acquire) == seen {
        snooze(seen)?;
    }
    Ok(())
}

/// What a barrier of the program adds to the arrival counter in [`central_as`]: one arrival,
/// counted in the high half as well.
pub const PROGRAM_ARRIVAL: u64 = 1 | 1 << 32;
/// What the last arriver of [`central_as`] adds to the generation besides 1 when the barrier met
/// arrivals of both kinds.
pub const MIXED: u64 = 1 << 32;

/// [`central`] where each member says why it arrives: `program` (a barrier the program called)
/// or not (a collective call's own). Returns whether the barrier met arrivals of both kinds, the
/// same answer on every member: the last arriver sees the program's arrivals in the counter's
/// high half and then advances the generation by [`MIXED`] + 1 instead of 1, which the waiters
/// see. The orderings are [`central`]'s (the increments differ in value only); `size` must be
/// below 2^32.
#[inline]
pub fn central_as<W: Word + ?Sized, E>(
    arrive: &W,
    generation: &W,
    size: u64,
    program: bool,
    mut snooze: impl FnMut(u64) -> Result<(), E>,
) -> Result<bool, E> {
    let inc = if program { PROGRAM_ARRIVAL } else { 1 };
    let seen = generation.load(Acquire);
    let now = arrive.fetch_add(inc, AcqRel).wrapping_add(inc);
    if now & 0xffff_ffff == size {
        let programs = now >> 32;
        let mixed = programs != 0 && programs != size;
        arrive.store(0, Relaxed);
        let step = if mixed { MIXED + 1 } else { 1 };
        generation.store(seen.wrapping_add(step), Release);
        return Ok(mixed);
    }
    loop {
        let g = generation.load(Acquire);
        if g != seen {
            return Ok(g.wrapping_sub(seen) != 1);
        }
        snooze(seen)?;
    }
}

/// One barrier of two members. Each member owns `mine` (incremented by the other member only) and
/// `seen` (its own count of completed barriers, touched by nobody else); `theirs` is the other
/// member's `mine`. `snooze` is called while waiting and may end the wait with an error.
///
/// Orderings: a member's writes before the barrier are sequenced before its Release increment of
/// `theirs`; the other member's Acquire load that sees the increment synchronizes with it, so
/// those writes happen-before everything the other member does after the barrier (an increment
/// weakened to Relaxed fails the loom model `barrier_pair_two_members`). The counters only grow:
/// every increment a member receives is matched by exactly one of its waits, so consecutive
/// barriers never confuse one another's increments (the comparison is wrapping).
#[inline]
pub fn pair<W: Word + ?Sized, E>(
    mine: &W,
    theirs: &W,
    seen: &W,
    mut snooze: impl FnMut() -> Result<(), E>,
) -> Result<(), E> {
    let target = seen.load(Relaxed).wrapping_add(1);
    seen.store(target, Relaxed);
    theirs.fetch_add(1, Release);
    while (mine.load(Acquire).wrapping_sub(target) as i64) < 0 {
        snooze()?;
    }
    Ok(())
}

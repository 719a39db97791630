//! The waiting policy shared by every wait in the library: spin briefly, then yield, then sleep
//! with bounded back-off.
//!
//! * Not oversubscribed (this node's PEs fit its CPUs): spin for up to [`SPIN_FOR`] — a peer that
//!   is running answers within that — then yield (which returns at once while nobody else wants the
//!   CPU), then after [`YIELD_FOR`] sleep.
//! * Oversubscribed (16 PEs on 2 cores is normal here): the PE we wait for needs our CPU, so spin
//!   only [`SPINS`] rounds before yielding.
//! * Sleeping starts at 1 µs and doubles up to [`MAX_SLEEP`]; the thread's timer slack is set to
//!   1 µs first, so a short sleep is short. An idle wait therefore stops burning a core after
//!   [`YIELD_FOR`].
//! * Remote traffic restarts the policy: a wait whose process handled messages of another node
//!   since its last look ([`note_activity`], counted by the network transport's progress) goes
//!   back to spinning, then yielding. Over a network a put or get of a peer on another node is
//!   served by the target's progress; a target that slept in a barrier between them answered
//!   each after a thread wake-up (2 nodes, 8-byte get: 39 µs against OSHMEM's 14 µs, whose PEs
//!   spin), so a PE that is being served stays responsive, and one left alone still backs off
//!   after [`YIELD_FOR`].
//!
//! `unsafe`: sysconf and prctl through libc.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const SPINS: u32 = 128;
/// Spins before yielding when oversubscribed: the PE we wait for is likely descheduled.
const SPINS_OVERSUBSCRIBED: u32 = 8;
const SPIN_FOR: Duration = Duration::from_micros(50);
const YIELD_FOR: Duration = Duration::from_millis(20);
const MAX_SLEEP: Duration = Duration::from_micros(500);
/// Past the first spins, a [`Backoff`] reads the clock and the activity count every this many
/// calls.
const LOOK_EVERY: u32 = 8;

static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(true);

/// Progress calls of the network transport that handled something (see the module documentation).
static ACTIVITY: AtomicU64 = AtomicU64::new(0);

/// The network transport's progress handled messages or completions: waits in progress go back
/// to spinning (see the module documentation).
#[inline]
pub fn note_activity() {
    ACTIVITY.fetch_add(1, Ordering::Relaxed);
}

/// Init: whether this node runs more PEs than it has CPUs online.
pub fn set_node_load(local_pes: usize) {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    OVERSUBSCRIBED.store(local_pes as i64 > (cpus as i64).max(1), Ordering::Relaxed);
}

/// One waiter's back-off state.
#[derive(Debug)]
pub struct Backoff {
    rounds: u32,
    since: Option<Instant>,
    sleep: Duration,
    /// [`ACTIVITY`] at the last look.
    seen: u64,
    /// What the calls between two looks do.
    phase: Phase,
}

/// The phases of a [`Backoff`] past its first spins.
#[derive(Debug, Clone, Copy)]
enum Phase {
    Spin,
    Yield,
    Sleep,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

fn short_timer_slack() {
    thread_local!(static SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    SET.with(|s| {
        if !s.get() {
            // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack (nanoseconds).
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
            s.set(true);
        }
    });
}

impl Backoff {
    pub fn new() -> Self {
        Backoff {
            rounds: 0,
            since: None,
            sleep: Duration::from_micros(1),
            seen: 0,
            phase: Phase::Spin,
        }
    }

    /// Waits a little; the waits grow as described in the module documentation.
    #[inline]
    pub fn snooze(&mut self) {
        let oversubscribed = OVERSUBSCRIBED.load(Ordering::Relaxed);
        let spins = if oversubscribed {
            SPINS_OVERSUBSCRIBED
        } else {
            SPINS
        };
        if self.rounds < spins {
            self.rounds += 1;
            std::hint::spin_loop();
            return;
        }
        // Past the spins the phase (and the remote activity) is looked at every LOOK_EVERY-th
        // call only, and at every call once sleeping: between looks the current phase's step is
        // repeated. Reading the clock on
        // every call cost an oversubscribed token ring (16 PEs on 2 CPUs, one yield per call)
        // about a fifth of its hop time.
        self.rounds = self.rounds.wrapping_add(1);
        if self.since.is_some()
            && !matches!(self.phase, Phase::Sleep)
            && !self.rounds.is_multiple_of(LOOK_EVERY)
        {
            self.step();
            return;
        }
        let activity = ACTIVITY.load(Ordering::Relaxed);
        if activity != self.seen {
            // remote traffic since the last look: start over (spin, then yield)
            self.seen = activity;
            self.since = None;
            self.sleep = Duration::from_micros(1);
        }
        let waited = self.since.get_or_insert_with(Instant::now).elapsed();
        self.phase = if waited < SPIN_FOR && !oversubscribed {
            Phase::Spin
        } else if waited < YIELD_FOR {
            Phase::Yield
        } else {
            Phase::Sleep
        };
        self.step();
    }

    /// One wait of the current phase.
    #[inline]
    fn step(&mut self) {
        match self.phase {
            Phase::Spin => {
                for _ in 0..16 {
                    std::hint::spin_loop();
                }
            }
            Phase::Yield => std::thread::yield_now(),
            Phase::Sleep => {
                short_timer_slack();
                std::thread::sleep(self.sleep);
                self.sleep = (self.sleep * 2).min(MAX_SLEEP);
            }
        }
    }
}

/// How long a collective wait may last: a warning after `warn` (logged once per wait, naming what
/// it waits for), a failure after `limit`. Both optional; chosen per instance at init from
/// `ACLSHMEM_STALL_WARNING` and `ACLSHMEM_COLLECTIVE_TIMEOUT`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub warn: Option<Duration>,
    pub limit: Option<Duration>,
}

/// A watched wait reads the clock only after this many rounds (short waits never do), then every
/// [`CHECK_EVERY`] rounds; the time before the first reading (a few spins and yields) is not
/// counted, which matters nothing against limits of a second or more.
const UNWATCHED_ROUNDS: u64 = 128;
const CHECK_EVERY: u64 = 64;

/// Whether round `rounds` of a wait is one of its looks (see [`Watch::due`]).
#[inline]
pub fn is_look(rounds: u64) -> bool {
    rounds >= UNWATCHED_ROUNDS && rounds.is_multiple_of(CHECK_EVERY)
}

/// A [`Backoff`] that also enforces [`Limits`].
#[derive(Debug)]
pub struct Watch {
    backoff: Backoff,
    limits: Limits,
    rounds: u64,
    start: Option<Instant>,
    warned: bool,
}

/// What a watched wait reports when its limit passed: how long it waited.
#[derive(Debug, Clone, Copy)]
pub struct Expired(pub Duration);

impl Watch {
    pub fn new(limits: Limits) -> Watch {
        Watch {
            backoff: Backoff::new(),
            limits,
            rounds: 0,
            start: None,
            warned: false,
        }
    }

    /// Whether the wait has lasted long enough to be watched (it reads the clock from then on).
    #[inline]
    pub fn watching(&self) -> bool {
        self.rounds >= UNWATCHED_ROUNDS
    }

    /// Whether the wait is at one of its looks (every [`CHECK_EVERY`] rounds once watched): the
    /// time to test anything slow, such as whether a PE it waits for left the job
    /// (`sync::Departure`). Short waits never are.
    #[inline]
    pub fn due(&self) -> bool {
        is_look(self.rounds)
    }

    /// Waits a little (as [`Backoff::snooze`]); past the warning time logs `what()` once, past the
    /// limit returns `Expired`. `what` names what the wait is for (e.g. the PEs not arrived); it
    /// is called only then.
    #[inline]
    pub fn snooze(&mut self, what: impl FnOnce() -> String) -> Result<(), Expired> {
        self.backoff.snooze();
        self.rounds += 1;
        if !self.due() || (self.limits.warn.is_none() && self.limits.limit.is_none()) {
            return Ok(());
        }
        let waited = self.start.get_or_insert_with(Instant::now).elapsed();
        let warn_due = !self.warned && self.limits.warn.is_some_and(|w| waited >= w);
        let expired = self.limits.limit.is_some_and(|l| waited >= l);
        if warn_due && !expired {
            self.warned = true;
            let msg = format!("still waiting after {:.1} s: {}", waited.as_secs_f64(), what());
            log::warn!("{msg}");
            crate::logging::write_stderr(&format!("aclshmem: warning: {msg}\n"));
            return Ok(());
        }
        if expired {
            return Err(Expired(waited));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU time of the calling thread.
    fn thread_cpu() -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer; CLOCK_THREAD_CPUTIME_ID is always available on Linux.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0);
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    /// Snoozes `b` for `wall` of wall-clock time; returns the thread's CPU time spent.
    fn snooze_for(b: &mut Backoff, wall: Duration) -> Duration {
        let (t0, c0) = (Instant::now(), thread_cpu());
        while t0.elapsed() < wall {
            b.snooze();
        }
        thread_cpu() - c0
    }

    /// Both checks set the process-wide [`OVERSUBSCRIBED`] and [`ACTIVITY`]: one test runs them.
    #[test]
    fn backoff_phases() {
        an_idle_wait_stops_burning_its_cpu();
        remote_activity_restarts_the_spinning();
    }

    fn an_idle_wait_stops_burning_its_cpu() {
        for oversubscribed in [false, true] {
            OVERSUBSCRIBED.store(oversubscribed, Ordering::Relaxed);
            let mut b = Backoff::new();
            // spinning and yielding last YIELD_FOR (20 ms); then sleeping costs little CPU
            let busy = snooze_for(&mut b, Duration::from_millis(60));
            assert!(matches!(b.phase, Phase::Sleep), "{:?}", b.phase);
            let idle = snooze_for(&mut b, Duration::from_millis(300));
            assert!(
                idle < Duration::from_millis(60),
                "oversubscribed {oversubscribed}: {idle:?} of CPU in 300 ms of sleeping wait (before: {busy:?})"
            );
        }
    }

    fn remote_activity_restarts_the_spinning() {
        OVERSUBSCRIBED.store(false, Ordering::Relaxed);
        let mut b = Backoff::new();
        snooze_for(&mut b, Duration::from_millis(40));
        assert!(matches!(b.phase, Phase::Sleep), "{:?}", b.phase);
        note_activity();
        b.snooze();
        assert!(matches!(b.phase, Phase::Spin), "{:?}", b.phase);
        // and it leaves spinning once SPIN_FOR passed (looking only every LOOK_EVERY-th call)
        snooze_for(&mut b, SPIN_FOR * 2);
        assert!(!matches!(b.phase, Phase::Spin), "{:?}", b.phase);
    }
}

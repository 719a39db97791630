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
//!
//! `unsafe`: sysconf and prctl through libc.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SPINS: u32 = 128;
/// Spins before yielding when oversubscribed: the PE we wait for is likely descheduled.
const SPINS_OVERSUBSCRIBED: u32 = 8;
const SPIN_FOR: Duration = Duration::from_micros(50);
const YIELD_FOR: Duration = Duration::from_millis(20);
const MAX_SLEEP: Duration = Duration::from_micros(500);

static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(true);

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
        }
    }

    /// Waits a little; the waits grow as described in the module documentation.
    #[inline]
    pub fn snooze(&mut self) {
        let spins = if OVERSUBSCRIBED.load(Ordering::Relaxed) {
            SPINS_OVERSUBSCRIBED
        } else {
            SPINS
        };
        if self.rounds < spins {
            self.rounds += 1;
            std::hint::spin_loop();
            return;
        }
        let waited = self.since.get_or_insert_with(Instant::now).elapsed();
        if waited < SPIN_FOR && !OVERSUBSCRIBED.load(Ordering::Relaxed) {
            for _ in 0..16 {
                std::hint::spin_loop();
            }
        } else if waited < YIELD_FOR {
            std::thread::yield_now();
        } else {
            short_timer_slack();
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(MAX_SLEEP);
        }
    }
}

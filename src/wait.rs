//! The waiting policy shared by every wait in the library: spin briefly, then yield, then sleep
//! with bounded exponential back-off. With more PEs than cores (16 PEs on 2 cores is normal here)
//! a waiter must give its core away quickly, yet a short wait on an idle machine stays a spin.

use std::time::{Duration, Instant};

const SPINS: u32 = 64;
const YIELDS: u32 = 64;
const MAX_SLEEP: Duration = Duration::from_micros(200);

/// One waiter's back-off state.
#[derive(Debug)]
pub struct Backoff {
    round: u32,
    sleep: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    pub fn new() -> Self {
        Backoff {
            round: 0,
            sleep: Duration::from_micros(1),
        }
    }

    /// Waits a little; each call waits at least as long as the previous one, up to `MAX_SLEEP`.
    pub fn snooze(&mut self) {
        if self.round < SPINS {
            std::hint::spin_loop();
        } else if self.round < SPINS + YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(MAX_SLEEP);
        }
        self.round = self.round.saturating_add(1);
    }
}

/// Waits until `done()` holds or `timeout` passes; returns whether it held.
pub fn until(timeout: Option<Duration>, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut b = Backoff::new();
    loop {
        if done() {
            return true;
        }
        if let Some(t) = timeout
            && start.elapsed() >= t
        {
            return false;
        }
        b.snooze();
    }
}

//! The waiting policy shared by every wait in the library: spin briefly, then yield, then sleep
//! with bounded back-off.
//!
//! * Not oversubscribed (this node's PEs fit its CPUs): spin for up to [`SPIN_FOR`] — a peer that
//!   is running answers within that — then yield (which returns at once while nobody else wants the
//!   CPU), then after [`YIELD_FOR`] sleep.
//! * Oversubscribed (16 PEs on 2 cores is normal here): the PE we wait for needs our CPU, so spin
//!   only [`SPINS`] rounds before yielding.
//! * Sharing a CPU with a peer although the node is not oversubscribed: the scheduler may still
//!   put two PEs on one CPU (2 PEs on 2 CPUs beside one unrelated busy process: the busy process
//!   gets a CPU of its own, the PEs share the other), and then every hand-off cost one whole
//!   [`SPIN_FOR`] (a 2-PE barrier took 55 µs, OSHMEM, whose launcher binds PEs to cores, 0.7 µs).
//!   So each PE publishes the CPU its waits run on in its node's CPU table ([`CpuTable`], a word
//!   per PE in the reserved region of the node's first PE, mapped by every PE of the node), and a
//!   wait that has spun [`CPU_LOOK_AT`] rounds looks: when another PE of the node was last seen
//!   on its CPU, it yields at once, as when oversubscribed (see [`Backoff::snooze`] for when the
//!   words are refreshed and what a stale word costs).
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
//! `unsafe`: sysconf, prctl and sched_getcpu through libc, and the CPU tables, which are words of
//! shared memory that [`share_cpu_table`]'s caller keeps mapped while they are registered.

use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
/// A wait that has spun this many rounds looks whether another PE of its node was last seen on
/// its CPU (at its first round when the previous look of the process found one). Later than a
/// hand-off between two running PEs takes (0.1–0.3 µs on the 2-core VM, where a spin round is a
/// `pause` of about 10 ns), so a wait on a quiet node rarely pays for the look; early enough
/// that sharing a CPU costs little more than the switch to the peer (about 2 µs).
const CPU_LOOK_AT: u32 = 32;

static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(true);

/// Progress calls of the network transport that handled something (see the module documentation).
static ACTIVITY: AtomicU64 = AtomicU64::new(0);

/// The network transport's progress handled messages or completions: waits in progress go back
/// to spinning (see the module documentation).
#[inline]
pub fn note_activity() {
    ACTIVITY.fetch_add(1, Ordering::Relaxed);
}

/// Bytes of the node's CPU table in every PE's reserved region (only the node's first PE's is
/// used): one word per PE of the node ([`CpuTable`]).
pub const CPU_AREA: usize = 4 * aclshmem_abi::ACLSHMEM_MAX_PES;

/// One node's CPU table as this process sees it: `len` words in shared memory, one per PE of the
/// node, each 0 (not known) or 1 + the CPU the PE's waits last ran on; this PE's is `me`.
#[derive(Debug)]
struct Board {
    key: u64,
    words: *const AtomicU32,
    len: usize,
    me: usize,
}

// SAFETY: the words are atomics in shared memory that stays mapped while the board is registered
// (the contract of `share_cpu_table`); any thread may read and write them.
unsafe impl Send for Board {}
// SAFETY: as for Send.
unsafe impl Sync for Board {}

/// The CPU tables of the live instances (one each; usually one in all).
static BOARDS: RwLock<Vec<Board>> = RwLock::new(Vec::new());
/// Whether [`BOARDS`] has any table: waits skip the look (and its lock) when not.
static BOARDED: AtomicBool = AtomicBool::new(false);

/// The verdict of the process's last look at the CPU tables: its next wait looks at its first
/// round instead of at [`CPU_LOOK_AT`], so PEs that keep sharing a CPU hand over at once. One
/// for the process, not one per thread: a thread-local costs a call (`__tls_get_addr`) in a
/// shared library, on the first round of every wait that waits, and a PE's waits mostly run on
/// one thread; a wrong hint costs one early look.
static CROWDED: AtomicBool = AtomicBool::new(false);

/// A registered CPU table ([`share_cpu_table`]); unregistered when dropped.
#[derive(Debug)]
pub struct CpuTable {
    key: u64,
}

impl Drop for CpuTable {
    fn drop(&mut self) {
        let mut boards = BOARDS.write().unwrap_or_else(|e| e.into_inner());
        boards.retain(|b| b.key != self.key);
        BOARDED.store(!boards.is_empty(), Ordering::Relaxed);
    }
}

/// Registers a node's CPU table (see the module documentation): `words` are the `len` words of
/// the node's PEs, `me` this PE's index among them. Every wait from now on publishes its CPU in
/// word `me` and looks at the others' until the returned guard is dropped. A table with no
/// other PE (`len` 1) is not registered.
///
/// # Safety
/// `words` must point to `len` 4-byte aligned words of memory that other processes change only
/// with atomic operations, and stay mapped until the returned [`CpuTable`] is dropped.
pub unsafe fn share_cpu_table(words: *const AtomicU32, len: usize, me: usize) -> CpuTable {
    static KEYS: AtomicU64 = AtomicU64::new(1);
    let key = KEYS.fetch_add(1, Ordering::Relaxed);
    if len > 1 && me < len && !words.is_null() {
        let mut boards = BOARDS.write().unwrap_or_else(|e| e.into_inner());
        boards.push(Board { key, words, len, me });
        BOARDED.store(true, Ordering::Relaxed);
    }
    CpuTable { key }
}

/// Whether a PE other than `me` of `words` was last seen on the CPU published as `seen` (1 + the
/// CPU number).
fn shares_cpu(words: &[AtomicU32], me: usize, seen: u32) -> bool {
    words
        .iter()
        .enumerate()
        .any(|(i, w)| i != me && w.load(Ordering::Relaxed) == seen)
}

/// Publishes `seen` in `word`, writing only when it changed: peers read the word's line, and a
/// store on every look would take the line from them on each wait.
fn publish_cpu(word: &AtomicU32, seen: u32) {
    if word.load(Ordering::Relaxed) != seen {
        word.store(seen, Ordering::Relaxed);
    }
}

/// The look of a wait: publishes the CPU the calling thread runs on in every registered table
/// (unless it is one of the library's own threads, whose CPU says nothing about where the PE's
/// program runs) and says whether another PE of a table was last seen on that CPU. Remembered
/// as the process's verdict ([`CROWDED`]). It costs a `sched_getcpu` (2 ns on the 2-core VM:
/// glibc reads the CPU from the kernel's rseq area), an uncontended read lock and a read of the
/// table, 16 PEs to a cache line (the node is not oversubscribed, so it has no more PEs than
/// CPUs); the lines stay shared in every PE's cache, as a PE writes its word only when it moved.
#[cold]
fn look_at_cpus() -> bool {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    if cpu < 0 {
        return false;
    }
    let seen = cpu as u32 + 1;
    let publish = !crate::logging::is_internal_thread();
    let boards = BOARDS.read().unwrap_or_else(|e| e.into_inner());
    let mut crowded = false;
    for b in boards.iter() {
        // SAFETY: a registered board's words are mapped (`share_cpu_table`'s contract: the table
        // is unregistered, under the write lock, before its memory goes).
        let words = unsafe { std::slice::from_raw_parts(b.words, b.len) };
        if publish {
            publish_cpu(&words[b.me], seen);
        }
        crowded |= shares_cpu(words, b.me, seen);
    }
    drop(boards);
    CROWDED.store(crowded, Ordering::Relaxed);
    crowded
}

/// Polls of this process in a row that found nothing ([`polled`]).
static EMPTY_POLLS: AtomicU32 = AtomicU32::new(0);
/// Every this many polls in a row that found nothing yield the CPU (see [`polled`]).
const POLLS_PER_YIELD: u32 = 16;

/// A polling call (`test`, `test_any`, `test_some`, `test_all`, their vector forms) found what it
/// tests for (`ready`) or not. Programs that poll in a loop of their own (a server testing a set
/// of flags while it does other work) keep the CPU from the PE whose store they wait for when it
/// shares their CPU; the library's own waits yield then, the program's loop did not: a 4-PE
/// ping-pong whose responder polled `shmem_int_test_some` took 1.5 ms per exchange on 2 CPUs,
/// against 19 µs with `shmem_int_wait_until_any`. So on an oversubscribed node, or when the last
/// look found another PE of the node on this CPU ([`CROWDED`]), every [`POLLS_PER_YIELD`]-th
/// empty poll in a row yields; elsewhere a poll costs one relaxed load more.
#[inline]
pub fn polled(ready: bool) {
    if !OVERSUBSCRIBED.load(Ordering::Relaxed) && !CROWDED.load(Ordering::Relaxed) {
        return;
    }
    if ready {
        EMPTY_POLLS.store(0, Ordering::Relaxed);
        return;
    }
    if EMPTY_POLLS.fetch_add(1, Ordering::Relaxed) + 1 >= POLLS_PER_YIELD {
        EMPTY_POLLS.store(0, Ordering::Relaxed);
        std::thread::yield_now();
    }
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
    /// Another PE of this node was last seen on this thread's CPU ([`look_at_cpus`], at the last
    /// look): yield instead of spinning.
    crowded: bool,
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
            crowded: false,
        }
    }

    /// Waits a little; the waits grow as described in the module documentation.
    ///
    /// The CPU tables are looked at (the thread's CPU published, the other PEs' read) at round
    /// [`CPU_LOOK_AT`] of the first spins (at round 0 when the previous look of the process found
    /// a PE on its CPU), then at every look past the spins, which comes every [`LOOK_EVERY`]
    /// calls (every few yields) and at every sleep: a PE that moved is seen moved by its next look. Not
    /// when the node is oversubscribed: then every wait yields early anyway. A word goes stale
    /// while its PE computes outside the library or waits without looking (a wait that ends
    /// within its first spins); what that costs:
    /// * the PE moved onto this CPU unseen: this wait spins [`SPIN_FOR`] before yielding, as
    ///   before there were tables;
    /// * the PE moved away unseen: this wait yields where it would have spun; a yield with
    ///   nobody else to run on the CPU returns in about 0.15 µs, so the wait sees its word a
    ///   little later, and the PE's next look corrects its word.
    ///
    /// Every PE of the node counts, not only the one a wait waits for (a `wait_until` on a local
    /// word does not know which PE will write it): a PE sharing this CPU needs it to get
    /// anywhere, whichever it is. The program's threads of one PE share its word (the last
    /// thread to look wins); the library's own threads only read.
    #[inline]
    pub fn snooze(&mut self) {
        let oversubscribed = OVERSUBSCRIBED.load(Ordering::Relaxed);
        let spins = if oversubscribed {
            SPINS_OVERSUBSCRIBED
        } else {
            SPINS
        };
        if self.rounds < spins {
            if oversubscribed || !self.cpu_look_due() {
                self.rounds += 1;
                std::hint::spin_loop();
                return;
            }
            if !look_at_cpus() {
                // not sharing: spin on (past CPU_LOOK_AT, when this was an early look)
                self.rounds = self.rounds.max(CPU_LOOK_AT) + 1;
                std::hint::spin_loop();
                return;
            }
            // sharing this CPU with a PE of the node: the look below yields at once
            self.crowded = true;
            self.rounds = spins;
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
        if self.since.is_some() && !oversubscribed && BOARDED.load(Ordering::Relaxed) {
            // (the first look past the spins follows their look at the CPU tables closely)
            self.crowded = look_at_cpus();
        }
        let waited = self.since.get_or_insert_with(Instant::now).elapsed();
        self.phase = phase_after(waited, !oversubscribed && !self.crowded);
        self.step();
    }

    /// Whether this round of the first spins is the one to look at the CPU tables: round
    /// [`CPU_LOOK_AT`], or round 0 when the last look of the process found a PE on its CPU.
    #[inline]
    fn cpu_look_due(&self) -> bool {
        match self.rounds {
            CPU_LOOK_AT => BOARDED.load(Ordering::Relaxed),
            0 => BOARDED.load(Ordering::Relaxed) && CROWDED.load(Ordering::Relaxed),
            _ => false,
        }
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

/// The phase of a wait that has waited `waited` since its first look: spinning (when `spin`,
/// i.e. the node is not oversubscribed and no PE of the node was seen on this CPU) for
/// [`SPIN_FOR`], yielding up to [`YIELD_FOR`], then sleeping.
fn phase_after(waited: Duration, spin: bool) -> Phase {
    if waited < SPIN_FOR && spin {
        Phase::Spin
    } else if waited < YIELD_FOR {
        Phase::Yield
    } else {
        Phase::Sleep
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

    /// The checks set the process-wide [`OVERSUBSCRIBED`], [`ACTIVITY`] and [`BOARDS`]: one test
    /// runs them.
    #[test]
    fn backoff_phases() {
        an_idle_wait_stops_burning_its_cpu();
        remote_activity_restarts_the_spinning();
        a_wait_sharing_its_cpu_with_a_peer_yields_at_once();
        a_wait_whose_peers_are_elsewhere_spins();
        oversubscribed_waits_do_not_look();
        OVERSUBSCRIBED.store(true, Ordering::Relaxed);
    }

    #[test]
    fn who_shares_a_cpu() {
        let words: Vec<AtomicU32> = [3, 0, 5, 3].into_iter().map(AtomicU32::new).collect();
        // PE 0 published CPU 2 (3), PE 3 too: each sees the other there
        assert!(shares_cpu(&words, 0, 3));
        assert!(shares_cpu(&words, 3, 3));
        // PE 2 alone on CPU 4; a PE's own word does not count; 0 (not known yet) matches no CPU
        assert!(!shares_cpu(&words, 2, 5));
        assert!(!shares_cpu(&[AtomicU32::new(7)], 0, 7));
        assert!(!shares_cpu(&words, 1, 1));
        // publishing writes the word (only when it changed: peers keep their copy of its line)
        let w = AtomicU32::new(0);
        publish_cpu(&w, 9);
        assert_eq!(w.load(Ordering::Relaxed), 9);
        // phases: spinning only while allowed and before SPIN_FOR
        assert!(matches!(phase_after(Duration::ZERO, true), Phase::Spin));
        assert!(matches!(phase_after(Duration::ZERO, false), Phase::Yield));
        assert!(matches!(phase_after(SPIN_FOR, true), Phase::Yield));
        assert!(matches!(phase_after(YIELD_FOR, false), Phase::Sleep));
    }

    /// A table with a PE on every CPU number below 4096 besides this one (word 0): wherever
    /// this thread runs, another PE was last seen there.
    fn crowded_table() -> Vec<AtomicU32> {
        (0..=4096u32).map(AtomicU32::new).collect()
    }

    fn a_wait_sharing_its_cpu_with_a_peer_yields_at_once() {
        OVERSUBSCRIBED.store(false, Ordering::Relaxed);
        CROWDED.store(false, Ordering::Relaxed);
        let words = crowded_table();
        // SAFETY: `words` outlives the guard.
        let table = unsafe { share_cpu_table(words.as_ptr(), words.len(), 0) };
        let mut b = Backoff::new();
        for _ in 0..CPU_LOOK_AT {
            b.snooze();
            assert!(!b.crowded && matches!(b.phase, Phase::Spin));
        }
        // the look: this thread's CPU is published, a peer is there, so it yields from now on
        b.snooze();
        assert!(b.crowded && matches!(b.phase, Phase::Yield), "{b:?}");
        assert_ne!(words[0].load(Ordering::Relaxed), 0);
        // the next wait looks at its first round
        let mut b = Backoff::new();
        b.snooze();
        assert!(b.crowded && matches!(b.phase, Phase::Yield), "{b:?}");
        // the library's own threads look but do not publish
        words[0].store(0, Ordering::Relaxed);
        let crowded = std::thread::spawn(|| {
            crate::logging::internal_thread();
            look_at_cpus()
        })
        .join()
        .unwrap();
        assert!(crowded);
        assert_eq!(words[0].load(Ordering::Relaxed), 0);
        drop(table);
        assert!(!BOARDED.load(Ordering::Relaxed));
    }

    fn a_wait_whose_peers_are_elsewhere_spins() {
        OVERSUBSCRIBED.store(false, Ordering::Relaxed);
        // the last look found a peer on its CPU (the check above): this wait looks at
        // once, finds none (the peer's word not known yet), and spins on
        assert!(CROWDED.load(Ordering::Relaxed));
        let words: Vec<AtomicU32> = (0..2).map(|_| AtomicU32::new(0)).collect();
        // SAFETY: `words` outlives the guard.
        let table = unsafe { share_cpu_table(words.as_ptr(), words.len(), 1) };
        let mut b = Backoff::new();
        b.snooze();
        assert!(!CROWDED.load(Ordering::Relaxed));
        assert_ne!(words[1].load(Ordering::Relaxed), 0);
        for _ in 0..SPINS {
            b.snooze();
        }
        assert!(
            b.since.is_some() && !b.crowded && matches!(b.phase, Phase::Spin),
            "{b:?}"
        );
        drop(table);
    }

    fn oversubscribed_waits_do_not_look() {
        OVERSUBSCRIBED.store(true, Ordering::Relaxed);
        CROWDED.store(true, Ordering::Relaxed);
        let words = crowded_table();
        // SAFETY: `words` outlives the guard.
        let table = unsafe { share_cpu_table(words.as_ptr(), words.len(), 0) };
        let mut b = Backoff::new();
        for _ in 0..=SPINS_OVERSUBSCRIBED + LOOK_EVERY {
            b.snooze();
        }
        assert!(matches!(b.phase, Phase::Yield) && !b.crowded, "{b:?}");
        assert_eq!(words[0].load(Ordering::Relaxed), 0);
        drop(table);
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

//! Supervision of the PE processes: reaping, failure propagation, signals, timeout.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::thread::sleep;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::low_level::signal_name;

/// How often running PEs are polled.
const POLL: Duration = Duration::from_millis(5);
/// How long PEs get between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);
/// After a PE fails, how long the others get to end by themselves first: the library tells them
/// (a PE's death, aclshmem_global_exit) and they exit with their own status and message.
pub const SETTLE: Duration = Duration::from_secs(1);
/// Exit status of a job killed by `--timeout` (as `timeout(1)`).
pub const TIMEOUT_STATUS: i32 = 124;

struct Pe {
    rank: u32,
    child: Child,
    /// Not yet reaped: the pid still belongs to our child (possibly a zombie), so
    /// signalling it can never hit an unrelated process.
    running: bool,
}

/// A failed PE: its rank, and how to report and propagate the failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub rank: u32,
    pub status: Status,
}

/// How a PE ended when it did not exit 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    /// `wait` itself failed; should not happen.
    Unknown,
}

impl Status {
    /// `None` for a successful exit.
    pub fn from_exit(status: ExitStatus) -> Option<Status> {
        match (status.code(), status.signal()) {
            (Some(0), _) => None,
            (Some(code), _) => Some(Status::Exited(code)),
            (None, Some(sig)) => Some(Status::Signaled(sig)),
            (None, None) => Some(Status::Unknown),
        }
    }

    /// The launcher's exit status for this failure (128+signo for a signal death).
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Exited(code) => code,
            Status::Signaled(sig) => 128 + sig,
            Status::Unknown => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Status::Exited(code) => write!(f, "PE {} exited with status {code}", self.rank),
            Status::Signaled(sig) => {
                write!(f, "PE {} killed by signal {}", self.rank, describe_signal(sig))
            }
            Status::Unknown => write!(f, "PE {} ended with an unknown status", self.rank),
        }
    }
}

/// `SIGKILL (9)`, or just the number for a signal without a known name.
pub fn describe_signal(sig: i32) -> String {
    match signal_name(sig) {
        Some(name) => format!("{name} ({sig})"),
        None => sig.to_string(),
    }
}

/// How likely a failure seen with others in one round is their cause: a signal (a crash) above
/// another exit status above status 1 (what the library gives the PEs it ends for losing a peer)
/// above none; among equals the lowest rank (the first seen).
fn cause_rank(f: &Option<Failure>) -> u8 {
    match f {
        None => 0,
        Some(Failure {
            status: Status::Unknown,
            ..
        }) => 1,
        Some(Failure {
            status: Status::Exited(1),
            ..
        }) => 2,
        Some(Failure {
            status: Status::Exited(_),
            ..
        }) => 3,
        Some(Failure {
            status: Status::Signaled(_),
            ..
        }) => 4,
    }
}

/// Owns the PE processes of a job and the launcher's termination-signal handlers.
pub struct Supervisor {
    pes: Vec<Pe>,
    signals: Signals,
    verbose: bool,
}

impl Supervisor {
    /// Installs the SIGINT/SIGTERM/SIGHUP handlers; call before starting any PE.
    pub fn new(verbose: bool) -> io::Result<Self> {
        crate::tree::become_subreaper();
        Ok(Supervisor {
            pes: Vec::new(),
            signals: Signals::new([SIGINT, SIGTERM, SIGHUP])?,
            verbose,
        })
    }

    /// Starts PE `rank`. The child stays in the launcher's process group.
    pub fn spawn(&mut self, rank: u32, cmd: &mut Command) -> io::Result<&mut Child> {
        let child = cmd.spawn()?;
        self.pes.push(Pe {
            rank,
            child,
            running: true,
        });
        Ok(&mut self.pes.last_mut().expect("just pushed").child)
    }

    /// A termination signal received by the launcher since the last call, if any.
    pub fn pending_signal(&mut self) -> Option<i32> {
        self.signals.pending().next()
    }

    fn running(&self) -> usize {
        self.pes.iter().filter(|pe| pe.running).count()
    }

    /// Waits for the job; returns the launcher's exit status.
    ///
    /// The first PE to fail (non-zero exit or a signal) ends the job with its status; a
    /// signal to the launcher ends it with 128+signo; `timeout` ends it with 124. In every
    /// case the remaining PEs are terminated and reaped before returning.
    pub fn wait(&mut self, timeout: Option<Duration>) -> i32 {
        let start = Instant::now();
        loop {
            let failure = self.reap();
            // A signal wins over a failure seen in the same round: a terminal Ctrl-C
            // reaches the PEs too, and they die of it.
            if let Some(sig) = self.pending_signal() {
                return self.stop_on_signal(sig);
            }
            if let Some(mut failure) = failure {
                // the PEs that end meanwhile may show the real cause: a PE that the library ended
                // with status 1 for losing a peer can be reaped before that peer, which was still
                // running its exit (its own status, 5 say, came a poll later)
                self.settle(SETTLE, &mut failure);
                say!("aclshmrun: {failure}");
                self.shutdown();
                return failure.status.exit_code();
            }
            if self.running() == 0 {
                return 0;
            }
            if let Some(limit) = timeout
                && start.elapsed() >= limit
            {
                say!(
                    "aclshmrun: timeout after {} s, killing {} PEs",
                    limit.as_secs(),
                    self.running()
                );
                self.shutdown();
                return TIMEOUT_STATUS;
            }
            sleep(POLL);
        }
    }

    /// Terminates the job because the launcher received `sig`; returns 128+sig.
    pub fn stop_on_signal(&mut self, sig: i32) -> i32 {
        match self.running() {
            0 => say!("aclshmrun: received {}", describe_signal(sig)),
            n => say!(
                "aclshmrun: received {}, terminating {n} PEs",
                describe_signal(sig)
            ),
        }
        self.shutdown();
        128 + sig
    }

    /// Reaps every PE that has ended; returns the first failure among them.
    fn reap(&mut self) -> Option<Failure> {
        let mut first = None;
        for pe in self.pes.iter_mut().filter(|pe| pe.running) {
            let status = match pe.child.try_wait() {
                Ok(None) => continue,
                Ok(Some(status)) => Status::from_exit(status),
                Err(e) => {
                    say!("aclshmrun: cannot wait for PE {}: {e}", pe.rank);
                    Some(Status::Unknown)
                }
            };
            pe.running = false;
            if self.verbose {
                match status {
                    None => say!("aclshmrun: PE {} exited with status 0", pe.rank),
                    Some(status) => say!(
                        "aclshmrun: {}",
                        Failure {
                            rank: pe.rank,
                            status
                        }
                    ),
                }
            }
            // of the failures seen in one round, the likeliest cause comes first (`cause_rank`):
            // the others are usually its consequences (the library ends the PEs that lose a peer
            // with status 1, often within the same poll)
            let this = status.map(|status| Failure {
                rank: pe.rank,
                status,
            });
            if cause_rank(&this) > cause_rank(&first) {
                first = this;
            }
        }
        first
    }

    /// Waits up to `limit` for the running PEs to end by themselves (less if a termination signal
    /// arrives); a failure among them that is likelier the job's cause than `failure`
    /// (`cause_rank`) replaces it.
    fn settle(&mut self, limit: Duration, failure: &mut Failure) {
        let deadline = Instant::now() + limit;
        while self.running() > 0 && Instant::now() < deadline && self.pending_signal().is_none() {
            sleep(POLL);
            let later = self.reap();
            if cause_rank(&later) > cause_rank(&Some(*failure)) {
                *failure = later.expect("a ranked failure");
            }
        }
    }

    /// Sends SIGTERM to every running PE and every process below the launcher (what the PEs
    /// started, also those whose PE has ended: [`crate::tree`]), waits up to [`GRACE`] (less if
    /// another termination signal arrives), then SIGKILLs them and reaps the PEs.
    pub fn shutdown(&mut self) {
        crate::tree::signal_below(std::process::id() as libc::pid_t, libc::SIGTERM, &self.pids());
        for pe in self.pes.iter().filter(|pe| pe.running) {
            send_signal(&pe.child, libc::SIGTERM);
        }
        let deadline = Instant::now() + GRACE;
        while self.running() > 0 && Instant::now() < deadline {
            if self.pending_signal().is_some() {
                break;
            }
            sleep(POLL);
            // failures during shutdown are consequences, not causes
            let _ = self.reap();
        }
        crate::tree::signal_below(std::process::id() as libc::pid_t, libc::SIGKILL, &self.pids());
        self.kill_all();
    }

    /// Process ids of the PEs not reaped yet.
    fn pids(&self) -> Vec<libc::pid_t> {
        self.pes
            .iter()
            .filter(|pe| pe.running)
            .filter_map(|pe| libc::pid_t::try_from(pe.child.id()).ok())
            .collect()
    }

    /// SIGKILLs (with what they started) and reaps every PE still running.
    fn kill_all(&mut self) {
        for pid in self.pids() {
            crate::tree::signal_below(pid, libc::SIGKILL, &[]);
        }
        for pe in self.pes.iter_mut().filter(|pe| pe.running) {
            if self.verbose {
                say!("aclshmrun: PE {} still running, sending SIGKILL", pe.rank);
            }
            let _ = pe.child.kill();
            let _ = pe.child.wait();
            pe.running = false;
        }
    }
}

impl Drop for Supervisor {
    /// Never leaves a PE behind, even if the launcher unwinds.
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Sends `sig` to a child that has not been reaped yet.
fn send_signal(child: &Child, sig: i32) {
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    // SAFETY: kill has no memory-safety preconditions; `pid` is our own unreaped child,
    // so it cannot have been recycled for another process.
    unsafe {
        libc::kill(pid, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        let exited = |code: i32| ExitStatus::from_raw(code << 8);
        assert_eq!(Status::from_exit(exited(0)), None);
        assert_eq!(Status::from_exit(exited(3)), Some(Status::Exited(3)));
        assert_eq!(
            Status::from_exit(ExitStatus::from_raw(9)),
            Some(Status::Signaled(9))
        );
        assert_eq!(Status::Exited(3).exit_code(), 3);
        assert_eq!(Status::Signaled(9).exit_code(), 137);
        let f = Failure {
            rank: 1,
            status: Status::Signaled(9),
        };
        assert_eq!(f.to_string(), "PE 1 killed by signal SIGKILL (9)");
        let f = Failure {
            rank: 0,
            status: Status::Exited(3),
        };
        assert_eq!(f.to_string(), "PE 0 exited with status 3");
    }

    /// PE 1 dies of a signal and PE 0 exits with status 1 (as the library ends a PE that lost a
    /// peer): seen in one round, the signal is the job's failure, whatever the ranks' order.
    #[test]
    fn a_signal_death_is_the_failure_among_those_of_one_round() {
        let mut sup = Supervisor::new(false).expect("signal handlers");
        sup.spawn(0, Command::new("sh").args(["-c", "exit 1"]))
            .expect("sh");
        sup.spawn(1, Command::new("sh").args(["-c", "kill -SEGV $$"]))
            .expect("sh");
        sup.spawn(2, Command::new("sh").args(["-c", "exit 3"]))
            .expect("sh");
        // every one has ended (a zombie) before the round
        all_ended(&sup);
        let f = sup.reap().expect("a failure");
        assert_eq!((f.rank, f.status), (1, Status::Signaled(libc::SIGSEGV)));
        assert_eq!(sup.running(), 0);
    }

    /// PE 2 exits with status 3, PEs 0 and 1 with 1 (ended by the library for losing it): PE 2's
    /// status is the job's.
    #[test]
    fn another_status_comes_before_the_lost_peers_status_1() {
        let mut sup = Supervisor::new(false).expect("signal handlers");
        for (rank, code) in [(0, 1), (1, 1), (2, 3), (3, 0)] {
            sup.spawn(rank, Command::new("sh").args(["-c", &format!("exit {code}")]))
                .expect("sh");
        }
        all_ended(&sup);
        let f = sup.reap().expect("a failure");
        assert_eq!((f.rank, f.status), (2, Status::Exited(3)));
    }

    /// PE 0 ends with status 1 (the library ended it for losing PE 1) a moment before PE 1, which
    /// was still running its exit with status 5: the job's status is PE 1's (it was PE 0's when
    /// PE 0 was reaped in an earlier poll, about one run in twenty).
    #[test]
    fn a_cause_that_ends_a_moment_after_its_consequence_is_the_jobs_status() {
        let mut sup = Supervisor::new(false).expect("signal handlers");
        sup.spawn(0, Command::new("sh").args(["-c", "exit 1"]))
            .expect("sh");
        sup.spawn(1, Command::new("sh").args(["-c", "sleep 0.3; exit 5"]))
            .expect("sh");
        assert_eq!(sup.wait(Some(Duration::from_secs(20))), 5);
    }

    /// Waits until every PE of `sup` has ended (a zombie, not reaped yet).
    fn all_ended(sup: &Supervisor) {
        for pe in &sup.pes {
            let stat = format!("/proc/{}/stat", pe.child.id());
            let deadline = Instant::now() + Duration::from_secs(10);
            while !std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z ")) {
                assert!(Instant::now() < deadline, "PE {} did not end", pe.rank);
                sleep(POLL);
            }
        }
    }
}

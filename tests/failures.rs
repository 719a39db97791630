//! Failure handling of real multi-PE jobs, each a scenario of `tests/c/failure_tests.c`:
//!
//! - a PE that never arrives at init, or arrives after the others gave up (timeouts, named PE);
//! - a PE that stops taking part later (skips an `aclshmem_malloc` the others make);
//! - zero bootstrap timeouts are invalid values;
//! - `aclshmem_global_exit` under `aclshmrun`, without a launcher, and before init;
//! - a PE killed while the others wait in a barrier, a `wait_until` or a reduction, and PE 0 (the
//!   config store) killed: detected by the library itself (PEs started by hand, no launcher);
//! - 32 PEs on a small machine;
//! - hostile clients of the config store of a running job (garbage, wrong secret, silent
//!   connections, an impostor claiming to be PE 1).
//!
//! Jobs started by hand get their PE identity, a free loopback port, a private job secret and a
//! private job id (for the /dev/shm check) in their environment. Every job has a hard time limit,
//! so a hang fails the test within a minute. The tests of this file run one at a time: they
//! measure how fast failures are detected, which parallel jobs on a 2-core machine would blur.

mod common;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Background, Scratch, process_alive, run_pes, shm_leftovers, wait_limited};

/// Frame kinds of the config-store protocol (see the crate's `protocol.rs`).
const KIND_HELLO: u8 = 1;
const KIND_REJECT: u8 = 3;

/// One test at a time (see the module documentation).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn prog() -> PathBuf {
    common::compile_c("failure_tests")
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral loopback port");
    l.local_addr().expect("local_addr").port()
}

/// 16 hex digits, different for every call (job ids and secrets of hand-started jobs).
fn unique_hex() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mix =
        nanos ^ (u64::from(std::process::id()) << 40) ^ ((NEXT.fetch_add(1, Ordering::Relaxed) as u64) << 20);
    format!("{:016x}", mix.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
}

fn reader<R: Read + Send + 'static>(mut pipe: R) -> JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// One PE process started by hand.
struct ManualPe {
    pe: usize,
    child: Child,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    /// Exit status and when it was seen (relative to the job's start).
    ended: Option<(ExitStatus, Duration)>,
}

/// The identity of a hand-started job: its port, its job id, its secret (`None`: no
/// ACLSHMEM_JOB_TOKEN, as without any launcher).
#[derive(Clone)]
struct JobIds {
    port: u16,
    job_id: String,
    secret: Option<String>,
}

impl JobIds {
    fn new() -> JobIds {
        JobIds {
            port: free_port(),
            job_id: unique_hex(),
            secret: Some(format!("test-secret-{}", unique_hex())),
        }
    }
}

/// A job whose PEs the test starts itself, without `aclshmrun`: the library's own failure
/// detection is all there is.
struct ManualJob {
    pes: Vec<ManualPe>,
    start: Instant,
    job_id: String,
}

/// How one hand-started PE ended.
struct Ended {
    pe: usize,
    /// `None`: still running at the time limit (then killed).
    status: Option<ExitStatus>,
    /// When it ended, from the job's start.
    at: Duration,
    /// stdout followed by stderr.
    output: String,
    /// stderr alone.
    stderr: String,
}

impl Ended {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// The `RESULT ...` line the program printed, if any.
    fn result(&self) -> Option<&str> {
        self.output.lines().find(|l| l.starts_with("RESULT "))
    }

    /// The value of `key=` in the RESULT line.
    fn field(&self, key: &str) -> Option<&str> {
        let prefix = format!("{key}=");
        self.result()?
            .split_whitespace()
            .find_map(|w| w.strip_prefix(prefix.as_str()))
    }
}

/// Everything every PE printed, for failure messages.
fn dump(ended: &[Ended]) -> String {
    ended
        .iter()
        .map(|e| format!("--- PE {}: {:?} at {:.2?}\n{}", e.pe, e.status, e.at, e.output))
        .collect::<Vec<_>>()
        .join("\n")
}

impl ManualJob {
    /// Starts PEs `which` of a job of `n_pes` running `scenario`, with `env` for every PE and
    /// `per_pe` (PE, variable, value) for single ones.
    fn start(
        scenario: &str,
        n_pes: usize,
        which: &[usize],
        env: &[(&str, &str)],
        per_pe: &[(usize, &str, &str)],
    ) -> ManualJob {
        let ids = JobIds::new();
        ManualJob::start_with(&ids, scenario, n_pes, which, env, per_pe)
    }

    /// As [`ManualJob::start`], for the job `ids` (so a job's PEs can be started in steps).
    fn start_with(
        ids: &JobIds,
        scenario: &str,
        n_pes: usize,
        which: &[usize],
        env: &[(&str, &str)],
        per_pe: &[(usize, &str, &str)],
    ) -> ManualJob {
        let prog = prog();
        let JobIds { port, job_id, secret } = ids.clone();
        let url = format!("tcp://127.0.0.1:{port}");
        let n = n_pes.to_string();
        let start = Instant::now();
        let mut pes = Vec::new();
        for &pe in which {
            let mut cmd = Command::new(&prog);
            cmd.arg(scenario);
            for var in [
                "ACLSHMEM_LOCAL_PE",
                "ACLSHMEM_LOCAL_N_PES",
                "SHMEM_LOG_LEVEL",
                "SHMEM_LOG_PATH",
                "RANK",
                "WORLD_SIZE",
                "LOCAL_RANK",
                "LOCAL_WORLD_SIZE",
                "MASTER_ADDR",
                "MASTER_PORT",
            ] {
                cmd.env_remove(var);
            }
            cmd.env("ACLSHMEM_MY_PE", pe.to_string())
                .env("ACLSHMEM_N_PES", &n)
                .env("ACLSHMEM_IP_PORT", &url)
                .env("ACLSHMEM_LOCAL_MEM_SIZE", "4M")
                .env("ACLSHMEM_JOB_ID", &job_id)
                .env("SHMEM_LOG_TO_STDOUT", "1");
            match &secret {
                Some(s) => cmd.env("ACLSHMEM_JOB_TOKEN", s),
                None => cmd.env_remove("ACLSHMEM_JOB_TOKEN"),
            };
            for (k, v) in env {
                cmd.env(k, v);
            }
            for (p, k, v) in per_pe {
                if *p == pe {
                    cmd.env(k, v);
                }
            }
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().expect("start a PE");
            let stdout = child.stdout.take().map(reader);
            let stderr = child.stderr.take().map(reader);
            pes.push(ManualPe {
                pe,
                child,
                stdout,
                stderr,
                ended: None,
            });
        }
        ManualJob { pes, start, job_id }
    }

    /// Waits until every PE ended, at most `limit` from the job's start; PEs still running then
    /// are killed and reported with `status: None`.
    fn wait(mut self, limit: Duration) -> Vec<Ended> {
        loop {
            let now = self.start.elapsed();
            for p in self.pes.iter_mut().filter(|p| p.ended.is_none()) {
                if let Ok(Some(status)) = p.child.try_wait() {
                    p.ended = Some((status, now));
                }
            }
            if self.pes.iter().all(|p| p.ended.is_some()) || now >= limit {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let at_limit = self.start.elapsed();
        let mut out = Vec::new();
        for p in &mut self.pes {
            if p.ended.is_none() {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
            let stdout = p.stdout.take().map(|h| h.join().unwrap_or_default());
            let stderr = p.stderr.take().map(|h| h.join().unwrap_or_default());
            let stderr = stderr.unwrap_or_default();
            let mut output = stdout.unwrap_or_default();
            output.push_str(&stderr);
            out.push(Ended {
                pe: p.pe,
                status: p.ended.map(|(s, _)| s),
                at: p.ended.map_or(at_limit, |(_, at)| at),
                output,
                stderr,
            });
        }
        out
    }
}

impl Drop for ManualJob {
    /// Never leaves a PE behind when a test fails half-way.
    fn drop(&mut self) {
        for p in &mut self.pes {
            if let Ok(None) = p.child.try_wait() {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
        }
    }
}

/// Every PE ended within the limit (none was killed by the harness).
fn assert_all_ended(ended: &[Ended]) {
    let hung: Vec<usize> = ended
        .iter()
        .filter(|e| e.status.is_none())
        .map(|e| e.pe)
        .collect();
    assert!(
        hung.is_empty(),
        "PE(s) {hung:?} still running at the time limit (killed)\n{}",
        dump(ended)
    );
}

fn assert_no_fail_lines(ended: &[Ended]) {
    assert!(
        ended.iter().all(|e| !e.output.contains("FAIL: ")),
        "a PE reported a failure\n{}",
        dump(ended)
    );
}

// ------------------------------------------------------------------------------------------
// 1. A PE that never arrives at init
// ------------------------------------------------------------------------------------------

const INIT_TIMEOUT_S: &str = "3";
const OP_TIMEOUT_S: &str = "2";

/// Checks that PE `e` failed init with ACLSHMEM_TIMEOUT_ERROR (-7) or ACLSHMEM_INNER_ERROR (-4)
/// within `within` (measured by the PE around the call) and returns the code.
fn assert_init_failed(e: &Ended, within: f64, all: &[Ended]) -> i32 {
    assert_eq!(
        e.code(),
        Some(0),
        "PE {} did not finish normally\n{}",
        e.pe,
        dump(all)
    );
    let rc: i32 = e
        .field("init_rc")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("PE {}: no init result\n{}", e.pe, dump(all)));
    assert!(
        rc == -7 || rc == -4,
        "PE {}: init returned {rc}, expected -7 (ACLSHMEM_TIMEOUT_ERROR) or -4\n{}",
        e.pe,
        dump(all)
    );
    let elapsed: f64 = e.field("elapsed").and_then(|v| v.parse().ok()).expect("elapsed");
    assert!(
        elapsed <= within,
        "PE {}: init took {elapsed:.2} s to fail, expected at most {within} s\n{}",
        e.pe,
        dump(all)
    );
    rc
}

#[test]
fn pe_that_never_starts_fails_init_naming_it() {
    let _serial = serial();
    let job = ManualJob::start(
        "arrive",
        4,
        &[0, 1, 2],
        &[
            ("FT_INIT_TIMEOUT", INIT_TIMEOUT_S),
            ("FT_OP_TIMEOUT", OP_TIMEOUT_S),
        ],
        &[],
    );
    let ended = job.wait(Duration::from_secs(25));
    assert_all_ended(&ended);
    for e in &ended {
        assert_init_failed(e, 10.0, &ended);
        assert!(
            e.output.contains("PE(s) [3]") || e.output.contains("PE 3"),
            "PE {}: the error does not name PE 3\n{}",
            e.pe,
            dump(&ended)
        );
    }
    assert_no_fail_lines(&ended);
    let last = ended.iter().map(|e| e.at).max().unwrap_or_default();
    eprintln!("PEs 0-2 of 4 failed init and exited {last:.2?} after start");
}

#[test]
fn pe_that_starts_too_late_fails_init_and_so_do_the_others() {
    let _serial = serial();
    let job = ManualJob::start(
        "arrive",
        4,
        &[0, 1, 2, 3],
        &[
            ("FT_INIT_TIMEOUT", INIT_TIMEOUT_S),
            ("FT_OP_TIMEOUT", OP_TIMEOUT_S),
        ],
        &[(3, "FT_DELAY_MS", "6000")],
    );
    let ended = job.wait(Duration::from_secs(30));
    assert_all_ended(&ended);
    for e in ended.iter().filter(|e| e.pe != 3) {
        assert_init_failed(e, 10.0, &ended);
        assert!(
            e.output.contains("PE(s) [3]") || e.output.contains("PE 3"),
            "PE {}: the error does not name PE 3\n{}",
            e.pe,
            dump(&ended)
        );
    }
    // the latecomer finds the others gone: it must fail too, bounded by its own timeouts
    let late = ended.iter().find(|e| e.pe == 3).expect("PE 3");
    let rc = assert_init_failed(late, 3.0 + 2.0 + 3.0, &ended);
    assert_no_fail_lines(&ended);
    eprintln!(
        "PEs 0-2 failed at {:.2?}, the late PE 3 got {rc} at {:.2?}",
        ended
            .iter()
            .filter(|e| e.pe != 3)
            .map(|e| e.at)
            .max()
            .unwrap_or_default(),
        late.at
    );
}

// ------------------------------------------------------------------------------------------
// 2. A PE that stops arriving later
// ------------------------------------------------------------------------------------------

#[test]
fn pe_skipping_malloc_makes_the_others_fail_not_hang() {
    let _serial = serial();
    let job = ManualJob::start(
        "late_malloc",
        3,
        &[0, 1, 2],
        &[
            ("FT_INIT_TIMEOUT", "10"),
            ("FT_OP_TIMEOUT", OP_TIMEOUT_S),
            ("FT_PE", "2"),
            ("FT_SKIP_SLEEP_MS", "6000"),
        ],
        &[],
    );
    let ended = job.wait(Duration::from_secs(30));
    assert_all_ended(&ended);
    assert_no_fail_lines(&ended);
    for e in ended.iter().filter(|e| e.pe != 2) {
        assert_eq!(
            e.field("malloc"),
            Some("NULL"),
            "PE {}: aclshmem_malloc without PE 2 did not return NULL\n{}",
            e.pe,
            dump(&ended)
        );
        let elapsed: f64 = e.field("elapsed").and_then(|v| v.parse().ok()).expect("elapsed");
        assert!(
            elapsed <= 2.0 + 3.0,
            "PE {}: the failed aclshmem_malloc took {elapsed:.2} s (control_operation_timeout 2 s)\n{}",
            e.pe,
            dump(&ended)
        );
        assert!(
            e.output.contains("PE(s) [2]"),
            "PE {}: no log line naming PE 2 as missing\n{}",
            e.pe,
            dump(&ended)
        );
        // afterwards PE 2 leaves without finalizing and the others end (which PE they blame is
        // checked by the peer-death tests below)
        assert!(
            e.code().is_some_and(|c| c != 0)
                && (e.output.contains("PE 2 died") || e.output.contains("lost the config store")),
            "PE {}: expected a non-zero exit after PE 2 left\n{}",
            e.pe,
            dump(&ended)
        );
    }
    let skipper = ended.iter().find(|e| e.pe == 2).expect("PE 2");
    assert_eq!(skipper.code(), Some(0), "PE 2\n{}", dump(&ended));
}

// ------------------------------------------------------------------------------------------
// 3. Zero timeouts
// ------------------------------------------------------------------------------------------

#[test]
fn zero_timeouts_are_invalid_values() {
    let _serial = serial();
    let prog = prog();
    let args = [prog.as_os_str(), "zero_timeout".as_ref()];
    let run = run_pes(2, &args, &[], Duration::from_secs(30));
    run.assert_ok("zero_timeout");
}

// ------------------------------------------------------------------------------------------
// 4. Global exit
// ------------------------------------------------------------------------------------------

#[test]
fn global_exit_under_the_launcher_ends_every_pe_with_its_status() {
    let _serial = serial();
    let prog = prog();
    let args: [&OsStr; 3] = ["--tag-output".as_ref(), prog.as_os_str(), "global_exit".as_ref()];
    let run = run_pes(
        4,
        &args,
        &[("FT_PE", "2"), ("FT_STATUS", "7")],
        Duration::from_secs(30),
    );
    assert_eq!(run.code(), 7, "launcher exit status\n{}", run.dump());
    assert!(run.failures().is_empty(), "{}", run.dump());
    assert!(
        run.elapsed < Duration::from_secs(10),
        "the job took {:.1?}\n{}",
        run.elapsed,
        run.dump()
    );
    // the launcher takes the first PE's status and terminates the rest, so demand the reason
    // from every PE: each logs that PE 2 called global exit before it exits
    for pe in 0..4 {
        let tag = format!("[pe {pe}] ");
        let said = run
            .stdout
            .lines()
            .chain(run.stderr.lines())
            .filter_map(|l| l.strip_prefix(&tag))
            .any(|l| l.contains("PE 2 called aclshmem_global_exit(7)"));
        assert!(said, "PE {pe} did not log the global exit\n{}", run.dump());
    }
    eprintln!("global exit under aclshmrun: whole job {:.2?}", run.elapsed);
    // a status whose low 8 bits are 0 (what a process's status keeps) ends the job with 1, not 0;
    // 300 ends it with 44; the messages name the call as made and the status the job ends with
    for (status, code) in [(256, 1), (300, 44)] {
        let run = run_pes(
            2,
            &args,
            &[("FT_PE", "1"), ("FT_STATUS", &status.to_string())],
            Duration::from_secs(30),
        );
        assert_eq!(run.code(), code, "global_exit({status})\n{}", run.dump());
        let said = format!("called aclshmem_global_exit({status}): exiting with status {code}");
        assert!(run.stderr.contains(&said), "{said}\n{}", run.dump());
    }
}

/// A PE ends while the others are inside their own exit, in a program exit handler: the library
/// thread that notices the lost PE ends each of them at once (`_exit`), instead of running the
/// exit handlers a second time from its own thread (which crashed a PE in 6 of 8 runs of a Python
/// job). The program's other exit handler never runs from that thread; no PE dies by a signal.
#[test]
fn a_lost_pe_during_the_exit_handlers_ends_the_process_cleanly() {
    let _serial = serial();
    let prog = prog();
    let args: [&OsStr; 3] = [
        "--tag-output".as_ref(),
        prog.as_os_str(),
        "exit_in_handler".as_ref(),
    ];
    let run = run_pes(3, &args, &[("FT_PE", "1")], Duration::from_secs(30));
    assert!(
        (0..=1).contains(&run.code()),
        "launcher exit status {} (a PE died by a signal?)\n{}",
        run.code(),
        run.dump()
    );
    assert!(
        !run.stdout.contains("handler ran on another thread"),
        "an exit handler ran from a library thread\n{}",
        run.dump()
    );
    assert!(
        run.stdout.contains("sleeps in its exit handler"),
        "no PE reached its exit handler\n{}",
        run.dump()
    );
}

#[test]
fn global_exit_without_the_launcher_ends_every_pe_with_its_status() {
    let _serial = serial();
    let job = ManualJob::start(
        "global_exit",
        4,
        &[0, 1, 2, 3],
        &[("FT_PE", "2"), ("FT_STATUS", "7")],
        &[],
    );
    let ended = job.wait(Duration::from_secs(30));
    assert_all_ended(&ended);
    assert_no_fail_lines(&ended);
    for e in &ended {
        assert_eq!(e.code(), Some(7), "PE {} exit status\n{}", e.pe, dump(&ended));
        assert!(
            e.output.contains("PE 2 called aclshmem_global_exit(7)")
                || (e.pe == 2 && e.output.contains("aclshmem_global_exit(7)")),
            "PE {} did not log the global exit\n{}",
            e.pe,
            dump(&ended)
        );
    }
    let first = ended.iter().map(|e| e.at).min().unwrap_or_default();
    let last = ended.iter().map(|e| e.at).max().unwrap_or_default();
    assert!(
        last - first < Duration::from_secs(3),
        "the PEs exited {:.2?} apart\n{}",
        last - first,
        dump(&ended)
    );
    eprintln!(
        "global exit without launcher: all 4 PEs exited 7 within {:.2?}",
        last - first
    );
}

#[test]
fn global_exit_before_init_ends_only_the_caller() {
    let _serial = serial();
    let job = ManualJob::start(
        "exit_before_init",
        2,
        &[0, 1],
        &[("FT_PE", "1"), ("FT_STATUS", "5")],
        &[],
    );
    let ended = job.wait(Duration::from_secs(15));
    assert_all_ended(&ended);
    assert_no_fail_lines(&ended);
    let caller = &ended[1];
    assert_eq!(caller.code(), Some(5), "{}", dump(&ended));
    assert!(
        caller.at < Duration::from_secs(2),
        "global_exit before init took {:.2?}\n{}",
        caller.at,
        dump(&ended)
    );
    let other = &ended[0];
    assert_eq!(other.code(), Some(0), "{}", dump(&ended));
    assert!(
        other.output.contains("RESULT pe=0 still alive"),
        "{}",
        dump(&ended)
    );
}

// ------------------------------------------------------------------------------------------
// 5. A PE that dies, detected without the launcher
// ------------------------------------------------------------------------------------------

/// Starts 4 PEs of `die`: PE `victim` raises SIGKILL while the others wait in `mode`; every other
/// PE must exit non-zero within 5 s naming the dead PE (or the lost store), and the job must
/// leave nothing in /dev/shm.
fn peer_death(mode: &str, victim: usize) {
    let _serial = serial();
    let victim_s = victim.to_string();
    let job = ManualJob::start(
        "die",
        4,
        &[0, 1, 2, 3],
        &[("FT_PE", &victim_s), ("FT_MODE", mode)],
        &[],
    );
    let job_id = job.job_id.clone();
    assert!(shm_leftovers(&job_id).is_empty(), "fresh job id {job_id} in use");
    let pids: Vec<u32> = job.pes.iter().map(|p| p.child.id()).collect();
    let ended = job.wait(Duration::from_secs(40));
    assert_all_ended(&ended);
    assert_no_fail_lines(&ended);
    let dead = &ended[victim];
    assert_eq!(
        dead.status.and_then(|s| s.signal()),
        Some(libc::SIGKILL),
        "PE {victim} was meant to die of SIGKILL\n{}",
        dump(&ended)
    );
    assert!(
        dead.output.contains("dies now"),
        "PE {victim} died before the others were waiting\n{}",
        dump(&ended)
    );
    let named = if victim == 0 {
        "lost the config store".to_string()
    } else {
        format!("PE {victim} died")
    };
    for e in ended.iter().filter(|e| e.pe != victim) {
        assert!(
            e.code().is_some_and(|c| c != 0),
            "PE {} exit status {:?} after PE {victim} died in {mode}\n{}",
            e.pe,
            e.status,
            dump(&ended)
        );
        assert!(
            e.output.contains(&format!("waits in {mode}")),
            "PE {} never waited in {mode}\n{}",
            e.pe,
            dump(&ended)
        );
        assert!(
            e.output.contains(&named),
            "PE {}: no `{named}` in its output\n{}",
            e.pe,
            dump(&ended)
        );
        let after = e.at.saturating_sub(dead.at);
        assert!(
            after < Duration::from_secs(5),
            "PE {} exited {after:.2?} after PE {victim} died\n{}",
            e.pe,
            dump(&ended)
        );
    }
    for &pid in &pids {
        assert!(!process_alive(pid), "pid {pid} still running");
    }
    let left = shm_leftovers(&job_id);
    assert!(left.is_empty(), "job {job_id} left /dev/shm entries: {left:?}");
    let slowest = ended
        .iter()
        .map(|e| e.at.saturating_sub(dead.at))
        .max()
        .unwrap_or_default();
    eprintln!("PE {victim} killed in {mode}: every other PE gone within {slowest:.2?}");
}

#[test]
fn pe_killed_during_barrier_ends_the_others() {
    peer_death("barrier", 2);
}

#[test]
fn pe_killed_during_wait_until_ends_the_others() {
    peer_death("wait", 2);
}

#[test]
fn pe_killed_during_reduce_ends_the_others() {
    peer_death("reduce", 2);
}

#[test]
fn store_pe_killed_ends_the_others() {
    peer_death("barrier", 0);
}

// ------------------------------------------------------------------------------------------
// 6. 32 PEs on a small machine
// ------------------------------------------------------------------------------------------

#[test]
fn thirty_two_pes_on_a_small_machine() {
    let _serial = serial();
    let prog = prog();
    let args = [prog.as_os_str(), "scale".as_ref()];
    let run = run_pes(
        32,
        &args,
        &[
            ("ACLSHMEM_LOCAL_MEM_SIZE", "2M"),
            ("FT_INIT_TIMEOUT", "60"),
            ("FT_OP_TIMEOUT", "60"),
        ],
        Duration::from_secs(80),
    );
    run.assert_ok("scale");
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let inner = run
        .stdout
        .lines()
        .find(|l| l.starts_with("RESULT init="))
        .unwrap_or("RESULT ?");
    eprintln!(
        "32 PEs on {cores} cores: whole job {:.2?} (PE 0: {})",
        run.elapsed, inner
    );
    assert!(
        run.elapsed < Duration::from_secs(60),
        "32 PEs took {:.1?}\n{}",
        run.elapsed,
        run.dump()
    );
}

// ------------------------------------------------------------------------------------------
// 7. Hostile clients of the config store
// ------------------------------------------------------------------------------------------

fn hello_frame(token: &[u8], pe: u32, n_pes: u32, watch: bool) -> Vec<u8> {
    let mut body = vec![KIND_HELLO];
    body.extend_from_slice(&2u32.to_le_bytes()); // protocol version
    body.extend_from_slice(&(token.len() as u32).to_le_bytes());
    body.extend_from_slice(token);
    body.extend_from_slice(&pe.to_le_bytes());
    body.extend_from_slice(&n_pes.to_le_bytes());
    body.push(u8::from(watch));
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// What the store did with a hostile connection.
#[derive(Debug, PartialEq)]
enum Answer {
    /// A `Reject` frame (with its reason), then the connection closed.
    Rejected(String),
    /// Closed without a frame.
    Closed,
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect to the store");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    s
}

/// Sends `bytes` on a fresh connection and reads until the store closes it (at most 5 s).
fn hostile(addr: SocketAddr, what: &str, bytes: &[u8]) -> Answer {
    let mut s = connect(addr);
    // the store may close before reading everything; that is fine
    let _ = s.write_all(bytes);
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("{what}: the store kept the connection open ({e}); got {got:?}"),
        }
    }
    if got.is_empty() {
        return Answer::Closed;
    }
    assert!(got.len() >= 5, "{what}: truncated answer {got:?}");
    let len = u32::from_le_bytes([got[0], got[1], got[2], got[3]]) as usize;
    assert_eq!(len + 4, got.len(), "{what}: answer is not one frame: {got:?}");
    assert_eq!(
        got[4], KIND_REJECT,
        "{what}: answer of kind {}, expected Reject",
        got[4]
    );
    // Reject body: [u32 reason length][reason]
    assert!(got.len() >= 9, "{what}: truncated Reject {got:?}");
    let rlen = u32::from_le_bytes([got[5], got[6], got[7], got[8]]) as usize;
    assert_eq!(rlen + 9, got.len(), "{what}: malformed Reject {got:?}");
    Answer::Rejected(String::from_utf8_lossy(&got[9..]).into_owned())
}

#[test]
fn hostile_clients_do_not_disturb_a_running_job() {
    let _serial = serial();
    let prog = prog();
    let scratch = Scratch::new("failures-hostile");
    let stop = scratch.path().join("stop");
    let stop_s = stop.to_str().expect("UTF-8 temp path").to_owned();
    let args = [prog.as_os_str(), "hostile".as_ref()];
    let mut job = Background::start(
        4,
        &args,
        &[
            ("FT_STOP_FILE", &stop_s),
            ("FT_OP_TIMEOUT", "20"),
            // the store logs dropped connections as warnings
            ("SHMEM_LOG_LEVEL", "WARN"),
        ],
        Duration::from_secs(60),
    );
    let Some(ready) = job.wait_line(Duration::from_secs(30), |l| l.starts_with("HOSTILE_READY ")) else {
        drop(job);
        panic!("PE 0 did not report the store address within 30 s");
    };
    let url = ready["HOSTILE_READY ".len()..].trim();
    let addr: SocketAddr = url
        .strip_prefix("tcp://")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("odd store address {url:?}"));
    assert!(addr.ip().is_loopback(), "store not on loopback: {addr}");

    // (c) 20 slow clients: connected, silent, open for the rest of the job
    let slow: Vec<TcpStream> = (0..20).map(|_| connect(addr)).collect();

    // (a) 1 KiB of garbage whose first bytes read as an absurd frame length
    let mut garbage: Vec<u8> = (0..1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    garbage[..4].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let a1 = hostile(addr, "garbage", &garbage);
    // (a') 1 KiB forming one well-sized frame of an unknown kind
    let mut junk = garbage.clone();
    junk[..4].copy_from_slice(&1020u32.to_le_bytes());
    junk[4] = 0xee;
    let a2 = hostile(addr, "unknown kind", &junk);
    // (b) a well-formed hello with a wrong secret
    let wrong = b"definitely-not-the-job-secret";
    let b = hostile(addr, "wrong secret", &hello_frame(wrong, 3, 4, false));
    assert!(
        matches!(b, Answer::Rejected(_) | Answer::Closed),
        "wrong secret: {b:?}"
    );
    // (d) an impostor claiming to be PE 1, on a request and on a watch connection
    let d1 = hostile(addr, "impostor PE 1", &hello_frame(wrong, 1, 4, false));
    let d2 = hostile(addr, "impostor PE 1 (watch)", &hello_frame(wrong, 1, 4, true));
    eprintln!(
        "store answers: garbage {a1:?}, unknown kind {a2:?}, wrong secret {b:?}, impostor {d1:?} / {d2:?}"
    );

    // the job is still going: let it run a little longer with the slow clients attached
    thread::sleep(Duration::from_millis(1500));
    assert!(
        job.child.try_wait().expect("try_wait").is_none(),
        "the job ended before it was told to"
    );
    std::fs::write(&stop, b"stop").expect("create the stop file");
    let stopped = Instant::now();
    let status = wait_limited(&mut job.child, Duration::from_secs(20));
    let took = stopped.elapsed();
    let finished = status.is_some();
    if !finished {
        common::stop_launcher(&mut job.child);
    }
    let (stdout, stderr) = job.output();
    let all = format!("--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    assert!(
        finished,
        "the job did not end within 20 s of the stop request\n{all}"
    );
    assert_eq!(status.and_then(|s| s.code()), Some(0), "launcher status\n{all}");
    assert!(!stdout.contains("FAIL: "), "{all}");
    assert!(
        stdout.lines().any(|l| l.trim_end() == "OK hostile"),
        "no OK line\n{all}"
    );
    // slow clients must not stall finalize: the store waits up to 10 s for a hello
    assert!(
        took < Duration::from_secs(8),
        "the job needed {took:.1?} to finish after the stop request (slow clients stalled it?)\n{all}"
    );
    for pe in 0..4 {
        assert!(
            stdout.contains(&format!("RESULT pe={pe} iterations=")),
            "PE {pe} did not finish its loop\n{all}"
        );
    }
    let dropped = stdout.matches("dropped connection").count();
    assert!(
        dropped >= 5,
        "PE 0 logged {dropped} dropped connections, expected one per hostile client (5)\n{all}"
    );
    assert!(
        stdout.contains("wrong job secret"),
        "no wrong-secret log line\n{all}"
    );
    // with the store gone, every slow client sees its connection end (nothing was admitted)
    for (i, mut s) in slow.into_iter().enumerate() {
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("slow client {i}: {other:?} after the job ended\n{all}"),
        }
    }
    eprintln!("hostile clients: job finished {took:.2?} after the stop request");
}

// ------------------------------------------------------------------------------------------
// 8. A running job whose PEs are stopped, signalled, killed from the outside (scenario `loop`)
// ------------------------------------------------------------------------------------------

/// Waits (at most `limit`) until `path` exists.
fn wait_for_file(path: &std::path::Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if path.exists() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A hand-started job running scenario `loop` until its stop file appears.
struct LoopJob {
    /// The PEs, started in one or more steps.
    jobs: Vec<ManualJob>,
    ids: JobIds,
    n: usize,
    env: Vec<(String, String)>,
    per_pe: Vec<(usize, String, String)>,
    scratch: Scratch,
}

impl LoopJob {
    /// Starts `n` PEs of `loop` and waits until every one is in the loop (PE 0 creates the ready
    /// file after the first barrier).
    fn start(n: usize, env: &[(&str, &str)], per_pe: &[(usize, &str, &str)]) -> LoopJob {
        let mut lj = LoopJob::prepare(JobIds::new(), n, env, per_pe);
        lj.launch(&(0..n).collect::<Vec<_>>());
        lj.wait_ready();
        lj
    }

    /// A job of `n` PEs with nothing started yet.
    fn prepare(ids: JobIds, n: usize, env: &[(&str, &str)], per_pe: &[(usize, &str, &str)]) -> LoopJob {
        let scratch = Scratch::new("failures-loop");
        let path = |name: &str| {
            scratch
                .path()
                .join(name)
                .to_str()
                .expect("UTF-8 temp path")
                .to_owned()
        };
        let mut all_env = vec![
            ("FT_STOP_FILE".to_string(), path("stop")),
            ("FT_READY_FILE".to_string(), path("ready")),
            ("FT_INIT_TIMEOUT".to_string(), "60".to_string()),
            ("FT_OP_TIMEOUT".to_string(), "60".to_string()),
        ];
        all_env.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        LoopJob {
            jobs: Vec::new(),
            ids,
            n,
            env: all_env,
            per_pe: per_pe
                .iter()
                .map(|(p, k, v)| (*p, k.to_string(), v.to_string()))
                .collect(),
            scratch,
        }
    }

    /// Starts PEs `which`.
    fn launch(&mut self, which: &[usize]) {
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let per_pe: Vec<(usize, &str, &str)> = self
            .per_pe
            .iter()
            .map(|(p, k, v)| (*p, k.as_str(), v.as_str()))
            .collect();
        self.jobs.push(ManualJob::start_with(
            &self.ids, "loop", self.n, which, &env, &per_pe,
        ));
    }

    /// Waits until PE 0 reports every PE in the loop; fails the test after 60 s.
    fn wait_ready(&mut self) {
        if !wait_for_file(&self.scratch.path().join("ready"), Duration::from_secs(60)) {
            let ended = self.wait_all(Duration::ZERO);
            panic!("the job did not reach its loop within 60 s\n{}", dump(&ended));
        }
    }

    /// Every started PE's pid, in PE order.
    fn pids(&self) -> Vec<u32> {
        let mut pes: Vec<(usize, u32)> = self
            .jobs
            .iter()
            .flat_map(|j| j.pes.iter().map(|p| (p.pe, p.child.id())))
            .collect();
        pes.sort();
        pes.into_iter().map(|(_, pid)| pid).collect()
    }

    /// Waits for every PE (at most `limit` from now) and returns how they ended, in PE order.
    fn wait_all(&mut self, limit: Duration) -> Vec<Ended> {
        let deadline = Instant::now() + limit;
        let mut ended: Vec<Ended> = Vec::new();
        for job in self.jobs.drain(..) {
            let left = deadline.saturating_duration_since(Instant::now());
            let limit = job.start.elapsed() + left;
            ended.extend(job.wait(limit));
        }
        ended.sort_by_key(|e| e.pe);
        ended
    }

    /// Asks PE 0 to end the loop and waits (at most `limit`) for every PE.
    fn finish(mut self, limit: Duration) -> Vec<Ended> {
        std::fs::write(self.scratch.path().join("stop"), b"stop").expect("create the stop file");
        self.wait_all(limit)
    }
}

/// Every PE finalized and exited 0, PE 0 printed `OK loop`.
fn assert_loop_ok(ended: &[Ended]) {
    assert_all_ended(ended);
    assert_no_fail_lines(ended);
    for e in ended {
        assert_eq!(e.code(), Some(0), "PE {} exit status\n{}", e.pe, dump(ended));
        assert!(
            e.result().is_some(),
            "PE {} did not finish its loop\n{}",
            e.pe,
            dump(ended)
        );
    }
    assert!(
        ended[0].output.lines().any(|l| l.trim_end() == "OK loop"),
        "no OK line\n{}",
        dump(ended)
    );
}

/// Sends `sig` to every thread of process `pid` (so the watch thread gets it too).
fn signal_every_thread(pid: u32, sig: i32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut sent = 0;
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i64>().ok()) else {
            continue;
        };
        // SAFETY: tgkill has no memory-safety preconditions; a vanished thread is an error return.
        let rc = unsafe { libc::syscall(libc::SYS_tgkill, i64::from(pid), tid, i64::from(sig)) };
        if rc == 0 {
            sent += 1;
        }
    }
    sent
}

#[test]
fn stopped_and_continued_pes_do_not_end_the_job() {
    let _serial = serial();
    // heartbeats every 0.5 s, a PE silent for 2 s is dead: a 1 s stop must not look like one
    let job = LoopJob::start(4, &[("ACLSHMEM_HEARTBEAT_TIMEOUT", "2s")], &[]);
    let pids = job.pids();
    for victim in [2usize, 0] {
        common::signal(pids[victim], libc::SIGSTOP);
        thread::sleep(Duration::from_secs(1));
        common::signal(pids[victim], libc::SIGCONT);
        thread::sleep(Duration::from_millis(500));
    }
    let ended = job.finish(Duration::from_secs(30));
    assert_loop_ok(&ended);
    eprintln!("PEs 2 and 0 stopped for 1 s each: the job finished normally");
}

/// The whole job paused longer than the heartbeat timeout (every PE stopped: a machine that
/// stalls, a debugger holding the job), then resumed one PE after another 300 ms apart: a PE that
/// runs first must not take the others for dead because they have not run yet. The others first,
/// then PE 0 (each watcher judged PE 0's store silent as soon as it ran: "lost the config store
/// run by PE 0 (no heartbeat)", seen in CI under load); PE 0 first (its store judged the others
/// silent).
#[test]
fn a_paused_job_resumed_unevenly_goes_on() {
    let _serial = serial();
    let job = LoopJob::start(3, &[("ACLSHMEM_HEARTBEAT_TIMEOUT", "2s")], &[]);
    let pids = job.pids();
    for first in [[1usize, 2, 0], [0, 1, 2]] {
        for &p in &pids {
            common::signal(p, libc::SIGSTOP);
        }
        thread::sleep(Duration::from_secs(4));
        for pe in first {
            common::signal(pids[pe], libc::SIGCONT);
            thread::sleep(Duration::from_millis(300));
        }
        thread::sleep(Duration::from_millis(500));
    }
    let ended = job.finish(Duration::from_secs(30));
    assert_loop_ok(&ended);
    eprintln!("the job paused for 4 s twice and resumed unevenly: it finished normally");
}

#[test]
fn sigusr1_with_sa_restart_does_not_end_the_job() {
    let _serial = serial();
    let job = LoopJob::start(4, &[("FT_SIGUSR1", "1")], &[]);
    let pids = job.pids();
    let until = Instant::now() + Duration::from_secs(2);
    let mut sent = 0;
    while Instant::now() < until {
        for &pid in &pids {
            sent += signal_every_thread(pid, libc::SIGUSR1);
        }
        thread::sleep(Duration::from_millis(10));
    }
    let ended = job.finish(Duration::from_secs(30));
    assert_loop_ok(&ended);
    for e in &ended {
        let got: i64 = e.field("usr1").and_then(|v| v.parse().ok()).unwrap_or(0);
        assert!(got > 0, "PE {} counted no SIGUSR1\n{}", e.pe, dump(&ended));
    }
    eprintln!("{sent} SIGUSR1 sent to every thread of 4 PEs: the job finished normally");
}

/// `VmRSS` (KiB) and `Threads` of process `pid`, from /proc/<pid>/status.
fn rss_and_threads(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("Threads:")?))
}

/// Keeps up to `per_kind` connections of each hostile kind open to `addr` until `stop`: idle
/// ones, ones that drip a hello one byte every 100 ms, and ones announcing a 64 MiB frame and
/// sending 256 KiB of it. Closed connections are replaced. Returns the number of connections
/// made. Bounded: at most 60 s and 20 000 connections.
fn flood(addr: SocketAddr, per_kind: usize, stop: &std::sync::atomic::AtomicBool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut made = 0usize;
    let open = |made: &mut usize| -> Option<TcpStream> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
        s.set_nonblocking(true).ok()?;
        *made += 1;
        Some(s)
    };
    // a hello with a long secret: 4 + 1042 bytes, dripped
    let drip_bytes = hello_frame(&[b'x'; 1024], 1, 4, false);
    let mut huge_bytes = (64u32 << 20).to_le_bytes().to_vec();
    huge_bytes.extend(std::iter::repeat_n(0x5au8, 256 << 10));
    let mut idle: Vec<TcpStream> = Vec::new();
    let mut drip: Vec<(TcpStream, usize)> = Vec::new();
    let mut huge: Vec<(TcpStream, usize)> = Vec::new();
    let alive = |s: &TcpStream| {
        let mut b = [0u8; 64];
        matches!((&*s).read(&mut b), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock)
    };
    let mut last_drip = Instant::now();
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline && made < 20_000 {
        idle.retain(alive);
        drip.retain(|(s, _)| alive(s));
        huge.retain(|(s, _)| alive(s));
        while idle.len() < per_kind {
            match open(&mut made) {
                Some(s) => idle.push(s),
                None => break,
            }
        }
        while drip.len() < per_kind {
            match open(&mut made) {
                Some(s) => drip.push((s, 0)),
                None => break,
            }
        }
        while huge.len() < per_kind {
            match open(&mut made) {
                Some(s) => huge.push((s, 0)),
                None => break,
            }
        }
        if last_drip.elapsed() >= Duration::from_millis(100) {
            last_drip = Instant::now();
            for (s, at) in &mut drip {
                if *at < drip_bytes.len() && (&*s).write(&drip_bytes[*at..*at + 1]).is_ok_and(|n| n == 1) {
                    *at += 1;
                }
            }
        }
        for (s, at) in &mut huge {
            if *at < huge_bytes.len()
                && let Ok(n) = (&*s).write(&huge_bytes[*at..])
            {
                *at += n;
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
    made
}

#[test]
fn a_flood_of_strangers_costs_the_store_little() {
    let _serial = serial();
    let ids = JobIds::new();
    let addr: SocketAddr = format!("127.0.0.1:{}", ids.port).parse().expect("address");
    let mut job = LoopJob::prepare(ids, 4, &[], &[]);
    // PE 0 first; the flood starts as soon as its store listens, before the other PEs come
    job.launch(&[0]);
    let listening = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            listening.elapsed() < Duration::from_secs(30),
            "PE 0's store did not listen within 30 s"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooder = {
        let stop = stop.clone();
        thread::spawn(move || flood(addr, 100, &stop))
    };
    let started = Instant::now();
    job.launch(&[1, 2, 3]);
    job.wait_ready();
    let joined = started.elapsed();
    let pids = job.pids();
    // the job runs with the flood for 4 s; PE 0 (the store) is sampled all along
    let mut worst = (0u64, 0u64);
    let mut reference = (0u64, 0u64);
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until {
        if let Some((rss, threads)) = rss_and_threads(pids[0]) {
            worst = (worst.0.max(rss), worst.1.max(threads));
        }
        if let Some((rss, threads)) = rss_and_threads(pids[1]) {
            reference = (reference.0.max(rss), reference.1.max(threads));
        }
        thread::sleep(Duration::from_millis(50));
    }
    let stopping = Instant::now();
    let ended = job.finish(Duration::from_secs(30));
    let took = stopping.elapsed();
    stop.store(true, Ordering::SeqCst);
    let made = flooder.join().expect("flood thread");
    assert_loop_ok(&ended);
    eprintln!(
        "flood of {made} hostile connections: PEs 1-3 joined in {joined:.2?}, the job ended {took:.2?} \
         after the stop request; PE 0 peak VmRSS {} KiB, {} threads (PE 1: {} KiB, {} threads)",
        worst.0, worst.1, reference.0, reference.1
    );
    assert!(made >= 300, "the flood made only {made} connections");
    assert!(
        joined < Duration::from_secs(20),
        "PEs 1-3 needed {joined:.1?} to join during the flood\n{}",
        dump(&ended)
    );
    assert!(
        took < Duration::from_secs(10),
        "the job needed {took:.1?} to end after the stop request\n{}",
        dump(&ended)
    );
    // the store runs on one thread whatever the number of connections, and buffers at most a
    // hello per stranger (64 of them at a time)
    assert!(
        worst.1 <= reference.1 + 2,
        "PE 0 ran {} threads during the flood (PE 1: {})",
        worst.1,
        reference.1
    );
    assert!(
        worst.0 <= reference.0 + 24 * 1024,
        "PE 0's VmRSS reached {} KiB during the flood (PE 1: {} KiB)",
        worst.0,
        reference.0
    );
}

/// Kills PE `victim` of a running 32-PE job started by hand (no launcher) and returns how long
/// each other PE took to exit with the death notice, measured from the kill.
fn death_notice_latencies(victim: usize, env: &[(&str, &str)]) -> (Vec<Duration>, Vec<Ended>) {
    let mut job = LoopJob::start(32, env, &[]);
    let pids = job.pids();
    // the others are in (or between) barriers
    thread::sleep(Duration::from_millis(300));
    let start = job.jobs[0].start;
    common::signal(pids[victim], libc::SIGKILL);
    let killed_at = start.elapsed();
    let ended = job.wait_all(Duration::from_secs(30));
    assert_all_ended(&ended);
    let named = format!("PE {victim} died");
    let mut latencies = Vec::new();
    for e in ended.iter().filter(|e| e.pe != victim) {
        assert!(
            e.code().is_some_and(|c| c != 0) && e.output.contains(&named),
            "PE {} did not end with `{named}`\n{}",
            e.pe,
            dump(&ended)
        );
        latencies.push(e.at.saturating_sub(killed_at));
    }
    (latencies, ended)
}

#[test]
fn death_of_one_of_32_hand_started_pes_reaches_all_within_half_a_second() {
    let _serial = serial();
    let (latencies, ended) = death_notice_latencies(5, &[]);
    let worst = latencies.iter().max().copied().unwrap_or_default();
    let mean = latencies.iter().sum::<Duration>() / latencies.len().max(1) as u32;
    eprintln!("PE 5 of 32 killed: the 31 others exited within {worst:.3?} (mean {mean:.3?})");
    assert!(
        worst < Duration::from_millis(500),
        "the last PE exited {worst:.3?} after the kill\n{}",
        dump(&ended)
    );
}

// ------------------------------------------------------------------------------------------
// 9. Messages that end a job reach stderr whatever the log settings
// ------------------------------------------------------------------------------------------

/// Runs `scenario` on hand-started PEs `which` of `n` with the log sent to files in a scratch
/// directory; returns how they ended and everything the log files hold.
fn run_logging_to_files(
    scenario: &str,
    n: usize,
    which: &[usize],
    env: &[(&str, &str)],
    limit: Duration,
) -> (Vec<Ended>, String) {
    let logs = Scratch::new("failures-logs");
    let dir = logs.path().to_str().expect("UTF-8 temp path").to_owned();
    let mut all_env: Vec<(&str, &str)> = vec![("SHMEM_LOG_TO_STDOUT", "0"), ("SHMEM_LOG_PATH", &dir)];
    all_env.extend_from_slice(env);
    let ended = ManualJob::start(scenario, n, which, &all_env, &[]).wait(limit);
    let mut files = String::new();
    for f in std::fs::read_dir(logs.path()).into_iter().flatten().flatten() {
        files.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
    }
    (ended, files)
}

/// Every PE in `who` said `text` on stderr and not on stdout, and the log files hold it too.
fn assert_on_stderr(ended: &[Ended], files: &str, who: &[usize], text: &str) {
    for e in ended.iter().filter(|e| who.contains(&e.pe)) {
        assert!(
            e.stderr.contains(text),
            "PE {}: `{text}` is not on stderr\n{}",
            e.pe,
            dump(ended)
        );
        let stdout = &e.output[..e.output.len() - e.stderr.len()];
        assert!(
            !stdout.contains(text),
            "PE {}: `{text}` went to stdout although the log goes to a file\n{}",
            e.pe,
            dump(ended)
        );
    }
    assert!(
        files.contains(text),
        "the log files do not hold `{text}`:\n{files}"
    );
}

#[test]
fn job_ending_messages_reach_stderr_when_logging_to_a_file() {
    let _serial = serial();
    // a PE dies
    let (ended, files) = run_logging_to_files(
        "die",
        4,
        &[0, 1, 2, 3],
        &[("FT_PE", "2"), ("FT_MODE", "barrier")],
        Duration::from_secs(30),
    );
    assert_all_ended(&ended);
    assert_on_stderr(&ended, &files, &[0, 1, 3], "PE 2 died");
    // PE 0, which runs the store, dies
    let (ended, files) = run_logging_to_files(
        "die",
        3,
        &[0, 1, 2],
        &[("FT_PE", "0"), ("FT_MODE", "barrier")],
        Duration::from_secs(30),
    );
    assert_all_ended(&ended);
    assert_on_stderr(&ended, &files, &[1, 2], "lost the config store");
    // a global exit
    let (ended, files) = run_logging_to_files(
        "global_exit",
        3,
        &[0, 1, 2],
        &[("FT_PE", "1"), ("FT_STATUS", "7")],
        Duration::from_secs(30),
    );
    assert_all_ended(&ended);
    assert_on_stderr(&ended, &files, &[0, 1, 2], "called aclshmem_global_exit(7)");
    // a timeout: PE 2 never comes
    let (ended, files) = run_logging_to_files(
        "arrive",
        3,
        &[0, 1],
        &[("FT_INIT_TIMEOUT", "2"), ("FT_OP_TIMEOUT", "2")],
        Duration::from_secs(30),
    );
    assert_all_ended(&ended);
    assert_on_stderr(&ended, &files, &[0, 1], "did not arrive");
}

// ------------------------------------------------------------------------------------------
// 10. The job secret of a job without a launcher
// ------------------------------------------------------------------------------------------

/// Sends `frames` on a fresh connection to `addr` and returns every frame the store answered
/// (kind, body) until it closed the connection (at most 5 s).
fn exchange(addr: SocketAddr, frames: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut s = connect(addr);
    let _ = s.write_all(frames);
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let mut out = Vec::new();
    let mut rest = got.as_slice();
    while rest.len() >= 5 {
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if rest.len() < 4 + len || len == 0 {
            break;
        }
        out.push((rest[4], rest[5..4 + len].to_vec()));
        rest = &rest[4 + len..];
    }
    out
}

/// A global-exit frame (kind 8, status).
fn global_exit_frame(status: i32) -> Vec<u8> {
    let mut f = 5u32.to_le_bytes().to_vec();
    f.push(8);
    f.extend_from_slice(&status.to_le_bytes());
    f
}

#[test]
fn without_a_launcher_token_strangers_cannot_join_or_end_the_job() {
    let _serial = serial();
    let secrets = Scratch::new("failures-secrets");
    let dir = secrets.path().join("secrets");
    let dir_s = dir.to_str().expect("UTF-8 temp path").to_owned();
    let mut ids = JobIds::new();
    ids.secret = None;
    let addr: SocketAddr = format!("127.0.0.1:{}", ids.port).parse().expect("address");
    let mut job = LoopJob::prepare(ids, 4, &[("ACLSHMEM_JOB_SECRET_DIR", &dir_s)], &[]);
    job.launch(&[0, 1, 2, 3]);
    job.wait_ready();
    // every PE is in: the secret file is gone already
    let left: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "secret files left while the job runs: {left:?}");
    // the secret built into earlier versions, then guesses: refused, and told nothing about the job
    let mut answers = Vec::new();
    for (secret, pe, n, watch) in [
        (&b"aclshmem-config-store-v1"[..], 1, 4, true),
        (&b"aclshmem-config-store-v1"[..], 1, 4, false),
        (&b""[..], 0, 4, true),
        (&b"guess"[..], 9, 99, true),
    ] {
        let mut frames = hello_frame(secret, pe, n, watch);
        frames.extend(global_exit_frame(7));
        let got = exchange(addr, &frames);
        assert!(
            got.iter().all(|(kind, _)| *kind == KIND_REJECT),
            "a stranger got {got:?}"
        );
        for (_, body) in &got {
            let reason = String::from_utf8_lossy(&body[4.min(body.len())..]).into_owned();
            assert!(
                !reason.bytes().any(|b| b.is_ascii_digit()),
                "the rejection tells about the job: {reason:?}"
            );
            assert_eq!(reason, "not admitted to this config store");
            answers.push(reason);
        }
    }
    thread::sleep(Duration::from_millis(500));
    let ended = job.finish(Duration::from_secs(30));
    assert_loop_ok(&ended);
    eprintln!("strangers without the per-job secret: {answers:?}; the job finished normally");

    // the default directory: $HOME/.aclshmem, private, empty again after the job
    let home = secrets.path().join("home");
    std::fs::create_dir_all(&home).expect("create a home");
    let home_s = home.to_str().expect("UTF-8 temp path").to_owned();
    let mut ids = JobIds::new();
    ids.secret = None;
    let ended = ManualJob::start_with(&ids, "zero_timeout", 3, &[0, 1, 2], &[("HOME", &home_s)], &[])
        .wait(Duration::from_secs(30));
    assert_all_ended(&ended);
    assert_no_fail_lines(&ended);
    assert!(ended[0].output.contains("OK zero_timeout"), "{}", dump(&ended));
    let dir = home.join(".aclshmem");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&dir).expect("$HOME/.aclshmem").permissions(),
    );
    assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    let left: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", dir.display());
}

#[test]
fn a_second_watcher_cannot_take_a_pes_place() {
    let _serial = serial();
    let ids = JobIds::new();
    let secret = ids.secret.clone().expect("a secret");
    let addr: SocketAddr = format!("127.0.0.1:{}", ids.port).parse().expect("address");
    let mut job = LoopJob::prepare(ids, 4, &[], &[]);
    job.launch(&[0, 1, 2, 3]);
    job.wait_ready();
    // even with the job's secret, PE 1's watch connection (and request connection) stay its own
    for watch in [true, false] {
        let got = exchange(addr, &hello_frame(secret.as_bytes(), 1, 4, watch));
        assert!(
            matches!(got.as_slice(), [(KIND_REJECT, _)]),
            "a second connection as PE 1 (watch {watch}) got {got:?}"
        );
    }
    let ended = job.finish(Duration::from_secs(30));
    assert_loop_ok(&ended);
}

// ------------------------------------------------------------------------------------------
// 11. A PE that forked a child (which keeps the PE's sockets open) still dies visibly
// ------------------------------------------------------------------------------------------

/// Runs `loop` on 4 hand-started PEs where PE `victim` forks a child that sleeps 30 s holding its
/// descriptors, kills PE `victim`, and checks that every other PE exits with `named` within
/// `within` of the kill. The child is killed at the end.
fn forked_pe_death(victim: usize, env: &[(&str, &str)], named: &str, within: Duration) {
    let victim_s = victim.to_string();
    let mut all_env: Vec<(&str, &str)> = vec![("FT_FORK_PE", &victim_s), ("FT_CHILD_SLEEP_S", "30")];
    all_env.extend_from_slice(env);
    let mut job = LoopJob::start(4, &all_env, &[]);
    let pids = job.pids();
    thread::sleep(Duration::from_millis(300));
    let start = job.jobs[0].start;
    common::signal(pids[victim], libc::SIGKILL);
    let killed_at = start.elapsed();
    let ended = job.wait_all(Duration::from_secs(40));
    let child: Option<u32> = ended[victim].output.lines().find_map(|l| {
        l.strip_prefix(&format!("pe {victim} forked child "))
            .and_then(|p| p.trim().parse().ok())
    });
    if let Some(c) = child {
        common::signal(c, libc::SIGKILL);
    }
    assert!(child.is_some(), "PE {victim} did not fork\n{}", dump(&ended));
    assert_all_ended(&ended);
    let mut worst = Duration::ZERO;
    for e in ended.iter().filter(|e| e.pe != victim) {
        assert!(
            e.code().is_some_and(|c| c != 0) && e.output.contains(named),
            "PE {} did not end with `{named}`\n{}",
            e.pe,
            dump(&ended)
        );
        let after = e.at.saturating_sub(killed_at);
        worst = worst.max(after);
        assert!(
            after < within,
            "PE {} exited {after:.2?} after PE {victim} was killed\n{}",
            e.pe,
            dump(&ended)
        );
    }
    eprintln!("PE {victim} (with a forked child) killed: the others ended within {worst:.2?}");
}

/// A PE that fails with status 1 (as an uncaught Python exception exits) while the others wait in
/// a barrier: `aclshmrun` names it, not one of the PEs the library ends with status 1 for losing
/// it (they were reaped in the same poll, and the lowest-numbered was named; 5 runs).
#[test]
fn the_launcher_names_the_pe_that_failed_with_status_1() {
    let _serial = serial();
    let prog = prog();
    for _ in 0..5 {
        let run = common::run_pes(
            3,
            &[prog.as_os_str(), OsStr::new("die")],
            &[("FT_PE", "2"), ("FT_HOW", "exit1"), ("FT_MODE", "barrier")],
            Duration::from_secs(40),
        );
        assert!(
            run.code() == 1 && run.stderr.contains("aclshmrun: PE 2 exited with status 1"),
            "{}",
            run.dump()
        );
    }
}

#[test]
fn a_pe_with_a_forked_child_is_still_seen_to_die() {
    let _serial = serial();
    forked_pe_death(2, &[], "PE 2 died", Duration::from_secs(2));
}

#[test]
fn the_store_pe_with_a_forked_child_is_still_seen_to_die() {
    let _serial = serial();
    // the child keeps the store's own sockets: the heartbeat tells
    forked_pe_death(
        0,
        &[("ACLSHMEM_HEARTBEAT_TIMEOUT", "2s")],
        "lost the config store",
        Duration::from_secs(4),
    );
}

/// A child PE 0 forks holds copies of the config store's sockets; the store shuts its connections
/// down when it ends them, so the job finalizes at once while the child lives (every PE's
/// finalize waited for the child's exit: the end of its `Bye` connection never came).
#[test]
fn a_child_of_the_store_pe_does_not_hold_up_finalize() {
    let _serial = serial();
    let job = LoopJob::start(3, &[("FT_FORK_PE", "0"), ("FT_CHILD_SLEEP_S", "30")], &[]);
    let stopped = Instant::now();
    let ended = job.finish(Duration::from_secs(40));
    let took = stopped.elapsed();
    let child: Option<u32> = ended[0].output.lines().find_map(|l| {
        l.strip_prefix("pe 0 forked child ")
            .and_then(|p| p.trim().parse().ok())
    });
    if let Some(c) = child {
        common::signal(c, libc::SIGKILL);
    }
    assert!(child.is_some(), "PE 0 did not fork\n{}", dump(&ended));
    assert_loop_ok(&ended);
    assert!(
        took < Duration::from_secs(15),
        "the job took {took:.2?} to end after its stop while PE 0's child (30 s) lived\n{}",
        dump(&ended)
    );
    eprintln!("with PE 0's child alive the job ended {took:.2?} after its stop");
}

/// A thread the library cannot start (the limit of processes and threads, `ulimit -u`: the config
/// store's or its watcher's) fails init with `ACLSHMEM_INNER_ERROR` and a message naming the
/// thread and the limit; the EAGAIN of the failed `clone` was reported as a timeout. Runs a 1-PE
/// init as user 65534 (the limit does not bind root) from a copy of the program and the library
/// that user can read.
#[test]
fn a_thread_limit_fails_init_naming_it() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip(
            "a_thread_limit_fails_init_naming_it",
            "needs root to run as another user",
        );
        return;
    }
    let dir = common::Scratch::new("thread-limit");
    let prog = common::compile_c("failure_tests");
    std::fs::copy(&prog, dir.path().join("failure_tests")).unwrap();
    std::fs::copy(
        common::profile_dir().join("libaclshmem.so"),
        dir.path().join("libaclshmem.so"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (name, mode) in [("", 0o755), ("failure_tests", 0o755), ("libaclshmem.so", 0o644)] {
        std::fs::set_permissions(dir.path().join(name), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    for limit in [1, 2] {
        let port = common::free_port();
        let out = Command::new("setpriv")
            .args([
                "--reuid",
                "65534",
                "--regid",
                "65534",
                "--clear-groups",
                "env",
                "-i",
            ])
            .arg("PATH=/usr/bin:/bin")
            .arg("HOME=/tmp")
            .arg(format!("LD_LIBRARY_PATH={}", dir.path().display()))
            .args(["SHMEM_LOG_TO_STDOUT=1", "ACLSHMEM_LOCAL_MEM_SIZE=4M"])
            .args(["ACLSHMEM_MY_PE=0", "ACLSHMEM_N_PES=1"])
            .arg(format!("ACLSHMEM_IP_PORT=tcp://127.0.0.1:{port}"))
            .args([
                "bash",
                "-c",
                &format!("ulimit -u {limit}; exec ./failure_tests arrive"),
            ])
            .current_dir(dir.path())
            .output()
            .expect("run setpriv");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("RESULT pe=0 init_rc=-4")
                && text.contains("cannot start the library's config store")
                && text.contains("ulimit -u")
                && !text.contains("timeout"),
            "ulimit -u {limit}:\n{text}"
        );
    }
}

/// PE 0's config store without a descriptor for the job's connections (`ulimit -n` too low): the
/// job's init fails at once with a message on stderr naming the open-file limit (PE 0 may have no
/// descriptor for its log file either); the PEs retried for the connect timeout and then blamed
/// the network ("Connection reset by peer"), with the cause in no file.
#[test]
fn a_low_open_file_limit_fails_init_at_once_naming_it() {
    let prog = common::compile_c("failure_tests");
    for limit in [12, 15] {
        let script = format!(
            "ulimit -n {limit} && exec {} -n 2 --timeout 60 {} arrive",
            common::launcher().display(),
            prog.display()
        );
        let out = Command::new("bash")
            .args(["-c", &script])
            .env_remove("ACLSHMEM_JOB_TOKEN")
            .env_remove("ACLSHMEM_IP_PORT")
            .env_remove("SHMEM_LOG_TO_STDOUT")
            .env("ACLSHMEM_LOCAL_MEM_SIZE", "4M")
            .output()
            .expect("run bash");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // the store runs out, or PE 0's own connection to it cannot get a socket
        assert!(
            (text.contains("ran out of file descriptors") || text.contains("Too many open files"))
                && text.contains("raise the open-file limit")
                && text.contains("ulimit -n"),
            "ulimit -n {limit}: no message naming the limit\n{text}"
        );
        let pe0 = text
            .lines()
            .find_map(|l| l.strip_prefix("RESULT pe=0 init_rc=-4 elapsed="))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok());
        assert!(
            pe0.is_some_and(|s| s < 5.0),
            "ulimit -n {limit}: PE 0's init must fail at once with ACLSHMEM_INNER_ERROR\n{text}"
        );
    }
}

//! Multi-PE integration tests: real PE processes started by `aclshmrun`, each running one scenario
//! of `tests/c/pe_tests.c` (init/finalize, init status, attribute validation, symmetric heap,
//! `aclshmem_ptr`, barriers, calls before init and after finalize, 16 PEs on a small machine,
//! stray connections to the config store) plus crash and Ctrl-C handling of a running job.
//!
//! Every run has the launcher's own `--timeout` and a harness-side limit on top, so no test can
//! hang for more than about a minute even if the library does.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Background, Run, Scratch, process_alive, run_pes, shm_leftovers, signal};

/// The launcher's `--timeout` for every job.
const JOB_TIMEOUT: Duration = Duration::from_secs(45);

fn pe_tests() -> PathBuf {
    common::compile_c("pe_tests")
}

/// Runs `scenario` on `n` PEs and asserts it passed.
fn scenario_env(scenario: &str, n: usize, env: &[(&str, &str)]) -> Run {
    let prog = pe_tests();
    let args = [prog.as_os_str(), scenario.as_ref()];
    let run = run_pes(n, &args, env, JOB_TIMEOUT);
    run.assert_ok(scenario);
    run
}

fn scenario(name: &str, n: usize) -> Run {
    scenario_env(name, n, &[])
}

/// `ACLSHMEM_COLLECTIVE_TIMEOUT=0` means no limit, as 0 does for the other waits' settings (every
/// barrier failed at once, silently unsynchronised).
#[test]
fn collective_timeout_zero_means_no_limit_2pes() {
    scenario_env("wait_long", 2, &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "0")]);
}

/// A program that closed its standard streams before init writes to them afterwards: the
/// library's descriptors never take numbers 0-2 (the config store's socket took descriptor 1 and
/// the program's output went into it: SIGPIPE), the closed ones are /dev/null.
#[test]
fn closed_standard_streams_stay_the_programs_3pes() {
    scenario("closed_std", 3);
}

/// A soft open-file limit too low for an endpoint to every peer over UCX is raised at init.
#[test]
fn ucx_raises_a_low_open_file_limit_3pes() {
    assert!(
        common::ucx_installed(),
        "UCX (libucp) is not installed: the README's setup installs it"
    );
    scenario_env(
        "open_files",
        3,
        &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")],
    );
}

/// PE 0's config store keeps two connections per PE: with a soft open-file limit of 64, a job of
/// 40 PEs failed at init (the store turned the last PEs away until they gave up after 20 s); the
/// store raises the limit before it accepts anyone.
#[test]
fn config_store_raises_a_low_open_file_limit_40pes() {
    scenario_env("open_files", 40, &[]);
}

/// UCX's shared-memory transports cannot report a failed peer, which this library asks of every
/// UCX connection: with only those allowed (`UCX_TLS=sm,self`) each call to a peer fails with an
/// error that says so and names the transports to use (it used to say only "Destination is
/// unreachable"), and the job ends instead of waiting.
#[test]
fn ucx_without_a_network_transport_fails_clearly_2pes() {
    assert!(
        common::ucx_installed(),
        "UCX (libucp) is not installed: the README's setup installs it"
    );
    let env = [
        ("ACLSHMEM_TRANSPORT", "ucx"),
        ("UCX_TLS", "sm,self"),
        ("SHMEM_LOG_TO_STDOUT", "1"),
    ];
    let args = [pe_tests().into_os_string(), "barrier".into()];
    let run = run_pes(2, &args, &env, Duration::from_secs(60));
    assert_ne!(run.code(), 0, "{}", run.dump());
    assert!(
        run.stdout.contains("UCX finds no transport to PE")
            && run.stdout.contains("need a network transport"),
        "{}",
        run.dump()
    );
}

#[test]
fn init_finalize_2pes() {
    scenario("init_finalize", 2);
}

#[test]
fn init_finalize_4pes() {
    scenario("init_finalize", 4);
}

/// A program that returns from `main` without `aclshmem_finalize` (status 0): finalized at exit,
/// each PE serving the others until all are done; three runs each, as the failure it guards
/// against (the first PE out ended the others as a lost PE) depended on timing.
#[test]
fn no_finalize_is_finalized_at_exit_2_and_4pes() {
    for n in [2, 4] {
        for _ in 0..3 {
            scenario("no_finalize", n);
        }
    }
}

/// A PE that returns from `main` without finalizing while the others wait for it in a barrier
/// or a reduction: the call fails on each of them (naming it) and the job still ends with 0.
#[test]
fn a_pe_leaving_during_a_barrier_or_reduction_fails_it_3_and_4pes() {
    for n in [3, 4] {
        scenario("leave_barrier", n);
        scenario("leave_reduce", n);
    }
}

/// A finalize at exit that fails (PE 0 busy outside the library beyond the operation timeout)
/// ends the job with status 1 and a message, so nobody waits for ever for a PE that left.
#[test]
fn failed_finalize_at_exit_ends_the_job_2pes() {
    let prog = pe_tests();
    let run = run_pes(
        2,
        &[prog.as_os_str(), "no_finalize_stuck".as_ref()],
        &[],
        JOB_TIMEOUT,
    );
    assert_eq!(run.code(), 1, "{}", run.dump());
    assert!(run.failures().is_empty(), "{}", run.dump());
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("the finalize at exit failed"),
        "{}",
        run.dump()
    );
    assert!(run.elapsed < Duration::from_secs(14), "{}", run.dump());
}

#[test]
fn init_status_phases_2pes() {
    scenario("init_status_phases", 2);
}

#[test]
fn attr_validation_1pe() {
    scenario("attr_validation", 1);
}

#[test]
fn attr_validation_2pes() {
    scenario("attr_validation", 2);
}

/// The heap scenario, plus the log line of its asymmetric request: PE i asked for 12340 + 16 i
/// bytes, and the error names "asymmetric" and every size.
fn heap(n: usize) {
    let run = scenario("heap", n);
    let sizes: Vec<String> = (0..n).map(|pe| (12340 + 16 * pe).to_string()).collect();
    let named_all = run.stdout.lines().any(|l| {
        l.contains("error") && l.contains("asymmetric") && sizes.iter().all(|s| l.contains(s.as_str()))
    });
    assert!(
        named_all,
        "no error line names the asymmetric request with every size {sizes:?}\n{}",
        run.dump()
    );
}

/// An allocation made while the other PEs wait in a barrier, then the reverse: every allocation
/// fails at once (the first finds a PE in the barrier, the late ones find that bootstrap step
/// failed) and the heaps stay symmetric (`pe_tests alloc_crossed`); also through the shm
/// transport, where the barrier's mark is read.
#[test]
fn allocations_against_barriers_fail_on_every_pe_2_and_3pes() {
    let none: &[(&str, &str)] = &[];
    for (n, env) in [(2, none), (3, none), (3, &[("ACLSHMEM_DIRECT_ACCESS", "0")][..])] {
        let run = scenario_env("alloc_crossed", n, env);
        assert!(
            run.stdout
                .contains("waits in a barrier (or sync) of the world team instead")
                && run.stdout.contains("already failed on the PEs that made it"),
            "{}",
            run.dump()
        );
    }
}

#[test]
fn heap_2pes() {
    heap(2);
}

#[test]
fn heap_4pes() {
    heap(4);
}

/// The library's reserved region (signal word, sync pool, counters) cannot be freed or targeted by
/// RMA, atomics, signals or collectives; barriers keep working and allocations stay past it.
#[test]
fn reserved_region_2pes() {
    let run = scenario("reserved", 2);
    assert!(
        run.stdout.contains("reserved region"),
        "the refusals were not logged:\n{}",
        run.dump()
    );
    // a user block freed with the other heap's mem_type is refused for that reason (it was said
    // to lie in the reserved region)
    assert!(
        run.stdout
            .contains("lies in the DEVICE_SIDE heap, not in the heap the call names; nothing freed"),
        "{}",
        run.dump()
    );
}

/// A PE that arrives late at a barrier is named in a warning (on stderr) by the others, after
/// ACLSHMEM_STALL_WARNING; the barrier then completes normally.
#[test]
fn stall_warning_names_the_late_pe_3pes() {
    let run = scenario_env("stall_warning", 3, &[("ACLSHMEM_STALL_WARNING", "1")]);
    assert!(
        run.stderr.contains("still waiting") && run.stderr.contains("PE(s) 2 have not arrived"),
        "no stall warning naming PE 2 on stderr:\n{}",
        run.dump()
    );
}

/// The same with 2 PEs (the pairwise barrier of two-member teams).
#[test]
fn stall_warning_names_the_late_pe_2pes() {
    let run = scenario_env("stall_warning", 2, &[("ACLSHMEM_STALL_WARNING", "1")]);
    assert!(
        run.stderr.contains("still waiting") && run.stderr.contains("PE(s) 1 have not arrived"),
        "no stall warning naming PE 1 on stderr:\n{}",
        run.dump()
    );
}

/// With ACLSHMEM_COLLECTIVE_TIMEOUT a collective that a PE does not reach in time fails with
/// ACLSHMEM_TIMEOUT_ERROR naming that PE, instead of hanging.
#[test]
fn collective_timeout_names_the_late_pe_3pes() {
    let run = scenario_env("stall_timeout", 3, &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "1")]);
    assert!(
        run.stderr.contains("PE(s) 2 have not arrived") && run.stderr.contains("ACLSHMEM_COLLECTIVE_TIMEOUT"),
        "the timeout does not name PE 2 on stderr:\n{}",
        run.dump()
    );
}

/// One-sided calls (puts, gets, atomics, quiet, fence) from 4 threads of every PE at once: no lost
/// update, every thread reads back what it wrote (the thread-safety note of shmem.h).
#[test]
fn threads_3pes() {
    scenario("threads", 3);
}

/// Finalize while 4 other threads of every PE keep calling puts, gets, atomics and queries (a
/// program error): finalize waits for the calls in progress and returns 0, later calls fail as
/// before init, nothing crashes, and init works again afterwards.
#[test]
fn finalize_race_3pes() {
    scenario("finalize_race", 3);
}

#[test]
fn ptr_2pes() {
    scenario("ptr", 2);
}

#[test]
fn ptr_4pes() {
    scenario("ptr", 4);
}

#[test]
fn barrier_2pes() {
    scenario("barrier", 2);
}

#[test]
fn barrier_4pes() {
    scenario("barrier", 4);
}

#[test]
fn before_after_1pe() {
    scenario("before_after", 1);
}

#[test]
fn before_after_2pes() {
    scenario("before_after", 2);
}

#[test]
fn scale_16pes() {
    scenario_env("scale", 16, &[("ACLSHMEM_LOCAL_MEM_SIZE", "4M")]);
}

#[test]
fn stray_connections_2pes() {
    scenario("stray", 2);
}

/// How a running job is ended in the crash tests.
enum Ending {
    /// `kill -9` of one PE.
    KillPe(usize),
    /// SIGINT to the launcher (Ctrl-C).
    InterruptLauncher,
}

/// Starts `hang` on 4 PEs, waits until it is initialised, ends it as `how` says and returns the
/// launcher's exit code. Asserts that the launcher exits within 10 s, that no PE survives and that
/// the job left nothing in /dev/shm.
fn end_running_job(how: Ending) -> i32 {
    const N: usize = 4;
    let prog = pe_tests();
    let pids_dir = Scratch::new("pids");
    let dir = pids_dir.path().to_str().expect("UTF-8 temp dir").to_owned();
    let args = [prog.as_os_str(), "hang".as_ref()];
    let mut job = Background::start(N, &args, &[("PE_TESTS_PID_DIR", &dir)], JOB_TIMEOUT);

    let line = job.wait_line(Duration::from_secs(30), |l| l.starts_with("JOB_ID "));
    let Some(line) = line else {
        drop(job);
        panic!("PE 0 did not print its job id within 30 s");
    };
    let job_id = line["JOB_ID ".len()..].trim().to_owned();
    assert!(
        job_id.len() == 16 && job_id.bytes().all(|b| b.is_ascii_hexdigit()),
        "odd job id {job_id:?}"
    );
    let pids: Vec<u32> = (0..N)
        .map(|pe| {
            let text = std::fs::read_to_string(pids_dir.path().join(format!("pid.{pe}")))
                .unwrap_or_else(|e| panic!("pid file of PE {pe}: {e}"));
            text.trim().parse().expect("pid")
        })
        .collect();
    for (pe, &pid) in pids.iter().enumerate() {
        assert!(process_alive(pid), "PE {pe} (pid {pid}) is not running");
    }

    let start = Instant::now();
    match how {
        Ending::KillPe(pe) => signal(pids[pe], libc::SIGKILL),
        Ending::InterruptLauncher => signal(job.child.id(), libc::SIGINT),
    }
    let status = common::wait_limited(&mut job.child, Duration::from_secs(10));
    let elapsed = start.elapsed();
    let Some(status) = status else {
        drop(job);
        panic!("aclshmrun still running 10 s after the job was ended");
    };
    let (stdout, stderr) = job.output();
    let dump = format!("--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    let code = status
        .code()
        .unwrap_or_else(|| panic!("launcher died of a signal: {status:?}\n{dump}"));
    eprintln!("launcher exited with {code} {elapsed:.1?} after the job was ended");

    // the PEs are gone (they may need a moment to be reaped)
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| process_alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive: Vec<u32> = pids.iter().copied().filter(|&p| process_alive(p)).collect();
    for &p in &alive {
        signal(p, libc::SIGKILL);
    }
    assert!(
        alive.is_empty(),
        "PEs still running after the launcher exited: {alive:?}\n{dump}"
    );

    let left = shm_leftovers(&job_id);
    assert!(left.is_empty(), "the job left /dev/shm entries: {left:?}\n{dump}");
    assert!(
        !stdout.contains("FAIL: "),
        "a PE reported a failure before the job was ended\n{dump}"
    );
    code
}

#[test]
fn killed_pe_ends_the_job() {
    let code = end_running_job(Ending::KillPe(2));
    assert_ne!(code, 0, "the launcher reported success after a PE was killed");
}

#[test]
fn ctrl_c_ends_the_job() {
    let code = end_running_job(Ending::InterruptLauncher);
    assert_eq!(code, 130, "exit status after SIGINT to the launcher");
}

/// The same with 2 PEs (the pairwise barrier of two-member teams).
#[test]
fn collective_timeout_names_the_late_pe_2pes() {
    let run = scenario_env("stall_timeout", 2, &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "1")]);
    assert!(
        run.stderr.contains("PE(s) 1 have not arrived") && run.stderr.contains("ACLSHMEM_COLLECTIVE_TIMEOUT"),
        "the timeout does not name PE 1 on stderr:\n{}",
        run.dump()
    );
}

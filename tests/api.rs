//! Single calls and init edge cases: aclshmemx_set_attr_uniqueid_args, the aclshmemx_set_attr_from_env
//! extension with every launcher family, a /dev/shm too small for the heaps, page reservation.

mod common;

use std::process::Command;
use std::time::Duration;

fn probe(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(common::compile_c("api_probe"));
    cmd.args(args);
    for v in common::JOB_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("run api_probe");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?} {env:?}: {text}");
    text
}

#[test]
fn set_attr_uniqueid_args_checks_and_fills() {
    probe(&["uid_args"], &[]);
}

#[test]
fn set_attr_from_env_reads_every_launcher_family() {
    let out = probe(
        &["from_env"],
        &[
            ("ACLSHMEM_MY_PE", "3"),
            ("ACLSHMEM_N_PES", "8"),
            ("ACLSHMEM_IP_PORT", "tcp://127.0.0.1:4000"),
        ],
    );
    assert!(
        out.contains("my_pe=3 n_pes=8 ip_port=tcp://127.0.0.1:4000 local_mem_size=134217728"),
        "{out}"
    );
    let out = probe(
        &["from_env"],
        &[
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "127.0.0.1"),
            ("MASTER_PORT", "29500"),
            ("ACLSHMEM_LOCAL_MEM_SIZE", "1G"),
        ],
    );
    assert!(
        out.contains("my_pe=1 n_pes=2 ip_port=tcp://127.0.0.1:29501 local_mem_size=1073741824"),
        "{out}"
    );
    let out = probe(
        &["from_env"],
        &[
            ("OMPI_COMM_WORLD_RANK", "5"),
            ("OMPI_COMM_WORLD_SIZE", "6"),
            ("MASTER_ADDR", "::1"),
            ("MASTER_PORT", "5000"),
        ],
    );
    assert!(out.contains("my_pe=5 n_pes=6 ip_port=tcp6://[::1]:5001"), "{out}");
    let out = probe(
        &["from_env"],
        &[
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "4"),
            ("ACLSHMEM_IP_PORT", "tcp://node0:7000"),
            ("ACLSHMEM_LOCAL_MEM_SIZE", "4096"),
        ],
    );
    assert!(
        out.contains("my_pe=0 n_pes=4 ip_port=tcp://node0:7000 local_mem_size=4096"),
        "{out}"
    );
    // failures leave the struct untouched and return the documented codes
    assert!(probe(&["from_env"], &[]).contains("rc=-1"));
    assert!(probe(&["from_env"], &[("ACLSHMEM_MY_PE", "0"), ("ACLSHMEM_N_PES", "2")]).contains("rc=-1"));
    let bad_size = [
        ("ACLSHMEM_MY_PE", "0"),
        ("ACLSHMEM_N_PES", "2"),
        ("ACLSHMEM_IP_PORT", "tcp://h:2000"),
        ("ACLSHMEM_LOCAL_MEM_SIZE", "lots"),
    ];
    assert!(probe(&["from_env"], &bad_size).contains("rc=-2"));
    assert!(probe(&["from_env"], &[("RANK", "x"), ("WORLD_SIZE", "2")]).contains("rc=-2"));
}

/// Without a rendezvous address the message names the launcher found and what is missing, and
/// under an MPI launcher the MPI init mode, which needs none (it said "no launcher" before).
#[test]
fn set_attr_from_env_names_the_missing_rendezvous_address() {
    let log = [("SHMEM_LOG_TO_STDOUT", "1")];
    let mpi = [
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        log[0],
    ];
    let out = probe(&["from_env"], &mpi);
    assert!(out.contains("rc=-1"), "{out}");
    assert!(
        out.contains("started by Open MPI as PE 1 of 2, but no rendezvous address is set")
            && out.contains("MASTER_ADDR and MASTER_PORT")
            && out.contains("ACLSHMEMX_INIT_WITH_MPI"),
        "{out}"
    );
    let torch = [("RANK", "0"), ("WORLD_SIZE", "2"), log[0]];
    let out = probe(&["from_env"], &torch);
    assert!(
        out.contains("started by torchrun as PE 0 of 2, but no rendezvous address is set")
            && !out.contains("ACLSHMEMX_INIT_WITH_MPI"),
        "{out}"
    );
}

/// An `ip_port` whose host cannot be resolved is ACLSHMEM_INVALID_PARAM (spec 8.1), not an inner
/// error.
#[test]
fn unresolvable_ip_port_host_is_invalid_param() {
    let out = probe(
        &["init_rc"],
        &[
            ("ACLSHMEM_MY_PE", "0"),
            ("ACLSHMEM_N_PES", "1"),
            ("ACLSHMEM_IP_PORT", "tcp://no-such-host.invalid:20000"),
        ],
    );
    assert!(out.contains("init_rc=-1 status=0"), "{out}");
}

#[test]
fn dev_shm_too_small_is_a_clear_init_error() {
    // two 39 GiB heaps cannot fit in the /dev/shm of a 24 GiB machine: init must say so, not SIGBUS later
    let run = common::run_pes(
        2,
        &[common::compile_c("api_probe").to_str().unwrap(), "init_rc"],
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "39G")],
        Duration::from_secs(40),
    );
    assert_eq!(run.code(), 0, "{}", run.dump());
    assert_eq!(
        run.stdout.matches("init_rc=-3 status=0").count(),
        2,
        "{}",
        run.dump()
    );
    assert!(
        run.stdout.contains("/dev/shm") && run.stdout.contains("enlarge"),
        "{}",
        run.dump()
    );
}

/// `api_probe init_rc` on 2 PEs with an 8 MiB heap, log lines on stdout, and `env`.
fn init_2pes(env: &[(&str, &str)]) -> common::Run {
    let mut all = vec![("ACLSHMEM_LOCAL_MEM_SIZE", "8M"), ("SHMEM_LOG_TO_STDOUT", "1")];
    all.extend_from_slice(env);
    common::run_pes(
        2,
        &[common::compile_c("api_probe").to_str().unwrap(), "init_rc"],
        &all,
        Duration::from_secs(40),
    )
}

/// Asserts that `text` is on a 2-PE run's stdout once per PE.
fn on_both_pes(run: &common::Run, text: &str) {
    assert_eq!(run.stdout.matches(text).count(), 2, "{text}\n{}", run.dump());
}

/// `ACLSHMEM_SHM_DIR` naming a directory whose space cannot be read fails init naming it (the
/// space check was skipped without a word).
#[test]
fn an_unreadable_shm_dir_is_named() {
    let run = init_2pes(&[("ACLSHMEM_SHM_DIR", "/nonexistent-aclshmem-dir")]);
    on_both_pes(&run, "init_rc=-2 status=0");
    assert!(
        run.stdout
            .contains("ACLSHMEM_SHM_DIR=\"/nonexistent-aclshmem-dir\""),
        "{}",
        run.dump()
    );
}

/// Settings that choose how PEs work with each other must be the same on every PE: PEs that
/// differ fail init together, naming the variable (different reduction algorithms returned wrong
/// data with rc 0; a transport set on one PE failed with unreadable messages; direct access set on
/// one PE hung the first barrier).
#[test]
fn settings_that_differ_between_pes_fail_init_naming_them() {
    let probe = common::compile_c("api_probe");
    for (var, v0, v1) in [
        ("ACLSHMEM_REDUCE_ALGO", "direct", "scatter"),
        ("ACLSHMEM_TRANSPORT", "ucx", "auto"),
        ("ACLSHMEM_DIRECT_ACCESS", "0", "1"),
        ("ACLSHMEM_OSHMEM_SYMMETRIC_DATA", "0", "1"),
    ] {
        let script = format!(
            "if [ \"$ACLSHMEM_MY_PE\" = 0 ]; then export {var}={v0}; else export {var}={v1}; fi; exec {} init_rc",
            probe.display()
        );
        let run = common::run_pes(
            2,
            &["sh", "-c", &script],
            &[("ACLSHMEM_LOCAL_MEM_SIZE", "8M"), ("SHMEM_LOG_TO_STDOUT", "1")],
            Duration::from_secs(40),
        );
        assert_eq!(
            run.stdout.matches("init_rc=-1 status=0").count(),
            2,
            "{var}\n{}",
            run.dump()
        );
        assert_eq!(
            run.stdout.matches(&format!("{var} differs between PEs")).count(),
            2,
            "{var}\n{}",
            run.dump()
        );
    }
    // the same setting written two ways is the same
    let script = format!(
        "if [ \"$ACLSHMEM_MY_PE\" = 0 ]; then export ACLSHMEM_DIRECT_ACCESS=1; else export ACLSHMEM_DIRECT_ACCESS=true; fi; exec {} init_rc",
        probe.display()
    );
    let run = common::run_pes(
        2,
        &["sh", "-c", &script],
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "8M")],
        Duration::from_secs(40),
    );
    assert_eq!(
        run.stdout.matches("init_rc=0 status=2").count(),
        2,
        "{}",
        run.dump()
    );
}

/// A malformed setting fails init with `ACLSHMEM_INVALID_VALUE` (-2) on every PE, naming it,
/// wherever it is read: the UCX transport's settings were reported as `ACLSHMEM_NOT_SUPPORTED`
/// (-100), as if UCX were missing, and the heap's as `ACLSHMEM_SMEM_ERROR` (-3). Set on one PE
/// only, the other PE fails alike, naming the PE (a UCX setting read after the transport's
/// exchange once left the other PE waiting in init's next one, and the test's 40 s timeout
/// ended the job).
#[test]
fn a_malformed_setting_fails_init_as_an_invalid_value() {
    let probe = common::compile_c("api_probe");
    for (var, value, only_pe1) in [
        ("ACLSHMEM_UCX_TIMEOUT", "soon", false),
        ("ACLSHMEM_UCX_PROGRESS_THREAD", "maybe", true),
        ("ACLSHMEM_HEAP_SAME_ADDRESS", "perhaps", true),
    ] {
        let script = format!(
            "if [ \"$ACLSHMEM_MY_PE\" = 1 ] || [ {only_pe1} = false ]; then export {var}={value}; fi; exec {} init_rc",
            probe.display()
        );
        let run = common::run_pes(
            2,
            &["sh", "-c", &script],
            &[
                ("ACLSHMEM_LOCAL_MEM_SIZE", "8M"),
                ("ACLSHMEM_TRANSPORT", "ucx"),
                ("UCX_TLS", "tcp"),
                ("SHMEM_LOG_TO_STDOUT", "1"),
            ],
            Duration::from_secs(40),
        );
        on_both_pes(&run, "init_rc=-2 status=0");
        on_both_pes(&run, &format!("{var}=\"{value}\""));
        if only_pe1 {
            assert!(run.stdout.contains("PE 1: "), "{var}\n{}", run.dump());
        }
    }
}

/// A `SHMEM_LOG_LEVEL` that names no level (lower case, say) is ignored as the original does,
/// and now said so once per PE (it was silent); a malformed `ACLSHMEM_INFO` too.
#[test]
fn a_log_level_that_names_no_level_is_named() {
    let run = init_2pes(&[("SHMEM_LOG_LEVEL", "debug")]);
    on_both_pes(&run, "init_rc=0 status=2");
    on_both_pes(&run, "SHMEM_LOG_LEVEL=\"debug\": expected one of DEBUG");
    // a malformed ACLSHMEM_INFO prints no table and says so (it was a warning, which init's
    // ERROR level hid)
    let run = init_2pes(&[("ACLSHMEM_INFO", "verbose")]);
    on_both_pes(&run, "init_rc=0 status=2");
    on_both_pes(&run, "ACLSHMEM_INFO=\"verbose\": expected a boolean");
}

/// A heartbeat timeout below its 2 s minimum is raised to it, with a warning (it was silent).
#[test]
fn a_heartbeat_timeout_below_the_minimum_is_named() {
    let run = init_2pes(&[
        ("ACLSHMEM_HEARTBEAT_TIMEOUT", "500ms"),
        ("SHMEM_LOG_LEVEL", "WARN"),
    ]);
    on_both_pes(&run, "init_rc=0 status=2");
    assert!(
        run.stdout
            .contains("ACLSHMEM_HEARTBEAT_TIMEOUT=500ms is below its minimum: 2s is used"),
        "{}",
        run.dump()
    );
}

#[test]
fn preallocated_heaps_work() {
    let run = common::run_pes(
        2,
        &[common::compile_c("api_probe").to_str().unwrap(), "init_rc"],
        &[
            ("ACLSHMEM_LOCAL_MEM_SIZE", "8M"),
            ("ACLSHMEM_SHM_PREALLOCATE", "1"),
        ],
        Duration::from_secs(40),
    );
    assert_eq!(run.code(), 0, "{}", run.dump());
    assert_eq!(
        run.stdout.matches("init_rc=0 status=2").count(),
        2,
        "{}",
        run.dump()
    );
}

/// The library exports `g_state` and `g_state_host` (the original's host copies of its state
/// records, which its own host programs read). A program that defines globals of those names for
/// its own purposes takes the library's references over (the dynamic linker's interposition): init,
/// team changes and finalize must leave them alone rather than write the records into them.
#[test]
fn programs_own_globals_named_g_state_are_left_alone() {
    let prog = common::compile_c("g_state_clash");
    let run = common::run_pes(2, &[prog.to_str().unwrap()], &[], Duration::from_secs(60));
    assert_eq!(run.code(), 0, "{}", run.dump());
    assert_eq!(
        run.stdout.matches("OK g_state_clash").count(),
        2,
        "{}",
        run.dump()
    );
}

//! Logging contract (spec 8.8, 10): extern logger, levels, SHMEM_LOG_LEVEL, SHMEM_LOG_TO_STDOUT,
//! SHMEM_LOG_PATH. Each case runs the C probe in its own process (the logger is process-global).

mod common;

use std::process::Command;

fn probe(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let bin = common::compile_c("log_probe");
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_remove("SHMEM_LOG_LEVEL")
        .env_remove("SHMEM_LOG_TO_STDOUT")
        .env_remove("SHMEM_LOG_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run log_probe")
}

#[test]
fn extern_logger_gets_every_message_and_first_wins() {
    let out = probe(&["extern"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "nothing may go to stdout with an extern logger"
    );
}

#[test]
fn set_log_level_accepts_0_to_4() {
    assert_eq!(probe(&["levels"], &[]).status.code(), Some(0));
}

#[test]
fn stdout_sink_and_level_threshold() {
    let out = probe(&["error", "3"], &[("SHMEM_LOG_TO_STDOUT", "1")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text.contains(" error ") && text.contains("aclshmem_malloc") && text.contains("pid["),
        "{text}"
    );
    // threshold FATAL hides the error
    let out = probe(&["error", "4"], &[("SHMEM_LOG_TO_STDOUT", "1")]);
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    // SHMEM_LOG_LEVEL wins over the program's level
    let out = probe(
        &["error", "4"],
        &[("SHMEM_LOG_TO_STDOUT", "1"), ("SHMEM_LOG_LEVEL", "ERROR")],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("aclshmem_malloc"));
}

#[test]
fn file_sink_in_shmem_log_path() {
    let dir = std::env::temp_dir().join(format!("aclshmem-logdir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = probe(&["error", "3"], &[("SHMEM_LOG_PATH", dir.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("log dir created")
        .flatten()
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one log file (none is written while the file system has 10 GiB or less available)"
    );
    let name = files[0].file_name().to_string_lossy().into_owned();
    assert!(name.starts_with("aclshmem_") && name.ends_with(".log"), "{name}");
    // created 0640, made read-only when the process ended (spec 10, log file details)
    use std::os::unix::fs::PermissionsExt;
    let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o440, "log file mode {mode:o}");
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(
        text.contains("aclshmem_malloc") && text.contains("not initialised"),
        "{text}"
    );
    // no message, no file
    let quiet = dir.join("quiet");
    probe(&["error", "4"], &[("SHMEM_LOG_PATH", quiet.to_str().unwrap())]);
    assert!(!quiet.exists() || std::fs::read_dir(&quiet).unwrap().next().is_none());
    // a directory others may write to gets no file (file logging is off)
    let open = dir.join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = probe(&["error", "3"], &[("SHMEM_LOG_PATH", open.to_str().unwrap())]);
    assert!(std::fs::read_dir(&open).unwrap().next().is_none());
    // ... and its errors reach stderr (they were lost), as those of a directory on a file system
    // with no room (/proc has none available: nothing may be written there)
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("aclshmem_malloc"),
        "{out:?}"
    );
    let out = probe(
        &["error", "3"],
        &[("SHMEM_LOG_PATH", "/proc/aclshmem-no-such-dir")],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("aclshmem_malloc"),
        "{out:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tests/c/logger_threads.c`: the library's own threads (config store, its watcher, the network
/// transport's progress, the drive helper) never call the extern logger themselves, so a logger
/// that takes a lock a program thread holds across library calls (a Python logger and the
/// interpreter's lock) cannot stop both: their messages go through a relay thread. The global
/// exit makes every watcher (and PE 0's store) log while the program threads hold that lock.
#[test]
fn library_threads_never_call_the_extern_logger_themselves() {
    let bin = common::compile_c("logger_threads");
    for transport in ["auto", "ucx"] {
        let env = [("ACLSHMEM_TRANSPORT", transport), ("UCX_TLS", "tcp")];
        let timeout = std::time::Duration::from_secs(60);
        common::run_pes(3, &[bin.as_os_str(), "relay".as_ref()], &env, timeout).assert_ok("relay");
        let run = common::run_pes(3, &[bin.as_os_str(), "global_exit".as_ref()], &env, timeout);
        assert_eq!(run.code(), 5, "{transport}: {}", run.dump());
        assert!(
            run.failures().is_empty() && !run.stdout.contains("FAIL"),
            "{transport}: {}",
            run.dump()
        );
        assert!(
            run.elapsed < std::time::Duration::from_secs(20),
            "{transport}: {}",
            run.dump()
        );
    }
}

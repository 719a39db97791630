//! Shared helpers of the multi-PE integration tests: building the C test programs of `tests/c/`
//! against `libaclshmem.so`, and running them under `aclshmrun` with a hard time limit.
#![allow(dead_code)]

pub mod kernel_build;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// Launcher-style variables that could leak in from the environment running the tests (removed
/// where a test sets its own).
pub const JOB_VARS: &[&str] = &[
    "ACLSHMEM_MY_PE",
    "ACLSHMEM_N_PES",
    "ACLSHMEM_IP_PORT",
    "ACLSHMEM_LOCAL_MEM_SIZE",
    "RANK",
    "WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
];

/// The launcher (crate `crates/launcher`), built by [`ensure_built`] next to the library.
pub fn launcher() -> PathBuf {
    ensure_built();
    profile_dir().join("aclshmrun")
}

/// Extra time the harness grants a launcher beyond its own `--timeout` before killing it.
const GRACE: Duration = Duration::from_secs(10);

/// Reports that `test` cannot run its real check here. Loud: printed on stderr with `SKIPPED`, and
/// a failure when `ACLSHMEM_REQUIRE_ALL_TESTS=1` (what `scripts/test-all.sh`, and so CI, sets), so a
/// machine that silently lost a capability cannot pass CI.
pub fn skip(test: &str, why: &str) {
    let msg = format!("{test}: SKIPPED: {why}");
    if std::env::var("ACLSHMEM_REQUIRE_ALL_TESTS").is_ok_and(|v| v == "1") {
        panic!("{msg} (ACLSHMEM_REQUIRE_ALL_TESTS=1 forbids skips)");
    }
    eprintln!("{msg}");
}

/// A loopback port `base` with `base..=base + 3` free now, for SHMEM_INSTANCE_PORT_RANGE.
pub fn free_port_range() -> u16 {
    for _ in 0..200 {
        let base = candidate_port();
        if (0..4).all(|k| std::net::TcpListener::bind(("127.0.0.1", base + k)).is_ok()) {
            return base;
        }
    }
    panic!("no free port range");
}

/// A free loopback port a job's process will listen on later (see [`candidate_port`]).
#[allow(dead_code)]
pub fn free_port() -> u16 {
    free_port_range()
}

/// A random port below the kernel's ephemeral range (`ip_local_port_range`), so no outgoing
/// connection of another job takes it between the check and the listen, as aclshmrun picks them.
fn candidate_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let span = u64::from(low.saturating_sub(11024 + 4).max(1));
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id() as u64);
    11024 + (h.finish() % span) as u16
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `<target>/<profile>`: integration test binaries live in `<target>/<profile>/deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary outside <target>/<profile>/deps")
        .to_path_buf()
}

/// The cargo target directory.
pub fn target_dir() -> PathBuf {
    profile_dir()
        .parent()
        .expect("profile directory has a parent")
        .to_path_buf()
}

/// `cargo test` does not refresh `<target>/<profile>/libaclshmem.so`; the C programs load it,
/// libascendcl.so and the launcher binary, so build them once per test process (a no-op when they
/// are current).
pub fn ensure_built() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        // the units `cargo test --workspace --all-targets` builds, and scripts/test-all.sh's build
        // step: another selection resolves dependency features differently, and every switch
        // between two of them rebuilds the library (its cdylib has no hash in its file name) and
        // relinks every test binary
        cmd.args(["build", "--quiet", "--workspace", "--all-targets"])
            .current_dir(repo_root());
        // nor what `cargo test` sets for this test process (CARGO_MANIFEST_DIR, CARGO_PKG_NAME,
        // OUT_DIR, ...): build scripts name such variables in `rerun-if-env-changed` (ring's does),
        // so a build inheriting them reruns those scripts and relinks the library and every test
        // (25 s each time), and so does the next build without them
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            if is_set_by_cargo_for_crates(key) {
                cmd.env_remove(key);
            }
        }
        if profile_dir().file_name().is_some_and(|p| p == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build --workspace --all-targets failed");
    });
}

/// The environment variables cargo sets for the crates it compiles, runs or tests (not those that
/// configure cargo itself, such as CARGO_HOME, CARGO_TARGET_DIR or CARGO_BUILD_*).
fn is_set_by_cargo_for_crates(key: &str) -> bool {
    const NAMES: &[&str] = &[
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    NAMES.contains(&key) || key.starts_with("CARGO_PKG_") || key.starts_with("CARGO_BIN_EXE_")
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The programs of `tests/c` that call the ACL runtime (linked with `-lascendcl`).
const ACL_PROGRAMS: &[&str] = &["stream_tests", "user_buffers"];

/// Compiles `tests/c/<name>.c` into `<target>/ctests/<name>` (only when the source or the header
/// is newer than the binary) and returns the binary's path.
///
/// Safe against parallel tests: one compilation at a time inside this process, and the compiler
/// writes a private temporary file that is renamed into place, so another process never sees a
/// half-written binary.
pub fn compile_c(name: &str) -> PathBuf {
    // programs that call the ACL runtime are linked with the CPU libascendcl too (tests/streams.rs
    // builds the same program, with the same flags, under the same name)
    let with_acl = ACL_PROGRAMS.contains(&name);
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());

    let root = repo_root();
    let src = root.join("tests/c").join(format!("{name}.c"));
    let header = root.join("include/shmem.h");
    let lib_dir = profile_dir();
    ensure_built();
    assert!(
        lib_dir.join("libaclshmem.so").exists(),
        "{} missing: run `cargo build` first",
        lib_dir.join("libaclshmem.so").display()
    );
    let out_dir = target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).expect("create <target>/ctests");
    let out = out_dir.join(name);

    let newest_input = [
        mtime(&src),
        mtime(&header),
        mtime(&root.join("tests/c/test_util.h")),
        mtime(&root.join("tests/c/peer_util.h")),
    ]
    .into_iter()
    .flatten()
    .max()
    .expect("C source missing");
    // the program records the library directory it was linked against (its rpath): a target
    // directory copied from another checkout must not keep testing that checkout's library
    let stamp = out_dir.join(format!(".{name}.libdir"));
    let linked_here = std::fs::read_to_string(&stamp).is_ok_and(|d| Path::new(&d) == lib_dir);
    if linked_here && mtime(&out).is_some_and(|built| built >= newest_input) {
        return out;
    }

    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let tmp = out_dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let output = Command::new("gcc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-laclshmem")
        .args(with_acl.then_some("-lascendcl"))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .expect("run gcc");
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        panic!(
            "compiling {} failed:\n{}{}",
            src.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::rename(&tmp, &out).expect("move the compiled test program into place");
    std::fs::write(&stamp, lib_dir.to_string_lossy().as_bytes()).expect("write the library stamp");
    out
}

/// One finished launcher run.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// The exit code (a launcher killed by a signal fails the test).
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("launcher killed by a signal: {:?}\n{}", self.status, self.dump()))
    }

    /// Everything the job printed, for failure messages.
    pub fn dump(&self) -> String {
        format!(
            "--- exit: {:?} after {:.1?}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }

    /// The `FAIL: ...` lines the C program printed.
    pub fn failures(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|l| l.contains("FAIL: "))
            .collect()
    }

    /// Asserts that the scenario passed: exit 0, `OK <scenario>` printed, no `FAIL:` line.
    pub fn assert_ok(&self, scenario: &str) {
        let failures = self.failures();
        assert!(
            failures.is_empty() && self.code() == 0,
            "scenario {scenario} failed:\n{}\n{}",
            failures.join("\n"),
            self.dump()
        );
        let ok = format!("OK {scenario}");
        assert!(
            self.stdout.lines().any(|l| l.trim_end().ends_with(&ok)),
            "scenario {scenario}: no `{ok}` line\n{}",
            self.dump()
        );
    }
}

/// The launcher command for `n` PEs running `args` (program first), with its own `--timeout` and
/// a clean environment: no inherited job identity, logs on stdout, 16 MiB heaps unless `env`
/// says otherwise.
pub fn launcher_command<S: AsRef<OsStr>>(
    n: usize,
    args: &[S],
    env: &[(&str, &str)],
    timeout: Duration,
) -> Command {
    let mut cmd = Command::new(launcher());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg("--timeout")
        .arg(timeout.as_secs().max(1).to_string())
        .args(args);
    for var in [
        "ACLSHMEM_MY_PE",
        "ACLSHMEM_N_PES",
        "ACLSHMEM_IP_PORT",
        "ACLSHMEM_JOB_TOKEN",
        "ACLSHMEM_JOB_ID",
        "ACLSHMEM_LOCAL_PE",
        "ACLSHMEM_LOCAL_N_PES",
        "SHMEM_LOG_LEVEL",
        "SHMEM_LOG_PATH",
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("SHMEM_LOG_TO_STDOUT", "1")
        .env("ACLSHMEM_LOCAL_MEM_SIZE", "16M");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn collect<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
    let mut pipe = pipe.expect("piped");
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Sends `sig` to `pid` (ignoring errors: the process may be gone).
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Stops a launcher that overstayed: SIGTERM (it then kills its PEs), SIGKILL after 3 s.
pub fn stop_launcher(child: &mut Child) {
    signal(child.id(), libc::SIGTERM);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits for `child` at most `limit`; `None` if it is still running.
pub fn wait_limited(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if start.elapsed() >= limit {
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `args` (program and its arguments) on `n` PEs under `aclshmrun --timeout <timeout>` and
/// returns the exit status and the captured output. The harness kills the launcher, and fails the
/// test, if it is still running 10 s after its own timeout.
pub fn run_pes<S: AsRef<OsStr>>(n: usize, args: &[S], env: &[(&str, &str)], timeout: Duration) -> Run {
    let start = Instant::now();
    let mut child = launcher_command(n, args, env, timeout)
        .spawn()
        .expect("start aclshmrun");
    let out = collect(child.stdout.take());
    let err = collect(child.stderr.take());
    let status = match wait_limited(&mut child, timeout + GRACE) {
        Some(s) => s,
        None => {
            stop_launcher(&mut child);
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            panic!(
                "aclshmrun still running {:?} after its --timeout of {timeout:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}",
                GRACE
            );
        }
    };
    let elapsed = start.elapsed();
    Run {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed,
    }
}

/// A launcher started in the background, its stdout delivered line by line.
pub struct Background {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
    stdout_seen: Vec<String>,
    stderr: Option<thread::JoinHandle<String>>,
}

impl Background {
    pub fn start<S: AsRef<OsStr>>(
        n: usize,
        args: &[S],
        env: &[(&str, &str)],
        timeout: Duration,
    ) -> Background {
        let mut child = launcher_command(n, args, env, timeout)
            .spawn()
            .expect("start aclshmrun");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = collect(child.stderr.take());
        Background {
            child,
            lines: rx,
            stdout_seen: Vec::new(),
            stderr: Some(stderr),
        }
    }

    /// Waits (at most `limit`) for a stdout line satisfying `pred` and returns it.
    pub fn wait_line(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = pred(&line);
                    self.stdout_seen.push(line.clone());
                    if hit {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Everything read so far (plus whatever is still buffered) and the launcher's stderr; call
    /// only once the launcher has exited.
    pub fn output(mut self) -> (String, String) {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.stdout_seen.push(line);
        }
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (std::mem::take(&mut self.stdout_seen).join("\n"), stderr)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            stop_launcher(&mut self.child);
        }
    }
}

/// A private scratch directory, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "aclshmem-multi-pe-{}-{tag}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch directory");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True while `pid` exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // the state follows the parenthesised command name
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Entries of /dev/shm belonging to the job `job_id` (`aclshmem-<user>-<job_id>-*`).
pub fn shm_leftovers(job_id: &str) -> Vec<String> {
    let needle = format!("-{job_id}-");
    std::fs::read_dir("/dev/shm")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("aclshmem-") && n.contains(&needle))
                .collect()
        })
        .unwrap_or_default()
}

const GIB: u64 = 1 << 30;

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes an unprivileged process may still allocate in /dev/shm.
fn shm_free() -> Option<u64> {
    let path = c"/dev/shm";
    // SAFETY: statvfs is plain data; all-zero bytes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs(3) writes into the struct we own; the path is NUL-terminated.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Why the 4 GiB scenario of `rma_tests` (`large`) cannot run here, if it cannot: two PEs each hold
/// a 4 GiB + 4 KiB copy (plus heap overhead) in /dev/shm, i.e. about 8.4 GiB of RAM.
pub fn large_heaps_blocker() -> Option<String> {
    let avail = mem_available();
    let shm = shm_free();
    match (avail, shm) {
        (Some(a), Some(s)) if a >= 12 * GIB && s >= 10 * GIB => None,
        _ => Some(format!(
            "needs MemAvailable >= 12 GiB and /dev/shm free >= 10 GiB, have {} and {}",
            avail.map_or("unknown".into(), |a| format!("{:.1} GiB", a as f64 / GIB as f64)),
            shm.map_or("unknown".into(), |s| format!("{:.1} GiB", s as f64 / GIB as f64)),
        )),
    }
}

/// Whether this process may make a private mount namespace (`unshare -m`, needs root).
pub fn can_unshare() -> bool {
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether UCX's `libucp` is installed (the network transport's engine).
pub fn ucx_installed() -> bool {
    Command::new("sh")
        .args(["-c", "ldconfig -p | grep -q 'libucp.so'"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `prog` on `n` PEs under `aclshmrun` in a private mount namespace whose `/dev/shm` is a
/// 64 MiB tmpfs (Docker's default size), so filling it disturbs nothing else; `set` and `unset`
/// change the environment. Returns the exit code and stdout + stderr.
pub fn run_in_small_dev_shm(prog: &Path, n: usize, set: &[(&str, &str)], unset: &[&str]) -> (i32, String) {
    let script = format!(
        "mount -t tmpfs -o size=64m tmpfs /dev/shm && exec {} -n {n} --timeout 60 {}",
        launcher().display(),
        prog.display()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env_remove("ACLSHMEM_JOB_TOKEN")
        .env_remove("ACLSHMEM_IP_PORT")
        .env("SHMEM_LOG_TO_STDOUT", "1");
    for var in unset {
        cmd.env_remove(var);
    }
    for (k, v) in set {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run unshare");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

//! Stream-ordered calls (spec 7, 8.3.6, 8.3.8, 8.4, 8.5.1, 8.6, 8.8): real PE processes started by
//! `aclshmrun`, each running one scenario of `tests/c/stream_tests.c`, a program written the way
//! CANN SHMEM host programs are (aclInit, aclrtSetDevice, aclrtCreateStream, aclshmemx_init_attr,
//! on-stream calls, aclrtSynchronizeStream, finalize, aclrtDestroyStream, aclrtResetDevice,
//! aclFinalize) and linked with both libaclshmem and the CPU ACL runtime libascendcl. The `inline`
//! scenario is the same source built without libascendcl: no ACL runtime in the process, so the
//! on-stream calls run inline.
//!
//! Every run has the launcher's own `--timeout` and a harness-side limit on top.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use common::{Run, run_pes};

/// The launcher's `--timeout` for every job (each takes a second or two alone).
const JOB_TIMEOUT: Duration = Duration::from_secs(45);

/// Heap size of every scenario (the ring's NULL-stream variant moves 4 MiB blocks).
const MEM: (&str, &str) = ("ACLSHMEM_LOCAL_MEM_SIZE", "32M");

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Compiles `tests/c/stream_tests.c` into `<target>/ctests/<out_name>`: with the ACL runtime
/// (`-laclshmem -lascendcl`) or without it (`-DSTREAM_TESTS_NO_ACL`, `-laclshmem` only). Recompiles
/// only when the source or a header is newer than the binary; the compiler writes a private
/// temporary file that is renamed into place.
fn compile(out_name: &str, with_acl: bool) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());

    let root = common::repo_root();
    let src = root.join("tests/c/stream_tests.c");
    let lib_dir = common::profile_dir();
    common::ensure_built();
    for lib in ["libaclshmem.so", "libascendcl.so"] {
        assert!(
            lib_dir.join(lib).exists(),
            "{} missing after cargo build --workspace",
            lib_dir.join(lib).display()
        );
    }
    let out_dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).expect("create <target>/ctests");
    let out = out_dir.join(out_name);

    let inputs = [
        src.clone(),
        root.join("tests/c/test_util.h"),
        root.join("include/shmem.h"),
        root.join("include/acl/acl.h"),
        root.join("include/acl/acl_rt.h"),
        root.join("include/acl/acl_base.h"),
        root.join("include/acl/acl_base_rt.h"),
        lib_dir.join("libaclshmem.so"),
        lib_dir.join("libascendcl.so"),
    ];
    let newest_input = inputs
        .iter()
        .filter_map(|p| mtime(p))
        .max()
        .expect("C source missing");
    // rebuilt when linked against another checkout's library (a copied target directory)
    let stamp = out_dir.join(format!(".{out_name}.libdir"));
    let linked_here = std::fs::read_to_string(&stamp).is_ok_and(|d| Path::new(&d) == lib_dir);
    if linked_here && mtime(&out).is_some_and(|built| built >= newest_input) {
        return out;
    }

    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let tmp = out_dir.join(format!(
        ".{out_name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root.join("include").display()));
    if !with_acl {
        cmd.arg("-DSTREAM_TESTS_NO_ACL");
    }
    cmd.arg(&src)
        .arg("-o")
        .arg(&tmp)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-laclshmem");
    if with_acl {
        cmd.arg("-lascendcl");
    }
    let output = cmd
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

/// The program linked with libascendcl.
fn stream_tests() -> PathBuf {
    compile("stream_tests", true)
}

/// The same source without libascendcl (only the `inline` scenario).
fn stream_tests_inline() -> PathBuf {
    compile("stream_tests_inline", false)
}

/// Runs `scenario` of `prog` on `n` PEs (32 MiB heaps plus `env`), every output line tagged with
/// `[pe i] `, without judging the result.
fn run_with(prog: &Path, scenario: &str, n: usize, env: &[(&str, &str)]) -> Run {
    let args = ["--tag-output".as_ref(), prog.as_os_str(), scenario.as_ref()];
    let mut all = vec![MEM];
    all.extend_from_slice(env);
    run_pes(n, &args, &all, JOB_TIMEOUT)
}

/// Runs `scenario` on `n` PEs and asserts it passed.
fn scenario(name: &str, n: usize) -> Run {
    let run = run_with(&stream_tests(), name, n, &[]);
    run.assert_ok(name);
    run
}

/// The lines PE `pe` printed (stdout), without the tag.
fn pe_lines(run: &Run, pe: usize) -> Vec<&str> {
    let tag = format!("[pe {pe}] ");
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix(tag.as_str()))
        .collect()
}

/// Index of the first line equal to `MARK <what>`.
fn mark_at(lines: &[&str], what: &str, run: &Run) -> usize {
    let mark = format!("MARK {what}");
    lines
        .iter()
        .position(|l| l.trim_end() == mark)
        .unwrap_or_else(|| panic!("no `{mark}` line\n{}", run.dump()))
}

/// A parsed error line of the library's log: `<date> <time> error <tid> pid[<pid>] ... <call>: ...`.
struct ErrorLine<'a> {
    index: usize,
    tid: u64,
    pid: u64,
    text: &'a str,
}

/// Error lines among `lines` whose message names `call` (`<call>: `).
fn error_lines<'a>(lines: &[&'a str], call: &str) -> Vec<ErrorLine<'a>> {
    let needle = format!("{call}: ");
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(" error ") && l.contains(&needle))
        .filter_map(|(index, l)| {
            let mut words = l.split_whitespace();
            // date, time, level, tid, pid[...]
            let (_, _, level, tid, pid) = (
                words.next()?,
                words.next()?,
                words.next()?,
                words.next()?,
                words.next()?,
            );
            (level == "error").then_some(())?;
            let tid = tid.parse().ok()?;
            let pid = pid.strip_prefix("pid[")?.strip_suffix(']')?.parse().ok()?;
            Some(ErrorLine {
                index,
                tid,
                pid,
                text: l,
            })
        })
        .collect()
}

#[test]
fn ring_2pes() {
    scenario("ring", 2);
}

#[test]
fn ring_4pes() {
    scenario("ring", 4);
}

#[test]
fn wait_before_put_2pes() {
    scenario("wait_before_put", 2);
}

#[test]
fn wait_before_put_3pes() {
    // PE 2 only takes part in the barriers
    scenario("wait_before_put", 3);
}

#[test]
fn phases_4pes() {
    scenario("phases", 4);
}

#[test]
fn phases_3pes() {
    // evens {0, 2}, odds {1}: a one-member team too
    scenario("phases", 3);
}

#[test]
fn many_streams_4pes() {
    scenario("many_streams", 4);
}

#[test]
fn destroy_pending_2pes() {
    scenario("destroy_pending", 2);
}

#[test]
fn destroy_pending_3pes() {
    scenario("destroy_pending", 3);
}

/// Finalize with work still queued on the program's stream: the work runs on the instance it was
/// queued on before finalize releases it (the stream reports no error, the data arrived).
#[test]
fn finalize_pending_2pes() {
    scenario("finalize_pending", 2);
}

#[test]
fn finalize_pending_4pes() {
    scenario("finalize_pending", 4);
}

/// Operations queued while instance 0 is current run on instance 0 after a switch to instance 1.
#[test]
fn ctx_switch_2pes() {
    let base = common::free_port_range();
    let range = format!("{base}:{}", base + 3);
    run_with(
        &stream_tests(),
        "ctx_switch",
        2,
        &[("SHMEM_INSTANCE_PORT_RANGE", range.as_str())],
    )
    .assert_ok("ctx_switch");
}

/// Put-with-signal to oneself with the signal word in aclrtMalloc memory, as the original's tests
/// do: accepted exactly then (live device memory, target = caller).
#[test]
fn self_signal_device_2pes() {
    scenario("self_signal_device", 2);
}

#[test]
fn sync_timeout_2pes() {
    let run = scenario("sync_timeout", 2);
    assert!(
        run.elapsed < Duration::from_secs(30),
        "sync_timeout took {:?}\n{}",
        run.elapsed,
        run.dump()
    );
}

#[test]
fn errors_2pes() {
    let run = scenario("errors", 2);
    for pe in 0..2 {
        let lines = pe_lines(&run, pe);
        let ctx = |what: &str| format!("pe {pe}: {what}\n{}", run.dump());

        // before init: every call refused and logged at call time (before the marker)
        let before_init = mark_at(&lines, "before_init_done", &run);
        for call in [
            "aclshmemx_putmem_on_stream",
            "aclshmemx_getmem_on_stream",
            "aclshmemx_quiet_on_stream",
            "aclshmemx_signal_op_on_stream",
            "aclshmemx_signal_wait_until_on_stream",
            "aclshmemx_barrier_all_on_stream",
            "aclshmemx_barrier_on_stream",
            "aclshmemx_handle_wait",
        ] {
            assert!(
                error_lines(&lines, call)
                    .iter()
                    .any(|e| e.index < before_init && e.tid == e.pid),
                "{}",
                ctx(&format!(
                    "no error line from the calling thread names {call} before init"
                ))
            );
        }

        // out-of-heap put/get and bad PE: logged by the stream (not the calling thread) when it ran
        let put_done = mark_at(&lines, "put_error_done", &run);
        let get_done = mark_at(&lines, "get_error_done", &run);
        let put_errors = error_lines(&lines, "aclshmemx_putmem_on_stream");
        assert!(
            put_errors.iter().any(|e| e.index > before_init
                && e.index < put_done
                && e.tid != e.pid
                && e.text.contains("symmetric heap")),
            "{}",
            ctx("no error line from the stream names aclshmemx_putmem_on_stream and the heap")
        );
        assert!(
            error_lines(&lines, "aclshmemx_getmem_on_stream")
                .iter()
                .any(|e| e.index > put_done && e.index < get_done && e.tid != e.pid),
            "{}",
            ctx("no error line from the stream names aclshmemx_getmem_on_stream")
        );
        assert!(
            put_errors
                .iter()
                .filter(|e| e.index > get_done && e.tid != e.pid)
                .count()
                >= 2,
            "{}",
            ctx("the two puts to PEs out of range were not both logged")
        );

        // bad sig_op / cmp: logged by the calling thread before the call returned
        let sig_op_returned = mark_at(&lines, "bad_sig_op_returned", &run);
        let cmp_returned = mark_at(&lines, "bad_cmp_returned", &run);
        assert!(
            error_lines(&lines, "aclshmemx_signal_op_on_stream")
                .iter()
                .any(|e| e.index > get_done
                    && e.index < sig_op_returned
                    && e.tid == e.pid
                    && e.text.contains("sig_op")),
            "{}",
            ctx("bad sig_op not logged at call time")
        );
        assert!(
            error_lines(&lines, "aclshmemx_signal_wait_until_on_stream")
                .iter()
                .any(|e| e.index > sig_op_returned
                    && e.index < cmp_returned
                    && e.tid == e.pid
                    && e.text.contains("cmp")),
            "{}",
            ctx("bad cmp not logged at call time")
        );
    }
}

#[test]
fn prof_2pes() {
    let run = run_with(&stream_tests(), "prof", 2, &[("SHMEM_CYCLE_PROF_PE", "0")]);
    run.assert_ok("prof");
    const HEADER: &str = "BlockID FrameID Cycles Count AvgTime(us)";

    // PE 1 is not profiled: prints no table
    let pe1 = pe_lines(&run, 1);
    assert!(
        !pe1.iter().any(|l| l.contains("BlockID")),
        "PE 1 printed a profiling table\n{}",
        run.dump()
    );

    // PE 0: get_prof(NULL, true) and show_prof each print the header and one row per used frame
    let pe0 = pe_lines(&run, 0);
    let begin = mark_at(&pe0, "verbose_begin", &run);
    let show = mark_at(&pe0, "show_prof", &run);
    let end = mark_at(&pe0, "verbose_end", &run);
    for (what, range) in [
        ("get_prof(NULL, true)", begin + 1..show),
        ("show_prof", show + 1..end),
    ] {
        let part = &pe0[range];
        assert_eq!(
            part.iter().filter(|l| l.trim_end() == HEADER).count(),
            1,
            "{what}: expected one table header\n{}",
            run.dump()
        );
        // frame -> count: 4 puts, 2 gets, 1 quiet, 1 signal, 1 signal wait, 3 barriers, 1 handle wait
        let mut rows = std::collections::BTreeMap::new();
        for l in part.iter().filter(|l| l.trim_end() != HEADER) {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 5, "{what}: malformed row {l:?}\n{}", run.dump());
            let block: i64 = f[0].parse().expect("block id");
            let frame: i64 = f[1].parse().expect("frame id");
            let cycles: i64 = f[2].parse().expect("cycles");
            let count: i64 = f[3].parse().expect("count");
            let avg: f64 = f[4].parse().expect("average");
            assert_eq!(block, 0, "{what}: row of block {block}\n{}", run.dump());
            assert!(cycles >= 0 && count > 0 && avg >= 0.0, "{what}: row {l:?}");
            let want = cycles as f64 / count as f64 / 1000.0;
            assert!(
                (avg - want).abs() <= 0.001 + want * 1e-3,
                "{what}: AvgTime {avg} != cycles / count / 1000 = {want} in {l:?}"
            );
            rows.insert(frame, count);
        }
        let want: std::collections::BTreeMap<i64, i64> =
            [(0, 4), (1, 2), (2, 1), (3, 1), (4, 1), (5, 3), (6, 1)].into();
        assert_eq!(rows, want, "{what}: frame counts\n{}", run.dump());
    }
}

#[test]
fn inline_2pes() {
    inline(2);
}

#[test]
fn inline_4pes() {
    inline(4);
}

/// The ACL runtime loaded by the program after init (`dlopen`): the library finds it then (it used
/// to look once, so every later stream call ran inline and a queued wait blocked its caller).
#[test]
fn late_runtime_2pes() {
    let lib = common::profile_dir().join("libascendcl.so");
    let lib = lib.to_str().expect("UTF-8 path");
    let run = run_with(
        &stream_tests_inline(),
        "late_runtime",
        2,
        &[("STREAM_TESTS_ACL_LIB", lib)],
    );
    run.assert_ok("late_runtime");
}

fn inline(n: usize) {
    let prog = stream_tests_inline();
    let run = run_with(&prog, "inline", n, &[]);
    run.assert_ok("inline");
    // the failing inline put is reported on the calling thread before the call returned
    let lines = pe_lines(&run, 0);
    let returned = mark_at(&lines, "inline_error_returned", &run);
    assert!(
        error_lines(&lines, "aclshmemx_putmem_on_stream")
            .iter()
            .any(|e| e.index < returned && e.tid == e.pid && e.text.contains("symmetric heap")),
        "the out-of-heap inline put was not logged at call time\n{}",
        run.dump()
    );
}

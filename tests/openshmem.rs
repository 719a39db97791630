//! The OpenSHMEM 1.5 surface (crates/openshmem, include/openshmem/shmem.h): C programs of
//! tests/c/openshmem/ written against the standard API, built like `oshcc` builds them and run
//! under the launcher on 1, 2, 4 and 8 PEs; the header's C11 generic selection; both APIs in one
//! process; the exported symbols.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{ensure_built, profile_dir, repo_root, run_pes, target_dir};

/// Compiles `tests/c/openshmem/<name>` (plus `extra` sources or objects) with the source tree's
/// `oshcc` (`oshc++` for C++), pointed at the library this test run built, into
/// `<target>/ctests/osh_<out>`.
///
/// Each program is built once per test process (several tests run the same program in parallel:
/// rebuilding it in place while another test starts it fails that start), and the compiler writes
/// a private file that is renamed into place, so no process ever sees a half-written binary.
fn compile_with(wrapper: &str, out: &str, sources: &[PathBuf], flags: &[&str]) -> PathBuf {
    compile_env(wrapper, out, sources, flags, &[])
}

/// [`compile_with`] with variables for the wrapper (`CC=clang`).
fn compile_env(
    wrapper: &str,
    out: &str,
    sources: &[PathBuf],
    flags: &[&str],
    env: &[(&str, &str)],
) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    ensure_built();
    let out_dir = target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let tmp = out_dir.join(format!(".osh_{out}.{}.tmp", std::process::id()));
    let out = out_dir.join(format!("osh_{out}"));
    let key = out.to_string_lossy().into_owned();
    if built.contains(&key) {
        return out;
    }
    let output = Command::new(repo_root().join("scripts/osh").join(wrapper))
        .env("ACLSHMEM_LIB_DIR", profile_dir())
        .envs(env.iter().copied())
        .args(flags)
        .args(sources)
        .arg("-o")
        .arg(&tmp)
        .output()
        .expect("run oshcc");
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        panic!(
            "{wrapper} {sources:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::rename(&tmp, &out).expect("move the compiled program into place");
    built.push(key);
    out
}

fn src(name: &str) -> PathBuf {
    repo_root().join("tests/c/openshmem").join(name)
}

/// A C program of tests/c/openshmem/ built with `oshcc -std=c11 -Wall -Wextra -Werror -pedantic`.
fn compile(name: &str) -> PathBuf {
    compile_with(
        "oshcc",
        name,
        &[src(&format!("{name}.c"))],
        &["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"],
    )
}

fn run_on(bin: &PathBuf, scenario: &str, pes: &[usize]) {
    for &n in pes {
        let run = run_pes(n, &[bin], &[], Duration::from_secs(120));
        run.assert_ok(scenario);
    }
}

/// [`run_on`] with every peer reached through UCX over tcp (`ACLSHMEM_TRANSPORT=ucx`) and `env`;
/// without UCX the case is skipped (named: a failure under `ACLSHMEM_REQUIRE_ALL_TESTS`).
fn run_over_ucx(test: &str, bin: &PathBuf, scenario: &str, pes: &[usize], env: &[(&str, &str)]) {
    if !common::ucx_installed() {
        common::skip(test, "UCX (libucp) not installed");
        return;
    }
    let mut all = vec![("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    all.extend_from_slice(env);
    for &n in pes {
        run_pes(n, &[bin], &all, Duration::from_secs(120)).assert_ok(scenario);
    }
}

#[test]
fn rma_amo_signals_waits_locks() {
    let bin = compile("rma_amo");
    run_on(&bin, "rma_amo", &[1, 2, 4, 8]);
}

/// The same program with every peer through UCX (one node): put-with-signal as one message,
/// blocking (source reusable) and `_nbi`, small and past the one-message size.
#[test]
fn rma_amo_signals_over_ucx() {
    let bin = compile("rma_amo");
    let ucx = common::ucx_installed();
    if !ucx {
        common::skip("rma_amo_signals_over_ucx", "UCX (libucp) not installed");
        return;
    }
    for n in [2, 3] {
        let run = run_pes(
            n,
            &[&bin],
            &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")],
            Duration::from_secs(120),
        );
        run.assert_ok("rma_amo");
    }
}

/// Polling loops (`shmem_test`, `test_all/any/some` and their vector forms, `shmem_signal_fetch`)
/// see a neighbour's update over UCX with the progress thread off: the polling call itself
/// drives the transport. Without that the loops spin for ever and the
/// run times out.
#[test]
fn polling_calls_drive_the_transport_without_the_progress_thread() {
    let bin = compile("poll_progress");
    assert!(
        common::ucx_installed(),
        "UCX (libucp) is not installed: the README's setup installs it"
    );
    for n in [2, 3] {
        let run = run_pes(
            n,
            &[&bin],
            &[
                ("ACLSHMEM_TRANSPORT", "ucx"),
                ("UCX_TLS", "tcp"),
                ("ACLSHMEM_UCX_PROGRESS_THREAD", "0"),
            ],
            Duration::from_secs(60),
        );
        run.assert_ok("poll_progress");
    }
    // and on shared memory, where nothing needs driving
    run_on(&bin, "poll_progress", &[2, 4]);
}

/// A PE waiting inside a collective allocation routine (free, malloc, calloc, realloc: the
/// bootstrap's collectives inside them) serves its peers' gets, atomics and puts meanwhile, also
/// without UCX's progress thread (`get_during_collective.c`; found by the Cray test
/// `shmem_num_get` across nodes with the thread off, which hung 3 of 3 runs). Each run is
/// bounded by `ACLSHMEM_UCX_TIMEOUT` (past it the job ends instead of waiting for ever).
#[test]
fn collective_allocation_serves_peers_without_the_progress_thread() {
    let bin = compile("get_during_collective");
    assert!(
        common::ucx_installed(),
        "UCX (libucp) is not installed: the README's setup installs it"
    );
    for what in ["free", "malloc", "calloc", "realloc"] {
        for thread in ["0", "1"] {
            let run = run_pes(
                2,
                &[bin.as_os_str(), what.as_ref()],
                &[
                    ("ACLSHMEM_TRANSPORT", "ucx"),
                    ("UCX_TLS", "tcp"),
                    ("ACLSHMEM_UCX_PROGRESS_THREAD", thread),
                    ("ACLSHMEM_UCX_TIMEOUT", "10s"),
                ],
                Duration::from_secs(60),
            );
            run.assert_ok("get_during_collective");
        }
    }
    // and on shared memory
    run_on(&bin, "get_during_collective", &[2, 3]);
}

/// Runs `bin` by hand (no launcher) with only `env` of the launcher variables.
fn run_alone(bin: &PathBuf, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new("timeout");
    for v in common::JOB_VARS {
        cmd.env_remove(v);
    }
    cmd.arg("60").arg(bin).env("ACLSHMEM_LOCAL_MEM_SIZE", "16M");
    let out = cmd.envs(env.iter().copied()).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn single_pe_without_launcher() {
    let bin = compile("rma_amo");
    for env in [&[][..], &[("ACLSHMEM_MY_PE", "0"), ("ACLSHMEM_N_PES", "1")][..]] {
        // no launcher at all, or a launcher's job of one PE without an address: one PE alone
        let (ok, stdout, stderr) = run_alone(&bin, env);
        assert!(ok && stdout.contains("OK rma_amo"), "{env:?}: {stdout}\n{stderr}");
    }
}

/// A launcher environment `shmem_init` cannot use ends the job with a message naming what is
/// wrong. It used to run each process as PE 0 of 1 and exit 0 (a job of N copies of one PE).
#[test]
fn unusable_launcher_environment_fails_init() {
    let bin = compile("rma_amo");
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("ACLSHMEM_MY_PE", "1"), ("ACLSHMEM_N_PES", "two")],
            "ACLSHMEM_N_PES",
        ),
        (&[("RANK", "1")], "RANK is set but not the number of PEs"),
        (
            &[("ACLSHMEM_MY_PE", "1"), ("ACLSHMEM_N_PES", "2")],
            "no rendezvous address",
        ),
    ];
    for (env, says) in cases {
        let (ok, stdout, stderr) = run_alone(&bin, env);
        assert!(
            !ok && stderr.contains("shmem_init") && stderr.contains(says) && !stdout.contains("OK"),
            "{env:?} must fail init naming \"{says}\":\n{stdout}\n{stderr}"
        );
    }
    let long = format!("tcp://127.0.0.1:{}", "1".repeat(60));
    let (ok, _, stderr) = run_alone(
        &bin,
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("ACLSHMEM_IP_PORT", &long)],
    );
    assert!(!ok && stderr.contains("longer than 63"), "{stderr}");
    // a malformed ACLSHMEM_LOCAL_MEM_SIZE does not matter when SHMEM_SYMMETRIC_SIZE sizes the heap
    // (it used to fail the launcher's job description, and so each PE ran alone)
    let run = run_pes(
        2,
        &[&bin],
        &[
            ("SHMEM_SYMMETRIC_SIZE", "32M"),
            ("ACLSHMEM_LOCAL_MEM_SIZE", "lots"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok("rma_amo");
    assert_eq!(run.stdout.matches("OK rma_amo").count(), 1, "{}", run.stdout);
}

#[test]
fn exports_the_standard_symbols() {
    ensure_built();
    let out = Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(profile_dir().join("libaclshmem.so"))
        .output();
    let Ok(out) = out else {
        common::skip("exports_the_standard_symbols", "nm not found");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    for sym in [
        "shmem_init",
        "shmem_int_put",
        "shmem_ctx_double_get_nbi",
        "shmem_long_atomic_fetch_add",
        "shmem_int_wait_until_some_vector",
        "shmem_float_sum_reduce",
        "shmem_long_sum_to_all",
        "shmem_broadcast64",
        "aclshmem_osh_ctx_default",
        "aclshmem_malloc",
    ] {
        assert!(
            text.lines().any(|l| l.ends_with(&format!(" {sym}"))),
            "{sym} not exported"
        );
    }
}

#[test]
fn teams_contexts_collectives_active_sets() {
    let bin = compile("coll_teams");
    // 16 PEs: collect32 of 1 + 2 + ... + 16 ints overflowed the test's own buffers once
    run_on(&bin, "coll_teams", &[1, 2, 3, 4, 8, 16]);
    // every broadcast data path of the core (the whole-job active set uses it) and the generic path
    for env in [
        ("ACLSHMEM_BCAST_ALGO", "push"),
        ("ACLSHMEM_BCAST_ALGO", "pull"),
        ("ACLSHMEM_DIRECT_ACCESS", "0"),
    ] {
        run_pes(4, &[&bin], &[env], Duration::from_secs(120)).assert_ok("coll_teams");
    }
}

#[test]
fn long_double_reductions_and_single_element_rma() {
    let bin = compile("longdouble");
    run_on(&bin, "longdouble", &[1, 2, 3, 4]);
    // the reductions' other data paths: peers read through the transport, and each algorithm
    for env in [
        ("ACLSHMEM_DIRECT_ACCESS", "0"),
        ("ACLSHMEM_REDUCE_ALGO", "direct"),
        ("ACLSHMEM_REDUCE_ALGO", "scatter"),
    ] {
        run_pes(4, &[&bin], &[env], Duration::from_secs(120)).assert_ok("longdouble");
    }
}

#[test]
fn team_shared_is_the_directly_addressable_pes() {
    let bin = compile("shared_team");
    run_on(&bin, "shared_team", &[1, 2, 4]);
    // every peer routed through UCX (ACLSHMEM_TRANSPORT=ucx): the program data is registered with
    // UCX too; the peers' memory stays mapped on one node, so SHMEM_TEAM_SHARED is still the job
    // (tests/multinode.rs openshmem_team_shared_per_node runs it across nodes)
    let ucx = common::ucx_installed();
    if !ucx {
        common::skip(
            "team_shared_is_the_directly_addressable_pes",
            "UCX (libucp) not installed",
        );
        return;
    }
    let run = run_pes(
        2,
        &[&bin],
        &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")],
        Duration::from_secs(120),
    );
    run.assert_ok("shared_team");
}

/// Every PE maps the heap at the same address (`ACLSHMEM_HEAP_SAME_ADDRESS`, on by default), so a
/// pointer PE 0 stores in the heap leads to the same object on another PE (`heap_address.c`:
/// PE 0's linked list walked by every PE); with the setting off the heaps lie where the system
/// puts them and the program sees it.
#[test]
fn heap_pointers_mean_the_same_object_on_every_pe() {
    let bin = compile("heap_address");
    run_on(&bin, "heap_address", &[1, 2, 4]);
    let run = run_pes(
        2,
        &[&bin],
        &[("ACLSHMEM_HEAP_SAME_ADDRESS", "0")],
        Duration::from_secs(120),
    );
    assert!(
        !run.status.success() && run.stdout.contains("FAIL") && run.stdout.contains("on PE 0"),
        "with the heaps at different addresses the program must see it\n{}",
        run.dump()
    );
}

#[test]
fn c11_generic_selection() {
    let bin = compile("generic");
    run_on(&bin, "generic", &[1, 2, 4]);
}

#[test]
fn thread_multiple_with_four_threads() {
    let bin = compile("threads");
    run_on(&bin, "threads", &[2, 4]);
}

#[test]
fn both_apis_in_one_process() {
    // the CANN half is compiled with the aclshmem header, the OpenSHMEM half with oshcc
    ensure_built();
    let obj = target_dir().join("ctests").join("osh_mixed_acl.o");
    std::fs::create_dir_all(obj.parent().unwrap()).unwrap();
    let out = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-c"])
        .arg(format!("-I{}", repo_root().join("include").display()))
        .arg(src("mixed_acl.c"))
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bin = compile_with(
        "oshcc",
        "mixed",
        &[src("mixed_osh.c"), obj],
        &["-std=c11", "-Wall", "-Wextra", "-Werror"],
    );
    run_on(&bin, "mixed", &[1, 2, 4]);
    // either API may end first: OpenSHMEM calls stay valid until shmem_finalize, which ends the
    // runtime (an aclshmem_finalize first used to end it under the OpenSHMEM side)
    for mode in ["acl_first", "osh_only"] {
        for n in [1, 3] {
            run_pes(n, &[bin.as_os_str(), mode.as_ref()], &[], Duration::from_secs(60)).assert_ok("mixed");
        }
    }
}

/// Three threads of every PE splitting different parents at once (`concurrent_splits.c`: strided
/// splits of the whole parent and of its halves, 2-D splits, a reduction over each new team):
/// every team the right one, never one handle for two teams, no hang (before each PE's splits
/// shared one mailbox: they deadlocked or were handed one slot). On shared memory and with the
/// peers reached through UCX (the slots then reserved by remote atomics).
#[test]
fn concurrent_splits_of_different_parents() {
    let bin = compile("concurrent_splits");
    for n in [1, 2, 3, 4] {
        run_pes(n, &[&bin], &[], Duration::from_secs(120)).assert_ok("concurrent_splits");
    }
    run_over_ucx(
        "concurrent_splits_of_different_parents",
        &bin,
        "concurrent_splits",
        &[2, 3],
        &[],
    );
}

/// Two threads splitting the same parent at once (`same_parent_splits.c`, forbidden by the
/// specification) end the job with a message naming the parent (the overlapping split returned an
/// error and the program went on).
#[test]
fn overlapping_splits_of_one_parent_end_the_job() {
    let bin = compile("same_parent_splits");
    let run = run_pes(2, &[&bin], &[], Duration::from_secs(60));
    assert!(
        run.code() != 0
            && run.stderr.contains("is splitting parent team 0")
            && !run.stdout.contains("FAIL")
            && run.elapsed < Duration::from_secs(30),
        "{}",
        run.dump()
    );
}

#[test]
fn cxx_header_with_oshcxx() {
    let bin = compile_with(
        "oshc++",
        "cxx",
        &[src("cxx_header.cpp")],
        &[
            "-std=c++14",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-Wold-style-cast",
            "-Wzero-as-null-pointer-constant",
        ],
    );
    run_on(&bin, "cxx", &[1, 2, 3]);
}

#[test]
fn oshrun_accepts_open_mpi_options_and_oshcc_showme() {
    let bin = compile("rma_amo");
    let out = Command::new(repo_root().join("scripts/osh/oshrun"))
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--map-by",
            "slot",
            "--bind-to",
            "core",
            "-np",
            "2",
            "--timeout",
            "120",
        ])
        .arg(&bin)
        .env("SHMEM_SYMMETRIC_SIZE", "16M")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("OK rma_amo"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = Command::new(repo_root().join("scripts/osh/oshcc"))
        .env("ACLSHMEM_LIB_DIR", profile_dir())
        .args(["-showme", "x.c"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&show.stdout);
    assert!(
        line.contains("include/openshmem") && line.contains("-laclshmem") && line.contains("x.c"),
        "{line}"
    );
}

/// `CC=oshcc` (as `CC=oshcc ./configure` or `CC=oshcc cmake` set it), `CXX=oshc++`, or
/// `OSHCC_CC` naming a wrapper: the wrapper used to run itself for ever; it takes the plain
/// compiler instead, and `-showme` names that compiler.
#[test]
fn oshcc_with_cc_naming_the_wrapper() {
    let dir = repo_root().join("scripts/osh");
    let scratch = target_dir()
        .join("ctests")
        .join(format!("cc_self_{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let prog = scratch.join("p.c");
    std::fs::write(
        &prog,
        "#include <shmem.h>\nint main(void) { return shmem_my_pe() < 0; }\n",
    )
    .unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let cases: [(&str, &str, String, &str); 4] = [
        ("oshcc", "CC", dir.join("oshcc").display().to_string(), "cc "),
        ("oshcc", "CC", "oshcc".to_string(), "cc "),
        (
            "oshcc",
            "OSHCC_CC",
            dir.join("oshcxx").display().to_string(),
            "cc ",
        ),
        ("oshc++", "CXX", dir.join("oshc++").display().to_string(), "c++ "),
    ];
    for (wrapper, var, value, plain) in cases {
        let run = |args: &[&std::ffi::OsStr]| {
            Command::new("timeout")
                .arg("60")
                .arg(dir.join(wrapper))
                .args(args)
                .env("ACLSHMEM_LIB_DIR", profile_dir())
                .env("PATH", &path)
                .env(var, &value)
                .output()
                .unwrap()
        };
        let exe = scratch.join(format!("p_{wrapper}"));
        let lang: &[&std::ffi::OsStr] = if wrapper == "oshc++" {
            &["-x".as_ref(), "c++".as_ref()]
        } else {
            &[]
        };
        let mut args = lang.to_vec();
        args.extend([prog.as_os_str(), "-o".as_ref(), exe.as_os_str()]);
        let out = run(&args);
        assert!(
            out.status.success() && exe.exists(),
            "{var}={value} {wrapper}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let show = run(&["-showme".as_ref(), "x.c".as_ref()]);
        let line = String::from_utf8_lossy(&show.stdout);
        assert!(line.starts_with(plain), "{var}={value} {wrapper} -showme: {line}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The wrappers as users reach them: through a symbolic link (in a PATH directory), from a prefix
/// whose path has a space in it, with a compiler variable that is a command line (`CC="gcc
/// -m64"`, or the `CC="oshcc -std=gnu11"` make exports); and oshrun's `-x VAR=VALUE`, `-N K` and
/// `--host` of Open MPI. Each of them failed (or dropped the value) before.
#[test]
fn wrappers_through_links_spaces_and_compiler_command_lines() {
    use std::os::unix::fs::symlink;
    let osh = repo_root().join("scripts/osh");
    let scratch = target_dir()
        .join("ctests")
        .join(format!("wrappers {}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    // an installed layout in a directory with a space: bin/ (the scripts), include/openshmem,
    // lib/libaclshmem.so
    let prefix = scratch.join("my prefix");
    for d in ["bin", "include", "lib", "links"] {
        std::fs::create_dir_all(prefix.join(d)).unwrap();
    }
    for w in ["oshcc", "oshrun"] {
        std::fs::copy(osh.join(w), prefix.join("bin").join(w)).unwrap();
    }
    symlink("oshcc", prefix.join("bin/oshc++")).unwrap();
    symlink(profile_dir().join("aclshmrun"), prefix.join("bin/aclshmrun")).unwrap();
    symlink(
        repo_root().join("include/openshmem"),
        prefix.join("include/openshmem"),
    )
    .unwrap();
    symlink(
        profile_dir().join("libaclshmem.so"),
        prefix.join("lib/libaclshmem.so"),
    )
    .unwrap();
    // links to the installed wrappers elsewhere
    let links = prefix.join("links");
    symlink(prefix.join("bin/oshcc"), links.join("oshcc")).unwrap();
    symlink(prefix.join("bin/oshc++"), links.join("oshc++")).unwrap();
    symlink(prefix.join("bin/oshrun"), links.join("oshrun")).unwrap();
    let prog = scratch.join("p.c");
    std::fs::write(
        &prog,
        "#include <stdio.h>\n#include <stdlib.h>\n#include <shmem.h>\nint main(void) {\n  shmem_init();\n  \
         const char *v = getenv(\"MYVAR\");\n  printf(\"PE %d of %d MYVAR=%s\\n\", shmem_my_pe(), shmem_n_pes(), \
         v ? v : \"-\");\n  shmem_finalize();\n  return 0;\n}\n",
    )
    .unwrap();
    let path = format!("{}:{}", osh.display(), std::env::var("PATH").unwrap_or_default());
    let cases: [(&str, &[(&str, &str)]); 5] = [
        ("bin/oshcc", &[]),
        ("links/oshcc", &[]),
        ("links/oshcc", &[("CC", "gcc -m64")]),
        ("links/oshcc", &[("CC", "oshcc -std=gnu11")]),
        ("links/oshc++", &[("CXX", "g++ -x c++")]),
    ];
    let exe = scratch.join("p");
    for (i, (wrapper, env)) in cases.iter().enumerate() {
        let _ = std::fs::remove_file(&exe);
        let out = Command::new(prefix.join(wrapper))
            .arg(&prog)
            .arg("-o")
            .arg(&exe)
            .env_remove("ACLSHMEM_LIB_DIR")
            .env("PATH", &path)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success() && exe.exists(),
            "case {i}: {wrapper} {env:?}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let show = Command::new(links.join("oshcc"))
        .args(["-showme", "x.c"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&show.stdout);
    assert!(
        line.contains("'-I") && line.contains("my prefix/include/openshmem'"),
        "{line}"
    );
    // CC=oshcc where the oshcc found first on PATH is another implementation's (Open MPI's
    // /usr/bin/oshcc): still a wrapper, not a compiler to run (it added its own shmem.h and
    // library to this one's)
    let other = scratch.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("oshcc"), "#!/bin/sh\necho another oshcc >&2\nexit 1\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(other.join("oshcc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let show = Command::new(links.join("oshcc"))
        .args(["-showme", "x.c"])
        .env("PATH", format!("{}:{path}", other.display()))
        .env("CC", "oshcc")
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&show.stdout);
    assert!(
        line.starts_with("cc "),
        "CC=oshcc of another implementation: {line}"
    );
    let oshrun = |args: &[&str]| {
        let out = Command::new("timeout")
            .arg("60")
            .arg(links.join("oshrun"))
            .args(args)
            .arg(&exe)
            .env("SHMEM_SYMMETRIC_SIZE", "4M")
            .output()
            .unwrap();
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        assert!(
            out.status.success(),
            "{args:?}: {lines:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines
    };
    assert_eq!(
        oshrun(&["-np", "2", "-x", "MYVAR=hello"]),
        ["PE 0 of 2 MYVAR=hello", "PE 1 of 2 MYVAR=hello"]
    );
    assert_eq!(oshrun(&["-N", "3"]).len(), 3);
    assert_eq!(oshrun(&["-np", "2", "-N", "5"]).len(), 2);
    assert_eq!(oshrun(&["-np", "2", "--host", "localhost:2"]).len(), 2);
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn global_and_static_data_are_symmetric() {
    let bin = compile("statics");
    run_on(&bin, "statics", &[1, 2, 4, 8]);
    // the transports' generic path too (no inline access to peers' copies)
    let run = run_pes(
        3,
        &[&bin],
        &[("ACLSHMEM_DIRECT_ACCESS", "0")],
        Duration::from_secs(120),
    );
    run.assert_ok("statics");
    // linked without RELRO (position-independent or not): the writable segment starts inside a
    // page, and that page's data is symmetric too (it was left out: a program whose globals all
    // fit there had none)
    for (name, extra) in [
        ("statics_norelro", &["-Wl,-z,norelro"][..]),
        ("statics_nopie_norelro", &["-no-pie", "-Wl,-z,norelro"]),
    ] {
        let mut flags = vec!["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"];
        flags.extend_from_slice(extra);
        let bin = compile_with("oshcc", name, &[src("statics.c")], &flags);
        run_on(&bin, "statics", &[2]);
    }
    // built with AddressSanitizer (gcc: the runtime a shared library; clang: linked into the
    // program, so its own data is moved too): the move reads the red zones between the globals,
    // which an intercepted memcpy reported as a global-buffer-overflow (every PE aborted in
    // shmem_init)
    for (name, cc) in [("statics_asan_gcc", "gcc"), ("statics_asan_clang", "clang")] {
        let flags = [
            "-std=c11",
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
        ];
        let bin = compile_env("oshcc", name, &[src("statics.c")], &flags, &[("CC", cc)]);
        run_on(&bin, "statics", &[1, 2]);
    }
}

/// Programs built with ThreadSanitizer, run as root (as in CI). gcc's runtime is a shared
/// library: the program works unchanged (before, every PE died in init with "ThreadSanitizer: mmap
/// at bad address": its `mmap` interceptor drops the heaps' same-address hint but keeps
/// `MAP_FIXED_NOREPLACE`, and root may map page 0; the library now asks for no address under
/// it). clang links the runtime into the program, whose data then holds TSan's own state: that
/// data is left where it is, with a message saying why (before: a silent SIGSEGV in
/// `shmem_init`, the runtime writing its state while the move had it read-only); the program's
/// remote access to a global then fails as any non-symmetric address does.
#[test]
fn thread_sanitizer_builds() {
    let flags = ["-std=c11", "-O1", "-g", "-fsanitize=thread"];
    let bin = compile_env(
        "oshcc",
        "statics_tsan_gcc",
        &[src("statics.c")],
        &flags,
        &[("CC", "gcc")],
    );
    run_on(&bin, "statics", &[1, 2]);
    let bin = compile_env(
        "oshcc",
        "statics_tsan_clang",
        &[src("statics.c")],
        &flags,
        &[("CC", "clang")],
    );
    let run = run_pes(2, &[&bin], &[], Duration::from_secs(60));
    assert!(
        run.code() == 1
            && run
                .stderr
                .matches("the global and static data of the executable are not symmetric: ThreadSanitizer")
                .count()
                == 2
            && run.stdout.contains("global is accessible")
            && !run.stderr.contains("signal"),
        "{}",
        run.dump()
    );
    // the aclshmem API (heap only) with either compiler's runtime
    for cc in ["gcc", "clang"] {
        let bin = target_dir().join("ctests").join(format!("rma_tests_tsan_{cc}"));
        let out = Command::new(cc)
            .args(flags)
            .arg(format!("-I{}", repo_root().join("include").display()))
            .arg(repo_root().join("tests/c/rma_tests.c"))
            .arg("-o")
            .arg(&bin)
            .arg(format!("-L{}", profile_dir().display()))
            .arg("-laclshmem")
            .arg(format!("-Wl,-rpath,{}", profile_dir().display()))
            .output()
            .expect("run the C compiler");
        assert!(
            out.status.success(),
            "{cc}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for n in [1, 2] {
            run_pes(
                n,
                &[bin.as_os_str(), "scalar".as_ref()],
                &[],
                Duration::from_secs(60),
            )
            .assert_ok("scalar");
        }
    }
}

/// The memory routines that perform no action (size 0, freeing NULL) are local: PE 0 alone makes
/// them (`no_action.c`); they were collective calls and the job ended in the next barrier.
#[test]
fn memory_routines_that_do_nothing_are_local() {
    let bin = compile("no_action");
    run_on(&bin, "no_action", &[1, 2, 3]);
}

/// A collect where some PEs contribute nothing and pass NULL (`collect_zero.c`), on shared memory,
/// through the transports (direct access off; UCX) and with each algorithm: the empty PEs' dest
/// was filled with zeros through a transport (they pulled from their own NULL source's address).
#[test]
fn collect_with_empty_null_contributions() {
    let bin = compile("collect_zero");
    run_on(&bin, "collect_zero", &[1, 2, 3, 4]);
    for env in [
        &[("ACLSHMEM_DIRECT_ACCESS", "0")][..],
        &[("ACLSHMEM_DIRECT_ACCESS", "0"), ("ACLSHMEM_COLLECT_ALGO", "push")][..],
    ] {
        for n in [2, 3] {
            run_pes(n, &[&bin], env, Duration::from_secs(60)).assert_ok("collect_zero");
        }
    }
    run_over_ucx(
        "collect_with_empty_null_contributions",
        &bin,
        "collect_zero",
        &[3],
        &[],
    );
}

/// `shmem_realloc` grows and shrinks in place when the space after the block is free
/// (`realloc_grow.c`, a 64 MiB heap): the only block grows to 48 MiB (it returned NULL: a new
/// block had to fit beside the old one), on one node and through UCX.
#[test]
fn realloc_grows_in_place() {
    let bin = compile("realloc_grow");
    for n in [1, 2, 3] {
        run_pes(
            n,
            &[&bin],
            &[("ACLSHMEM_LOCAL_MEM_SIZE", "64M")],
            Duration::from_secs(120),
        )
        .assert_ok("realloc_grow");
    }
    run_over_ucx(
        "realloc_grows_in_place",
        &bin,
        "realloc_grow",
        &[2],
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "64M")],
    );
}

/// An address-space limit (`ulimit -v`) too small for the heaps: init fails on every PE with a
/// message that names the limit and the size asked for (before: only "address reservation ...
/// Cannot allocate memory").
#[test]
fn a_small_address_space_limit_is_named() {
    let bin = compile("concurrent_splits");
    let script = "ulimit -v 2000000 && exec \"$0\"";
    let run = run_pes(
        2,
        &["sh".as_ref(), "-c".as_ref(), script.as_ref(), bin.as_os_str()],
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "1G")],
        Duration::from_secs(60),
    );
    assert!(
        run.code() == 1
            && run
                .stderr
                .matches("address space is limited to 2048000000 bytes, `ulimit -v` 2000000")
                .count()
                == 2
            && run.stderr.contains("address reservation of "),
        "{}",
        run.dump()
    );
}

/// Threads the program started before `shmem_init` keep writing its globals while init moves them
/// onto shared memory: no write is lost (about one run in four lost thousands of adds before the
/// writers were made to wait for the move; with a 48 MiB array to move, almost every run).
#[test]
fn globals_written_by_other_threads_during_init_keep_every_write() {
    let bin = compile("statics_writers");
    for _ in 0..3 {
        run_on(&bin, "statics_writers", &[2]);
    }
}

/// `libaclshmem`-linked shared library's data (tests/c/openshmem/dso_lib.c, built with
/// `oshcc -shared -fPIC`) is symmetric like the executable's: RMA, AMOs, a wait and active-set
/// collectives with pSync/pWrk in the library, on 1, 2 and 4 PEs and over UCX; the same library
/// loaded later with `dlopen` is not.
#[test]
fn shared_library_data_is_symmetric() {
    let flags = [
        "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
    ];
    let lib_src = [src("dso_lib.c")];
    let lib = compile_with(
        "oshcc",
        "dso_lib.so",
        &lib_src,
        &[&flags[..], &["-Wl,-soname,osh_dso_lib.so"]].concat(),
    );
    let late = compile_with(
        "oshcc",
        "dso_late.so",
        &lib_src,
        &[&flags[..], &["-Wl,-soname,osh_dso_late.so"]].concat(),
    );
    let rpath = format!("-Wl,-rpath,{}", lib.parent().unwrap().display());
    let bin = compile_with(
        "oshcc",
        "dso_statics",
        &[src("dso_statics.c"), lib.clone()],
        &["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", &rpath, "-ldl"],
    );
    let args = [bin.as_os_str(), late.as_os_str()];
    for n in [1, 2, 4] {
        run_pes(n, &args, &[], Duration::from_secs(120)).assert_ok("dso_statics");
    }
    // every peer through UCX: each region of program data (executable and library) is registered
    let ucx = common::ucx_installed();
    if !ucx {
        common::skip("shared_library_data_is_symmetric", "UCX (libucp) not installed");
        return;
    }
    let run = run_pes(
        2,
        &args,
        &[
            ("ACLSHMEM_TRANSPORT", "ucx"),
            ("UCX_TLS", "tcp"),
            ("ACLSHMEM_DIRECT_ACCESS", "0"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok("dso_statics");
}

/// Collective allocation, free and 2-D split made by some PEs while the others wait in a barrier
/// (or make another collective call): the call fails on every PE that made it, the barrier ends
/// once all called one, and the heap stays symmetric (alloc_crossed.c); directly, through the shm
/// transport and over UCX. (Those calls used to meet the others' barriers: one PE's allocation
/// failed and the others' succeeded, so their heaps differed from then on.)
#[test]
fn allocations_against_barriers_fail_and_keep_the_heap_symmetric() {
    let bin = compile("alloc_crossed");
    let cont = ("ACLSHMEM_OSHMEM_ON_ERROR", "continue");
    for (n, env) in [
        (2, vec![cont]),
        (3, vec![cont]),
        (4, vec![cont]),
        (3, vec![cont, ("ACLSHMEM_DIRECT_ACCESS", "0")]),
        (
            2,
            vec![
                cont,
                ("ACLSHMEM_TRANSPORT", "ucx"),
                ("UCX_TLS", "tcp"),
                ("ACLSHMEM_DIRECT_ACCESS", "0"),
            ],
        ),
    ] {
        let mut env = env;
        // (the failed allocations and splits are only logged: they return NULL and nonzero)
        env.extend([("SHMEM_LOG_TO_STDOUT", "1"), ("SHMEM_LOG_LEVEL", "ERROR")]);
        let run = run_pes(n, &[&bin], &env, Duration::from_secs(120));
        run.assert_ok("alloc_crossed");
        assert!(
            run.stdout
                .contains("shmem_malloc: invalid parameter: asymmetric collective call")
                && run
                    .stdout
                    .contains("shmem_team_split_2d: invalid parameter: asymmetric collective call")
                && run.stderr.contains("OpenSHMEM error in shmem_free")
                && run.stderr.contains("a barrier (or sync) of the team instead"),
            "{n} PEs {env:?}: {}",
            run.dump()
        );
    }
}

/// Allocation, team splits and context creation before `shmem_init`: a message naming the call,
/// and the job ends with status 1 unless errors are to continue (they returned their failure
/// values silently).
#[test]
fn calls_before_init_are_reported() {
    let bin = compile("before_init");
    for (step, call) in [
        ("0", "shmem_malloc"),
        ("1", "shmem_align"),
        ("2", "shmem_team_split_strided"),
        ("3", "shmem_ctx_create"),
    ] {
        let run = run_pes(1, &[bin.as_os_str(), step.as_ref()], &[], Duration::from_secs(60));
        assert_eq!(run.code(), 1, "{call}: {}", run.dump());
        assert!(
            run.stderr.contains(&format!("OpenSHMEM error in {call}")),
            "{call}: {}",
            run.dump()
        );
    }
    let run = run_pes(
        1,
        &[bin.as_os_str(), "9".as_ref()],
        &[("ACLSHMEM_OSHMEM_ON_ERROR", "continue")],
        Duration::from_secs(60),
    );
    run.assert_ok("before_init");
    assert_eq!(
        run.stderr.matches("OpenSHMEM error in ").count(),
        4,
        "{}",
        run.dump()
    );
}

/// Locks through UCX without its progress thread (`lock_progress.c`): a PE waiting in
/// `shmem_set_lock` drives the transports, so the others' atomics on its lock word land (every PE
/// waited for ever before).
#[test]
fn locks_progress_over_ucx_without_the_progress_thread() {
    let bin = compile("lock_progress");
    for n in [2, 3] {
        let run = run_pes(
            n,
            &[&bin],
            &[
                ("ACLSHMEM_TRANSPORT", "ucx"),
                ("UCX_TLS", "tcp"),
                ("ACLSHMEM_UCX_PROGRESS_THREAD", "0"),
                ("ACLSHMEM_UCX_TIMEOUT", "20"),
            ],
            Duration::from_secs(90),
        );
        run.assert_ok("lock_progress");
    }
}

/// Polling one's own word with fetch, `g` or compare-swap (and a CAS lock on it), through UCX
/// without its progress thread (`self_poll.c`): such calls drive the transport too, so the others'
/// atomics and puts to the polling PE land (they waited for ever, the job ended at the UCX limit
/// naming the PE's node as lost).
#[test]
fn polling_ones_own_word_progresses_over_ucx_without_the_progress_thread() {
    let bin = compile("self_poll");
    run_over_ucx(
        "polling_ones_own_word_progresses_over_ucx_without_the_progress_thread",
        &bin,
        "self_poll",
        &[2, 3],
        &[
            ("ACLSHMEM_UCX_PROGRESS_THREAD", "0"),
            ("ACLSHMEM_UCX_TIMEOUT", "20"),
        ],
    );
}

/// 250 `shmem_init`/`shmem_finalize` cycles in one process keep the heap in use flat (a record
/// per cycle leaked: about 150 bytes each).
#[test]
fn init_finalize_cycles_keep_memory_flat() {
    let bin = compile_with(
        "oshcc",
        "init_cycles_memory",
        &[src("init_cycles_memory.c")],
        &["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"],
    );
    let run = run_pes(1, &[&bin], &[], Duration::from_secs(120));
    run.assert_ok("init_cycles_memory");
}

#[test]
fn bad_input_ends_the_job_or_continues_on_request() {
    let bin = compile("errors");
    let run = run_pes(
        2,
        &[bin.as_os_str(), "abort".as_ref()],
        &[],
        Duration::from_secs(120),
    );
    assert_eq!(run.code(), 1, "{}", run.dump());
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("OpenSHMEM error in shmem_int_put") && all.contains("pe 99"),
        "{}",
        run.dump()
    );
    assert!(run.failures().is_empty(), "{}", run.dump());
    // a NULL output pointer of a call with a return code (a split's new_team) ends the job the same
    // way (it returned -1 without a word)
    let run = run_pes(
        2,
        &[bin.as_os_str(), "null_out".as_ref()],
        &[],
        Duration::from_secs(120),
    );
    assert_eq!(run.code(), 1, "{}", run.dump());
    assert!(
        run.stderr.contains("OpenSHMEM error in shmem_team_split_strided")
            && run.stderr.contains("new_team is NULL"),
        "{}",
        run.dump()
    );
    assert!(run.failures().is_empty(), "{}", run.dump());
    // a malformed setting is refused at shmem_init, naming it (it was taken for `abort`, silently)
    let run = run_pes(
        2,
        &[&bin],
        &[("ACLSHMEM_OSHMEM_ON_ERROR", "garbage")],
        Duration::from_secs(120),
    );
    assert!(
        run.code() != 0
            && run.stderr.contains("OpenSHMEM error in shmem_init")
            && run.stderr.contains("ACLSHMEM_OSHMEM_ON_ERROR")
            && run.stderr.contains("garbage"),
        "{}",
        run.dump()
    );
    let run = run_pes(
        2,
        &[&bin],
        &[("ACLSHMEM_OSHMEM_ON_ERROR", "continue")],
        Duration::from_secs(120),
    );
    run.assert_ok("errors");
    // the destroyed team is named by its handle on this surface
    let gone = run
        .stderr
        .lines()
        .find_map(|l| l.split("DESTROYED_TEAM ").nth(1))
        .map(str::trim)
        .unwrap_or("?")
        .to_string();
    assert!(
        run.stderr
            .contains(&format!("(OpenSHMEM handle {gone}) is not a valid team handle")),
        "the destroyed team {gone} is not named by its handle\n{}",
        run.dump()
    );
    for call in [
        "shmem_ctx_create",
        "shmem_team_create_ctx",
        "shmem_ctx_get_team",
        "shmem_team_get_config",
    ] {
        assert!(
            run.stderr.contains(&format!("OpenSHMEM error in {call}")),
            "{call}: no message for a NULL output\n{}",
            run.dump()
        );
    }
    // shmem_realloc of plain memory: an error on each PE (it used to return NULL without one)
    assert_eq!(
        run.stderr.matches("OpenSHMEM error in shmem_realloc").count(),
        2,
        "{}",
        run.dump()
    );
    // a lock variable the program wrote: every later shmem_set_lock reports it (no endless wait)
    assert_eq!(
        run.stderr.matches("OpenSHMEM error in shmem_set_lock").count(),
        2,
        "{}",
        run.dump()
    );
    // an alltoalls whose members named different strides: reported on both, naming both calls
    assert_eq!(
        run.stderr
            .matches("OpenSHMEM error in shmem_long_alltoalls")
            .count(),
        2,
        "{}",
        run.dump()
    );
    assert!(
        run.stderr.contains("strides 2 (dest) and 1 (source)")
            && run.stderr.contains("strides 1 (dest) and 1 (source)"),
        "{}",
        run.dump()
    );
    // active-set calls over the whole job with a NULL, a stack and a misaligned pSync (each
    // PE), and an active set past the last PE
    assert_eq!(
        run.stderr
            .matches("OpenSHMEM error in shmem_broadcast64: ")
            .count(),
        6,
        "{}",
        run.dump()
    );
    for what in ["pSync is NULL", "is not a symmetric array", "not aligned"] {
        assert_eq!(run.stderr.matches(what).count(), 2, "{what}: {}", run.dump());
    }
    assert_eq!(
        run.stderr.matches("OpenSHMEM error in shmem_barrier: ").count(),
        2,
        "{}",
        run.dump()
    );
}

#[test]
fn generated_files_are_current() {
    // crates/openshmem/src/typed.rs, include/openshmem/shmem.h, tests/abi/openshmem_generated.txt
    let stale = xtask::update(
        &repo_root(),
        xtask::openshmem_outputs(&repo_root()),
        xtask::Mode::Check,
    );
    assert!(stale.is_empty(), "stale: {stale:?}; run `cargo xtask codegen`");
}

/// Without `SHMEM_SYMMETRIC_SIZE` (or `ACLSHMEM_LOCAL_MEM_SIZE`) the heap is Sandia OpenSHMEM's
/// 512 MiB with pages allocated on first touch, so programs that allocate a few hundred MiB (OSU's
/// message-rate tests) run without settings, and an unused heap costs nothing: two PEs with their
/// default heaps run in a private mount namespace whose `/dev/shm` is 64 MiB (Docker's default
/// size). With `ACLSHMEM_SHM_PREALLOCATE=1` the same job fails at init, naming `/dev/shm`.
#[test]
fn default_heap_is_512_mib_allocated_on_first_touch() {
    let bin = compile("heap_size");
    let run = run_pes(
        2,
        &[&bin],
        &[
            ("ACLSHMEM_LOCAL_MEM_SIZE", ""),
            ("SHMEM_SYMMETRIC_SIZE", ""),
            ("HEAP_EXPECT_MB", "512"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");
    // ACLSHMEM_LOCAL_MEM_SIZE alone still sizes it
    let run = run_pes(
        2,
        &[&bin],
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "8M"), ("SHMEM_SYMMETRIC_SIZE", "")],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");

    if !common::can_unshare() {
        common::skip(
            "default_heap_is_512_mib_allocated_on_first_touch (small /dev/shm)",
            "needs root for a private mount namespace (unshare -m)",
        );
        return;
    }
    let in_small_shm = |prealloc: &str| {
        let (code, text) = common::run_in_small_dev_shm(
            &bin,
            2,
            &[("ACLSHMEM_SHM_PREALLOCATE", prealloc), ("HEAP_EXPECT_MB", "512")],
            &["ACLSHMEM_LOCAL_MEM_SIZE", "SHMEM_SYMMETRIC_SIZE"],
        );
        (code == 0, text)
    };
    let (ok, text) = in_small_shm("");
    assert!(
        ok && text.contains("OK heap_size"),
        "default heaps in a 64 MiB /dev/shm:\n{text}"
    );
    let (ok, text) = in_small_shm("1");
    assert!(
        !ok && !text.contains("OK heap_size") && text.contains("/dev/shm has"),
        "reserved default heaps in a 64 MiB /dev/shm must fail at init, naming it:\n{text}"
    );
}

/// Program data nobody wrote takes no shared memory (`sparse_data.c`: a 96 MiB static array):
/// the move onto shared memory copies only the pages that hold something. Every page of the
/// program's writable data was taken from /dev/shm: two such PEs died of SIGBUS in a 64 MiB
/// /dev/shm, with a message about the heap. Written data that /dev/shm cannot hold fails
/// `shmem_init` with a message naming the remedies.
#[test]
fn program_data_nobody_wrote_takes_no_shared_memory() {
    let bin = compile("sparse_data");
    run_on(&bin, "sparse_data", &[1, 2]);
    let run = run_pes(2, &[&bin], &[("FILL_MB", "3")], Duration::from_secs(120));
    run.assert_ok("sparse_data");
    if !common::can_unshare() {
        common::skip(
            "program_data_nobody_wrote_takes_no_shared_memory (small /dev/shm)",
            "needs root for a private mount namespace (unshare -m)",
        );
        return;
    }
    let (code, text) = common::run_in_small_dev_shm(&bin, 2, &[], &[]);
    assert!(
        code == 0 && text.contains("OK sparse_data"),
        "2 PEs with 96 MiB of untouched static data in a 64 MiB /dev/shm:\n{text}"
    );
    let (code, text) = common::run_in_small_dev_shm(&bin, 2, &[("FILL_MB", "48")], &[]);
    assert!(
        code != 0
            && !text.contains("SIGBUS")
            && text.contains("/dev/shm has no room")
            && text.contains("ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0"),
        "2 PEs with 48 MiB of written static data in a 64 MiB /dev/shm must fail init, naming it:\n{text}"
    );
}

/// The SIGBUS handler the library installs for heap pages passes any other SIGBUS to the
/// program's own handler (`sigbus_chain.c`, on 1 and 2 PEs); over UCX too, whose load installs
/// handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGHUP that init gives back to the program's
/// (2 PEs, `ACLSHMEM_TRANSPORT=ucx`; with `UCX_HANDLE_ERRORS` and `UCX_DEBUG_SIGNO` set, the
/// program asked for UCX's and keeps them: the checks then fail).
#[test]
fn other_sigbus_reach_the_programs_handler() {
    let bin = compile("sigbus_chain");
    run_on(&bin, "sigbus_chain", &[1, 2]);
    let ucx = [("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    run_pes(2, &[&bin], &ucx, Duration::from_secs(120)).assert_ok("sigbus_chain");
    let asked = [
        ("ACLSHMEM_TRANSPORT", "ucx"),
        ("UCX_TLS", "tcp"),
        ("UCX_HANDLE_ERRORS", "bt"),
        ("UCX_DEBUG_SIGNO", "SIGHUP"),
    ];
    let run = run_pes(2, &[&bin], &asked, Duration::from_secs(120));
    assert!(
        run.stdout
            .contains("leaves the disposition of SIGSEGV, SIGILL, SIGFPE and SIGHUP alone"),
        "UCX's handlers, asked for, stay:\n{}",
        run.dump()
    );
}

#[test]
fn symmetric_size_and_version_variables() {
    let bin = compile("heap_size");
    let run = run_pes(
        2,
        &[&bin],
        &[("SHMEM_SYMMETRIC_SIZE", "8M"), ("SHMEM_VERSION", "1")],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");
    assert!(
        run.stdout.contains("OpenSHMEM 1.5"),
        "SHMEM_VERSION=1 prints the version\n{}",
        run.dump()
    );
    // the specification's grammar: a decimal fraction (0.0078125g = 8 MiB), the deprecated SMA_
    // names when the SHMEM_ ones are unset, and a flag set to any value but the words for off
    for env in [
        &[
            ("SHMEM_SYMMETRIC_SIZE", "0.0078125g"),
            ("SHMEM_VERSION", "verbose"),
        ][..],
        &[
            ("SHMEM_SYMMETRIC_SIZE", ""),
            ("SMA_SYMMETRIC_SIZE", "8M"),
            ("SMA_VERSION", "yes please"),
        ][..],
    ] {
        let run = run_pes(2, &[&bin], env, Duration::from_secs(120));
        run.assert_ok("heap_size");
        assert!(
            run.stdout.contains("OpenSHMEM 1.5"),
            "{env:?} prints the version\n{}",
            run.dump()
        );
    }
    let run = run_pes(
        2,
        &[&bin],
        &[
            ("SHMEM_SYMMETRIC_SIZE", "8M"),
            ("SHMEM_VERSION", "off"),
            ("SMA_VERSION", "1"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");
    assert!(
        !run.stdout.contains("OpenSHMEM 1.5"),
        "SHMEM_VERSION=off wins over SMA_VERSION\n{}",
        run.dump()
    );
    // SHMEM_INFO: PE 0 prints the version and every setting with its value, once per job
    let run = run_pes(
        2,
        &[&bin],
        &[("SHMEM_SYMMETRIC_SIZE", "8M"), ("SHMEM_INFO", "1")],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");
    assert!(
        run.stdout.lines().filter(|l| l.contains("OpenSHMEM 1.5")).count() == 1
            && run.stdout.matches("libaclshmem environment:").count() == 1
            && run
                .stdout
                .lines()
                .any(|l| l.contains("SHMEM_SYMMETRIC_SIZE") && l.contains("8M"))
            && run
                .stdout
                .lines()
                .any(|l| l.contains("SHMEM_INFO") && l.contains("= 1")),
        "SHMEM_INFO=1 prints the settings\n{}",
        run.dump()
    );
    // SHMEM_DEBUG: the library's debug messages on every PE, on stderr as Sandia OpenSHMEM prints
    // them (the tests' launcher sets SHMEM_LOG_TO_STDOUT=1, which would send them to stdout), both
    // before the core's init and after it (the program data made symmetric)
    let run = run_pes(
        2,
        &[&bin],
        &[
            ("SHMEM_SYMMETRIC_SIZE", "8M"),
            ("SHMEM_DEBUG", "1"),
            ("SHMEM_LOG_TO_STDOUT", "0"),
        ],
        Duration::from_secs(120),
    );
    run.assert_ok("heap_size");
    for pe in 0..2 {
        let on_stderr = |what: &str| {
            run.stderr
                .lines()
                .any(|l| l.contains(" debug ") && l.contains(what))
        };
        assert!(
            on_stderr(&format!("shmem_init: PE {pe} of 2")),
            "SHMEM_DEBUG=1 prints debug messages of PE {pe} on stderr\n{}",
            run.dump()
        );
    }
    assert!(
        run.stderr
            .lines()
            .filter(|l| l.contains(" debug ") && l.contains("shmem_init:") && l.contains("data"))
            .count()
            >= 2,
        "SHMEM_DEBUG=1 keeps debug messages on after the core's init\n{}",
        run.dump()
    );
    assert!(
        !run.stdout.contains(" debug "),
        "SHMEM_DEBUG=1 prints nothing on stdout\n{}",
        run.dump()
    );
    let quiet = run_pes(
        2,
        &[&bin],
        &[("SHMEM_SYMMETRIC_SIZE", "8M")],
        Duration::from_secs(120),
    );
    quiet.assert_ok("heap_size");
    assert!(
        !format!("{}{}", quiet.stdout, quiet.stderr).contains("libaclshmem environment:"),
        "nothing printed without SHMEM_INFO\n{}",
        quiet.dump()
    );
}

#[test]
fn start_pes_finalizes_implicitly_at_exit() {
    let bin = compile("start_pes");
    for n in [1, 2, 4] {
        // several times: the failure it guards against (PE 0 leaving first ended the others with
        // status 1) depended on timing
        for _ in 0..3 {
            run_pes(n, &[&bin], &[], Duration::from_secs(60)).assert_ok("start_pes");
        }
        run_pes(
            n,
            &[bin.as_os_str(), "finalize".as_ref()],
            &[],
            Duration::from_secs(60),
        )
        .assert_ok("start_pes");
    }
    for n in [2, 4] {
        let run = run_pes(
            n,
            &[bin.as_os_str(), "exit".as_ref()],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(run.code(), 3, "{}", run.dump());
        assert!(run.elapsed < Duration::from_secs(20), "{}", run.dump());
    }
}

/// `tests/c/openshmem/no_finalize.c`: programs that call `shmem_init` and return from `main`
/// without `shmem_finalize` end with status 0 (finalized at exit, as Sandia OpenSHMEM does), a
/// PE that left still serves the others' accesses, and one that left while the others wait for it
/// ends the job with a message naming it instead of a hang.
#[test]
fn programs_without_finalize_are_finalized_at_exit() {
    let bin = compile("no_finalize");
    let warning = "the program began to exit without having called shmem_finalize";
    for n in [1, 2, 4] {
        for mode in ["reads", "race", "subteam", "fork"] {
            if n == 1 && mode == "subteam" {
                continue;
            }
            let run = run_pes(
                n,
                &[bin.as_os_str(), mode.as_ref()],
                &[],
                Duration::from_secs(120),
            );
            run.assert_ok(mode);
            // PE 0 says so, once
            assert_eq!(run.stderr.matches(warning).count(), 1, "{mode}: {}", run.dump());
        }
    }
    for n in [2, 4] {
        // a nonzero status: no implicit finalize, the job ends at once as when a PE dies
        let run = run_pes(
            n,
            &[bin.as_os_str(), "early".as_ref()],
            &[],
            Duration::from_secs(120),
        );
        assert_ne!(run.code(), 0, "{}", run.dump());
        assert!(run.stderr.contains("PE 1 died"), "{}", run.dump());
        assert!(run.elapsed < Duration::from_secs(20), "{}", run.dump());
        for (mode, says) in [
            ("early0", "PE 1 left the job"),
            ("early_coll", "PE 1 left the job"),
            ("early_wait", "every other PE left the job"),
        ] {
            let run = run_pes(
                n,
                &[bin.as_os_str(), mode.as_ref()],
                &[],
                Duration::from_secs(120),
            );
            assert_eq!(run.code(), 1, "{mode}: {}", run.dump());
            assert!(run.stderr.contains(says), "{mode}: {}", run.dump());
            assert!(run.failures().is_empty(), "{mode}: {}", run.dump());
            assert!(run.elapsed < Duration::from_secs(30), "{mode}: {}", run.dump());
        }
    }
}

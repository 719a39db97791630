//! CPU device mode (issue 13): `tests/c/kernel_tests.cpp`, a program with host code and Ascend C
//! kernels in one file (the upstream "fusion" layout), compiled by `scripts/aclshmem-cxx` (which
//! rewrites the `<<<blockDim, l2ctrl, stream>>>` launches), linked with libaclshmem and the CPU
//! ACL runtime libascendcl, and run on real PE processes through `aclshmrun`. Each test runs one
//! scenario of the program; the scenarios are described at the top of the C++ file.
//!
//! Needs python3 (the wrapper) and a C++ compiler; without them the tests call `skip()`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::kernel_build::{build_program, files_under, have, wrapper_command};
use common::{Run, run_pes};

/// The launcher's `--timeout` for every job.
const JOB_TIMEOUT: Duration = Duration::from_secs(120);

/// Compiles the test program with the wrapper and g++ (`c++`), only when a source, header or
/// library is newer, or returns None when python3 or c++ is missing.
fn program() -> Option<PathBuf> {
    static DONE: Mutex<Option<PathBuf>> = Mutex::new(None);
    build_program(&DONE, "kernel_tests", "c++")
}

/// `tests/c/kernel_ub_tests.cpp` (kernels that dereference `__ubuf__` pointers), built with
/// clang++ (the `%gs` UB address space); None when python3 or clang++ is missing.
fn ub_program() -> Option<PathBuf> {
    static DONE: Mutex<Option<PathBuf>> = Mutex::new(None);
    build_program(&DONE, "kernel_ub_tests", "clang++")
}

/// `tests/c/simt_tests.cpp` (SIMT kernels, `USE_SIMT`), built with g++ like `kernel_tests`.
fn simt_program() -> Option<PathBuf> {
    static DONE: Mutex<Option<PathBuf>> = Mutex::new(None);
    build_program(&DONE, "simt_tests", "c++")
}

/// The same SIMT program built with clang++ (the wrapper's default compiler on x86-64, where
/// SIMT sources get `ACLSHMEM_UB_DEREF=0`); None when python3 or clang++ is missing.
fn simt_clang_program() -> Option<PathBuf> {
    static DONE: Mutex<Option<PathBuf>> = Mutex::new(None);
    build_program(&DONE, "simt_tests:simt_tests_clang", "clang++")
}

fn scenario(name: &str, n: usize) -> Option<Run> {
    scenario_with(name, n, &[])
}

/// As [`scenario`], with extra environment variables.
fn scenario_with(name: &str, n: usize, env: &[(&str, &str)]) -> Option<Run> {
    let Some(prog) = program() else {
        common::skip(
            name,
            "python3 or c++ is missing (the CPU device mode's compiler wrapper needs both)",
        );
        return None;
    };
    run_scenario(&prog, name, n, env)
}

/// `tests/c/<stem>.cpp`, built with `cxx` (`c++`, or `clang++` into `<stem>_clang`), once per test
/// binary and compiler.
fn program_with(stem: &str, cxx: &str) -> Option<PathBuf> {
    type Cache = &'static Mutex<Option<PathBuf>>;
    static CACHES: Mutex<Vec<(String, Cache)>> = Mutex::new(Vec::new());
    let name = if cxx == "clang++" {
        format!("{stem}:{stem}_clang")
    } else {
        stem.to_string()
    };
    let cache = {
        let mut all = CACHES.lock().unwrap_or_else(|e| e.into_inner());
        match all.iter().find(|(n, _)| *n == name) {
            Some((_, c)) => *c,
            None => {
                let c: Cache = Box::leak(Box::new(Mutex::new(None)));
                all.push((name.clone(), c));
                c
            }
        }
    };
    build_program(cache, &name, cxx)
}

/// Runs `scenario` of `tests/c/<stem>.cpp` on `n` PEs, built with g++ and with clang++ (a missing
/// compiler is a loud skip of `test`); returns the runs.
fn with_both_compilers(test: &str, stem: &str, scenario: &str, n: usize) -> Vec<Run> {
    with_both_compilers_env(test, stem, scenario, n, &[])
}

/// [`with_both_compilers`] with extra environment variables.
fn with_both_compilers_env(
    test: &str,
    stem: &str,
    scenario: &str,
    n: usize,
    env: &[(&str, &str)],
) -> Vec<Run> {
    let mut runs = Vec::new();
    for cxx in ["c++", "clang++"] {
        let Some(prog) = program_with(stem, cxx) else {
            common::skip(
                test,
                &format!("python3 or {cxx} is missing (scripts/test-all.sh installs clang++)"),
            );
            continue;
        };
        runs.extend(run_scenario(&prog, scenario, n, env));
    }
    runs
}

/// A scenario of `tests/c/kernel_wrapper_tests.cpp` (launches in macros and in a local header,
/// vector-only code in MIX kernels), built with g++ and with clang++.
fn wrapper_scenario(name: &str, n: usize) -> Vec<Run> {
    with_both_compilers(name, "kernel_wrapper_tests", name, n)
}

/// A scenario of the SIMT program.
fn simt_scenario(name: &str, n: usize) -> Option<Run> {
    let Some(prog) = simt_program() else {
        common::skip(
            name,
            "python3 or c++ is missing (the CPU device mode's compiler wrapper needs both)",
        );
        return None;
    };
    run_scenario(&prog, name, n, &[])
}

/// A scenario of the SIMT program built with clang++.
fn simt_clang_scenario(name: &str, n: usize) -> Option<Run> {
    let Some(prog) = simt_clang_program() else {
        common::skip(
            name,
            "python3 or clang++ is missing (scripts/test-all.sh installs clang++)",
        );
        return None;
    };
    run_scenario(&prog, name, n, &[])
}

/// A scenario of the UB-dereference program (clang++, x86-64 only).
fn ub_scenario(name: &str, n: usize) -> Option<Run> {
    if !cfg!(target_arch = "x86_64") {
        common::skip(
            name,
            "direct UB dereference needs the x86-64 %gs segment (not available on this architecture)",
        );
        return None;
    }
    let Some(prog) = ub_program() else {
        common::skip(
            name,
            "python3 or clang++ is missing (UB dereferences need clang++; scripts/test-all.sh installs it)",
        );
        return None;
    };
    run_scenario(&prog, name, n, &[])
}

fn run_scenario(prog: &Path, name: &str, n: usize, env: &[(&str, &str)]) -> Option<Run> {
    let args = ["--tag-output".as_ref(), prog.as_os_str(), name.as_ref()];
    let mut all = vec![("ACLSHMEM_LOCAL_MEM_SIZE", "64M")];
    all.extend_from_slice(env);
    let run = run_pes(n, &args, &all, JOB_TIMEOUT);
    run.assert_ok(name);
    let ok = format!("OK {name}");
    assert_eq!(
        run.stdout.matches(&ok).count(),
        n,
        "not every PE reported success\n{}",
        run.dump()
    );
    Some(run)
}

/// SIMT (spec device-api 3): every simt:: family in thread/_block/_warp scope over 64 SIMT
/// threads, UB forms, p/g, team functions, threadIdx/blockDim and asc_syncthreads.
#[test]
fn simt_families_2pes() {
    simt_scenario("simt", 2);
}

#[test]
fn simt_families_3pes() {
    simt_scenario("simt", 3);
}

/// The SIMT program built with clang++, the wrapper's default compiler on x86-64.
#[test]
fn simt_families_clangxx_2pes() {
    simt_clang_scenario("simt", 2);
}

/// Bad asc_vf_call shapes, a throwing and a faulting SIMT thread fail the launch without a hang.
#[test]
fn simt_bad_calls_fail_the_launch_2pes() {
    simt_scenario("fail", 2);
}

#[test]
fn families_every_type_2pes() {
    scenario("families", 2);
}

#[test]
fn families_every_type_4pes() {
    scenario("families", 4);
}

/// The families over UCX (`ACLSHMEM_TRANSPORT=ucx`): a get_nbi into UB then a put_nbi from it,
/// with only `PipeBarrier` between (a fence here), must move the data; over a transport the UB
/// transfers complete before they return (`rma::transfer_full`). Failed before that.
#[test]
fn families_every_type_over_ucx_2pes() {
    scenario_with(
        "families",
        2,
        &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")],
    );
}

#[test]
fn atomics_device_vs_host_2pes() {
    scenario("atomics", 2);
}

#[test]
fn wait_test_families_every_type_2pes() {
    scenario("tests", 2);
}

#[test]
fn sized_and_byte_forms_2pes() {
    scenario("sized", 2);
}

/// `aclshmemx_set_qp_num` (its rules before and after init) and the SDMA calls on explicit queue
/// pairs of newer original headers: copies, per-queue quiets and notifies, a queue out of range
/// refused without a write; `aclshmemx_sync_vec[_all]`; the C++ `aclshmem_finalize(id)`.
#[test]
fn sdma_queue_pairs_2pes() {
    scenario("qp", 2);
}

/// `engine_qp`: RoCE and UDMA copies on explicit queue pairs and batches of deferred operations
/// (newer original headers): pointer and tensor forms, defer x N + submit and their
/// `pending_count`, queue-pair quiets, the UDMA queue-pair signal put, XSCALE as the RDMA backend
/// (`static_assert`, `if constexpr`); queue pairs and PEs out of range refused without a write and
/// logged; a RoCE queue-pair batch longer than ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS ends its block
/// with a logged error and writes nothing of the refused operation.
#[test]
fn roce_udma_queue_pairs_and_batches_2pes() {
    // the library's log goes to stdout, where the test can read it
    if let Some(run) = scenario_with("engine_qp", 2, &[("SHMEM_LOG_TO_STDOUT", "1")]) {
        for want in [
            "queue pair 4 does not exist",
            "queue pair 11 does not exist",
            "more than ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS (1023): split it",
        ] {
            assert!(run.stdout.contains(want), "the log has {want:?}\n{}", run.dump());
        }
    }
}

/// `udma_config`: the UDMA calls with a request-option template argument (newer original
/// headers): the library's `ACLSHMEMX_UDMA_OP_CONFIG_*` and the program's own constexpr configs on
/// single operations, batches (deferred with cqe 0, submit with cqe 1), queue pairs, signal puts and
/// atomics; every region, signal, pending_count and fetched value checked.
#[test]
fn udma_request_options_2pes() {
    with_both_compilers(
        "udma_request_options_2pes",
        "kernel_udma_config",
        "udma_config",
        2,
    );
}

/// `udma_relay` (a build with `ACLSHMEM_RELAY_SUPPORT`): relay puts, gets and batches land; a relay
/// call with a bad PE pair and a queue-pair call (which needs a build without relay support) end
/// their block with a logged error and write nothing.
#[test]
fn udma_relay_build_3pes() {
    let runs = with_both_compilers_env(
        "udma_relay_build_3pes",
        "kernel_udma_relay",
        "udma_relay",
        3,
        &[("SHMEM_LOG_TO_STDOUT", "1")],
    );
    for run in runs {
        for want in [
            "aclshmemx_udma_relay_put_nbi: pe 1 and relay_pe 1 must be two different PEs",
            "aclshmemx_udma_relay_get_nbi: pe 0 and relay_pe 1",
            "aclshmemx_udma_qp_put_nbi: the queue-pair UDMA calls need a build without ACLSHMEM_RELAY_SUPPORT",
            "aclshmemx_udma_qp_quiet: the queue-pair UDMA calls need a build without ACLSHMEM_RELAY_SUPPORT",
        ] {
            assert!(
                run.stdout.contains(want),
                "the log has no {want:?}\n{}",
                run.dump()
            );
        }
    }
}

/// A UDMA request option against the original's rules does not compile, with a message naming the
/// rule: a deferred operation with a completion entry, a single operation, submit or atomic
/// without one, a solicited event, an ordering above 7, a pipe other than PIPE_S/PIPE_MTE3. The
/// same program with valid options compiles (C++14 and C++17).
#[test]
fn udma_request_option_rules_fail_to_compile() {
    let name = "udma_request_option_rules_fail_to_compile";
    if !have("python3") || !have("c++") {
        common::skip(name, "python3 or c++ is missing");
        return;
    }
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let program = |body: &str| {
        format!(
            "#include \"kernel_operator.h\"\n#include \"shmem.h\"\n\
             constexpr aclshmemx_udma_op_config_t kSe{{1U, 1U, 0U, ACLSHMEMX_UDMA_ODR_RO}};\n\
             constexpr aclshmemx_udma_op_config_t kOdr{{1U, 0U, 0U, 8U}};\n\
             constexpr aclshmemx_udma_op_config_t kFence{{1U, 0U, 1U, ACLSHMEMX_UDMA_ODR_SO}};\n\
             [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void K(int32_t *d, int32_t *s, int64_t *w)\n\
             {{\n    int32_t *ub = nullptr;\n    aclshmemx_submit_state_t st{{}};\n\
                 aclshmemx_defer_t defer(st);\n    aclshmemx_submit_t submit(st);\n\
                 (void)ub, (void)defer, (void)submit, (void)d, (void)s, (void)w;\n    {body}\n}}\n"
        )
    };
    let compile = |tag: &str, body: &str, std: &str| {
        let file = dir.join(format!("udma_rule_{tag}_{}.cpp", std::process::id()));
        std::fs::write(&file, program(body)).unwrap();
        let out = wrapper_command(Some("c++"))
            .args([&format!("-std={std}"), "-Wall", "-Werror", "-fsyntax-only"])
            .arg(&file)
            .output()
            .expect("run aclshmem-cxx");
        let _ = std::fs::remove_file(&file);
        out
    };
    let valid = "aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, kFence>(d, s, ub, 4, 1, 0);\n\
        aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(d, s, ub, 4, 1, 0, defer);\n\
        aclshmemx_udma_get_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(d, s, ub, 4, 1, 0, submit);\n\
        (void)aclshmemx_udma_atomic_fetch_add<int64_t, kFence>(w, 1, 1);";
    for std in ["c++14", "c++17"] {
        let out = compile("valid", valid, std);
        assert!(
            out.status.success(),
            "valid options do not compile ({std}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let cases = [
        (
            "defer_cqe",
            "aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(d, s, ub, 4, 1, 0, defer);",
            "a deferred UDMA operation needs a CONFIG with cqe 0",
        ),
        (
            "single_no_cqe",
            "aclshmemx_udma_get_nbi<int32_t, PIPE_S, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(d, s, ub, 4, 1);",
            "this UDMA call needs a CONFIG with cqe 1",
        ),
        (
            "submit_no_cqe",
            "aclshmemx_udma_qp_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(d, s, ub, 4, 1, 0, 0, submit);",
            "this UDMA call needs a CONFIG with cqe 1",
        ),
        (
            "atomic_no_cqe",
            "aclshmemx_udma_atomic_inc<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(w, 1);",
            "this UDMA call needs a CONFIG with cqe 1",
        ),
        (
            "se",
            "aclshmemx_udma_put_signal_nbi<int32_t, kSe>(d, s, 4, reinterpret_cast<uint64_t *>(w), 1, 1);",
            "UDMA CONFIG: cqe and fence must be 0 or 1, se must be 0",
        ),
        (
            "odr",
            "aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, kOdr>(d, s, ub, 4, 1);",
            "UDMA CONFIG: cqe and fence must be 0 or 1, se must be 0, odr at most 7",
        ),
        (
            "pipe",
            "aclshmemx_udma_put_nbi<int32_t, PIPE_MTE2>(d, s, ub, 4, 1);",
            "the UDMA calls take WQE_PIPE PIPE_S or PIPE_MTE3",
        ),
    ];
    for (tag, body, want) in cases {
        let out = compile(tag, body, "c++17");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{tag}: compiled:\n{body}");
        assert!(stderr.contains(want), "{tag}: no {want:?} in:\n{stderr}");
    }
}

/// Launches inside `#define`s whose kernel names the macro pastes (`Fill_##NAME<<<...>>>`, as the
/// original's unit tests launch one kernel per type) and a launch in a template function of the
/// program's own header: aclshmem-cxx rewrites them in the preprocessed translation unit.
#[test]
fn wrapper_launches_in_macros_and_headers_2pes() {
    wrapper_scenario("macro_launch", 2);
}

/// `aclshmemx_enable_exception_report` / `aclshmemx_report_exception`: a launch in which one
/// context traps reaches the program's callback through the library, and each recorded failure is
/// logged once by the next report (with the instance's state at DEBUG).
#[test]
fn exception_report_of_a_trapping_kernel_2pes() {
    for run in wrapper_scenario("exception", 2) {
        let reports: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("aclshmem: runtime exception: task"))
            .collect();
        assert_eq!(reports.len(), 4, "two reports per PE expected:\n{}", run.dump());
        assert_eq!(
            reports.iter().filter(|l| l.contains("transports:")).count(),
            2,
            "one DEBUG report per PE expected:\n{}",
            run.dump()
        );
    }
}

/// MIX kernels whose bodies are compiled for vector cores only (`#ifdef __DAV_C220_VEC__`, with
/// and without `#else`, a template kernel) leave that code to the AIV contexts, as on the NPU, and
/// the original's device-barrier pattern (`aclshmemx_barrier_all_vec` between a read and a store
/// on the next PE) counts every launch exactly once.
#[test]
fn wrapper_vector_only_code_stays_off_the_aic_2pes() {
    wrapper_scenario("vec_guard", 2);
}

/// What upstream examples' host code uses beyond shmem.h: `aclshmemi_control_barrier_all()`
/// (C++ linkage, exported under its mangled name; ACLSHMEM_NOT_INITED before init, then a barrier
/// of every PE), `tiling/platform/platform_ascendc.h`'s queries (a vector launch of
/// `GetCoreNumAiv()` blocks), and the include paths `aclshmemi_host_common.h`, `aclshmem.h`,
/// `acl/acl_mdl.h`.
#[test]
fn upstream_host_internals_3pes() {
    wrapper_scenario("internals", 3);
}

/// A SIMT kernel source that calls `asc_vf_call` without defining `USE_SIMT` (the original's build
/// defines it for SIMT targets) gets the `simt::` API, and `fp16_t.h` / `bfloat16.h` are found
/// without their `opdev/` directory, as upstream sources include them; without `-std` the wrapper
/// compiles it as C++17 (the SIMT API's standard), and `-std=c++14` fails with one clear error.
#[test]
fn wrapper_simt_sources_and_opdev_headers_compile() {
    if !have("python3") || !have("c++") {
        common::skip(
            "wrapper_simt_sources_and_opdev_headers_compile",
            "python3 or c++ missing",
        );
        return;
    }
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("simt_auto_{}.cpp", std::process::id()));
    std::fs::write(
        &file,
        "#include \"kernel_operator.h\"\n#include \"shmem.h\"\n#include \"fp16_t.h\"\n\
         #include \"bfloat16.h\"\n\
         __simt_vf__ __launch_bounds__(32) inline void body(int32_t *p)\n\
         { simt::aclshmem_int32_p(p, static_cast<int32_t>(threadIdx.x), simt::aclshmem_my_pe()); }\n\
         __global__ __vector__ void k(int32_t *p) { asc_vf_call<body>(dim3(32), p); }\n",
    )
    .unwrap();
    for cxx in ["c++", "clang++"] {
        if !have(cxx) {
            common::skip(
                "wrapper_simt_sources_and_opdev_headers_compile",
                &format!("{cxx} missing"),
            );
            continue;
        }
        // with the standard given, and without (the wrapper picks C++17 for SIMT sources: clang++
        // would take C++14, which the SIMT API cannot be written in)
        for std in [Some("-std=c++17"), None] {
            let output = wrapper_command(Some(cxx))
                .args(std)
                .args(["-Wall", "-Werror", "-fsyntax-only"])
                .arg(&file)
                .output()
                .expect("run aclshmem-cxx");
            assert!(
                output.status.success(),
                "{cxx} {std:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        // an older standard asked for: one clear error
        let output = wrapper_command(Some(cxx))
            .args(["-std=c++14", "-fsyntax-only"])
            .arg(&file)
            .output()
            .expect("run aclshmem-cxx");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && err.contains("the SIMT API (asc_vf_call, simt::) needs C++17"),
            "{cxx} -std=c++14: {err}"
        );
    }
    let _ = std::fs::remove_file(&file);
}

/// A host program compiled through the wrapper (as some build the original's examples, main.cpp
/// included) is compiled as plain host code: names that only the device headers define, such as
/// `UB_ALIGN_SIZE`, stay free for the program's own definitions (the original's perftest mains
/// define it); `strlen` / `std::memcpy` come with `shmem.h` (those mains do not include
/// `<cstring>`), and the program runs.
#[test]
fn wrapper_compiles_host_programs_as_host_code_2pes() {
    if !have("python3") || !have("c++") {
        common::skip(
            "wrapper_compiles_host_programs_as_host_code_2pes",
            "python3 or c++ missing",
        );
        return;
    }
    common::ensure_built();
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("host_main_{}.cpp", std::process::id()));
    let out = dir.join(format!("host_main_{}", std::process::id()));
    std::fs::write(
        &src,
        "#include <cstdio>\n#include \"acl/acl.h\"\n#include \"shmem.h\"\n\
         const int UB_ALIGN_SIZE = 32;\n\
         int main()\n{\n    aclshmemx_init_attr_t attr;\n\
             if (aclshmemx_set_attr_from_env(&attr) != 0 || aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) != 0) {\n\
                 std::printf(\"FAIL: init\\n\");\n        return 1;\n    }\n\
             char b[4];\n    std::memcpy(b, \"ab\", 3);\n    if (std::strlen(b) != 2) {\n        return 1;\n    }\n\
             aclshmem_barrier_all();\n    std::printf(\"OK host %d\\n\", UB_ALIGN_SIZE);\n\
             return aclshmem_finalize();\n}\n",
    )
    .unwrap();
    for cxx in ["c++", "clang++"] {
        if !have(cxx) {
            continue;
        }
        let output = wrapper_command(Some(cxx))
            .args(["-std=c++17", "-Wall", "-Werror"])
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .expect("run aclshmem-cxx");
        assert!(
            output.status.success(),
            "{cxx}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let run = run_pes(2, &[out.as_os_str()], &[], JOB_TIMEOUT);
        run.assert_ok("host 32");
        assert_eq!(run.stdout.matches("OK host 32").count(), 2, "{}", run.dump());
    }
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
}

/// A compile with the original device compiler's options for a vector-only build (`-xcce
/// --cce-aicore-arch=dav-c220-vec --cce-auto-sync`, as the original's CMake builds vector-only
/// examples such as kv_shuffle): the wrapper takes them out and runs every kernel of the file
/// AIV-only, one without a core_ratio attribute included (blockDim contexts, not 3 per block).
#[test]
fn wrapper_vector_arch_builds_aiv_only_kernels() {
    if !have("python3") || !have("c++") {
        common::skip(
            "wrapper_vector_arch_builds_aiv_only_kernels",
            "python3 or c++ missing",
        );
        return;
    }
    common::ensure_built();
    let root = common::repo_root();
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("kernel_vec_arch_{}", std::process::id()));
    let output = wrapper_command(Some("c++"))
        .args([
            "-std=c++17",
            "-Wall",
            "-Werror",
            "-xcce",
            "--cce-aicore-arch=dav-c220-vec",
        ])
        .args(["--cce-auto-sync", "-mllvm", "-cce-aicore-stack-size=0x8000"])
        .arg(root.join("tests/c/kernel_vec_arch.cpp"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run aclshmem-cxx");
    assert!(
        output.status.success(),
        "compile failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    run_scenario(&out, "vec_arch", 2, &[]);
    let _ = std::fs::remove_file(&out);
}

/// A compile of a source whose launches the wrapper rewrites after preprocessing writes a
/// dependency file naming the source and its headers (not the wrapper's temporary files).
#[test]
fn wrapper_dependency_file_names_the_source_and_its_headers() {
    if !have("python3") || !have("c++") {
        common::skip(
            "wrapper_dependency_file_names_the_source_and_its_headers",
            "python3 or c++ missing",
        );
        return;
    }
    let root = common::repo_root();
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join(format!("wrapper_dep_{}.o", std::process::id()));
    let dep = obj.with_extension("d");
    let output = wrapper_command(Some("c++"))
        .args(["-std=c++17", "-MD", "-c"])
        .arg(root.join("tests/c/kernel_wrapper_tests.cpp"))
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("run aclshmem-cxx");
    assert!(
        output.status.success(),
        "compile failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&dep).expect("the dependency file next to the object");
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_file(&dep);
    assert!(
        text.starts_with(&format!("{}:", obj.display())),
        "target is not the object:\n{text}"
    );
    for needed in [
        "tests/c/kernel_wrapper_tests.cpp",
        "tests/c/kernel_wrapper_launch.h",
    ] {
        assert!(text.contains(needed), "{needed} missing:\n{text}");
    }
    assert!(!text.contains("aclshmem-cxx-"), "names a temporary file:\n{text}");
}

/// Kernels that choose their cube-core or vector-core code at compile time through g_coreType (a
/// member template defaulting to it with one specialization per kind, `if constexpr`,
/// std::conditional, in a header of the program; Ascend950 kernels do this): the AIC contexts of
/// MIX launches run the cube-core build, the AIV contexts the vector-core one; g++ and clang++.
#[test]
fn wrapper_core_type_picks_the_variant_of_each_context_2pes() {
    with_both_compilers(
        "wrapper_core_type_picks_the_variant_of_each_context_2pes",
        "kernel_core_type",
        "core_type",
        2,
    );
}

/// The same source compiled with `-c` and no `-o` next to another source (each object named after
/// its source, the cube-core build inside the first), then linked in a second command.
#[test]
fn wrapper_core_type_compile_then_link_2pes() {
    if !have("python3") || !have("c++") {
        common::skip(
            "wrapper_core_type_compile_then_link_2pes",
            "python3 or c++ missing",
        );
        return;
    }
    let root = common::repo_root();
    let dir = common::target_dir()
        .join("ctests")
        .join(format!("core_type_objects_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = wrapper_command(Some("c++"))
        .current_dir(&dir)
        .args(["-std=c++17", "-O1", "-Wall", "-Werror", "-c"])
        .arg(root.join("tests/c/kernel_core_type.cpp"))
        .arg(root.join("tests/c/kernel_vec_arch.cpp"))
        .output()
        .expect("run aclshmem-cxx");
    assert!(
        output.status.success(),
        "compile failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for obj in ["kernel_core_type.o", "kernel_vec_arch.o"] {
        assert!(dir.join(obj).exists(), "{obj} missing in {}", dir.display());
    }
    let nm = Command::new("nm")
        .arg(dir.join("kernel_core_type.o"))
        .output()
        .expect("run nm");
    let syms = String::from_utf8_lossy(&nm.stdout);
    assert!(
        syms.lines()
            .any(|l| l.contains(" W ") && l.contains("CoreTypeKernel__aclshmemi_aic")),
        "the cube-core kernel is not in the object:\n{syms}"
    );
    let prog = dir.join("kernel_core_type");
    let output = wrapper_command(Some("c++"))
        .arg(dir.join("kernel_core_type.o"))
        .arg("-o")
        .arg(&prog)
        .output()
        .expect("run aclshmem-cxx");
    assert!(
        output.status.success(),
        "link failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    run_scenario(&prog, "core_type", 2, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kernels whose names macros paste (`KindRatio_##type`), as upstream examples define one kernel
/// per type: aclshmem-cxx finds their kind (AIV-only or MIX) after preprocessing.
#[test]
fn kernel_kinds_through_macros_1pe() {
    scenario("kinds", 1);
}

#[test]
fn thousands_of_blocks_2pes() {
    scenario("many_blocks", 2);
}

#[test]
fn two_kernels_on_two_streams_2pes() {
    scenario("two_streams", 2);
}

#[test]
fn kernel_waits_for_another_pes_kernel_3pes() {
    scenario("cross_pe", 3);
}

#[test]
fn kernels_and_host_functions_in_stream_order_2pes() {
    scenario("stream_order", 2);
}

#[test]
fn engine_calls_2pes() {
    scenario("engines", 2);
}

#[test]
fn engine_calls_3pes() {
    scenario("engines", 3);
}

#[test]
fn sdma_notifies_reach_the_host_while_the_kernel_runs_2pes() {
    scenario("notify", 2);
}

#[test]
fn kernels_captured_into_a_graph_replay_2pes() {
    scenario("graph", 2);
}

#[test]
fn device_state_record_and_team_pools_2pes() {
    scenario("state", 2);
}

/// Spec device-api 2.9, 2.10, 2.5.3 (see `device_signals` in kernel_tests.cpp).
#[test]
fn device_signals_2pes() {
    scenario("device_signals", 2);
}

/// `TQue::AllocTensor` hands out free buffers only (see `tque` in kernel_tests.cpp).
#[test]
fn tque_buffers_are_handed_out_when_free_2pes() {
    scenario("tque", 2);
}

#[test]
fn device_signals_3pes() {
    scenario("device_signals", 3);
}

#[test]
fn device_state_record_and_team_pools_3pes() {
    scenario("state", 3);
}

/// `topo_list` carries the transport bits of the engines chosen at init (here SDMA and RoCE besides
/// MTE: every engine copies through the same mapping), as kernels that pick an engine per peer
/// read them.
#[test]
fn device_state_topo_list_shows_the_chosen_engines_2pes() {
    scenario_with("state", 2, &[("KERNEL_TEST_ENGINES", "0x7")]);
}

/// Block 0 fails (a C++ exception, then a fault) before it sets the flag the other blocks wait for
/// in each wait family: the waiting blocks end with the launch and the stream's synchronize fails
/// at once, naming block 0's failure (they waited for ever, the launch never completed, and
/// nothing was logged).
#[test]
fn blocks_waiting_for_a_failed_block_end_with_the_launch_2pes() {
    if let Some(run) = scenario_with("fail_while_waiting", 2, &[("SHMEM_LOG_TO_STDOUT", "1")]) {
        assert!(
            run.stdout.contains("kernel failed in 8 of 8 block contexts; block 0: C++ exception: TPipe::InitBuffer")
                && run.stdout.contains("kernel failed in 8 of 8 block contexts; block 0: fault: signal 11")
                && run.stdout.contains("aclshmem_int32_wait_until_all: internal error: another block of this kernel launch failed while this block waited"),
            "{}",
            run.dump()
        );
        assert!(run.elapsed < std::time::Duration::from_secs(60), "{}", run.dump());
    }
}

#[test]
fn faulting_kernel_reports_at_synchronize_2pes() {
    // the library's log goes to stdout, where the test can read it
    if let Some(run) = scenario_with("fault", 2, &[("SHMEM_LOG_TO_STDOUT", "1")]) {
        assert!(
            run.stdout.contains("block 3: fault: signal 11")
                || run.stdout.contains("block 3: fault: signal 4"),
            "the log names the faulting block and the signal\n{}",
            run.dump()
        );
        assert!(
            run.stdout.contains("trap()"),
            "the log names the trap\n{}",
            run.dump()
        );
        assert!(
            run.stdout.contains("launch-wide barrier is broken"),
            "SyncAll after a fault fails instead of hanging\n{}",
            run.dump()
        );
        // the launch's summary names the block that failed first, not one whose SyncAll failed
        // because of it
        assert!(
            run.stdout
                .contains("kernel failed in 4 of 4 block contexts; block 2: fault: signal 11"),
            "the summary names the cause\n{}",
            run.dump()
        );
    }
}

/// A block of PE 0 faults before the device barrier the other blocks of every PE wait in: PE 0 can
/// never join that barrier, so the job ends with a message (status 1) instead of going on with
/// every later barrier one off (PE 0's next host barrier met the others' device barrier, and the
/// job hung in finalize).
#[test]
fn fault_before_a_device_barrier_ends_the_job_2pes() {
    let Some(prog) = program() else {
        common::skip(
            "fault_before_a_device_barrier_ends_the_job_2pes",
            "python3 or c++ is missing (the CPU device mode's compiler wrapper needs both)",
        );
        return;
    };
    let args = [
        "--tag-output".as_ref(),
        prog.as_os_str(),
        "fault_in_barrier".as_ref(),
    ];
    let env = [("ACLSHMEM_LOCAL_MEM_SIZE", "64M")];
    let run = run_pes(2, &args, &env, JOB_TIMEOUT);
    assert_eq!(run.code(), 1, "{}", run.dump());
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("block 1: fault: signal 11") && all.contains("can no longer join"),
        "the message names the fault and why the job ends\n{}",
        run.dump()
    );
    assert!(!all.contains("FAIL"), "{}", run.dump());
    assert!(run.elapsed < std::time::Duration::from_secs(20), "{}", run.dump());
}

#[test]
fn bad_launches_are_refused_2pes() {
    if let Some(run) = scenario_with("bad_launch", 2, &[("SHMEM_LOG_TO_STDOUT", "1")]) {
        assert!(
            run.stdout.contains("blockDim 0 is outside"),
            "the refusal is logged\n{}",
            run.dump()
        );
        assert!(
            run.stdout.contains("blockDim 70000 is outside"),
            "the refusal is logged\n{}",
            run.dump()
        );
    }
}

/// The device headers and the kernel sources compile as C++14 with `-Wall -Wextra -Werror
/// -pedantic` through the wrapper (upstream kernels are C++14/17; the test program above is C++17).
#[test]
fn kernel_sources_compile_as_cxx14_pedantic() {
    if !have("python3") || !have("c++") {
        common::skip(
            "kernel_sources_compile_as_cxx14_pedantic",
            "python3 or c++ is missing (the CPU device mode's compiler wrapper needs both)",
        );
        return;
    }
    let root = common::repo_root();
    let mut sources = vec![
        root.join("tests/c/kernel_tests.cpp"),
        root.join("tests/c/kernel_udma_config.cpp"),
        root.join("tests/c/kernel_udma_relay.cpp"),
    ];
    for ex in ["allgather", "signal_ring", "atomic_counter", "ub_mix"] {
        sources.push(root.join(format!("c_examples/kernels/{ex}/{ex}_kernel.cpp")));
    }
    for src in sources {
        let out = wrapper_command(None)
            .args([
                "-std=c++14",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .arg(format!("-I{}", root.join("c_examples/kernels").display()))
            .arg(&src)
            .output()
            .expect("run aclshmem-cxx");
        assert!(
            out.status.success(),
            "{} does not compile as C++14:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // C++11 is refused with one clear message (it failed deep inside the launcher's templates)
    let out = wrapper_command(None)
        .args(["-std=c++11", "-fsyntax-only"])
        .arg(format!("-I{}", root.join("c_examples/kernels").display()))
        .arg(root.join("c_examples/kernels/allgather/allgather_kernel.cpp"))
        .output()
        .expect("run aclshmem-cxx");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err
                .lines()
                .find(|l| l.contains("error"))
                .is_some_and(|l| l.contains("needs C++14 or later")),
        "{err}"
    );
}

/// Kernels that store and load UB through raw `__ubuf__` pointers on several blocks at once (AIV
/// and MIX): each block context sees its own UB; UB forms of the RMA calls move the same bytes.
#[test]
fn ub_dereference_private_per_block_2pes() {
    ub_scenario("ub_private", 2);
}

#[test]
fn ub_dereference_private_per_block_4pes() {
    ub_scenario("ub_private", 4);
}

/// The allgather large-data style: control word and flag slots in UB, zeroed and polled by
/// dereference.
#[test]
fn ub_dereference_allgather_large_2pes() {
    ub_scenario("allgather_large", 2);
}

#[test]
fn ub_dereference_allgather_large_4pes() {
    ub_scenario("allgather_large", 4);
}

/// The device headers and every kernel source compile with clang++ in the UB address-space mode
/// (`__ubuf__` pointers are distinct types there: the UB-operand overloads must exist), and asking
/// for UB dereference with g++ is a compile-time error, not a kernel that faults later.
#[test]
fn ub_address_space_mode_compiles_and_gxx_refuses_it() {
    let name = "ub_address_space_mode_compiles_and_gxx_refuses_it";
    if !have("python3") || !have("c++") || !have("clang++") {
        common::skip(
            name,
            "python3, c++ or clang++ is missing (scripts/test-all.sh installs clang)",
        );
        return;
    }
    let root = common::repo_root();
    let compile = |cxx: &str, extra: &[&str], src: &Path| {
        wrapper_command(Some(cxx))
            .args(["-std=c++14", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
            .args(extra)
            .arg(format!("-I{}", root.join("c_examples/kernels").display()))
            .arg(src)
            .output()
            .expect("run aclshmem-cxx")
    };
    let mut sources = vec![
        root.join("tests/c/kernel_tests.cpp"),
        root.join("tests/c/kernel_udma_config.cpp"),
        root.join("tests/c/kernel_udma_relay.cpp"),
    ];
    for ex in ["allgather", "signal_ring", "atomic_counter", "ub_mix"] {
        sources.push(root.join(format!("c_examples/kernels/{ex}/{ex}_kernel.cpp")));
    }
    if cfg!(target_arch = "x86_64") {
        for src in &sources {
            let out = compile("clang++", &["-DACLSHMEM_UB_DEREF=1"], src);
            assert!(
                out.status.success(),
                "{} does not compile with clang++ in the UB address-space mode:\n{}",
                src.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let out = compile(
        "g++",
        &["-DACLSHMEM_UB_DEREF=1"],
        &root.join("tests/c/kernel_ub_tests.cpp"),
    );
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("needs clang++ on x86-64"),
        "g++ with ACLSHMEM_UB_DEREF=1 must stop with a clear error:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// MIX launches run their AIC contexts (`ASCEND_IS_AIC`) beside the AIVs, with the participant
/// sets of spec device-api 1.4/6.4/6.5.
#[test]
fn mix_kernels_run_aic_and_aiv_contexts_2pes() {
    scenario("mix_aic", 2);
}

#[test]
fn mix_kernels_run_aic_and_aiv_contexts_3pes() {
    scenario("mix_aic", 3);
}

/// `SHMEMI_PROF_START/END` record per block into the table `aclshmemx_get_prof` returns on the
/// profiled PE (SHMEM_CYCLE_PROF_PE), and nowhere else.
#[test]
fn prof_macros_record_per_block_2pes() {
    scenario_with("prof", 2, &[("SHMEM_CYCLE_PROF_PE", "0")]);
}

/// MULTI_INSTANCE kernels: a block's `aclshmemx_instance_ctx_set` selects the instance for that
/// block only (blocks of one launch on two instances at once); the host's current instance stays.
#[test]
fn blocks_select_their_own_instance_2pes() {
    let base = common::free_port_range();
    let range = format!("{base}:{}", base + 3);
    scenario_with(
        "multi_instance",
        2,
        &[("SHMEM_INSTANCE_PORT_RANGE", range.as_str())],
    );
}

/// Every device-side include path of the original (the current `shmem_*` ones and the
/// `aclshmem_*` ones of earlier releases, SIMT included) resolves and compiles through the
/// wrapper, all in one kernel translation unit.
#[test]
fn every_device_include_path_compiles() {
    if !have("python3") || !have("c++") {
        common::skip("every_device_include_path_compiles", "python3 or c++ missing");
        return;
    }
    let root = common::repo_root();
    let include = root.join("include");
    let mut headers = Vec::new();
    for dir in ["device", "device_simt", "gm2gm", "utils", "opdev"] {
        files_under(&include.join(dir), &mut headers);
    }
    let mut paths: Vec<String> = headers
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "h"))
        .map(|p| p.strip_prefix(&include).unwrap().display().to_string())
        .collect();
    paths.sort();
    assert!(
        paths
            .iter()
            .any(|p| p == "device/gm2gm/engine/shmem_device_udma.h")
            && paths.iter().any(|p| p == "device/gm2gm/aclshmem_device_rma.h"),
        "header list incomplete: {paths:?}"
    );
    let mut src = String::from("#define USE_SIMT 1\n#include \"kernel_operator.h\"\n");
    for p in &paths {
        src.push_str(&format!("#include \"{p}\"\n"));
    }
    src.push_str(
        "#include \"aclshmem.h\"\n#include \"shmem.h\"\n\
         extern \"C\" __global__ __aicore__ void probe(GM_ADDR p) {\n\
         \x20   aclshmem_int32_p((__gm__ int32_t *)p, aclshmem_my_pe(), 0);\n}\n",
    );
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("include_paths_{}.cpp", std::process::id()));
    std::fs::write(&file, src).unwrap();
    let output = wrapper_command(Some("c++"))
        .args(["-std=c++17", "-Wall", "-Werror", "-fsyntax-only"])
        .arg(&file)
        .output()
        .expect("run aclshmem-cxx");
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "the device include paths do not compile:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Programs written against an earlier release of the original: its host typed names
/// (`aclshmem_put_<T>_mem`, `aclshmem_get_<T>_mem[_nbi]`, `aclshmem_put_<T>_mem_signal[_nbi]`) and
/// device names (MTE and RoCE `*_mem_nbi` with event ids, half/bfloat16 families, generator
/// macros) compile with g++ and clang++, and a representative of each family gives checked results.
#[test]
fn earlier_release_names_2pes() {
    with_both_compilers("earlier_release_names_2pes", "compat_names", "compat", 2);
}

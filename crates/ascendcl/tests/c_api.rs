//! The C ABI of libascendcl.so, exercised by real C programs: `tests/c/acl_runtime.c` (behaviour,
//! one process per test) and `tests/c/acl_header_compile.c` (the headers as C11 and C++14 with
//! -Wall -Wextra -Werror -pedantic, alone and together with include/shmem.h in either order).
//! `cargo test` builds only the rlib, so the cdylib is built once per test process first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::SystemTime;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
        .to_path_buf()
}

/// `<target>/<profile>`, from this test binary's location (`<target>/<profile>/deps/…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary outside <target>/<profile>/deps")
        .to_path_buf()
}

fn ensure_built() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "ascendcl", "--lib"])
            .current_dir(repo_root());
        if profile_dir().file_name().is_some_and(|p| p == "release") {
            cmd.arg("--release");
        }
        assert!(
            cmd.status().expect("run cargo build").success(),
            "cargo build -p ascendcl failed"
        );
        assert!(
            profile_dir().join("libascendcl.so").exists(),
            "libascendcl.so was not built"
        );
    });
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

fn headers() -> Vec<PathBuf> {
    let inc = repo_root().join("include");
    [
        "acl/acl.h",
        "acl/acl_rt.h",
        "acl/acl_base.h",
        "acl/acl_base_rt.h",
        "acl/acl_shim.h",
    ]
    .iter()
    .map(|h| inc.join(h))
    .chain([inc.join("acl/error_codes/rt_error_codes.h"), inc.join("shmem.h")])
    .collect()
}

/// Compiles `tests/c/acl_runtime.c` once (when it or a header changed) and returns the binary.
fn runtime_binary() -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ensure_built();
    let root = repo_root();
    let src = root.join("tests/c/acl_runtime.c");
    let out_dir = profile_dir().parent().expect("target dir").join("ctests");
    std::fs::create_dir_all(&out_dir).expect("create <target>/ctests");
    let out = out_dir.join("acl_runtime");
    let newest = headers()
        .iter()
        .chain([&src])
        .filter_map(|p| mtime(p))
        .max()
        .expect("sources");
    if mtime(&out).is_some_and(|built| built >= newest) {
        return out;
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let tmp = out_dir.join(format!(
        ".acl_runtime.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let lib = profile_dir();
    let output = Command::new("gcc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .arg(format!("-L{}", lib.display()))
        .arg("-lascendcl")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lpthread")
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
    std::fs::rename(&tmp, &out).expect("move the test program into place");
    out
}

/// Runs one C test in its own process with a clean ACL_SHIM_* environment plus `env`.
fn run(test: &str, env: &[(&str, &str)]) {
    let bin = runtime_binary();
    let mut cmd = Command::new(&bin);
    cmd.arg(test);
    for var in [
        "ACL_SHIM_DEVICE_COUNT",
        "ACL_SHIM_SOC_NAME",
        "ACL_SHIM_DEVICE_MEM_SIZE",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let output = cmd.output().expect("run acl_runtime");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(&format!("ok {test}")),
        "C test {test} failed ({}):\n{stdout}{stderr}",
        output.status
    );
}

#[test]
fn init_finalize_cycles() {
    run("init_cycles", &[]);
}

#[test]
fn devices_default_count_soc_version() {
    run("devices", &[]);
}

/// aclrtGetDeviceInfo (every aclrtDevAttr) and aclGetDeviceCapability (every aclDeviceInfo) on every
/// device: the 910B4-like numbers, total memory = aclrtGetMemInfo's total, and each error path (bad
/// device id, NULL value, unsupported and unknown attributes) with its code and log message.
#[test]
fn device_info_and_capability() {
    run("device_info", &[]);
}

#[test]
fn environment_configuration() {
    run(
        "env_config",
        &[
            ("ACL_SHIM_DEVICE_COUNT", "4"),
            ("ACL_SHIM_SOC_NAME", "Ascend950PR_9599"),
            ("ACL_SHIM_DEVICE_MEM_SIZE", "256M"),
        ],
    );
}

#[test]
fn invalid_environment_falls_back_to_defaults() {
    run(
        "env_invalid",
        &[("ACL_SHIM_DEVICE_COUNT", "banana"), ("ACL_SHIM_SOC_NAME", "")],
    );
    run("env_invalid", &[("ACL_SHIM_DEVICE_COUNT", "0")]);
}

#[test]
fn memory_copy_set_and_error_codes() {
    run("memory", &[]);
}

#[test]
fn stream_order() {
    run("stream_order", &[]);
}

#[test]
fn stream_errors_timeouts_and_destroyed_handles() {
    run("stream_errors", &[]);
}

#[test]
fn events() {
    run("events", &[]);
}

#[test]
fn callbacks() {
    run("callbacks", &[]);
}

#[test]
fn notifies_and_cmo() {
    run("notifies", &[]);
}

#[test]
fn graph_capture_and_replay() {
    run("capture", &[]);
}

#[test]
fn many_streams() {
    run("many_streams", &[]);
}

#[test]
fn destroy_with_pending_work() {
    run("destroy_pending", &[]);
}

#[test]
fn contexts() {
    run("contexts", &[]);
}

#[test]
fn threads_have_their_own_current_device() {
    run("threads", &[]);
}

#[test]
fn synchronize_device() {
    run("sync_device", &[]);
}

#[test]
fn error_messages_and_last_error() {
    run("error_messages", &[]);
}

/// aclrtReserveMemAddress / aclrtMallocPhysical / aclrtMapMem / aclrtUnmapMem / aclrtFreePhysical /
/// aclrtReleaseMemAddress: two views of one physical object share their bytes, every rule is
/// checked with its return code.
#[test]
fn virtual_memory_reserve_map_and_errors() {
    run("vmem", &[]);
}

/// aclrtSetExceptionInfoCallback and the aclrtGet*FromExceptionInfo readers: a failing task calls
/// the callback once with what failed; successful tasks do not; NULL removes it.
#[test]
fn exception_callback_on_failing_tasks() {
    run("exceptions", &[]);
}

fn compile_header(compiler: &str, std: &str, lang: &str, order: u32) {
    let src = repo_root().join("tests/c/acl_header_compile.c");
    compile_c(compiler, std, lang, &src, &[format!("-DORDER={order}")]);
}

/// Compiles `src` (with the repository's include directory) as `lang` in `std`, warnings as
/// errors and `-pedantic`; panics with the compiler's output when it fails.
fn compile_c(compiler: &str, std: &str, lang: &str, src: &Path, extra: &[String]) {
    let root = repo_root();
    let stem = src
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let out = std::env::temp_dir().join(format!(
        "acl-{stem}-{}-{std}-{}.o",
        std::process::id(),
        extra.join("").replace(['=', '-'], "")
    ));
    let output = Command::new(compiler)
        .args([&format!("-std={std}"), "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .args(extra)
        .args(["-x", lang, "-c"])
        .arg(src)
        .arg(format!("-I{}", root.join("include").display()))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run compiler");
    let _ = std::fs::remove_file(&out);
    assert!(
        output.status.success(),
        "{compiler} -std={std} {extra:?} {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `tests/c/device_query_compile.c` (in this crate): the device-query enums and prototypes through
/// `acl/acl.h` alone, as C11 and as C++14 (including the `aclDeviceInfo::ACL_DEVICE_INFO_*` spelling).
#[test]
fn device_query_declarations_compile_as_c11_and_cxx14() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/device_query_compile.c");
    for (compiler, std, lang) in [("gcc", "c11", "c"), ("g++", "c++14", "c++")] {
        compile_c(compiler, std, lang, &src, &[]);
    }
}

#[test]
fn headers_compile_as_c11_alone_and_with_shmem_h() {
    for order in 0..=4 {
        compile_header("gcc", "c11", "c", order);
    }
}

#[test]
fn headers_compile_as_cxx14_alone_and_with_shmem_h() {
    for order in 0..=4 {
        compile_header("g++", "c++14", "c++", order);
    }
}

/// Every function the headers declare is exported by the library under its plain name, and the
/// library exports nothing else that looks like ACL.
#[test]
fn every_declared_function_is_exported() {
    ensure_built();
    let inc = repo_root().join("include/acl");
    let mut declared: Vec<String> = Vec::new();
    for h in ["acl_rt.h", "acl_base_rt.h", "acl_shim.h"] {
        let text = std::fs::read_to_string(inc.join(h)).expect("read header");
        // Declarations may span lines: join everything and split at ';'.
        for decl in text.replace('\n', " ").split(';') {
            let Some(pos) = decl.find("ACL_FUNC_VISIBILITY") else {
                continue;
            };
            let rest = &decl[pos..];
            if rest.starts_with("ACL_FUNC_VISIBILITY __") || rest.starts_with("ACL_FUNC_VISIBILITY _declspec")
            {
                continue; // the macro definition itself
            }
            let name = rest.split('(').next().unwrap().split_whitespace().last().unwrap();
            declared.push(name.trim_start_matches('*').to_string());
        }
    }
    assert!(declared.len() > 40, "found only {} declarations", declared.len());
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(profile_dir().join("libascendcl.so"))
        .output()
        .expect("run nm");
    assert!(nm.status.success());
    let symbols = String::from_utf8_lossy(&nm.stdout);
    let exported: Vec<&str> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("acl"))
        .collect();
    for name in &declared {
        assert!(
            exported.contains(&name.as_str()),
            "{name} is declared but not exported"
        );
    }
    for name in &exported {
        assert!(
            declared.iter().any(|d| d == name),
            "{name} is exported but not declared"
        );
    }
}

#[test]
fn soname_is_libascendcl_so() {
    ensure_built();
    let out = Command::new("objdump")
        .arg("-p")
        .arg(profile_dir().join("libascendcl.so"))
        .output()
        .expect("run objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains("SONAME") && l.trim_end().ends_with("libascendcl.so")),
        "{text}"
    );
}

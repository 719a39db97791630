//! The panic boundary, proved from C: `crates/panic-probe` builds `libaclshmem_panic_probe.so`,
//! every export of the library plus `aclshmemx_test_panic`, which panics inside `ffi::guard`.
//! `tests/c/panic_probe.c` links it instead of libaclshmem.so and calls the hook before and after
//! init on 2 PEs: every call returns ACLSHMEM_INNER_ERROR, the log names the panic, the processes
//! do not abort, and allocation, RMA, barriers and finalize keep working.
//!
//! The hook lives in a package of its own, so the library the other tests load (and the one
//! installed) never carries it.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The probe library, as `<target>/panic-probe/libaclshmem.so`: its SONAME is libaclshmem.so (the
/// root package's build script gives its link arguments to the cdylibs that depend on it), so the
/// program links it under that name from a directory of its own. Returns that directory.
fn probe_library() -> PathBuf {
    common::ensure_built();
    let built = common::profile_dir().join("libaclshmem_panic_probe.so");
    let dir = common::target_dir().join("panic-probe");
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!(".libaclshmem.so.{}", std::process::id()));
    std::fs::copy(&built, &tmp).expect("copy libaclshmem_panic_probe.so");
    std::fs::rename(&tmp, dir.join("libaclshmem.so")).unwrap();
    dir
}

#[test]
fn panic_becomes_an_error_code_2pes() {
    let lib = probe_library();
    let root = common::repo_root();
    let exe = common::target_dir().join("ctests").join("panic_probe");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let status = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(root.join("tests/c/panic_probe.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-laclshmem")
        .status()
        .expect("run gcc");
    assert!(status.success(), "compiling panic_probe.c failed");
    // cargo's LD_LIBRARY_PATH names <target>/debug, which would win over the rpath
    let lib_path = lib.display().to_string();
    let run = common::run_pes(
        2,
        &[&exe],
        &[("LD_LIBRARY_PATH", lib_path.as_str())],
        Duration::from_secs(60),
    );
    run.assert_ok("panic");
    let out = format!("{}{}", run.stdout, run.stderr);
    for n in 1..=4 {
        assert!(
            out.contains(&format!(
                "aclshmemx_test_panic: internal error: panic: test panic {n}"
            )),
            "the log does not name panic {n}:\n{}",
            run.dump()
        );
    }
}

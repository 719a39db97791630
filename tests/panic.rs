//! The panic boundary, proved from C: a build of the library with the `test-panic` feature exports
//! `aclshmemx_test_panic`, which panics inside `ffi::guard`. `tests/c/panic_probe.c` calls it before
//! and after init on 2 PEs: every call returns ACLSHMEM_INNER_ERROR, the log names the panic, the
//! processes do not abort, and allocation, RMA, barriers and finalize keep working.
//!
//! The feature build goes to its own target directory (`<target>/panic-build`), so the library the
//! other tests load never carries the hook.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// Builds the `test-panic` library and returns the directory holding its libaclshmem.so.
fn panic_library() -> PathBuf {
    let target = common::target_dir().join("panic-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "aclshmem",
            "--features",
            "test-panic",
            "--target-dir",
        ])
        .arg(&target)
        .current_dir(common::repo_root())
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build --features test-panic failed");
    target.join("debug")
}

#[test]
fn panic_becomes_an_error_code_2pes() {
    let lib = panic_library();
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

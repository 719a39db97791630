//! Platform-dependent C types of the typed families, checked on the platform the tests run on
//! (scripts/aarch64-check.sh runs the same programs under qemu-aarch64):
//! * `tests/c/platform_char.c`: the `char` families compare as the platform's plain `char`
//!   (signed on x86-64, unsigned on AArch64): max/min-reduce and test of 0xC8 against 0x64.
//! * `tests/c/openshmem/platform_longdouble.c`: the `longdouble` families move all 16 bytes of a
//!   `long double` (x87 80-bit on x86-64, IEEE binary128 on AArch64) through put, p/g, broadcast,
//!   fcollect and alltoall.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{ensure_built, profile_dir, repo_root, run_pes, target_dir};

const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn char_families_follow_the_platform_char() {
    let prog = common::compile_c("platform_char");
    for n in [2, 3] {
        run_pes(n, &[&prog], &[], TIMEOUT).assert_ok("platform_char");
    }
}

#[test]
fn longdouble_families_move_every_byte() {
    ensure_built();
    let out_dir = target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let prog = out_dir.join("osh_platform_longdouble");
    let output = Command::new(repo_root().join("scripts/osh/oshcc"))
        .env("ACLSHMEM_LIB_DIR", profile_dir())
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(repo_root().join("tests/c/openshmem/platform_longdouble.c"))
        .arg("-o")
        .arg(&prog)
        .output()
        .expect("run oshcc");
    assert!(
        output.status.success(),
        "oshcc platform_longdouble.c failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for n in [1, 2, 4] {
        run_pes(n, &[&prog], &[], TIMEOUT).assert_ok("platform_longdouble");
    }
}

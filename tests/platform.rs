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

/// The library loaded with `dlopen` after six libraries with 256 bytes of initial-exec TLS each
/// (most of the room glibc keeps in the static TLS block for libraries loaded later), as in a
/// Python process that imported such extension modules first: it loads and works from two threads
/// (`tests/c/dlopen_late.c`). It used to need 408 bytes of static TLS (its per-thread call entry
/// was an initial-exec word), and `dlopen` refused it.
#[test]
fn loads_with_dlopen_after_the_static_tls_room_is_used() {
    ensure_built();
    let dir = target_dir().join("ctests").join("dlopen_late");
    std::fs::create_dir_all(&dir).unwrap();
    let fill = dir.join("fill.c");
    std::fs::write(
        &fill,
        "__thread char fill_tls[256] __attribute__((tls_model(\"initial-exec\")));\n\
         char *fill_addr(void) { return fill_tls; }\n",
    )
    .unwrap();
    for i in 1..=6 {
        let st = Command::new("gcc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(dir.join(format!("libfill{i}.so")))
            .arg(&fill)
            .status()
            .expect("gcc");
        assert!(st.success(), "building libfill{i}.so");
    }
    let prog = dir.join("dlopen_late");
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&prog)
        .arg(repo_root().join("tests/c/dlopen_late.c"))
        .arg("-I")
        .arg(repo_root().join("include"))
        .args(["-ldl", "-lpthread"])
        .output()
        .expect("gcc");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lib = profile_dir().join("libaclshmem.so");
    for n in [1, 2] {
        run_pes(
            n,
            &[prog.as_os_str(), dir.as_os_str(), lib.as_os_str()],
            &[],
            TIMEOUT,
        )
        .assert_ok("dlopen_late");
    }
}

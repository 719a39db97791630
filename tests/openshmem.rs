//! The OpenSHMEM 1.5 surface (crates/openshmem, include/openshmem/shmem.h): C programs of
//! tests/c/openshmem/ written against the standard API, built like `oshcc` builds them and run
//! under the launcher on 1, 2, 4 and 8 PEs; the header's C11 generic selection; both APIs in one
//! process; the exported symbols.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{ensure_built, profile_dir, repo_root, run_pes, target_dir};

/// Compiles `tests/c/openshmem/<name>.c` (plus `extra` sources) with the OpenSHMEM header first on
/// the include path, as `oshcc` does, into `<target>/ctests/osh_<name>`.
fn compile(name: &str, extra: &[&str], flags: &[&str]) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ensure_built();
    let root = repo_root();
    let dir = root.join("tests/c/openshmem");
    let out_dir = target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join(format!("osh_{name}"));
    let lib = profile_dir();
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg(format!("-I{}", root.join("include/openshmem").display()))
        .arg(dir.join(format!("{name}.c")));
    for e in extra {
        cmd.arg(dir.join(e));
    }
    let output = cmd
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib.display()))
        .arg("-laclshmem")
        .arg("-lpthread")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("run gcc");
    assert!(
        output.status.success(),
        "compiling {name} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

fn run_on(bin: &PathBuf, scenario: &str, pes: &[usize]) {
    for &n in pes {
        let run = run_pes(n, &[bin], &[], Duration::from_secs(120));
        run.assert_ok(scenario);
    }
}

#[test]
fn rma_amo_signals_waits_locks() {
    let bin = compile("rma_amo", &[], &[]);
    run_on(&bin, "rma_amo", &[1, 2, 4, 8]);
}

#[test]
fn single_pe_without_launcher() {
    let bin = compile("rma_amo", &[], &[]);
    let out = Command::new(&bin)
        .env("ACLSHMEM_LOCAL_MEM_SIZE", "16M")
        .env_remove("ACLSHMEM_MY_PE")
        .env_remove("ACLSHMEM_N_PES")
        .env_remove("ACLSHMEM_IP_PORT")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("OK rma_amo"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn exports_the_standard_symbols() {
    ensure_built();
    let out = Command::new("nm").arg("-D").arg("--defined-only").arg(profile_dir().join("libaclshmem.so")).output();
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
        assert!(text.lines().any(|l| l.ends_with(&format!(" {sym}"))), "{sym} not exported");
    }
}

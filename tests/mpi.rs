//! ACLSHMEMX_INIT_WITH_MPI under Open MPI's and MPICH's mpirun: a program that initialises MPI
//! itself and passes its communicator, and a program without MPI where the library loads and
//! initialises MPI on its own; 20 init/finalize cycles each. OpenSHMEM programs started by plain
//! `mpirun` (not `oshrun`): `shmem_init` bootstraps over MPI. scripts/test-all.sh installs
//! openmpi-bin, libopenmpi-dev, mpich and libmpich-dev.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn build(compiler: &str, name: &str, with_mpi: bool) -> PathBuf {
    common::compile_c("mpi_init"); // builds the library, checks the source compiles
    let root = common::repo_root();
    let lib = common::profile_dir();
    let out = common::target_dir()
        .join("ctests")
        .join(format!("mpi_init_{name}_{}", std::process::id()));
    let mut cmd = Command::new(compiler);
    cmd.args(["-std=c11", "-O1", "-Wall", "-Werror"]);
    if with_mpi {
        cmd.arg("-DWITH_MPI_H");
    }
    let status = cmd
        .arg(root.join("tests/c/mpi_init.c"))
        .arg("-I")
        .arg(root.join("include"))
        .arg(format!("-L{}", lib.display()))
        .arg("-laclshmem")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| {
            panic!("{compiler} not found ({e}): install openmpi-bin libopenmpi-dev mpich libmpich-dev")
        });
    assert!(status.success(), "{compiler} failed");
    out
}

fn mpirun(launcher: &str, n: usize, prog: &PathBuf) {
    mpirun_expecting(launcher, n, prog, "OK mpi");
    let _ = std::fs::remove_file(prog);
}

/// Runs `prog` on `n` processes of `launcher`; every process must succeed, the output must hold
/// `marker` and no `FAIL:` line. Returns the output.
fn mpirun_expecting(launcher: &str, n: usize, prog: &PathBuf, marker: &str) -> String {
    let mut cmd = Command::new("timeout");
    cmd.arg("120").arg(launcher);
    if launcher.contains("openmpi") {
        cmd.args(["--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma"]);
    }
    let out = cmd
        .args(["-np", &n.to_string()])
        .arg(prog)
        .env("SHMEM_LOG_TO_STDOUT", "1")
        .output()
        .unwrap_or_else(|e| panic!("{launcher} not found ({e})"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains(marker) && !text.contains("FAIL:"),
        "{launcher} -np {n}:\n{text}"
    );
    text
}

#[test]
fn open_mpi_program_passes_its_communicator() {
    mpirun("mpirun.openmpi", 3, &build("mpicc.openmpi", "ompi", true));
}

#[test]
fn open_mpi_library_initialises_mpi_itself() {
    mpirun("mpirun.openmpi", 2, &build("gcc", "plain_ompi", false));
}

#[test]
fn mpich_program_passes_its_communicator() {
    mpirun("mpirun.mpich", 3, &build("mpicc.mpich", "mpich", true));
}

#[test]
fn mpich_library_initialises_mpi_itself() {
    mpirun("mpirun.mpich", 2, &build("gcc", "plain_mpich", false));
}

/// PE 1 returns 3 from `main` while the others wait in a barrier for it: the job ends with a
/// nonzero status under both MPIs (the library's `MPI_Finalize` at exit, collective, waited for
/// the others for ever, and so did they). The same with 0 and no finalize: PE 1 tells the others
/// it left, and their barrier fails naming it (they waited for ever).
#[test]
fn a_pe_ending_with_a_nonzero_status_ends_the_job_under_mpirun() {
    for (launcher, name, ret) in [
        ("mpirun.openmpi", "ret_ompi", "3"),
        ("mpirun.mpich", "ret_mpich", "3"),
        ("mpirun.openmpi", "ret0_ompi", "0"),
        ("mpirun.mpich", "ret0_mpich", "0"),
    ] {
        let prog = build("gcc", name, false);
        let mut cmd = Command::new("timeout");
        cmd.arg("60").arg(launcher);
        if launcher.contains("openmpi") {
            cmd.args(["--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma"]);
        }
        let out = cmd
            .args(["-np", "2"])
            .arg(&prog)
            .env("MPI_INIT_RETURN", ret)
            .env("SHMEM_LOG_TO_STDOUT", "1")
            .output()
            .unwrap_or_else(|e| panic!("{launcher} not found ({e})"));
        let code = out.status.code();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            code.is_some_and(|c| c != 0 && c != 124),
            "{launcher} (PE 1 returns {ret}): status {code:?} (124: the job hung)\n{text}"
        );
        if ret == "0" {
            assert!(
                text.contains("PE 1 left the job"),
                "{launcher}: the barrier's failure names PE 1\n{text}"
            );
        }
        let _ = std::fs::remove_file(&prog);
    }
}

/// An OpenSHMEM program built with `oshcc` (tests/c/openshmem/<name>.c).
fn oshcc(name: &str) -> PathBuf {
    let root = common::repo_root();
    let out = common::target_dir()
        .join("ctests")
        .join(format!("mpi_osh_{name}_{}", std::process::id()));
    common::ensure_built();
    let status = Command::new(root.join("scripts/osh/oshcc"))
        .env("ACLSHMEM_LIB_DIR", common::profile_dir())
        .args(["-std=c11", "-O1", "-Wall", "-Werror"])
        .arg(root.join(format!("tests/c/openshmem/{name}.c")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run oshcc");
    assert!(status.success(), "oshcc {name}.c failed");
    out
}

/// Started by `mpirun` directly, `shmem_init` used to find rank and size but no rendezvous
/// address and ran every process as PE 0 of 1, exiting 0. Now it bootstraps over MPI (as
/// OSHMEM and Sandia OpenSHMEM run under `mpirun`): the RMA/AMO program, and one that returns
/// from main without `shmem_finalize`. Only PE 0 prints the OK line: once per job, not once per
/// process.
#[test]
fn openshmem_programs_under_plain_mpirun() {
    let once = |launcher: &str, n: usize, prog: &PathBuf, marker: &str| {
        let text = mpirun_expecting(launcher, n, prog, marker);
        assert_eq!(
            text.matches(marker).count(),
            1,
            "{launcher} -np {n}: one job of {n} PEs prints \"{marker}\" once:\n{text}"
        );
    };
    let rma = oshcc("rma_amo");
    once("mpirun.openmpi", 2, &rma, "OK rma_amo");
    once("mpirun.openmpi", 4, &rma, "OK rma_amo");
    once("mpirun.mpich", 3, &rma, "OK rma_amo");
    let _ = std::fs::remove_file(&rma);
    let nofin = oshcc("no_finalize");
    once("mpirun.openmpi", 3, &nofin, "OK no_finalize");
    let _ = std::fs::remove_file(&nofin);
}

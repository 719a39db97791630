//! `/dev/shm` running out after init is a clear error, never a SIGBUS (heap pages are reserved
//! when a heap is created, `ACLSHMEM_SHM_PREALLOCATE`, on by default); with pages allocated on
//! first touch it is a SIGBUS that the PE explains before it ends.
//!
//! The job runs in a private mount namespace (`unshare -m`, needs root) whose `/dev/shm` is a
//! 64 MiB tmpfs, so filling it disturbs nothing else on the machine.

mod common;

fn run_in_small_shm(prealloc: &str) -> (i32, String) {
    common::run_in_small_dev_shm(
        &common::compile_c("shm_fill"),
        2,
        &[
            ("ACLSHMEM_LOCAL_MEM_SIZE", "16M"),
            ("ACLSHMEM_SHM_PREALLOCATE", prealloc),
        ],
        &[],
    )
}

#[test]
fn filling_dev_shm_after_init_is_not_a_sigbus() {
    if !common::can_unshare() {
        common::skip(
            "filling_dev_shm_after_init_is_not_a_sigbus",
            "needs root for a private mount namespace (unshare -m)",
        );
        return;
    }
    let (code, text) = run_in_small_shm("1");
    assert!(
        code == 0 && text.contains("OK shm_fill"),
        "with reserved heap pages the job failed (exit {code}):\n{text}"
    );
    // the same program with pages allocated on first touch ends with SIGBUS (so the test can
    // fail), and the PE that hit it says why first instead of dying silently
    let (code, text) = run_in_small_shm("0");
    assert!(
        code != 0 && !text.contains("OK shm_fill"),
        "without reservation the job was expected to fail (exit {code}):\n{text}"
    );
    assert!(
        text.contains(": no memory could back the symmetric-memory page at 0x")
            && text.contains("(/dev/shm) is full")
            && text.contains("ACLSHMEM_SHM_PREALLOCATE=1"),
        "the SIGBUS of an unbacked heap page was not explained (exit {code}):\n{text}"
    );
    assert!(
        text.contains("aclshmem: PE 0: no memory") || text.contains("aclshmem: PE 1: no memory"),
        "the message does not name the PE:\n{text}"
    );
}

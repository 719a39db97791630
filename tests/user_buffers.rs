//! `aclshmemx_init_attr_with_buffers` and `aclshmemx_get_buffer_ptr` (`tests/c/user_buffers.c`):
//! the program's own device buffers as a fixed part of the symmetric heap, on one node through
//! shared memory and through UCX, their errors, and layouts that differ between PEs.

mod common;

use std::time::Duration;

fn run(n: usize, scenario: &str, env: &[(&str, &str)]) {
    let prog = common::compile_c("user_buffers");
    let run = common::run_pes(
        n,
        &[prog.to_str().unwrap(), scenario],
        env,
        Duration::from_secs(120),
    );
    run.assert_ok(scenario);
}

#[test]
fn buffers_in_the_heap_2pes() {
    run(2, "basic", &[]);
}

#[test]
fn buffers_in_the_heap_4pes() {
    run(4, "basic", &[]);
}

/// The same program with every peer reached through UCX (the buffers registered with it as part
/// of the heap, no shared-memory mapping of the peers).
#[test]
fn buffers_in_the_heap_over_ucx_2pes() {
    assert!(
        common::ucx_installed(),
        "UCX is not installed (apt-get install libucx0): the UCX tests cannot run"
    );
    run(2, "basic", &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")]);
}

#[test]
fn refusals_leave_the_library_uninitialised() {
    run(1, "errors", &[]);
}

#[test]
fn layouts_that_differ_fail_on_every_pe_3pes() {
    run(3, "mismatch", &[]);
}

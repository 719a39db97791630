//! Put-with-signal, signal waits, the typed wait/test families and the host atomics across real PE
//! processes: each test runs one scenario of `tests/c/sync_tests.c` under `aclshmrun`.
//!
//! * `producer_consumer`: a ring where every PE put-signals a block to its right neighbour with
//!   every put-with-signal family in turn (SET and ADD phases) and acknowledges what it received;
//!   the whole block is checked every round, so stale or torn data is caught.
//! * `wait_families`: PE 1 changes PE 0's variables over time while PE 0 runs every wait/test
//!   family of every type with status masks and per-element comparison values.
//! * `edge_cases`: empty and fully excluded sets, NULL arguments, invalid `cmp`, rejected
//!   put-with-signal calls (bad `sig_op`, misaligned or foreign `sig_addr`, bad PE or `dst`).
//! * `atomics`, `cas_lock`: contended AMOs with exact totals, round trips of every AMO type, a
//!   compare-and-swap spin lock.
//! * `ring_waits`: a token passed around 4 and 16 PEs (more PEs than cores): the waiting policy
//!   must not collapse.
//!
//! Every run has the launcher's own `--timeout` plus a harness-side limit, so a lost signal turns
//! into a failure instead of a hang.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Run, run_pes};

/// The launcher's `--timeout` for every job.
const JOB_TIMEOUT: Duration = Duration::from_secs(45);

fn sync_tests() -> PathBuf {
    common::compile_c("sync_tests")
}

/// Runs `scenario` (with optional extra arguments) on `n` PEs and asserts it passed.
fn scenario_env(scenario: &str, extra: &[&str], n: usize, env: &[(&str, &str)]) -> Run {
    let prog = sync_tests();
    let mut args = vec![prog.into_os_string(), scenario.into()];
    args.extend(extra.iter().map(Into::into));
    let run = run_pes(n, &args, env, JOB_TIMEOUT);
    run.assert_ok(scenario);
    assert!(
        !run.stdout.contains("panic") && !run.stderr.contains("panic"),
        "scenario {scenario}: the library panicked\n{}",
        run.dump()
    );
    run
}

fn scenario(name: &str, n: usize) -> Run {
    scenario_env(name, &[], n, &[("SHMEM_LOG_TO_STDOUT", "1")])
}

/// Asserts that some error line of the job's output contains every one of `parts`.
fn assert_logged(run: &Run, parts: &[&str]) {
    let hit = run
        .stdout
        .lines()
        .chain(run.stderr.lines())
        .any(|l| l.contains(" error ") && parts.iter().all(|p| l.contains(p)));
    assert!(hit, "no error line containing all of {parts:?}\n{}", run.dump());
}

/// The line the C program printed starting with `prefix` (for timings).
fn line_with<'a>(run: &'a Run, prefix: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line\n{}", run.dump()))
}

// ---- producer_consumer ----

fn producer_consumer(n: usize) {
    let run = scenario("producer_consumer", n);
    println!("{}", line_with(&run, "producer_consumer:"));
}

#[test]
fn producer_consumer_2pes() {
    producer_consumer(2);
}

#[test]
fn producer_consumer_4pes() {
    producer_consumer(4);
}

#[test]
fn producer_consumer_8pes() {
    producer_consumer(8);
}

// ---- wait/test families ----

#[test]
fn wait_families_2pes() {
    scenario("wait_families", 2);
}

// ---- edge cases ----

fn edge_cases(n: usize) {
    let run = scenario("edge_cases", n);
    for parts in [
        &["aclshmem_int32_put_signal:", "sig_op 7"][..],
        &["aclshmem_put64_signal_nbi:", "sig_op -1"],
        &["aclshmemx_putmem_signal:", "sig_addr", "aligned"],
        &["aclshmem_char_put_signal:", "sig_addr", "heap"],
        &["aclshmem_put128_signal:", "sig_addr", "NULL"],
        &["aclshmem_uint16_put_signal_nbi:", "pe -1"],
        &["aclshmem_double_put_signal:", "dest", "heap"],
        &["aclshmem_signal_wait_until:", "cmp 9"],
        &["aclshmem_int64_wait_until:", "cmp 9"],
        &["aclshmem_uint8_wait_until_any:", "cmp 9"],
        &["aclshmem_float_test_all_vector:", "cmp -1"],
        &["aclshmem_char_test_some_vector:", "cmp 9"],
        &["aclshmem_int16_wait_until_some:", "NULL"],
        &["aclshmem_uint64_test_any_vector:", "NULL"],
    ] {
        assert_logged(&run, parts);
    }
}

#[test]
fn edge_cases_1pe() {
    edge_cases(1);
}

#[test]
fn edge_cases_2pes() {
    edge_cases(2);
}

// ---- atomics ----

fn atomics(n: usize) {
    let run = scenario("atomics", n);
    let bad_pe = format!("pe {n}");
    for parts in [
        &["aclshmem_int64_atomic_fetch:", "pe -1"][..],
        &["aclshmem_int_atomic_fetch:", &bad_pe],
        &["aclshmem_ulonglong_atomic_compare_swap:", "heap"],
        &["aclshmem_size_atomic_fetch_add:", "aligned"],
        &["aclshmem_uint64_atomic_fetch_xor:", "NULL"],
        &["aclshmem_double_atomic_set:", "heap"],
        &["aclshmem_float_atomic_swap:", "pe -1"],
    ] {
        assert_logged(&run, parts);
    }
}

#[test]
fn atomics_2pes() {
    atomics(2);
}

#[test]
fn atomics_4pes() {
    atomics(4);
}

#[test]
fn cas_lock_4pes() {
    scenario("cas_lock", 4);
}

// ---- ring of waits ----

fn ring_waits(n: usize) {
    let run = scenario_env(
        "ring_waits",
        &[],
        n,
        &[("ACLSHMEM_LOCAL_MEM_SIZE", "4M"), ("SHMEM_LOG_TO_STDOUT", "1")],
    );
    println!("{}", line_with(&run, "ring_waits:"));
}

#[test]
fn ring_waits_4pes() {
    ring_waits(4);
}

#[test]
fn ring_waits_16pes() {
    ring_waits(16);
}

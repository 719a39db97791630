//! Unique-id init, the DEFAULT-mode fallback to a unique id, their errors, and 20 init/finalize
//! cycles alternating the modes in one process. PE 0 always listens on loopback
//! (SHMEM_UID_SESSION_ID=127.0.0.1:0 or [::1]:0).

mod common;

use std::time::Duration;

fn run(n: usize, scenario: &str, env: &[(&str, &str)]) {
    let dir = std::env::temp_dir().join(format!(
        "aclshmem-init-modes-{scenario}-{n}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = common::compile_c("init_modes");
    let run = common::run_pes(
        n,
        &[prog.to_str().unwrap(), scenario, dir.to_str().unwrap()],
        env,
        Duration::from_secs(90),
    );
    let _ = std::fs::remove_dir_all(&dir);
    run.assert_ok(scenario);
}

#[test]
fn twenty_cycles_of_every_mode_2pes() {
    run(2, "uid_cycles", &[("SHMEM_UID_SESSION_ID", "127.0.0.1:0")]);
}

#[test]
fn twenty_cycles_of_every_mode_4pes() {
    run(4, "uid_cycles", &[("SHMEM_UID_SESSION_ID", "127.0.0.1:0")]);
}

#[test]
fn unique_id_errors() {
    run(1, "uid_errors", &[]);
}

#[test]
fn unique_id_over_ipv6_loopback() {
    run(2, "uid_ipv6", &[]);
}

#[test]
fn two_instances_side_by_side() {
    let base = common::free_port_range();
    let range = format!("{base}:{}", base + 3);
    run(
        2,
        "multi_instance",
        &[
            ("SHMEM_INSTANCE_PORT_RANGE", &range),
            ("SHMEM_CYCLE_PROF_PE", "0"),
        ],
    );
}

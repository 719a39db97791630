//! Broadcasts across nodes that stress the eager path (`collectives/eager.rs`: the root pushes
//! small data into the other members' buffers and returns; credits flow back): `tests/c/bcast_tests.c`
//! on a virtual cluster (`scripts/vcluster.sh`, its own prefix, addresses and bridge, so it runs
//! beside `tests/multinode.rs`' cluster), 1 PE per node on 2 and 4 nodes (the eager path), and
//! on one node (the barrier-free shared-memory path). Making namespaces needs root: without it the cross-node
//! tests call `skip()` (which fails under `ACLSHMEM_REQUIRE_ALL_TESTS=1`).

mod common;

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::{Run, run_pes};

const JOB_TIMEOUT: Duration = Duration::from_secs(120);

/// One cluster at a time in this file.
static CLUSTER: Mutex<()> = Mutex::new(());

fn vc(cmd: &mut Command) -> &mut Command {
    cmd.env("ACLSHMEM_VC_PREFIX", "aclbc")
        .env("ACLSHMEM_VC_NET", "10.79.0")
        .env("ACLSHMEM_VC_BRIDGE", "aclbcbr0")
}

struct Cluster(usize);

impl Cluster {
    fn up(test: &str, k: usize) -> Option<Cluster> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            common::skip(
                test,
                "needs root to make network and UTS namespaces (scripts/vcluster.sh)",
            );
            return None;
        }
        let script = common::repo_root().join("scripts/vcluster.sh");
        let out = vc(Command::new("bash").arg(&script).arg("up").arg(k.to_string()))
            .output()
            .expect("run scripts/vcluster.sh");
        assert!(
            out.status.success(),
            "{test}: cannot build a virtual cluster of {k} nodes:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Cluster(k))
    }

    fn run(&self, scenario: &str, per_node: usize) -> Run {
        let exe = common::compile_c("bcast_tests");
        let script = common::repo_root().join("scripts/vcluster.sh");
        let hosts: Vec<String> = (1..=self.0).map(|i| format!("aclbc{i}:{per_node}")).collect();
        let args: Vec<std::ffi::OsString> = vec![
            "--hosts".into(),
            hosts.join(",").into(),
            "--rsh".into(),
            format!("bash {} rsh", script.display()).into(),
            exe.into_os_string(),
            scenario.into(),
        ];
        let env = [("UCX_TLS", "tcp"), ("ACLSHMEM_VC_BRIDGE", "aclbcbr0")];
        run_pes(self.0 * per_node, &args, &env, JOB_TIMEOUT)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let script = common::repo_root().join("scripts/vcluster.sh");
        let _ = vc(Command::new("bash").arg(&script).arg("down")).output();
    }
}

fn across(test: &str, nodes: usize, cases: &[(&str, usize)]) {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up(test, nodes) else {
        return;
    };
    for (scenario, per_node) in cases {
        let r = c.run(scenario, *per_node);
        eprintln!(
            "{test}: {scenario} ({per_node} per node): exit {:?} in {:.1?}",
            r.status.code(),
            r.elapsed
        );
        r.assert_ok(scenario);
    }
}

#[test]
fn eager_two_nodes() {
    across("eager_two_nodes", 2, &[("back_to_back", 1), ("asymmetric", 1)]);
}

#[test]
fn eager_four_nodes() {
    across("eager_four_nodes", 4, &[("back_to_back", 1), ("asymmetric", 1)]);
}

/// The same back-to-back calls on one node (the barrier-free shared-memory path; its asymmetric
/// cases are `tests/teams.rs`' `asymmetric_broadcast_*`).
#[test]
fn one_node() {
    let exe = common::compile_c("bcast_tests");
    let r = run_pes(
        4,
        &[exe.into_os_string(), "back_to_back".into()],
        &[],
        JOB_TIMEOUT,
    );
    r.assert_ok("back_to_back");
}

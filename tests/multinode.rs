//! Jobs across nodes: a virtual cluster of network + UTS namespaces (`scripts/vcluster.sh`, its
//! own bridge and addresses, so it does not disturb a cluster a user made), PEs started with
//! `aclshmrun --hosts ... --rsh "scripts/vcluster.sh rsh"`, peers on other nodes reached through
//! UCX over tcp (`UCX_TLS=tcp`).
//!
//! One test function per topology builds its cluster, runs the existing C test programs'
//! scenarios on it one after the other (RMA of every family and type, atomics with concurrent
//! updates, signals and waits, teams, every collective and algorithm, streams, init/finalize
//! cycles) and tears the cluster down. Making namespaces needs root: without it the tests call
//! `skip()`, which fails under `ACLSHMEM_REQUIRE_ALL_TESTS=1` (CI), so CI never passes silently.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::{Run, run_pes};

/// The launcher's `--timeout` for every job (generous: 2 shared cores, tcp between namespaces).
const JOB_TIMEOUT: Duration = Duration::from_secs(120);

/// One cluster at a time (both topologies use the same bridge).
static CLUSTER: Mutex<()> = Mutex::new(());

/// A virtual cluster of `k` nodes, torn down when dropped.
struct Cluster {
    script: PathBuf,
    nodes: Vec<String>,
}

fn vc_env(cmd: &mut Command) -> &mut Command {
    cmd.env("ACLSHMEM_VC_PREFIX", "acltn")
        .env("ACLSHMEM_VC_NET", "10.78.0")
        .env("ACLSHMEM_VC_BRIDGE", "acltbr0")
}

impl Cluster {
    /// `None` (after `skip`) when this machine cannot make namespaces.
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
        let out = vc_env(Command::new("bash").arg(&script).arg("up").arg(k.to_string()))
            .output()
            .expect("run scripts/vcluster.sh");
        assert!(
            out.status.success(),
            "{test}: cannot build a virtual cluster of {k} nodes:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Cluster {
            script,
            nodes: (1..=k).map(|i| format!("acltn{i}")).collect(),
        })
    }

    /// `--hosts` for `per_node` PEs on every node.
    fn hosts(&self, per_node: usize) -> String {
        self.nodes
            .iter()
            .map(|n| format!("{n}:{per_node}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Runs `prog scenario` with `per_node` PEs on every node.
    fn run(&self, prog: &str, scenario: &str, per_node: usize, env: &[(&str, &str)]) -> Run {
        let exe = common::compile_c(prog);
        let rsh = format!("bash {} rsh", self.script.display());
        let args: Vec<std::ffi::OsString> = vec![
            "--hosts".into(),
            self.hosts(per_node).into(),
            "--rsh".into(),
            rsh.into(),
            exe.into_os_string(),
            scenario.into(),
        ];
        let mut all = vec![("UCX_TLS", "tcp"), ("ACLSHMEM_VC_BRIDGE", "acltbr0")];
        all.extend_from_slice(env);
        run_pes(self.nodes.len() * per_node, &args, &all, JOB_TIMEOUT)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = vc_env(Command::new("bash").arg(&self.script).arg("down")).output();
    }
}

/// One job: program, scenario, PEs per node, extra environment.
type Case<'a> = (&'a str, &'a str, usize, &'a [(&'a str, &'a str)]);

/// Runs every case and fails with all failures listed.
fn run_all(test: &str, cluster: &Cluster, cases: &[Case<'_>]) {
    let mut failed = Vec::new();
    for (prog, scenario, per_node, env) in cases {
        let r = cluster.run(prog, scenario, *per_node, env);
        eprintln!(
            "{test}: {prog} {scenario} ({per_node} per node) {env:?}: exit {:?} in {:.1?}",
            r.status.code(),
            r.elapsed
        );
        if !r.status.success() {
            failed.push(format!("{prog} {scenario} {env:?}:\n{}", r.dump()));
        }
    }
    assert!(
        failed.is_empty(),
        "{test}: {} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}

const NONE: &[(&str, &str)] = &[];

/// 2 nodes (mostly 2 PEs each): same-node peers through shared memory, the others through UCX.
#[test]
fn two_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("two_nodes", 2) else {
        return;
    };
    run_all(
        "two_nodes",
        &c,
        &[
            ("rma_tests", "typed", 2, NONE),
            ("rma_tests", "sized", 2, NONE),
            ("rma_tests", "strided", 2, NONE),
            ("rma_tests", "scalar", 2, NONE),
            ("sync_tests", "atomics", 2, NONE),
            ("sync_tests", "cas_lock", 2, NONE),
            ("sync_tests", "producer_consumer", 2, NONE),
            ("sync_tests", "ring_waits", 2, NONE),
            ("sync_tests", "wait_families", 1, NONE),
            ("team_tests", "splits", 4, NONE),
            ("team_tests", "collectives", 2, NONE),
            (
                "team_tests",
                "collectives",
                2,
                &[
                    ("ACLSHMEM_BCAST_ALGO", "push"),
                    ("ACLSHMEM_COLLECT_ALGO", "push"),
                    ("ACLSHMEM_ALLTOALL_ALGO", "push"),
                    ("ACLSHMEM_REDUCE_ALGO", "scatter"),
                ],
            ),
            ("pe_tests", "barrier", 2, NONE),
            ("pe_tests", "init_finalize", 2, NONE),
            ("stream_tests", "ring", 2, NONE),
            // the progress thread off: waits and blocking calls progress UCX themselves
            (
                "sync_tests",
                "atomics",
                2,
                &[("ACLSHMEM_UCX_PROGRESS_THREAD", "0")],
            ),
        ],
    );
}

/// 4 nodes x 1 PE: every peer through UCX.
#[test]
fn four_nodes_one_pe_each() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("four_nodes_one_pe_each", 4) else {
        return;
    };
    run_all(
        "four_nodes_one_pe_each",
        &c,
        &[
            ("rma_tests", "typed", 1, NONE),
            ("rma_tests", "strided", 1, NONE),
            ("sync_tests", "atomics", 1, NONE),
            ("sync_tests", "ring_waits", 1, NONE),
            ("team_tests", "collectives", 1, NONE),
            ("pe_tests", "barrier", 1, NONE),
            ("pe_tests", "init_finalize", 1, NONE),
            ("stream_tests", "ring", 1, NONE),
        ],
    );
}

/// Without UCX, a job across nodes fails at init on every PE with an error naming the package.
#[test]
fn missing_ucx_is_named() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("missing_ucx_is_named", 2) else {
        return;
    };
    let r = c.run(
        "rma_tests",
        "typed",
        1,
        &[("ACLSHMEM_UCX_LIB", "/nonexistent/libucp.so.0")],
    );
    assert!(!r.status.success(), "the job passed without UCX:\n{}", r.dump());
    assert!(r.stdout.contains("libucx0"), "no package named:\n{}", r.dump());
}

/// How a node is lost in [`lost_node`].
enum Loss {
    /// Every process of the node is killed (SIGKILL).
    Killed,
    /// The node's link goes down: its PEs live on but nobody can reach them.
    Unreachable,
}

/// A 4-node job (1 PE each) inside barrier rounds (`Killed`) or sleeping between barriers
/// (`Unreachable`) loses node 2 (PE 1): the launcher must end non-zero within the heartbeat timeout
/// plus a margin, with a message naming the lost PE, and no PE may stay behind.
fn lost_node(test: &str, loss: Loss) {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up(test, 4) else { return };
    let exe = common::compile_c("pe_tests");
    let rsh = format!("bash {} rsh", c.script.display());
    let scenario = match loss {
        Loss::Killed => "barrier",
        Loss::Unreachable => "hang",
    };
    let args: Vec<std::ffi::OsString> = vec![
        "--hosts".into(),
        c.hosts(1).into(),
        "--rsh".into(),
        rsh.into(),
        exe.into_os_string(),
        scenario.into(),
    ];
    let env = [
        ("UCX_TLS", "tcp"),
        ("ACLSHMEM_HEARTBEAT_TIMEOUT", "3s"),
        ("ACLSHMEM_VC_BRIDGE", "acltbr0"),
    ];
    let mut job = common::Background::start(4, &args, &env, JOB_TIMEOUT);
    match loss {
        Loss::Killed => std::thread::sleep(Duration::from_secs(3)),
        Loss::Unreachable => {
            let seen = job.wait_line(Duration::from_secs(60), |l| l.starts_with("JOB_ID "));
            assert!(seen.is_some(), "{test}: the job did not start within 60 s");
        }
    }
    assert!(
        job.child.try_wait().expect("try_wait").is_none(),
        "{test}: the job ended before the node was lost"
    );
    let node = &c.nodes[1];
    let start = std::time::Instant::now();
    match loss {
        Loss::Killed => {
            let pids = Command::new("ip")
                .args(["netns", "pids", node])
                .output()
                .expect("ip netns pids");
            let pids = String::from_utf8_lossy(&pids.stdout).into_owned();
            assert!(!pids.trim().is_empty(), "{test}: no process on {node}");
            for pid in pids.split_whitespace() {
                common::signal(pid.parse().expect("pid"), libc::SIGKILL);
            }
        }
        Loss::Unreachable => {
            let st = Command::new("ip")
                .args(["-n", node, "link", "set", "eth0", "down"])
                .status()
                .expect("ip link set down");
            assert!(st.success(), "{test}: cannot take {node}'s link down");
        }
    }
    let status = common::wait_limited(&mut job.child, Duration::from_secs(45));
    let elapsed = start.elapsed();
    let Some(status) = status else {
        drop(job);
        panic!("{test}: aclshmrun still running 45 s after {node} was lost");
    };
    let (stdout, stderr) = job.output();
    eprintln!(
        "{test}: launcher exited with {:?} {elapsed:.1?} after {node} was lost",
        status.code()
    );
    assert!(!status.success(), "{test}: the job succeeded without {node}");
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("PE 1"),
        "{test}: no message names PE 1:\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}"
    );
    // no PE of the job stays behind on any node (the link-down node's PE included)
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left: Vec<String> = c
            .nodes
            .iter()
            .filter_map(|n| {
                let o = Command::new("ip").args(["netns", "pids", n]).output().ok()?;
                let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
                (!p.is_empty()).then(|| format!("{n}: {p}"))
            })
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{test}: processes left 20 s after the launcher ended: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn killed_node_ends_the_job() {
    lost_node("killed_node_ends_the_job", Loss::Killed);
}

#[test]
fn unreachable_node_ends_the_job() {
    lost_node("unreachable_node_ends_the_job", Loss::Unreachable);
}

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
    /// [`machine_lock`], released after the teardown.
    _lock: std::fs::File,
}

/// The clusters' names: node name prefix, /24 network (first three numbers) and bridge. The
/// defaults (`acltn1..`, 10.78.0, `acltbr0`) keep clear of `scripts/vcluster.sh`'s own (`vnode*`,
/// 10.77.0); `ACLSHMEM_TEST_VC_PREFIX`, `ACLSHMEM_TEST_VC_NET` and `ACLSHMEM_TEST_VC_BRIDGE`
/// change them, so that two checkouts can run these tests on one machine at the same time.
struct Names {
    prefix: String,
    net: String,
    bridge: String,
}

fn names() -> &'static Names {
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
        Names {
            prefix: var("ACLSHMEM_TEST_VC_PREFIX", "acltn"),
            net: var("ACLSHMEM_TEST_VC_NET", "10.78.0"),
            bridge: var("ACLSHMEM_TEST_VC_BRIDGE", "acltbr0"),
        }
    })
}

/// The bridge variable the cluster's rsh agent needs.
fn bridge_env() -> (&'static str, &'static str) {
    ("ACLSHMEM_VC_BRIDGE", names().bridge.as_str())
}

fn vc_env(cmd: &mut Command) -> &mut Command {
    let n = names();
    cmd.env("ACLSHMEM_VC_PREFIX", &n.prefix)
        .env("ACLSHMEM_VC_NET", &n.net)
        .env("ACLSHMEM_VC_BRIDGE", &n.bridge)
}

/// Holds an exclusive lock on a file named after the cluster's bridge for as long as it lives:
/// test processes of other checkouts using the same names wait instead of tearing the cluster
/// down under each other's jobs (the `CLUSTER` mutex covers one test process only).
fn machine_lock() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("aclshmem-vcluster-{}.lock", names().bridge));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .expect("open the virtual cluster's lock file");
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this function owns; no memory is involved.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock {}", path.display());
    f
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
        let lock = machine_lock();
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
            nodes: (1..=k).map(|i| format!("{}{i}", names().prefix)).collect(),
            _lock: lock,
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

    /// Runs `prog scenario` with `per_node` PEs on every node (`scenario` is split at spaces: the
    /// program's arguments).
    fn run(&self, prog: &str, scenario: &str, per_node: usize, env: &[(&str, &str)]) -> Run {
        self.run_with(&[], prog, scenario, per_node, env)
    }

    /// [`Cluster::run`] with extra launcher options (`launcher_opts`, before the program).
    fn run_with(
        &self,
        launcher_opts: &[&str],
        prog: &str,
        scenario: &str,
        per_node: usize,
        env: &[(&str, &str)],
    ) -> Run {
        self.run_exe(launcher_opts, common::compile_c(prog), scenario, per_node, env)
    }

    /// [`Cluster::run_with`] for a program already built (`exe`).
    fn run_exe(
        &self,
        launcher_opts: &[&str],
        exe: std::path::PathBuf,
        scenario: &str,
        per_node: usize,
        env: &[(&str, &str)],
    ) -> Run {
        let rsh = format!("bash {} rsh", self.script.display());
        let mut args: Vec<std::ffi::OsString> = vec![
            "--hosts".into(),
            self.hosts(per_node).into(),
            "--rsh".into(),
            rsh.into(),
        ];
        args.extend(launcher_opts.iter().map(Into::into));
        args.push(exe.into_os_string());
        args.extend(scenario.split_whitespace().map(Into::into));
        let mut all = vec![("UCX_TLS", "tcp"), bridge_env()];
        all.extend_from_slice(env);
        run_pes(self.nodes.len() * per_node, &args, &all, JOB_TIMEOUT)
    }

    /// Processes still running on the nodes, as `node: pids` (empty when none is left).
    fn leftovers(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| {
                let o = Command::new("ip").args(["netns", "pids", n]).output().ok()?;
                let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
                (!p.is_empty()).then(|| format!("{n}: {p}"))
            })
            .collect()
    }

    /// Waits up to `limit` for every process on the nodes to end; panics naming those left.
    fn assert_no_leftovers(&self, test: &str, limit: Duration) {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = self.leftovers();
            if left.is_empty() {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{test}: processes left {limit:?} after the launcher ended: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = vc_env(Command::new("bash").arg(&self.script).arg("down")).output();
    }
}

/// One job: program, scenario, PEs per node, extra environment.
type Case<'a> = (&'a str, &'a str, usize, &'a [(&'a str, &'a str)]);

/// Whether a case runs: all do unless `ACLSHMEM_TEST_CASES` (comma-separated words, for
/// re-running a few cases while working on them) is set, then those whose `prog scenario`
/// contains one of its words.
fn selected(prog: &str, scenario: &str) -> bool {
    let Ok(only) = std::env::var("ACLSHMEM_TEST_CASES") else {
        return true;
    };
    let name = format!("{prog} {scenario}");
    only.split(',').any(|w| !w.is_empty() && name.contains(w))
}

/// Runs every case and fails with all failures listed.
fn run_all(test: &str, cluster: &Cluster, cases: &[Case<'_>]) {
    assert_none_failed(test, run_cases(test, cluster, cases));
}

/// Fails with every failure of `failed` listed.
fn assert_none_failed(test: &str, failed: Vec<String>) {
    assert!(
        failed.is_empty(),
        "{test}: {} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}

/// Runs every case; returns the failures.
fn run_cases(test: &str, cluster: &Cluster, cases: &[Case<'_>]) -> Vec<String> {
    let mut failed = Vec::new();
    for (prog, scenario, per_node, env) in cases {
        if !selected(prog, scenario) {
            continue;
        }
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
    failed
}

/// `rma_tests bad_input` on 2 nodes x 2 PEs with every error logged: the scenario must pass
/// (nothing written on either side, `tests/c/peer_util.h` reads the other node with a get) and
/// every PE must log the same refusals in the same order. Each PE makes the same calls, aimed at
/// its right (puts) and left (gets) neighbour: PE 0 puts to a PE on its node and gets from one on
/// the other node, PE 1 the opposite, so a refusal worded differently, missing or added for a PE
/// on another node shows up as a difference (digits and addresses aside). `None` when all held.
fn bad_input_across_nodes(test: &str, c: &Cluster) -> Option<String> {
    if !selected("rma_tests", "bad_input") {
        return None;
    }
    let r = c.run_with(
        &["--tag-output"],
        "rma_tests",
        "bad_input",
        2,
        &[("SHMEM_LOG_TO_STDOUT", "1")],
    );
    eprintln!(
        "{test}: rma_tests bad_input (2 per node, errors compared): exit {:?} in {:.1?}",
        r.status.code(),
        r.elapsed
    );
    if !r.status.success() {
        return Some(format!("rma_tests bad_input:\n{}", r.dump()));
    }
    // the message of each error line, numbers and addresses blanked
    let refusals = |pe: usize| -> Vec<String> {
        let tag = format!("[pe {pe}] ");
        r.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&tag))
            .filter(|l| l.contains(" error "))
            .filter_map(|l| l.split_once("] [PE ").map(|(_, m)| m))
            .map(|m| {
                let m = m.split_once("] ").map_or(m, |(_, rest)| rest);
                let mut out = String::new();
                let mut hex = false;
                for ch in m.chars() {
                    if ch == 'x' && out.ends_with('#') {
                        hex = true;
                    } else if ch.is_ascii_digit() || (hex && ch.is_ascii_hexdigit()) {
                        if !out.ends_with('#') {
                            out.push('#');
                        }
                    } else {
                        hex = false;
                        out.push(ch);
                    }
                }
                out
            })
            .collect()
    };
    let first = refusals(0);
    if first.len() < 50 {
        return Some(format!(
            "rma_tests bad_input: PE 0 logged only {} refusals:\n{}",
            first.len(),
            r.dump()
        ));
    }
    for pe in 1..4 {
        let other = refusals(pe);
        if other != first {
            let at = first.iter().zip(&other).position(|(a, b)| a != b);
            return Some(format!(
                "rma_tests bad_input: PE {pe} logged {} refusals, PE 0 {}; first difference at {at:?}: \
                 PE 0 {:?}, PE {pe} {:?}",
                other.len(),
                first.len(),
                at.and_then(|i| first.get(i)),
                at.and_then(|i| other.get(i)),
            ));
        }
    }
    eprintln!(
        "{test}: rma_tests bad_input: every PE logged the same {} refusals",
        first.len()
    );
    None
}

/// `failure_tests global_exit` on 2 nodes x 2 PEs: PE 2 (second node) calls
/// `aclshmem_global_exit(7)` while the others wait in a barrier; every PE on every node must end,
/// each logging who called it, and the launcher must exit with 7. `None` when all that held.
fn global_exit_across_nodes(test: &str, c: &Cluster) -> Option<String> {
    if !selected("failure_tests", "global_exit") {
        return None;
    }
    let r = c.run_with(
        &["--tag-output"],
        "failure_tests",
        "global_exit",
        2,
        &[("FT_PE", "2"), ("FT_STATUS", "7")],
    );
    eprintln!(
        "{test}: failure_tests global_exit (2 per node): exit {:?} in {:.1?}",
        r.status.code(),
        r.elapsed
    );
    let mut wrong = Vec::new();
    if r.status.code() != Some(7) {
        wrong.push(format!("launcher exit status {:?}, expected 7", r.status.code()));
    }
    if !r.failures().is_empty() {
        wrong.push("FAIL lines".to_string());
    }
    for pe in 0..4 {
        let tag = format!("[pe {pe}] ");
        let said = r
            .stdout
            .lines()
            .chain(r.stderr.lines())
            .filter_map(|l| l.strip_prefix(&tag))
            .any(|l| l.contains("PE 2 called aclshmem_global_exit(7)"));
        if !said {
            wrong.push(format!("PE {pe} did not log the global exit"));
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !c.leftovers().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = c.leftovers();
    if !left.is_empty() {
        wrong.push(format!("processes left 20 s after the launcher ended: {left:?}"));
    }
    (!wrong.is_empty()).then(|| format!("failure_tests global_exit: {}:\n{}", wrong.join("; "), r.dump()))
}

const NONE: &[(&str, &str)] = &[];

/// 2 nodes (mostly 2 PEs each): same-node peers through shared memory, the others through UCX.
#[test]
fn two_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("two_nodes", 2) else {
        return;
    };
    // the unique id of init_modes is handed out through a file (one file system for all nodes);
    // PE 0 listens for it on its node's link, the way a user picks the interface
    let uid_dir = common::Scratch::new("multinode-uid");
    let uid_cycles = format!("uid_cycles {}", uid_dir.path().display());
    let multi_instance = format!("multi_instance {}", uid_dir.path().display());
    let ports = common::free_port_range();
    let range = format!("{ports}:{}", ports + 3);
    let uid_env: &[(&str, &str)] = &[("SHMEM_UID_SOCK_IFNAME", "eth0:inet4")];
    let mi_env: &[(&str, &str)] = &[("SHMEM_INSTANCE_PORT_RANGE", &range)];
    let mut failed = run_cases(
        "two_nodes",
        &c,
        &[
            // bad input aimed at a PE on this node and at one on the other node (the right
            // neighbour of PE 1 and PE 3): nothing written on either side, same returns
            // (rma_tests bad_input: in bad_input_across_nodes, which compares the logged errors)
            ("sync_tests", "edge_cases", 2, NONE),
            // 20 init/finalize cycles: unique id handed out by the program, DEFAULT mode
            ("init_modes", &uid_cycles, 2, uid_env),
            // two instances side by side, each with its own UCX context and worker
            ("init_modes", &multi_instance, 2, mi_env),
            ("rma_tests", "typed", 2, NONE),
            ("rma_tests", "sized", 2, NONE),
            ("rma_tests", "strided", 2, NONE),
            ("rma_tests", "scalar", 2, NONE),
            ("rma_tests", "nbi_batches", 2, NONE),
            ("sync_tests", "atomics", 2, NONE),
            ("sync_tests", "cas_lock", 2, NONE),
            ("sync_tests", "producer_consumer", 2, NONE),
            ("sync_tests", "ring_waits", 2, NONE),
            ("sync_tests", "wait_families", 1, NONE),
            ("team_tests", "splits", 4, NONE),
            ("team_tests", "collectives", 2, NONE),
            // the eager broadcast (one member per node: 2-PE team splits inside the program)
            ("bcast_tests", "back_to_back", 1, NONE),
            ("bcast_tests", "asymmetric", 1, NONE),
            // member 1 names another length in the first call: on 2 nodes the root runs a whole
            // ring ahead before it waits for member 1's credit (hung while a root's record of a
            // call was overwritten by then)
            ("bcast_tests", "asymmetric_length", 1, NONE),
            // the hierarchical broadcast (2 PEs per node): a member alone naming itself the root
            // fails and sends nothing
            ("bcast_tests", "asymmetric_nodes", 2, NONE),
            // collectives of different lengths: one member per node (pushed exchanges of the
            // calls, tags; the eager broadcast's words name the length) and two (the leaders
            // compare their node's calls; the hierarchical broadcast's mail)
            ("team_tests", "asymmetric_lengths", 1, NONE),
            ("team_tests", "asymmetric_lengths", 2, NONE),
            // reductions of different element types of one length: a member of node 0 (its
            // leader compares it), the leader of node 1 alone, the whole of node 1 (the leaders'
            // records: pushed, mailed and, at 256 KiB, the leaders' reads of each other's
            // partials); one member per node: the pushed and mailed exchanges, the flat path
            ("team_tests", "asymmetric_types 1", 2, NONE),
            ("team_tests", "asymmetric_types 2", 2, NONE),
            ("team_tests", "asymmetric_types 2 3", 2, NONE),
            ("team_tests", "asymmetric_types 1", 1, NONE),
            // members making different collectives: with two members per node an fcollect's
            // leader waited in a barrier while the other leader exchanged a sum's partials
            ("team_tests", "asymmetric_families", 2, NONE),
            ("team_tests", "asymmetric_families", 1, NONE),
            // random well-formed and asymmetric calls (lengths, roots, families but a broadcast
            // against another family; no member in a barrier instead, below): one member per node (eager broadcasts, pushed and mailed
            // exchanges: a reduction mailing its partial against an exchange of calls hung both;
            // reductions of 2 and 4 KiB succeeded), and two (hierarchical paths: an fcollect
            // against a sum hung, its leader in a barrier, the other in the partials' exchange)
            (
                "team_tests",
                "asymmetric_mix 8 150 nobarrier nobcastfamily eager",
                1,
                NONE,
            ),
            (
                "team_tests",
                "asymmetric_mix 19 150 nobarrier nobcastfamily eager",
                1,
                NONE,
            ),
            (
                "team_tests",
                "asymmetric_mix 20 100 nobarrier nobcastfamily",
                2,
                NONE,
            ),
            // a member in a barrier while the others make a collective call, with the
            // hierarchical barrier: the calls fail (the node barrier's arrival counter tells the
            // program's barrier from a call's; a leader waiting for the member's node leader reads
            // its mark) and the member counts them; one PE per node, then two (the member a
            // node's leader, or not, or a whole node), and the random mix with such members: one
            // PE per node, and two with every kind of asymmetric call (the hierarchical broadcast
            // agrees on the call as the other families do), on a split team and the world team
            ("team_tests", "barrier_against_collective", 1, NONE),
            ("team_tests", "barrier_against_collective", 2, NONE),
            ("team_tests", "barrier_against_collective last", 2, NONE),
            ("team_tests", "asymmetric_mix 21 150 nobcastfamily eager", 1, NONE),
            // an eager broadcast against another family leaves the others a call behind: their
            // call fails when the root's next one of that family meets it, instead of pairing
            // with it and returning its data
            (
                "team_tests",
                "bcast_against_family",
                1,
                &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "3")],
            ),
            ("team_tests", "asymmetric_mix 22 100", 2, NONE),
            ("team_tests", "asymmetric_mix 23 100 world", 2, NONE),
            // every peer through UCX (no hierarchy): a member in a barrier while the others make
            // a collective call fails that call at its opening barrier and counts it (the
            // arrival counter tells the program's barriers from the calls'); the random mix
            // with members in barriers, broadcasts against other families, one and two PEs per
            // node
            (
                "team_tests",
                "barrier_against_collective",
                2,
                &[("ACLSHMEM_DIRECT_ACCESS", "0")],
            ),
            // well-formed collectives of every family at lengths around every threshold of the
            // hierarchical paths (eager, pushed, mailed and read partials, pull), and random
            // one-sided traffic between every pair, every byte checked
            ("team_tests", "soak 7 200", 1, NONE),
            ("team_tests", "soak 8 120", 2, NONE),
            ("team_tests", "soak 12 100 high", 2, NONE),
            (
                "rma_tests",
                "soak",
                2,
                &[("RMA_SOAK_SEED", "9"), ("RMA_SOAK_ROUNDS", "40")],
            ),
            (
                "team_tests",
                "asymmetric_mix 4 150",
                1,
                &[("ACLSHMEM_DIRECT_ACCESS", "0")],
            ),
            (
                "team_tests",
                "asymmetric_mix 6 100",
                2,
                &[("ACLSHMEM_DIRECT_ACCESS", "0")],
            ),
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
            ("pe_tests", "alloc_crossed", 2, NONE),
            ("pe_tests", "init_finalize", 2, NONE),
            // returning from main without finalize: finalized at exit, PE 0 serving the others
            ("pe_tests", "no_finalize", 2, NONE),
            // a PE leaving without finalize while the others (on both nodes) wait for it in a
            // barrier or a reduction: the call fails everywhere, the job still ends with 0
            ("pe_tests", "leave_barrier", 2, NONE),
            ("pe_tests", "leave_reduce", 2, NONE),
            ("stream_tests", "ring", 2, NONE),
            // the program's own device buffers in the heap: mapped by the node's peers, registered
            // with UCX for the other node's
            ("user_buffers", "basic_nodes", 2, NONE),
            // the progress thread off: waits and blocking calls progress UCX themselves
            (
                "sync_tests",
                "atomics",
                2,
                &[("ACLSHMEM_UCX_PROGRESS_THREAD", "0")],
            ),
        ],
    );
    failed.extend(bad_input_across_nodes("two_nodes", &c));
    failed.extend(global_exit_across_nodes("two_nodes", &c));
    assert_none_failed("two_nodes", failed);
}

/// One putmem and one getmem of 4 GiB + 4 KiB between PEs on two nodes (`rma_tests large`): the
/// bytes past 4 GiB arrive over UCX. Skipped, loudly, where the machine cannot hold the two heaps
/// (`ACLSHMEM_REQUIRE_ALL_TESTS=1`, as `.ci/run` sets it, makes that a failure).
#[test]
fn large_transfer_across_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = common::large_heaps_blocker() {
        common::skip("large_transfer_across_nodes", &format!("lack of memory: {why}"));
        return;
    }
    let Some(c) = Cluster::up("large_transfer_across_nodes", 2) else {
        return;
    };
    run_all(
        "large_transfer_across_nodes",
        &c,
        &[("rma_tests", "large", 1, &[("ACLSHMEM_LOCAL_MEM_SIZE", "4200M")])],
    );
}

/// 4 nodes x 1 PE: every peer through UCX (also OpenSHMEM programs: `Cluster::osh`).
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
            // bad input where both neighbours are on other nodes
            ("rma_tests", "bad_input", 1, NONE),
            ("sync_tests", "edge_cases", 1, NONE),
            ("sync_tests", "atomics", 1, NONE),
            ("sync_tests", "ring_waits", 1, NONE),
            ("team_tests", "collectives", 1, NONE),
            ("bcast_tests", "back_to_back", 1, NONE),
            ("bcast_tests", "asymmetric", 1, NONE),
            ("bcast_tests", "asymmetric_length", 1, NONE),
            // fcollect, alltoall and reductions of different lengths: the pushed exchange, the
            // direct pushes (after an exchange of the calls), the flat paths, the leaders' partials
            ("team_tests", "asymmetric_lengths", 1, NONE),
            ("team_tests", "asymmetric_types 2", 1, NONE),
            ("team_tests", "asymmetric_families", 1, NONE),
            (
                "team_tests",
                "bcast_against_family",
                1,
                &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "3")],
            ),
            ("team_tests", "barrier_against_collective last", 1, NONE),
            ("team_tests", "soak 10 120", 1, NONE),
            ("team_tests", "soak 13 100 high", 1, NONE),
            (
                "rma_tests",
                "soak",
                1,
                &[("RMA_SOAK_SEED", "11"), ("RMA_SOAK_ROUNDS", "30")],
            ),
            ("pe_tests", "barrier", 1, NONE),
            ("pe_tests", "alloc_crossed", 1, NONE),
            ("pe_tests", "init_finalize", 1, NONE),
            ("pe_tests", "leave_reduce", 1, NONE),
            ("stream_tests", "ring", 1, NONE),
        ],
    );
    // puts to every other node the moment shmem_init returns (SOS's put1 lost such a put in a
    // third of its runs on 4 nodes: a peer accepted messages to its memory only after its own
    // exchange of keys returned); three jobs, each PE putting to three nodes
    for _ in 0..3 {
        c.osh("first_puts", &[], 1, NONE);
    }
    c.osh("finalize_completes", &["all"], 1, NONE);
    // allocations, frees and 2-D splits against barriers fail and keep the heaps symmetric
    c.osh(
        "alloc_crossed",
        &[],
        1,
        &[("ACLSHMEM_OSHMEM_ON_ERROR", "continue")],
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
    /// Every process of the node is killed while the PEs stream puts, quiet and wait for their
    /// neighbour's signal (`pe_tests quiet_waits`).
    KilledInQuiet,
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
        Loss::KilledInQuiet => "quiet_waits",
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
        bridge_env(),
        // one PE per node: aclshmem_ptr of every other PE must be NULL (quiet_waits checks)
        ("PE_TESTS_REMOTE_PEERS", "1"),
        // barrier rounds that outlast the 3 s before the kill (2000 rounds took under 3 s once
        // the barrier across nodes became one message per round)
        ("PE_TESTS_ROUNDS", "10000000"),
    ];
    let mut job = common::Background::start(4, &args, &env, JOB_TIMEOUT);
    match loss {
        Loss::Killed => std::thread::sleep(Duration::from_secs(3)),
        Loss::Unreachable | Loss::KilledInQuiet => {
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
        Loss::Killed | Loss::KilledInQuiet => {
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
    c.assert_no_leftovers(test, Duration::from_secs(20));
}

#[test]
fn killed_node_ends_the_job() {
    lost_node("killed_node_ends_the_job", Loss::Killed);
}

/// A node lost while its peers are inside quiet (completing puts to it) and signal waits.
#[test]
fn killed_node_during_quiet_and_waits() {
    lost_node("killed_node_during_quiet_and_waits", Loss::KilledInQuiet);
}

/// Starts `pe_tests scenario` with one PE per node of `c` in the background, with UCX over tcp,
/// the config store's failure detection off and `ACLSHMEM_UCX_TIMEOUT=3s` (the UCX limit is then
/// what ends a wait towards a lost node), waits until PE 0 printed its `JOB_ID` line, and takes
/// node 1's link down.
fn start_then_cut_node_1(
    test: &str,
    c: &Cluster,
    scenario: &str,
    extra: &[(&str, &str)],
    timeout: Duration,
) -> common::Background {
    let exe = common::compile_c("pe_tests");
    let rsh = format!("bash {} rsh", c.script.display());
    let args: Vec<std::ffi::OsString> = vec![
        "--hosts".into(),
        c.hosts(1).into(),
        "--rsh".into(),
        rsh.into(),
        exe.into_os_string(),
        scenario.into(),
    ];
    let mut env = vec![
        ("UCX_TLS", "tcp"),
        ("ACLSHMEM_HEARTBEAT_TIMEOUT", "0"),
        ("ACLSHMEM_UCX_TIMEOUT", "3s"),
        bridge_env(),
    ];
    env.extend_from_slice(extra);
    let mut job = common::Background::start(c.nodes.len(), &args, &env, timeout);
    let seen = job.wait_line(Duration::from_secs(25), |l| l.starts_with("JOB_ID "));
    assert!(seen.is_some(), "{test}: the job did not start within 25 s");
    let node = &c.nodes[1];
    let st = Command::new("ip")
        .args(["-n", node, "link", "set", "eth0", "down"])
        .status()
        .expect("ip link set down");
    assert!(st.success(), "{test}: cannot take {node}'s link down");
    job
}

/// The UCX wait limit on its own: with the config store's failure detection off
/// (`ACLSHMEM_HEARTBEAT_TIMEOUT=0`), a node whose link goes down while its peers are in quiet and
/// signal waits (`pe_tests quiet_waits`, 4 nodes x 1 PE) makes the blocking UCX waits towards it
/// end the job after `ACLSHMEM_UCX_TIMEOUT` (3 s here), with a message naming the limit and the
/// PE, instead of waiting silently.
#[test]
fn ucx_wait_limit_reports_an_unreachable_node() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "ucx_wait_limit_reports_an_unreachable_node";
    let Some(c) = Cluster::up(test, 4) else { return };
    let (_, stderr) = cut_node_1_ends_the_job(test, &c, "quiet_waits", &[], Duration::from_secs(45));
    assert!(
        stderr.contains("has not completed after") && stderr.contains("ACLSHMEM_UCX_TIMEOUT"),
        "{test}: no message naming the wait\n{stderr}"
    );
}

/// Runs `scenario` as [`start_then_cut_node_1`] does and checks that the job ends with a failure
/// within `within` of the cut, a PE naming another and `ACLSHMEM_UCX_TIMEOUT`; returns the job's
/// stdout and stderr.
fn cut_node_1_ends_the_job(
    test: &str,
    c: &Cluster,
    scenario: &str,
    extra: &[(&str, &str)],
    within: Duration,
) -> (String, String) {
    let mut job = start_then_cut_node_1(test, c, scenario, extra, Duration::from_secs(60));
    let status = common::wait_limited(&mut job.child, within);
    if status.is_none() {
        common::stop_launcher(&mut job.child);
    }
    let (stdout, stderr) = job.output();
    let all = format!("--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    assert!(
        status.is_some_and(|s| !s.success()),
        "{test}: the job did not end with a failure within {within:?} of the cut (launcher: {status:?})\n{all}"
    );
    assert!(
        stderr.contains("within ACLSHMEM_UCX_TIMEOUT") && stderr.contains("ending the job"),
        "{test}: no message naming the PE and the limit\n{all}"
    );
    // the PE whose library ended the job says so (it read as its program's global exit)
    assert!(
        stderr.contains("the library ended the job for the reason above"),
        "{test}: the end was blamed on the program\n{all}"
    );
    (stdout, stderr)
}

/// `--hosts localhost:1,<node>:1` without `--addr`: PE 0 runs here and the config store listens
/// on the address this machine reaches the node from, not on the loopback address (the remote PE
/// could not reach that, and failed after the 120 s connect timeout).
#[test]
fn hosts_starting_with_this_machine_choose_a_reachable_store_address() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "hosts_starting_with_this_machine_choose_a_reachable_store_address";
    let Some(c) = Cluster::up(test, 1) else { return };
    let exe = common::compile_c("pe_tests");
    let rsh = format!("bash {} rsh", c.script.display());
    let hosts = format!("localhost:1,{}:1", c.nodes[0]);
    let args: Vec<std::ffi::OsString> = vec![
        "--hosts".into(),
        hosts.into(),
        "--rsh".into(),
        rsh.into(),
        exe.into_os_string(),
        "barrier".into(),
    ];
    let env = [("UCX_TLS", "tcp"), bridge_env()];
    let run = common::run_pes(2, &args, &env, Duration::from_secs(60));
    run.assert_ok("barrier");
    assert!(run.elapsed < Duration::from_secs(40), "{test}: {}", run.dump());
}

/// `--hosts` naming the nodes by IPv6 address, in brackets (`[fd77:10:78:0::1]:1,...`; the cluster
/// gives every node one, and its rsh agent knows them): the launcher took the address's colons
/// for a PE count and refused it. The config store then listens on the first node's IPv6
/// address.
#[test]
fn hosts_given_as_ipv6_addresses() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "hosts_given_as_ipv6_addresses";
    let Some(c) = Cluster::up(test, 2) else { return };
    let exe = common::compile_c("pe_tests");
    let rsh = format!("bash {} rsh", c.script.display());
    let net6 = format!("fd77:{}", names().net.replace('.', ":"));
    let hosts = format!("[{net6}::1]:1,[{net6}::2]:1");
    let program = format!("echo \"STORE $ACLSHMEM_IP_PORT\"; exec {} barrier", exe.display());
    let args: Vec<std::ffi::OsString> = vec![
        "--hosts".into(),
        hosts.into(),
        "--rsh".into(),
        rsh.into(),
        "sh".into(),
        "-c".into(),
        program.into(),
    ];
    let n = names();
    let env = [
        ("UCX_TLS", "tcp"),
        bridge_env(),
        ("ACLSHMEM_VC_NET", n.net.as_str()),
        ("ACLSHMEM_VC_PREFIX", n.prefix.as_str()),
    ];
    let run = common::run_pes(2, &args, &env, Duration::from_secs(60));
    run.assert_ok("barrier");
    // the store listens on the first node's IPv6 address
    let first: std::net::Ipv6Addr = format!("{net6}::1").parse().expect("an IPv6 address");
    assert_eq!(
        run.stdout.matches(&format!("STORE tcp6://[{first}]:")).count(),
        2,
        "{test}: {}",
        run.dump()
    );
}

/// A wait towards a PE on an unreachable node that outlives `ACLSHMEM_UCX_TIMEOUT` ends the job
/// (`pe_tests get_loop`, 2 nodes x 1 PE, failure detection off: PE 0's get from the cut node):
/// the PE names the other and the limit, every PE exits, the launcher's status is non-zero. The
/// call used to fail and the job to go on, with the connection closed by force: the other PE
/// then waited for ever (in a barrier, say), and a connection closed while data still moved on
/// it (a slow link rather than a lost one) crashed UCX's tcp transport in the progress thread.
#[test]
fn a_ucx_timeout_ends_the_job() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_ucx_timeout_ends_the_job";
    let Some(c) = Cluster::up(test, 2) else { return };
    let (stdout, stderr) = cut_node_1_ends_the_job(test, &c, "get_loop", &[], Duration::from_secs(40));
    assert!(
        stderr.contains("PE 1 did not answer within ACLSHMEM_UCX_TIMEOUT"),
        "{test}: PE 1 is not named\n{stderr}"
    );
    assert!(
        !stdout.contains("GET_LOOP_DONE"),
        "{test}: the gets returned\n{stdout}"
    );
}

/// [`a_ucx_timeout_ends_the_job`] with blocking puts through UCX's own put
/// (`ACLSHMEM_UCX_PUT_AM=off`): their flush past the limit ends the job too (the quiet returned an
/// error, each put after ~3 s, the data undelivered, and the job never ended).
#[test]
fn a_ucx_timeout_of_a_worker_flush_ends_the_job() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_ucx_timeout_of_a_worker_flush_ends_the_job";
    let Some(c) = Cluster::up(test, 2) else { return };
    let (stdout, stderr) = cut_node_1_ends_the_job(
        test,
        &c,
        "get_loop",
        &[("PE_LOOP_PUT", "1"), ("ACLSHMEM_UCX_PUT_AM", "off")],
        Duration::from_secs(40),
    );
    assert!(
        stderr.contains("quiet (worker flush) did not complete within ACLSHMEM_UCX_TIMEOUT")
            && !stdout.contains("SLOW_GET 2"),
        "{test}: puts past the limit returned\n{stdout}\n{stderr}"
    );
}

#[test]
fn unreachable_node_ends_the_job() {
    lost_node("unreachable_node_ends_the_job", Loss::Unreachable);
}

/// Open MPI's `mpirun` starts the PEs on two nodes through the cluster's rsh agent
/// (`--mca plm_rsh_agent`); the library initialises in MPI mode on the program's communicator
/// (`tests/c/mpi_init.c`: 20 init/finalize cycles, each with a ring of puts and barriers); then
/// an OpenSHMEM program started by the same `mpirun` (2 nodes x 2 PEs) bootstraps over MPI.
#[test]
fn mpirun_across_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("mpirun_across_nodes", 2) else {
        return;
    };
    common::compile_c("mpi_init"); // builds the library
    let lib = common::profile_dir();
    let exe = common::target_dir().join("ctests").join("mpi_init_multinode");
    let st = Command::new("mpicc.openmpi")
        .args(["-std=c11", "-O1", "-Wall", "-Werror", "-DWITH_MPI_H"])
        .arg(common::repo_root().join("tests/c/mpi_init.c"))
        .arg("-I")
        .arg(common::repo_root().join("include"))
        .arg(format!("-L{}", lib.display()))
        .arg("-laclshmem")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("mpicc.openmpi (install openmpi-bin libopenmpi-dev)");
    assert!(st.success(), "mpicc.openmpi failed");
    let rsh = format!("bash {} rsh", c.script.display());
    let subnet = format!("{}.0/24", names().net);
    // mpirun.openmpi across the nodes (`hosts`) with `env` exported: the job's whole output
    let mpirun = |np: usize, hosts: &str, env: &[&str], exe: &std::path::Path| {
        let mut cmd = Command::new("timeout");
        cmd.arg("180").arg("mpirun.openmpi");
        cmd.args(["--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma"])
            .args(["-np", &np.to_string(), "--host", hosts])
            .args(["--mca", "plm_rsh_agent", &rsh])
            .args(["--mca", "oob_tcp_if_include", &subnet])
            .args(["--mca", "btl_tcp_if_include", &subnet]);
        for e in env {
            cmd.args(["-x", e]);
        }
        let out = cmd
            .arg(exe)
            .env("ACLSHMEM_VC_BRIDGE", &names().bridge)
            .output()
            .expect("mpirun.openmpi");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (ok, text) = mpirun(
        2,
        &c.nodes.join(","),
        &["UCX_TLS=tcp", "SHMEM_LOG_TO_STDOUT=1"],
        &exe,
    );
    assert!(
        ok && text.contains("OK mpi") && !text.contains("FAIL:"),
        "mpirun across 2 nodes:\n{text}"
    );
    // an OpenSHMEM program started by plain mpirun (no oshrun): shmem_init bootstraps over MPI,
    // 2 nodes x 2 PEs; each PE prints its number (four PEs of one job, not four PE 0s)
    let hosts: Vec<String> = c.nodes.iter().map(|n| format!("{n}:2")).collect();
    let (ok, text) = mpirun(
        4,
        &hosts.join(","),
        &["UCX_TLS=tcp", "SHMEM_SYMMETRIC_SIZE=64M"],
        &osh_program("first_puts"),
    );
    assert!(
        ok && (0..4).all(|pe| text.matches(&format!("OK first_puts PE {pe}\n")).count() == 1)
            && !text.contains("FAIL:"),
        "OpenSHMEM program under mpirun across 2 nodes x 2 PEs:\n{text}"
    );
}

/// torchrun-style variables (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`,
/// `MASTER_ADDR`, `MASTER_PORT`), each PE started by hand on its node, no launcher and no job
/// token: the library finds the store at MASTER_ADDR:MASTER_PORT+1 and the job secret in the
/// shared secret directory.
#[test]
fn torchrun_variables_across_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("torchrun_variables_across_nodes", 2) else {
        return;
    };
    // sync_tests takes its rank and size from aclshmemx_set_attr_from_env alone
    let exe = common::compile_c("sync_tests");
    let port = common::free_port();
    let secrets = common::Scratch::new("torch-secret");
    let mut children = Vec::new();
    for (rank, node) in c.nodes.iter().enumerate() {
        let line = format!(
            "exec env -u ACLSHMEM_MY_PE -u ACLSHMEM_N_PES -u ACLSHMEM_IP_PORT -u ACLSHMEM_JOB_TOKEN \
             RANK={rank} WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR={}.1 \
             MASTER_PORT={port} ACLSHMEM_JOB_SECRET_DIR={} UCX_TLS=tcp SHMEM_LOG_TO_STDOUT=1 \
             ACLSHMEM_LOCAL_MEM_SIZE=16M timeout 120 {} atomics",
            names().net,
            secrets.path().join("s").display(),
            exe.display()
        );
        let child = Command::new("bash")
            .arg(&c.script)
            .arg("rsh")
            .arg(node)
            .arg(line)
            .env("ACLSHMEM_VC_BRIDGE", &names().bridge)
            // files, not pipes: a PE must never block on output nobody reads yet
            .stdout(std::fs::File::create(secrets.path().join(format!("out.{rank}"))).expect("output file"))
            .stderr(std::fs::File::create(secrets.path().join(format!("err.{rank}"))).expect("output file"))
            .spawn()
            .expect("start a PE through the rsh agent");
        children.push(child);
    }
    let mut failed = Vec::new();
    for (rank, mut child) in children.into_iter().enumerate() {
        let status = child.wait().expect("wait for a PE");
        let read =
            |f: &str| std::fs::read_to_string(secrets.path().join(format!("{f}.{rank}"))).unwrap_or_default();
        let text = format!("{}{}", read("out"), read("err"));
        if !status.success() || text.contains("FAIL") || (rank == 0 && !text.contains("OK atomics")) {
            failed.push(format!("rank {rank} ({status:?}):\n{text}"));
        }
    }
    assert!(
        failed.is_empty(),
        "torchrun-style job across 2 nodes:\n{}",
        failed.join("\n")
    );
}

/// Builds `tests/c/openshmem/NAME.c` with scripts/osh/oshcc (once per test process).
fn osh_program(name: &str) -> std::path::PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    common::ensure_built();
    let exe = common::target_dir()
        .join("ctests")
        .join(format!("osh_{name}_multinode"));
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built.iter().any(|b| b == name) {
        return exe;
    }
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let out = Command::new(common::repo_root().join("scripts/osh/oshcc"))
        .env("ACLSHMEM_LIB_DIR", common::profile_dir())
        .args(["-std=c11", "-Wall", "-Werror"])
        .arg(common::repo_root().join(format!("tests/c/openshmem/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run oshcc");
    assert!(
        out.status.success(),
        "oshcc {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    built.push(name.to_string());
    exe
}

impl Cluster {
    /// Runs the OpenSHMEM program `name` (see [`osh_program`]) with `args`, `per_node` PEs on every
    /// node, started by oshrun (scripts/osh), which hands --hosts and --rsh to aclshmrun; returns
    /// its stdout after asserting that the job succeeded and printed `OK name`.
    fn osh(&self, name: &str, args: &[&str], per_node: usize, env: &[(&str, &str)]) -> String {
        let out = self.osh_run(name, args, per_node, env);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() && stdout.contains(&format!("OK {name}")),
            "{name} {args:?} ({} nodes x {per_node} PEs, {env:?}): {:?}\n{stdout}\n{}",
            self.nodes.len(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Runs the OpenSHMEM program `name` as [`Cluster::osh`] does and returns how it ended.
    fn osh_run(
        &self,
        name: &str,
        args: &[&str],
        per_node: usize,
        env: &[(&str, &str)],
    ) -> std::process::Output {
        let exe = osh_program(name);
        let np = self.nodes.len() * per_node;
        Command::new("timeout")
            .arg("150")
            .arg(common::repo_root().join("scripts/osh/oshrun"))
            .args([
                "-np",
                &np.to_string(),
                "--timeout",
                "120",
                "--hosts",
                &self.hosts(per_node),
            ])
            .arg("--rsh")
            .arg(format!("bash {} rsh", self.script.display()))
            .arg(&exe)
            .args(args)
            .env("UCX_TLS", "tcp")
            .env("ACLSHMEM_VC_BRIDGE", &names().bridge)
            .envs(env.iter().copied())
            .output()
            .expect("run oshrun")
    }
}

/// OpenSHMEM programs across 2 nodes x 2 PEs (their program data, made symmetric at `shmem_init`,
/// is registered with UCX):
/// * `SHMEM_TEAM_SHARED` is each node's pair (tests/c/openshmem/shared_team.c);
/// * `shmem_finalize` completes what each PE issued just before it (finalize_completes.c: each
///   kind of operation alone, then all; found by the University of Houston test suite's
///   test_shmem_finalize, which lost a put across nodes in 8 of 20 runs), also without the
///   progress thread (finalize's own barrier must drive UCX while a peer still quiets);
/// * puts issued the moment `shmem_init` returns land (first_puts.c);
/// * threads of each PE split different parents at once (concurrent_splits.c);
/// * a collect whose empty contributions pass NULL (collect_zero.c);
/// * without the progress thread, a PE polling its own word with fetch, g or compare-swap lets
///   the other node's atomics to it land (self_poll.c);
/// * programs that return from `main` without `shmem_finalize` are finalized at exit, a PE that
///   left serving the others meanwhile, and one that left while others wait for it is named
///   (no_finalize.c).
#[test]
fn openshmem_programs_across_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = Cluster::up("openshmem_programs_across_nodes", 2) else {
        return;
    };
    let stdout = c.osh("shared_team", &[], 2, NONE);
    assert!(
        stdout.matches("SHMEM_TEAM_SHARED has 2 of 4 PEs").count() == 4,
        "{stdout}"
    );
    for mode in ["put", "nbi", "p", "amo", "big", "all"] {
        c.osh("finalize_completes", &[mode], 2, NONE);
    }
    c.osh(
        "finalize_completes",
        &["all"],
        2,
        &[("ACLSHMEM_UCX_PROGRESS_THREAD", "0")],
    );
    c.osh("first_puts", &[], 2, NONE);
    // threads splitting different parents at once: slots reserved on the other node's PEs by
    // remote atomics
    c.osh("concurrent_splits", &[], 2, NONE);
    // a collect whose empty contributions pass NULL (those PEs' dest got zeros)
    c.osh("collect_zero", &[], 2, NONE);
    // polling one's own word (fetch, g, compare-swap) drives UCX without the progress thread
    c.osh(
        "self_poll",
        &[],
        1,
        &[
            ("ACLSHMEM_UCX_PROGRESS_THREAD", "0"),
            ("ACLSHMEM_UCX_TIMEOUT", "20"),
        ],
    );
    // the heaps lie at the same address on both nodes too
    c.osh("heap_address", &[], 2, NONE);
    // allocations, frees and 2-D splits against barriers fail and keep the heaps symmetric
    c.osh(
        "alloc_crossed",
        &[],
        2,
        &[("ACLSHMEM_OSHMEM_ON_ERROR", "continue")],
    );
    // programs that return from main without shmem_finalize (no_finalize.c): a PE that left
    // serves the others over UCX until they finish, and one left out of a barrier is named
    for mode in ["reads", "race", "subteam"] {
        c.osh("no_finalize", &[mode], 2, NONE);
    }
    for (mode, says) in [
        ("early0", "PE 1 left the job"),
        ("early_wait", "every other PE left the job"),
    ] {
        let start = std::time::Instant::now();
        let out = c.osh_run("no_finalize", &[mode], 2, NONE);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.status.success() && text.contains(says) && !text.contains("FAIL"),
            "no_finalize {mode}: {:?}\n{text}",
            out.status
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no_finalize {mode}: {text}"
        );
    }
}

/// Kernels of the CPU device mode (tests/c/kernel_tests.cpp, built with scripts/aclshmem-cxx) on 2
/// nodes, 1 and 2 PEs each: device RMA and put-with-signal of every type, waits and tests, device
/// atomics of every type (the 1/2-byte and floating adds, the MTE, RoCE and UDMA atomics reach a
/// PE on the other node through the transport: they changed nothing there before), the engines'
/// copies (`aclshmem_roce_ptr` of a PE on the other node stands for its copy: it was NULL, and the
/// RoCE write through it moved nothing), many blocks and a kernel waiting for another PE's; and
/// the SIMT families (tests/c/simt_tests.cpp).
#[test]
fn kernels_across_nodes() {
    let _g = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    static BUILT: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);
    let Some(exe) = common::kernel_build::build_program(&BUILT, "kernel_tests", "c++") else {
        common::skip(
            "kernels_across_nodes",
            "python3 or c++ is missing (the CPU device mode's compiler wrapper needs both)",
        );
        return;
    };
    let Some(c) = Cluster::up("kernels_across_nodes", 2) else {
        return;
    };
    // the SIMT program (tests/kernels.rs built it already; rebuilt here only when stale): its copies
    // to a PE this process does not map go element by element through the transport
    static SIMT: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);
    let simt = common::kernel_build::build_program(&SIMT, "simt_tests", "c++")
        .expect("c++ and python3 were found for kernel_tests");
    let kernel_scenarios = [
        "families",
        "atomics",
        "tests",
        "sized",
        "cross_pe",
        "engines",
        "engine_qp",
        "many_blocks",
    ];
    let mut failed = Vec::new();
    for per_node in [1, 2] {
        let programs = kernel_scenarios
            .iter()
            .map(|&s| ("kernel_tests", &exe, s))
            .chain([("simt_tests", &simt, "simt")]);
        for (prog, exe, scenario) in programs {
            if !selected(prog, scenario) {
                continue;
            }
            let r = c.run_exe(
                &["--tag-output"],
                exe.clone(),
                scenario,
                per_node,
                &[("ACLSHMEM_LOCAL_MEM_SIZE", "64M")],
            );
            let oks = r.stdout.matches(&format!("OK {scenario}")).count();
            eprintln!(
                "kernels_across_nodes: {prog} {scenario} ({per_node} per node): exit {:?}, {oks} OK, in {:.1?}",
                r.status.code(),
                r.elapsed
            );
            if !r.status.success() || oks != 2 * per_node || !r.failures().is_empty() {
                failed.push(format!("{prog} {scenario} ({per_node} per node):\n{}", r.dump()));
            }
        }
    }
    assert_none_failed("kernels_across_nodes", failed);
}

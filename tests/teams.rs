//! Teams, team barriers and host-side collectives: real PE processes started by `aclshmrun`, each
//! running one scenario of `tests/c/team_tests.c`.
//!
//! * `splits`, `translate_matrix`: strided, nested and 2-D splits checked member by member
//!   (team_my_pe, team_n_pes, translate_pe both ways, get_config, barriers), the validation of
//!   every argument, destroy, and a reference model of translate_pe over many teams;
//! * `many_teams`: 2047 user teams (the table full, then one more → ACLSHMEM_INNER_ERROR), destroy
//!   and re-create, slot reuse, and disjoint groups creating teams in between world-wide splits
//!   (handles agreed among each team's members, lowest slot free on all of them);
//! * `team_barrier_phases`: 500 phases of writes into peers followed by a team barrier or sync,
//!   in two teams at once;
//! * `collectives`: broadcast (every root), collect (per-member counts), fcollect, alltoall for
//!   every type, the byte forms, and every reduction of every type on 1, 3, 1000 and (some types)
//!   70000 elements, in place too, on the world, strided sub-teams and concurrent 2-D x teams,
//!   against a reference computed in C; once per algorithm setting as well;
//! * `asymmetric`, `asymmetric_broadcast`, `asymmetric_lengths`: splits, broadcasts and
//!   collectives whose arguments differ between members fail instead of hanging, and write nothing
//!   outside the calls' buffers; `barrier_against_collective`: a member in a barrier while the
//!   others make a collective call; `asymmetric_types`: reductions of different element types;
//!   `asymmetric_families`: members making different collectives;
//!   `asymmetric_mix`: a random mix of all of these;
//! * `soak`: well-formed calls of every family at lengths around every path threshold, checked
//!   byte by byte;
//! * `bad_input`, `bad_algo`: error codes, before init and after finalize included.
//!
//! Every run has the launcher's own `--timeout` and a harness-side limit on top.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Run, run_pes};

/// The launcher's `--timeout` for every job.
const JOB_TIMEOUT: Duration = Duration::from_secs(120);

/// The algorithm settings whose paths differ most from the defaults: pushes and the scattered
/// reduction (their barrier path for every length above the rings).
const PUSH: &[(&str, &str)] = &[
    ("ACLSHMEM_BCAST_ALGO", "push"),
    ("ACLSHMEM_COLLECT_ALGO", "push"),
    ("ACLSHMEM_ALLTOALL_ALGO", "push"),
    ("ACLSHMEM_REDUCE_ALGO", "scatter"),
];

fn team_tests() -> PathBuf {
    common::compile_c("team_tests")
}

/// Runs `scenario` (with extra program arguments) on `n` PEs and returns the finished run.
fn run(scenario: &str, extra: &[&str], n: usize, env: &[(&str, &str)]) -> Run {
    let prog = team_tests();
    let mut args = vec![prog.into_os_string(), scenario.into()];
    args.extend(extra.iter().map(Into::into));
    run_pes(n, &args, env, JOB_TIMEOUT)
}

/// Runs `scenario` on `n` PEs and asserts it passed.
fn scenario_env(scenario: &str, extra: &[&str], n: usize, env: &[(&str, &str)]) -> Run {
    let r = run(scenario, extra, n, env);
    r.assert_ok(scenario);
    r
}

fn scenario(name: &str, n: usize) -> Run {
    scenario_env(name, &[], n, &[])
}

#[test]
fn splits_8pes() {
    scenario("splits", 8);
}

/// Other sizes: 3 PEs (a nested prefix of one member) and 12 (past the shapes the bad-split
/// checks once assumed invalid).
#[test]
fn splits_3_and_12pes() {
    scenario("splits", 3);
    scenario("splits", 12);
}

#[test]
fn translate_matrix_8pes() {
    scenario("translate_matrix", 8);
}

#[test]
fn many_teams_2pes() {
    scenario("many_teams", 2);
}

#[test]
fn many_teams_4pes() {
    scenario("many_teams", 4);
}

#[test]
fn team_barrier_phases_4pes() {
    scenario("team_barrier_phases", 4);
}

#[test]
fn team_barrier_phases_8pes() {
    scenario("team_barrier_phases", 8);
}

#[test]
fn collectives_2pes() {
    scenario("collectives", 2);
}

#[test]
fn collectives_4pes() {
    scenario("collectives", 4);
}

#[test]
fn collectives_7pes() {
    scenario("collectives", 7);
}

const MOVE_VARS: [&str; 3] = [
    "ACLSHMEM_BCAST_ALGO",
    "ACLSHMEM_COLLECT_ALGO",
    "ACLSHMEM_ALLTOALL_ALGO",
];

#[test]
fn collectives_pull_7pes() {
    let env: Vec<(&str, &str)> = MOVE_VARS.iter().map(|v| (*v, "pull")).collect();
    scenario_env("collectives", &[], 7, &env);
}

#[test]
fn collectives_push_7pes() {
    let env: Vec<(&str, &str)> = MOVE_VARS.iter().map(|v| (*v, "push")).collect();
    scenario_env("collectives", &[], 7, &env);
}

#[test]
fn collectives_reduce_direct_4pes() {
    // the 70000-element cases, which auto would run with scatter, go through direct
    scenario_env("collectives", &[], 4, &[("ACLSHMEM_REDUCE_ALGO", "direct")]);
}

#[test]
fn collectives_reduce_scatter_7pes() {
    // every type on 70000 elements; 1, 3 and 1000 elements split unevenly over 7 members
    scenario_env("collectives", &["big"], 7, &[("ACLSHMEM_REDUCE_ALGO", "scatter")]);
}

/// Strided splits made by the new team's members only (as the original's unit tests make them:
/// the odd PEs split, the even PEs do not call), a split another PE is alone in, and splits whose
/// members ask for different teams: the first member fails with ACLSHMEM_TIMEOUT_ERROR after
/// ACLSHMEM_COLLECTIVE_TIMEOUT, saying who did not come, and the library stays usable; a 2-D split
/// whose x ranges differ fails on every member at once.
#[test]
fn asymmetric_and_members_only_splits_3pes() {
    asymmetric_splits(3);
}

#[test]
fn asymmetric_and_members_only_splits_4pes() {
    asymmetric_splits(4);
}

fn asymmetric_splits(n: usize) {
    let run = scenario_env("asymmetric", &[], n, &[("ACLSHMEM_COLLECTIVE_TIMEOUT", "2s")]);
    for needed in [
        format!("1 of the new team's {n} members called it"),
        "asymmetric split_2d".to_string(),
    ] {
        assert!(
            run.stdout.contains(&needed) || run.stderr.contains(&needed),
            "the failures do not say {needed:?}:\n{}",
            run.dump()
        );
    }
}

/// Broadcasts whose root differs between members fail with ACLSHMEM_INVALID_PARAM on every member
/// (at the call, or for two would-be roots within the next 16 calls) instead of hanging or
/// reporting success; on the barrier-free small path, the publish/acknowledge path and the
/// barrier path (push).
#[test]
fn asymmetric_broadcast_3pes() {
    scenario("asymmetric_broadcast", 3);
}

#[test]
fn asymmetric_broadcast_4pes_push() {
    scenario_env("asymmetric_broadcast", &[], 4, &[("ACLSHMEM_BCAST_ALGO", "push")]);
}

/// Collectives whose members pass different lengths fail (fcollect, alltoall, reductions: on every
/// member; broadcast: on every member whose length differs from the root's) and write nothing
/// outside any member's dest; the team works afterwards. Each length pair meets a path: one ring,
/// the two rings, a ring and the barrier path, the barrier path alone.
#[test]
fn asymmetric_lengths_3pes() {
    scenario("asymmetric_lengths", 3);
}

#[test]
fn asymmetric_lengths_2pes_push_scatter() {
    scenario_env("asymmetric_lengths", &[], 2, PUSH);
}

#[test]
fn asymmetric_lengths_4pes_direct() {
    scenario_env(
        "asymmetric_lengths",
        &[],
        4,
        &[("ACLSHMEM_REDUCE_ALGO", "direct")],
    );
}

/// Reductions whose members name different element types of one length (int32 and float, int64
/// and int32, uint64 and int64, double and int64; on the rings, the barrier path and beyond):
/// every member fails with `ACLSHMEM_INVALID_PARAM`, nothing written past any dest, the team works
/// afterwards (`team_tests.c asymmetric_types`).
/// Members making different collectives in one call (every ordered pair of fcollect, alltoall,
/// sum reduction and collect, one member against the others, 64 bytes and 8 KiB): every member
/// fails, nothing written past any dest, the team works afterwards (`team_tests.c
/// asymmetric_families`; through a transport a collect's lengths exchange met an fcollect's
/// barriers, which returned 0).
#[test]
fn asymmetric_families_3_and_4pes() {
    scenario("asymmetric_families", 3);
    scenario("asymmetric_families", 4);
}

#[test]
fn asymmetric_types_3pes() {
    scenario("asymmetric_types", 3);
}

#[test]
fn asymmetric_types_4pes_scatter_last_member() {
    scenario_env(
        "asymmetric_types",
        &["3"],
        4,
        &[("ACLSHMEM_REDUCE_ALGO", "scatter")],
    );
}

/// A member in a team barrier while the others make a collective call that waits for it: the
/// call fails on the others instead of waiting for ever, the member's barrier counts the call as
/// made and failed, and the team's calls match again (`team_tests.c barrier_against_collective`,
/// one and two members in the barrier, the world team too). Where the members are mapped the
/// others read the member's barrier words; through a transport (the suite's
/// `ACLSHMEM_DIRECT_ACCESS=0` and UCX runs) the barrier's arrival counter tells a program's
/// barrier from a collective call's.
fn barrier_against_collective(n: usize) {
    scenario("barrier_against_collective", n);
}

#[test]
fn barrier_against_collective_2pes() {
    barrier_against_collective(2);
}

#[test]
fn barrier_against_collective_4pes() {
    barrier_against_collective(4);
}

/// A member that is not the root waits in a barrier while the others broadcast (the rings, whose
/// root waits for nobody, and the barrier path): it must not stay a call behind (its next
/// broadcast delivered the missed one's data); 2 and 4 PEs, a split team and the world team, in
/// each of the suite's transport settings.
#[test]
fn broadcast_root_against_barrier_2_and_4pes() {
    for n in [2, 4] {
        scenario_env("bcast_root_against_barrier", &[], n, &[]);
        scenario_env("bcast_root_against_barrier", &["world"], n, &[]);
    }
}

/// The last members in the barrier instead of the first (the broadcast's root the last member).
#[test]
fn barrier_against_collective_last_members_3pes() {
    scenario_env("barrier_against_collective", &["last"], 3, &[]);
}

/// The same through each transport whatever the suite's settings: the shm transport on 3 PEs,
/// UCX on 2.
#[test]
fn barrier_against_collective_through_transports() {
    scenario_env(
        "barrier_against_collective",
        &[],
        3,
        &[("ACLSHMEM_DIRECT_ACCESS", "0")],
    );
    scenario_env(
        "barrier_against_collective",
        &[],
        2,
        &[("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")],
    );
}

/// A reproducible random mix of well-formed calls, calls of another length, family or root and a
/// member in a barrier instead (`team_tests.c asymmetric_mix`): documented returns, nothing
/// written past a dest, the team's calls matching after each one (made anew where documented).
/// On a split team: two seeds on 3 and 4 PEs, one with the push and scatter algorithms (their
/// barrier path for every length above the rings); on the world team, both settings again. With
/// the suite's transport settings (directly, through the shm transport, over UCX).
#[test]
fn asymmetric_mix_3_and_4pes() {
    let env = [];
    scenario_env("asymmetric_mix", &["1", "150"], 3, &env);
    scenario_env("asymmetric_mix", &["7", "150"], 4, &env);
    scenario_env("asymmetric_mix", &["11", "150"], 3, PUSH);
    // the world team (its own rings; the calls after which a team is made anew are made alike)
    scenario_env("asymmetric_mix", &["3", "150", "world"], 4, &env);
    scenario_env("asymmetric_mix", &["8", "150", "world"], 3, PUSH);
}

/// Well-formed calls of every family (fcollect, alltoall, collect of per-member lengths, broadcast
/// from any root, int64 sum and int32 max) at lengths on both sides of every path threshold up to
/// 1 MiB per member, every byte of every dest and the bytes past it checked (`team_tests.c
/// soak`): a split team, the world team and a team in a late slot, then the push and scatter
/// algorithms; in each of the suite's transport settings (across nodes: `tests/multinode.rs`).
#[test]
fn soak_3_and_4pes() {
    scenario_env("soak", &["1", "200"], 3, &[]);
    scenario_env("soak", &["2", "150", "world"], 4, &[]);
    scenario_env("soak", &["3", "150"], 3, PUSH);
    // a team in a slot past the wide ones (smaller rings, eager and partials areas)
    scenario_env("soak", &["4", "150", "high"], 3, &[]);
}

#[test]
fn bad_input_2pes() {
    scenario("bad_input", 2);
}

#[test]
fn bad_input_4pes() {
    scenario("bad_input", 4);
}

/// `bad_algo` with `var=bogus` on `n` PEs: every PE's init returns ACLSHMEM_INVALID_VALUE.
fn bad_algo(var: &str, n: usize, extra: &[&str]) {
    let r = scenario_env("bad_algo", extra, n, &[(var, "bogus")]);
    let rejected = r
        .stdout
        .lines()
        .filter(|l| l.contains("init returned -2"))
        .count();
    assert_eq!(rejected, n, "every PE reports init = -2\n{}", r.dump());
    assert!(
        r.stdout.contains(var),
        "the log names the variable {var}\n{}",
        r.dump()
    );
}

#[test]
fn bad_algo_reduce_1pe() {
    bad_algo("ACLSHMEM_REDUCE_ALGO", 1, &[]);
}

#[test]
fn bad_algo_bcast_1pe() {
    bad_algo("ACLSHMEM_BCAST_ALGO", 1, &[]);
}

#[test]
fn bad_algo_collect_1pe() {
    bad_algo("ACLSHMEM_COLLECT_ALGO", 1, &[]);
}

#[test]
fn bad_algo_alltoall_1pe() {
    bad_algo("ACLSHMEM_ALLTOALL_ALGO", 1, &[]);
}

/// Every PE of a job must get -2, also when the others start their init after PE 0 failed.
#[test]
fn bad_algo_reduce_2pes_staggered() {
    bad_algo("ACLSHMEM_REDUCE_ALGO", 2, &["stagger"]);
}

/// Back-to-back broadcasts of every root and size around the barrier-free limits, with reductions
/// between them and teams created and destroyed over one slot (`tests/c/bcast_tests.c`; across
/// nodes, the eager path, in `tests/multinode.rs`).
#[test]
fn broadcast_back_to_back_4pes() {
    let prog = common::compile_c("bcast_tests");
    run_pes(
        4,
        &[prog.into_os_string(), "back_to_back".into()],
        &[],
        JOB_TIMEOUT,
    )
    .assert_ok("back_to_back");
}

//! Hierarchical collectives for jobs across nodes (`Instance::hierarchical`): the members on one
//! node move data through shared memory, and only one leader per node (its first member, see
//! [`sync::Groups`]) talks to the other nodes over the transports. Only the calls that gain from
//! it are here (broadcast, reductions, with the default algorithm settings); the others run the
//! generic paths of the parent module, whose barriers are hierarchical too.
//!
//! `unsafe`: reads and writes of heap copies through checked symmetric buffers (as the parent).

use super::reduce::{self, Element, Op};
use super::{Sym, copy};
use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync::{self, Groups};
use crate::team_table::Team;
use crate::transport::{AmoOp, Width};
use crate::wait::Watch;

/// Above this many bytes the leaders read the root's source (UCX gets) instead of the root
/// writing into theirs (puts, much slower over tcp for large transfers).
pub(super) const PULL_ABOVE: usize = 64 * 1024;

/// Broadcast of `len` bytes from member `root`, in three steps:
/// 1. every member records the root it named (by call parity), and the team meets in a
///    hierarchical barrier (sources ready, destinations free);
/// 2. between nodes: up to [`PULL_ABOVE`] bytes, the root puts the data into each other node's
///    leader's destination and, after a fence, increments the leader's data counter by a value
///    naming the call and the root; the leader waits for exactly that total. Larger, each leader
///    gets the root's source and acknowledges; the root waits for every acknowledgement.
///    Meanwhile each member compares the root it named with its leader's (leaders: with member
///    0's) before it waits; a member that finds a difference marks the call failed in every
///    member, which ends every wait of the call with `ACLSHMEM_INVALID_PARAM` (a member that does
///    not wait, the root of a small broadcast say, may have returned already);
/// 3. inside each node: the members copy from the member that holds the data (the root on its
///    node, else the leader) between two shared-memory barriers.
///
/// After an asymmetric call the team's broadcast counters may disagree, so later broadcasts on
/// the team can fail too (as after a timed-out barrier).
#[allow(clippy::too_many_arguments)]
pub(super) fn broadcast(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    s: Sym<'_>,
    len: usize,
    root: usize,
    root_dest: bool,
    seq: u64,
) -> Result<()> {
    let me = inst.my_pe();
    let root_pe = t.world_pe(root);
    let root_node = inst.node_of(root_pe);
    let on_root_node = inst.node_of(me) == root_node;
    let tag = (seq as u32 as u64) << 32;
    let named = tag | (root as u64 + 1);
    let view = sync::BCAST_VIEW + 8 * (seq % 2) as usize;
    sync::own_word(inst, t.slot, view).store(named, Ordering::Relaxed);
    sync::barrier(inst, t)?;
    let leading = g.leading(t);
    let failed =
        || sync::own_word(inst, t.slot, sync::BCAST_FAILED).load(Ordering::Acquire) & !0xffff_ffff == tag;
    let routes = inst.routes();
    let mut result = Ok(());
    // 2. between nodes (the root, and the leaders of the other nodes); the root sends before it
    // checks, everybody else checks before waiting
    let others: Vec<usize> = g
        .leaders
        .iter()
        .map(|&i| t.world_pe(i))
        .filter(|&pe| inst.node_of(pe) != root_node)
        .collect();
    if len > 0 && len <= PULL_ABOVE && t.my_index == root {
        for &pe in &others {
            // SAFETY: checked symmetric buffers of `len` bytes; source and dest do not overlap.
            result = unsafe { d.write(inst, pe, 0, s.mine(), len) }
                .and_then(|_| routes.to(pe)?.fence())
                .and_then(|_| {
                    let at = sync::slot_remote(inst, t.slot, sync::BCAST_DATA, pe);
                    routes.to(pe)?.atomic_post(at, Width::W64, AmoOp::FetchAdd(named))
                });
            if result.is_err() {
                break;
            }
        }
    }
    // the root each member named: against its leader's, the leaders' against member 0's
    let reference = if leading {
        t.world_pe(0)
    } else {
        t.world_pe(g.local[0])
    };
    if reference != me {
        let theirs = sync::remote_word(inst, t.slot, view, reference, AmoOp::Fetch);
        if let Err(e) = theirs {
            result = result.and(Err(e));
        } else if let Ok(theirs) = theirs
            && theirs != named
        {
            let msg = format!(
                "asymmetric broadcast on team {}: every member must name the same root; this PE (PE {me}) \
                 named root {root}, PE {reference} named root {}",
                t.slot,
                (theirs as u32).wrapping_sub(1)
            );
            eprintln!("aclshmem: [PE {me}] {msg}");
            for i in 0..t.size {
                let _ = sync::remote_word(
                    inst,
                    t.slot,
                    sync::BCAST_FAILED,
                    t.world_pe(i),
                    AmoOp::Set(tag | 1),
                );
            }
            result = Err(Error::InvalidParam(msg));
        }
    }
    if len > PULL_ABOVE && t.my_index == root && !others.is_empty() && result.is_ok() {
        {
            let acked = sync::own_word(inst, t.slot, sync::BCAST_ACKED);
            let target = acked.load(Ordering::Relaxed).wrapping_add(others.len() as u64);
            acked.store(target, Ordering::Relaxed);
            let count = sync::own_word(inst, t.slot, sync::BCAST_ACK);
            let what = || {
                format!(
                    "broadcast on team {}: {} node leader(s) have not read the root's data",
                    t.slot,
                    others.len()
                )
            };
            result = wait_for(inst, || count.load(Ordering::Acquire) == target, &failed, what);
        }
    }
    if len > 0 && leading && !on_root_node && result.is_ok() {
        if len <= PULL_ABOVE {
            let seen = sync::own_word(inst, t.slot, sync::BCAST_SEEN);
            let target = seen.load(Ordering::Relaxed).wrapping_add(named);
            seen.store(target, Ordering::Relaxed);
            let count = sync::own_word(inst, t.slot, sync::BCAST_DATA);
            let what = || {
                format!(
                    "broadcast on team {}: the data of root {root} (PE {root_pe}) has not arrived",
                    t.slot
                )
            };
            result = result.and(wait_for(
                inst,
                || count.load(Ordering::Acquire) == target,
                &failed,
                what,
            ));
        } else {
            // SAFETY: the root's checked source stays unchanged until it has our acknowledgement.
            result = result
                .and_then(|_| unsafe { s.read(inst, root_pe, 0, d.mine(), len) })
                .and_then(|_| {
                    let at = sync::slot_remote(inst, t.slot, sync::BCAST_ACK, root_pe);
                    routes
                        .to(root_pe)?
                        .atomic_post(at, Width::W64, AmoOp::FetchAdd(1))
                });
        }
    }
    if len > 0 && t.my_index == root && root_dest {
        // SAFETY: checked symmetric, non-overlapping buffers of `len` bytes in our own heap.
        unsafe { copy(s.mine(), d.mine(), len) };
    }
    // 3. inside each node: the holder has the data once it arrives here
    if g.local.len() > 1 {
        let r = sync::local_barrier(inst, t, g);
        result = result.and(r);
        let holder = if on_root_node { root } else { g.local[0] };
        if len > 0 && result.is_ok() && t.my_index != holder && !failed() {
            let from = if on_root_node { s } else { d };
            // SAFETY: the holder is on this node (mapped); its buffer holds `len` bytes and stays
            // unchanged until the local barrier below.
            result = unsafe { from.read(inst, t.world_pe(holder), 0, d.mine(), len) };
        }
        let r = sync::local_barrier(inst, t, g);
        result = result.and(r);
    }
    if result.is_ok() && failed() {
        result = Err(Error::InvalidParam(format!(
            "asymmetric broadcast on team {}: the members named different roots (the PE that found it \
             names them in its own error)",
            t.slot
        )));
    }
    result
}

/// Waits until `done`, driving the transports' progress; fails when the call is marked failed
/// (`failed`) or past `ACLSHMEM_COLLECTIVE_TIMEOUT`.
fn wait_for(
    inst: &Instance,
    done: impl Fn() -> bool,
    failed: &impl Fn() -> bool,
    what: impl Fn() -> String,
) -> Result<()> {
    let mut w = Watch::new(inst.limits());
    while !done() {
        if failed() {
            return Err(Error::InvalidParam(format!(
                "{}: the call was found asymmetric",
                what()
            )));
        }
        inst.routes().progress();
        w.snooze(&what).map_err(|e| sync::expired(inst, what(), e))?;
    }
    Ok(())
}

/// Reduction of `n` elements: each node's leader reduces its node's sources (shared memory) into
/// its own destination, the leaders meet, each reads every other leader's partial result and
/// combines them in leader order (the same order everywhere, so every PE gets the same bits for
/// floating-point types), the leaders meet again (every partial was read), and each node's members
/// copy their leader's result.
pub(super) fn reduce<T: Element>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    s: Sym<'_>,
    n: usize,
    op: Op,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let len = n * size;
    // sources of this node ready, destinations free (only a leader reads others' sources, and
    // only leaders' destinations are read from other nodes, after the leaders met)
    sync::local_barrier(inst, t, g)?;
    let leading = g.leading(t);
    if leading {
        let node = gather::<T>(inst, t, s, &g.local, n, op)?;
        let mut total = node;
        if g.leaders.len() > 1 {
            // SAFETY: our own dest holds n elements.
            unsafe { copy(total.as_ptr().cast(), d.mine(), len) };
            sync::leaders_barrier(inst, t, g)?;
            let partial = total;
            total = Vec::with_capacity(n);
            let mut fetched: Vec<T> = Vec::with_capacity(n);
            for (j, &li) in g.leaders.iter().enumerate() {
                let part: &[T] = if j == g.my_leader {
                    &partial
                } else {
                    fetched.clear();
                    // SAFETY: `fetched` has room for n elements, which the read fills before
                    // `set_len` exposes them (elements are plain data); the leader's dest holds
                    // its partial until the second leaders' barrier.
                    unsafe {
                        d.read(inst, t.world_pe(li), 0, fetched.as_mut_ptr().cast(), len)?;
                        fetched.set_len(n);
                    }
                    &fetched
                };
                if j == 0 {
                    total.extend_from_slice(part);
                } else {
                    reduce::combine(&mut total, part, op);
                }
            }
            sync::leaders_barrier(inst, t, g)?;
        }
        // SAFETY: our own dest holds n elements.
        unsafe { copy(total.as_ptr().cast(), d.mine(), len) };
    }
    sync::local_barrier(inst, t, g)?;
    if !leading {
        // SAFETY: the leader is on this node (mapped) and its dest holds the n-element result
        // until the local barrier below.
        unsafe { d.read(inst, t.world_pe(g.local[0]), 0, d.mine(), len)? };
    }
    sync::local_barrier(inst, t, g)
}

/// The reduction of the sources of `members` (team indices, on this node), in their order.
fn gather<T: Element>(
    inst: &Instance,
    t: &Team,
    s: Sym<'_>,
    members: &[usize],
    n: usize,
    op: Op,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let mut acc: Vec<T> = Vec::with_capacity(n);
    let mut fetched: Vec<T> = Vec::with_capacity(n);
    for (k, &i) in members.iter().enumerate() {
        fetched.clear();
        // SAFETY: member i's source holds n aligned elements (checked here, symmetric on all) and
        // is not written before the closing local barrier; `fetched` has room for n elements,
        // filled before `set_len`.
        unsafe {
            s.read(inst, t.world_pe(i), 0, fetched.as_mut_ptr().cast(), n * size)?;
            fetched.set_len(n);
        }
        if k == 0 {
            acc.extend_from_slice(&fetched);
        } else {
            reduce::combine(&mut acc, &fetched, op);
        }
    }
    Ok(acc)
}

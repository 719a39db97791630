//! Hierarchical collectives for jobs across nodes (`Instance::hierarchical`): the members on one
//! node move data through shared memory, and only one leader per node (its first member, see
//! [`sync::Groups`]) talks to the other nodes over the transports. Only the calls that gain from
//! it are here (broadcast, reductions, with the default algorithm settings); the others run the
//! generic paths of the parent module, whose barriers are hierarchical too.
//!
//! `unsafe`: reads and writes of heap copies through checked symmetric buffers (as the parent).

use super::reduce::{self, Element, Op};
use super::{Sym, copy};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync::{self, Groups};
use crate::team_table::{DEEP_OFFSET, DEEP_SLOT_BYTES, Team, WIDE_SLOTS};
use crate::transport::{AmoOp, Remote, Width};
use crate::wait::Watch;

/// Above this many bytes the leaders read the root's source (UCX gets) instead of the root
/// writing into theirs (puts, much slower over tcp for large transfers).
pub(super) const PULL_ABOVE: usize = 64 * 1024;

/// How long a leader waits for a broadcast's pushed data before it checks that the members named
/// the same root (a correct call's data normally arrives sooner; see [`broadcast`]).
const COMPARE_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

/// Broadcast of `len` bytes from member `root`, in three steps:
/// 1. every member records the root it named (by call parity), and the team agrees on the call
///    ([`agree_nodes`]: the node's members meet and their leader compares their calls, the leaders
///    exchange theirs; sources ready, destinations free; a call of another root, length or family,
///    or a member in a barrier of the program instead, fails every member here) where the
///    leaders' entries hold a record, else meets in a hierarchical barrier; only then does the
///    member count the call among the team's hierarchical broadcasts (so members that failed
///    here, and a member that missed the call in a barrier, count alike);
/// 2. between nodes: up to [`PULL_ABOVE`] bytes, the root puts the data into each other node's
///    leader's destination and, after a fence, increments the leader's data counter by a value
///    naming the call and the root; the leader waits for exactly that total. Larger, each leader
///    gets the root's source and acknowledges; the root waits for every acknowledgement.
///    Before that each member compares the root it named with its leader's (leaders: with member
///    0's; a leader waiting for pushed data only once its wait lasts), the root before it sends;
///    a member that finds a difference marks the call failed in every member, which ends every
///    wait of the call with `ACLSHMEM_INVALID_PARAM` (a member that does not wait may have
///    returned already, with its destination untouched: only the root all of its node named
///    sends);
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
    // the call, a fold of the length (teams of fewer than 65535 members) and the root
    let named = tag | named_len(t, len) << 16 | (root as u64 + 1);
    // this member's count of hierarchical broadcasts on the team picks the view (see
    // sync::BCAST_VIEW: every member counts the same calls, each of which begins with a barrier)
    let count = sync::own_word(inst, t.slot, sync::BCAST_COUNT);
    let nth = count.load(Ordering::Relaxed);
    let view = sync::BCAST_VIEW + 8 * (nth % 2) as usize;
    sync::own_word(inst, t.slot, view).store(named, Ordering::Relaxed);
    if eager_fits(t.slot, g.leaders.len(), 16) {
        agree_nodes(inst, t, g, seq, super::Call::broadcast(root, len))?;
    } else {
        sync::barrier(inst, t)?;
    }
    count.store(nth.wrapping_add(1), Ordering::Relaxed);
    let leading = g.leading(t);
    let failed =
        || sync::own_word(inst, t.slot, sync::BCAST_FAILED).load(Ordering::Acquire) & !0xffff_ffff == tag;
    let routes = inst.routes();
    let mut result = Ok(());
    // 2. between nodes (the root, and the leaders of the other nodes); everybody checks before
    // sending or waiting (a root that alone named itself once wrote its data into the other
    // leaders' destinations before it found out, and they returned it as the call's result)
    let others: Vec<usize> = g
        .leaders
        .iter()
        .map(|&i| t.world_pe(i))
        .filter(|&pe| inst.node_of(pe) != root_node)
        .collect();
    // the root each member named: against its leader's, the leaders' against member 0's
    let reference = if leading {
        t.world_pe(0)
    } else {
        t.world_pe(g.local[0])
    };
    // A leader that waits for pushed data compares only if its wait lasts (the data of a root it
    // alone named never comes, and its wait then finds the difference): reading member 0's view
    // on another node costs a round trip, which a correct call need not pay.
    let waits_for_data = len > 0 && len <= PULL_ABOVE && leading && !on_root_node;
    // marks the call failed on every member and returns `msg` as the error
    let fail = |msg: String| -> Error {
        crate::logging::write_stderr(&format!("aclshmem: [PE {me}] {msg}\n"));
        for i in 0..t.size {
            let _ = sync::remote_word(
                inst,
                t.slot,
                sync::BCAST_FAILED,
                t.world_pe(i),
                AmoOp::Set(tag | 1),
            );
        }
        Error::InvalidParam(msg)
    };
    let compare = || -> Result<()> {
        let theirs = sync::remote_word(inst, t.slot, view, reference, AmoOp::Fetch)?;
        if theirs == named {
            return Ok(());
        }
        let (their_root, mine_root) = (named_root(t, theirs), named_root(t, named));
        let msg = if their_root == mine_root {
            format!(
                "asymmetric broadcast on team {}: every member must pass the same length; this PE (PE \
                 {me}) passed {len} bytes, PE {reference} another length",
                crate::team_table::TeamName(t.slot)
            )
        } else {
            format!(
                "asymmetric broadcast on team {}: every member must name the same root; this PE (PE {me}) \
                 named root {root}, PE {reference} named root {}",
                crate::team_table::TeamName(t.slot),
                their_root.wrapping_sub(1)
            )
        };
        Err(fail(msg))
    };
    // the data between nodes goes through the mailboxes where the transports have them: a leader
    // takes a message of its own length only (another length fails the call, its dest untouched)
    let inc = inst.team_cells().incarnation(t.slot);
    let key = |part: usize| crate::transport::MailKey {
        slot: t.slot as u32,
        part: part as u32,
        tag: 0x48 << 56 | u64::from(inc & 0xffff) << 40 | (root as u64 + 1) << 32 | seq as u32 as u64,
    };
    if reference != me && !waits_for_data {
        result = result.and(compare());
    }
    if len > 0 && len <= PULL_ABOVE && t.my_index == root && result.is_ok() {
        for &pe in &others {
            // the data, then the word naming the call and root (one active message over UCX: no
            // fence, whose round trip cost more than the rest); the leader waits for the word in
            // this call, so it lands before anybody goes on
            let at = sync::slot_remote(inst, t.slot, sync::BCAST_DATA, pe);
            result = routes.to(pe).and_then(|to| {
                if to.has_mail() {
                    // SAFETY: our checked source holds `len` bytes.
                    unsafe { super::mail::send(to, pe, key, 0, s.mine(), len) }
                } else {
                    // SAFETY: checked symmetric buffers of `len` bytes; source and dest do not
                    // overlap; the word lies in the leader's sync area.
                    unsafe { to.put_notify(d.remote(pe, 0), s.mine(), len, at, named) }
                }
            });
            if result.is_err() {
                break;
            }
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
                    crate::team_table::TeamName(t.slot),
                    others.len()
                )
            };
            result = wait_for(inst, t, || count.load(Ordering::Acquire) == target, &failed, what);
        }
    }
    if len > 0 && leading && !on_root_node && result.is_ok() {
        if len <= PULL_ABOVE {
            // the root's word names the call and root (another root's, in an asymmetric call,
            // never matches: the deferred comparison below finds it)
            let target = named;
            let count = sync::own_word(inst, t.slot, sync::BCAST_DATA);
            let what = || {
                format!(
                    "broadcast on team {}: the data of root {root} (PE {root_pe}) has not arrived",
                    crate::team_table::TeamName(t.slot)
                )
            };
            // the deferred comparison (above): once, after the wait has lasted COMPARE_AFTER
            let started = std::time::Instant::now();
            let compared = std::cell::Cell::new(reference == me);
            let mismatch = std::cell::Cell::new(None);
            let failed_or_differs = || {
                if !compared.get() && started.elapsed() >= COMPARE_AFTER {
                    compared.set(true);
                    if let Err(e) = compare() {
                        mismatch.set(Some(e));
                        return true;
                    }
                }
                failed()
            };
            let mailed = routes.to(root_pe).ok().filter(|to| to.has_mail());
            let rx = super::mail::Receiver::new();
            let arrived = || match mailed {
                // SAFETY: our checked dest holds `len` bytes, apart from the mailbox.
                Some(to) => unsafe { rx.poll(to, key, d.mine(), len) },
                None => count.load(Ordering::Acquire) == target,
            };
            let r = wait_for(inst, t, arrived, &failed_or_differs, what);
            result = result.and(match mismatch.take() {
                Some(e) => Err(e),
                None => r,
            });
            if result.is_ok()
                && mailed.is_some()
                && let Err(m) = rx.outcome()
            {
                result = Err(fail(format!(
                    "asymmetric broadcast on team {}: every member must pass the same length; this PE \
                     (PE {me}) passed {len} bytes, the root (PE {root_pe}) {m}",
                    crate::team_table::TeamName(t.slot)
                )));
            }
            if result.is_ok() {
                // consumed: the word names this call only (a later team on the slot restarts the
                // call numbers; the slot's reset clears it too)
                count.store(0, Ordering::Relaxed);
            }
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
        let holder = if on_root_node { root } else { g.local[0] };
        // whether the holder has the data: a leader whose wait was ended by another member's
        // failure mark has not, and the mark may reach the other members of its node only after
        // they copied its destination (the marking member sets one member after another)
        let held = tag | if result.is_ok() && !failed() { 1 } else { 2 };
        if t.my_index == holder {
            sync::own_word(inst, t.slot, sync::HELD).store(held, Ordering::Relaxed);
        }
        let r = sync::local_barrier(inst, t, g);
        result = result.and(r);
        if len > 0 && result.is_ok() && t.my_index != holder && !failed() {
            // (the holder is on this node: a load; an error keeps the word unlike any call's, and
            // the local barrier below is entered all the same)
            let theirs = sync::remote_word(inst, t.slot, sync::HELD, t.world_pe(holder), AmoOp::Fetch);
            if let Err(e) = theirs {
                result = Err(e);
            } else if theirs.ok() != Some(tag | 1) {
                result = Err(Error::InvalidParam(format!(
                    "asymmetric broadcast on team {}: the data did not reach this node (member {holder}, \
                     PE {}, found the call asymmetric; the PE that found it names the roots in its own error)",
                    crate::team_table::TeamName(t.slot),
                    t.world_pe(holder)
                )));
            } else {
                let from = if on_root_node { s } else { d };
                // SAFETY: the holder is on this node (mapped); its buffer holds `len` bytes and
                // stays unchanged until the local barrier below.
                result = unsafe { from.read(inst, t.world_pe(holder), 0, d.mine(), len) };
            }
        }
        let r = sync::local_barrier(inst, t, g);
        result = result.and(r);
    }
    if result.is_ok() && failed() {
        result = Err(Error::InvalidParam(format!(
            "asymmetric broadcast on team {}: the members named different roots (the PE that found it \
             names them in its own error)",
            crate::team_table::TeamName(t.slot)
        )));
    }
    result
}

/// The length's part of a hierarchical broadcast's record (`named`): a fold of it in 16 bits, or
/// nothing on teams too large for the root to fit the other 16.
fn named_len(t: &Team, len: usize) -> u64 {
    if t.size >= 0xffff {
        return 0;
    }
    let l = len as u64;
    (l ^ l >> 16 ^ l >> 32 ^ l >> 48) & 0xffff
}

/// The root + 1 a hierarchical broadcast's record names (see [`named_len`]).
fn named_root(t: &Team, named: u64) -> u32 {
    if t.size >= 0xffff {
        named as u32
    } else {
        named as u32 & 0xffff
    }
}

/// Waits until `done`, driving the transports' progress; fails when the call is marked failed
/// (`failed`), past `ACLSHMEM_COLLECTIVE_TIMEOUT`, or when a member of `t` left the job without
/// finalizing (`sync::Departure`): these waits are for another node's leader or root, which
/// stands for members this PE does not wait for itself, so a member that left anywhere in the
/// team counts (a leader whose node lost a member failed its call without answering, and the
/// other nodes waited for ever).
pub(super) fn wait_for(
    inst: &Instance,
    t: &Team,
    done: impl Fn() -> bool,
    failed: &impl Fn() -> bool,
    what: impl Fn() -> String,
) -> Result<()> {
    let mut w = Watch::new(inst.limits());
    let mut dep = sync::Departure::default();
    while !done() {
        if failed() {
            return Err(Error::InvalidParam(format!(
                "{}: the call was found asymmetric",
                what()
            )));
        }
        inst.routes().progress();
        w.snooze(&what).map_err(|e| sync::expired(inst, what(), e))?;
        dep.check(inst, &w, || sync::departed_member(inst, t, 0..t.size), &what)?;
    }
    Ok(())
}

/// A lasting wait's look at whether the PE it waits for waits in a barrier of the program instead
/// of this call (`sync::waits_in_program_barrier`, a round trip each: at doubling intervals from
/// [`COMPARE_AFTER`] of the wait, which the caller measures); where it does, the call fails on
/// every member that waits for it, and the members in the barrier take the call up when their
/// barrier ends ([`BarrierLook::fail`]).
pub(super) struct BarrierLook<'a> {
    inst: &'a Instance,
    t: &'a Team,
    pe: usize,
    seq: u64,
    next: std::cell::Cell<std::time::Duration>,
    found: std::cell::Cell<bool>,
}

impl<'a> BarrierLook<'a> {
    /// For a wait of the call `t` is making now (its number taken) for world PE `pe`.
    pub(super) fn new(inst: &'a Instance, t: &'a Team, pe: usize) -> Self {
        BarrierLook {
            inst,
            t,
            pe,
            seq: inst.team_cells().seq(t.slot),
            next: std::cell::Cell::new(COMPARE_AFTER),
            found: std::cell::Cell::new(false),
        }
    }

    /// Whether the PE was found in a barrier, looking again when the wait has lasted `waited`
    /// past the next look's time.
    pub(super) fn look(&self, waited: std::time::Duration) -> bool {
        if !self.found.get() && waited >= self.next.get() {
            self.next.set(self.next.get() * 2);
            self.found.set(sync::waits_in_program_barrier(
                self.inst, self.t, self.pe, self.seq,
            ));
        }
        self.found.get()
    }

    /// Whether the PE was found in a barrier.
    pub(super) fn found(&self) -> bool {
        self.found.get()
    }

    /// The call's error once the PE was found in a barrier; the members in the barrier are told
    /// the call's number and, where it failed in the leaders' exchange number `x`, that number.
    pub(super) fn fail(&self, x: Option<u64>) -> Error {
        match x {
            Some(x) => sync::skipped_exchange(self.inst, self.t, self.seq, x),
            None => sync::skipped(self.inst, self.t, self.seq),
        }
        sync::in_program_barrier(self.inst, self.t, Some(self.seq))
    }
}

/// Reduction of `n` elements: each node's leader reduces its node's sources (shared memory) into
/// its own destination, the leaders exchange their partial results, each combines them in leader
/// order (the same order everywhere, so every PE gets the same bits for floating-point types),
/// and each node's members copy their leader's result.
///
/// The leaders' exchange: small partials ([`eager_fits`]) are pushed — each leader puts its
/// partial into every other leader's copy of the slot's partials area (by call parity, see
/// [`sync::PARTIALS`]), then after a fence a word naming the call; a leader waits for every other
/// leader's word, so the exchange costs one one-way message instead of two leaders' barriers and
/// a read per leader. Larger partials: the leaders meet, read each other's from their
/// destinations, and meet again (every partial was read).
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
    // every member numbers the call (the same on all: collectives are called in the same order)
    let seq = super::small::next_seq(inst, t);
    let call = super::Call::reduce::<T>(op, len);
    // sources of this node ready, destinations free (only a leader reads others' sources, and
    // only leaders' destinations are read from other nodes, after the leaders met)
    let (leading, tag, mut result) = start_on_node(inst, t, g, seq, call)?;
    if leading {
        // every step below is taken even after a failure (with what the leader has), so the
        // other leaders and this node's members are never left waiting; a leader whose node
        // disagreed sends its partial marked as another call, so the other leaders fail too
        let r = reduce_leader::<T>(inst, t, g, d, s, n, op, result.is_err(), seq);
        result = result.and(r);
    }
    // whether the leader holds the result (its node's members fail with it)
    if leading {
        let held = tag | if result.is_ok() { 1 } else { 2 };
        sync::own_word(inst, t.slot, sync::HELD).store(held, Ordering::Relaxed);
    }
    let r = sync::local_barrier(inst, t, g);
    result = result.and(r);
    if !leading && result.is_ok() {
        let leader = t.world_pe(g.local[0]);
        result = leader_held(inst, t, g, tag, "reduction").and_then(|()| {
            // SAFETY: the leader is on this node (mapped) and its dest holds the n-element
            // result until the local barrier below.
            unsafe { d.read(inst, leader, 0, d.mine(), len) }
        });
    }
    let r = sync::local_barrier(inst, t, g);
    result.and(r)
}

/// A leader's part of [`reduce`]: its node's partial, the leaders' exchange and the result in its
/// own dest. `poisoned`: its node's members disagreed, so its partial goes out as another call's
/// (the other leaders fail) and the call fails here too.
#[allow(clippy::too_many_arguments)]
fn reduce_leader<T: Element>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    s: Sym<'_>,
    n: usize,
    op: Op,
    poisoned: bool,
    seq: u64,
) -> Result<()> {
    let len = n * std::mem::size_of::<T>();
    // the node's partial, the fetched parts, the total and another leader's partial, in this
    // thread's reused buffers
    let mut bufs = super::Buffers::take();
    let [b_node, b_fetch, b_total, b_theirs] = bufs.all();
    let node: &mut [T] = super::scratch_slice(b_node, n);
    if !poisoned {
        gather::<T>(inst, t, s, &g.local, node, super::scratch_slice(b_fetch, n), op)?;
    }
    let pushed = eager_fits(t.slot, g.leaders.len(), len);
    let total: &[T] = if g.leaders.len() > 1 && (pushed || mail_fits(inst, t, g, len)) {
        let (total, theirs) = (
            super::scratch_slice(b_total, n),
            super::scratch_slice(b_theirs, n),
        );
        if pushed {
            exchange_partials(inst, t, g, node, total, theirs, op, poisoned)?;
        } else {
            exchange_mailed(inst, t, g, node, total, theirs, op, poisoned)?;
        }
        total
    } else if g.leaders.len() > 1 {
        // SAFETY: our own dest holds n elements.
        unsafe { copy(node.as_ptr().cast(), d.mine(), len) };
        let agreed = eager_fits(t.slot, g.leaders.len(), 16);
        if agreed {
            // the leaders' agreement on the call is their first meeting (each pushes its record
            // once its partial is in its dest): a leader of another call (another length or
            // element type, or another family, whose leaders exchange calls or partials and
            // never meet in this barrier) or whose node disagreed fails every leader here
            agree_leaders(inst, t, g, super::Call::reduce::<T>(op, len), poisoned)?;
        } else {
            if poisoned {
                // the other leaders learn it from the mark, after the second leaders' barrier
                sync::mark_failed(inst, t, seq);
            }
            sync::leaders_barrier(inst, t, g)?;
        }
        // every leader compares its call with the first leader's (which every member of that
        // node matched), as `sync::agreed` does: a leader whose members named another element
        // type of one length would otherwise read the others' partials as its own type (where
        // the leaders' entries are too small for the agreement above)
        let differs = if !agreed && g.my_leader != 0 && !poisoned {
            let first = t.world_pe(g.leaders[0]);
            let call = super::Call::reduce::<T>(op, len);
            let mine = sync::Said {
                call: seq as u32,
                arg: call.arg(),
                len: len as u64,
            };
            let theirs = sync::said(inst, t.slot, first)?;
            (theirs != mine).then(|| {
                sync::mark_failed(inst, t, seq);
                super::differ(inst, t, seq, call, theirs, first)
            })
        } else {
            None
        };
        let partial: &[T] = node;
        let total: &mut [T] = super::scratch_slice(b_total, n);
        let fetched: &mut [T] = super::scratch_slice(b_fetch, n);
        for (j, &li) in g.leaders.iter().enumerate().filter(|_| differs.is_none()) {
            let part: &[T] = if j == g.my_leader {
                partial
            } else {
                // SAFETY: `fetched` holds n elements, which the read fills; the leader's dest
                // holds its partial until the second leaders' barrier.
                unsafe { d.read(inst, t.world_pe(li), 0, fetched.as_mut_ptr().cast(), len)? };
                fetched
            };
            if j == 0 {
                total.copy_from_slice(part);
            } else {
                reduce::combine(total, part, op);
            }
        }
        sync::leaders_barrier(inst, t, g)?;
        if let Some(msg) = differs {
            return Err(Error::InvalidParam(msg));
        }
        if sync::marked_failed(inst, t, seq) {
            return Err(Error::InvalidParam(format!(
                "asymmetric reduction on team {}: another node's members made another call (its \
                 leader names the calls)",
                crate::team_table::TeamName(t.slot)
            )));
        }
        total
    } else {
        node
    };
    if poisoned {
        return Err(Error::InvalidParam("poisoned".into()));
    }
    // SAFETY: our own dest holds n elements.
    unsafe { copy(total.as_ptr().cast(), d.mine(), len) };
    bufs.keep();
    Ok(())
}

/// Largest partial the leaders exchange through their mailboxes ([`exchange_mailed`]) when there
/// are more than two of them. (4 nodes × 1 PE, int64 sum, against the scatter path: 96 KiB
/// 550 / 1800 µs, 256 KiB 1450 / 2250, 512 KiB 2100 / 3100, 1 MiB 7500 / 4800.)
pub(super) const MAIL_MAX: usize = 512 * 1024;

/// [`MAIL_MAX`] for two leaders, where reading each other's vector wins sooner (2 nodes × 1 PE:
/// 96 KiB 90 / 129 µs, 128 KiB 110 / 146, 256 KiB 298 / 226). (Before the mailbox reused its
/// buffers, both leaders sending 48-64 KiB at once were the slower way: every message and
/// partial was a fresh allocation, and glibc gave the freed top of its heap back each call.)
pub(super) const MAIL_MAX_PAIR: usize = 128 * 1024;

/// Whether the leaders of `t` can exchange partials of `len` bytes through their mailboxes: the
/// transports to the other leaders have them (the same on every leader: they reach each other
/// over the network transport).
pub(super) fn mail_fits(inst: &Instance, t: &Team, g: &Groups, len: usize) -> bool {
    let max = if g.leaders.len() == 2 {
        MAIL_MAX_PAIR
    } else {
        MAIL_MAX
    };
    len <= max
        && g.leaders
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != g.my_leader)
            .all(|(_, &li)| inst.routes().to(t.world_pe(li)).is_ok_and(|to| to.has_mail()))
}

/// The leaders' exchange of larger partials: each sends its partial to every other leader's
/// mailbox ([`crate::transport::Transport::mail`]), under the exchange's number (this leader's
/// count of exchanges, `sync::PUSH_COUNT`, the same on every leader), the team's incarnation and
/// its own index; then takes every other leader's and combines them in leader order. No barrier:
/// a partial that arrives before its receiver is in the call waits in the mailbox, and a leader
/// is at most one exchange ahead of another (it needs the other's partial to finish), so keys
/// are never reused while a message under them is in flight. (2 nodes: the leaders met, read
/// each other's destination and met again.) Every part carries the call's note (operator,
/// element type, length; [`POISONED`] when the sender's node's members disagreed): a partial of
/// another length or note fails the call with `ACLSHMEM_INVALID_PARAM` on both sides before it is
/// combined.
#[allow(clippy::too_many_arguments)]
fn exchange_mailed<T: Element>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    partial: &[T],
    total: &mut [T],
    theirs: &mut [T],
    op: Op,
    poisoned: bool,
) -> Result<()> {
    let len = std::mem::size_of_val(partial);
    let count = sync::own_word(inst, t.slot, sync::PUSH_COUNT);
    let x = count.load(Ordering::Relaxed) + 1;
    count.store(x, Ordering::Relaxed);
    // part i of leader `from`'s partial
    let inc = inst.team_cells().incarnation(t.slot);
    let call_no = inst.team_cells().seq(t.slot);
    let key = |from: usize| move |part: usize| mail_key(t, inc, from, x, call_no, part);
    let routes = inst.routes();
    // every part carries the call's note: a leader whose members named another element type
    // (of one length) is found by it; a poisoned leader's note is no call's
    let call = super::Call::reduce::<T>(op, len);
    let note = if poisoned { POISONED } else { mail_note(call) };
    for (j, &li) in g.leaders.iter().enumerate() {
        if j == g.my_leader {
            continue;
        }
        let pe = t.world_pe(li);
        // SAFETY: `partial` holds `len` bytes.
        unsafe {
            super::mail::send(
                routes.to(pe)?,
                pe,
                key(g.my_leader),
                note,
                partial.as_ptr().cast(),
                len,
            )?
        };
    }
    for (j, &li) in g.leaders.iter().enumerate() {
        let part: &[T] = if j == g.my_leader {
            partial
        } else {
            let from = t.world_pe(li);
            let to = routes.to(from)?;
            let rx = super::mail::Receiver::new();
            let buf = theirs.as_mut_ptr().cast::<u8>();
            // SAFETY: `theirs` holds n elements (`len` bytes), apart from the mailbox.
            let arrived = || unsafe { rx.poll(to, key(j), buf, len) };
            let stalled = || {
                format!(
                    "reduction on team {}: the partial result of node leader PE {from} has not arrived",
                    crate::team_table::TeamName(t.slot)
                )
            };
            let started = std::time::Instant::now();
            let look = BarrierLook::new(inst, t, from);
            let otherwise = || {
                let waited = started.elapsed();
                waited >= COMPARE_AFTER && (sent_otherwise(inst, t, g, j, x, false) || look.look(waited))
            };
            let r = wait_for(inst, t, arrived, &otherwise, stalled);
            if r.is_err() && look.found() {
                return Err(look.fail(Some(x)));
            }
            r?;
            if rx.note() == Some(POISONED) {
                return Err(node_disagreed(t, "reduction", from));
            }
            if let Some(theirs) = rx.note().filter(|&n| n != note) {
                let said = sync::Said {
                    call: x as u32,
                    arg: (theirs >> 32) as u32,
                    len: u64::from(theirs as u32),
                };
                let theirs = super::Call::from_said(said).name();
                let msg = super::mismatch(
                    inst,
                    t,
                    "reduction",
                    &call,
                    &format!("node leader PE {from}"),
                    &theirs,
                );
                crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
                return Err(Error::InvalidParam(msg));
            }
            if let Err(m) = rx.outcome() {
                let msg = format!(
                    "asymmetric reduction on team {}: every member must name the same count; this \
                     node's leader (PE {}) has {len} bytes, node leader PE {from} sent another length \
                     (a part of {m} bytes)",
                    crate::team_table::TeamName(t.slot),
                    inst.my_pe()
                );
                crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
                return Err(Error::InvalidParam(msg));
            }
            &*theirs
        };
        if j == 0 {
            total.copy_from_slice(part);
        } else {
            reduce::combine(total, part, op);
        }
    }
    Ok(())
}

/// The note of a mailed partial of `call` ([`exchange_mailed`]): its argument word (operator and
/// element type) above the low 32 bits of its length (partials of another length are found by
/// their parts' lengths too).
fn mail_note(call: super::Call) -> u64 {
    u64::from(call.arg()) << 32 | u64::from(call.len as u32)
}

/// The note of a partial mailed by a leader whose node's members disagreed: no call's (no family
/// has an argument word of all ones).
const POISONED: u64 = u64::MAX;
/// The record such a leader pushes in the leaders' agreement ([`agree_leaders`]): no call's.
const POISONED_RECORD: [u8; 16] = [0xff; 16];

/// The error of `what` ("reduction") on `t` where node leader `pe` found members of its node
/// that made another call (a poisoned partial or record).
fn node_disagreed(t: &Team, what: &str, pe: usize) -> Error {
    Error::InvalidParam(format!(
        "asymmetric {what} on team {}: node leader PE {pe} found members of its node that made \
         another call (the PE that found it names the calls)",
        crate::team_table::TeamName(t.slot)
    ))
}

/// The mailbox key of part `part` of leader `from`'s partial in exchange `x` on `t`
/// ([`exchange_mailed`]).
/// The key names the team's call (its number's low byte) besides the exchange: a partial mailed
/// in another call of the team (members out of step after an asymmetric call) is never taken for
/// this one's.
fn mail_key(t: &Team, inc: u32, from: usize, x: u64, call: u64, part: usize) -> crate::transport::MailKey {
    crate::transport::MailKey {
        slot: t.slot as u32,
        part: part as u32,
        tag: 0x4d << 56
            | ((inc & 0xffff) as u64) << 40
            | (from as u64) << 32
            | (call as u8 as u64) << 24
            | (x & 0xff_ffff),
    }
}

/// A leader waiting in exchange `x` for leader `j`'s partial the way it sent its own finds, once
/// the wait lasted [`COMPARE_AFTER`], whether `j` sent it the other way (a partial of another
/// length: pushed where this one mailed, or mailed where it pushed), so neither waits for ever.
fn sent_otherwise(inst: &Instance, t: &Team, g: &Groups, j: usize, x: u64, pushed: bool) -> bool {
    if pushed {
        let Ok(to) = inst.routes().to(t.world_pe(g.leaders[j])) else {
            return false;
        };
        let inc = inst.team_cells().incarnation(t.slot);
        let call = inst.team_cells().seq(t.slot);
        // SAFETY: a length of 0: nothing is written through the pointer (a message found is
        // dropped: this exchange fails)
        unsafe { to.take_mail(mail_key(t, inc, j, x, call, 0), std::ptr::null_mut(), 0) }.is_some()
    } else {
        let e = entry(t.slot, g.leaders.len());
        let w = area_word(inst, t.slot, ((x % 2) as usize * g.leaders.len() + j) * e);
        announces(w.load(Ordering::Acquire), call_word(x, 0, 0, 0))
    }
}

/// Where `slot`'s partials area lies (offset in the device heap) and its bytes. Slots below
/// [`WIDE_SLOTS`] use the region of their deep narrow ring (`collectives::small`), which only
/// jobs whose PEs are all mapped use, never one with a pushed exchange (some PE on another node):
/// 17 KiB, so partials and blocks up to 4 KiB go in one message between 2 leaders (2 KiB between
/// 4, 1 KiB between 8; 2 nodes, 512-byte sum-reduce: 40-45 us through the leaders' barriers
/// against OSHMEM's 13). The other slots use their sync-pool exchange area (`sync::PARTIALS`).
fn area(inst: &Instance, slot: usize) -> (usize, usize) {
    let at = if slot < WIDE_SLOTS {
        inst.rings() + DEEP_OFFSET + slot * DEEP_SLOT_BYTES
    } else {
        sync::slot_off(inst, slot, sync::PARTIALS)
    };
    (at, area_bytes(slot))
}

/// A new team in `slot`: clears this PE's copy of the slot's partials area when it is not the
/// sync pool's (which team creation clears), before the team's first barrier.
pub(super) fn reset(inst: &Instance, slot: usize) {
    if inst.all_direct() || slot >= WIDE_SLOTS {
        return;
    }
    let (at, bytes) = area(inst, slot);
    // SAFETY: this slot's partials area in our own heap (`bytes` bytes); nobody writes it before
    // the new team's first barrier, which follows.
    unsafe { std::ptr::write_bytes(inst.device().local_addr(at), 0, bytes) };
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// Bytes of `slot`'s partials area ([`area`]; known without an instance).
fn area_bytes(slot: usize) -> usize {
    if slot < WIDE_SLOTS {
        DEEP_SLOT_BYTES
    } else {
        sync::PARTIALS_BYTES
    }
}

/// Bytes of one leader's entry in `slot`'s partials area when `leaders` leaders share it: half
/// the area per call parity, split evenly (8-byte aligned). It depends on the team only, never on
/// a call's length, so calls of different lengths use the same entries.
fn entry(slot: usize, leaders: usize) -> usize {
    (area_bytes(slot) / 2 / leaders.max(1)) & !7
}

/// Whether partials of `len` bytes from `leaders` node leaders fit their entries in `slot`'s
/// area (the call word, then the partial).
pub(super) fn eager_fits(slot: usize, leaders: usize, len: usize) -> bool {
    8 + len.next_multiple_of(8) <= entry(slot, leaders)
}

/// Byte `off` of `slot`'s partials area in world PE `pe`'s copy, for a transport.
fn area_remote(inst: &Instance, slot: usize, off: usize, pe: usize) -> Remote<'_> {
    Remote {
        heap: inst.device(),
        off: area(inst, slot).0 + off,
        pe,
    }
}

/// Word `off` of this PE's copy of `slot`'s partials area.
fn area_word(inst: &Instance, slot: usize, off: usize) -> &AtomicU64 {
    let p = inst.device().local_addr(area(inst, slot).0 + off);
    // SAFETY: an 8-byte aligned word (entries are 8-byte multiples) inside the area, in our own
    // mapped heap for the instance's lifetime, only accessed atomically.
    unsafe { &*(p as *const AtomicU64) }
}

/// The word that marks leader entries of exchange `x` (its low 24 bits) of call `tag`
/// (`Call::tag`) and element type `elem` (`Call::elem8`), the team's call number `call` (its low
/// byte): a sender whose call differs is found by them, also one making the same kind of call as
/// another of its calls on the team (members out of step after an asymmetric call, which would
/// otherwise pair one member's call with another's next one and return its data as this one's).
/// A mark in the high byte, so the area's other uses, which hold small values there, are not
/// mistaken for it, then the type, the tag, the call, the exchange.
fn call_word(x: u64, tag: u16, elem: u8, call: u64) -> u64 {
    0x52 << 56 | u64::from(elem) << 48 | u64::from(tag) << 32 | (call as u8 as u64) << 24 | (x & 0xff_ffff)
}

/// The bits of a [`call_word`] that name the sender's call (type, tag, call number).
const CALL_BITS: u64 = 0xffff_ffff << 24;

/// Whether entry word `v` announces the exchange of `word` (whatever the sender's call).
fn announces(v: u64, word: u64) -> bool {
    v & !CALL_BITS == word & !CALL_BITS
}

/// The error of an exchange whose sender `from` marked its entry with word `theirs` (another
/// call: [`call_word`]) where this PE made `mine`.
fn differs(inst: &Instance, t: &Team, what: &str, mine: super::Call, from: usize, theirs: u64) -> Error {
    let ours = inst.team_cells().seq(t.slot);
    if (theirs >> 32) as u16 == mine.tag() && (theirs >> 24) as u8 != ours as u8 {
        // the same kind of call, as another of the team's calls: the members are out of step
        let msg = format!(
            "asymmetric {what} on team {}: every member must make the same collective calls in the same \
             order; this PE (PE {}) makes it as its call {ours} on the team, PE {from} as another of its \
             calls (number {:#04x} modulo 256): an earlier call of the team was not the same on every \
             member",
            crate::team_table::TeamName(t.slot),
            inst.my_pe(),
            (theirs >> 24) as u8
        );
        crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
        return Error::InvalidParam(msg);
    }
    let call = super::Call::from_tag((theirs >> 32) as u16).with_elem8((theirs >> 48) as u8);
    Error::InvalidParam(super::mismatch(
        inst,
        t,
        what,
        &mine,
        &format!("PE {from}"),
        &call.name(),
    ))
}

/// What a pushed exchange carries, for the tag of its words: a call's record (an agreement), a
/// call's data, or a reduction's partial (which a leader with another length may have mailed
/// instead).
#[derive(Clone, Copy)]
enum Tag {
    Record,
    Data,
    Partial,
}

/// The pushed exchange of [`reduce`]: sends this leader's `partial` to every other leader,
/// waits for theirs, and returns their combination in leader order.
///
/// Entries and words are numbered by the leader's own count of these exchanges on the team
/// (`sync::PUSH_COUNT`), the same on every leader (all take part in each). Every entry is
/// cleared once read (the count restarts with each team that uses the slot, so a marked entry
/// left over could pass for a later team's exchange). Why an entry is never overwritten before
/// it is read, nor cleared after its next use arrived: a leader cannot finish exchange x without
/// the other's partial of x, which the other sends only after it finished exchange x - 1
/// (reads and clears included); so a leader is at most one exchange ahead of another, and the
/// two parities keep exchanges x and x + 1 apart. (The team's call number would not do: eager
/// broadcasts between two exchanges advance it without anybody waiting for anybody, and a root
/// could then push exchange x + 2 into the entry of x before a descheduled leader read it.) The
/// area's other users ([`sync::exchange`], a broadcast's views) write only a PE's own copy,
/// between barriers of their own, so never while a partial is in flight to it.
#[allow(clippy::too_many_arguments)]
fn exchange_partials<T: Element>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    partial: &[T],
    total: &mut [T],
    theirs: &mut [T],
    op: Op,
    poisoned: bool,
) -> Result<()> {
    // SAFETY: `partial` is n plain elements, viewed as their bytes.
    let bytes =
        unsafe { std::slice::from_raw_parts(partial.as_ptr().cast::<u8>(), std::mem::size_of_val(partial)) };
    exchange_pushed(
        inst,
        t,
        g,
        bytes.len(),
        // a poisoned partial goes out as a record: the other leaders find another call
        (
            super::Call::reduce::<T>(op, bytes.len()),
            if poisoned { Tag::Record } else { Tag::Partial },
        ),
        |_| bytes,
        "reduction",
        "partial result",
        |j, data| {
            let part: &[T] = if j == g.my_leader {
                partial
            } else {
                // SAFETY: `data` holds a leader's n elements (its `len` bytes, the size of
                // `theirs`), copied byte-wise (no alignment needed).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        theirs.as_mut_ptr().cast::<u8>(),
                        data.len().min(std::mem::size_of_val(theirs)),
                    );
                }
                &*theirs
            };
            if j == 0 {
                total.copy_from_slice(part);
            } else {
                reduce::combine(total, part, op);
            }
        },
    )?;
    Ok(())
}

/// The next pushed exchange on `t` among `l` leaders (this PE's count of them, `sync::PUSH_COUNT`)
/// for call `tag`: where leader j's entry lies in every leader's partials area, and the word that
/// marks it.
fn next_exchange(
    inst: &Instance,
    t: &Team,
    l: usize,
    tag: u16,
    elem: u8,
) -> (impl Fn(usize) -> usize, u64, u64) {
    let count = sync::own_word(inst, t.slot, sync::PUSH_COUNT);
    let x = count.load(Ordering::Relaxed) + 1;
    count.store(x, Ordering::Relaxed);
    let e = entry(t.slot, l);
    let at = move |j: usize| ((x % 2) as usize * l + j) * e;
    (at, call_word(x, tag, elem, inst.team_cells().seq(t.slot)), x)
}

/// The pushed exchange itself (see [`exchange_partials`]): sends `mine(j)` (at most `len` bytes,
/// `len` the same on every leader) to every other node leader j, then hands every leader's entry
/// for this one to `each` in leader order: `len` bytes, of which the sender wrote as many as it
/// sent (its own: `mine` of itself). `what`/`item` name the collective and its data in a stall or
/// timeout message. A leader whose entry names another call than `tag` (another length, say)
/// makes the exchange fail with `ACLSHMEM_INVALID_PARAM` once every entry arrived (each is
/// consumed all the same, and `each` is not given it).
#[allow(clippy::too_many_arguments)]
fn exchange_pushed<'a>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    len: usize,
    call: (super::Call, Tag),
    mine: impl Fn(usize) -> &'a [u8],
    what: &str,
    item: &str,
    mut each: impl FnMut(usize, &[u8]),
) -> Result<()> {
    let l = g.leaders.len();
    let tag = match call.1 {
        Tag::Record => call.0.agree_tag(),
        Tag::Data | Tag::Partial => call.0.tag(),
    };
    if !eager_fits(t.slot, l, len) {
        return Err(Error::Inner(format!(
            "{len} bytes do not fit a pushed exchange entry"
        )));
    }
    // a record compares the whole call itself; a partial names its element type beside the tag
    let elem = match call.1 {
        Tag::Partial => call.0.elem8(),
        Tag::Record | Tag::Data => 0,
    };
    let (at, word, x) = next_exchange(inst, t, l, tag, elem);
    let routes = inst.routes();
    let own = at(g.my_leader);
    for (j, &li) in g.leaders.iter().enumerate() {
        if j == g.my_leader {
            continue;
        }
        let pe = t.world_pe(li);
        let to = routes.to(pe)?;
        let data = mine(j);
        if data.len() > len {
            return Err(Error::Inner(format!(
                "{} bytes for an exchange of {len}",
                data.len()
            )));
        }
        // SAFETY: `data` holds at most `len` bytes; the destination range lies in the leader's copy of
        // this slot's partials area (checked by `eager_fits` above), which nobody else writes
        // now; the word, which announces the data (it lands after them), in the same area. The
        // leader waits for the word, so the transport need not complete it at a later quiet.
        unsafe {
            to.put_notify(
                area_remote(inst, t.slot, own + 8, pe),
                data.as_ptr(),
                data.len(),
                area_remote(inst, t.slot, own, pe),
                word,
            )?
        };
    }
    let mut result = Ok(());
    for j in 0..l {
        if j == g.my_leader {
            if result.is_ok() {
                each(j, mine(j));
            }
            continue;
        }
        let flag = area_word(inst, t.slot, at(j));
        let from = t.world_pe(g.leaders[j]);
        let stalled = || {
            format!(
                "{what} on team {}: the {item} of node leader PE {from} has not arrived",
                crate::team_table::TeamName(t.slot)
            )
        };
        // Acquire: pairs with the leader's data-before-word order; the leader may have mailed a
        // reduction's partial in this exchange instead (a partial of another length, or another
        // family: a reduction whose partials go by mail against this exchange of calls or blocks)
        let started = std::time::Instant::now();
        // (the leader may wait in a barrier of the program instead of this call)
        let look = BarrierLook::new(inst, t, from);
        let otherwise = || {
            let waited = started.elapsed();
            waited >= COMPARE_AFTER && (sent_otherwise(inst, t, g, j, x, true) || look.look(waited))
        };
        let r = wait_for(
            inst,
            t,
            || announces(flag.load(Ordering::Acquire), word),
            &otherwise,
            stalled,
        );
        if r.is_err() && look.found() {
            // the others fail here the same way; the members in the barrier take up the call
            // and this exchange's number when their barrier ends
            return Err(look.fail(Some(x)));
        }
        r?;
        let theirs = flag.load(Ordering::Relaxed);
        if theirs != word {
            if result.is_ok() {
                result = Err(differs(inst, t, what, call.0, from, theirs));
            }
        } else if result.is_ok() {
            let src = inst.device().local_addr(area(inst, t.slot).0 + at(j) + 8);
            // SAFETY: the entry's `len` bytes lie in our own partials area (the leader's data,
            // announced by its word above, at their start) and nobody writes this entry again
            // before we clear its word below.
            each(j, unsafe { std::slice::from_raw_parts(src as *const u8, len) });
        }
        // consumed: a later team on this slot restarts the count, so an entry left marked could
        // pass for one of its exchanges
        flag.store(0, Ordering::Relaxed);
    }
    result
}

/// For a team with one member per node: every member sends `call`'s record (its argument word
/// and length) to every other in a pushed exchange and compares theirs with its own, before
/// [`push_direct`] writes into their destinations. It stands for the barrier that call needs
/// (a member's entry arrives once it entered the call) and fails on every member, before any
/// block moves, when one passed another length. Teams whose exchange entries are too small for
/// the record take the barrier, unchecked.
pub(super) fn agree_pushed(inst: &Instance, t: &Team, g: &Groups, call: super::Call) -> Result<()> {
    if !eager_fits(t.slot, g.leaders.len(), 16) {
        return sync::barrier(inst, t);
    }
    agree_leaders(inst, t, g, call, false)
}

/// The node leaders' pushed exchange of their calls' records ([`agree_pushed`]; the leaders'
/// entries must hold 16 bytes, [`eager_fits`]): fails on every leader when one leader's call
/// differs from another's, or when a leader's node disagreed (`poisoned`: that leader sends a
/// record no call has).
pub(super) fn agree_leaders(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    call: super::Call,
    poisoned: bool,
) -> Result<()> {
    let what = call.family();
    let rec = if poisoned { POISONED_RECORD } else { call.record() };
    let mut differ = None;
    exchange_pushed(
        inst,
        t,
        g,
        16,
        (call, Tag::Record),
        |_| &rec,
        what,
        "call",
        |j, data| {
            if differ.is_none() && data[..16] != rec {
                let mut theirs = [0u8; 16];
                theirs.copy_from_slice(&data[..16]);
                differ = Some((t.world_pe(g.leaders[j]), theirs));
            }
        },
    )?;
    match differ {
        None => Ok(()),
        Some((pe, data)) if data == POISONED_RECORD => Err(node_disagreed(t, what, pe)),
        Some((pe, data)) => Err(Error::InvalidParam(super::mismatch(
            inst,
            t,
            what,
            &call,
            &format!("PE {pe}"),
            &super::Call::from_said(super::Call::said_of(&data, 0)).name(),
        ))),
    }
}

/// The start of a collective call `call` (number `seq`) on a team with several members on some
/// node, in place of an opening barrier ([`super::agreed`]): every member records its call, the
/// node's members meet, each leader compares its members' records with its own and the leaders
/// exchange theirs ([`agree_leaders`]), each leader states the verdict in its `HELD` word, the
/// node's members meet again and read it. On success every member of every node is in the call
/// (sources ready, destinations free); on a difference every member fails with
/// `ACLSHMEM_INVALID_PARAM` after one more node barrier, as [`reduce`] ends a failed call, so a
/// member of another family here (a reduction, whose leaders exchange partials, not calls) is
/// found by the leaders' exchange instead of leaving both waiting in different steps.
pub(super) fn agree_nodes(inst: &Instance, t: &Team, g: &Groups, seq: u64, call: super::Call) -> Result<()> {
    let (leading, tag, mut result) = start_on_node(inst, t, g, seq, call)?;
    if leading {
        if g.leaders.len() > 1 {
            let r = agree_leaders(inst, t, g, call, result.is_err());
            result = result.and(r);
        }
        let held = tag | if result.is_ok() { 1 } else { 2 };
        sync::own_word(inst, t.slot, sync::HELD).store(held, Ordering::Relaxed);
    }
    let r = sync::local_barrier(inst, t, g);
    result = result.and(r);
    if !leading && result.is_ok() {
        result = leader_held(inst, t, g, tag, "call");
    }
    if result.is_err() {
        let _ = sync::local_barrier(inst, t, g);
    }
    result
}

/// The start of call `call` (number `seq`) on a node ([`reduce`], [`agree_nodes`]): records this
/// PE's call, meets the node's other members, and a leader compares their records with its own
/// ([`compare_node`]). Returns whether this PE leads its node, the call's mark for `sync::HELD`
/// (the call number in the high half) and the comparison's result (`Ok` on the others).
fn start_on_node(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    seq: u64,
    call: super::Call,
) -> Result<(bool, u64, Result<()>)> {
    let mine = sync::Said {
        call: seq as u32,
        arg: call.arg(),
        len: call.len,
    };
    sync::record(inst, t.slot, mine);
    let leading = g.leading(t);
    let result = match sync::local_barrier(inst, t, g) {
        // a member of this node waits in a barrier of the program instead (the node barrier
        // passed all the same: the call goes on through its steps, failed, so the other leaders
        // fail too); it counts the call as made when its barrier ends
        Err(Error::InvalidParam(_)) => {
            sync::skipped(inst, t, seq);
            Err(sync::in_program_barrier(inst, t, Some(seq)))
        }
        Err(e) => return Err(e),
        Ok(()) if leading => compare_node(inst, t, g, seq, call, mine),
        Ok(()) => Ok(()),
    };
    Ok((leading, (seq as u32 as u64) << 32, result))
}

/// A leader's comparison of its node's members' records of call `seq` with its own (`mine`; a
/// load each: same node).
fn compare_node(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    seq: u64,
    call: super::Call,
    mine: sync::Said,
) -> Result<()> {
    for &m in g.local.iter().filter(|&&m| m != t.my_index) {
        let pe = t.world_pe(m);
        let theirs = sync::said(inst, t.slot, pe)?;
        if theirs != mine {
            return Err(Error::InvalidParam(super::differ(inst, t, seq, call, theirs, pe)));
        }
    }
    Ok(())
}

/// A node member's reading of its leader's verdict on call `tag` (call number in the high half):
/// the leader holds the call's result (or agreement), or the call fails here too.
fn leader_held(inst: &Instance, t: &Team, g: &Groups, tag: u64, what: &str) -> Result<()> {
    let leader = t.world_pe(g.local[0]);
    match sync::remote_word(inst, t.slot, sync::HELD, leader, AmoOp::Fetch) {
        Ok(w) if w == tag | 1 => Ok(()),
        Ok(_) => Err(Error::InvalidParam(format!(
            "asymmetric {what} on team {}: this node's leader (PE {leader}) or another node's found \
             members that made another call (the PE that found it names the calls)",
            crate::team_table::TeamName(t.slot)
        ))),
        Err(e) => Err(e),
    }
}

/// Largest block [`push_direct`] takes (the UCX transport sends up to 8 KiB as one active message
/// with the word; larger ones go as a put, a fence and a put: still correct, no longer one
/// message).
pub(super) const DIRECT_PUSH_MAX: usize = 4096;

/// Whether `t` (node groups `g`) can use [`push_direct`] for blocks of up to `len` bytes: one
/// member per node, each with an entry word for every other.
pub(super) fn direct_fits(t: &Team, g: &Groups, len: usize) -> bool {
    t.size > 1 && g.leaders.len() == t.size && len <= DIRECT_PUSH_MAX && eager_fits(t.slot, t.size, 0)
}

/// For a team with one member per node ([`direct_fits`]), every member of which has entered the
/// call (the caller made sure: a barrier, or an exchange): this member puts `block(i)` = (offset,
/// bytes) straight into member i's `d` at that offset, with the word naming the exchange into its
/// entry of i's partials area (one notification each: an active message over UCX), places its own
/// block in its own `d`, then waits for every other member's word. Numbered by the count of
/// pushed exchanges ([`exchange_pushed`]'s), whose entries it shares.
pub(super) fn push_direct<'a>(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    block: impl Fn(usize) -> (usize, &'a [u8]),
    what: &str,
) -> Result<()> {
    let l = g.leaders.len();
    // the members agreed on the call before (`agree_pushed`, or collect's exchange of lengths)
    let (at, word, _) = next_exchange(inst, t, l, 0, 0);
    let routes = inst.routes();
    let own = at(g.my_leader);
    for (j, &i) in g.leaders.iter().enumerate() {
        let (off, data) = block(i);
        if j == g.my_leader {
            // SAFETY: the caller's block lies inside our own checked `d` at `off`.
            unsafe { copy(data.as_ptr(), d.mine().add(off), data.len()) };
            continue;
        }
        let pe = t.world_pe(i);
        // SAFETY: the caller's block lies inside member i's `d` (symmetric, checked) at `off`, which
        // nobody else writes in this call; the word goes into our entry of i's partials area. The
        // member waits for the word in this call, so the transport need not complete it at a
        // later quiet.
        unsafe {
            routes.to(pe)?.put_notify(
                d.remote(pe, off),
                data.as_ptr(),
                data.len(),
                area_remote(inst, t.slot, own, pe),
                word,
            )?
        };
    }
    for (j, &i) in g.leaders.iter().enumerate() {
        if j == g.my_leader {
            continue;
        }
        let flag = area_word(inst, t.slot, at(j));
        let from = t.world_pe(i);
        let stalled = || {
            format!(
                "{what} on team {}: the block of PE {from} has not arrived",
                crate::team_table::TeamName(t.slot)
            )
        };
        // Acquire: pairs with the data-before-word order of the notification
        wait_for(
            inst,
            t,
            || flag.load(Ordering::Acquire) == word,
            &|| false,
            stalled,
        )?;
        flag.store(0, Ordering::Relaxed);
    }
    Ok(())
}

/// fcollect of `len` bytes per member for a team with one member per node (every member leads
/// its node) whose blocks fit the pushed exchange ([`eager_fits`]): one pushed exchange, each
/// member's block placed at its team index.
pub(super) fn fcollect_pushed(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    s: Sym<'_>,
    len: usize,
) -> Result<()> {
    super::small::next_seq(inst, t);
    // SAFETY: our own checked source of `len` bytes.
    let mine = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, len) };
    let dest = d.mine();
    exchange_pushed(
        inst,
        t,
        g,
        len,
        (super::Call::of(super::FCOLLECT, len), Tag::Data),
        |_| mine,
        "fcollect",
        "block",
        |j, data| {
            // SAFETY: dest is a checked buffer of t.size * len bytes, not overlapping the source;
            // leader j is team member g.leaders[j] < t.size.
            unsafe { copy(data.as_ptr(), dest.add(g.leaders[j] * len), len) };
        },
    )
}

/// collect for a team with one member per node: one pushed exchange of every member's length
/// and, when it fits the entry after the length, its data. Returns Ok(None) when every member's
/// data came along (dest filled), else Ok(Some(lengths)) for the caller's gather (every member
/// read the same lengths, so all take the same branch).
pub(super) fn collect_pushed(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    dest: usize,
    source: usize,
    len: usize,
) -> Result<Option<Vec<usize>>> {
    let s = super::sym(inst, source, len, "source", 1)?;
    super::small::next_seq(inst, t);
    let room = entry(t.slot, g.leaders.len()) - 8;
    let mut msg = vec![0u8; room];
    msg[..8].copy_from_slice(&(len as u64).to_le_bytes());
    let fits = |n: usize| n.checked_add(8).is_some_and(|e| e <= room);
    let sent = if fits(len) {
        // SAFETY: our own checked source of `len` bytes.
        msg[8..8 + len].copy_from_slice(unsafe { std::slice::from_raw_parts(s.mine() as *const u8, len) });
        8 + len
    } else {
        8
    };
    let mut lens = vec![0usize; t.size];
    let mut blocks: Vec<Vec<u8>> = vec![Vec::new(); t.size];
    exchange_pushed(
        inst,
        t,
        g,
        room,
        (super::Call::of(super::COLLECT, 0), Tag::Data),
        |_| &msg[..sent],
        "collect",
        "length and block",
        |j, data| {
            let i = g.leaders[j];
            let n = u64::from_le_bytes(data[..8].try_into().unwrap_or_default()) as usize;
            lens[i] = n;
            if fits(n) {
                blocks[i] = data[8..8 + n].to_vec();
            }
        },
    )?;
    if !lens.iter().all(|&n| fits(n)) {
        return Ok(Some(lens));
    }
    let (offsets, total) = super::placement(&lens)?;
    let d = super::sym(inst, dest, total, "dest", 1)?;
    super::no_overlap(dest, total, source, len)?;
    for (i, b) in blocks.iter().enumerate() {
        // SAFETY: dest is a checked buffer of `total` bytes; block i (lens[i] bytes) goes at its
        // offset inside it.
        unsafe { copy(b.as_ptr(), d.mine().add(offsets[i]), b.len()) };
    }
    Ok(None)
}

/// alltoall of `len` bytes per member pair for a team with one member per node whose blocks fit
/// the pushed exchange: each member pushes to member i the block of its source meant for i, and
/// places the block from member i at i's place in its dest.
pub(super) fn alltoall_pushed(
    inst: &Instance,
    t: &Team,
    g: &Groups,
    d: Sym<'_>,
    s: Sym<'_>,
    len: usize,
) -> Result<()> {
    super::small::next_seq(inst, t);
    // SAFETY: our own checked source of t.size * len bytes.
    let src = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, t.size * len) };
    let dest = d.mine();
    exchange_pushed(
        inst,
        t,
        g,
        len,
        (super::Call::of(super::ALLTOALL, len), Tag::Data),
        |j| {
            let i = g.leaders[j];
            &src[i * len..(i + 1) * len]
        },
        "alltoall",
        "block",
        |j, data| {
            // SAFETY: dest is a checked buffer of t.size * len bytes, not overlapping the source;
            // leader j is team member g.leaders[j] < t.size. (Our own block: `mine` of ourselves
            // is the block of our source meant for us.)
            unsafe { copy(data.as_ptr(), dest.add(g.leaders[j] * len), len) };
        },
    )
}

/// The reduction of the sources of `members` (team indices, on this node), in their order, into
/// `acc` (n elements; `fetched`, as long, holds the parts read).
fn gather<T: Element>(
    inst: &Instance,
    t: &Team,
    s: Sym<'_>,
    members: &[usize],
    acc: &mut [T],
    fetched: &mut [T],
    op: Op,
) -> Result<()> {
    let len = std::mem::size_of_val(acc);
    for (k, &i) in members.iter().enumerate() {
        let into = if k == 0 { &mut *acc } else { &mut *fetched };
        // SAFETY: member i's source holds as many aligned elements as `acc` (checked here,
        // symmetric on all) and is not written before the closing local barrier; `into` holds
        // as many.
        unsafe { s.read(inst, t.world_pe(i), 0, into.as_mut_ptr().cast(), len)? };
        if k > 0 {
            reduce::combine(acc, fetched, op);
        }
    }
    Ok(())
}

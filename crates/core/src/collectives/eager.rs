//! Eager broadcast of small data across nodes: the root pushes the data into every other
//! member's internal buffer and returns, without waiting for anybody (unless its ring is full).
//!
//! Used by the hierarchical broadcast ([`super::hier`]) for teams whose members are all on
//! different nodes (every member is its node's leader), up to [`max_len`] bytes and up to
//! [`MAX_MEMBERS`] members. It lives in an area the barrier-free path of [`super::small`] uses
//! only when every PE is mapped (never in a hierarchical job): the slot's wide-ring region for
//! slots below [`WIDE_SLOTS`] (entries of up to [`WIDE_EAGER_MAX`] bytes), the slot's
//! small-collective area of the sync pool for the others (up to [`EAGER_MAX`] bytes). Slots
//! below [`BIG_SLOTS`] (the world team and the first team made) also have a big ring for payloads
//! up to [`BIG_MAX`] bytes (a call uses one ring or the other, by length; the call numbers,
//! credits and records are shared, credits go as [`credit_period`] says, and the
//! record names the ring, so members that named lengths on different sides fail like members
//! that named different roots). Measured on 2 nodes (tcp): a 4 KiB broadcast took a barrier
//! and then the data, 23 µs against OSHMEM's 10; eager, 15. Longer payloads, up to [`MAIL_MAX`],
//! go to the members' mailboxes ([`crate::transport::Transport::mail`]) when the transports have
//! them, keyed by the word that would announce a ring entry (call, root, incarnation): same call
//! numbers, credits (a root is at most [`MAIL_DEPTH`] calls ahead) and records ([`Kind`]).
//!
//! Layout of a member's copy (offsets from the area's start, [`base`]):
//! * `COUNT`: this member's number of eager calls on the team (own; the call number `e`);
//! * `CHAIN`: a running hash of the roots this member named (own, see below);
//! * `CREDIT[j]`: the last call member j finished and its chain then (written by j);
//! * `HIST[4]`: this member's chain at its last four credit points (own);
//! * `VIEW[views]`: the record (call, root, length) of this member's last 64 calls (32 on a
//!   sync-pool slot; more than a root can be ahead: [`WIDE_VIEWS`]) (own; read remotely by a
//!   member whose wait for data lasts);
//! * `NET[depth][members]`: entries of a word and the data ([`entry_size`] bytes), entry
//!   (e % depth, r) written by root r of call e in one notification
//!   ([`crate::transport::Transport::put_notify`]: one active message over UCX, applied data
//!   first): the data, then the word `net_word(e, r, incarnation, length)`.
//!
//! Protocol of call e with root r: every member stores its record in `VIEW`. The root, for each
//! other member j, waits until j's credit says it finished call e - depth (so j has consumed
//! entry (e % depth, r) of any earlier use), then sends the entry. Every other member waits for
//! the word, copies, clears it. One message per member and call, no fence (over UCX's tcp
//! transport a fence costs a round trip) and no acknowledgement (a put over tcp is acknowledged
//! by the target). Every member, after each call that is a multiple of
//! `h` = depth / 2, puts its credit (call and chain) into every other member's `CREDIT`: with
//! h <= depth, the credit a root waits for is sent at a call before e, so no wait forms a cycle.
//!
//! Asymmetric calls (members naming different roots):
//! * a member waiting for data from root r reads r's record of the call once its wait lasted
//!   `COMPARE_AFTER` (a round trip, only on that slow path): r named another root, so the data
//!   will never come: `ACLSHMEM_INVALID_PARAM` naming both PEs;
//! * a member that believed itself the root, or members whose roots pushed to them in the same
//!   call, do not wait, so they learn later: the chain hashes every call's root (or a mark for a
//!   call this member failed), and every member compares each credit it receives with its own
//!   chain at that call: a difference fails the call being made (after doing its part, so nobody
//!   is left waiting) with `ACLSHMEM_INVALID_PARAM` naming the other PE. The chains stay
//!   different, so every later eager broadcast on the team fails too (as after a timed-out
//!   barrier); calls that all members failed directly leave the chains equal.
//!
//! Slot reuse: `reset` clears the area when a team is installed; entries are consumed within the
//! receiver's call (cleared), and a word names its call and root, so an entry left by an
//! asymmetric call never passes for a later call. A member quiets when it destroys a team, so
//! its credits (puts) have landed before it takes part in a later team. Entries are
//! notifications, which a quiet does not complete: one that nobody consumed (an asymmetric call)
//! may land after the slot's next team cleared the area; its word carries the old team's
//! incarnation (`Teams`: larger for every later team a member takes part in), so it never passes
//! for the new team's data (at worst it overwrites an entry, whose reader then times out with
//! an error naming the root).
//!
//! `unsafe`: the words and entries are raw addresses in the mapped heaps (bounds fixed here).

use std::sync::atomic::{AtomicU64, Ordering};

use super::Sym;
use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync::Groups;
use crate::team_table::{
    BIG_MAX, BIG_OFFSET, BIG_SLOT_BYTES, BIG_SLOTS, SMALL_BYTES, SMALL_OFFSET, Team, WIDE_SLOT_BYTES,
    WIDE_SLOTS,
};
use crate::transport::{AmoOp, Remote, Width};

/// Largest payload of an eager broadcast on a team in slot [`WIDE_SLOTS`] or later.
pub(super) const EAGER_MAX: usize = 64;
/// Largest payload of an eager broadcast on a team in a slot below [`WIDE_SLOTS`].
/// (512: a full ring of 16 entries for up to 4 members; a ring of 8 for 4 members measured
/// slower with 4 PEs on 2 CPUs, 40 against 24 µs for 8 bytes)
pub(super) const WIDE_EAGER_MAX: usize = 512;
/// Most members of a team that uses the eager broadcast.
pub(super) const MAX_MEMBERS: usize = 8;

const COUNT: usize = 0;
const CHAIN: usize = 8;
const CREDIT: usize = 16; // [u64; MAX_MEMBERS]
const HIST: usize = CREDIT + 8 * MAX_MEMBERS; // [u64; 4]
/// The deepest ring: 2 members on slots 0-7 get 32 entries each, so credits go every 16 calls (2
/// nodes, 8-byte broadcast: 4.18 -> 3.59 us against a ring of 16; 4 members keep 16, all that
/// fits).
const MAX_DEPTH: usize = 32;
/// Records kept on slots below [`WIDE_SLOTS`], and on the others ([`views`]): more calls than a
/// root can be ahead of a member. A root enters call e + depth (and stores its record) before it
/// waits there for the credit of a member still in call e, so a member that waits in call e for
/// data that will not come must still find the root's record of call e (with as many records as
/// entries, a root that ran a whole ring ahead had overwritten it: the member waited for ever for
/// data, the root for its credit; 2 nodes, member 1 naming another length).
const WIDE_VIEWS: usize = 2 * MAX_DEPTH;
const SMALL_VIEWS: usize = 32;
const VIEW: usize = HIST + 32; // [u64; views]
/// Where the entries start in a slot's area ([`net`]).
const WIDE_NET: usize = VIEW + 8 * WIDE_VIEWS;
const SMALL_NET: usize = VIEW + 8 * SMALL_VIEWS;
// a sync-pool area holds 2 entries for each of 8 members, a wide-ring region 8 for each of 8
// and 16 for each of 4
const _: () = assert!(SMALL_NET + 2 * MAX_MEMBERS * (8 + EAGER_MAX) <= SMALL_BYTES);
const _: () = assert!(WIDE_NET + 8 * MAX_MEMBERS * (8 + WIDE_EAGER_MAX) <= WIDE_SLOT_BYTES);
const _: () = assert!(WIDE_NET + 16 * 4 * (8 + WIDE_EAGER_MAX) <= WIDE_SLOT_BYTES);
// every ring is shallower than the records kept: on a sync-pool slot its ring (2 members hold
// the most entries) and the mailboxes; on a wide slot any ring
const _: () = assert!((SMALL_BYTES - SMALL_NET) / (2 * (8 + EAGER_MAX)) < SMALL_VIEWS);
const _: () = assert!(MAIL_DEPTH < SMALL_VIEWS && MAX_DEPTH < WIDE_VIEWS);

/// How long a member waits for pushed data before it reads the root's record of the call.
const COMPARE_AFTER: std::time::Duration = std::time::Duration::from_millis(2);
/// The chain's contribution of a call this member failed itself.
const FAILED_CALL: u64 = 0xffff;

/// Bytes of `slot`'s area.
fn area_bytes(slot: usize) -> usize {
    if slot < WIDE_SLOTS {
        WIDE_SLOT_BYTES
    } else {
        SMALL_BYTES
    }
}

/// Where `slot`'s area starts in the device heap.
fn base(inst: &Instance, slot: usize) -> usize {
    if slot < WIDE_SLOTS {
        inst.rings() + slot * WIDE_SLOT_BYTES
    } else {
        inst.sync_pool() + slot * aclshmem_abi::SYNC_ARRAY_SIZE + SMALL_OFFSET
    }
}

/// Largest payload of an eager broadcast on a team in `slot`.
pub(super) fn max_len(slot: usize) -> usize {
    if slot < WIDE_SLOTS {
        WIDE_EAGER_MAX
    } else {
        EAGER_MAX
    }
}

/// Bytes of an entry in `slot`'s area: the word, then the largest payload.
fn entry_size(slot: usize) -> usize {
    8 + max_len(slot)
}

/// Records of calls kept in `slot`'s area.
fn views(slot: usize) -> usize {
    if slot < WIDE_SLOTS {
        WIDE_VIEWS
    } else {
        SMALL_VIEWS
    }
}

/// Where the entries start in `slot`'s area, after its records.
fn net(slot: usize) -> usize {
    VIEW + 8 * views(slot)
}

/// Entries per member in `slot`'s area: as many as fit, at most [`MAX_DEPTH`] (fewer than the
/// records kept: a root is never as many calls ahead of a member whose wait reads its record).
fn depth(members: usize, slot: usize) -> usize {
    ((area_bytes(slot) - net(slot)) / (members.max(1) * entry_size(slot))).min(MAX_DEPTH)
}

/// Entries per member of `slot`'s big ring (0: the slot has none), at most [`MAX_DEPTH`].
fn big_depth(members: usize, slot: usize) -> usize {
    if slot < BIG_SLOTS {
        (BIG_SLOT_BYTES / (members.max(1) * (8 + BIG_MAX))).min(MAX_DEPTH)
    } else {
        0
    }
}

/// Where one call's data go: the area's ring (payloads up to [`max_len`]), the slot's big ring (up
/// to [`BIG_MAX`], slots below [`BIG_SLOTS`]), or the members' mailboxes (up to [`MAIL_MAX`],
/// when the transports have them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Small = 0,
    Big = 1,
    Mail = 2,
}

impl Kind {
    /// The kind of a call of `len` bytes on `t` (which [`fits`] the eager path).
    fn of(t: &Team, len: usize) -> Kind {
        if len <= max_len(t.slot) {
            Kind::Small
        } else if len <= BIG_MAX && big_depth(t.size, t.slot) >= 2 {
            Kind::Big
        } else {
            Kind::Mail
        }
    }

    /// The length a record names (its low 22 bits), for an error message.
    fn lengths(len: usize) -> String {
        format!("{len} bytes")
    }
}

/// Largest payload of an eager broadcast through the members' mailboxes
/// ([`crate::transport::Transport::mail`]): the receivers keep what arrives before their call, up
/// to [`MAIL_DEPTH`] calls ahead, so at most 4 MiB per member. (2 nodes: 32 KiB 24-28 -> 15-20
/// µs, 256 KiB 155-168 -> 112-122; 1 MiB measured slower, 500 -> 680-760 µs, so longer calls
/// keep the members' reads of the root's source.)
pub(super) const MAIL_MAX: usize = 256 * 1024;
/// Calls a root may be ahead of a member with data in its mailbox (at least every credit period,
/// see [`credit_period`], and at most [`MAX_DEPTH`]).
const MAIL_DEPTH: usize = 16;

/// Where one call's entries live, as device-heap offsets (a mail call has no entries).
struct Ring {
    start: usize,
    entry: usize,
    depth: usize,
}

impl Ring {
    fn of(inst: &Instance, t: &Team, kind: Kind) -> Ring {
        match kind {
            Kind::Big => Ring {
                start: inst.rings() + BIG_OFFSET + t.slot * BIG_SLOT_BYTES,
                entry: 8 + BIG_MAX,
                depth: big_depth(t.size, t.slot),
            },
            Kind::Small => Ring {
                start: base(inst, t.slot) + net(t.slot),
                entry: entry_size(t.slot),
                depth: depth(t.size, t.slot),
            },
            Kind::Mail => Ring {
                start: 0,
                entry: 0,
                depth: MAIL_DEPTH,
            },
        }
    }
}

/// Calls between two credits: half the small ring's depth (a root then never waits for the
/// credit a member sends in the call just before), and at most the big ring's depth, so the
/// credit a root waits for is always sent at an earlier call (see the module documentation).
/// (Half the big ring's depth doubled the credits of small calls on the world team: 2 nodes,
/// 8-byte broadcast 10.1 -> 10.7 µs.)
fn credit_period(members: usize, slot: usize) -> u64 {
    // (every depth here is at most MAX_DEPTH = 2 * MAIL_DEPTH, so h <= MAIL_DEPTH too)
    let h = (depth(members, slot) / 2).max(1);
    match big_depth(members, slot) {
        0 => h as u64,
        b => h.min(b).max(1) as u64,
    }
}

/// Whether a broadcast of `len` bytes on `t` (node groups `g`) takes the eager path; `mail`: whether
/// the transports to the other members have mailboxes (the same on every member: all reach the
/// others over the network transport), asked only for lengths that need them.
pub(super) fn fits(t: &Team, g: &Groups, len: usize, mail: impl Fn() -> bool) -> bool {
    len > 0
        && (len <= max_len(t.slot)
            || (len <= BIG_MAX && big_depth(t.size, t.slot) >= 2)
            || (len <= MAIL_MAX && mail()))
        && t.size > 1
        && t.size <= MAX_MEMBERS
        && g.leaders.len() == t.size
        && depth(t.size, t.slot) >= 2
}

/// Word `off` of this PE's copy of `t`'s area.
fn own<'a>(inst: &'a Instance, t: &Team, off: usize) -> &'a AtomicU64 {
    let p = inst.device().local_addr(base(inst, t.slot) + off);
    // SAFETY: an 8-byte aligned word inside the area (offsets fixed here), in our own mapped heap
    // for the instance's lifetime, only accessed atomically.
    unsafe { &*(p as *const AtomicU64) }
}

/// Byte `off` of world PE `pe`'s copy of `t`'s area, for a transport.
fn remote<'a>(inst: &'a Instance, t: &Team, off: usize, pe: usize) -> Remote<'a> {
    Remote {
        heap: inst.device(),
        off: base(inst, t.slot) + off,
        pe,
    }
}

/// The word that announces the entry of call `e` with root `root` and `len` bytes of the team of
/// incarnation `inc`, the team's call number `call`: a mark (never 0, so a cleared word never
/// passes for one), 16 bits of the incarnation with a fold of the length and of the call number
/// mixed in (a member of another length waits for another word, and its wait finds the root's
/// record different; a member that reaches this broadcast as another of the team's calls, out of
/// step after an asymmetric call, waits for another word instead of taking the data of a
/// broadcast it did not make), root + 1, the call.
fn net_word(e: u64, root: usize, inc: u32, len: usize, call: u64) -> u64 {
    let l = len as u64;
    let fold = (l ^ l >> 16 ^ l >> 32 ^ l >> 48) & 0xffff;
    let c = (call as u16 as u64).wrapping_mul(0x9e37) & 0xffff;
    0x42 << 56 | ((u64::from(inc) ^ fold ^ c) & 0xffff) << 40 | (root as u64 + 1) << 32 | e as u32 as u64
}

/// The record of call `e` with root `root`, data of `kind` and its length (22 bits; members
/// that disagree on the kind named different lengths and wait in different places, members of
/// one kind and different lengths wait for different words or mail parts).
fn record(e: u64, root: usize, kind: Kind, len: usize) -> u64 {
    let len = len as u64 & 0x3f_ffff;
    (e as u32 as u64) << 32 | (kind as u64) << 30 | len << 8 | (root as u64 + 1)
}

/// Whether call `a` is at or after call `b` (32-bit call numbers, wrapping).
fn at_or_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// A new team in `slot`: clears this PE's copy of the area (before the team's first barrier).
pub(crate) fn reset(inst: &Instance, slot: usize) {
    if inst.all_direct() {
        return;
    }
    let at = inst.device().local_addr(base(inst, slot));
    // SAFETY: this slot's area in our own heap (`area_bytes` bytes); nobody writes it before the
    // new team's first barrier, which follows.
    unsafe { std::ptr::write_bytes(at, 0, area_bytes(slot)) };
    if slot < BIG_SLOTS {
        let at = inst
            .device()
            .local_addr(inst.rings() + BIG_OFFSET + slot * BIG_SLOT_BYTES);
        // SAFETY: as above, the slot's big ring.
        unsafe { std::ptr::write_bytes(at, 0, BIG_SLOT_BYTES) };
    }
    // what an earlier team on the slot left in the mailboxes (an asymmetric call's data)
    inst.routes().drop_mail(slot as u32);
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// The eager broadcast of `len` bytes from member `root` (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub(super) fn broadcast(
    inst: &Instance,
    t: &Team,
    d: Sym<'_>,
    s: Sym<'_>,
    len: usize,
    root: usize,
    root_dest: bool,
) -> Result<()> {
    let l = t.size;
    let kind = Kind::of(t, len);
    let ring = Ring::of(inst, t, kind);
    let depth = ring.depth;
    let h = credit_period(l, t.slot);
    let me = inst.my_pe();
    let count = own(inst, t, COUNT);
    let e = count.load(Ordering::Relaxed) + 1;
    count.store(e, Ordering::Relaxed);
    let rec = record(e, root, kind, len);
    own(inst, t, VIEW + 8 * (e as usize % views(t.slot))).store(rec, Ordering::Release);
    // entry (e % depth, r) of the call's ring, as a device-heap offset
    let entry = |r: usize| ring.start + ((e as usize % depth) * l + r) * ring.entry;
    let at = |off: usize, pe: usize| Remote {
        heap: inst.device(),
        off,
        pe,
    };
    let routes = inst.routes();
    let mut result = Ok(());
    let mut contribution = rec & 0xffff_ffff;
    // (a mail call's keys leave the length out: a message of another length is told apart by
    // its size when taken)
    let word = net_word(
        e,
        root,
        inst.team_cells().incarnation(t.slot),
        if kind == Kind::Mail { 0 } else { len },
        inst.team_cells().seq(t.slot),
    );
    // a mail call's keys: the word names the call, root and team
    let key = |part: usize| crate::transport::MailKey {
        slot: t.slot as u32,
        part: part as u32,
        tag: word,
    };
    if t.my_index == root {
        for j in (0..l).filter(|&j| j != root) {
            let pe = t.world_pe(j);
            if e > depth as u64 {
                let credit = own(inst, t, CREDIT + 8 * j);
                let need = (e - depth as u64) as u32;
                let what = || {
                    format!(
                        "broadcast on team {}: PE {pe} has not finished call {need} (its buffers are full)",
                        crate::team_table::TeamName(t.slot)
                    )
                };
                // Acquire: j cleared its entry before it sent the credit
                result = super::hier::wait_for(
                    inst,
                    t,
                    || at_or_after((credit.load(Ordering::Acquire) >> 32) as u32, need),
                    &|| false,
                    what,
                );
                if result.is_err() {
                    break;
                }
            }
            let to = match routes.to(pe) {
                Ok(to) => to,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            result = if kind == Kind::Mail {
                // SAFETY: `s` holds `len` bytes; the member keeps the parts until its call
                // takes them (at most MAIL_DEPTH calls: credit above).
                unsafe { super::mail::send(to, pe, key, 0, s.mine(), len) }
            } else {
                // one notification (an active message over UCX: one message, no
                // acknowledgement): the data, then the word. The member consumes it in this
                // call; a quiet need not complete it.
                // SAFETY: `s` holds `len` <= the ring's bytes; the destination is entry
                // (e, root) of the member's area, which it consumed (credit above) and nobody
                // else writes.
                unsafe { to.put_notify(at(entry(root) + 8, pe), s.mine(), len, at(entry(root), pe), word) }
            };
            if result.is_err() {
                break;
            }
        }
        if root_dest && result.is_ok() {
            // SAFETY: checked symmetric, non-overlapping buffers of `len` bytes in our own heap.
            unsafe { super::copy(s.mine(), d.mine(), len) };
        }
    } else {
        let root_pe = t.world_pe(root);
        let p = if kind == Kind::Mail {
            // no entry: the data come to the mailbox
            std::ptr::null_mut()
        } else {
            inst.device().local_addr(entry(root))
        };
        let started = std::time::Instant::now();
        let next_check = std::cell::Cell::new(COMPARE_AFTER);
        let mismatch = std::cell::Cell::new(None);
        // the root may wait in a barrier of the program instead of this call (it never sends
        // this call's data)
        let look = super::hier::BarrierLook::new(inst, t, root_pe);
        let differs = || {
            let waited = started.elapsed();
            if waited < next_check.get() {
                return false;
            }
            next_check.set(next_check.get() * 2);
            if look.look(waited) {
                return true;
            }
            let at = remote(inst, t, VIEW + 8 * (e as usize % views(t.slot)), root_pe);
            match inst
                .routes()
                .to(root_pe)
                .and_then(|to| to.atomic(at, Width::W64, AmoOp::Fetch))
            {
                Ok(r) if r >> 32 == e as u32 as u64 && r != rec => {
                    let msg = format!(
                        "asymmetric broadcast on team {} (call {e}): every member must name the same root \
                         and length; this PE (PE {me}) named root {root} and {len} bytes, PE {root_pe} \
                         named root {} and {}",
                        crate::team_table::TeamName(t.slot),
                        (r as u32 & 0xff).wrapping_sub(1),
                        Kind::lengths((r >> 8) as usize & 0x3f_ffff)
                    );
                    crate::logging::write_stderr(&format!("aclshmem: [PE {me}] {msg}\n"));
                    mismatch.set(Some(Error::InvalidParam(msg)));
                    true
                }
                Ok(_) => false,
                Err(e) => {
                    mismatch.set(Some(e));
                    true
                }
            }
        };
        let what = || {
            format!(
                "broadcast on team {}: the data of root {root} (PE {root_pe}) has not arrived",
                crate::team_table::TeamName(t.slot)
            )
        };
        let r = if kind == Kind::Mail {
            // (every member is reachable: `fits` found mailboxes on the way to each)
            let to = routes.to(root_pe)?;
            let rx = super::mail::Receiver::new();
            // SAFETY: dest is a checked buffer of `len` bytes, apart from the mailbox.
            let arrived = || unsafe { rx.poll(to, key, d.mine(), len) };
            let r = super::hier::wait_for(inst, t, arrived, &differs, what);
            match r.as_ref().map(|_| rx.outcome()) {
                Ok(Err(n)) => {
                    let msg = format!(
                        "asymmetric broadcast on team {} (call {e}): every member must name the same \
                         length; this PE (PE {me}) named {len} bytes, root {root} (PE {root_pe}) sent \
                         another length (a part of {n} bytes)",
                        crate::team_table::TeamName(t.slot)
                    );
                    crate::logging::write_stderr(&format!("aclshmem: [PE {me}] {msg}\n"));
                    Err(Error::InvalidParam(msg))
                }
                _ => r,
            }
        } else {
            // SAFETY: an 8-byte aligned word of our own ring (offsets fixed here), in our own
            // mapped heap for the instance's lifetime, only accessed atomically.
            let flag = unsafe { &*(p as *const AtomicU64) };
            // Acquire: pairs with the notification's data-before-word order
            super::hier::wait_for(inst, t, || flag.load(Ordering::Acquire) == word, &differs, what)
        };
        if r.is_err() && look.found() {
            // nothing of this call was sent or received: it is undone here (the root's next
            // broadcast is this number again, as on every member), and the members in the
            // barrier take up the call itself when their barrier ends
            count.store(e - 1, Ordering::Relaxed);
            return Err(look.fail(None));
        }
        result = match mismatch.take() {
            Some(e) => Err(e),
            None => r,
        };
        if result.is_err() {
            contribution = FAILED_CALL;
        } else if kind != Kind::Mail {
            // SAFETY: as above.
            let flag = unsafe { &*(p as *const AtomicU64) };
            let src = inst.device().local_addr(entry(root) + 8);
            // SAFETY: our own entry holds the root's `len` bytes (announced by its word) and is
            // not rewritten before our credit; dest is a checked buffer of `len` bytes.
            unsafe { super::copy(src, d.mine(), len) };
            // cleared before our credit lets the root write the entry again
            flag.store(0, Ordering::Release);
        }
    }
    // drive the transports once per credit period (each progress call over tcp is a system
    // call, as much as the send): incoming credits and data move along; on the other calls the
    // progress thread still sees this PE driving its worker (it parks instead of contending)
    if e.is_multiple_of(h) {
        routes.progress();
    } else {
        routes.drive();
    }
    // the chain of roots named, and the credits
    let chain = own(inst, t, CHAIN);
    let c = chain
        .load(Ordering::Relaxed)
        .wrapping_mul(0x0000_0100_0000_01b3)
        .wrapping_add(contribution);
    chain.store(c, Ordering::Relaxed);
    let snapshot = (e as u32 as u64) << 32 | (c ^ (c >> 32)) as u32 as u64;
    if e.is_multiple_of(h) {
        own(inst, t, HIST + 8 * ((e / h) % 4) as usize).store(snapshot, Ordering::Relaxed);
        for j in (0..l).filter(|&j| j != t.my_index) {
            let pe = t.world_pe(j);
            let at = remote(inst, t, CREDIT + 8 * t.my_index, pe);
            // SAFETY: an 8-byte word on this stack frame into our credit word of j's area.
            let r = routes
                .to(pe)
                .and_then(|to| unsafe { to.put(at, (&snapshot as *const u64).cast(), 8) });
            result = result.and(r);
        }
    }
    // compare the other members' chains with ours at the call they report
    if result.is_ok() {
        for j in (0..l).filter(|&j| j != t.my_index) {
            let theirs = own(inst, t, CREDIT + 8 * j).load(Ordering::Acquire);
            let call = theirs >> 32;
            if call == 0 {
                continue;
            }
            let mine = own(inst, t, HIST + 8 * ((call / h) % 4) as usize).load(Ordering::Relaxed);
            if mine >> 32 == call && mine != theirs {
                let msg = format!(
                    "asymmetric broadcast on team {}: this PE (PE {me}) and PE {} named different roots in \
                     an eager broadcast up to call {call}; this team's small broadcasts fail from now on",
                    crate::team_table::TeamName(t.slot),
                    t.world_pe(j)
                );
                crate::logging::write_stderr(&format!("aclshmem: [PE {me}] {msg}\n"));
                result = Err(Error::InvalidParam(msg));
                break;
            }
        }
    }
    result
}

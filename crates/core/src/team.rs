//! Teams: arithmetic progressions of world PEs (start, stride, size), spec 8.7.
//!
//! A team handle is a slot index in 0..ACLSHMEM_MAX_TEAMS (0 = the world team); the slot of a new
//! team is free on all of its members, agreed among them only, so PEs outside a team may create
//! other teams in between, and up to 2048 teams live at once.
//! - Every PE keeps its taken slots in a bitmap of its own in the split area (`TAKEN`): a bit is
//!   set by the leader of a split that reserves it ([`reserve`], one atomic OR per member, in
//!   ascending PE order, backing out on a conflict) and cleared by the PE when it destroys the
//!   team. So splits made at the same time by different threads (of different parents, as
//!   OpenSHMEM 1.5 allows under `SHMEM_THREAD_MULTIPLE`) never take one slot twice.
//! - A strided split communicates among the new team's members only, as the original's makes no
//!   communication and its programs split on the members alone: each member arrives at the
//!   mailbox of the parent team in the team's first member (the leader; one mailbox per parent
//!   slot, `agree_members`), which reserves the slot and announces it to every member. PEs
//!   outside the new team return at once.
//! - A 2-D split is collective over the parent (every parent member lands in two new teams): every
//!   member publishes its bitmap through the parent team's exchange area (`exchange_bitmaps`),
//!   which also makes differing x ranges fail on every member at once; the parent's first member
//!   then reserves every new team's slot and tells each member its two.
//!
//! Each slot owns a 2560-byte area of the sync pool (in the heap's extra region): barrier words on
//! the team's first PE, and an exchange area on every member.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync;
use crate::team_table::{Bitmap, SPLIT_AREA, is_free, take};
pub use crate::team_table::{EXCHANGE_BYTES, EXCHANGE_OFFSET, SMALL_OFFSET, Team, Teams, set_team_names};
use crate::transport::{AmoOp, Remote, Width};
use crate::wait::Watch;
use aclshmem_abi::{ACLSHMEM_MAX_PES, ACLSHMEM_MAX_TEAMS, TeamConfig};

/// The subsets of the parent a split creates: (parent index of member 0, stride in parent indices,
/// size).
#[derive(Debug, Clone, Copy)]
struct Shape {
    start: usize,
    stride: usize,
    size: usize,
}

impl Shape {
    fn members(self) -> impl Iterator<Item = usize> {
        (0..self.size).map(move |k| self.start + k * self.stride)
    }
}

/// Reserves for a new team of world PEs `members` (ascending) a slot free on all of them: the
/// lowest slot `hint` (the union of the members' taken slots, as last read) says is free, set in
/// each member's `TAKEN` bitmap by an atomic OR in ascending PE order. A member on which the slot
/// was taken meanwhile (by another split under way: another thread of a member, or a split the
/// hint was read before) backs the attempt out and the next free slot is tried. Two leaders that
/// want one slot meet first on the lowest member they share, where one of them wins: no slot is
/// ever reserved twice, and one of them always gets it. `None`: no slot is free on every member.
fn reserve(inst: &Instance, members: &[usize], hint: &mut Bitmap) -> Result<Option<usize>> {
    'next: loop {
        let Some(slot) = (1..ACLSHMEM_MAX_TEAMS).find(|&s| is_free(hint, s)) else {
            return Ok(None);
        };
        take(hint, slot);
        let (word, bit) = taken_bit(slot);
        for (k, &m) in members.iter().enumerate() {
            if mailbox(inst, word, m, AmoOp::FetchOr(bit))? & bit != 0 {
                for &back in &members[..k] {
                    mailbox(inst, word, back, AmoOp::FetchAnd(!bit))?;
                }
                continue 'next;
            }
        }
        return Ok(Some(slot));
    }
}

/// The word (offset in the split area) and bit of `slot` in a `TAKEN` bitmap.
fn taken_bit(slot: usize) -> (usize, u64) {
    (TAKEN + 8 * (slot / 64), 1 << (slot % 64))
}

/// World PE `pe`'s taken slots (a snapshot: splits under way may change it at any time).
fn read_taken(inst: &Instance, pe: usize) -> Result<Bitmap> {
    let mut b: Bitmap = [0; ACLSHMEM_MAX_TEAMS / 8];
    if inst.device().direct_addr(inst.splits() + TAKEN, pe).is_some() {
        for (i, chunk) in b.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&mailbox(inst, TAKEN + 8 * i, pe, AmoOp::Fetch)?.to_le_bytes());
        }
        return Ok(b);
    }
    let from = Remote {
        heap: inst.device(),
        off: inst.splits() + TAKEN,
        pe,
    };
    // SAFETY: `b` is a local buffer of the bitmap's length; the source is the bitmap at the
    // start of PE `pe`'s split area, inside its reserved region.
    unsafe { inst.routes().to(pe)?.get(from, b.as_mut_ptr(), b.len())? };
    Ok(b)
}

/// The union of the taken slots of `shape`'s members (`maps`: by parent index).
fn union(maps: &[Bitmap], shape: Shape) -> Bitmap {
    let mut u: Bitmap = [0; ACLSHMEM_MAX_TEAMS / 8];
    for m in shape.members() {
        for (a, b) in u.iter_mut().zip(maps[m]) {
            *a |= b;
        }
    }
    u
}

/// Teams other than the world team exist only in instance 0 (spec 8.7).
pub fn check_instance(inst: &Instance) -> Result<()> {
    if inst.id() != 0 {
        return Err(Error::NotSupported(format!(
            "teams are not available in instance {}",
            inst.id()
        )));
    }
    Ok(())
}

/// Collective over `parent`: every member publishes the split it asked for (`call` and its
/// arguments), its taken-slot bitmap and the largest incarnation of a team it helped create. A
/// member that asked for another split makes the call fail on every member, naming the PEs whose
/// request differs from member 0's (a split agreed by only some members would leave the others
/// waiting for ever). Returns the bitmaps and the new teams' incarnation: one more than the
/// largest published, so the same on every member and larger than that of any team a member
/// took part in before (see `Teams`).
fn exchange_bitmaps(inst: &Instance, parent: &Team, call: &str, args: &[i32]) -> Result<(Vec<Bitmap>, u32)> {
    let created = inst.teams().created();
    let mut mine = read_taken(inst, inst.my_pe())?.to_vec();
    mine.extend_from_slice(&created.to_le_bytes());
    for a in args {
        mine.extend_from_slice(&a.to_le_bytes());
    }
    let parts = crate::collectives::exchange_call(inst, parent, crate::collectives::Call::split(), &mine)?;
    let bitmap_len = ACLSHMEM_MAX_TEAMS / 8;
    let request = |p: &[u8]| -> Vec<i32> {
        p[bitmap_len + 4..]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let first = request(&parts[0]);
    let differ: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| request(p) != first)
        .map(|(i, p)| format!("PE {} asked for {:?}", parent.world_pe(i), request(p)))
        .collect();
    if !differ.is_empty() {
        return Err(Error::InvalidParam(format!(
            "asymmetric {call}: every member of the parent team must pass the same arguments; PE {} asked for {:?}, {}",
            parent.world_pe(0),
            first,
            differ.join(", ")
        )));
    }
    let inc = new_incarnation(&parts, bitmap_len);
    inst.teams().saw_creation(inc);
    let maps = parts
        .into_iter()
        .map(|p| {
            p[..bitmap_len]
                .try_into()
                .map_err(|_| Error::Inner("bad slot bitmap".into()))
        })
        .collect::<Result<Vec<Bitmap>>>()?;
    Ok((maps, inc))
}

/// The incarnation of the teams a split creates: one more than the largest the parent's members
/// published (each after its `bitmap_len`-byte bitmap).
fn new_incarnation(parts: &[Vec<u8>], bitmap_len: usize) -> u32 {
    parts
        .iter()
        .map(|p| {
            p.get(bitmap_len..bitmap_len + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        })
        .max()
        .unwrap_or(0)
        .wrapping_add(1)
}

fn install(inst: &Instance, parent: &Team, shape: Shape, slot: usize, inc: u32) -> Option<usize> {
    let my = shape.members().position(|m| m == parent.my_index)?;
    let team = Team {
        slot,
        start: parent.world_pe(shape.start),
        stride: parent.stride * shape.stride,
        size: shape.size,
        my_index: my,
    };
    inst.teams().install(team, inc);
    sync::reset(inst, slot);
    crate::collectives::small::reset(inst, slot);
    crate::collectives::eager_reset(inst, slot);
    Some(slot)
}

/// A new team is usable once every member reset its per-slot state: barrier over it.
fn ready(inst: &Instance, slot: usize) -> Result<()> {
    let t = inst.teams().get(slot as i32)?;
    sync::barrier(inst, &t)
}

/// The split area (`Instance::splits`, `SPLIT_AREA` bytes): this PE's taken slots (`TAKEN`, a
/// 2048-bit bitmap: live teams and slots reserved for teams being created), then one mailbox
/// per parent slot (`BOXES`, `BOX` bytes each), so splits of different parents, made at the
/// same time by different threads, keep their agreement apart.
const TAKEN: usize = 0;
const BOXES: usize = ACLSHMEM_MAX_TEAMS / 8;
const BOX: usize = 64;
const _: () = assert!(BOXES + ACLSHMEM_MAX_TEAMS * BOX <= SPLIT_AREA);
/// Words of a mailbox: the split its owner leads now (`TAG`, 0 = none), the members arrived
/// (`ARR`), the largest incarnation they published (`CREATED`), and the result the leader stores
/// in each member's `RESULT` (valid bit, then the slot and the incarnation of a strided split, the
/// x and y slots of a 2-D one).
const TAG: usize = 0;
/// The tag of the split this PE last arrived at (own word; read only to name the late members).
const SEEN: usize = 8;
const ARR: usize = 16;
const CREATED: usize = 24;
const RESULT: usize = 32;
const RESULT_VALID: u64 = 1 << 63;
const NO_SLOT: u64 = 0xffff;
/// The slot field of a result that says the split failed on its leader: a member waits in a
/// barrier of the parent team instead.
const FAILED_SLOT: u64 = 0xfffe;
const _: () = assert!(ACLSHMEM_MAX_TEAMS < FAILED_SLOT as usize);

/// Offset in the split area of word `w` of the mailbox for splits of the parent in `parent_slot`.
fn boxed(parent_slot: usize, w: usize) -> usize {
    BOXES + parent_slot * BOX + w
}

/// Looks at doubling intervals (2 ms to 100 ms) during a wait of a split: whether a PE the wait
/// is for waits in a barrier of the parent team instead (it will not come).
struct Looks {
    started: std::time::Instant,
    next: std::time::Duration,
}

impl Looks {
    fn new() -> Looks {
        Looks {
            started: std::time::Instant::now(),
            next: std::time::Duration::from_millis(2),
        }
    }

    /// Whether a look is due now.
    fn due(&mut self) -> bool {
        if self.started.elapsed() < self.next {
            return false;
        }
        self.next += (self.next).min(std::time::Duration::from_millis(100));
        true
    }
}

/// The error of a split whose PE `pe` (member `what` of the new team) waits in a barrier of the
/// parent team instead.
fn split_in_barrier(inst: &Instance, parent: &Team, pe: usize, what: &str) -> Error {
    let msg = format!(
        "asymmetric team split on parent team {}: this PE (PE {}) splits, PE {pe} ({what}) waits in a \
         barrier (or sync) of the parent team instead (every member of the new team must call the split \
         with the same arguments)",
        crate::team_table::TeamName(parent.slot),
        inst.my_pe()
    );
    crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
    Error::InvalidParam(msg)
}

/// A 64-bit word of world PE `pe`'s split mailbox: directly when mapped here, else through the
/// PE's transport.
fn mailbox(inst: &Instance, off: usize, pe: usize, op: AmoOp) -> Result<u64> {
    let at = inst.splits() + off;
    if let Some(p) = inst.device().direct_addr(at, pe) {
        // SAFETY: an 8-byte-aligned word of the split mailbox in PE `pe`'s mapped heap (reserved
        // at init, alive with the instance), only accessed atomically.
        let w = unsafe { AtomicU64::from_ptr(p.cast()) };
        return Ok(match op {
            AmoOp::Fetch => w.load(Ordering::Acquire),
            AmoOp::Set(v) => {
                w.store(v, Ordering::Release);
                0
            }
            AmoOp::CompareSwap { cond, value } => {
                match w.compare_exchange(cond, value, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(v) | Err(v) => v,
                }
            }
            AmoOp::FetchAdd(v) => w.fetch_add(v, Ordering::AcqRel),
            AmoOp::FetchOr(v) => w.fetch_or(v, Ordering::AcqRel),
            AmoOp::FetchAnd(v) => w.fetch_and(v, Ordering::AcqRel),
            _ => return Err(Error::Inner("unexpected operation on a split word".into())),
        });
    }
    inst.routes().to(pe)?.atomic(
        Remote {
            heap: inst.device(),
            off: at,
            pe,
        },
        Width::W64,
        op,
    )
}

/// Waits until `done()` gives a value; `what` names the wait in the warning and the error.
fn wait_for<T>(
    inst: &Instance,
    what: &dyn Fn() -> String,
    mut done: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    let mut w = Watch::new(inst.limits());
    loop {
        if let Some(v) = done()? {
            return Ok(v);
        }
        inst.routes().progress();
        w.snooze(what)
            .map_err(|e| sync::expired(inst, format!("aclshmem_team_split_strided: {}", what()), e))?;
    }
}

/// Agrees on the new team's slot and incarnation among its members only (the original's split
/// makes no communication, and PEs outside the new team need not call it): each member publishes
/// its created incarnation into the parent's mailbox in the team's first member (the leader),
/// which, once all arrived, reserves a slot free on every member ([`reserve`]) and stores it with
/// one more than the largest incarnation in each member's result word. `tag` names the split
/// (shape and count: the same on every member); the leader opens the mailbox to one split of the
/// parent at a time, in its own order of calls, and members wait until it opened theirs.
///
/// A PE waited for that waits in a barrier of the parent team instead (`indices`: the members'
/// indices in `parent`) will not come: a member waiting for the leader fails; the leader waiting
/// for members fails and tells the members (a failed result), so none waits for ever.
fn agree_members(
    inst: &Instance,
    parent: &Team,
    indices: &[usize],
    members: &[usize],
    tag: u64,
) -> Result<(Option<usize>, u32)> {
    let leader = members[0];
    let me = inst.my_pe();
    let word = |w| boxed(parent.slot, w);
    let created = inst.teams().created();
    // SAFETY: this PE's own result word of the parent's mailbox; only the leader of a split of
    // this parent this PE takes part in writes it, and this PE has not arrived at one yet.
    unsafe { AtomicU64::from_ptr(inst.device().local_addr(inst.splits() + word(RESULT)).cast()) }
        .store(0, Ordering::Release);
    if me == leader {
        // opened in the leader's own order of splits: members of a later one wait
        mailbox(inst, word(TAG), me, AmoOp::Set(tag))?;
    } else {
        let mut looks = Looks::new();
        wait_for(
            inst,
            &|| format!("PE {leader} (the new team's first member) has not begun this team split"),
            || {
                if mailbox(inst, word(TAG), leader, AmoOp::Fetch)? == tag {
                    return Ok(Some(()));
                }
                if looks.due() && sync::member_in_barrier(inst, parent, indices[0]) {
                    return Err(split_in_barrier(
                        inst,
                        parent,
                        leader,
                        "the new team's first member",
                    ));
                }
                Ok(None)
            },
        )?;
    }
    loop {
        let cur = mailbox(inst, word(CREATED), leader, AmoOp::Fetch)?;
        if u64::from(created) <= cur
            || mailbox(
                inst,
                word(CREATED),
                leader,
                AmoOp::CompareSwap {
                    cond: cur,
                    value: u64::from(created),
                },
            )? == cur
        {
            break;
        }
    }
    mailbox(inst, word(SEEN), me, AmoOp::Set(tag))?;
    mailbox(inst, word(ARR), leader, AmoOp::FetchAdd(1))?;
    if me == leader {
        let n = members.len() as u64;
        let mut looks = Looks::new();
        let all = wait_for(
            inst,
            &|| {
                let got = mailbox(inst, word(ARR), me, AmoOp::Fetch).unwrap_or(0);
                let late: Vec<String> = members
                    .iter()
                    .filter(|&&m| mailbox(inst, word(SEEN), m, AmoOp::Fetch).unwrap_or(0) != tag)
                    .map(|m| m.to_string())
                    .collect();
                format!(
                    "{got} of the new team's {n} members called it: PE(s) {} have not arrived (members asking \
                     for another split, or not calling it, leave the others waiting)",
                    late.join(", ")
                )
            },
            || {
                if mailbox(inst, word(ARR), me, AmoOp::Fetch)? >= n {
                    return Ok(Some(()));
                }
                if looks.due() {
                    for (k, &m) in members.iter().enumerate().skip(1) {
                        if mailbox(inst, word(SEEN), m, AmoOp::Fetch)? != tag
                            && sync::member_in_barrier(inst, parent, indices[k])
                        {
                            // the members that arrived wait for a result: a failed one
                            for &other in &members[1..] {
                                mailbox(inst, word(RESULT), other, AmoOp::Set(RESULT_VALID | FAILED_SLOT))?;
                            }
                            return Err(split_in_barrier(inst, parent, m, "a member of the new team"));
                        }
                    }
                }
                Ok(None)
            },
        );
        if let Err(e) = all {
            // given up: the mailbox serves this PE's next splits of the parent (a member arriving
            // later finds its split gone and waits in turn)
            clear_mailbox(inst, parent.slot)?;
            return Err(e);
        }
        let mut hint: Bitmap = [0; ACLSHMEM_MAX_TEAMS / 8];
        for &m in members {
            for (a, b) in hint.iter_mut().zip(read_taken(inst, m)?) {
                *a |= b;
            }
        }
        let slot = reserve(inst, members, &mut hint)?;
        let inc = (mailbox(inst, word(CREATED), me, AmoOp::Fetch)? as u32).wrapping_add(1);
        let result = RESULT_VALID | (u64::from(inc) << 16) | slot.map_or(NO_SLOT, |s| s as u64);
        for &m in members {
            mailbox(inst, word(RESULT), m, AmoOp::Set(result))?;
        }
        clear_mailbox(inst, parent.slot)?;
    }
    let result = wait_for(
        inst,
        &|| format!("PE {leader} (the new team's first member) has not announced the team"),
        || {
            let v = mailbox(inst, word(RESULT), me, AmoOp::Fetch)?;
            Ok((v & RESULT_VALID != 0).then_some(v))
        },
    )?;
    let slot = match result & 0xffff {
        FAILED_SLOT => {
            return Err(Error::InvalidParam(format!(
                "asymmetric team split on parent team {}: a member of the new team waits in a barrier \
                 (or sync) of the parent team instead (PE {leader}, the new team's first member, names it)",
                crate::team_table::TeamName(parent.slot)
            )));
        }
        NO_SLOT => None,
        s => Some(s as usize),
    };
    Ok((slot, ((result >> 16) & 0xffff_ffff) as u32))
}

/// Empties this PE's mailbox for splits of the parent in `parent_slot`, the tag last: a later
/// split's members start only once it is 0.
fn clear_mailbox(inst: &Instance, parent_slot: usize) -> Result<()> {
    let me = inst.my_pe();
    for w in [CREATED, ARR, TAG] {
        mailbox(inst, boxed(parent_slot, w), me, AmoOp::Set(0))?;
    }
    Ok(())
}

/// The tag of a split: its parent, shape and count, hashed (never 0).
fn split_tag(key: (usize, u32, usize, usize, usize), count: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in [
        key.0 as u64,
        u64::from(key.1),
        key.2 as u64,
        key.3 as u64,
        key.4 as u64,
        count,
    ] {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h | 1
}

/// Per parent slot: whether a thread of this process splits that parent now ([`Splitting`]).
static SPLITTING: [std::sync::atomic::AtomicBool; ACLSHMEM_MAX_TEAMS] =
    [const { std::sync::atomic::AtomicBool::new(false) }; ACLSHMEM_MAX_TEAMS];

/// One split of a parent at a time on a PE: a split is a collective call on its parent team, and
/// collective calls on one team must not overlap (they share its mailbox and exchange area).
/// Splits of different parents may run at once in different threads. A second thread that
/// starts a split of a parent another thread is splitting fails at once
/// (`ACLSHMEM_NOT_SUPPORTED`, which ends an OpenSHMEM program) with a message saying so.
struct Splitting(usize);

impl Splitting {
    fn enter(inst: &Instance, parent: &Team, call: &str) -> Result<Splitting> {
        if SPLITTING[parent.slot]
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            let msg = format!(
                "{call}: another thread of this PE (PE {}) is splitting parent team {} right now; \
                 collective calls on one team must not overlap (splits of different parents may)",
                inst.my_pe(),
                crate::team_table::TeamName(parent.slot)
            );
            crate::logging::write_stderr(&format!("aclshmem: [PE {}] {msg}\n", inst.my_pe()));
            // (not an argument error: its partners in the split would wait for it; the OpenSHMEM
            // surface ends the job on this one)
            return Err(Error::NotSupported(msg));
        }
        Ok(Splitting(parent.slot))
    }
}

impl Drop for Splitting {
    fn drop(&mut self) {
        SPLITTING[self.0].store(false, Ordering::Release);
    }
}

/// `aclshmem_team_split_strided`: returns the new handle for members, `None` for other PEs. Only
/// the new team's members communicate (among themselves): PEs outside it return at once and need
/// not call it at all, as with the original.
pub fn split_strided(
    inst: &Instance,
    parent: i32,
    start: i32,
    stride: i32,
    size: i32,
) -> Result<Option<usize>> {
    check_instance(inst)?;
    let parent = inst.teams().get(parent)?;
    let max = ACLSHMEM_MAX_PES as i32;
    if start >= max || stride >= max || size > max {
        return Err(Error::InvalidParam(format!(
            "pe_start {start}, pe_stride {stride} or pe_size {size} exceeds ACLSHMEM_MAX_PES"
        )));
    }
    if start < 0 || start as usize >= parent.size || size <= 0 || size as usize > parent.size || stride < 1 {
        return Err(Error::InvalidParam(format!(
            "pe_start {start}, pe_stride {stride}, pe_size {size} do not describe members of a team of {} PEs",
            parent.size
        )));
    }
    let shape = Shape {
        start: start as usize,
        stride: stride as usize,
        size: size as usize,
    };
    let last = shape.start + (shape.size - 1) * shape.stride;
    if last >= parent.size {
        return Err(Error::InvalidParam(format!(
            "the last member (index {last}) lies beyond the parent team of {} PEs",
            parent.size
        )));
    }
    if !shape.members().any(|m| m == parent.my_index) {
        return Ok(None);
    }
    let _one = Splitting::enter(inst, &parent, "aclshmem_team_split_strided")?;
    let members: Vec<usize> = shape.members().map(|m| parent.world_pe(m)).collect();
    let key = (
        parent.slot,
        inst.team_cells().incarnation(parent.slot),
        shape.start,
        shape.stride,
        shape.size,
    );
    let count = inst.teams().next_split(key);
    let indices: Vec<usize> = shape.members().collect();
    let (slot, inc) =
        agree_members(inst, &parent, &indices, &members, split_tag(key, count)).inspect_err(|_| {
            inst.teams().undo_split(key);
        })?;
    inst.teams().saw_creation(inc);
    let slot = slot.ok_or_else(|| {
        Error::Inner(format!(
            "no team slot is free on every member (limit {ACLSHMEM_MAX_TEAMS} live teams)"
        ))
    })?;
    let mine = install(inst, &parent, shape, slot, inc);
    if let Some(s) = mine {
        ready(inst, s)?;
    }
    Ok(mine)
}

/// `aclshmem_team_split_2d`: (x team, y team) of this PE. After the exchange (which checks that
/// every member asked for the same split), the parent's first member reserves every new team's
/// slot ([`reserve`]) and stores each member's two in its result word.
pub fn split_2d(inst: &Instance, parent: i32, x_range: i32) -> Result<(usize, usize)> {
    check_instance(inst)?;
    let parent = inst.teams().get(parent)?;
    let _one = Splitting::enter(inst, &parent, "aclshmem_team_split_2d")?;
    let result_word = boxed(parent.slot, RESULT);
    // SAFETY: this PE's own result word of the parent's mailbox; the parent's first member
    // writes it only after the exchange below, which this PE enters after this store.
    unsafe { AtomicU64::from_ptr(inst.device().local_addr(inst.splits() + result_word).cast()) }
        .store(0, Ordering::Release);
    let (maps, inc) = exchange_bitmaps(inst, &parent, "split_2d", &[x_range])?;
    if x_range <= 0 {
        return Err(Error::InvalidParam(format!("x_range {x_range} must be positive")));
    }
    let n = parent.size;
    let x = (x_range as usize).min(n);
    let mut shapes = Vec::new();
    for start in (0..n).step_by(x) {
        shapes.push(Shape {
            start,
            stride: 1,
            size: x.min(n - start),
        });
    }
    let n_x = shapes.len();
    for start in 0..x {
        shapes.push(Shape {
            start,
            stride: x,
            size: (n - start).div_ceil(x),
        });
    }
    let me = parent.my_index;
    let xi = me / x;
    let yi = n_x + me % x;
    if me == 0 {
        let slots = reserve_2d(inst, &parent, maps, &shapes)?;
        for i in 0..n {
            let pair = match &slots {
                Some(s) => (s[i / x] as u64) << 16 | s[n_x + i % x] as u64,
                None => NO_SLOT,
            };
            mailbox(
                inst,
                result_word,
                parent.world_pe(i),
                AmoOp::Set(RESULT_VALID | pair),
            )?;
        }
    }
    let leader = parent.world_pe(0);
    let result = wait_for(
        inst,
        &|| format!("PE {leader} (the parent team's first member) has not announced the 2-D split's teams"),
        || {
            let v = mailbox(inst, result_word, inst.my_pe(), AmoOp::Fetch)?;
            Ok((v & RESULT_VALID != 0).then_some(v))
        },
    )?;
    if result & 0xffff == NO_SLOT {
        return Err(Error::Inner(format!(
            "no team slot is free on every member of a new team (limit {ACLSHMEM_MAX_TEAMS} live teams)"
        )));
    }
    let (xslot, yslot) = (((result >> 16) & 0xffff) as usize, (result & 0xffff) as usize);
    let xs = install(inst, &parent, shapes[xi], xslot, inc);
    let ys = install(inst, &parent, shapes[yi], yslot, inc);
    match (xs, ys) {
        (Some(a), Some(b)) => {
            ready(inst, a)?;
            ready(inst, b)?;
            Ok((a, b))
        }
        _ => Err(Error::Inner("this PE landed in no 2-D team".into())),
    }
}

/// The slots of a 2-D split's teams (`shapes`, members by parent index; `maps`: every parent
/// member's taken slots as exchanged), each reserved on its members; `None` (and nothing kept
/// reserved) when a team finds no slot free on every member.
fn reserve_2d(
    inst: &Instance,
    parent: &Team,
    mut maps: Vec<Bitmap>,
    shapes: &[Shape],
) -> Result<Option<Vec<usize>>> {
    let mut slots: Vec<usize> = Vec::with_capacity(shapes.len());
    for &shape in shapes {
        let members: Vec<usize> = shape.members().map(|m| parent.world_pe(m)).collect();
        let mut hint = union(&maps, shape);
        let Some(slot) = reserve(inst, &members, &mut hint)? else {
            for (&done, &s) in shapes.iter().zip(&slots) {
                let (word, bit) = taken_bit(s);
                for m in done.members() {
                    mailbox(inst, word, parent.world_pe(m), AmoOp::FetchAnd(!bit))?;
                }
            }
            return Ok(None);
        };
        for m in shape.members() {
            take(&mut maps[m], slot);
        }
        slots.push(slot);
    }
    Ok(Some(slots))
}

/// `aclshmem_team_destroy`: local; first lets readers of this PE's small-collective buffers finish.
pub fn destroy(inst: &Instance, handle: i32) -> Result<()> {
    let t = {
        let teams = inst.teams();
        if handle == 0 {
            return Err(Error::InvalidParam(
                "ACLSHMEM_TEAM_WORLD cannot be destroyed".into(),
            ));
        }
        teams.get(handle)?
    };
    crate::collectives::small::drain(inst, &t)?;
    if inst.hierarchical() {
        // this PE's eager-broadcast pushes and credits land before it takes part in a later team
        // on the slot
        inst.routes().quiet()?;
    }
    inst.teams().destroy(handle)?;
    // the slot is free on this PE for later splits (after the table forgot it: a split that
    // takes it now installs a new team there)
    let (word, bit) = taken_bit(t.slot);
    mailbox(inst, word, inst.my_pe(), AmoOp::FetchAnd(!bit))?;
    Ok(())
}

/// `aclshmem_team_translate_pe`: index in `dest` of member `src_pe` of `src`, or -1.
pub fn translate(inst: &Instance, src: i32, src_pe: i32, dest: i32) -> i32 {
    if let Err(e) = check_instance(inst) {
        return e.code();
    }
    let teams = inst.teams();
    let (Ok(s), Ok(d)) = (teams.get(src), teams.get(dest)) else {
        return -1;
    };
    if src_pe < 0 || src_pe as usize >= s.size {
        return -1;
    }
    d.index_of(s.world_pe(src_pe as usize)).map_or(-1, |i| i as i32)
}

/// The (all-zero) configuration of a live team.
pub fn config(inst: &Instance, team: i32) -> Result<TeamConfig> {
    check_instance(inst)?;
    inst.teams().get(team)?;
    Ok(TeamConfig {
        version: 0,
        num_contexts: 0,
        uniqueid: 0,
        padding: [0; 48],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership() {
        let t = Team {
            slot: 1,
            start: 2,
            stride: 3,
            size: 3,
            my_index: 0,
        };
        assert_eq!(t.index_of(2), Some(0));
        assert_eq!(t.index_of(8), Some(2));
        assert_eq!(t.index_of(5), Some(1));
        assert_eq!(t.index_of(11), None);
        assert_eq!(t.index_of(4), None);
        assert_eq!(t.index_of(0), None);
    }

    #[test]
    fn incarnation_is_one_more_than_any_member_saw() {
        let part = |created: u32| {
            let mut p = vec![0u8; 4];
            p.extend_from_slice(&created.to_le_bytes());
            p.extend_from_slice(&7i32.to_le_bytes());
            p
        };
        assert_eq!(new_incarnation(&[part(0), part(0)], 4), 1);
        // a member that took part in more creations than the others raises everybody's
        assert_eq!(new_incarnation(&[part(3), part(9), part(1)], 4), 10);
        // every member computes it from the same parts: the same value
        let parts = [part(5), part(2)];
        assert_eq!(new_incarnation(&parts, 4), new_incarnation(&parts, 4));
    }

    #[test]
    fn a_team_looks_at_its_members_slots_only() {
        // 4 parent members; member 1 already uses slot 1, member 3 uses slot 2
        let mut maps = vec![[0u8; ACLSHMEM_MAX_TEAMS / 8]; 4];
        for m in &mut maps {
            take(m, 0);
        }
        take(&mut maps[1], 1);
        take(&mut maps[3], 2);
        let even = Shape {
            start: 0,
            stride: 2,
            size: 2,
        }; // members 0, 2
        let odd = Shape {
            start: 1,
            stride: 2,
            size: 2,
        }; // members 1, 3
        let first = |b: &Bitmap| (1..ACLSHMEM_MAX_TEAMS).find(|&s| is_free(b, s));
        assert_eq!(first(&union(&maps, even)), Some(1));
        assert_eq!(first(&union(&maps, odd)), Some(3));
        // once a member has every slot, no team including it finds one
        for s in 0..ACLSHMEM_MAX_TEAMS {
            take(&mut maps[0], s);
        }
        assert_eq!(first(&union(&maps, even)), None);
        assert_eq!(first(&union(&maps, odd)), Some(3));
    }

    #[test]
    fn taken_bits_match_the_bitmap_bytes() {
        // a bitmap read as bytes (`read_taken`) and the words the leaders OR into agree
        for slot in [1, 7, 8, 63, 64, 65, 1000, ACLSHMEM_MAX_TEAMS - 1] {
            let mut b: Bitmap = [0; ACLSHMEM_MAX_TEAMS / 8];
            take(&mut b, slot);
            let (word, bit) = taken_bit(slot);
            let w = u64::from_le_bytes(b[word - TAKEN..word - TAKEN + 8].try_into().unwrap());
            assert_eq!(w, bit, "slot {slot}");
        }
    }

    #[test]
    fn world_cannot_be_destroyed_and_handles_are_checked() {
        let mut t = Teams::new(0, 4);
        assert!(t.destroy(0).is_err());
        assert!(t.destroy(5).is_err());
        assert!(t.get(-1).is_err());
        assert!(t.get(2048).is_err());
        assert_eq!(t.get(0).unwrap().size, 4);
        assert_eq!(t.live(), 1);
    }
}

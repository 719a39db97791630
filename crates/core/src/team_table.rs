//! The team records an instance keeps: each team's shape and slot, the slot layout of the sync
//! pool, and the per-slot call counters. Pure data: no communication (that is `team.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

use crate::error::{Error, Result};
use aclshmem_abi::{ACLSHMEM_MAX_TEAMS, SYNC_ARRAY_SIZE};

/// Offset of the exchange area inside a slot's sync-pool area (after the barrier words).
pub const EXCHANGE_OFFSET: usize = 128;
/// Bytes one member can publish in one exchange.
/// (The largest exchange, a team split's, is the slot bitmap, an incarnation and a few arguments:
/// 256 + 4 + 12 bytes.)
pub const EXCHANGE_BYTES: usize = 896;
/// Offset of the small-collective area (flags, acknowledgements, records, buffers); up to the end
/// of the slot's SYNC_ARRAY_SIZE bytes.
pub const SMALL_OFFSET: usize = EXCHANGE_OFFSET + EXCHANGE_BYTES;
/// Bytes of the small-collective area.
pub const SMALL_BYTES: usize = SYNC_ARRAY_SIZE - SMALL_OFFSET;
const _: () = assert!(ACLSHMEM_MAX_TEAMS / 8 + 64 <= EXCHANGE_BYTES);

/// Bytes of the split area in every PE's reserved region, after the rings (`Instance::splits`):
/// the PE's taken-slot bitmap, then a 64-byte mailbox per parent slot (`team.rs`).
pub const SPLIT_AREA: usize = ACLSHMEM_MAX_TEAMS / 8 + ACLSHMEM_MAX_TEAMS * 64;

/// Bytes of the departure notices in every PE's reserved region, after the split mailbox
/// (`Instance::departures`, written by `sync::depart`): a count of the PEs that left, in a line
/// of its own, then one bit per PE.
pub const DEPART_AREA: usize = 64 + aclshmem_abi::ACLSHMEM_MAX_PES / 8;

/// The wide rings of the barrier-free collectives (`collectives::small`), in the reserved region
/// after the sync counters (`instance::reserve_internal`).
/// Team slots below this (the world team and the first teams created) also have a wide ring, in
/// the reserved region after the sync counters, for payloads above 64 bytes (`collectives::small::SMALL_MAX`): deeper, with
/// 1 KiB buffers (see [`RINGS_BYTES`]).
pub const WIDE_SLOTS: usize = 8;
/// Largest payload per member and call on a wide ring.
pub const WIDE_MAX: usize = 1024;
/// Buffers per member of a wide ring.
pub const WIDE_DEPTH: usize = 32;
/// One wide entry: the data, then its flag and its pending word in the last line (a reader polls
/// the flag while the publisher writes the data: apart, they do not take the same line back and
/// forth; 2 PEs, 512-byte broadcast 0.28 against 0.15 µs with the flag in the data's first line).
pub const ENTRY: usize = (16 + WIDE_MAX).div_ceil(64) * 64;
/// The wide view words (records of the calls this PE read), after the entries.
pub const W_VIEW: usize = WIDE_DEPTH * ENTRY;
pub const WIDE_SLOT_BYTES: usize = W_VIEW + WIDE_DEPTH * 8;
/// Slots below [`WIDE_SLOTS`] keep their narrow ring (payloads up to 64 bytes) here too, deeper
/// than the one the sync pool has room for: a publisher runs further ahead of its readers, so an
/// oversubscribed node switches between PEs less often per call.
pub const DEEP_DEPTH: usize = 128;
/// One entry of a deep narrow ring: flag, pending word, then up to 64 bytes of data (the first 48
/// in the flag's line), padded to two lines.
pub const DEEP_ENTRY: usize = 128;
/// One slot's deep narrow ring: the entries, the view words (8 bytes each per buffer), then the
/// line of the slot's `done` word (`collectives::small`).
pub const DEEP_SLOT_BYTES: usize = DEEP_DEPTH * (DEEP_ENTRY + 8) + 64;
/// Where the deep narrow rings start, after the wide rings.
pub const DEEP_OFFSET: usize = WIDE_SLOTS * WIDE_SLOT_BYTES;
/// Team slots below this (the world team and the first team created) also have a big ring for
/// the eager broadcast across nodes (`collectives::eager`), for payloads above its wide-ring
/// entries, up to [`BIG_MAX`] bytes.
pub const BIG_SLOTS: usize = 2;
/// Largest payload of a big-ring entry.
pub const BIG_MAX: usize = 4096;
/// One slot's big ring: 32 entries of a word and [`BIG_MAX`] bytes (16 per member for 2 members).
pub const BIG_SLOT_BYTES: usize = 32 * (8 + BIG_MAX);
/// Where the big rings start, after the deep rings.
pub const BIG_OFFSET: usize = DEEP_OFFSET + WIDE_SLOTS * DEEP_SLOT_BYTES;
/// Bytes of the wide, deep and big rings in each PE's reserved region.
pub const RINGS_BYTES: usize = BIG_OFFSET + BIG_SLOTS * BIG_SLOT_BYTES;
/// The reserved region (signal word, sync pool, counters, wide rings, split mailbox, departure
/// notices, CPU table) stays inside the extra space the heap gets on top of `local_mem_size`.
const _: () = assert!(
    64 + aclshmem_abi::SYNC_POOL_SIZE
        + aclshmem_abi::SYNC_COUNTERS_SIZE
        + RINGS_BYTES
        + SPLIT_AREA
        + DEPART_AREA
        + crate::wait::CPU_AREA
        <= aclshmem_abi::ACLSHMEM_EXTRA_SIZE as usize
);

/// One live team as this PE sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Team {
    pub slot: usize,
    pub start: usize,
    pub stride: usize,
    pub size: usize,
    /// This PE's index in the team.
    pub my_index: usize,
}

impl Team {
    /// World PE of member `i`.
    #[inline]
    pub fn world_pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }

    /// Index of world PE `pe` in this team, if it is a member.
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        let d = pe.checked_sub(self.start)?;
        if self.stride == 0 {
            return (d == 0).then_some(0);
        }
        (d.is_multiple_of(self.stride) && d / self.stride < self.size).then_some(d / self.stride)
    }
}

/// The teams this PE belongs to, by slot: the side that creates and destroys them (behind the
/// instance's lock); each team's shape, incarnation and this PE's counters of its small
/// collectives are also in [`TeamCells`], which the calls read without the lock.
/// The node groups of a team, as one member sees them (used by the hierarchical collectives of
/// jobs across nodes).
#[derive(Debug)]
pub(crate) struct Groups {
    /// Team index of each node's leader (its first member), ordered by index.
    pub leaders: Vec<usize>,
    /// Team indices of this PE's node's members, in order (the leader first).
    pub local: Vec<usize>,
    /// Position of this PE's leader in `leaders`.
    pub my_leader: usize,
}

impl Groups {
    /// The groups of `team` for a member on node `my_node`, `node_of` naming each world PE's
    /// node: one pass over the members.
    pub(crate) fn of(team: &Team, node_of: impl Fn(usize) -> usize, my_node: usize) -> Groups {
        let mut seen = std::collections::HashSet::new();
        let mut g = Groups {
            leaders: Vec::new(),
            local: Vec::new(),
            my_leader: 0,
        };
        for i in 0..team.size {
            let node = node_of(team.world_pe(i));
            if seen.insert(node) {
                if node == my_node {
                    g.my_leader = g.leaders.len();
                }
                g.leaders.push(i);
            }
            if node == my_node {
                g.local.push(i);
            }
        }
        g
    }

    /// Whether this PE leads its node's group.
    pub fn leading(&self, team: &Team) -> bool {
        self.leaders[self.my_leader] == team.my_index
    }
}

/// How a surface names the team in slot `s` in messages, besides the slot number (the aclshmem
/// API's handle): set by the OpenSHMEM surface at init, whose handles differ ([`set_team_names`]).
static TEAM_NAMES: std::sync::OnceLock<fn(usize) -> Option<String>> = std::sync::OnceLock::new();

/// Registers `names` (once per process): [`TeamName`] adds what it returns to the slot number.
pub fn set_team_names(names: fn(usize) -> Option<String>) {
    let _ = TEAM_NAMES.set(names);
}

/// A team slot in a message: its number (the aclshmem handle) and, when the OpenSHMEM surface is
/// in use, its handle there (`team 1 (OpenSHMEM handle 0x3)`: the numbers differ, and the
/// world team's 0 is `SHMEM_TEAM_INVALID` on that surface).
#[derive(Clone, Copy, Debug)]
pub struct TeamName(pub usize);

impl std::fmt::Display for TeamName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        if let Some(other) = TEAM_NAMES.get().and_then(|names| names(self.0)) {
            write!(f, " ({other})")?;
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Teams {
    slots: Vec<Option<Team>>,
    /// The copy of `slots` calls read without the lock, and the call counters.
    cells: Arc<TeamCells>,
    /// The largest incarnation of a team whose creation this PE took part in.
    created: u32,
    /// How many strided splits of each (parent slot, parent incarnation, start, stride, size) this
    /// PE made as a member: the same count on every member (they make the same calls in the same
    /// order), so it tells a split's agreement from an earlier one of the same shape.
    split_calls: std::collections::HashMap<(usize, u32, usize, usize, usize), u64>,
}

pub(crate) type Bitmap = [u8; ACLSHMEM_MAX_TEAMS / 8];

impl Teams {
    /// Only the world team.
    pub fn new(my_pe: usize, n_pes: usize) -> Teams {
        let mut slots = vec![None; ACLSHMEM_MAX_TEAMS];
        slots[0] = Some(Team {
            slot: 0,
            start: 0,
            stride: 1,
            size: n_pes,
            my_index: my_pe,
        });
        let cells = Arc::new(TeamCells::new());
        cells.set(0, slots[0]);
        Teams {
            slots,
            cells,
            created: 0,
            split_calls: Default::default(),
        }
    }

    /// The team of `handle`, or `ACLSHMEM_INVALID_PARAM`.
    /// The team in `slot`, if one lives there (no error text made: see [`Self::get`]).
    pub fn at(&self, slot: usize) -> Option<Team> {
        self.slots.get(slot).copied().flatten()
    }

    pub fn get(&self, handle: i32) -> Result<Team> {
        usize::try_from(handle)
            .ok()
            .and_then(|h| self.slots.get(h).copied().flatten())
            .ok_or_else(|| {
                let name =
                    usize::try_from(handle).map_or_else(|_| handle.to_string(), |h| TeamName(h).to_string());
                Error::InvalidParam(format!("team {name} is not a valid team handle"))
            })
    }

    /// Releases a team (local, no communication). The world team cannot be destroyed.
    pub fn destroy(&mut self, handle: i32) -> Result<()> {
        if handle == 0 {
            return Err(Error::InvalidParam(
                "ACLSHMEM_TEAM_WORLD cannot be destroyed".into(),
            ));
        }
        self.get(handle)?;
        self.slots[handle as usize] = None;
        self.cells.set(handle as usize, None);
        Ok(())
    }

    pub(crate) fn install(&mut self, team: Team, incarnation: u32) {
        self.cells.seq[team.slot].store(0, Ordering::Relaxed);
        self.cells.known[team.slot].store(0, Ordering::Relaxed);
        self.cells.published[team.slot].store(0, Ordering::Relaxed);
        self.cells.verified[team.slot].store(0, Ordering::Relaxed);
        self.cells.last_broadcast[team.slot].store(0, Ordering::Relaxed);
        self.cells.told[team.slot].store(0, Ordering::Relaxed);
        self.cells.barriers[team.slot].store(0, Ordering::Relaxed);
        self.cells.incarnation[team.slot].store(incarnation, Ordering::Relaxed);
        self.slots[team.slot] = Some(team);
        self.cells.set(team.slot, Some(team));
    }

    /// The lock-free copy of this table (shared: it outlives the lock's guard).
    pub(crate) fn cells(&self) -> Arc<TeamCells> {
        Arc::clone(&self.cells)
    }

    /// The largest incarnation of a team whose creation this PE took part in.
    pub(crate) fn created(&self) -> u32 {
        self.created
    }

    /// Counts one more strided split of `key` by this PE; returns the count before it.
    pub(crate) fn next_split(&mut self, key: (usize, u32, usize, usize, usize)) -> u64 {
        let n = self.split_calls.entry(key).or_default();
        *n += 1;
        *n - 1
    }

    /// Takes back the count of a split of `key` that failed (so the members' counts stay equal
    /// when the others never made it).
    pub(crate) fn undo_split(&mut self, key: (usize, u32, usize, usize, usize)) {
        if let Some(n) = self.split_calls.get_mut(&key) {
            *n = n.saturating_sub(1);
        }
    }

    /// This PE took part in creating teams of incarnation `inc`.
    pub(crate) fn saw_creation(&mut self, inc: u32) {
        self.created = self.created.max(inc);
    }

    /// Number of live teams, the world team included.
    pub fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

/// What the calls read of the team table, without its lock: every slot's team behind a sequence
/// lock, and per slot this PE's own counters of its small collectives.
///
/// Why not the lock: a call that takes a mutex runs a locked instruction, which on x86 waits until
/// every store before it reached the cache. A broadcast's root has just stored its data and flag
/// into lines its readers hold, so each call waited for the previous call's stores to leave the
/// core: measured as half of a 2-PE root's time in the lock (8-byte broadcasts, `perf record`).
/// Reading a slot here is plain loads; only team creation and destruction write (under the
/// table's lock, which serialises writers).
#[derive(Debug)]
pub struct TeamCells {
    cells: Box<[TeamCell]>,
    /// Per slot: the last small-collective sequence number (see [`TeamCells::next_seq`]).
    seq: Box<[AtomicU64]>,
    /// Per slot: a call every other member is known to have completed (`collectives::small`).
    known: Box<[AtomicU64]>,
    /// Per slot: the last call in which this PE published in its ring.
    published: Box<[AtomicU64]>,
    /// Per slot: the calls up to which this PE checked that every other member read its broadcasts.
    verified: Box<[AtomicU64]>,
    /// Per slot: the last call in which this PE published as a broadcast's root.
    last_broadcast: Box<[AtomicU64]>,
    /// Per slot: the last of those calls this PE told the other members of at a barrier of the
    /// program (`collectives::program_barrier`).
    told: Box<[AtomicU64]>,
    /// Per slot: the barriers of the program on the team this PE entered, every member mapped
    /// (`collectives::program_barrier`).
    barriers: Box<[AtomicU64]>,
    /// Per slot: the incarnation of the team there, the same on every member and larger than that
    /// of any earlier team a member of it took part in (0: the world team). Marks what a team's
    /// members send each other, so a late message of an earlier team in the slot is not taken for
    /// one of this team's (`collectives::eager`).
    incarnation: Box<[AtomicU32]>,
}

/// One slot: a version (odd while a writer changes the fields) and the team's fields (size 0: no
/// team).
#[derive(Debug, Default)]
struct TeamCell {
    version: AtomicU64,
    fields: [AtomicUsize; 5],
}

impl TeamCells {
    fn new() -> TeamCells {
        TeamCells {
            cells: (0..ACLSHMEM_MAX_TEAMS).map(|_| TeamCell::default()).collect(),
            seq: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            known: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            published: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            verified: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            last_broadcast: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            told: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            barriers: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU64::new(0)).collect(),
            incarnation: (0..ACLSHMEM_MAX_TEAMS).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Writer (the table's lock held): the team of `slot` is now `team`.
    fn set(&self, slot: usize, team: Option<Team>) {
        let c = &self.cells[slot];
        let v = c.version.load(Ordering::Relaxed);
        c.version.store(v + 1, Ordering::Relaxed);
        // the odd version is visible before any field changes
        fence(Ordering::Release);
        let f = team.map_or([0; 5], |t| [t.slot, t.start, t.stride, t.size, t.my_index]);
        for (cell, value) in c.fields.iter().zip(f) {
            cell.store(value, Ordering::Relaxed);
        }
        c.version.store(v + 2, Ordering::Release);
    }

    /// The team of `handle`: `Ok(None)` for no team, `Err(())` while a writer changes the slot
    /// (the caller then asks the locked table).
    #[inline(always)]
    pub fn get(&self, handle: i32) -> std::result::Result<Option<Team>, ()> {
        let Some(c) = usize::try_from(handle).ok().and_then(|h| self.cells.get(h)) else {
            return Ok(None);
        };
        let v = c.version.load(Ordering::Acquire);
        let f: [usize; 5] = std::array::from_fn(|i| c.fields[i].load(Ordering::Relaxed));
        // the fields are read before the version is read again
        fence(Ordering::Acquire);
        if v & 1 == 1 || c.version.load(Ordering::Relaxed) != v {
            return Err(());
        }
        Ok((f[3] != 0).then_some(Team {
            slot: f[0],
            start: f[1],
            stride: f[2],
            size: f[3],
            my_index: f[4],
        }))
    }

    /// The next small-collective sequence number of `slot` (1, 2, ...: the same on every member,
    /// which call collectives in the same order). A load and a store, not a read-modify-write (a
    /// locked instruction, see above): a team's collectives are called one at a time (the
    /// specification's rule for every thread level).
    #[inline]
    pub fn next_seq(&self, slot: usize) -> u64 {
        let s = self.seq[slot].load(Ordering::Relaxed) + 1;
        self.seq[slot].store(s, Ordering::Relaxed);
        s
    }

    /// The last sequence number [`TeamCells::next_seq`] gave out for `slot`.
    pub fn seq(&self, slot: usize) -> u64 {
        self.seq[slot].load(Ordering::Relaxed)
    }

    /// Counts the calls of `slot` up to `seq` as made (the other members made them while this PE
    /// waited in a barrier, `sync::skipped`): [`TeamCells::next_seq`] gives out `seq + 1` next.
    pub fn skip_to(&self, slot: usize, seq: u64) {
        if seq > self.seq(slot) {
            self.seq[slot].store(seq, Ordering::Relaxed);
        }
    }

    /// A call of `slot` every other member is known to have completed (0: none yet).
    #[inline]
    pub fn known(&self, slot: usize) -> u64 {
        self.known[slot].load(Ordering::Relaxed)
    }

    pub fn set_known(&self, slot: usize, seq: u64) {
        self.known[slot].store(seq, Ordering::Relaxed);
    }

    /// The last call of `slot` in which this PE published (0: none).
    pub fn published(&self, slot: usize) -> u64 {
        self.published[slot].load(Ordering::Relaxed)
    }

    /// This PE published in call `seq` of `slot` (as a broadcast's root when `broadcast`).
    #[inline]
    pub fn set_published(&self, slot: usize, seq: u64, broadcast: bool) {
        self.published[slot].store(seq, Ordering::Relaxed);
        if broadcast {
            self.last_broadcast[slot].store(seq, Ordering::Relaxed);
        }
    }

    /// The last call of `slot` in which this PE published as a broadcast's root (0: none).
    #[inline]
    pub fn last_broadcast(&self, slot: usize) -> u64 {
        self.last_broadcast[slot].load(Ordering::Relaxed)
    }

    /// The last broadcast of `slot` this PE told the others of at a barrier of the program.
    #[inline]
    pub fn told(&self, slot: usize) -> u64 {
        self.told[slot].load(Ordering::Relaxed)
    }

    pub fn set_told(&self, slot: usize, seq: u64) {
        self.told[slot].store(seq, Ordering::Relaxed);
    }

    /// Counts a barrier of the program on `slot` this PE enters; returns its number (1, 2, ...).
    #[inline]
    pub fn next_barrier(&self, slot: usize) -> u64 {
        let b = self.barriers[slot].load(Ordering::Relaxed) + 1;
        self.barriers[slot].store(b, Ordering::Relaxed);
        b
    }

    /// Calls of `slot` up to which this PE checked its broadcasts' readers.
    pub fn verified(&self, slot: usize) -> u64 {
        self.verified[slot].load(Ordering::Relaxed)
    }

    pub fn set_verified(&self, slot: usize, seq: u64) {
        self.verified[slot].store(seq, Ordering::Relaxed);
    }

    /// The incarnation of the team in `slot` (see the field).
    #[inline]
    pub fn incarnation(&self, slot: usize) -> u32 {
        self.incarnation[slot].load(Ordering::Relaxed)
    }
}

pub(crate) fn is_free(b: &Bitmap, slot: usize) -> bool {
    b[slot / 8] & (1 << (slot % 8)) == 0
}

pub(crate) fn take(b: &mut Bitmap, slot: usize) {
    b[slot / 8] |= 1 << (slot % 8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(start: usize, stride: usize, size: usize, my_index: usize) -> Team {
        Team {
            slot: 1,
            start,
            stride,
            size,
            my_index,
        }
    }

    #[test]
    fn groups_of_a_strided_team_across_nodes() {
        // world PEs 0..12 on nodes of 3 PEs, numbered out of order
        let nodes = [5, 5, 5, 2, 2, 2, 9, 9, 9, 2, 2, 2];
        let node_of = |pe: usize| nodes[pe];
        // members: world PEs 1, 3, 5, 7, 9, 11 (nodes 5, 2, 2, 9, 2, 2)
        let t = team(1, 2, 6, 2);
        let g = Groups::of(&t, node_of, node_of(t.world_pe(t.my_index)));
        assert_eq!(g.leaders, vec![0, 1, 3], "first member of each node, by index");
        assert_eq!(
            g.local,
            vec![1, 2, 4, 5],
            "every member on node 2 (PEs 3, 5, 9, 11)"
        );
        assert_eq!(g.my_leader, 1);
        assert!(!g.leading(&t));
        let lead = team(1, 2, 6, 1);
        assert!(Groups::of(&lead, node_of, 2).leading(&lead));
        // a node met again later (PEs 0, 3, 6, 9: nodes 5, 2, 9, 2)
        let t = team(0, 3, 4, 3);
        let g = Groups::of(&t, node_of, node_of(9));
        assert_eq!(g.leaders, vec![0, 1, 2]);
        assert_eq!(g.local, vec![1, 3]);
        assert_eq!(g.my_leader, 1);
        assert!(!g.leading(&t));
        // one member per node (PEs 0, 3, 6)
        let t = team(0, 3, 3, 2);
        let g = Groups::of(&t, node_of, node_of(6));
        assert_eq!(g.leaders, vec![0, 1, 2]);
        assert_eq!(g.local, vec![2]);
        assert_eq!(g.my_leader, 2);
        assert!(g.leading(&t));
    }
}

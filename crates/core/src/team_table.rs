//! The team records an instance keeps: each team's shape and slot, the slot layout of the sync
//! pool, and the per-slot call counters. Pure data: no communication (that is `team.rs`).

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

/// The wide rings of the barrier-free collectives (`collectives::small`), in the reserved region
/// after the sync counters (`instance::reserve_internal`).
/// Team slots below this (the world team and the first teams created) also have a wide ring, in
/// the reserved region after the sync counters, for payloads above 64 bytes (`collectives::small::SMALL_MAX`): deeper, with
/// 1 KiB buffers, each acknowledgement counter in a line of its own (see [`RINGS_BYTES`]).
pub const WIDE_SLOTS: usize = 8;
/// Largest payload per member and call on a wide ring.
pub const WIDE_MAX: usize = 1024;
/// Buffers per member of a wide ring.
pub const WIDE_DEPTH: usize = 32;
/// One wide entry: its flag, its pending word, then the data (the first 48 bytes of a payload
/// share the flag's cache line).
pub const ENTRY: usize = (16 + WIDE_MAX).div_ceil(64) * 64;
/// The wide acknowledgement counters, one cache line each, after the entries.
pub const W_ACK: usize = WIDE_DEPTH * ENTRY;
/// The wide view words (as `VIEW`), after the counters.
pub const W_VIEW: usize = W_ACK + WIDE_DEPTH * 64;
pub const WIDE_SLOT_BYTES: usize = W_VIEW + WIDE_DEPTH * 8;
/// Slots below [`WIDE_SLOTS`] keep their narrow ring (payloads up to 64 bytes) here too, deeper
/// than the one the sync pool has room for: a publisher runs further ahead of its readers, so an
/// oversubscribed node switches between PEs less often per call.
pub const DEEP_DEPTH: usize = 128;
/// One slot's deep narrow ring: flags, acknowledgements, pending and view words (8 bytes each per
/// buffer), then the 64-byte buffers.
pub const DEEP_SLOT_BYTES: usize = DEEP_DEPTH * (4 * 8 + 64);
/// Where the deep narrow rings start, after the wide rings.
pub const DEEP_OFFSET: usize = WIDE_SLOTS * WIDE_SLOT_BYTES;
/// Bytes of the wide and deep rings in each PE's reserved region.
pub const RINGS_BYTES: usize = DEEP_OFFSET + WIDE_SLOTS * DEEP_SLOT_BYTES;
/// The reserved region (signal word, sync pool, counters, wide rings) stays inside the extra
/// space the heap gets on top of `local_mem_size`.
const _: () = assert!(
    64 + aclshmem_abi::SYNC_POOL_SIZE + aclshmem_abi::SYNC_COUNTERS_SIZE + RINGS_BYTES
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

/// The teams this PE belongs to, by slot, each one's count of small collectives and its
/// incarnation.
#[derive(Debug)]
pub struct Teams {
    slots: Vec<Option<Team>>,
    seq: Vec<u64>,
    /// Per slot: the incarnation of the team there, the same on every member and larger than that
    /// of any earlier team a member of it took part in (0: the world team). Marks what a team's
    /// members send each other, so a late message of an earlier team in the slot is not taken for
    /// one of this team's (`collectives::eager`).
    incarnation: Vec<u32>,
    /// The largest incarnation of a team whose creation this PE took part in.
    created: u32,
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
        Teams {
            slots,
            seq: vec![0; ACLSHMEM_MAX_TEAMS],
            incarnation: vec![0; ACLSHMEM_MAX_TEAMS],
            created: 0,
        }
    }

    /// The team of `handle`, or `ACLSHMEM_INVALID_PARAM`.
    pub fn get(&self, handle: i32) -> Result<Team> {
        usize::try_from(handle)
            .ok()
            .and_then(|h| self.slots.get(h).copied().flatten())
            .ok_or_else(|| Error::InvalidParam(format!("team {handle} is not a valid team handle")))
    }

    pub(crate) fn bitmap(&self) -> Bitmap {
        let mut b = [0u8; ACLSHMEM_MAX_TEAMS / 8];
        for (i, s) in self.slots.iter().enumerate() {
            if s.is_some() {
                b[i / 8] |= 1 << (i % 8);
            }
        }
        b
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
        Ok(())
    }

    pub(crate) fn install(&mut self, team: Team, incarnation: u32) {
        self.seq[team.slot] = 0;
        self.incarnation[team.slot] = incarnation;
        self.slots[team.slot] = Some(team);
    }

    /// The incarnation of the team in `slot` (see the field).
    pub(crate) fn incarnation(&self, slot: usize) -> u32 {
        self.incarnation[slot]
    }

    /// The largest incarnation of a team whose creation this PE took part in.
    pub(crate) fn created(&self) -> u32 {
        self.created
    }

    /// This PE took part in creating teams of incarnation `inc`.
    pub(crate) fn saw_creation(&mut self, inc: u32) {
        self.created = self.created.max(inc);
    }

    /// The next small-collective sequence number of `slot` (1, 2, ...: the same on every member,
    /// which call collectives in the same order).
    pub fn next_seq(&mut self, slot: usize) -> u64 {
        self.seq[slot] += 1;
        self.seq[slot]
    }

    /// Number of live teams, the world team included.
    pub fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

pub(crate) fn is_free(b: &Bitmap, slot: usize) -> bool {
    b[slot / 8] & (1 << (slot % 8)) == 0
}

pub(crate) fn take(b: &mut Bitmap, slot: usize) {
    b[slot / 8] |= 1 << (slot % 8);
}

//! Host-side collectives over teams (extension; OpenSHMEM 1.5 shapes): broadcast, collect,
//! fcollect, alltoall and reductions.
//!
//! Every member maps every other member's heap, so a collective is: a team barrier (every
//! member's source is ready and its destination free), copies between the mapped copies, and a
//! closing barrier (nobody reuses a buffer another member still reads). Where the data moves is the
//! algorithm, chosen per call family by an environment variable (see [`Algos`]) so tests can run
//! each one:
//! * `pull`: each member copies what it needs from the others (work spread over all members);
//! * `push`: each member writes its part into the others' destinations;
//! * reductions: `direct` (every member reads every source, reduces locally; a barrier after the
//!   reads, then each member writes only its own destination, so no closing barrier) or `scatter`
//!   (member i reduces the i-th chunk from every source and writes it to every destination: each
//!   byte is read and written once per member instead of once per pair).
//!
//! Across nodes (`Instance::hierarchical`), broadcast and reductions with the default settings are
//! hierarchical ([`hier`]): shared memory inside each node, one leader per node between nodes.
//!
//! Up to [`small::WIDE_MAX`] bytes per member (1 KiB on the world team and the first teams created,
//! 64 bytes on the others), broadcast, fcollect, alltoall and (with the `auto` reduction setting)
//! reductions take the barrier-free path of [`small`] whatever the setting; collect sends every
//! member's length (and its data, when it fits) through the same rings.
//!
//! `unsafe` here reads and writes peers' heap copies through addresses checked against the heap.

mod eager;
mod hier;
mod mail;
mod reduce;
pub(crate) mod small;

pub use reduce::{Element, Number, Op, combine};

/// A new team in `slot`: clears this PE's eager-broadcast state (see [`eager`]).
pub(crate) fn eager_reset(inst: &Instance, slot: usize) {
    eager::reset(inst, slot);
    hier::reset(inst, slot);
}

pub use crate::algos::{Algos, DIRECT_LIMIT, Move, ReduceAlgo};
use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync;
use crate::team_table::Team;
use crate::transport::Remote;

/// A collective call as every member must make it: its family (a reduction's with its operator),
/// the root a broadcast names and the bytes per member (per block for alltoall; 0 for collect,
/// whose lengths may differ). Members compare calls to find asymmetric ones, which would otherwise
/// read or write another member's buffers by the wrong length or wait for ever: the barrier-free
/// path by [`Call::ring_tag`] in every publication ([`small`]), the barrier path through [`agreed`]
/// (before any data moves to or from a member's buffers). A reduction's element type (its kind
/// of number and size, [`elem_code`]) takes the root's place: two members reducing `int32_t` and
/// `float` of one length are an asymmetric call as two lengths are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Call {
    kind: u8,
    /// A broadcast's root; a reduction's [`elem_code`]; 0 otherwise.
    root: u32,
    len: u64,
}

const BROADCAST: u8 = 1;
const FCOLLECT: u8 = 2;
const ALLTOALL: u8 = 3;
const COLLECT: u8 = 4;
/// OpenSHMEM's strided all-to-all (its record: [`Call::alltoalls`]).
const ALLTOALLS: u8 = 6;
/// The library's own collective calls ([`library_call`], [`exchange_call`]): which one in the
/// root word's bits 22 and 23 ([`LIB_ALLOC`], [`LIB_FREE`], [`LIB_SPLIT`], [`LIB_RESIZE`]), its
/// request in the rest (see [`Call::library`]).
const LIBRARY: u8 = 7;
const LIB_ALLOC: u32 = 0;
const LIB_FREE: u32 = 1 << 22;
const LIB_SPLIT: u32 = 2 << 22;
const LIB_RESIZE: u32 = 3 << 22;
/// Reductions: this plus the operator's number.
const REDUCE: u8 = 8;
/// The family of the tag of a call's record in an agreement ([`Call::agree_tag`]).
const AGREE: u8 = 15;
const OPS: [(Op, &str); 7] = [
    (Op::And, "and"),
    (Op::Or, "or"),
    (Op::Xor, "xor"),
    (Op::Max, "max"),
    (Op::Min, "min"),
    (Op::Sum, "sum"),
    (Op::Prod, "prod"),
];
/// Lengths a tag holds exactly (every ring payload is shorter).
const TAG_LEN: u64 = 0xfff;
const _: () = assert!((small::WIDE_MAX as u64) < TAG_LEN);
/// The family of the tags of reductions of floating-point and complex elements (those of
/// integers: [`REDUCE`] plus the operator), whose 12 bits name operator, type and count.
const FLOAT_REDUCE: u8 = 5;
/// The length of a reduction rebuilt from a tag that names only "longer than any ring payload".
const LONGER: u64 = u64::MAX - 1;

const NUMBERS: [Number; 5] = [
    Number::Signed,
    Number::Unsigned,
    Number::Float,
    Number::Complex,
    Number::Extended,
];

/// A reduction's element type as its calls compare it: the kind of number (1-based index in
/// [`NUMBERS`]) above the size in bytes.
pub(crate) fn elem_code<T: Element>() -> u32 {
    code(T::NUMBER, std::mem::size_of::<T>() as u32)
}

const fn code(n: Number, size: u32) -> u32 {
    (n as u32 + 1) << 8 | size
}

const _: () = {
    let mut i = 0;
    while i < NUMBERS.len() {
        assert!(NUMBERS[i] as usize == i);
        i += 1;
    }
};

/// The C name of element type `code` ("int64", "double"), for messages.
fn elem_name(code: u32) -> Option<String> {
    let (k, size) = ((code >> 8) as usize, code & 0xff);
    let bits = size * 8;
    Some(match NUMBERS.get(k.checked_sub(1)?)? {
        Number::Signed => format!("int{bits}"),
        Number::Unsigned => format!("uint{bits}"),
        Number::Float if size == 4 => "float".into(),
        Number::Float if size == 8 => "double".into(),
        Number::Float => format!("float{bits}"),
        Number::Complex if size == 8 => "float complex".into(),
        Number::Complex if size == 16 => "double complex".into(),
        Number::Complex => format!("complex{bits}"),
        Number::Extended => "long double".into(),
    })
}

/// The element types of integer reductions' tags (family [`REDUCE`] + operator), in tag order.
const INT_TYPES: [u32; 8] = [
    code(Number::Signed, 1),
    code(Number::Signed, 2),
    code(Number::Signed, 4),
    code(Number::Signed, 8),
    code(Number::Unsigned, 1),
    code(Number::Unsigned, 2),
    code(Number::Unsigned, 4),
    code(Number::Unsigned, 8),
];
/// The element types of [`FLOAT_REDUCE`] tags, in tag order, for each of [`FLOAT_OPS`].
const FLOAT_TYPES: [u32; 5] = [
    code(Number::Float, 4),
    code(Number::Float, 8),
    code(Number::Complex, 8),
    code(Number::Complex, 16),
    code(Number::Extended, 16),
];
/// The operators of [`FLOAT_REDUCE`] tags (OpenSHMEM reduces no floating type bitwise).
const FLOAT_OPS: [Op; 4] = [Op::Max, Op::Min, Op::Sum, Op::Prod];

/// Values a tag gives element type `code`: every count of a ring payload, and one for "longer".
const fn counts(code: u32) -> u32 {
    (small::WIDE_MAX as u32) / (code & 0xff) + 2
}

const fn total(types: &[u32]) -> u32 {
    let mut i = 0;
    let mut t = 0;
    while i < types.len() {
        t += counts(types[i]);
        i += 1;
    }
    t
}

// every reduction's tag is exact (none is the saturated TAG_LEN of an untyped one)
const _: () = assert!(total(&INT_TYPES) < TAG_LEN as u32);
const _: () = assert!(FLOAT_OPS.len() as u32 * total(&FLOAT_TYPES) < TAG_LEN as u32);

/// The 12 bits of a reduction's tag for element type `code` and `len` bytes, among `types`
/// (None: not one of them).
fn type_count(types: &[u32], code: u32, len: u64) -> Option<u16> {
    let k = types.iter().position(|&c| c == code)?;
    let size = u64::from(code & 0xff);
    let count = if len <= small::WIDE_MAX as u64 {
        len / size
    } else {
        small::WIDE_MAX as u64 / size + 1
    };
    Some((total(&types[..k]) as u64 + count) as u16)
}

/// Element type and length of the 12 bits `v` of a reduction's tag (see [`type_count`]).
fn type_count_of(types: &[u32], v: u32) -> Option<(u32, u64)> {
    let mut base = 0;
    for &c in types {
        let n = counts(c);
        if v < base + n {
            let count = u64::from(v - base);
            let size = u64::from(c & 0xff);
            let len = if count * size > small::WIDE_MAX as u64 {
                LONGER
            } else {
                count * size
            };
            return Some((c, len));
        }
        base += n;
    }
    None
}

impl Call {
    fn broadcast(root: usize, len: usize) -> Call {
        Call {
            kind: BROADCAST,
            root: root as u32,
            len: len as u64,
        }
    }

    /// An allocation or a free (OpenSHMEM's, [`library_call`]). An allocation's root word: the
    /// heap kind (bits 0-1), zeroed (bit 2), log2 of the alignment (bits 3-8; bit 9 set when it
    /// is no power of two) and 12 bits of a fold of the alignment above (so any two alignments
    /// below absurd values differ); its length the size. A free's length: the block's code
    /// (heap kind above offset, `u64::MAX` for an address in no heap).
    fn library(c: &crate::instance::LibraryCall) -> Call {
        use crate::instance::LibraryCall;
        match c {
            LibraryCall::Alloc(r) => {
                let a = r.align;
                let log = if a.is_power_of_two() {
                    a.trailing_zeros()
                } else {
                    63
                };
                let fold = (a ^ a >> 12 ^ a >> 24 ^ a >> 36 ^ a >> 48) as u32 & 0xfff;
                Call {
                    kind: LIBRARY,
                    root: LIB_ALLOC
                        | (r.kind as u32 & 3)
                        | u32::from(r.zero) << 2
                        | log << 3
                        | u32::from(!a.is_power_of_two()) << 9
                        | fold << 10,
                    len: r.size,
                }
            }
            LibraryCall::Free(code) => Call {
                kind: LIBRARY,
                root: LIB_FREE,
                len: *code,
            },
            // the new size in the length, the block in the root (its offset in granules and its
            // heap, folded into 22 bits: exact for offsets below 64 MiB)
            LibraryCall::Resize(code, size) => {
                let v = (code & crate::instance::OFFSET_BITS) >> 4 ^ (code >> 62) << 20;
                Call {
                    kind: LIBRARY,
                    root: LIB_RESIZE | ((v ^ v >> 22 ^ v >> 44) & 0x3f_ffff) as u32,
                    len: *size,
                }
            }
        }
    }

    /// A team split ([`exchange_call`]; the members compare their arguments afterwards, naming
    /// each member's).
    pub(crate) fn split() -> Call {
        Call {
            kind: LIBRARY,
            root: LIB_SPLIT,
            len: 0,
        }
    }

    fn of(kind: u8, len: usize) -> Call {
        Call {
            kind,
            root: 0,
            len: len as u64,
        }
    }

    /// A strided all-to-all of `n` elements of `elem` bytes per block, at strides `dst` and
    /// `sst` (elements): the length word holds the count's low 32 bits and each stride's low 16;
    /// the root word the element size (5 bits), a bit for each value that does not fit there,
    /// and a 16-bit fold of their high parts, so members that differ in any of them (below
    /// absurd sizes) differ in the record, and a message names values that fit exactly.
    fn alltoalls(elem: usize, dst: isize, sst: isize, n: usize) -> Call {
        let n = n as u64;
        let wide = |v: isize| i16::try_from(v).is_err();
        let flags =
            u32::from(n > u64::from(u32::MAX)) | u32::from(wide(dst)) << 1 | u32::from(wide(sst)) << 2;
        let high = (n >> 32) ^ (dst as u64 >> 16).rotate_left(21) ^ (sst as u64 >> 16).rotate_left(42);
        let fold = (high ^ high >> 16 ^ high >> 32 ^ high >> 48) as u32 & 0xffff;
        Call {
            kind: ALLTOALLS,
            root: (elem as u32 & 0x1f) | flags << 5 | fold << 8,
            len: (n & 0xffff_ffff) | u64::from(dst as u16) << 32 | u64::from(sst as u16) << 48,
        }
    }

    fn reduce<T: Element>(op: Op, len: usize) -> Call {
        let k = OPS.iter().position(|(o, _)| *o == op).unwrap_or(0);
        Call {
            kind: REDUCE + k as u8,
            root: elem_code::<T>(),
            len: len as u64,
        }
    }

    /// The call in 16 bits, for the words of the leaders' pushed exchanges ([`hier`]): family,
    /// then length (saturated at 4095, exact for every pushed block and partial). A reduction's
    /// element type travels beside it there ([`Call::elem8`]).
    pub(crate) fn tag(&self) -> u16 {
        (u16::from(self.kind) << 12) | self.len.min(TAG_LEN) as u16
    }

    /// The call in 16 bits, for a ring publication ([`small`]): as [`Call::tag`] (exact for every
    /// ring payload; a broadcast's root travels separately, the record's view), except that a
    /// reduction's 12 bits name its element type and count (every length of a ring payload
    /// exactly, longer ones as one value per type), those of floating-point types under a family
    /// of their own with the operator. Rebuilt by [`Call::from_ring_tag`].
    pub(crate) fn ring_tag(&self) -> u16 {
        self.reduce_tag().unwrap_or_else(|| self.tag())
    }

    /// A reduction's element type in 8 bits (kind of number, size up to 16; 0 for other calls),
    /// for the pushed exchanges' words ([`hier`]).
    pub(crate) fn elem8(&self) -> u8 {
        if self.kind < REDUCE || usize::from(self.kind - REDUCE) >= OPS.len() {
            return 0;
        }
        ((self.root >> 8) << 5 | (self.root & 0x1f)) as u8
    }

    /// The element type code (as [`elem_code`]) of an [`Call::elem8`].
    pub(crate) fn elem_of8(e: u8) -> u32 {
        u32::from(e >> 5) << 8 | u32::from(e & 0x1f)
    }

    /// This call with the element type of an [`Call::elem8`] (for a message).
    pub(crate) fn with_elem8(mut self, e: u8) -> Call {
        if e != 0 {
            self.root = Call::elem_of8(e);
        }
        self
    }

    fn reduce_tag(&self) -> Option<u16> {
        let op = OPS.get(usize::from(self.kind.checked_sub(REDUCE)?))?.0;
        if let Some(v) = type_count(&INT_TYPES, self.root, self.len) {
            return Some((u16::from(self.kind) << 12) | v);
        }
        let o = FLOAT_OPS.iter().position(|&f| f == op)? as u32;
        let v = type_count(&FLOAT_TYPES, self.root, self.len)?;
        Some((u16::from(FLOAT_REDUCE) << 12) | ((o * total(&FLOAT_TYPES)) as u16 + v))
    }

    /// A reduction rebuilt from `tag`'s family `kind` and 12 bits `v` (None: not a reduction's).
    fn reduce_from_tag(kind: u8, v: u32) -> Option<Call> {
        let (kind, (root, len)) = if kind == FLOAT_REDUCE {
            let per = total(&FLOAT_TYPES);
            let op = FLOAT_OPS.get((v / per) as usize)?;
            let k = OPS.iter().position(|(o, _)| o == op)?;
            (REDUCE + k as u8, type_count_of(&FLOAT_TYPES, v % per)?)
        } else if kind >= REDUCE && usize::from(kind - REDUCE) < OPS.len() {
            (kind, type_count_of(&INT_TYPES, v)?)
        } else {
            return None;
        };
        Some(Call { kind, root, len })
    }

    /// The tag of this call's record in an agreement ([`agreed`], [`hier::agree_pushed`]): a
    /// family of its own, so a record never passes for a data publication of the same call (a
    /// saturated length would), then the call's family; the record itself holds the rest.
    pub(crate) fn agree_tag(&self) -> u16 {
        (u16::from(AGREE) << 12) | u16::from(self.kind)
    }

    pub(crate) fn from_tag(t: u16) -> Call {
        if (t >> 12) as u8 == AGREE {
            return Call {
                kind: (t & 0xff) as u8,
                root: u32::MAX,
                len: u64::MAX,
            };
        }
        Call {
            kind: (t >> 12) as u8,
            root: u32::MAX,
            len: u64::from(t) & TAG_LEN,
        }
    }

    /// The call of a [`Call::ring_tag`].
    pub(crate) fn from_ring_tag(t: u16) -> Call {
        if (t >> 12) as u8 != AGREE
            && let Some(c) = Call::reduce_from_tag((t >> 12) as u8, u32::from(t) & TAG_LEN as u32)
        {
            return c;
        }
        Call::from_tag(t)
    }

    /// The call's record in an agreement: its argument word, then (at 8) its length.
    pub(crate) fn record(&self) -> [u8; 16] {
        let mut rec = [0u8; 16];
        rec[..4].copy_from_slice(&self.arg().to_le_bytes());
        rec[8..].copy_from_slice(&self.len.to_le_bytes());
        rec
    }

    /// The argument word and length of a [`Call::record`], as call `call`'s [`sync::Said`].
    pub(crate) fn said_of(rec: &[u8], call: u64) -> sync::Said {
        let arg = rec.get(..4).and_then(|b| b.try_into().ok());
        let len = rec.get(8..16).and_then(|b| b.try_into().ok());
        sync::Said {
            call: call as u32,
            arg: arg.map(u32::from_le_bytes).unwrap_or_default(),
            len: len.map(u64::from_le_bytes).unwrap_or_default(),
        }
    }

    /// The family and root as [`sync::agreed`]'s argument word.
    fn arg(&self) -> u32 {
        (u32::from(self.kind) << 24) | (self.root & 0xff_ffff)
    }

    pub(crate) fn from_said(s: sync::Said) -> Call {
        Call {
            kind: (s.arg >> 24) as u8,
            root: s.arg & 0xff_ffff,
            len: s.len,
        }
    }

    /// The family's name ("fcollect", "reduction").
    fn family(&self) -> &'static str {
        match self.kind {
            BROADCAST => "broadcast",
            FCOLLECT => "fcollect",
            ALLTOALL => "alltoall",
            COLLECT => "collect",
            ALLTOALLS => "alltoalls",
            LIBRARY => "allocation, free or team split",
            _ => "reduction",
        }
    }

    pub(crate) fn is_broadcast(&self) -> bool {
        self.kind == BROADCAST
    }

    /// For an error message, the family alone: "a broadcast", "a sum reduction".
    pub(crate) fn family_name(&self) -> String {
        match self.kind {
            k if k >= REDUCE && usize::from(k - REDUCE) < OPS.len() => {
                format!("a {} reduction", OPS[usize::from(k - REDUCE)].1)
            }
            ALLTOALL => "an alltoall".to_string(),
            ALLTOALLS => "an alltoalls".to_string(),
            FCOLLECT => "an fcollect".to_string(),
            LIBRARY => "an allocation, free or team split".to_string(),
            _ => format!("a {}", self.family()),
        }
    }

    /// For an error message: "a broadcast of 64 bytes from root 1".
    pub(crate) fn name(&self) -> String {
        let len = if self.len == u64::MAX {
            // a record's tag: its length is in the record
            "another length".to_string()
        } else if self.len == TAG_LEN && self.root == u32::MAX {
            format!("{TAG_LEN} bytes or more")
        } else if self.len == LONGER {
            format!("more than {} bytes", small::WIDE_MAX)
        } else {
            format!("{} bytes", self.len)
        };
        match self.kind {
            BROADCAST if self.root == u32::MAX => format!("a broadcast of {len}"),
            BROADCAST => format!("a broadcast of {len} from root {}", self.root),
            FCOLLECT => format!("an fcollect of {len} per member"),
            ALLTOALL => format!("an alltoall of {len} per block"),
            COLLECT => "a collect".to_string(),
            ALLTOALLS if self.len == u64::MAX => "an alltoalls".to_string(),
            ALLTOALLS => {
                let (elem, flags) = (self.root & 0x1f, (self.root >> 5) & 7);
                let exact = |v: String, bit: u32| {
                    if flags & bit == 0 {
                        v
                    } else {
                        format!("{v} (low bits; more)")
                    }
                };
                format!(
                    "an alltoalls of {} elements of {elem} bytes per block, strides {} (dest) and {} (source)",
                    exact((self.len & 0xffff_ffff).to_string(), 1),
                    exact(((self.len >> 32) as u16 as i16).to_string(), 2),
                    exact(((self.len >> 48) as u16 as i16).to_string(), 4),
                )
            }
            k if k >= REDUCE && usize::from(k - REDUCE) < OPS.len() => {
                let op = OPS[usize::from(k - REDUCE)].1;
                match elem_name(self.root) {
                    Some(ty) => format!("a {op} reduction of {len} of {ty}"),
                    None => format!("a {op} reduction of {len}"),
                }
            }
            LIBRARY => self.library_name(),
            k if u32::from(k) << 24 == sync::BARRIER_ARG => {
                "a barrier (or sync) of the team instead".to_string()
            }
            _ => "no collective call the library knows (a barrier, or memory not written by a call)"
                .to_string(),
        }
    }
}

impl Call {
    /// [`Call::name`] of a [`LIBRARY`] call.
    fn library_name(&self) -> String {
        let heap = |k: u64| match k {
            0 => "host",
            1 => "device",
            _ => "program data",
        };
        if self.root == u32::MAX {
            return "an allocation, free or team split".to_string();
        }
        match self.root & (3 << 22) {
            LIB_ALLOC => {
                let align = if self.root >> 9 & 1 == 0 {
                    format!("align {}", 1u64 << (self.root >> 3 & 63))
                } else {
                    "an alignment that is no power of two".to_string()
                };
                let zeroed = if self.root >> 2 & 1 == 1 { ", zeroed" } else { "" };
                format!(
                    "an allocation of {} bytes ({align}{zeroed}, {} heap)",
                    self.len,
                    heap(u64::from(self.root & 3))
                )
            }
            LIB_FREE if self.len == u64::MAX => "a free of an address in no symmetric heap".to_string(),
            LIB_FREE => format!(
                "a free of the block at offset {:#x} of the {} heap",
                self.len & crate::instance::OFFSET_BITS,
                heap(self.len >> 62)
            ),
            LIB_SPLIT => "a team split".to_string(),
            LIB_RESIZE => format!("a resize (realloc) to {} bytes", self.len),
            _ => "a call of the library".to_string(),
        }
    }
}

/// The collective allocation's agreement as a numbered collective call on the world team
/// ([`library_call`]): a few microseconds on one node, where a round through the
/// config store takes 30 to 140 (Open MPI's OSHMEM allocates in about 1). The PEs compare their
/// calls before any of them allocates, as in any collective call, so a PE that made another
/// collective call, or waits in a barrier of the program instead, fails the call on every PE that
/// made it (and the one in the barrier counts it as made and failed, as for any collective call)
/// rather than meeting its barriers: no PE ends up with a block the others lack. A PE that never
/// joins is waited for as in any barrier (`ACLSHMEM_COLLECTIVE_TIMEOUT`; one that died or left is
/// named). OpenSHMEM's `shmem_malloc` and `shmem_free`: collective with an implicit barrier, as the
/// specification describes them. (The aclshmem API's is `sync::BootstrapAgreement`.)
pub struct WorldAgreement;

impl crate::instance::Agreement for WorldAgreement {
    fn agree(&self, inst: &Instance, call: &crate::instance::LibraryCall) -> Result<()> {
        library_call(inst, &inst.world_team(), call)
    }
    fn barrier(&self, inst: &Instance) -> Result<()> {
        sync::barrier(inst, &inst.world_team())
    }
}

/// A barrier (or sync) the program called on `team` ([`sync::program_barrier`]). Every member
/// mapped: a root of broadcasts on the rings since its last such barrier (which waited for none of
/// its readers) tells the others the last one's number before it arrives, and a member whose
/// calls end before it when the barrier ends waited in the barrier instead of those broadcasts: it
/// counts them as made and failed ([`small::took_up`]; it was left a call behind, and its next
/// broadcast of that length and root returned the missed one's data).
pub fn program_barrier(inst: &Instance, team: &Team) -> Result<()> {
    if team.size > 1 && inst.all_direct() {
        let barrier = inst.team_cells().next_barrier(team.slot);
        small::tell_broadcasts(inst, team, barrier);
        let before = inst.team_cells().seq(team.slot);
        let r = sync::program_barrier(inst, team);
        return small::took_up(inst, team, barrier, before, r);
    }
    sync::program_barrier(inst, team)
}

/// Barrier over the team of `handle`; `ACLSHMEM_TEAM_INVALID` is a no-op (as in the original).
pub fn team_barrier(inst: &Instance, handle: i32) -> Result<()> {
    if handle == aclshmem_abi::ACLSHMEM_TEAM_INVALID {
        return Ok(());
    }
    program_barrier(inst, &inst.team(handle)?)
}

/// Barrier over all PEs of `inst`.
pub fn barrier_all(inst: &Instance) -> Result<()> {
    program_barrier(inst, &inst.team(0)?)
}

/// The library's own collective call `c` (OpenSHMEM's allocation or free) on `t`, numbered and
/// agreed as every collective call is ([`agreed`]): it returns once every member made the same
/// one; a member that made another call, or waits in a barrier of the program instead, fails it
/// on every member that made it, before anything is allocated or freed anywhere.
pub(crate) fn library_call(inst: &Instance, t: &Team, c: &crate::instance::LibraryCall) -> Result<()> {
    if t.size == 1 {
        return Ok(());
    }
    let seq = small::next_seq(inst, t);
    agreed(inst, t, seq, Call::library(c), |_| Ok(()))
}

/// The library's own collective call `call` on `t` that exchanges `data` (the same length on every
/// member, at most the team's exchange area): every member's, in team order, read once every
/// member is known to make the same call ([`agreed`]; see [`library_call`]).
pub(crate) fn exchange_call(inst: &Instance, t: &Team, call: Call, data: &[u8]) -> Result<Vec<Vec<u8>>> {
    if t.size == 1 {
        return Ok(vec![data.to_vec()]);
    }
    let seq = small::next_seq(inst, t);
    if !inst.all_direct() {
        // the leaders' pushed exchanges of the agreement write where the data go (the partials
        // area): agreed first, then exchanged between barriers every member enters
        agreed(inst, t, seq, call, |_| Ok(()))?;
        return sync::exchange(inst, t, data);
    }
    // (placed before the agreement, whose records go through the rings: every member finished
    // reading the area in its last use, which ended with every member's completion)
    sync::place_exchanged(inst, t, data)?;
    let mut out = Vec::new();
    agreed(inst, t, seq, call, |_| {
        out = sync::read_exchanged(inst, t, data.len())?;
        Ok(())
    })?;
    Ok(out)
}

/// Runs `body`, which moves the data of call `seq` (`call` on this PE), once every member is known
/// to make the same call, then a closing barrier (nobody reuses a buffer another member still
/// reads or writes). `body` compares a member's call before it touches that member's buffers
/// ([`sync::Members`]; no-ops where every call was compared already).
///
/// Every member's heap mapped here: every member publishes its call (tag, argument word, length)
/// in its narrow ring as call `seq` and reads every other member's, which replaces the opening
/// barrier (each member's flag is read with Acquire, so what the member wrote before is visible)
/// and compares every pair of calls: either every member finds a difference and fails with
/// `ACLSHMEM_INVALID_PARAM` before any data moves and before the closing barrier, or none does. A
/// member that made the call on the barrier-free path (a length that fits the rings) is found by
/// the same records ([`small::wait_published`]), so nobody waits for ever in a barrier the others
/// never enter. Across nodes with one member per node: the same through a pushed exchange of the
/// calls between the members ([`hier::agree_pushed`]; the direct pushes of fcollect and alltoall
/// agree the same way, so members whose lengths put them on different paths find each other by the
/// exchange's tags). Several members per node: they meet on their node and their leaders
/// compare and exchange the calls ([`hier::agree_nodes`]), so a leader of another family meets
/// this call's leaders in an exchange, never in a barrier it does not enter. Otherwise (one node
/// with peers reached through a transport, or leaders' entries too small): [`sync::agreed`].
fn agreed<'a>(
    inst: &'a Instance,
    t: &'a Team,
    seq: u64,
    call: Call,
    body: impl FnOnce(&sync::Members<'_, dyn Fn(sync::Said, usize) -> String + 'a>) -> Result<()>,
) -> Result<()> {
    let describe = move |theirs: sync::Said, pe: usize| differ(inst, t, seq, call, theirs, pe);
    let describe: &(dyn Fn(sync::Said, usize) -> String + 'a) = &describe;
    if t.size > 1 && inst.all_direct() {
        let rec = call.record();
        let (ring, tag) = (small::Ring::Narrow, call.agree_tag());
        small::publish(inst, t, ring, seq, &rec, 0, tag)?;
        if call.kind == BROADCAST {
            // the root that took the rings (another length) finds this member's view of the call;
            // under the agreement's tag, which the other members of this agreement compare with
            // their own when their wait lasts (`small::elsewhere`; the broadcast's own tag there
            // failed well-formed calls: 7 PEs, push)
            small::note_view(inst, t, ring, seq, (call.root + 1) as u16, tag)?;
        }
        for i in (0..t.size).filter(|&i| i != t.my_index) {
            let mut theirs = [0u8; 16];
            small::read(inst, t, ring, i, seq, 0, tag, 0, &mut theirs)?;
            if theirs != rec {
                small::complete(inst, t, seq)?;
                return Err(Error::InvalidParam(describe(
                    Call::said_of(&theirs, seq),
                    t.world_pe(i),
                )));
            }
        }
        // the call ends when every member completed it (its reads and writes of the others'
        // buffers done): two members meet in their pairwise barrier; more complete the call in
        // their done words and read the others' (one store each, where the central barrier's
        // shared counter moves between every member's core: 4 PEs, 4 KiB alltoall 4.1 -> 3.9 us)
        let r = body(&sync::Members::compared(inst, t, describe));
        small::complete(inst, t, seq)?;
        if t.size == 2 {
            sync::barrier(inst, t)?;
        } else {
            small::wait_all_completed(inst, t, seq)?;
        }
        return r;
    }
    if t.size > 1 && inst.hierarchical() {
        let g = sync::groups(inst, t);
        if g.leaders.len() == t.size && hier::eager_fits(t.slot, t.size, 16) {
            hier::agree_pushed(inst, t, &g, call)?;
            let r = body(&sync::Members::compared(inst, t, describe));
            sync::barrier(inst, t)?;
            return r;
        }
        if hier::eager_fits(t.slot, g.leaders.len(), 16) {
            // several members on a node: they meet there, their leaders compare and exchange
            // the calls (no opening barrier, which another family's exchanges would never meet)
            hier::agree_nodes(inst, t, &g, seq, call)?;
            let r = body(&sync::Members::compared(inst, t, describe));
            sync::barrier(inst, t)?;
            return r;
        }
    }
    sync::agreed(inst, t, seq, call.arg(), call.len, describe, body)
}

/// The error of a member found making call `seq` as `theirs` where this PE made `mine`.
fn differ(inst: &Instance, t: &Team, seq: u64, mine: Call, theirs: sync::Said, pe: usize) -> String {
    let other = if theirs.call == seq as u32 {
        Call::from_said(theirs).name()
    } else {
        format!("another call (its call {} on the team)", theirs.call)
    };
    mismatch(
        inst,
        t,
        &format!("collective call {seq}"),
        &mine,
        &format!("PE {pe}"),
        &other,
    )
}

/// The message of an asymmetric call: `what` ("collective call 7", "fcollect") on `t`, where this
/// PE made `mine` and `who` ("PE 3") made `theirs`.
fn mismatch(inst: &Instance, t: &Team, what: &str, mine: &Call, who: &str, theirs: &str) -> String {
    format!(
        "asymmetric {what} on team {}: every member must make the same call; this PE (PE {}) made {}, \
         {who} made {theirs}",
        crate::team_table::TeamName(t.slot),
        inst.my_pe(),
        mine.name()
    )
}

/// A checked symmetric buffer: which heap, and the offset in it.
#[derive(Clone, Copy)]
struct Sym<'a> {
    heap: &'a crate::heap::SymmetricHeap,
    off: usize,
}

impl Sym<'_> {
    /// This buffer in this PE's own copy.
    fn mine(&self) -> *mut u8 {
        self.heap.local_addr(self.off)
    }

    /// Byte `at` of this buffer in world PE `pe`'s copy.
    fn remote(&self, pe: usize, at: usize) -> Remote<'_> {
        Remote {
            heap: self.heap,
            off: self.off + at,
            pe,
        }
    }

    /// Copies `len` bytes from byte `at` of world PE `pe`'s copy to local `dst`: inline when the
    /// copy is mapped for direct access, else through `pe`'s transport.
    ///
    /// # Safety
    /// `dst` must be writable for `len` bytes and not overlap the source; `at + len` lies within
    /// the checked buffer.
    unsafe fn read(&self, inst: &Instance, pe: usize, at: usize, dst: *mut u8, len: usize) -> Result<()> {
        let r = self.remote(pe, at);
        match r.direct() {
            // SAFETY: forwarded; the source lies in the peer's mapped copy.
            Some(p) => unsafe { copy(p, dst, len) },
            // SAFETY: forwarded.
            None => unsafe { inst.routes().to(pe)?.get(r, dst, len)? },
        }
        Ok(())
    }

    /// Copies `len` bytes from local `src` to byte `at` of world PE `pe`'s copy.
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes and not overlap the destination; `at + len` lies
    /// within the checked buffer.
    unsafe fn write(&self, inst: &Instance, pe: usize, at: usize, src: *const u8, len: usize) -> Result<()> {
        let r = self.remote(pe, at);
        match r.direct() {
            // SAFETY: forwarded; the destination lies in the peer's mapped copy.
            Some(p) => unsafe { copy(src, p, len) },
            // SAFETY: forwarded.
            None => unsafe { inst.routes().to(pe)?.put(r, src, len)? },
        }
        Ok(())
    }
}

/// (Inlined: its result then stays in registers; see `Instance::team` for why that matters.)
#[inline(always)]
fn sym<'a>(inst: &'a Instance, addr: usize, len: usize, what: &str, align: usize) -> Result<Sym<'a>> {
    if addr == 0 && len == 0 {
        // a collective of no data may name no buffer (as an RMA of no data may): nothing is read
        // or written through it
        return Ok(Sym {
            heap: inst.device(),
            off: 0,
        });
    }
    if addr == 0 {
        return Err(Error::InvalidParam(format!("{what} is NULL")));
    }
    if !addr.is_multiple_of(align) {
        return Err(Error::InvalidParam(format!(
            "{what} {addr:#x} is not aligned to {align} bytes"
        )));
    }
    let (heap, off) = inst
        .locate(addr, len.max(1))
        .ok_or_else(|| Error::InvalidParam(inst.not_symmetric(what, addr, len.max(1))))?;
    Ok(Sym { heap, off })
}

fn overlap(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    alen > 0 && blen > 0 && a < b + blen && b < a + alen
}

fn no_overlap(dest: usize, dlen: usize, src: usize, slen: usize) -> Result<()> {
    if overlap(dest, dlen, src, slen) {
        return Err(Error::InvalidParam("dest and source overlap".into()));
    }
    Ok(())
}

/// The team of `handle` (this PE must be a member).
pub fn team(inst: &Instance, handle: i32) -> Result<Team> {
    inst.team(handle)
}

/// Copies `len` bytes between two checked addresses.
///
/// # Safety
/// Both ranges must be valid and not overlap.
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: forwarded.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

/// Broadcast of `len` bytes from member `root`'s `source` to every member's `dest` (root included).
pub fn broadcast(inst: &Instance, t: &Team, dest: usize, source: usize, len: usize, root: i32) -> Result<()> {
    broadcast_impl(inst, t, dest, source, len, root, true)
}

/// [`broadcast`] that leaves the root's `dest` alone (OpenSHMEM's deprecated active-set form).
pub fn broadcast_to_others(
    inst: &Instance,
    t: &Team,
    dest: usize,
    source: usize,
    len: usize,
    root: i32,
) -> Result<()> {
    broadcast_impl(inst, t, dest, source, len, root, false)
}

fn broadcast_impl(
    inst: &Instance,
    t: &Team,
    dest: usize,
    source: usize,
    len: usize,
    root: i32,
    root_dest: bool,
) -> Result<()> {
    if root < 0 || root as usize >= t.size {
        return Err(Error::InvalidParam(format!(
            "PE_root {root} is not a member index of a team of {}",
            t.size
        )));
    }
    let d = sym(inst, dest, len, "dest", 1)?;
    let s = sym(inst, source, len, "source", 1)?;
    // in place (dest == source, as OpenSHMEM allows): the root's dest already holds the data, and
    // only the root's source is ever read; buffers that overlap otherwise are an error
    let root_dest = root_dest && dest != source;
    if dest != source {
        no_overlap(dest, len, source, len)?;
    }
    let root_pe = t.world_pe(root as usize);
    // what every member records of this call, to find members that named another root
    let view = (root + 1) as u16;
    let call = Call::broadcast(root as usize, len);
    if let Some(ring) = small::ring_for(t, len)
        && t.size > 1
        && inst.all_direct()
    {
        let seq = small::next_seq(inst, t);
        // SAFETY: checked symmetric buffers of `len` bytes in our own mapped heap.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(s.mine(), len),
                std::slice::from_raw_parts_mut(d.mine(), len),
            )
        };
        if t.my_index == root as usize {
            small::publish(inst, t, ring, seq, src, view, call.ring_tag())?;
            if root_dest {
                dst.copy_from_slice(src);
            }
        } else {
            small::read(inst, t, ring, root as usize, seq, view, call.ring_tag(), 0, dst)?;
        }
        return small::complete(inst, t, seq);
    }
    if inst.algos().broadcast == Move::Pull && t.size > 1 && inst.all_direct() {
        // one round trip instead of two barriers: the root announces its source, the members copy
        // it straight from the root's heap and complete the call, the root returns once all did
        // the root publishes its length (the tag holds lengths this large only saturated)
        let seq = small::next_seq(inst, t);
        let said = (len as u64).to_le_bytes();
        if t.my_index == root as usize {
            small::publish(inst, t, small::Ring::Narrow, seq, &said, view, call.ring_tag())?;
            if root_dest {
                // SAFETY: checked symmetric, non-overlapping buffers of `len` bytes in our own heap.
                unsafe { copy(s.mine(), d.mine(), len) };
            }
            // the root reads nothing of the call: complete, as every call does before it returns
            // (a member waiting for this PE's completion looks for it in a barrier otherwise)
            small::complete(inst, t, seq)?;
            return small::wait_all_completed(inst, t, seq);
        }
        let p = small::wait_published(
            inst,
            t,
            small::Ring::Narrow,
            root as usize,
            seq,
            view,
            call.ring_tag(),
        )?;
        let mut theirs = [0u8; 8];
        // SAFETY: the root's published buffer holds its 8-byte length, unchanged until we complete.
        unsafe { copy(p, theirs.as_mut_ptr(), 8) };
        if theirs != said {
            small::complete(inst, t, seq)?;
            return Err(Error::InvalidParam(format!(
                "asymmetric broadcast on team {} (call {seq}): every member must pass the same length; \
                 this PE (PE {}) passed {len} bytes, the root (PE {root_pe}) {}",
                crate::team_table::TeamName(t.slot),
                inst.my_pe(),
                u64::from_le_bytes(theirs)
            )));
        }
        // SAFETY: the root's checked source (symmetric) stays unchanged until we complete the call.
        unsafe { s.read(inst, root_pe, 0, d.mine(), len)? };
        return small::complete(inst, t, seq);
    }
    if inst.hierarchical() && inst.algos().broadcast == Move::Pull && t.size > 1 {
        // across nodes: shared memory inside each node, one leader per node over the transports
        // (with one member per node and large data, measured slower than the flat path below)
        let g = sync::groups(inst, t);
        let mail = || {
            (0..t.size)
                .filter(|&j| j != t.my_index)
                .all(|j| inst.routes().to(t.world_pe(j)).is_ok_and(|to| to.has_mail()))
        };
        if eager::fits(t, &g, len, mail) {
            // one member per node, small data: the root pushes and returns (no barrier)
            small::next_seq(inst, t);
            return eager::broadcast(inst, t, d, s, len, root as usize, root_dest);
        }
        if len <= hier::PULL_ABOVE || t.size > g.leaders.len() {
            let seq = small::next_seq(inst, t);
            return hier::broadcast(inst, t, &g, d, s, len, root as usize, root_dest, seq);
        }
    }
    let seq = small::next_seq(inst, t);
    agreed(inst, t, seq, call, |m| {
        if len == 0 {
            return Ok(());
        }
        match inst.algos().broadcast {
            // the root of a broadcast that leaves its own dest alone has nothing to copy
            Move::Pull if !root_dest && t.my_index == root as usize => Ok(()),
            Move::Pull => {
                m.before_read(root as usize)?;
                // SAFETY: addresses come from checked symmetric buffers of `len` bytes in mapped
                // heaps (the root's as long as ours: checked); source and dest do not overlap.
                unsafe { s.read(inst, root_pe, 0, d.mine(), len) }
            }
            Move::Push => {
                if t.my_index == root as usize {
                    for i in (0..t.size).filter(|&i| root_dest || i != root as usize) {
                        m.before_write(i)?;
                        // SAFETY: as above.
                        unsafe { d.write(inst, t.world_pe(i), 0, s.mine(), len)? };
                    }
                }
                Ok(())
            }
        }
    })
}

/// OpenSHMEM's strided all-to-all on `t` (`n` elements of `elem` bytes per block, strides `dst`
/// and `sst` in elements): `body` moves the data (the caller's strided gets from every member)
/// once every member is known to make the same call with the same arguments, then the call ends
/// when every member has (the team's agreement, as for [`alltoall`]). A member that named another
/// count, stride or element size, or made another collective call, fails the call on every
/// member with `ACLSHMEM_INVALID_PARAM` naming both calls, before `body` runs on any member that
/// found it (where the members are compared with member 0 only, through a transport, the others'
/// `body` may have read by their own arguments: only their own `dest` is written).
pub fn alltoalls(
    inst: &Instance,
    t: &Team,
    elem: usize,
    strides: (isize, isize),
    n: usize,
    body: impl FnOnce() -> Result<()>,
) -> Result<()> {
    if t.size == 1 {
        return body();
    }
    let seq = small::next_seq(inst, t);
    let call = Call::alltoalls(elem, strides.0, strides.1, n);
    agreed(inst, t, seq, call, |_| body())
}

/// Concatenation of every member's `source` (`len` bytes each, equal everywhere) in `dest`.
pub fn fcollect(inst: &Instance, t: &Team, dest: usize, source: usize, len: usize) -> Result<()> {
    let total = len
        .checked_mul(t.size)
        .ok_or_else(|| Error::InvalidValue("size overflows".into()))?;
    if let Some(ring) = small::ring_for(t, len)
        && t.size > 1
        && inst.all_direct()
    {
        let d = sym(inst, dest, total, "dest", 1)?;
        let s = sym(inst, source, len, "source", 1)?;
        no_overlap(dest, total, source, len)?;
        let seq = small::next_seq(inst, t);
        // SAFETY: checked symmetric buffers in our own mapped heap (dest holds `total` bytes).
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(s.mine(), len),
                std::slice::from_raw_parts_mut(d.mine(), total),
            )
        };
        let tag = Call::of(FCOLLECT, len).ring_tag();
        small::publish(inst, t, ring, seq, src, 0, tag)?;
        for i in 0..t.size {
            let block = &mut dst[i * len..(i + 1) * len];
            if i == t.my_index {
                block.copy_from_slice(src);
            } else {
                small::read(inst, t, ring, i, seq, 0, tag, 0, block)?;
            }
        }
        return small::complete(inst, t, seq);
    }
    if inst.hierarchical() && t.size > 1 && len > 0 {
        // one member per node, small blocks: every member pushes its block to every other (one
        // one-way message instead of the gather's barriers and reads)
        let g = sync::groups(inst, t);
        if g.leaders.len() == t.size && hier::eager_fits(t.slot, t.size, len) {
            let d = sym(inst, dest, total, "dest", 1)?;
            let s = sym(inst, source, len, "source", 1)?;
            no_overlap(dest, total, source, len)?;
            return hier::fcollect_pushed(inst, t, &g, d, s, len);
        }
        if hier::direct_fits(t, &g, len) {
            // larger blocks: a barrier (every member is in the call), then each block straight
            // into every other member's dest with the word that announces it
            let d = sym(inst, dest, total, "dest", 1)?;
            let s = sym(inst, source, len, "source", 1)?;
            no_overlap(dest, total, source, len)?;
            small::next_seq(inst, t);
            hier::agree_pushed(inst, t, &g, Call::of(FCOLLECT, len))?;
            // SAFETY: our own checked source of `len` bytes.
            let mine = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, len) };
            let at = t.my_index * len;
            return hier::push_direct(inst, t, &g, d, |_| (at, mine), "fcollect");
        }
    }
    let offsets: Vec<usize> = (0..t.size).map(|i| i * len).collect();
    let call = Call::of(FCOLLECT, len);
    gather(
        inst,
        t,
        call,
        dest,
        source,
        len,
        total,
        &offsets,
        &vec![len; t.size],
    )
}

/// Concatenation of every member's `source` (`len` bytes here, may differ per member) in `dest`.
pub fn collect(inst: &Instance, t: &Team, dest: usize, source: usize, len: usize) -> Result<()> {
    if t.size > 1 && inst.all_direct() {
        return collect_small(inst, t, dest, source, len);
    }
    let mut known = None;
    if inst.hierarchical() && t.size > 1 {
        // one member per node: one pushed exchange carries every length and, if it fits, the
        // data (as collect_small does on one node)
        let g = sync::groups(inst, t);
        if g.leaders.len() == t.size && hier::eager_fits(t.slot, t.size, 8) {
            match hier::collect_pushed(inst, t, &g, dest, source, len)? {
                None => return Ok(()),
                Some(lens) if hier::direct_fits(t, &g, lens.iter().copied().max().unwrap_or(0)) => {
                    // every member is in the call (we have its length): each block straight
                    // into every other member's dest, no barrier
                    let (offsets, total) = placement(&lens)?;
                    let d = sym(inst, dest, total, "dest", 1)?;
                    let s = sym(inst, source, len, "source", 1)?;
                    no_overlap(dest, total, source, len)?;
                    // SAFETY: our own checked source of `len` bytes.
                    let mine = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, len) };
                    let at = offsets[t.my_index];
                    return hier::push_direct(inst, t, &g, d, |_| (at, mine), "collect");
                }
                Some(lens) => known = Some(lens),
            }
        } else if hier::eager_fits(t.slot, g.leaders.len(), 16) {
            // several members on a node: the call is agreed before the lengths' exchange, whose
            // barriers a member of another family would never enter
            let seq = small::next_seq(inst, t);
            hier::agree_nodes(inst, t, &g, seq, Call::of(COLLECT, 0))?;
        }
    }
    let lens: Vec<usize> = match known {
        Some(lens) => lens,
        None => {
            let mine = (len as u64).to_le_bytes();
            let all = if inst.hierarchical() {
                // (agreed above)
                sync::exchange(inst, t, &mine)?
            } else {
                // the lengths' exchange is the call's agreement: a member making another
                // collective call fails this one instead of meeting its barriers
                let seq = small::next_seq(inst, t);
                let call = Call::of(COLLECT, 0);
                let describe = |theirs: sync::Said, pe: usize| differ(inst, t, seq, call, theirs, pe);
                sync::exchange_agreed(inst, t, seq, call.arg(), 0, &mine, &describe)?
            };
            all.iter()
                .map(|b| u64::from_le_bytes(b.as_slice().try_into().unwrap_or_default()) as usize)
                .collect()
        }
    };
    let (offsets, total) = placement(&lens)?;
    gather(
        inst,
        t,
        Call::of(COLLECT, 0),
        dest,
        source,
        len,
        total,
        &offsets,
        &lens,
    )
}

/// Where each member's block of a collect starts in `dest`, and the total size.
fn placement(lens: &[usize]) -> Result<(Vec<usize>, usize)> {
    let mut offsets = Vec::with_capacity(lens.len());
    let mut total = 0usize;
    for l in lens {
        offsets.push(total);
        total = total
            .checked_add(*l)
            .ok_or_else(|| Error::InvalidValue("collect sizes overflow".into()))?;
    }
    Ok((offsets, total))
}

/// [`collect`] among directly addressable members: one barrier-free round of [`small`] carries
/// every member's length and, when it fits the ring's buffer after the length, its data. If every
/// member's data came along, `dest` is filled from it; otherwise the lengths read replace the
/// exchange and [`gather`] moves the data (every member read the same publications, so all take
/// the same branch).
fn collect_small(inst: &Instance, t: &Team, dest: usize, source: usize, len: usize) -> Result<()> {
    let s = sym(inst, source, len, "source", 1)?;
    let ring = small::widest_ring(t);
    let room = small::ring_capacity(ring) - 8;
    let seq = small::next_seq(inst, t);
    // SAFETY: our checked symmetric source of `len` bytes.
    let mine = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, len) };
    let mut payload = (len as u64).to_le_bytes().to_vec();
    if len <= room {
        payload.extend_from_slice(mine);
    }
    let tag = Call::of(COLLECT, 0).ring_tag();
    small::publish(inst, t, ring, seq, &payload, 0, tag)?;
    let mut lens = vec![0usize; t.size];
    let mut data: Vec<u8> = Vec::new();
    let mut all_fit = true;
    for (i, l) in lens.iter_mut().enumerate() {
        if i == t.my_index {
            *l = len;
            all_fit &= len <= room;
            if all_fit {
                data.extend_from_slice(mine);
            }
            continue;
        }
        let p = small::wait_published(inst, t, ring, i, seq, 0, tag)?;
        let mut word = [0u8; 8];
        // SAFETY: member i's published buffer starts with its 8-byte length and is not rewritten
        // before we complete the call.
        unsafe { copy(p, word.as_mut_ptr(), 8) };
        *l = usize::try_from(u64::from_le_bytes(word)).unwrap_or(usize::MAX);
        all_fit &= *l <= room;
        if all_fit {
            // SAFETY: as above; a length of at most `room` means its data follows it.
            data.extend_from_slice(unsafe { std::slice::from_raw_parts(p.add(8), *l) });
        }
    }
    small::complete(inst, t, seq)?;
    let (offsets, total) = placement(&lens)?;
    if !all_fit {
        return gather(
            inst,
            t,
            Call::of(COLLECT, 0),
            dest,
            source,
            len,
            total,
            &offsets,
            &lens,
        );
    }
    let d = sym(inst, dest, total, "dest", 1)?;
    no_overlap(dest, total, source, len)?;
    // SAFETY: our checked dest of `total` bytes = data.len() (every member's data, in order).
    unsafe { copy(data.as_ptr(), d.mine(), total) };
    Ok(())
}

/// The barrier path of fcollect and collect: member i's `lens[i]` bytes go to `offsets[i]` of
/// every member's `dest` (`total` bytes), once every member is known to make `call` ([`agreed`]).
#[allow(clippy::too_many_arguments)]
fn gather(
    inst: &Instance,
    t: &Team,
    call: Call,
    dest: usize,
    source: usize,
    len: usize,
    total: usize,
    offsets: &[usize],
    lens: &[usize],
) -> Result<()> {
    let d = sym(inst, dest, total, "dest", 1)?;
    let s = sym(inst, source, len, "source", 1)?;
    no_overlap(dest, total, source, len)?;
    let seq = small::next_seq(inst, t);
    // a member that contributes nothing may pass any source, NULL included: the readers could
    // not find the others' sources from its address, so such a call pushes (every member knows
    // every length: the same choice everywhere)
    let how = if lens.contains(&0) {
        Move::Push
    } else {
        inst.algos().collect
    };
    agreed(inst, t, seq, call, |m| {
        match how {
            Move::Pull => {
                for i in 0..t.size {
                    if lens[i] > 0 {
                        m.before_read(i)?;
                        // SAFETY: member i's source holds lens[i] bytes; our dest holds `total`
                        // bytes, of which [offsets[i], offsets[i] + lens[i]) belongs to member i.
                        unsafe { s.read(inst, t.world_pe(i), 0, d.mine().add(offsets[i]), lens[i])? };
                    }
                }
            }
            Move::Push => {
                if len > 0 {
                    for i in 0..t.size {
                        m.before_write(i)?;
                        // SAFETY: as above, with our part written into member i's dest.
                        unsafe { d.write(inst, t.world_pe(i), offsets[t.my_index], s.mine(), len)? };
                    }
                }
            }
        }
        Ok(())
    })
}

/// Block j of member i's `source` (`len` bytes per block) goes to block i of member j's `dest`.
pub fn alltoall(inst: &Instance, t: &Team, dest: usize, source: usize, len: usize) -> Result<()> {
    let total = len
        .checked_mul(t.size)
        .ok_or_else(|| Error::InvalidValue("size overflows".into()))?;
    let d = sym(inst, dest, total, "dest", 1)?;
    let s = sym(inst, source, total, "source", 1)?;
    no_overlap(dest, total, source, total)?;
    if let Some(ring) = small::ring_for(t, total)
        && t.size > 1
        && inst.all_direct()
    {
        let seq = small::next_seq(inst, t);
        // SAFETY: checked symmetric buffers of `total` bytes in our own mapped heap.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(s.mine(), total),
                std::slice::from_raw_parts_mut(d.mine(), total),
            )
        };
        let tag = Call::of(ALLTOALL, len).ring_tag();
        small::publish(inst, t, ring, seq, src, 0, tag)?;
        let me = t.my_index;
        for i in 0..t.size {
            let block = &mut dst[i * len..(i + 1) * len];
            if i == me {
                block.copy_from_slice(&src[me * len..(me + 1) * len]);
            } else {
                small::read(inst, t, ring, i, seq, 0, tag, me * len, block)?;
            }
        }
        return small::complete(inst, t, seq);
    }
    if inst.hierarchical() && t.size > 1 && len > 0 {
        // one member per node, small blocks: one pushed exchange (as fcollect's)
        let g = sync::groups(inst, t);
        if g.leaders.len() == t.size && hier::eager_fits(t.slot, t.size, len) {
            return hier::alltoall_pushed(inst, t, &g, d, s, len);
        }
        if hier::direct_fits(t, &g, len) {
            // larger blocks: as fcollect's, each member's block for member i into i's dest
            small::next_seq(inst, t);
            hier::agree_pushed(inst, t, &g, Call::of(ALLTOALL, len))?;
            // SAFETY: our own checked source of t.size * len bytes.
            let src = unsafe { std::slice::from_raw_parts(s.mine() as *const u8, total) };
            let at = t.my_index * len;
            return hier::push_direct(inst, t, &g, d, |i| (at, &src[i * len..(i + 1) * len]), "alltoall");
        }
    }
    let seq = small::next_seq(inst, t);
    let call = Call::of(ALLTOALL, len);
    agreed(inst, t, seq, call, |m| {
        if len > 0 {
            let me = t.my_index;
            for k in 0..t.size {
                // start with the next member so not everyone reads the same PE at once
                let i = (me + k) % t.size;
                match inst.algos().alltoall {
                    Move::Pull => m.before_read(i)?,
                    Move::Push => m.before_write(i)?,
                }
                match inst.algos().alltoall {
                    // SAFETY: blocks of `len` bytes inside checked buffers of `total` (member i's
                    // as large: checked).
                    Move::Pull => unsafe {
                        s.read(inst, t.world_pe(i), me * len, d.mine().add(i * len), len)?
                    },
                    // SAFETY: as above.
                    Move::Push => unsafe {
                        d.write(inst, t.world_pe(i), me * len, s.mine().add(i * len), len)?
                    },
                }
            }
        }
        Ok(())
    })
}

/// The small reduction's accumulator: a ring payload's size, aligned for every element type
/// (`long double` and the complex types need 16).
#[repr(C, align(16))]
struct Scratch([std::mem::MaybeUninit<u8>; small::WIDE_MAX]);

/// The reductions' temporary vectors (the flat paths' accumulator and fetched parts, the node
/// leaders' partials: [`hier`]), reused by the next call of this thread: a fresh allocation of a
/// few MiB per call costs a page fault per page (2 nodes, 1 MiB int64 sum: 1.9 ms per call
/// against 1.0 ms with glibc keeping freed memory mapped), and so do smaller ones once glibc
/// gives the freed top of its heap back to the system (past 128 KiB: 2 nodes, leaders' mailed
/// partials of 48 / 64 KiB, five vectors per call, 81 / 173 µs against 46 / 66 with glibc told
/// not to trim). Buffers above [`Buffers::KEEP`] bytes are freed after the call (so a thread keeps
/// at most 64 MiB, and only after reductions that large).
struct Buffers([Vec<u128>; 4]);

thread_local! {
    static BUFFERS: std::cell::RefCell<[Vec<u128>; 4]> = const {
        std::cell::RefCell::new([Vec::new(), Vec::new(), Vec::new(), Vec::new()])
    };
}

impl Buffers {
    const KEEP: usize = 16 << 20;

    fn take() -> Self {
        Buffers(BUFFERS.with(|s| std::mem::take(&mut *s.borrow_mut())))
    }

    /// The first two buffers.
    fn split(&mut self) -> (&mut Vec<u128>, &mut Vec<u128>) {
        let [a, b, ..] = &mut self.0;
        (a, b)
    }

    /// All four.
    fn all(&mut self) -> &mut [Vec<u128>; 4] {
        &mut self.0
    }

    /// Gives the buffers back to this thread (a failed call drops them instead: a transfer that
    /// failed may not have let go of them).
    fn keep(mut self) {
        for v in &mut self.0 {
            if v.capacity() * 16 > Self::KEEP {
                *v = Vec::new();
            }
        }
        BUFFERS.with(|s| *s.borrow_mut() = self.0);
    }
}

/// Runs `f` with two buffers of `n` elements each, this thread's reused ones ([`Buffers`]; their
/// contents are whatever an earlier call left: plain data). For reductions outside this module
/// (the OpenSHMEM surface's active sets).
pub fn with_buffers<T: Element, R>(n: usize, f: impl FnOnce(&mut [T], &mut [T]) -> Result<R>) -> Result<R> {
    let mut bufs = Buffers::take();
    let (a, b) = bufs.split();
    let r = f(scratch_slice(a, n), scratch_slice(b, n));
    if r.is_ok() {
        bufs.keep();
    }
    r
}

/// `v` as `count` elements of `T`, grown (never shrunk) to hold them; the contents are whatever
/// an earlier call left (elements are plain data: any bytes are a value).
fn scratch_slice<T: Element>(v: &mut Vec<u128>, count: usize) -> &mut [T] {
    const { assert!(std::mem::align_of::<T>() <= std::mem::align_of::<u128>()) };
    let words = (count * std::mem::size_of::<T>()).div_ceil(16);
    if v.len() < words {
        v.resize(words, 0);
    }
    // SAFETY: the vector holds at least count * size_of::<T>() initialised bytes, aligned for T
    // (checked above); T is plain data.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut T, count) }
}

/// Reduction of `n` elements with `op` over every member's `source` into every member's `dest`
/// (`dest == source` allowed; partial overlap is not).
pub fn reduce<T: Element>(
    inst: &Instance,
    t: &Team,
    dest: usize,
    source: usize,
    n: usize,
    op: Op,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let len = n
        .checked_mul(size)
        .ok_or_else(|| Error::InvalidValue("size overflows".into()))?;
    let d = sym(inst, dest, len, "dest", std::mem::align_of::<T>())?;
    let s = sym(inst, source, len, "source", std::mem::align_of::<T>())?;
    if dest != source {
        no_overlap(dest, len, source, len)?;
    }
    if let Some(ring) = small::ring_for(t, len)
        && t.size > 1
        && inst.algos().reduce == ReduceAlgo::Auto
        && inst.all_direct()
    {
        let seq = small::next_seq(inst, t);
        // SAFETY: checked symmetric source of `len` bytes in our own mapped heap.
        let src = unsafe { std::slice::from_raw_parts(s.mine(), len) };
        let tag = Call::reduce::<T>(op, len).ring_tag();
        small::publish(inst, t, ring, seq, src, 0, tag)?;
        // combine in member order (the same order, so the same result, on every member), reading
        // every member's published data where it lies; the accumulator is on the stack (the
        // ring's payloads are at most WIDE_MAX bytes)
        let mut store = Scratch([std::mem::MaybeUninit::uninit(); small::WIDE_MAX]);
        const { assert!(std::mem::align_of::<T>() <= std::mem::align_of::<Scratch>()) };
        debug_assert!(len <= small::WIDE_MAX, "ring_for admitted {len} bytes");
        let acc_ptr = store.0.as_mut_ptr() as *mut T;
        for i in 0..t.size {
            let x: *const T = if i == t.my_index {
                // unchanged until dest is written below, even when dest is the source
                s.mine() as *const T
            } else {
                let p = small::wait_published(inst, t, ring, i, seq, 0, tag)?;
                if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
                    return Err(Error::Inner(
                        "a ring buffer is not aligned for the element type".into(),
                    ));
                }
                p as *const T
            };
            if i == 0 {
                // SAFETY: `x` holds n elements (a checked source or a published payload of len
                // bytes, aligned); the scratch holds len bytes (checked above).
                unsafe { std::ptr::copy_nonoverlapping(x, acc_ptr, n) };
            } else {
                // SAFETY: the scratch's n elements were initialised at i == 0; `x` holds n aligned
                // elements, and a published payload is not rewritten before we complete the call.
                let (acc, xs) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(acc_ptr, n),
                        std::slice::from_raw_parts(x, n),
                    )
                };
                reduce::combine(acc, xs, op);
            }
        }
        small::complete(inst, t, seq)?;
        // SAFETY: our own dest holds n elements; the scratch holds the n combined ones.
        unsafe { copy(acc_ptr.cast(), d.mine(), len) };
        return Ok(());
    }
    if inst.hierarchical() && inst.algos().reduce == ReduceAlgo::Auto && t.size > 1 {
        // across nodes: shared memory inside each node, one leader per node over the transports
        // (with one member per node and large data, measured slower than the flat paths below)
        let g = sync::groups(inst, t);
        // (up to hier::MAIL_MAX (MAIL_MAX_PAIR for two leaders) the leaders exchange partials
        // through their mailboxes: faster)
        if g.leaders.len() <= sync::MAX_LEADERS
            && (len <= DIRECT_LIMIT || t.size > g.leaders.len() || hier::mail_fits(inst, t, &g, len))
        {
            return hier::reduce::<T>(inst, t, &g, d, s, n, op);
        }
    }
    // two members on different nodes: one exchange of the whole vectors (each reads the other's
    // once) beats scatter's read of half, write of half and extra barrier (2 nodes, int64 sum
    // 256 KiB / 1 MiB, see docs/bench-nodes-history.md, sixteenth session)
    let pair_apart = t.size == 2 && s.remote(t.world_pe(1 - t.my_index), 0).direct().is_none();
    let algo = match inst.algos().reduce {
        ReduceAlgo::Auto if len <= DIRECT_LIMIT || pair_apart => ReduceAlgo::Direct,
        ReduceAlgo::Auto => ReduceAlgo::Scatter,
        a => a,
    };
    let seq = small::next_seq(inst, t);
    let call = Call::reduce::<T>(op, len);
    if algo == ReduceAlgo::Direct && pair_apart {
        // two members, the other not mapped (another node): fetch its source, meet (both
        // sources read), then combine both straight into our dest in member order; our source is
        // still intact (nobody writes it, and our dest is written only now, element by element,
        // so dest == source is fine)
        let mut bufs = Buffers::take();
        let (_, fetch_buf) = bufs.split();
        let fetched: &mut [T] = scratch_slice(fetch_buf, n);
        let other = 1 - t.my_index;
        agreed(inst, t, seq, call, |m| {
            m.before_read(other)?;
            // SAFETY: `fetched` holds n elements, which the get fills entirely.
            unsafe { s.read(inst, t.world_pe(other), 0, fetched.as_mut_ptr().cast(), len) }
        })?;
        let mine = s.mine() as *const T;
        let (a, b) = if t.my_index == 0 {
            (mine, fetched.as_ptr())
        } else {
            (fetched.as_ptr(), mine)
        };
        // SAFETY: our source and dest hold n aligned elements (checked), `fetched` n; dest is
        // our source or does not overlap it (checked by the caller).
        unsafe { reduce::combine_into(d.mine() as *mut T, a, b, n, op) };
        bufs.keep();
        // as for the direct path below: no third barrier
        return Ok(());
    }
    // chunk of the result this member computes: everything (direct) or its share (scatter)
    let (lo, hi) = match algo {
        ReduceAlgo::Scatter => {
            let per = n.div_ceil(t.size);
            ((t.my_index * per).min(n), ((t.my_index + 1) * per).min(n))
        }
        _ => (0, n),
    };
    // the accumulator and the fetched parts live in this thread's reusable scratch
    let mut bufs = Buffers::take();
    let (acc_buf, fetch_buf) = bufs.split();
    let acc: &mut [T] = scratch_slice(acc_buf, hi - lo);
    // the reads (and scatter's writes) lie between the two barriers of the agreement; every
    // member's call is compared with ours before we read its source or write its dest
    agreed(inst, t, seq, call, |m| {
        for i in 0..t.size {
            if algo == ReduceAlgo::Scatter {
                m.before_write(i)?;
            } else {
                m.before_read(i)?;
            }
            let pe = t.world_pe(i);
            let part: &[T] = match s.remote(pe, lo * size).direct() {
                // SAFETY: member i's source holds n aligned elements (checked on this PE, the
                // same length on member i: compared); nobody writes sources between the barriers.
                Some(p) => unsafe { std::slice::from_raw_parts(p as *const T, hi - lo) },
                None => {
                    let fetched: &mut [T] = scratch_slice(fetch_buf, hi - lo);
                    // SAFETY: `fetched` holds hi - lo elements, which the get fills entirely.
                    unsafe {
                        s.read(inst, pe, lo * size, fetched.as_mut_ptr().cast(), (hi - lo) * size)?;
                    }
                    fetched
                }
            };
            if i == 0 {
                acc.copy_from_slice(part);
            } else {
                reduce::combine(acc, part, op);
            }
        }
        if algo == ReduceAlgo::Scatter {
            // no barrier before these writes: chunk [lo, hi) of every source is read by this
            // member alone (above, finished), and chunk [lo, hi) of every dest is written by it
            // alone, so writing member i's dest (even when it is member i's source) disturbs
            // nobody's reads
            for i in 0..t.size {
                // SAFETY: [lo, hi) of member i's dest, inside its checked buffer (member i's call
                // compared above).
                unsafe {
                    d.write(
                        inst,
                        t.world_pe(i),
                        lo * size,
                        acc.as_ptr().cast(),
                        std::mem::size_of_val(acc),
                    )?
                };
            }
        }
        Ok(())
    })?;
    if algo != ReduceAlgo::Scatter {
        // every member has read every source before anyone writes its dest (which may be its
        // source): the agreement's second barrier. Every member wrote only its own dest after
        // that, so no other member touches this call's buffers any more, and the next call
        // starts with a barrier: no third one
        // SAFETY: our own dest holds n elements.
        unsafe { copy(acc.as_ptr().cast(), d.mine(), len) }
    }
    bufs.keep();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reduction's tag names its operator, element type and length (exactly up to the
    /// rings' largest payload, as "longer" above it): no two of them alike, none a tag of another
    /// family, and each rebuilt from its tag.
    #[test]
    fn reduction_tags_tell_operators_types_and_lengths_apart() {
        fn calls<T: Element>(out: &mut Vec<Call>) {
            let size = std::mem::size_of::<T>();
            for (op, _) in OPS {
                if T::NUMBER != Number::Signed
                    && T::NUMBER != Number::Unsigned
                    && matches!(op, Op::And | Op::Or | Op::Xor)
                {
                    continue;
                }
                for n in (0..=small::WIDE_MAX / size).chain([small::WIDE_MAX / size + 1, 1 << 20]) {
                    out.push(Call::reduce::<T>(op, n * size));
                }
            }
        }
        // complex and long double types (the OpenSHMEM surface's) by their kind and size
        macro_rules! element {
            ($name:ident, $number:ident, $parts:ty) => {
                #[derive(Clone, Copy)]
                #[allow(dead_code)]
                struct $name($parts);
                impl Element for $name {
                    const NUMBER: Number = Number::$number;
                    fn apply(_: Op, a: Self, _: Self) -> Self {
                        a
                    }
                }
            };
        }
        element!(Narrow, Complex, [f32; 2]);
        element!(Wide, Complex, [f64; 2]);
        element!(Extended, Extended, [u64; 2]);
        let mut all = Vec::new();
        calls::<i8>(&mut all);
        calls::<i16>(&mut all);
        calls::<i32>(&mut all);
        calls::<i64>(&mut all);
        calls::<u8>(&mut all);
        calls::<u16>(&mut all);
        calls::<u32>(&mut all);
        calls::<u64>(&mut all);
        calls::<f32>(&mut all);
        calls::<f64>(&mut all);
        calls::<Narrow>(&mut all);
        calls::<Wide>(&mut all);
        calls::<Extended>(&mut all);
        let mut seen = std::collections::HashMap::new();
        for c in &all {
            let tag = c.ring_tag();
            let longer = c.len > small::WIDE_MAX as u64;
            let back = Call::from_ring_tag(tag);
            assert_eq!((back.kind, back.root), (c.kind, c.root), "{c:?}");
            assert_eq!(back.len, if longer { LONGER } else { c.len }, "{c:?}");
            if let Some(other) = seen.insert(tag, *c) {
                // only the two "longer" calls of one operator and type share a tag
                assert!(
                    longer
                        && other.len > small::WIDE_MAX as u64
                        && (other.kind, other.root) == (c.kind, c.root),
                    "{c:?} and {other:?} share tag {tag:#x}"
                );
            }
            for kind in [BROADCAST, FCOLLECT, ALLTOALL, COLLECT] {
                assert_ne!(Call::of(kind, c.len as usize).ring_tag(), tag);
            }
            assert_ne!(c.agree_tag(), tag);
            // the pushed exchanges' type byte
            assert_eq!(Call::elem_of8(c.elem8()), c.root, "{c:?}");
        }
        // long and int64_t are alike, int32_t and float (one size) are not
        assert_eq!(
            Call::reduce::<isize>(Op::Sum, 64),
            Call::reduce::<i64>(Op::Sum, 64)
        );
        assert_ne!(
            Call::reduce::<i32>(Op::Sum, 64).ring_tag(),
            Call::reduce::<f32>(Op::Sum, 64).ring_tag()
        );
        assert_eq!(
            Call::from_ring_tag(Call::reduce::<f64>(Op::Max, 4096).ring_tag()).name(),
            "a max reduction of more than 1024 bytes of double"
        );
        // the exchanges' tags keep every length up to 4095 (leaders' partials of 2 and 4 KiB;
        // the ring tags' "longer" made them alike), the type goes beside them
        assert_ne!(
            Call::reduce::<i64>(Op::Sum, 2048).tag(),
            Call::reduce::<i64>(Op::Sum, 4088).tag()
        );
        assert_ne!(
            Call::reduce::<i32>(Op::Sum, 64).elem8(),
            Call::reduce::<f32>(Op::Sum, 64).elem8()
        );
        assert_eq!(Call::of(FCOLLECT, 64).elem8(), 0);
        let r = Call::reduce::<i64>(Op::Sum, 2048);
        assert_eq!(
            Call::from_tag(r.tag()).with_elem8(r.elem8()).name(),
            "a sum reduction of 2048 bytes of int64"
        );
    }

    #[test]
    fn call_tags_tell_families_lengths_and_records_apart() {
        let f64b = Call::of(FCOLLECT, 64);
        assert_eq!(
            Call::from_tag(f64b.tag()).name(),
            "an fcollect of 64 bytes per member"
        );
        // every ring payload's length is exact in a tag; longer ones saturate
        assert_ne!(Call::of(FCOLLECT, 1024).tag(), Call::of(FCOLLECT, 1023).tag());
        assert_eq!(Call::of(FCOLLECT, 5000).tag(), Call::of(FCOLLECT, 8000).tag());
        // families differ at one length, and so do reduction operators
        assert_ne!(f64b.tag(), Call::of(ALLTOALL, 64).tag());
        assert_ne!(
            Call::reduce::<i64>(Op::Sum, 64).tag(),
            Call::reduce::<i64>(Op::Max, 64).tag()
        );
        assert_eq!(
            Call::from_ring_tag(Call::reduce::<i64>(Op::Prod, 8).ring_tag()).name(),
            "a prod reduction of 8 bytes of int64"
        );
        // a record's tag never equals a data tag of any length
        for len in [0, 64, 4095, 4096, 1 << 20] {
            for kind in [BROADCAST, FCOLLECT, ALLTOALL, COLLECT, REDUCE, REDUCE + 6] {
                assert_ne!(Call::of(kind, len).agree_tag(), Call::of(kind, len).tag());
            }
        }
        assert_eq!(
            Call::from_tag(f64b.agree_tag()).name(),
            "an fcollect of another length per member"
        );
        // the barrier path's argument word carries a reduction's element type
        let r = Call::reduce::<f32>(Op::Sum, 100_000);
        let said = sync::Said {
            call: 7,
            arg: r.arg(),
            len: r.len,
        };
        assert_eq!(Call::from_said(said), r);
        assert_ne!(Call::reduce::<i32>(Op::Sum, 100_000).arg(), r.arg());
        assert_eq!(
            Call::from_said(said).name(),
            "a sum reduction of 100000 bytes of float"
        );
        // the barrier path's argument word and length carry the root
        let b = Call::broadcast(3, 100_000);
        let said = sync::Said {
            call: 7,
            arg: b.arg(),
            len: b.len,
        };
        assert_eq!(Call::from_said(said), b);
        assert_eq!(
            Call::from_said(said).name(),
            "a broadcast of 100000 bytes from root 3"
        );
    }
}

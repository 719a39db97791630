//! The symmetric heap: one shared-memory segment per PE and heap kind, every same-node peer's
//! segment mapped too, and a deterministic allocator over offsets.
//!
//! Remote address = peer base + (ptr − my base): a subtraction, a bounds check and one load from
//! `peers`, no lock and no lookup by hashing.
//!
//! `unsafe`: gethostname through libc.

pub mod allocator;
pub mod freeze;
pub mod segment;
pub mod sigbus;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bootstrap::Bootstrap;
use crate::config;
use crate::error::{Error, Result};
pub use allocator::Allocator;
use segment::Segment;

/// Which heap: the two kinds of the original (`aclshmem_mem_type_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapKind {
    Host = 0,
    Device = 1,
    /// The program's global and static data (OpenSHMEM: symmetric without allocation), moved onto
    /// shared memory by [`SymmetricHeap::adopt`]. Not an `aclshmem_mem_type_t`.
    Static = 2,
}

impl HeapKind {
    /// From an `aclshmem_mem_type_t` value.
    pub fn from_c(v: i32) -> Result<HeapKind> {
        match v {
            0 => Ok(HeapKind::Host),
            1 => Ok(HeapKind::Device),
            _ => Err(Error::InvalidParam(format!(
                "mem_type {v} is neither HOST_SIDE (0) nor DEVICE_SIDE (1)"
            ))),
        }
    }
    fn tag(self) -> char {
        match self {
            HeapKind::Host => 'h',
            HeapKind::Device => 'd',
            HeapKind::Static => 's',
        }
    }
}

/// One symmetric heap of one PE, with the peers' copies that this PE can address.
pub struct SymmetricHeap {
    pub kind: HeapKind,
    /// Distinct for every heap of an instance, for transports that keep state per heap: the kind's
    /// number for the host and device heaps, `HeapKind::Static as usize + i` for the `i`-th region
    /// of program data made symmetric (the executable's, then shared libraries').
    slot: usize,
    local: Segment,
    /// Base address of every PE's copy mapped here (same node); 0 for PEs on other nodes.
    peers: Vec<usize>,
    /// The bases the data path's fast path may load and store through: `peers`, or all 0 when
    /// direct access is off (`ACLSHMEM_DIRECT_ACCESS=0`: every operation goes through a transport).
    direct: Vec<usize>,
    _peer_maps: Vec<Segment>,
    size: usize,
    /// Offsets below this belong to the library (the reserved region at the start of the device
    /// heap: signal word, sync pool, counters); user operations may not touch them.
    user_start: usize,
    pub alloc: Mutex<Allocator>,
}

/// Where the heaps' same-address windows start (16 TiB: far below where Linux places mappings
/// and the program's own memory, inside every 47- and 48-bit user address space).
const SAME_ADDRESS_START: usize = 16 << 40;
/// Each heap's window (instance i: its device heap in window 2i, its `HOST_SIDE` heap in 2i + 1).
const SAME_ADDRESS_WINDOW: usize = 1 << 40;
/// Windows in all (up to 80 TiB).
const SAME_ADDRESS_WINDOWS: u64 = 64;

/// The address at which heap `kind` of instance `instance` is mapped when that range is free on
/// this PE (`ACLSHMEM_HEAP_SAME_ADDRESS`, on by default): the same on every PE, so a pointer into
/// the heap that a program stores in symmetric memory names the same object on every PE (OSHMEM
/// maps its heap at one fixed address too, and programs written for it rely on that). `None`: the
/// system chooses (the setting off, a heap larger than its window, an instance beyond the windows,
/// the program's data). Remote addresses are always translated by offset from each PE's base,
/// so where a heap lands changes nothing else.
/// A malformed `ACLSHMEM_HEAP_SAME_ADDRESS` is an error naming it.
pub fn preferred_base(instance: u64, kind: HeapKind, size: usize) -> Result<Option<usize>> {
    if !config::ACLSHMEM_HEAP_SAME_ADDRESS.value()? {
        return Ok(None);
    }
    let window = match kind {
        HeapKind::Device => instance.checked_mul(2),
        HeapKind::Host => instance.checked_mul(2).and_then(|w| w.checked_add(1)),
        HeapKind::Static => None,
    };
    Ok(window
        .filter(|&w| w < SAME_ADDRESS_WINDOWS && size <= SAME_ADDRESS_WINDOW)
        .map(|w| SAME_ADDRESS_START + w as usize * SAME_ADDRESS_WINDOW))
}

/// Collective: the node of every PE (same host name and boot id, so same /dev/shm), numbered in
/// the order of each node's first PE, so every PE computes the same numbers.
pub fn node_map(boot: &dyn Bootstrap) -> Result<Vec<usize>> {
    let all = boot.allgather(node_id().as_bytes())?;
    let mut seen: Vec<&[u8]> = Vec::new();
    Ok(all
        .iter()
        .map(|n| match seen.iter().position(|s| *s == n.as_slice()) {
            Some(i) => i,
            None => {
                seen.push(n.as_slice());
                seen.len() - 1
            }
        })
        .collect())
}

/// Identifies a node: PEs with equal ids share /dev/shm.
fn node_id() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let mut host = [0u8; 256];
    // SAFETY: the buffer and its length are passed; gethostname NUL-terminates within it or truncates.
    unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len() - 1) };
    let end = host.iter().position(|&b| b == 0).unwrap_or(host.len());
    format!("{}|{}", String::from_utf8_lossy(&host[..end]), boot.trim())
}

/// Status-or-text contribution used to agree on success across PEs: this PE's error as it is,
/// else the first other PE's, of the same kind (a malformed setting is an invalid value on every
/// PE, a failed mapping a shared-memory error).
fn agree(boot: &dyn Bootstrap, mine: Result<String>) -> Result<Vec<String>> {
    let payload = match &mine {
        Ok(s) => format!("+{s}"),
        Err(e) => format!("-{}", e.to_wire()),
    };
    let parts = boot.allgather(payload.as_bytes())?;
    mine?;
    let mut out = Vec::with_capacity(parts.len());
    for (pe, p) in parts.iter().enumerate() {
        let text = String::from_utf8_lossy(p);
        match text.strip_prefix('+') {
            Some(ok) => out.push(ok.to_string()),
            None => {
                let why = text.strip_prefix('-').unwrap_or(&text);
                return Err(Error::from_wire(why, pe, crate::error::code::SMEM_ERROR));
            }
        }
    }
    Ok(out)
}

/// Whether heaps are preallocated when `ACLSHMEM_SHM_PREALLOCATE` is not set (see
/// [`pages_on_first_touch_by_default`]).
static PREALLOCATE_DEFAULT: AtomicBool = AtomicBool::new(true);

/// The OpenSHMEM surface: heaps created from now on, unless `ACLSHMEM_SHM_PREALLOCATE` says
/// otherwise, get their pages on first touch (as SOS's and OSHMEM's heaps do), so its large default
/// heap costs nothing until used. A page that cannot be backed then ends the process with a
/// message (see [`sigbus`]).
pub fn pages_on_first_touch_by_default() {
    PREALLOCATE_DEFAULT.store(false, Ordering::Relaxed);
}

/// Whether new heaps reserve their pages at creation.
fn preallocate() -> Result<bool> {
    Ok(config::ACLSHMEM_SHM_PREALLOCATE
        .get()?
        .unwrap_or_else(|| PREALLOCATE_DEFAULT.load(Ordering::Relaxed)))
}

impl SymmetricHeap {
    /// Collective: creates this PE's segment of `size` bytes, maps every same-node peer's segment and
    /// unlinks the names once everyone has mapped. `job` goes into the object names; `direct` says
    /// whether the fast path may use the mappings (see `direct`).
    /// `instance`: the instance's id, which chooses the heap's address (see [`preferred_base`]).
    pub fn create(
        boot: &dyn Bootstrap,
        instance: u64,
        kind: HeapKind,
        size: usize,
        job: &str,
        direct: bool,
    ) -> Result<SymmetricHeap> {
        Self::create_with_hole(boot, instance, kind, size, 0..0, job, direct)
    }

    /// [`Self::create`] of a heap whose bytes `hole` are not the heap's own memory: they are mapped
    /// over by the user buffers of `aclshmemx_init_attr_with_buffers` ([`Self::map_buffers`]), and
    /// only the rest needs room in `/dev/shm`. The caller keeps the allocator off them
    /// (`instance::reserve_internal`).
    pub fn create_with_hole(
        boot: &dyn Bootstrap,
        instance: u64,
        kind: HeapKind,
        size: usize,
        hole: std::ops::Range<usize>,
        job: &str,
        direct: bool,
    ) -> Result<SymmetricHeap> {
        if hole.start > hole.end || hole.end > size {
            return Err(Error::Inner(format!(
                "heap hole {hole:?} does not fit in its size {size}"
            )));
        }
        let backed = size - hole.len();
        Self::create_with(boot, kind, size, backed, job, direct, |name| {
            Segment::create(
                name,
                size,
                hole.clone(),
                preallocate()?,
                preferred_base(instance, kind, size)?,
            )
        })
    }

    /// Collective: moves this PE's program memory `[addr, addr + len)` (page-aligned; the same
    /// length on every PE, as the same executable gives) onto shared memory in place
    /// ([`Segment::adopt`]) and maps every same-node peer's copy: a symmetric heap of kind
    /// [`HeapKind::Static`] whose base is `addr`, with no allocator. `index`: which region of
    /// program data this is (0 for the first), making [`Self::slot`] distinct.
    pub fn adopt(
        boot: &dyn Bootstrap,
        addr: usize,
        len: usize,
        index: usize,
        job: &str,
        direct: bool,
    ) -> Result<SymmetricHeap> {
        let mut h = Self::create_with(boot, HeapKind::Static, len, len, job, direct, |name| {
            Segment::adopt(name, addr, len)
        })?;
        h.slot = HeapKind::Static as usize + index;
        Ok(h)
    }

    fn create_with(
        boot: &dyn Bootstrap,
        kind: HeapKind,
        size: usize,
        backed: usize,
        job: &str,
        direct: bool,
        make: impl FnOnce(&str) -> Result<Segment>,
    ) -> Result<SymmetricHeap> {
        let me = boot.my_pe();
        // the free space, read before this PE publishes its heap information below: every PE has
        // read it before any PE gets past that exchange and creates its segment, so nobody's
        // reading counts a peer's new heap as used (it did once, under load: a false "too small")
        let free = if kind == HeapKind::Static {
            None
        } else {
            let dir = config::ACLSHMEM_SHM_DIR.value()?;
            // a directory whose space cannot be read is named, not skipped without a word
            Some(crate::util::free_space(&dir).ok_or_else(|| {
                Error::InvalidValue(format!(
                    "ACLSHMEM_SHM_DIR=\"{dir}\": cannot read the free space of the shared-memory file \
                     system there ({}); name its mount point (default /dev/shm)",
                    std::io::Error::last_os_error()
                ))
            })?)
        };
        // 1. same size everywhere, and who shares this node
        let node = node_id();
        let infos = boot.allgather(format!("{size}|{node}").as_bytes())?;
        let mut nodes = Vec::with_capacity(infos.len());
        for (pe, info) in infos.iter().enumerate() {
            let text = String::from_utf8_lossy(info);
            let (sz, nd) = text
                .split_once('|')
                .ok_or_else(|| Error::Inner("bad heap info".into()))?;
            if sz != size.to_string() {
                return Err(Error::InvalidParam(format!(
                    "heap sizes differ between PEs: PE {me} has {size} bytes, PE {pe} has {sz} (local_mem_size must be equal on every PE)"
                )));
            }
            nodes.push(nd.to_string());
        }
        let local_pes = nodes.iter().filter(|n| **n == node).count();

        // 2. space check and creation; every PE learns whether all succeeded
        let name = format!(
            "/aclshmem-{}-{}-pe{}-{}-{}-{}",
            segment::user_name(),
            job,
            me,
            std::process::id(),
            next_serial(),
            kind.tag()
        );
        let created = if kind == HeapKind::Static {
            make(&name)
        } else {
            Self::check_space(backed, local_pes, free, preallocate()?).and_then(|_| make(&name))
        };
        // each PE's name and base: the bases tell whether every PE got the same address
        let (created, my_name) = match created {
            Ok(s) => {
                let at = format!("{name}@{:x}", s.base() as usize);
                (Some(s), Ok(at))
            }
            Err(e) => (None, Err(e)),
        };
        let named = agree(boot, my_name)?;
        let mut names = Vec::with_capacity(named.len());
        let mut bases = Vec::with_capacity(named.len());
        for n in &named {
            let (nm, at) = n
                .rsplit_once('@')
                .ok_or_else(|| Error::Inner(format!("bad heap name {n}")))?;
            names.push(nm.to_string());
            bases
                .push(usize::from_str_radix(at, 16).map_err(|_| Error::Inner(format!("bad heap name {n}")))?);
        }
        let mut local = created.ok_or_else(|| Error::Inner("segment missing".into()))?;
        if kind != HeapKind::Static
            && let Some(pe) = bases.iter().position(|&b| b != bases[me])
        {
            log::info!(
                "the {kind:?} heap is at {:#x} on PE {me} but at {:#x} on PE {pe}: a pointer into it \
                 stored by one PE means nothing to another (the same address was not free everywhere, \
                 or ACLSHMEM_HEAP_SAME_ADDRESS=0)",
                bases[me],
                bases[pe]
            );
        }

        // 3. map same-node peers
        let mut peers = vec![0usize; names.len()];
        let mut maps = Vec::new();
        let mut mapped: Result<String> = Ok(String::new());
        for (pe, peer_name) in names.iter().enumerate() {
            if pe == me {
                peers[pe] = local.base() as usize;
            } else if nodes[pe] == node {
                match Segment::open_peer(peer_name, size) {
                    Ok(seg) => {
                        peers[pe] = seg.base() as usize;
                        maps.push(seg);
                    }
                    Err(e) => {
                        mapped = Err(e);
                        break;
                    }
                }
            }
        }
        // 4. once everyone mapped (or failed), nobody needs the names any more
        let result = agree(boot, mapped);
        local.unlink();
        result?;
        let direct = if direct {
            peers.clone()
        } else {
            vec![0; peers.len()]
        };
        Ok(SymmetricHeap {
            kind,
            slot: kind as usize,
            local,
            direct,
            peers,
            _peer_maps: maps,
            size,
            user_start: 0,
            alloc: Mutex::new(Allocator::new(size as u64)),
        })
    }

    /// Collective: maps the user buffers `pieces` (a descriptor of the memory, the buffer's offset
    /// in it, its length; in order, the same lengths on every PE) one after the other from heap
    /// offset `start`, over the hole of this heap ([`Self::create_with_hole`]): in this PE's copy,
    /// and in each same-node peer's copy mapped here, which is reached through `/proc/<pid>/fd/` of
    /// the peer (the descriptors stay open until every PE is done). Every PE learns whether all PEs
    /// succeeded.
    pub fn map_buffers(
        &self,
        boot: &dyn Bootstrap,
        start: usize,
        pieces: &[(std::os::fd::OwnedFd, u64, usize)],
    ) -> Result<()> {
        use std::os::fd::{AsFd, AsRawFd};
        let total: usize = pieces.iter().map(|p| p.2).sum();
        if start.checked_add(total).is_none_or(|end| end > self.size) {
            return Err(Error::Inner(format!(
                "user buffers of {total} bytes exceed the heap"
            )));
        }
        let me = boot.my_pe();
        let mut mine = format!("{}", std::process::id());
        for (fd, off, _) in pieces {
            mine.push_str(&format!(" {}:{off}", fd.as_raw_fd()));
        }
        let map_all = |base: usize, fds: &[(std::os::fd::BorrowedFd<'_>, u64)]| -> Result<()> {
            let mut at = base + start;
            for ((fd, off), (_, _, len)) in fds.iter().zip(pieces) {
                // SAFETY: [at, at + len) lies in the hole of a mapping of this heap (ours or a
                // peer's, owned by `self`), which nobody uses before init returns.
                unsafe { segment::map_over(at, *len, *fd, *off) }.map_err(|e| {
                    Error::Smem(format!(
                        "mapping a user buffer into the symmetric heap at {at:#x} (+{len} bytes) failed: {e}"
                    ))
                })?;
                at += len;
            }
            Ok(())
        };
        let local: Vec<_> = pieces.iter().map(|(fd, off, _)| (fd.as_fd(), *off)).collect();
        map_all(self.local.base() as usize, &local)?;
        let infos = boot.allgather(mine.as_bytes())?;
        let mut mapped: Result<String> = Ok(String::new());
        for (pe, info) in infos.iter().enumerate() {
            let base = self.peers.get(pe).copied().unwrap_or(0);
            if pe == me || base == 0 {
                continue;
            }
            let r = (|| -> Result<()> {
                let text = String::from_utf8_lossy(info);
                let mut words = text.split(' ');
                let pid = words.next().unwrap_or_default();
                let mut files = Vec::with_capacity(pieces.len());
                for w in words {
                    let (fd, off) = w
                        .split_once(':')
                        .and_then(|(f, o)| Some((f.parse::<u32>().ok()?, o.parse::<u64>().ok()?)))
                        .ok_or_else(|| Error::Inner(format!("bad user-buffer record from PE {pe}")))?;
                    let path = format!("/proc/{pid}/fd/{fd}");
                    let file = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&path)
                        .map_err(|e| {
                            Error::Smem(format!(
                                "cannot open PE {pe}'s user buffer through {path}: {e} (the PEs of a node \
                                 must see each other's /proc)"
                            ))
                        })?;
                    files.push((file, off));
                }
                if files.len() != pieces.len() {
                    return Err(Error::InvalidParam(format!(
                        "PE {pe} gave {} user buffers, this PE {}",
                        files.len(),
                        pieces.len()
                    )));
                }
                let fds: Vec<_> = files.iter().map(|(f, off)| (f.as_fd(), *off)).collect();
                map_all(base, &fds)
            })();
            if let Err(e) = r {
                mapped = Err(e);
                break;
            }
        }
        agree(boot, mapped).map(|_| ())
    }

    /// Whether `free` bytes (read before any heap of this kind was created) hold the heaps of
    /// `local_pes` PEs of `size` bytes. Heaps that get their pages on first touch
    /// (`preallocate` false) may be larger than the free space, as with other OpenSHMEM libraries:
    /// only what the program touches must fit, so that is a warning.
    fn check_space(size: usize, local_pes: usize, free: Option<u64>, preallocate: bool) -> Result<()> {
        let dir = config::ACLSHMEM_SHM_DIR.value()?;
        let need = (size as u64).saturating_mul(local_pes as u64);
        if let Some(free) = free
            && free < need
        {
            if !preallocate {
                log::warn!(
                    "{dir} has {free} bytes free and the {local_pes} PE heap(s) of this node span {need}: \
                     their pages are allocated on first touch, and a PE that touches more than fits \
                     ends with a SIGBUS message"
                );
                return Ok(());
            }
            return Err(Error::Smem(format!(
                "{dir} has {free} bytes free but the {local_pes} PE heap(s) of this node need {need} \
                 ({size} each = local_mem_size + 6 MiB): enlarge {dir} (e.g. docker run --shm-size={}m, \
                 or mount -o remount,size=... {dir}) or lower local_mem_size",
                need.div_ceil(1 << 20) + 64
            )));
        }
        Ok(())
    }

    /// See the field: an index distinct for every heap of the instance.
    #[inline]
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// This PE's base address.
    #[inline]
    pub fn base(&self) -> *mut u8 {
        self.local.base()
    }

    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Offset of `[ptr, ptr + len)` inside this PE's heap, if it lies entirely inside.
    #[inline]
    pub fn offset_of(&self, ptr: usize, len: usize) -> Option<usize> {
        let off = ptr.checked_sub(self.local.base() as usize)?;
        if off < self.size && len <= self.size - off {
            Some(off)
        } else {
            None
        }
    }

    /// Offset of `[ptr, ptr + len)` inside the user part of this PE's heap (past the reserved
    /// region), if it lies entirely inside.
    #[inline]
    pub fn user_offset_of(&self, ptr: usize, len: usize) -> Option<usize> {
        self.offset_of(ptr, len).filter(|&off| off >= self.user_start)
    }

    /// Marks `[0, end)` as the library's reserved region (init, before the heap is shared).
    pub fn reserve_front(&mut self, end: usize) {
        self.user_start = end;
    }

    /// Address of offset `off` in PE `pe`'s copy, when it is mapped into this process (same node).
    #[inline]
    pub fn mapped_addr(&self, off: usize, pe: usize) -> Option<*mut u8> {
        match self.peers.get(pe) {
            Some(&base) if base != 0 => Some((base + off) as *mut u8),
            _ => None,
        }
    }

    /// Whether `[ptr, ptr + len)` lies inside another PE's copy of this heap mapped into this
    /// process (what `aclshmem_ptr` answers for a peer on this node).
    pub fn in_peer_copy(&self, ptr: usize, len: usize) -> bool {
        self.peers.iter().any(|&base| {
            base != 0
                && ptr
                    .checked_sub(base)
                    .is_some_and(|off| off < self.size && len <= self.size - off)
        })
    }

    /// [`Self::mapped_addr`] for the fast path: `None` also when direct access is off.
    #[inline]
    pub fn direct_addr(&self, off: usize, pe: usize) -> Option<*mut u8> {
        match self.direct.get(pe) {
            Some(&base) if base != 0 => Some((base + off) as *mut u8),
            _ => None,
        }
    }

    /// Address of offset `off` in this PE's own copy.
    #[inline]
    pub fn local_addr(&self, off: usize) -> *mut u8 {
        (self.local.base() as usize + off) as *mut u8
    }
}

/// Distinguishes the segments of successive inits within one process.
fn next_serial() -> u64 {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod same_address_tests {
    use super::*;

    #[test]
    fn windows_per_instance_and_kind() {
        // (the variable is unset in unit tests: on by default)
        let at = |i, k, s| preferred_base(i, k, s).unwrap();
        assert_eq!(at(0, HeapKind::Device, 1 << 30), Some(16 << 40));
        assert_eq!(at(0, HeapKind::Host, 1 << 30), Some(17 << 40));
        assert_eq!(at(3, HeapKind::Device, 1 << 30), Some(22 << 40));
        assert_eq!(at(31, HeapKind::Host, 1 << 40), Some(79 << 40));
        // beyond the windows, larger than a window, the program's data: the system chooses
        assert_eq!(at(32, HeapKind::Device, 4096), None);
        assert_eq!(at(u64::MAX, HeapKind::Host, 4096), None);
        assert_eq!(at(0, HeapKind::Device, (1 << 40) + 1), None);
        assert_eq!(at(0, HeapKind::Static, 4096), None);
    }
}

//! One initialised instance: its bootstrap, its heaps and the collective allocation protocol.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::{HeapKind, SymmetricHeap};
use crate::transport::Remote;
use crate::transport::Routes;
use crate::util::Locked;
use crate::wait::Limits;
use aclshmem_abi::{ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE, SYNC_COUNTERS_SIZE, SYNC_POOL_SIZE, UbConfig};

/// Bytes the library takes from the device heap at init (signal word, sync pool, sync counters), as
/// the original does: users can still allocate `local_mem_size` bytes.
pub const SIGNAL_WORD_SIZE: u64 = 512;

/// A team's shape: start, stride and size (its members).
type GroupsKey = (usize, usize, usize);

/// Team shapes whose node groups an instance keeps ([`Instance::groups`]).
const GROUPS_KEPT: usize = 32;

pub struct Instance {
    id: u64,
    my_pe: usize,
    n_pes: usize,
    heap_size: usize,
    job: String,
    boot: Box<dyn Bootstrap>,
    /// This instance's CPU table as registered with the waits (declared before the heaps, so it
    /// is unregistered before they are unmapped: [`share_cpus`]).
    cpus: crate::wait::CpuTable,
    /// Which transport reaches each PE (declared before the heaps, so it is dropped first: UCX
    /// unregisters the heaps before they are unmapped).
    routes: Routes,
    device: SymmetricHeap,
    /// The HOST_SIDE heap, created by the first HOST_SIDE allocation (collective).
    host: OnceLock<SymmetricHeap>,
    /// The program's global and static data made symmetric (OpenSHMEM surface), once adopted: one
    /// heap per region (the executable's, then shared libraries').
    statics: OnceLock<Vec<SymmetricHeap>>,
    /// Offset of the sync pool (per-team barrier state) in the device heap.
    sync_pool: usize,
    /// Offset of the sync counters (one 64-byte line per team slot) in the device heap.
    sync_counters: usize,
    /// Offset of the wide rings of the barrier-free collectives (`collectives::small`) in the
    /// device heap.
    rings: usize,
    /// How long collective waits may last (warning, failure).
    limits: Limits,
    /// True when this PE addresses every PE's heap directly, so barriers and collectives may run
    /// on shared-memory words (the fast path); else they go through the transports.
    all_direct: bool,
    /// `ACLSHMEM_DIRECT_ACCESS`: whether heaps created later allow the fast path too.
    direct_access: bool,
    /// The node of every PE (numbered by first PE, the same on every PE).
    nodes: Vec<usize>,
    /// Barriers and collectives run hierarchically: shared memory among the members on one node,
    /// the transports between one leader per node (`sync`, `collectives::hier`). True when not
    /// every PE is mapped here but every PE of this node is (the fast path is on).
    hierarchical: bool,
    /// Collective calls from several threads at once are not supported; this keeps them from
    /// interleaving their control-plane messages if a program tries.
    collective: Mutex<()>,
    /// Collective algorithms chosen at init.
    algos: crate::algos::Algos,
    /// The teams this PE belongs to.
    teams: Mutex<crate::team_table::Teams>,
    /// The lock-free copy of `teams` the calls read.
    team_cells: std::sync::Arc<crate::team_table::TeamCells>,
    /// Node groups of the team shapes the hierarchical collectives met last ([`Self::groups`]).
    groups: Mutex<Vec<(GroupsKey, std::sync::Arc<crate::team_table::Groups>)>>,
    /// UB scratch configuration per engine (MTE, SDMA, RDMA, UDMA), recorded by the setters.
    ub_config: Mutex<[UbConfig; 4]>,
    /// Set by finalize when stream-queued work did not drain in time: operations that start
    /// afterwards are cancelled instead of touching heaps that are going away.
    closing: AtomicBool,
    /// The program's buffers given to `aclshmemx_init_attr_with_buffers`, placed after the
    /// library's region, before the allocatable part of the device heap (`runtime::buffers`).
    buffers: Vec<Placed>,
    /// The data engines the program chose at init (`data_op_engine_type`, `ACLSHMEM_DATA_OP_*`).
    engines: u32,
    /// What the kernel layer keeps for this instance (its device-state record,
    /// `kernel::device_state`), made on first use and dropped with the instance.
    kernel_state: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// What init assembles into an [`Instance`].
pub(crate) struct Parts {
    pub id: u64,
    pub my_pe: usize,
    pub n_pes: usize,
    pub heap_size: usize,
    pub job: String,
    pub boot: Box<dyn Bootstrap>,
    pub device: SymmetricHeap,
    pub routes: Routes,
    pub sync_pool: usize,
    pub sync_counters: usize,
    pub rings: usize,
    pub limits: Limits,
    pub direct_access: bool,
    pub algos: crate::algos::Algos,
    pub nodes: Vec<usize>,
    pub buffers: Vec<Placed>,
    pub engines: u32,
}

/// Where a buffer of the program given to `aclshmemx_init_attr_with_buffers` lies in the device
/// heap (`runtime::buffers`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    pub addr: usize,
    pub size: usize,
    pub heap_offset: usize,
}

/// Where the library's own blocks and the program's buffers lie in the device heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Offsets of the sync pool, the sync counters and the rings.
    pub sync_pool: usize,
    pub sync_counters: usize,
    pub rings: usize,
    /// End of the library's region (the first offset programs may name).
    pub internal_end: usize,
    /// Offset of the first user buffer of `aclshmemx_init_attr_with_buffers` (they follow one
    /// another); `internal_end` without buffers.
    pub buffers: usize,
}

/// Alignment of the user buffers in the heap (their granularity).
const BUFFER_ALIGN: u64 = 2 << 20;

/// The library's own blocks at the start of the device heap (same order as the original: signal
/// word, sync pool, sync counters; then this library's wide rings and split mailbox, inside the
/// original's `ACLSHMEM_EXTRA_SIZE`), then `buffers` bytes of user buffers (2 MiB aligned: the
/// fixed part of the heap before the allocatable capacity, as in the original), taken from
/// allocator `a`.
fn lay_out(a: &mut crate::heap::allocator::Allocator, buffers: usize) -> Result<Layout> {
    let fail = || Error::Inner("the device heap cannot hold the library's sync areas".into());
    a.alloc(SIGNAL_WORD_SIZE, 16).ok_or_else(fail)?;
    let sync_pool = a.alloc(SYNC_POOL_SIZE as u64, 64).ok_or_else(fail)? as usize;
    let sync_counters = a.alloc(SYNC_COUNTERS_SIZE as u64, 64).ok_or_else(fail)? as usize;
    // the rings, the split mailbox (`team_table::SPLIT_AREA`, at `Instance::splits`), the
    // departure notices (`team_table::DEPART_AREA`, at `Instance::departures`), then the node's
    // CPU table (`wait::CPU_AREA`, at `Instance::cpu_table`)
    use crate::team_table::{DEPART_AREA, RINGS_BYTES, SPLIT_AREA};
    use crate::wait::CPU_AREA;
    let rings = a
        .alloc((RINGS_BYTES + SPLIT_AREA + DEPART_AREA + CPU_AREA) as u64, 64)
        .ok_or_else(fail)? as usize;
    let internal_end = rings + RINGS_BYTES + SPLIT_AREA + DEPART_AREA + CPU_AREA;
    let buffers = if buffers == 0 {
        internal_end
    } else {
        // the gap up to the buffers' alignment is taken too, so every allocation comes after them
        let fail = || {
            Error::Inner(format!(
                "the device heap cannot hold {buffers} bytes of user buffers"
            ))
        };
        let start = (internal_end as u64).next_multiple_of(BUFFER_ALIGN);
        if start > internal_end as u64 {
            a.alloc(start - internal_end as u64, 16).ok_or_else(fail)?;
        }
        let at = a.alloc(buffers as u64, 16).ok_or_else(fail)?;
        if at != start {
            return Err(Error::Inner(format!(
                "the user buffers landed at heap offset {at:#x}, not {start:#x}"
            )));
        }
        at as usize
    };
    Ok(Layout {
        sync_pool,
        sync_counters,
        rings,
        internal_end,
        buffers,
    })
}

/// The [`Layout`] a device heap of `size` bytes with `buffers` bytes of user buffers will get
/// (before the heap exists: its segment leaves the buffers' bytes unbacked).
pub(crate) fn plan(size: usize, buffers: usize) -> Result<Layout> {
    lay_out(&mut crate::heap::allocator::Allocator::new(size as u64), buffers)
}

/// Reserves the library's own blocks and the user buffers' bytes in `device`'s allocator, as
/// [`plan`] laid them out.
/// The library's region is not a user block: it cannot be freed, and puts, gets, atomics, signals
/// and collectives aimed at it are refused like addresses outside the heap; the library's own
/// traffic (barriers, collectives' flags) reaches it by offset, not through those checks. The
/// buffers are the program's: every call reaches them, none can free them.
pub(crate) fn reserve_internal(device: &mut SymmetricHeap, buffers: usize) -> Result<Layout> {
    let l = lay_out(&mut device.alloc.locked(), buffers)?;
    device.reserve_front(l.internal_end);
    Ok(l)
}

/// Offset of the CPU table in a device heap whose rings are at `rings` (after the rings, the
/// split mailbox and the departure notices: [`lay_out`]).
fn cpu_table_at(rings: usize) -> usize {
    use crate::team_table::{DEPART_AREA, RINGS_BYTES, SPLIT_AREA};
    rings + RINGS_BYTES + SPLIT_AREA + DEPART_AREA
}

/// Registers this node's CPU table with the waits (`wait::share_cpu_table`): the words at
/// `table` in the device heap of the node's first PE, one per PE of the node in PE order. Every
/// PE of a node maps that heap (peers on one node always share memory, whatever transport they
/// use), so the table needs no message. With one PE on the node, or if the first PE's heap is
/// not mapped here, nothing is registered.
fn share_cpus(device: &SymmetricHeap, table: usize, my_pe: usize, nodes: &[usize]) -> crate::wait::CpuTable {
    let node = nodes.get(my_pe).copied();
    let local: Vec<usize> = (0..nodes.len())
        .filter(|&pe| nodes.get(pe).copied() == node)
        .collect();
    let me = local.iter().position(|&pe| pe == my_pe).unwrap_or(usize::MAX);
    let words = local
        .first()
        .and_then(|&first| device.mapped_addr(table, first))
        .map_or(std::ptr::null(), |p| p as *const std::sync::atomic::AtomicU32);
    // SAFETY: the table lies in the reserved region of the first PE's device heap (`lay_out`
    // keeps CPU_AREA bytes, 4 bytes per possible PE, 64-byte aligned), which stays mapped here
    // until `device` is dropped; the instance drops the returned guard first
    // (`Instance::into_bootstrap`, and the field order). Every PE writes its word with atomic
    // stores only.
    unsafe { crate::wait::share_cpu_table(words, local.len(), me) }
}

/// The engines of the UB configuration setters, in `ub_config` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Mte = 0,
    Sdma = 1,
    Rdma = 2,
    Udma = 3,
}

/// The original's initial UB configurations (spec 5.11).
pub const DEFAULT_UB_CONFIG: [UbConfig; 4] = [
    UbConfig {
        aclshmem_ub: 0,
        ub_size: 16384,
        sync_id: 0,
    },
    UbConfig {
        aclshmem_ub: 191 * 1024,
        ub_size: 64,
        sync_id: 0,
    },
    UbConfig {
        aclshmem_ub: 190 * 1024,
        ub_size: 128,
        sync_id: 0,
    },
    UbConfig {
        aclshmem_ub: 189 * 1024,
        ub_size: 128,
        sync_id: 0,
    },
];

/// One region of program data to make symmetric ([`Instance::adopt_static`]).
#[derive(Debug, Clone)]
pub struct StaticRegion {
    /// Names the region the same way on every PE (say the executable or a library's soname).
    pub label: String,
    /// Page-aligned start in this process.
    pub addr: usize,
    /// Page-aligned length.
    pub len: usize,
}

/// How the PEs of a collective allocation or free compare their requests. Either way the
/// transports are driven meanwhile (a peer may still wait on this PE, for a get say, before it
/// joins).
pub trait Agreement {
    /// Compares this PE's `call` with every other PE's: `Ok` once every PE made the same one; an
    /// error naming the difference otherwise, on every PE.
    fn agree(&self, inst: &Instance, call: &LibraryCall) -> Result<()>;
    /// Returns once every PE arrived.
    fn barrier(&self, inst: &Instance) -> Result<()>;
}

/// A collective call of the library's own that the PEs compare ([`Agreement`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryCall {
    Alloc(AllocRequest),
    /// A free of the block with this code: its heap kind above its offset (bits 62 and 63), or
    /// `u64::MAX` for an address in no heap.
    Free(u64),
    /// A resize in place of the block with this code (as `Free`'s) to this many bytes
    /// (OpenSHMEM's `shmem_realloc`).
    Resize(u64, u64),
}

impl LibraryCall {
    /// One byte naming the call, then its request (the same length for both).
    pub(crate) fn encode(&self) -> Vec<u8> {
        match self {
            LibraryCall::Alloc(r) => {
                let mut v = vec![0];
                v.extend_from_slice(&r.encode());
                v
            }
            LibraryCall::Free(code) => {
                let mut v = vec![1];
                v.extend_from_slice(&code.to_le_bytes());
                v.resize(19, 0);
                v
            }
            LibraryCall::Resize(code, size) => {
                let mut v = vec![2];
                v.extend_from_slice(&code.to_le_bytes());
                v.extend_from_slice(&size.to_le_bytes());
                v.resize(19, 0);
                v
            }
        }
    }

    pub(crate) fn decode(b: &[u8]) -> Option<LibraryCall> {
        match (b.first()?, b.get(1..)?) {
            (0, r) => AllocRequest::decode(r).map(LibraryCall::Alloc),
            (1, r) if r.len() == 18 => Some(LibraryCall::Free(u64::from_le_bytes(r[..8].try_into().ok()?))),
            (2, r) if r.len() == 18 => Some(LibraryCall::Resize(
                u64::from_le_bytes(r[..8].try_into().ok()?),
                u64::from_le_bytes(r[8..16].try_into().ok()?),
            )),
            _ => None,
        }
    }

    /// The message of a call (this one, on PE `me`) that other PEs made differently (`calls`, by
    /// PE; None: not a call of this kind).
    pub(crate) fn differ(&self, me: usize, calls: &[Option<LibraryCall>]) -> String {
        match self {
            LibraryCall::Alloc(_) => {
                let sizes: Vec<String> = calls
                    .iter()
                    .enumerate()
                    .take(16)
                    .map(|(pe, c)| match c {
                        Some(LibraryCall::Alloc(r)) => {
                            format!("PE {pe}: {} bytes (align {}, {:?})", r.size, r.align, r.kind)
                        }
                        Some(LibraryCall::Free(_)) => format!("PE {pe}: a free"),
                        Some(LibraryCall::Resize(_, size)) => format!("PE {pe}: a resize to {size} bytes"),
                        None => format!("PE {pe}: ?"),
                    })
                    .collect();
                format!(
                    "asymmetric allocation, every PE must request the same size: {}",
                    sizes.join(", ")
                )
            }
            LibraryCall::Free(code) => format!(
                "asymmetric free: PEs free different blocks (this PE, PE {me}, offset {:#x}; {}); nothing freed",
                code & OFFSET_BITS,
                self.other_calls(calls)
            ),
            LibraryCall::Resize(code, size) => format!(
                "asymmetric realloc: PEs resize different blocks or to different sizes (this PE, PE {me}, \
                 offset {:#x} to {size} bytes; {}); nothing changed",
                code & OFFSET_BITS,
                self.other_calls(calls)
            ),
        }
    }

    /// The first 16 PEs whose call differs from this one, each with what it asked for.
    fn other_calls(&self, calls: &[Option<LibraryCall>]) -> String {
        calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.as_ref() != Some(self))
            .take(16)
            .map(|(pe, c)| match c {
                Some(LibraryCall::Free(u64::MAX)) => format!("PE {pe} frees an address in no heap"),
                Some(LibraryCall::Free(c)) => format!("PE {pe} frees offset {:#x}", c & OFFSET_BITS),
                Some(LibraryCall::Alloc(r)) => format!("PE {pe} allocates {} bytes", r.size),
                Some(LibraryCall::Resize(c, s)) => {
                    format!("PE {pe} resizes offset {:#x} to {s} bytes", c & OFFSET_BITS)
                }
                None => format!("PE {pe} ?"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The offset bits of a [`LibraryCall::Free`] code.
pub(crate) const OFFSET_BITS: u64 = (1 << 62) - 1;

/// What an allocation call asks for; compared across PEs to catch asymmetric calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocRequest {
    pub kind: HeapKind,
    pub size: u64,
    pub align: u64,
    pub zero: bool,
}

impl AllocRequest {
    fn encode(&self) -> Vec<u8> {
        let mut v = vec![self.kind as u8, self.zero as u8];
        v.extend_from_slice(&self.size.to_le_bytes());
        v.extend_from_slice(&self.align.to_le_bytes());
        v
    }
    fn decode(b: &[u8]) -> Option<AllocRequest> {
        if b.len() != 18 {
            return None;
        }
        Some(AllocRequest {
            kind: HeapKind::from_c(b[0] as i32).ok()?,
            zero: b[1] != 0,
            size: u64::from_le_bytes(b[2..10].try_into().ok()?),
            align: u64::from_le_bytes(b[10..18].try_into().ok()?),
        })
    }
}

impl Instance {
    /// A new instance over `p` (its device heap attached to the transports, the library's own
    /// blocks reserved by [`reserve_internal`]).
    pub(crate) fn new(p: Parts) -> Instance {
        let all_direct = (0..p.n_pes).all(|pe| p.device.direct_addr(0, pe).is_some());
        let my_node = p.nodes.get(p.my_pe).copied();
        let hierarchical = !all_direct
            && p.direct_access
            && (0..p.n_pes)
                .filter(|&pe| p.nodes.get(pe).copied() == my_node)
                .all(|pe| p.device.direct_addr(0, pe).is_some());
        let teams = crate::team_table::Teams::new(p.my_pe, p.n_pes);
        let cpus = share_cpus(&p.device, cpu_table_at(p.rings), p.my_pe, &p.nodes);
        Instance {
            cpus,
            id: p.id,
            my_pe: p.my_pe,
            n_pes: p.n_pes,
            heap_size: p.heap_size,
            job: p.job,
            boot: p.boot,
            device: p.device,
            host: OnceLock::new(),
            statics: OnceLock::new(),
            routes: p.routes,
            sync_pool: p.sync_pool,
            sync_counters: p.sync_counters,
            rings: p.rings,
            limits: p.limits,
            all_direct,
            direct_access: p.direct_access,
            nodes: p.nodes,
            hierarchical,
            collective: Mutex::new(()),
            algos: p.algos,
            team_cells: teams.cells(),
            groups: Mutex::new(Vec::new()),
            teams: Mutex::new(teams),
            ub_config: Mutex::new(DEFAULT_UB_CONFIG),
            closing: AtomicBool::new(false),
            buffers: p.buffers,
            engines: p.engines,
            kernel_state: Mutex::new(None),
        }
    }

    /// Gives the bootstrap back (finalize ends it after the heaps are gone).
    pub(crate) fn into_bootstrap(self) -> Box<dyn Bootstrap> {
        let Instance {
            boot,
            cpus,
            device,
            host,
            routes,
            ..
        } = self;
        // the waits stop reading the CPU table first; then the transports: UCX unregisters the
        // heaps before they are unmapped
        drop((cpus, routes, device, host));
        boot
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The kernel layer's state for this instance (see the field); `None` until it makes it.
    pub fn kernel_state(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn std::any::Any + Send>>> {
        self.kernel_state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    pub fn my_pe(&self) -> usize {
        self.my_pe
    }

    #[inline]
    pub fn n_pes(&self) -> usize {
        self.n_pes
    }

    /// Bytes of each heap (local_mem_size + the library's extra region).
    pub fn heap_size(&self) -> usize {
        self.heap_size
    }

    pub(crate) fn boot(&self) -> &dyn Bootstrap {
        self.boot.as_ref()
    }

    pub(crate) fn device(&self) -> &SymmetricHeap {
        &self.device
    }

    /// The transports and which one reaches each PE.
    #[inline]
    pub(crate) fn routes(&self) -> &Routes {
        &self.routes
    }

    pub(crate) fn sync_pool(&self) -> usize {
        self.sync_pool
    }

    pub(crate) fn sync_counters(&self) -> usize {
        self.sync_counters
    }

    pub(crate) fn rings(&self) -> usize {
        self.rings
    }

    /// Offset of this PE's split mailbox (`team_table::SPLIT_AREA` bytes, after the rings).
    pub(crate) fn splits(&self) -> usize {
        self.rings + crate::team_table::RINGS_BYTES
    }

    /// Offset of this PE's departure notices (`team_table::DEPART_AREA` bytes, after the split
    /// mailbox; `sync::depart`).
    pub(crate) fn departures(&self) -> usize {
        self.splits() + crate::team_table::SPLIT_AREA
    }

    /// How long collective waits may last.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether every PE's heap is directly addressable from here.
    pub(crate) fn all_direct(&self) -> bool {
        self.all_direct
    }

    /// Whether barriers and collectives run hierarchically (see the field).
    pub(crate) fn hierarchical(&self) -> bool {
        self.hierarchical
    }

    /// The node of world PE `pe` (numbered by first PE, the same on every PE).
    pub(crate) fn node_of(&self, pe: usize) -> usize {
        self.nodes.get(pe).copied().unwrap_or(pe)
    }

    /// The data engines chosen at init (`data_op_engine_type`: `ACLSHMEM_DATA_OP_MTE` 0x1, `_SDMA`
    /// 0x2, `_ROCE` 0x4, `_UDMA` 0x8).
    pub fn engines(&self) -> u32 {
        self.engines
    }

    pub(crate) fn algos(&self) -> &crate::algos::Algos {
        &self.algos
    }

    /// The teams of this PE (lock held while the guard lives).
    pub(crate) fn teams(&self) -> MutexGuard<'_, crate::team_table::Teams> {
        self.teams.locked()
    }

    /// Serialises collective control-plane traffic of this instance.
    pub(crate) fn collective(&self) -> MutexGuard<'_, ()> {
        self.collective.locked()
    }

    /// The team of `handle`, or `ACLSHMEM_INVALID_PARAM`.
    ///
    /// Inlined into the callers, so the team's fields reach them in registers: a copy out of a
    /// returned value with wider loads than the stores that wrote it waits for every earlier
    /// store to reach the cache (on x86), such as a broadcast root's stores into lines its readers
    /// hold, which cost a 2-PE root most of its time per call.
    #[inline(always)]
    pub fn team(&self, handle: i32) -> Result<crate::team_table::Team> {
        match self.team_cells.get(handle) {
            Ok(Some(t)) => Ok(t),
            _ => self.team_locked(handle),
        }
    }

    /// The world team (slot 0, every PE), without a lookup.
    #[inline]
    pub fn world_team(&self) -> crate::team_table::Team {
        crate::team_table::Team {
            slot: 0,
            start: 0,
            stride: 1,
            size: self.n_pes,
            my_index: self.my_pe,
        }
    }

    /// The node groups of `team` as this PE sees them, kept for the last [`GROUPS_KEPT`] team
    /// shapes (start, stride, size: a team's members, whatever slot it has), so a collective
    /// across nodes does not walk its team's members on every call.
    pub(crate) fn groups(&self, team: &crate::team_table::Team) -> std::sync::Arc<crate::team_table::Groups> {
        let key = (team.start, team.stride, team.size);
        let mut kept = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, g)) = kept.iter().find(|(k, _)| *k == key) {
            return g.clone();
        }
        let g = std::sync::Arc::new(crate::team_table::Groups::of(
            team,
            |pe| self.node_of(pe),
            self.node_of(self.my_pe),
        ));
        if kept.len() >= GROUPS_KEPT {
            kept.remove(0);
        }
        kept.push((key, g.clone()));
        g
    }

    /// [`Instance::team`] when the slot has no team or is being changed: the locked table says.
    #[cold]
    #[inline(never)]
    fn team_locked(&self, handle: i32) -> Result<crate::team_table::Team> {
        self.teams().get(handle)
    }

    /// The lock-free part of the team table: per slot the team and this PE's counters of its
    /// small collectives.
    #[inline]
    pub(crate) fn team_cells(&self) -> &crate::team_table::TeamCells {
        &self.team_cells
    }

    /// Base address of this PE's heap of `kind`; NULL when that heap does not exist yet.
    pub fn heap_base(&self, kind: HeapKind) -> *mut u8 {
        self.heap(kind).map_or(std::ptr::null_mut(), |h| h.base())
    }

    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::Release);
    }

    /// Check of a PE number against this instance.
    #[inline]
    pub(crate) fn check_pe(&self, pe: i32) -> Result<usize> {
        if pe < 0 || pe as usize >= self.n_pes {
            return Err(Error::InvalidParam(format!(
                "pe {pe} is outside [0, {})",
                self.n_pes
            )));
        }
        Ok(pe as usize)
    }

    /// The data path's fast lookup: the address of `[addr, addr + len)` in PE `pe`'s copy when the
    /// range lies in the user part of the device heap and that copy is mapped for direct access.
    /// `None` sends the caller to the full path (other heaps, transports, every error).
    #[inline(always)]
    pub(crate) fn direct_fast(&self, addr: usize, len: usize, pe: i32) -> Option<*mut u8> {
        let off = self.device.user_offset_of(addr, len)?;
        // the table has one entry per PE, so this is the PE range check too (a negative `pe`
        // becomes a huge index)
        self.device.direct_addr(off, pe as u32 as usize)
    }

    /// The location in PE `pe`'s copy of this PE's symmetric range `[addr, addr + len)`.
    #[inline]
    pub(crate) fn remote(&self, addr: usize, len: usize, pe: i32, what: &str) -> Result<Remote<'_>> {
        let pe = self.check_pe(pe)?;
        let Some((heap, off)) = self.locate(addr, len) else {
            return Err(Error::InvalidParam(self.not_symmetric(what, addr, len)));
        };
        Ok(Remote { heap, off, pe })
    }

    /// Address of the object at symmetric `addr` in PE `pe`'s copy for ordinary loads and stores
    /// (`aclshmem_ptr`): `None` when the peer's heap is not mapped here.
    /// Any address of a heap is accepted here, the reserved region included (as in the original):
    /// the pointer is the program's to use.
    pub fn peer_ptr(&self, addr: usize, pe: i32) -> Result<Option<*mut u8>> {
        let pe = self.check_pe(pe)?;
        let statics = self.statics.get().map(Vec::as_slice).unwrap_or_default();
        let (heap, off) = [Some(&self.device), self.host.get()]
            .into_iter()
            .flatten()
            .chain(statics)
            .find_map(|h| h.offset_of(addr, 1).map(|off| (h, off)))
            .ok_or_else(|| Error::InvalidParam(self.not_symmetric("ptr", addr, 1)))?;
        Ok(heap.mapped_addr(off, pe))
    }

    /// The heap of `kind`, if it exists yet.
    #[inline]
    pub fn heap(&self, kind: HeapKind) -> Option<&SymmetricHeap> {
        match kind {
            HeapKind::Device => Some(&self.device),
            HeapKind::Host => self.host.get(),
            HeapKind::Static => self.statics.get().and_then(|v| v.first()),
        }
    }

    /// Whether `[ptr, ptr+len)` lies in a peer's copy of a heap mapped here (an `aclshmem_ptr`
    /// result for another PE of this node).
    pub fn in_peer_copy(&self, ptr: usize, len: usize) -> bool {
        self.device.in_peer_copy(ptr, len) || self.host.get().is_some_and(|h| h.in_peer_copy(ptr, len))
    }

    /// The heap holding `[ptr, ptr+len)` and the offset in it.
    #[inline]
    pub fn locate(&self, ptr: usize, len: usize) -> Option<(&SymmetricHeap, usize)> {
        if let Some(off) = self.device.user_offset_of(ptr, len) {
            return Some((&self.device, off));
        }
        if let Some(h) = self.host.get()
            && let Some(off) = h.user_offset_of(ptr, len)
        {
            return Some((h, off));
        }
        self.statics
            .get()?
            .iter()
            .find_map(|s| s.user_offset_of(ptr, len).map(|off| (s, off)))
    }

    /// Collective: makes this PE's regions of program data symmetric, in place (see
    /// [`SymmetricHeap::adopt`]). Every PE must pass the same list (same labels and lengths in the
    /// same order, addresses may differ); otherwise every PE gets `Err` and nothing is adopted.
    /// Once per instance: later calls return at once.
    pub fn adopt_static(&self, regions: &[StaticRegion]) -> Result<()> {
        let _g = self.collective();
        if self.statics.get().is_some() {
            return Ok(());
        }
        let boot = self.boot.as_ref();
        let mine: Vec<String> = regions
            .iter()
            .map(|r| format!("{} ({} bytes)", r.label, r.len))
            .collect();
        let mine = mine.join(", ");
        let all = boot.allgather(mine.as_bytes())?;
        if let Some((pe, other)) = all
            .iter()
            .enumerate()
            .find(|(_, p)| p.as_slice() != mine.as_bytes())
        {
            return Err(Error::InvalidParam(format!(
                "the program data to make symmetric differs between PEs: PE {} has [{mine}], PE {pe} \
                 has [{}] (every PE must run the same executable with the same shared libraries \
                 loaded)",
                self.my_pe,
                String::from_utf8_lossy(other)
            )));
        }
        let mut heaps = Vec::with_capacity(regions.len());
        for (i, r) in regions.iter().enumerate() {
            let h = SymmetricHeap::adopt(boot, r.addr, r.len, i, &self.job, self.direct_access)?;
            self.routes.attach_heap(&h, boot)?;
            heaps.push(h);
        }
        let _ = self.statics.set(heaps);
        Ok(())
    }

    /// `aclshmemx_get_buffer_ptr`: the device-heap address of `ptr`, an address inside one of the
    /// program's buffers given to `aclshmemx_init_attr_with_buffers`.
    pub fn buffer_ptr(&self, ptr: usize) -> Option<*mut u8> {
        self.buffers
            .iter()
            .find(|b| ptr >= b.addr && ptr - b.addr < b.size)
            .map(|b| self.device.local_addr(b.heap_offset + (ptr - b.addr)))
    }

    /// Why `[ptr, ptr + len)` is not a user range of a symmetric heap, for error messages.
    pub(crate) fn not_symmetric(&self, what: &str, ptr: usize, len: usize) -> String {
        if let Some((h, _)) = self.locate(ptr, len) {
            // a user range of another heap than the one the call names (`aclshmemx_free(p,
            // HOST_SIDE)` of a device block)
            let heap = match h.kind {
                HeapKind::Host => "the HOST_SIDE heap",
                HeapKind::Device => "the DEVICE_SIDE heap",
                HeapKind::Static => "the program's symmetric data",
            };
            return format!("{what} {ptr:#x} (+{len} bytes) lies in {heap}, not in the heap the call names");
        }
        if self.device.offset_of(ptr, len).is_some() {
            format!(
                "{what} {ptr:#x} (+{len} bytes) lies in the library's reserved region at the start of the \
                 device heap (signal word, sync pool, counters)"
            )
        } else {
            format!("{what} {ptr:#x} (+{len} bytes) is not inside the symmetric heap")
        }
    }

    fn host_heap(&self) -> Result<&SymmetricHeap> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let boot = self.boot.as_ref();
        // collective (the first host allocation): the transports are driven meanwhile, as in
        // `allocate`
        let h = self.routes.drive_while(|| -> Result<SymmetricHeap> {
            let h = SymmetricHeap::create(
                boot,
                self.id,
                HeapKind::Host,
                self.heap_size,
                &self.job,
                self.direct_access,
            )?;
            self.routes.attach_heap(&h, boot)?;
            Ok(h)
        })?;
        Ok(self.host.get_or_init(|| h))
    }

    /// Collective allocation. Every PE must ask for the same thing; if they do not, every PE gets
    /// `Err` (and NULL) and nothing is allocated anywhere. `Ok(None)` is a silent NULL (size 0).
    pub fn allocate(&self, req: AllocRequest, how: &dyn Agreement) -> Result<Option<*mut u8>> {
        let _g = self.collective();
        how.agree(self, &LibraryCall::Alloc(req))?;
        if req.size == 0 {
            return Ok(None);
        }
        let heap = match req.kind {
            HeapKind::Device => &self.device,
            HeapKind::Host => self.host_heap()?,
            HeapKind::Static => {
                return Err(Error::InvalidParam(
                    "the program's static data is not an allocation heap".into(),
                ));
            }
        };
        if req.size > heap.size() as u64 {
            return Err(Error::InvalidParam(format!(
                "request of {} bytes exceeds the heap size of {} bytes",
                req.size,
                heap.size()
            )));
        }
        let off = heap.alloc.locked().alloc(req.size, req.align);
        let Some(off) = off else {
            return Err(Error::MallocFailed(format!(
                "no free block of {} bytes (align {}) in the {:?} heap",
                req.size, req.align, req.kind
            )));
        };
        let p = heap
            .mapped_addr(off as usize, self.my_pe)
            .ok_or_else(|| Error::Inner("own heap unmapped".into()))?;
        if req.zero {
            // SAFETY: [p, p + size) is a block just allocated inside our own mapped segment.
            unsafe { std::ptr::write_bytes(p, 0, req.size as usize) };
            // nobody may write into the block before every PE zeroed its copy
            how.barrier(self)?;
        }
        Ok(Some(p))
    }

    /// Collective resize in place of the device-heap block at `ptr` to `size` bytes (OpenSHMEM's
    /// `shmem_realloc` tries it first): true when the block now has that size without moving
    /// (shrunk, or grown into the free space right after it), false when it cannot grow there.
    /// The same answer on every PE (the allocators agree).
    pub fn resize(&self, ptr: usize, size: u64, how: &dyn Agreement) -> Result<bool> {
        let _g = self.collective();
        let found = self.device.user_offset_of(ptr, 1);
        let code = found.map_or(u64::MAX, |off| ((HeapKind::Device as u64) << 62) | off as u64);
        let agreed = how.agree(self, &LibraryCall::Resize(code, size));
        let off = found.ok_or_else(|| {
            Error::InvalidParam(format!("{}; nothing changed", self.not_symmetric("ptr", ptr, 1)))
        })?;
        agreed?;
        let fixed_end = self.buffers.last().map_or(0, |b| b.heap_offset + b.size);
        if off < fixed_end {
            return Err(Error::InvalidParam(format!(
                "{ptr:#x} lies in the user buffers of aclshmemx_init_attr_with_buffers; nothing changed"
            )));
        }
        self.device
            .alloc
            .locked()
            .resize(off as u64, size)
            .ok_or_else(|| {
                Error::InvalidParam(format!(
                    "{ptr:#x} is not the start of a live allocation; nothing changed"
                ))
            })
    }

    /// Collective free of `ptr` in the heap of `kind` (`None`: whichever heap holds it).
    pub fn free(&self, ptr: usize, kind: Option<HeapKind>, how: &dyn Agreement) -> Result<()> {
        let _g = self.collective();
        let found = match kind {
            Some(k) => self
                .heap(k)
                .and_then(|h| h.user_offset_of(ptr, 1).map(|o| (h, o))),
            None => self.locate(ptr, 1),
        };
        let code = match found {
            Some((h, off)) => ((h.kind as u64) << 62) | off as u64,
            None => u64::MAX,
        };
        let agreed = how.agree(self, &LibraryCall::Free(code));
        let (h, off) = found.ok_or_else(|| {
            Error::InvalidParam(format!("{}; nothing freed", self.not_symmetric("ptr", ptr, 1)))
        })?;
        agreed?;
        // the fixed part of the device heap (the program's buffers, and the gap before them) is
        // not the allocator's to give back: the same answer on every PE (the layout is)
        let fixed_end = self.buffers.last().map_or(0, |b| b.heap_offset + b.size);
        if h.kind == HeapKind::Device && off < fixed_end {
            return Err(Error::InvalidParam(format!(
                "{ptr:#x} lies in the user buffers of aclshmemx_init_attr_with_buffers, which cannot be \
                 freed; nothing freed"
            )));
        }
        h.alloc.locked().free(off as u64).map_err(|_| {
            Error::InvalidParam(format!(
                "{ptr:#x} is not the start of a live allocation (double or interior free); nothing freed"
            ))
        })?;
        Ok(())
    }
}

impl Instance {
    /// Records the UB scratch configuration of `engine`. RDMA and UDMA need at least 128 bytes of
    /// staging space; anything else is accepted (there is no UB on a CPU: the values are kept so
    /// device-state consumers and tests can read them back).
    pub fn set_ub_config(&self, engine: Engine, offset: u64, ub_size: u32, sync_id: u32) -> Result<()> {
        if matches!(engine, Engine::Rdma | Engine::Udma) && ub_size < ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE {
            return Err(Error::InvalidValue(format!(
                "{engine:?} ub_size {ub_size} is below the {ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE}-byte staging area"
            )));
        }
        let offset = i64::try_from(offset)
            .map_err(|_| Error::InvalidValue(format!("UB offset {offset} is too large")))?;
        self.ub_config.locked()[engine as usize] = UbConfig {
            aclshmem_ub: offset,
            ub_size,
            sync_id,
        };
        Ok(())
    }

    /// The recorded UB configuration of `engine`.
    pub fn ub_config(&self, engine: Engine) -> UbConfig {
        self.ub_config.locked()[engine as usize]
    }
}

//! One initialised instance: its bootstrap, its heaps and the collective allocation protocol.

use std::sync::{Mutex, OnceLock};

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::{HeapKind, SymmetricHeap};
use aclshmem_abi::{ACLSHMEM_RDMA_MTE_STAGING_UB_SIZE, SYNC_COUNTERS_SIZE, SYNC_POOL_SIZE, UbConfig};

/// Bytes the library takes from the device heap at init (signal word, sync pool, sync counters), as
/// the original does: users can still allocate `local_mem_size` bytes.
pub const SIGNAL_WORD_SIZE: u64 = 512;

pub struct Instance {
    pub id: u64,
    pub my_pe: usize,
    pub n_pes: usize,
    pub heap_size: usize,
    pub job: String,
    pub boot: Box<dyn Bootstrap>,
    pub device: SymmetricHeap,
    /// The HOST_SIDE heap, created by the first HOST_SIDE allocation (collective).
    pub host: OnceLock<SymmetricHeap>,
    /// Offset of the sync pool (per-team barrier state) in the device heap.
    pub sync_pool: usize,
    /// True when every PE is on this node, so barriers can run in shared memory.
    pub all_local: bool,
    /// Collective calls from several threads at once are not supported; this keeps them from
    /// interleaving their control-plane messages if a program tries.
    pub collective: Mutex<()>,
    /// Collective algorithms chosen at init.
    pub algos: crate::collectives::Algos,
    /// The teams this PE belongs to.
    pub teams: Mutex<crate::team::Teams>,
    /// UB scratch configuration per engine (MTE, SDMA, RDMA, UDMA), recorded by the setters.
    pub ub_config: Mutex<[UbConfig; 4]>,
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
    /// Reserves the library's own blocks at the start of the device heap (same order as the original).
    pub fn reserve_internal(&mut self) -> Result<()> {
        let mut a = self.device.alloc.lock().unwrap_or_else(|e| e.into_inner());
        let fail = || Error::Inner("the device heap cannot hold the library's sync areas".into());
        a.alloc(SIGNAL_WORD_SIZE, 16).ok_or_else(fail)?;
        self.sync_pool = a.alloc(SYNC_POOL_SIZE as u64, 64).ok_or_else(fail)? as usize;
        a.alloc(SYNC_COUNTERS_SIZE as u64, 64).ok_or_else(fail)?;
        Ok(())
    }

    /// The heap of `kind`, if it exists yet.
    #[inline]
    pub fn heap(&self, kind: HeapKind) -> Option<&SymmetricHeap> {
        match kind {
            HeapKind::Device => Some(&self.device),
            HeapKind::Host => self.host.get(),
        }
    }

    /// The heap holding `[ptr, ptr+len)` and the offset in it.
    #[inline]
    pub fn locate(&self, ptr: usize, len: usize) -> Option<(&SymmetricHeap, usize)> {
        if let Some(off) = self.device.offset_of(ptr, len) {
            return Some((&self.device, off));
        }
        let h = self.host.get()?;
        h.offset_of(ptr, len).map(|off| (h, off))
    }

    fn host_heap(&self) -> Result<&SymmetricHeap> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let h = SymmetricHeap::create(self.boot.as_ref(), HeapKind::Host, self.heap_size, &self.job)?;
        Ok(self.host.get_or_init(|| h))
    }

    /// Collective allocation. Every PE must ask for the same thing; if they do not, every PE gets
    /// `Err` (and NULL) and nothing is allocated anywhere. `Ok(None)` is a silent NULL (size 0).
    pub fn allocate(&self, req: AllocRequest) -> Result<Option<*mut u8>> {
        let _g = self.collective.lock().unwrap_or_else(|e| e.into_inner());
        let parts = self.boot.allgather(&req.encode())?;
        let reqs: Vec<Option<AllocRequest>> = parts.iter().map(|p| AllocRequest::decode(p)).collect();
        if reqs.iter().any(|r| *r != Some(req)) {
            let sizes: Vec<String> = reqs
                .iter()
                .enumerate()
                .take(16)
                .map(|(pe, r)| match r {
                    Some(r) => format!("PE {pe}: {} bytes (align {}, {:?})", r.size, r.align, r.kind),
                    None => format!("PE {pe}: ?"),
                })
                .collect();
            return Err(Error::InvalidParam(format!(
                "asymmetric allocation, every PE must request the same size: {}",
                sizes.join(", ")
            )));
        }
        if req.size == 0 {
            return Ok(None);
        }
        let heap = match req.kind {
            HeapKind::Device => &self.device,
            HeapKind::Host => self.host_heap()?,
        };
        if req.size > heap.size() as u64 {
            return Err(Error::InvalidParam(format!(
                "request of {} bytes exceeds the heap size of {} bytes",
                req.size,
                heap.size()
            )));
        }
        let off = heap
            .alloc
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(req.size, req.align);
        let Some(off) = off else {
            return Err(Error::MallocFailed(format!(
                "no free block of {} bytes (align {}) in the {:?} heap",
                req.size, req.align, req.kind
            )));
        };
        let p = heap
            .peer_addr(off as usize, self.my_pe)
            .ok_or_else(|| Error::Inner("own heap unmapped".into()))?;
        if req.zero {
            // SAFETY: [p, p + size) is a block just allocated inside our own mapped segment.
            unsafe { std::ptr::write_bytes(p, 0, req.size as usize) };
            // nobody may write into the block before every PE zeroed its copy
            self.boot.barrier()?;
        }
        Ok(Some(p))
    }

    /// Collective free of `ptr` in the heap of `kind` (`None`: whichever heap holds it).
    pub fn free(&self, ptr: usize, kind: Option<HeapKind>) -> Result<()> {
        let _g = self.collective.lock().unwrap_or_else(|e| e.into_inner());
        let found = match kind {
            Some(k) => self.heap(k).and_then(|h| h.offset_of(ptr, 1).map(|o| (h, o))),
            None => self.locate(ptr, 1),
        };
        let code = match found {
            Some((h, off)) => ((h.kind as u64) << 62) | off as u64,
            None => u64::MAX,
        };
        let parts = self.boot.allgather(&code.to_le_bytes())?;
        let (h, off) = found.ok_or_else(|| {
            Error::InvalidParam(format!(
                "{ptr:#x} is not inside the symmetric heap; nothing freed"
            ))
        })?;
        if parts.iter().any(|p| p.as_slice() != code.to_le_bytes()) {
            return Err(Error::InvalidParam(format!(
                "asymmetric free: PEs free different blocks (this PE offset {off:#x}); nothing freed"
            )));
        }
        h.alloc
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free(off as u64)
            .map_err(|_| {
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
        self.ub_config.lock().unwrap_or_else(|e| e.into_inner())[engine as usize] = UbConfig {
            aclshmem_ub: offset,
            ub_size,
            sync_id,
        };
        Ok(())
    }

    /// The recorded UB configuration of `engine`.
    pub fn ub_config(&self, engine: Engine) -> UbConfig {
        self.ub_config.lock().unwrap_or_else(|e| e.into_inner())[engine as usize]
    }
}

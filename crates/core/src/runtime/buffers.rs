//! `aclshmemx_init_attr_with_buffers`: device buffers the program mapped itself (`aclrtMallocPhysical`
//! + `aclrtMapMem`) become a fixed part of the device heap, at the same offsets on every PE.
//!
//! Layout: the heap is `ACLSHMEM_EXTRA_SIZE + local_mem_size` bytes as usual (the library's region,
//! then what `aclshmem_malloc` hands out), followed by the buffers in descriptor order. Their part
//! of the heap is a second view of the program's physical memory, not a copy: the ACL runtime
//! (`aclshimPhysicalBacking` of the CPU libascendcl) names the memory behind each buffer, this PE maps
//! it there, and the PEs of the node map it into their views of this PE's heap. Peers on other nodes
//! reach it through the network transport like any heap memory. `aclshmemx_get_buffer_ptr` turns
//! an address of a buffer into its address in the heap.

use std::os::fd::OwnedFd;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::instance::Placed;
use aclshmem_abi::{
    ACLSHMEM_DATA_OP_MTE, ACLSHMEM_DATA_OP_UDMA, ACLSHMEM_MAX_LOCAL_SIZE, ACLSHMEM_MAX_USER_BUFFERS,
    ACLSHMEM_PAGE_SIZE, BufferDesc, InitAttr,
};

/// Size and alignment unit of the buffers (the ACL runtime's allocation granularity).
const GRANULARITY: u64 = 2 << 20;

/// One buffer, checked, with the memory behind it.
pub(crate) struct Prepared {
    pub addr: usize,
    pub size: usize,
    pub fd: OwnedFd,
    pub offset: u64,
}

/// The checks that need no other PE, in the original's order (attributes, then each descriptor,
/// then the memory behind it); `attr` has passed the attribute checks of init (with a zero
/// `local_mem_size` allowed).
pub(crate) fn prepare(descs: &[BufferDesc], attr: &InitAttr) -> Result<Vec<Prepared>> {
    if descs.is_empty() {
        return Err(Error::InvalidParam("buffer_count is 0".into()));
    }
    if descs.len() > ACLSHMEM_MAX_USER_BUFFERS {
        return Err(Error::InvalidValue(format!(
            "buffer_count {} exceeds {ACLSHMEM_MAX_USER_BUFFERS}",
            descs.len()
        )));
    }
    if !attr.local_mem_size.is_multiple_of(ACLSHMEM_PAGE_SIZE) {
        return Err(Error::InvalidParam(format!(
            "local_mem_size {} is not a multiple of ACLSHMEM_PAGE_SIZE ({ACLSHMEM_PAGE_SIZE}) with user buffers",
            attr.local_mem_size
        )));
    }
    // MTE and UDMA (alone or together), as the original's Ascend950 builds; not SDMA or RoCE
    let engine = attr.option_attr.data_op_engine_type;
    if engine == 0 || engine & !(ACLSHMEM_DATA_OP_MTE | ACLSHMEM_DATA_OP_UDMA) != 0 {
        return Err(Error::NotSupported(format!(
            "user buffers work with the MTE and UDMA engines only (data_op_engine_type {engine:#x})"
        )));
    }
    let mut total = attr.local_mem_size;
    let mut ranges: Vec<(usize, usize, usize)> = Vec::with_capacity(descs.len());
    for (i, d) in descs.iter().enumerate() {
        let what = |s: String| format!("buffers[{i}]: {s}");
        if d.addr.is_null() {
            return Err(Error::InvalidParam(what("addr is NULL".into())));
        }
        if d.size == 0 || !d.size.is_multiple_of(GRANULARITY) {
            return Err(Error::InvalidParam(what(format!(
                "size {} is not a non-zero multiple of the allocation granularity ({GRANULARITY})",
                d.size
            ))));
        }
        if !d.addr.addr().is_multiple_of(4096) {
            return Err(Error::InvalidParam(what(format!(
                "addr {:p} is not page-aligned",
                d.addr
            ))));
        }
        if d.reserved.iter().any(|&r| r != 0) {
            return Err(Error::InvalidParam(what("reserved fields are not zero".into())));
        }
        // SAFETY: the descriptor's contract: NULL or a valid aclshmemx_buffer_optional_attr_t.
        let opt = unsafe { d.optional_attr.as_ref() };
        if let Some(o) = opt {
            if o.reserved.iter().any(|&r| r != 0) {
                return Err(Error::InvalidParam(what(
                    "optional_attr's reserved fields are not zero".into(),
                )));
            }
            if !o.fabric_handle.is_null() {
                return Err(Error::NotSupported(what(
                    "fabric handles are not supported on the CPU (fabric_handle must be NULL)".into(),
                )));
            }
        }
        let size =
            usize::try_from(d.size).map_err(|_| Error::InvalidValue(what("size is too large".into())))?;
        let end = d
            .addr
            .addr()
            .checked_add(size)
            .ok_or_else(|| Error::InvalidValue(what("the range overflows".into())))?;
        if let Some(j) = ranges.iter().position(|&(a, e, _)| d.addr.addr() < e && a < end) {
            return Err(Error::InvalidParam(what(format!(
                "overlaps buffers[{}]",
                ranges[j].2
            ))));
        }
        ranges.push((d.addr.addr(), end, i));
        total = total
            .checked_add(d.size)
            .filter(|&t| t <= ACLSHMEM_MAX_LOCAL_SIZE)
            .ok_or_else(|| {
                Error::InvalidValue(format!(
                    "local_mem_size plus the buffers exceed ACLSHMEM_MAX_LOCAL_SIZE ({ACLSHMEM_MAX_LOCAL_SIZE})"
                ))
            })?;
    }
    let mut out = Vec::with_capacity(descs.len());
    for (i, d) in descs.iter().enumerate() {
        // SAFETY: checked above.
        let handle = unsafe { d.optional_attr.as_ref() }
            .map(|o| o.mem_handle)
            .filter(|h| !h.is_null())
            .map(|h| h.addr());
        let size = d.size as usize;
        match crate::acl::physical_backing(d.addr.cast(), size, handle) {
            None => {
                return Err(Error::NotSupported(
                    "the process's ACL runtime cannot share its device memory (user buffers need the CPU \
                     libascendcl of this project)"
                        .into(),
                ));
            }
            Some(Err(code)) => {
                return Err(Error::InvalidParam(format!(
                    "buffers[{i}]: [{:p}, +{size}) is not device memory mapped by aclrtMapMem{} (runtime error {code})",
                    d.addr,
                    if handle.is_some() {
                        " of its mem_handle"
                    } else {
                        ""
                    }
                )));
            }
            Some(Ok((fd, offset))) => out.push(Prepared {
                addr: d.addr.addr(),
                size,
                fd,
                offset,
            }),
        }
    }
    Ok(out)
}

/// Collective: every PE must give the same number of buffers, the same size at each index and the
/// same `local_mem_size` (plain init included: no buffers); otherwise every PE gets an error naming
/// the first PE that differs: `Smem` for another `local_mem_size` (the heap layer's failure of
/// spec 8.1 step 8), `InvalidParam` for other buffers.
pub(crate) fn check_layout(boot: &dyn Bootstrap, local_mem_size: u64, buffers: &[Prepared]) -> Result<()> {
    let sizes: Vec<String> = buffers.iter().map(|b| b.size.to_string()).collect();
    let mine = format!("local_mem_size {local_mem_size}, buffers [{}]", sizes.join(", "));
    let all = boot.allgather(mine.as_bytes())?;
    if let Some((pe, other)) = all
        .iter()
        .enumerate()
        .find(|(_, o)| o.as_slice() != mine.as_bytes())
    {
        let text = format!(
            "the heap layout differs between PEs: PE {} has {mine}, PE {pe} has {} (every PE must give \
             the same local_mem_size and buffer sizes)",
            boot.my_pe(),
            String::from_utf8_lossy(other)
        );
        let size = format!("local_mem_size {local_mem_size},");
        return Err(if other.starts_with(size.as_bytes()) {
            Error::InvalidParam(text)
        } else {
            Error::Smem(text)
        });
    }
    Ok(())
}

/// Where each buffer lands: one after the other from heap offset `start`.
pub(crate) fn place(start: usize, buffers: &[Prepared]) -> Vec<Placed> {
    let mut at = start;
    buffers
        .iter()
        .map(|b| {
            let p = Placed {
                addr: b.addr,
                size: b.size,
                heap_offset: at,
            };
            at += b.size;
            p
        })
        .collect()
}

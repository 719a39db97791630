//! Virtual memory management: `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`,
//! `aclrtMallocPhysical`, `aclrtFreePhysical`, `aclrtMapMem`, `aclrtUnmapMem` (the core is
//! [`crate::vmem`]). Sizes and mapped addresses are multiples of 2 MiB; bad input returns
//! `ACL_ERROR_INVALID_PARAM` (100000) and is logged.
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::{require, status, write_out};
use crate::device;
use crate::error::{AclError, Error};
use crate::vmem;

/// `aclrtMemLocation` (acl/acl_rt.h).
#[repr(C)]
pub struct MemLocation {
    pub id: u32,
    pub kind: i32,
}

/// `aclrtPhysicalMemProp` (acl/acl_rt.h).
#[repr(C)]
pub struct PhysicalMemProp {
    pub handle_type: i32,
    pub allocation_type: i32,
    pub mem_attr: i32,
    pub location: MemLocation,
    pub reserve: u64,
}

/// `aclrtMemAccessDesc` (acl/acl_rt.h).
#[repr(C)]
pub struct MemAccessDesc {
    pub flags: i32,
    pub location: MemLocation,
    pub rsv: [u8; 12],
}

/// `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`.
const ACCESS_READWRITE: i32 = 0x3;
/// `ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM` and `_RECOMMENDED`.
const GRANULARITY_OPTIONS: [i32; 2] = [0, 1];

/// Number of `aclrtMemAttr` values (0..=17).
const MEM_ATTRS: i32 = 18;

/// `aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
/// uint64_t flags);` — reserves `size` bytes of address space (a non-zero multiple of 2 MiB),
/// aligned to `alignment` (0 or a power of two; at least 2 MiB), at `expectPtr` when that range is
/// free (a hint). Nothing is accessible until `aclrtMapMem`. `flags` 0 (1, the 1 GiB page hint, is
/// accepted and ignored). NULL `virPtr`, bad size/alignment/flags → 100000.
///
/// # Safety
/// `virPtr` must be NULL or valid for a write of `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> AclError {
    status("aclrtReserveMemAddress", || {
        require(virPtr, "virPtr")?;
        if flags > 1 {
            return Err(Error::invalid_param(format!("flags {flags} is not 0 or 1")));
        }
        let addr = vmem::reserve(size, alignment, expectPtr.addr())?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(virPtr, "virPtr", std::ptr::with_exposed_provenance_mut(addr)) }
    })
}

/// `aclError aclrtReleaseMemAddress(void *virPtr);` — releases a reservation (its start address).
/// Not a reservation, or parts of it still mapped → 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> AclError {
    status("aclrtReleaseMemAddress", || {
        require(virPtr, "virPtr")?;
        vmem::release(virPtr.addr())
    })
}

/// `aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const
/// aclrtPhysicalMemProp *prop, uint64_t flags);` — `size` bytes (a non-zero multiple of 2 MiB) of
/// zero-filled memory that `aclrtMapMem` maps into reserved ranges (several views of one object
/// share its bytes). `prop`: handle type `ACL_MEM_HANDLE_TYPE_NONE`, allocation type
/// `ACL_MEM_ALLOCATION_TYPE_PINNED`, any `aclrtMemAttr`, location host (id ignored) or an existing
/// device. NULL arguments, bad size/properties, `flags` not 0 → 100000; out of memory → 207001.
///
/// # Safety
/// `handle` must be NULL or valid for a write of a pointer; `prop` NULL or a valid
/// `aclrtPhysicalMemProp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut *mut c_void,
    size: usize,
    prop: *const PhysicalMemProp,
    flags: u64,
) -> AclError {
    status("aclrtMallocPhysical", || {
        require(handle, "handle")?;
        require(prop, "prop")?;
        if flags != 0 {
            return Err(Error::invalid_param(format!("flags {flags} is not 0")));
        }
        // SAFETY: non-NULL and valid per this function's contract.
        let p = unsafe { &*prop };
        if p.handle_type != 0 {
            return Err(Error::invalid_param(format!(
                "handleType {} is not ACL_MEM_HANDLE_TYPE_NONE",
                p.handle_type
            )));
        }
        if p.allocation_type != 0 {
            return Err(Error::invalid_param(format!(
                "allocationType {} is not ACL_MEM_ALLOCATION_TYPE_PINNED",
                p.allocation_type
            )));
        }
        if !(0..MEM_ATTRS).contains(&p.mem_attr) {
            return Err(Error::invalid_param(format!(
                "memAttr {} is not an aclrtMemAttr",
                p.mem_attr
            )));
        }
        match p.location.kind {
            vmem::LOCATION_HOST => {}
            vmem::LOCATION_DEVICE => {
                let id = i32::try_from(p.location.id).unwrap_or(i32::MAX);
                device::check_device(id).map_err(|_| {
                    Error::invalid_param(format!("location id {} is not a device", p.location.id))
                })?;
            }
            other => {
                return Err(Error::invalid_param(format!(
                    "location type {other} is neither host (0) nor device (1)"
                )));
            }
        }
        let h = vmem::malloc_physical(size)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(handle, "handle", std::ptr::with_exposed_provenance_mut(h)) }
    })
}

/// `aclError aclrtFreePhysical(aclrtDrvMemHandle handle);` — frees a physical allocation. Unknown
/// handle, or still mapped → 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreePhysical(handle: *mut c_void) -> AclError {
    status("aclrtFreePhysical", || {
        require(handle, "handle")?;
        vmem::free_physical(handle.addr())
    })
}

/// `aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
/// uint64_t flags);` — maps all of `handle` (`size` = its size, `offset` 0, `flags` 0) at `virPtr`,
/// a 2 MiB-aligned address inside a reserved range not overlapping another mapping; then readable
/// and writable. Any rule broken, unknown handle → 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: *mut c_void,
    flags: u64,
) -> AclError {
    status("aclrtMapMem", || {
        require(virPtr, "virPtr")?;
        require(handle, "handle")?;
        if offset != 0 {
            return Err(Error::invalid_param(format!("offset {offset} is not 0")));
        }
        if flags != 0 {
            return Err(Error::invalid_param(format!("flags {flags} is not 0")));
        }
        vmem::map(virPtr.addr(), size, handle.addr())
    })
}

/// `aclError aclrtMemMapSelectedLink(void *virPtrDst, size_t size, void *virPtrSrc, uint32_t
/// linkIdx);` — maps at `virPtrDst` (inside a reservation, 2 MiB aligned, not overlapping a
/// mapping; `size` a non-zero multiple of 2 MiB) the memory mapped at `virPtrSrc`, shared memory of
/// this process such as a peer PE's heap as `aclshmem_ptr` returns it: a second view of the same
/// bytes. The link (`ACL_RT_MEM_LINK_IDX_0` SIO, `_1` HCCS) picks the hardware path on the device;
/// on the CPU both are the same and any index is accepted. `aclrtUnmapMem(virPtrDst)` undoes it.
/// NULL pointers, a rule broken, a source that is not one shared mapping → 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapSelectedLink(
    virPtrDst: *mut c_void,
    size: usize,
    virPtrSrc: *mut c_void,
    linkIdx: u32,
) -> AclError {
    status("aclrtMemMapSelectedLink", || {
        require(virPtrDst, "virPtrDst")?;
        require(virPtrSrc, "virPtrSrc")?;
        let _ = linkIdx;
        vmem::map_alias(virPtrDst.addr(), size, virPtrSrc.addr())
    })
}

/// `aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);` — lets the
/// current device reach `peerDeviceId`'s memory. Every emulated device shares the host's memory,
/// so this only checks its arguments: `flags` must be 0 (else 100000), the peer must exist
/// (else 107001) and differ from the current device (else 100000), which must be set (else
/// 107002).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> AclError {
    status("aclrtDeviceEnablePeerAccess", || {
        if flags != 0 {
            return Err(Error::invalid_param(format!("flags {flags} is not 0")));
        }
        device::check_device(peerDeviceId)?;
        let current = device::current_device()?;
        if current == peerDeviceId {
            return Err(Error::invalid_param(format!(
                "peerDeviceId {peerDeviceId} is the current device"
            )));
        }
        Ok(())
    })
}

/// `aclError aclrtUnmapMem(void *virPtr);` — undoes the `aclrtMapMem` at `virPtr` (the range
/// stays reserved and becomes inaccessible). Not the start of a mapping → 100000.
///
/// # Safety
/// Nothing (no queued task either) may still use the mapped range.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnmapMem(virPtr: *mut c_void) -> AclError {
    status("aclrtUnmapMem", || {
        require(virPtr, "virPtr")?;
        vmem::unmap(virPtr.addr())
    })
}

/// `aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions
/// option, size_t *granularity);` — the size unit of physical allocations and mappings: 2 MiB for
/// both `ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM` and `_RECOMMENDED`. NULL pointers, another option →
/// 100000.
///
/// # Safety
/// `prop` must be NULL or a valid `aclrtPhysicalMemProp`; `granularity` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *const PhysicalMemProp,
    option: i32,
    granularity: *mut usize,
) -> AclError {
    status("aclrtMemGetAllocationGranularity", || {
        require(prop, "prop")?;
        require(granularity, "granularity")?;
        if !GRANULARITY_OPTIONS.contains(&option) {
            return Err(Error::invalid_param(format!(
                "option {option} is neither ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM (0) nor _RECOMMENDED (1)"
            )));
        }
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(granularity, "granularity", vmem::GRANULARITY) }
    })
}

/// `aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count);`
/// — grants access to `[virPtr, virPtr + size)`, which must lie inside one `aclrtMapMem` mapping.
/// Mappings are readable and writable from the start on the CPU, so this only checks: `count`
/// descriptors, each `ACL_RT_MEM_ACCESS_FLAGS_READWRITE` for the host or an existing device. NULL
/// pointers, `count` 0, anything else → 100000.
///
/// # Safety
/// `desc` must be NULL or point to `count` valid `aclrtMemAccessDesc`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetAccess(
    virPtr: *mut c_void,
    size: usize,
    desc: *mut MemAccessDesc,
    count: usize,
) -> AclError {
    status("aclrtMemSetAccess", || {
        require(virPtr, "virPtr")?;
        require(desc, "desc")?;
        if count == 0 {
            return Err(Error::invalid_param("count is 0"));
        }
        if !desc.is_aligned() {
            return Err(Error::invalid_param(format!("desc {desc:p} is not aligned")));
        }
        if count > isize::MAX as usize / std::mem::size_of::<MemAccessDesc>() {
            return Err(Error::invalid_param(format!(
                "count {count} is not a number of descriptors"
            )));
        }
        // SAFETY: `count` valid descriptors per this function's contract.
        let descs = unsafe { std::slice::from_raw_parts(desc, count) };
        for d in descs {
            if d.flags != ACCESS_READWRITE {
                return Err(Error::invalid_param(format!(
                    "flags {:#x} is not ACL_RT_MEM_ACCESS_FLAGS_READWRITE (0x3)",
                    d.flags
                )));
            }
            match d.location.kind {
                vmem::LOCATION_HOST => {}
                vmem::LOCATION_DEVICE => {
                    let id = i32::try_from(d.location.id).unwrap_or(i32::MAX);
                    device::check_device(id).map_err(|_| {
                        Error::invalid_param(format!("location id {} is not a device", d.location.id))
                    })?;
                }
                other => {
                    return Err(Error::invalid_param(format!(
                        "location type {other} is neither host (0) nor device (1)"
                    )));
                }
            }
        }
        vmem::check_mapped(virPtr.addr(), size)
    })
}

/// Shim extension (`acl/acl_shim.h`), `int aclshimPhysicalBacking(const void *ptr, size_t size,
/// void *handle, int *fd, uint64_t *offset);`: when `[ptr, ptr + size)` lies inside one
/// `aclrtMapMem` mapping (of `handle`, when not NULL), writes a new descriptor of the physical
/// memory behind it (the caller closes it) and the range's offset in that memory, and returns 0;
/// else returns 100000 (logged). libaclshmem maps user buffers given to
/// `aclshmemx_init_attr_with_buffers` into its symmetric heap with it.
///
/// # Safety
/// `fd` and `offset` must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshimPhysicalBacking(
    ptr: *const c_void,
    size: usize,
    handle: *mut c_void,
    fd: *mut libc::c_int,
    offset: *mut u64,
) -> AclError {
    status("aclshimPhysicalBacking", || {
        require(ptr, "ptr")?;
        require(fd, "fd")?;
        require(offset, "offset")?;
        let want = (!handle.is_null()).then(|| handle.addr());
        let (d, off, _) = vmem::backing(ptr.addr(), size, want)?;
        // SAFETY: both valid for writes per this function's contract.
        unsafe {
            write_out(offset, "offset", off as u64)?;
            write_out(fd, "fd", d)
        }
    })
}

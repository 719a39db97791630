//! "Device" and pinned-host memory: both are ordinary host memory, tracked so a free of a pointer
//! that did not come from the matching allocator is an error instead of heap corruption.

use std::alloc::{self, Layout};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::config;
use crate::error::{Error, Result, code};

/// Start alignment of every allocation (the real runtime guarantees 64 bytes).
pub const ALIGN: usize = 64;

/// Which allocator a block came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `aclrtMalloc` on this device.
    Device(i32),
    /// `aclrtMallocHost`.
    Host,
}

/// Blocks of at least this many bytes are their own anonymous mappings: their zero pages cost
/// nothing until touched (a 192 MiB `aclrtMalloc` + `aclrtFree` took 0.14 s when zero-filled
/// through the allocator), and they start on a page.
const MAP_MIN: usize = 1 << 20;

struct Block {
    layout: Layout,
    /// Length of the block's own mapping ([`MAP_MIN`] and up), or None (from the allocator).
    mapped: Option<usize>,
    /// Bytes the program asked for (the layout adds padding).
    size: usize,
    kind: Kind,
}

#[derive(Default)]
struct Table {
    blocks: HashMap<usize, Block>,
    device_bytes: HashMap<i32, usize>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Bytes actually reserved for a request: rounded up to 32 plus 32 bytes of slack, as the real
/// runtime does for device memory.
fn padded(size: usize) -> Option<usize> {
    size.checked_add(31)
        .map(|s| s & !31)
        .and_then(|s| s.checked_add(32))
}

/// Allocates `size` zero-filled bytes, 64-byte aligned. `size == 0` → `ACL_ERROR_INVALID_PARAM`;
/// out of memory → `ACL_ERROR_RT_MEMORY_ALLOCATION`.
pub fn allocate(size: usize, kind: Kind) -> Result<*mut u8> {
    if size == 0 {
        return Err(Error::invalid_param("size is 0"));
    }
    let oom = || {
        Error::new(
            code::RT_MEMORY_ALLOCATION,
            format!("cannot allocate {size} bytes"),
        )
    };
    let layout = padded(size)
        .and_then(|n| Layout::from_size_align(n, ALIGN).ok())
        .ok_or_else(oom)?;
    let mapped = (layout.size() >= MAP_MIN).then(|| layout.size().next_multiple_of(page_size()));
    let ptr = match mapped {
        // SAFETY: a fresh private anonymous mapping of a non-zero length; no existing memory is
        // touched.
        Some(len) => unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                std::ptr::null_mut()
            } else {
                p.cast::<u8>()
            }
        },
        // SAFETY: the layout has a non-zero size.
        None => unsafe { alloc::alloc_zeroed(layout) },
    };
    if ptr.is_null() {
        return Err(oom());
    }
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    if let Kind::Device(d) = kind {
        *t.device_bytes.entry(d).or_default() += layout.size();
    }
    t.blocks.insert(
        ptr.expose_provenance(),
        Block {
            layout,
            mapped,
            size,
            kind,
        },
    );
    Ok(ptr)
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// Frees the block at address `addr` from [`allocate`] with the same allocator family (`host`
/// selects `Kind::Host`; otherwise any device).
/// NULL → `ACL_ERROR_INVALID_PARAM`; unknown pointer or wrong family → `ACL_ERROR_RT_MEMORY_FREE`.
pub fn free(addr: usize, host: bool) -> Result<()> {
    let ptr = std::ptr::with_exposed_provenance_mut::<u8>(addr);
    if ptr.is_null() {
        return Err(Error::invalid_param("pointer is NULL"));
    }
    let block = {
        let mut guard = table();
        let t = guard.get_or_insert_with(Table::default);
        match t.blocks.get(&addr) {
            Some(b) if (b.kind == Kind::Host) == host => {}
            Some(_) => {
                let other = if host { "aclrtMalloc" } else { "aclrtMallocHost" };
                return Err(Error::new(
                    code::RT_MEMORY_FREE,
                    format!("{ptr:p} was allocated by {other}"),
                ));
            }
            None => {
                return Err(Error::new(
                    code::RT_MEMORY_FREE,
                    format!("{ptr:p} is not a live allocation"),
                ));
            }
        }
        let b = t.blocks.remove(&addr).expect("checked above");
        if let Kind::Device(d) = b.kind
            && let Some(used) = t.device_bytes.get_mut(&d)
        {
            *used = used.saturating_sub(b.layout.size());
        }
        b
    };
    match block.mapped {
        // SAFETY: `addr` starts the block's own mapping of `len` bytes from `allocate`, still live
        // (it is removed from the table above, so it cannot be unmapped twice).
        Some(len) => unsafe {
            libc::munmap(ptr.cast(), len);
        },
        // SAFETY: `addr` is the exposed address of a pointer `alloc_zeroed` returned with exactly
        // this layout, still live (removed from the table above, so it cannot be freed twice).
        None => unsafe { alloc::dealloc(ptr, block.layout) },
    }
    Ok(())
}

/// Usable size of a live allocation starting at `ptr`, if any.
pub fn allocation_size(addr: usize) -> Option<usize> {
    table().as_ref()?.blocks.get(&addr).map(|b| b.layout.size())
}

/// Whether `[addr, addr + len)` lies inside the requested bytes of one live `aclrtMalloc` block.
pub fn device_range_is_live(addr: usize, len: usize) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    table().as_ref().is_some_and(|t| {
        t.blocks.iter().any(|(&base, b)| {
            matches!(b.kind, Kind::Device(_)) && base <= addr && end <= base.saturating_add(b.size)
        })
    })
}

/// `(free, total)` bytes of a device's memory.
pub fn mem_info(device: i32) -> (usize, usize) {
    let total = config::device_mem_size();
    let used = table()
        .as_ref()
        .and_then(|t| t.device_bytes.get(&device).copied())
        .unwrap_or(0);
    (total.saturating_sub(used), total)
}

/// Number of `aclrtMemcpyKind` values `aclrtMemcpy`/`aclrtMemcpyAsync` accept (0..=5); 6 and 7
/// are declared but rejected, as by the real runtime.
pub const MEMCPY_KINDS_ACCEPTED: i32 = 6;

/// What a copy request amounts to after the runtime's parameter checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    /// Nothing to do (`count == 0` or `dst == src`).
    Nothing,
    /// Copy `count` bytes.
    Bytes(usize),
}

/// Checks a memcpy in the real runtime's order: `count == 0` → nothing; NULL → 100000; kind outside
/// 0..=5 → 100000; `count > dest_max` → 107000; `dst == src` → nothing.
pub fn check_copy(dst: *const u8, dest_max: usize, src: *const u8, count: usize, kind: i32) -> Result<Copy> {
    if count == 0 {
        return Ok(Copy::Nothing);
    }
    if dst.is_null() || src.is_null() {
        return Err(Error::invalid_param(if dst.is_null() {
            "dst is NULL"
        } else {
            "src is NULL"
        }));
    }
    if !(0..MEMCPY_KINDS_ACCEPTED).contains(&kind) {
        return Err(Error::invalid_param(format!("invalid aclrtMemcpyKind {kind}")));
    }
    if count > dest_max {
        return Err(Error::rt_param(format!(
            "count {count} exceeds destMax {dest_max}"
        )));
    }
    check_range(dst, count, "dst")?;
    check_range(src, count, "src")?;
    Ok(if dst == src {
        Copy::Nothing
    } else {
        Copy::Bytes(count)
    })
}

/// Checks a memset: `count == 0` → nothing; NULL → 100000; `count > max_count` → 107000.
pub fn check_set(dst: *const u8, max_count: usize, count: usize) -> Result<Copy> {
    if count == 0 {
        return Ok(Copy::Nothing);
    }
    if dst.is_null() {
        return Err(Error::invalid_param("devPtr is NULL"));
    }
    if count > max_count {
        return Err(Error::rt_param(format!(
            "count {count} exceeds maxCount {max_count}"
        )));
    }
    check_range(dst, count, "devPtr")?;
    Ok(Copy::Bytes(count))
}

/// `count` bytes from `p` can be memory at all: no more than `isize::MAX` and not past the end of
/// the address space (a larger count is a wrong argument, not a buffer) → 107000.
fn check_range(p: *const u8, count: usize, what: &str) -> Result<()> {
    if count > isize::MAX as usize || (p as usize).checked_add(count).is_none() {
        return Err(Error::rt_param(format!(
            "{count} bytes from {what} {p:p} exceed the address space"
        )));
    }
    Ok(())
}

/// Copies `count` bytes (the ranges may overlap).
///
/// # Safety
/// `src` must be readable and `dst` writable for `count` bytes for the whole call.
pub unsafe fn copy_bytes(dst: *mut u8, src: *const u8, count: usize) {
    // SAFETY: forwarded from the caller; `copy` tolerates overlap.
    unsafe { std::ptr::copy(src, dst, count) };
}

/// Fills `count` bytes with the low 8 bits of `value`.
///
/// # Safety
/// `dst` must be writable for `count` bytes for the whole call.
pub unsafe fn fill_bytes(dst: *mut u8, value: i32, count: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { std::ptr::write_bytes(dst, value as u8, count) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of MAP_MIN and up are their own page-aligned mappings: zero, writable, freed once;
    /// smaller ones come from the allocator; both kinds keep the family check on free.
    #[test]
    fn large_blocks_are_zeroed_mappings() {
        for size in [100, MAP_MIN - 64, MAP_MIN, 3 * MAP_MIN + 5] {
            let p = allocate(size, Kind::Device(0)).unwrap();
            assert_eq!(p as usize % ALIGN, 0);
            if size >= MAP_MIN {
                assert_eq!(p as usize % page_size(), 0, "{size}: a mapping starts on a page");
            }
            // SAFETY: `size` bytes from `allocate`, live until the free below.
            let bytes = unsafe { std::slice::from_raw_parts_mut(p, size) };
            assert!(bytes.iter().all(|&b| b == 0), "{size}: not zero-filled");
            bytes.fill(0xa5);
            assert!(device_range_is_live(p as usize, size));
            assert!(free(p as usize, true).is_err(), "{size}: freed as host memory");
            free(p as usize, false).unwrap();
            assert!(free(p as usize, false).is_err(), "{size}: freed twice");
            assert!(!device_range_is_live(p as usize, 1));
        }
    }
}

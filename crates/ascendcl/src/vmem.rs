//! Virtual memory management (`aclrtReserveMemAddress`, `aclrtMallocPhysical`, `aclrtMapMem`, ...):
//! address ranges reserved with `mmap(PROT_NONE)`, "physical" memory as memfd objects, and
//! mappings of such an object into a reserved range with `mmap(MAP_SHARED | MAP_FIXED)`. One object
//! mapped twice gives two views of the same bytes, as on the device.
//!
//! Sizes and mapped addresses are multiples of [`GRANULARITY`] (2 MiB, the original's allocation
//! granularity). Every range, object and mapping is tracked, so bad pointers and handles are
//! refused with an error code instead of unmapping memory the program did not get from here.
//!
//! `unsafe`: the `mmap`/`munmap`/`memfd` calls, on ranges this module owns.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result, code};

/// Size and alignment unit of reservations, physical allocations and mappings.
pub const GRANULARITY: usize = 2 << 20;

/// `aclrtMemLocationType`: host memory.
pub const LOCATION_HOST: i32 = 0;
/// `aclrtMemLocationType`: device memory.
pub const LOCATION_DEVICE: i32 = 1;

struct Reservation {
    size: usize,
    /// Mapped sub-ranges: start address → (length, physical handle).
    maps: BTreeMap<usize, (usize, usize)>,
}

struct Physical {
    fd: libc::c_int,
    size: usize,
    /// Live mappings of this object.
    mapped: usize,
}

#[derive(Default)]
struct Table {
    /// start address → reservation
    reservations: BTreeMap<usize, Reservation>,
    /// handle → object
    physical: HashMap<usize, Physical>,
    next_handle: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn check_size(size: usize, what: &str) -> Result<()> {
    if size == 0 || !size.is_multiple_of(GRANULARITY) {
        return Err(Error::invalid_param(format!(
            "{what} {size} is not a non-zero multiple of {GRANULARITY} bytes (2 MiB)"
        )));
    }
    Ok(())
}

fn os_error(what: &str) -> Error {
    Error::new(
        code::RT_MEMORY_ALLOCATION,
        format!("{what}: {}", std::io::Error::last_os_error()),
    )
}

/// Reserves `size` bytes of address space, aligned to `alignment` (0 or a power of two; at least
/// [`GRANULARITY`]); at `expect` when that range is free and suitably aligned (a hint, as in the
/// original), else anywhere. Nothing is accessible until mapped.
pub fn reserve(size: usize, alignment: usize, expect: usize) -> Result<usize> {
    check_size(size, "size")?;
    if alignment != 0 && !alignment.is_power_of_two() {
        return Err(Error::invalid_param(format!(
            "alignment {alignment} is not a power of two"
        )));
    }
    let align = alignment.max(GRANULARITY);
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    let mut start = 0usize;
    if expect != 0 && expect.is_multiple_of(align) {
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
        let p = unsafe {
            libc::mmap(
                expect as *mut libc::c_void,
                size,
                libc::PROT_NONE,
                flags | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            if p as usize == expect {
                start = expect;
            } else {
                // SAFETY: a mapping just made elsewhere (old kernels ignore the flag), unused.
                unsafe { libc::munmap(p, size) };
            }
        }
    }
    if start == 0 {
        let span = size
            .checked_add(align)
            .ok_or_else(|| Error::invalid_param(format!("size {size} is too large")))?;
        // SAFETY: a new PROT_NONE mapping at an address the kernel picks.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), span, libc::PROT_NONE, flags, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(os_error("cannot reserve address space"));
        }
        let base = p as usize;
        start = base.next_multiple_of(align);
        let head = start - base;
        let tail = span - head - size;
        // SAFETY: trimming the unused ends of the mapping just made.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((start + size) as *mut libc::c_void, tail);
            }
        }
    }
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    t.reservations.insert(
        start,
        Reservation {
            size,
            maps: BTreeMap::new(),
        },
    );
    Ok(start)
}

/// Releases the reservation that starts at `addr`. Refused while any part of it is mapped.
pub fn release(addr: usize) -> Result<()> {
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    let Some(r) = t.reservations.get(&addr) else {
        return Err(Error::invalid_param(format!(
            "{addr:#x} is not the start of a reserved address range"
        )));
    };
    if !r.maps.is_empty() {
        return Err(Error::invalid_param(format!(
            "the range at {addr:#x} still has {} mapping(s): unmap them first",
            r.maps.len()
        )));
    }
    let size = r.size;
    t.reservations.remove(&addr);
    // SAFETY: the whole range was reserved here and nothing of it is mapped any more.
    unsafe { libc::munmap(addr as *mut libc::c_void, size) };
    Ok(())
}

/// Allocates a `size`-byte physical object (zero-filled) and returns its handle.
pub fn malloc_physical(size: usize) -> Result<usize> {
    check_size(size, "size")?;
    // SAFETY: a NUL-terminated name; the flags are valid.
    let fd = unsafe { libc::memfd_create(c"aclrt-physical".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: `fd` is the object just created.
    if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
        let e = os_error("cannot size the physical memory object");
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    t.next_handle += 1;
    // handles are small tagged integers, never a valid pointer to anything
    let h = 0x5_0000_0000usize + t.next_handle * 16;
    t.physical.insert(h, Physical { fd, size, mapped: 0 });
    Ok(h)
}

/// Frees a physical object. Refused while it is mapped.
pub fn free_physical(h: usize) -> Result<()> {
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    let Some(p) = t.physical.get(&h) else {
        return Err(Error::invalid_param(format!(
            "{h:#x} is not a live physical memory handle"
        )));
    };
    if p.mapped > 0 {
        return Err(Error::invalid_param(format!(
            "physical memory {h:#x} is still mapped {} time(s): unmap it first",
            p.mapped
        )));
    }
    let fd = p.fd;
    t.physical.remove(&h);
    // SAFETY: our descriptor, no mapping uses it.
    unsafe { libc::close(fd) };
    Ok(())
}

/// The reservation in which `[addr, addr + size)` can be mapped: `size` a non-zero multiple of
/// [`GRANULARITY`], `addr` aligned to it, the range inside one reserved range and overlapping none
/// of its mappings.
fn free_slot(t: &mut Table, addr: usize, size: usize) -> Result<&mut Reservation> {
    check_size(size, "size")?;
    if !addr.is_multiple_of(GRANULARITY) {
        return Err(Error::invalid_param(format!(
            "address {addr:#x} is not 2 MiB aligned"
        )));
    }
    let end = addr
        .checked_add(size)
        .ok_or_else(|| Error::invalid_param("address range overflows"))?;
    let Some((&start, r)) = t.reservations.range_mut(..=addr).next_back() else {
        return Err(Error::invalid_param(format!(
            "{addr:#x} is not inside a reserved address range"
        )));
    };
    if end > start + r.size {
        return Err(Error::invalid_param(format!(
            "[{addr:#x}, {end:#x}) does not fit in the reserved range [{start:#x}, {:#x})",
            start + r.size
        )));
    }
    let overlaps = r
        .maps
        .range(..end)
        .next_back()
        .is_some_and(|(&m, &(len, _))| m + len > addr);
    if overlaps {
        return Err(Error::invalid_param(format!(
            "[{addr:#x}, {end:#x}) overlaps an existing mapping"
        )));
    }
    Ok(r)
}

/// Maps all of physical object `h` (`size` must be its size) at `addr`, which must lie in a
/// reserved range, be [`GRANULARITY`]-aligned, and not overlap another mapping.
pub fn map(addr: usize, size: usize, h: usize) -> Result<()> {
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    let (fd, psize) = match t.physical.get(&h) {
        Some(p) => (p.fd, p.size),
        None => {
            return Err(Error::invalid_param(format!(
                "{h:#x} is not a live physical memory handle"
            )));
        }
    };
    if size != psize {
        return Err(Error::invalid_param(format!(
            "size {size} differs from the physical memory's size {psize}"
        )));
    }
    let r = free_slot(t, addr, size)?;
    // SAFETY: the range lies inside a reservation of this module with no mapping in it: replacing
    // its PROT_NONE pages touches nothing else.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_error("cannot map the physical memory"));
    }
    r.maps.insert(addr, (size, h));
    if let Some(p) = t.physical.get_mut(&h) {
        p.mapped += 1;
    }
    Ok(())
}

/// The "physical handle" of a mapping made by [`map_alias`]: it maps no physical object of this
/// module (handles are `0x5_0000_0000` and up).
const ALIAS: usize = 0;

/// `aclrtMemMapSelectedLink`: maps at `addr` (as [`map`] requires: inside a reservation, 2 MiB
/// aligned, overlapping no mapping) a second view of the `size` bytes mapped at `source` in this
/// process, which must be shared memory (a peer PE's heap as `aclshmem_ptr` returns it, or another
/// `aclrtMapMem` mapping): the same pages, as the device maps a peer's memory over the chosen link
/// (on the CPU every link is the same). [`unmap`] undoes it.
pub fn map_alias(addr: usize, size: usize, source: usize) -> Result<()> {
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    let r = free_slot(t, addr, size)?;
    if source == 0 || source.checked_add(size).is_none() {
        return Err(Error::invalid_param(format!(
            "source {source:#x} of {size} bytes is NULL or overflows"
        )));
    }
    // every page of the source range must be mapped, as one shared object: mremap with an old
    // size of 0 then maps the same pages again (the kernel's documented way to duplicate a shared
    // mapping), and refuses private or absent memory
    if !source_is_shared(source, size) {
        return Err(Error::invalid_param(format!(
            "[{source:#x}, {:#x}) is not one mapping of shared memory in this process",
            source + size
        )));
    }
    // SAFETY: the destination lies inside a reservation of this module with no mapping in it, so
    // MREMAP_FIXED replaces only our PROT_NONE pages; the source stays as it is.
    let p = unsafe {
        libc::mremap(
            source as *mut libc::c_void,
            0,
            size,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            addr as *mut libc::c_void,
        )
    };
    if p == libc::MAP_FAILED || p as usize != addr {
        return Err(os_error("cannot map the source memory again"));
    }
    r.maps.insert(addr, (size, ALIAS));
    Ok(())
}

/// Whether `[source, source + size)` is covered by one shared mapping of one object in this
/// process (`/proc/self/maps`: consecutive lines of the same inode at consecutive offsets, each
/// `s`hared).
fn source_is_shared(source: usize, size: usize) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let end = source + size;
    let mut at = source;
    // the object (device:inode) and the offset in it that `at` must have
    let mut object: Option<(String, u64)> = None;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms), Some(off), Some(dev), Some(inode)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi), Ok(off)) = (
            usize::from_str_radix(lo, 16),
            usize::from_str_radix(hi, 16),
            u64::from_str_radix(off, 16),
        ) else {
            continue;
        };
        if hi <= at || lo > at {
            continue;
        }
        if !perms.ends_with('s') || inode == "0" {
            return false;
        }
        let here = off + (at - lo) as u64;
        let id = format!("{dev}:{inode}");
        match &object {
            None => object = Some((id, here)),
            Some((o, want)) if *o == id && *want == here => {}
            Some(_) => return false,
        }
        let next = hi.min(end);
        if let Some(o) = object.as_mut() {
            o.1 = here + (next - at) as u64;
        }
        at = next;
        if at >= end {
            return true;
        }
    }
    false
}

/// Unmaps the mapping that starts at `addr`; its range goes back to reserved (inaccessible).
pub fn unmap(addr: usize) -> Result<()> {
    let mut guard = table();
    let t = guard.get_or_insert_with(Table::default);
    let found = t
        .reservations
        .range_mut(..=addr)
        .next_back()
        .and_then(|(_, r)| r.maps.remove(&addr));
    let Some((size, h)) = found else {
        return Err(Error::invalid_param(format!(
            "{addr:#x} is not the start of a mapping made by aclrtMapMem"
        )));
    };
    // SAFETY: the mapping made by `map` at this address: back to PROT_NONE anonymous pages, so the
    // range stays reserved for this module.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Error::new(
            code::RT_INTERNAL_ERROR,
            format!("cannot unmap {addr:#x}: {}", std::io::Error::last_os_error()),
        ));
    }
    if let Some(p) = t.physical.get_mut(&h) {
        p.mapped -= 1;
    }
    Ok(())
}

/// The `aclrtMapMem` mapping holding `[addr, addr + size)` entirely: (its start, its length, its
/// physical handle). `size` 0 or a range outside every mapping → error.
fn mapping_of(t: &Table, addr: usize, size: usize) -> Result<(usize, usize, usize)> {
    let end = addr
        .checked_add(size)
        .filter(|_| size > 0)
        .ok_or_else(|| Error::invalid_param(format!("size {size} at {addr:#x} is 0 or overflows")))?;
    t.reservations
        .range(..=addr)
        .next_back()
        .and_then(|(_, r)| r.maps.range(..=addr).next_back())
        .map(|(&m, &(len, h))| (m, len, h))
        .filter(|&(m, len, _)| end <= m + len)
        .ok_or_else(|| {
            Error::invalid_param(format!(
                "[{addr:#x}, {end:#x}) is not inside one mapping made by aclrtMapMem"
            ))
        })
}

/// `aclrtMemSetAccess`: `[addr, addr + size)` must lie inside one mapping; every mapping is
/// readable and writable already, so nothing changes.
pub fn check_mapped(addr: usize, size: usize) -> Result<()> {
    let guard = table();
    let t = guard.as_ref().ok_or_else(|| {
        Error::invalid_param(format!("{addr:#x} is not inside a mapping made by aclrtMapMem"))
    })?;
    mapping_of(t, addr, size).map(|_| ())
}

/// What backs `[addr, addr + size)`, which must lie inside one mapping: a new descriptor of the
/// physical object (the caller owns it), the range's offset in the object, and the object's
/// handle. With `handle` given it must be the mapped object.
pub fn backing(addr: usize, size: usize, handle: Option<usize>) -> Result<(libc::c_int, usize, usize)> {
    let guard = table();
    let t = guard.as_ref().ok_or_else(|| {
        Error::invalid_param(format!("{addr:#x} is not inside a mapping made by aclrtMapMem"))
    })?;
    let (start, _, h) = mapping_of(t, addr, size)?;
    if h == ALIAS {
        return Err(Error::invalid_param(format!(
            "{addr:#x} is mapped by aclrtMemMapSelectedLink, not from physical memory of aclrtMallocPhysical"
        )));
    }
    if let Some(want) = handle
        && want != h
    {
        return Err(Error::invalid_param(format!(
            "physical handle {want:#x} is not the memory mapped at {addr:#x} ({h:#x} is)"
        )));
    }
    let p = t
        .physical
        .get(&h)
        .ok_or_else(|| Error::invalid_param(format!("{h:#x} is not a live physical memory handle")))?;
    // SAFETY: duplicating a descriptor this module owns; the copy belongs to the caller.
    let fd = unsafe { libc::fcntl(p.fd, libc::F_DUPFD_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_error("cannot duplicate the physical memory's descriptor"));
    }
    Ok((fd, addr - start, h))
}

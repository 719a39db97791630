//! Symmetric global and static data (OpenSHMEM 1.5 section 3: "symmetric data objects" include the
//! program's global and static variables). At `shmem_init` the executable's writable data after
//! its RELRO part (`.data`, `.bss`) is moved onto shared memory in place
//! (`aclshmem_core::runtime::Instance::adopt_static`), so every same-node PE maps every other PE's
//! copy and RMA, AMOs, signals, waits and collectives accept addresses in it like heap addresses.
//! The same executable gives every PE the same layout (offsets from the segment's start), whatever
//! the address randomisation. Shared libraries' data is not included.
//!
//! `unsafe`: reading the program headers the dynamic loader reports (`dl_iterate_phdr`).

use aclshmem_core::config;
use aclshmem_core::error::Result;
use aclshmem_core::runtime;

/// `[start, end)` of the executable's writable data after RELRO, page-aligned; `None` if there is
/// none.
fn data_range() -> Option<(usize, usize)> {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info record; `data` is the `Option` below.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Option<(usize, usize)>)) };
        let base = info.dlpi_addr as usize;
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let mut lo = usize::MAX;
        let mut hi = 0usize;
        let mut relro_end = 0usize;
        for ph in phdrs {
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W != 0 {
                lo = lo.min(base + ph.p_vaddr as usize);
                hi = hi.max(base + (ph.p_vaddr + ph.p_memsz) as usize);
            }
            if ph.p_type == libc::PT_GNU_RELRO {
                relro_end = base + (ph.p_vaddr + ph.p_memsz) as usize;
            }
        }
        if hi > lo {
            *out = Some((lo.max(relro_end), hi));
        }
        1 // the first object is the executable: stop
    }
    let mut out: Option<(usize, usize)> = None;
    // SAFETY: `first` only reads the records and writes `out`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(first), (&mut out as *mut Option<(usize, usize)>).cast()) };
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    let (lo, hi) = out?;
    let (lo, hi) = (lo.next_multiple_of(page), hi.next_multiple_of(page));
    (hi > lo).then_some((lo, hi))
}

/// Collective (from `shmem_init`): makes the executable's data symmetric unless
/// `ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0`.
pub(crate) fn adopt() -> Result<()> {
    if !config::ACLSHMEM_OSHMEM_SYMMETRIC_DATA.value()? {
        return Ok(());
    }
    let inst = runtime::current()?;
    let Some((lo, hi)) = data_range() else {
        log::debug!("shmem_init: the executable has no writable data to make symmetric");
        return Ok(());
    };
    log::debug!("shmem_init: symmetric data {lo:#x}..{hi:#x} ({} bytes)", hi - lo);
    inst.adopt_static(lo, hi - lo)
}

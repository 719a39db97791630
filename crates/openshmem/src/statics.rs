//! Symmetric global and static data (OpenSHMEM 1.5 section 3: "symmetric data objects" include the
//! program's global and static variables). At `shmem_init` the writable data after the RELRO part
//! (`.data`, `.bss`) of the executable and of every shared library that was loaded by then and
//! links against libaclshmem (a `DT_NEEDED` entry `libaclshmem.so*`; libshmem.so is an ld script
//! naming it) is moved onto shared memory in place
//! (`aclshmem_core::runtime::Instance::adopt_static`), so every same-node PE maps every other PE's
//! copy (across nodes: registered with the network transport), and RMA, AMOs, signals, waits and
//! collectives accept addresses in it like heap addresses.
//!
//! The rule for libraries: the objects are taken in the loader's order (`dl_iterate_phdr`) and
//! named by soname (else file name); every PE must have the same list, which the same executable
//! gives. libaclshmem itself, libc and the other system libraries never qualify (they do not link
//! against libaclshmem). A library loaded after `shmem_init` (`dlopen`) is not symmetric:
//! `shmem_addr_accessible` returns 0 for its data.
//!
//! `unsafe`: reading the program headers and dynamic sections the dynamic loader reports
//! (`dl_iterate_phdr`).

use std::ffi::CStr;

use aclshmem_core::config;
use aclshmem_core::error::Result;
use aclshmem_core::runtime::{self, StaticRegion};

const DT_NULL: isize = 0;
const DT_NEEDED: isize = 1;
const DT_STRTAB: isize = 5;
const DT_SONAME: isize = 14;

/// `ElfW(Dyn)`: a tag and a value, each of the word size (Elf32_Dyn and Elf64_Dyn alike).
#[repr(C)]
struct Dyn {
    tag: isize,
    val: usize,
}

/// The start of the library names to look for in `DT_NEEDED`.
const LIBRARY: &str = "libaclshmem.so";

/// One loaded object's candidate region, before page alignment.
struct Found {
    label: String,
    lo: usize,
    hi: usize,
    /// `lo` is where the RELRO part ends (page-aligned by the linker; the page below is read-only
    /// after relocation), not the start of the writable segment, whose first page is all the
    /// segment's (a program linked with `-z norelro` has its data start there).
    after_relro: bool,
    /// The object holds a sanitizer runtime with its own address layout (clang links
    /// ThreadSanitizer's into the executable): its state lies in this data.
    sanitizer: bool,
}

/// Soname and `DT_NEEDED` names of an object, from its dynamic section.
///
/// # Safety
/// `dynamic` is the object's mapped `PT_DYNAMIC` (an array ended by `DT_NULL`) and `base` its load
/// bias, as the loader reported them.
unsafe fn dynamic_names(dynamic: *const Dyn, base: usize) -> (Option<String>, Vec<String>) {
    let mut strtab = 0usize;
    let mut soname = None;
    let mut needed = Vec::new();
    let mut p = dynamic;
    // SAFETY: the array ends with DT_NULL (caller's contract).
    unsafe {
        while (*p).tag != DT_NULL {
            match (*p).tag {
                DT_STRTAB => strtab = (*p).val,
                DT_SONAME => soname = Some((*p).val),
                DT_NEEDED => needed.push((*p).val),
                _ => {}
            }
            p = p.add(1);
        }
    }
    if strtab == 0 {
        return (None, Vec::new());
    }
    // glibc relocates the dynamic section's addresses on most targets; where it does not (a
    // read-only dynamic section), the value is still relative to the load bias.
    if strtab < base {
        strtab += base;
    }
    // SAFETY: offsets into the object's mapped string table, NUL-terminated names.
    let name = |off: usize| unsafe {
        CStr::from_ptr((strtab + off) as *const libc::c_char)
            .to_string_lossy()
            .into_owned()
    };
    (soname.map(name), needed.into_iter().map(name).collect())
}

/// Writable data after RELRO of the executable and of the qualifying libraries, in load order.
fn objects() -> Vec<Found> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info record; `data` is the `Vec` below.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<Found>)) };
        // the first object reported is the executable (a placeholder is pushed for it below)
        let first = out.is_empty();
        let base = info.dlpi_addr as usize;
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let mut lo = usize::MAX;
        let mut hi = 0usize;
        let mut relro_end = 0usize;
        let mut dynamic = None;
        let mut sanitizer = false;
        let entry = aclshmem_core::sanitizer_runtime().map_or(0, |(_, at)| at);
        for ph in phdrs {
            let (from, to) = (
                base + ph.p_vaddr as usize,
                base + (ph.p_vaddr + ph.p_memsz) as usize,
            );
            if ph.p_type == libc::PT_LOAD && (from..to).contains(&entry) {
                sanitizer = true;
            }
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W != 0 {
                lo = lo.min(base + ph.p_vaddr as usize);
                hi = hi.max(base + (ph.p_vaddr + ph.p_memsz) as usize);
            }
            if ph.p_type == libc::PT_GNU_RELRO {
                relro_end = base + (ph.p_vaddr + ph.p_memsz) as usize;
            }
            if ph.p_type == libc::PT_DYNAMIC {
                dynamic = Some((base + ph.p_vaddr as usize) as *const Dyn);
            }
        }
        let label = if first {
            Some("the executable".to_string())
        } else if let Some(d) = dynamic {
            // SAFETY: the object's own PT_DYNAMIC, mapped by the loader, and its load bias.
            let (soname, needed) = unsafe { dynamic_names(d, base) };
            let links = needed.iter().any(|n| n.starts_with(LIBRARY));
            let is_us = soname.as_deref().is_some_and(|s| s.starts_with(LIBRARY));
            (links && !is_us).then(|| {
                soname.unwrap_or_else(|| {
                    // SAFETY: dlpi_name is NUL-terminated (non-null for libraries).
                    let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
                    path.rsplit('/').next().unwrap_or_default().to_string()
                })
            })
        } else {
            None
        };
        if let Some(label) = label {
            out.push(Found {
                label,
                lo: lo.max(relro_end),
                hi,
                after_relro: relro_end > lo,
                sanitizer,
            });
        } else if first {
            // keep "the executable" first even when it has no writable data
            out.push(Found {
                label: String::new(),
                lo: 0,
                hi: 0,
                after_relro: false,
                sanitizer: false,
            });
        }
        0
    }
    let mut out: Vec<Found> = Vec::new();
    // SAFETY: `each` only reads the records and pushes to `out`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut out as *mut Vec<Found>).cast()) };
    out
}

/// The regions to make symmetric: page-aligned, empty ones dropped.
fn regions() -> Vec<StaticRegion> {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    objects()
        .into_iter()
        .filter(|f| !f.label.is_empty() && f.hi > f.lo)
        .filter(|f| {
            if f.sanitizer {
                // moving it would freeze the sanitizer's own state (its interceptors write there
                // while this library copies): the program would die of SIGSEGV in shmem_init
                let name = aclshmem_core::sanitizer_runtime().map_or("a sanitizer", |(n, _)| n);
                aclshmem_core::logging::write_stderr(&format!(
                    "OpenSHMEM: shmem_init: the global and static data of {} are not symmetric: {name}'s \
                     runtime is linked into it and keeps its own state there (clang links it into the \
                     program; gcc's -fsanitize=thread loads it as a shared library, which works); remote \
                     access to that data fails\n",
                    f.label
                ));
            }
            !f.sanitizer
        })
        .filter_map(|f| {
            // the writable segment's first page is mapped whole (from its page-aligned start),
            // so data starting inside it is taken with it; after RELRO the start is aligned anyway
            let lo = if f.after_relro {
                f.lo.next_multiple_of(page)
            } else {
                f.lo - f.lo % page
            };
            let hi = f.hi.next_multiple_of(page);
            (hi > lo).then_some(StaticRegion {
                label: f.label,
                addr: lo,
                len: hi - lo,
            })
        })
        .collect()
}

/// Collective (from `shmem_init`): makes the program's data symmetric unless
/// `ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0`.
pub(crate) fn adopt() -> Result<()> {
    if !config::ACLSHMEM_OSHMEM_SYMMETRIC_DATA.value()? {
        return Ok(());
    }
    let inst = runtime::current()?;
    let regions = regions();
    if regions.is_empty() {
        log::debug!("shmem_init: the program has no writable data to make symmetric");
    }
    for r in &regions {
        log::debug!(
            "shmem_init: symmetric data of {}: {:#x}..{:#x} ({} bytes)",
            r.label,
            r.addr,
            r.addr + r.len,
            r.len
        );
    }
    inst.adopt_static(&regions)
}

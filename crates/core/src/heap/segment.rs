//! POSIX shared-memory segments: create and map our own heap object, map a same-node peer's.
//!
//! This file holds `unsafe` because it calls `shm_open`, `mmap` and friends through libc; every
//! mapping is owned by a [`Segment`] and unmapped exactly once in `Drop`.

use std::ffi::CString;

use crate::error::{Error, Result};

/// One mapping of a shared-memory object.
#[derive(Debug)]
pub struct Segment {
    base: *mut u8,
    len: usize,
    name: String,
    owner: bool,
    unlinked: bool,
    /// The mapping replaced memory of the program (`adopt`): it stays mapped after the segment is
    /// dropped, because the program keeps using that memory.
    adopted: bool,
    /// An owner's descriptor of the object with a shared `flock` on it, held until the name is
    /// removed (the mapping holds the lock on after that): the sign that a live process still
    /// needs the name, which a launcher's stale-object cleanup checks (the pid in the name cannot
    /// tell from another PID namespace).
    lock: Option<std::os::fd::OwnedFd>,
}

// SAFETY: the mapping is plain shared memory; concurrent access is synchronised by the users of the
// symmetric heap exactly as for any SHMEM heap. The pointer itself never changes.
unsafe impl Send for Segment {}
// SAFETY: see above.
unsafe impl Sync for Segment {}

fn os_err(what: &str, name: &str) -> Error {
    Error::Smem(format!(
        "{what} of shared-memory object {name} failed: {}",
        std::io::Error::last_os_error()
    ))
}

/// What to say after an address reservation failed with `err`: the address-space limit
/// (`ulimit -v`) when one is set (the usual cause of ENOMEM for a reservation, which takes no
/// memory).
fn address_limit_hint(err: &std::io::Error) -> String {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a plain out-parameter.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
    if err.raw_os_error() != Some(libc::ENOMEM) || !ok || lim.rlim_cur == libc::RLIM_INFINITY {
        return String::new();
    }
    format!(
        " (the process's address space is limited to {} bytes, `ulimit -v` {}: every PE reserves \
         its heaps plus 1 GiB of alignment each, and maps the heaps of the other PEs of its node too; \
         raise the limit or use a smaller heap)",
        lim.rlim_cur,
        lim.rlim_cur / 1024
    )
}

/// Heap bases are aligned to this (`ACLSHMEM_HEAP_ALIGNMENT_SIZE`, 1 GiB), so aligning an offset
/// from the base aligns the address too, for every alignment up to 1 GiB, as in the original.
pub const BASE_ALIGN: usize = 1 << 30;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Maps `len` bytes of `fd` at `prefer` when given and free (a multiple of [`BASE_ALIGN`]),
/// otherwise at an address that is a multiple of [`BASE_ALIGN`] the system chooses: reserve
/// `len + BASE_ALIGN` of address space (no memory), map the object over its aligned part, return
/// the rest.
fn map(fd: libc::c_int, len: usize, name: &str, prefer: Option<usize>) -> Result<*mut u8> {
    let span = len.div_ceil(page_size()) * page_size();
    if let Some(at) = prefer
        .filter(|a| a.is_multiple_of(BASE_ALIGN))
        .and_then(|a| crate::util::reserve_exactly(a, span))
    {
        // SAFETY: [at, at + span) is our own reservation just made; `fd` is open.
        let mapped = unsafe { map_over(at, len, std::os::fd::BorrowedFd::borrow_raw(fd), 0) };
        if let Err(err) = mapped {
            // SAFETY: releases the reservation made above.
            unsafe { libc::munmap(at as *mut libc::c_void, span) };
            return Err(Error::Smem(format!(
                "mmap of shared-memory object {name} failed: {err}"
            )));
        }
        super::sigbus::track(at, span);
        return Ok(at as *mut u8);
    }
    let total = span + BASE_ALIGN;
    // SAFETY: an anonymous, inaccessible reservation; no existing mapping is touched.
    let reserve = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if reserve == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        return Err(Error::Smem(format!(
            "address reservation of {total} bytes for shared-memory object {name} failed: {err}{}",
            address_limit_hint(&err)
        )));
    }
    let start = reserve as usize;
    let aligned = start.next_multiple_of(BASE_ALIGN);
    // SAFETY: [aligned, aligned + span) lies inside our own reservation; `fd` is open.
    let mapped = unsafe { map_over(aligned, len, std::os::fd::BorrowedFd::borrow_raw(fd), 0) };
    if let Err(err) = mapped {
        let e = Error::Smem(format!("mmap of shared-memory object {name} failed: {err}"));
        // SAFETY: releases the whole reservation made above.
        unsafe { libc::munmap(reserve, total) };
        return Err(e);
    }
    // SAFETY: both ranges are the unused head and tail of our reservation.
    unsafe {
        if aligned > start {
            libc::munmap(reserve, aligned - start);
        }
        let tail = aligned + span;
        if start + total > tail {
            libc::munmap(tail as *mut libc::c_void, start + total - tail);
        }
    }
    super::sigbus::track(aligned, span);
    Ok(aligned as *mut u8)
}

impl Segment {
    /// Creates the object `name` (exclusive, mode 0600) of `len` bytes and maps it. With
    /// `preallocate` every page outside `hole` is reserved now (ENOSPC becomes an error here, not a
    /// SIGBUS later); `hole` is mapped over by other memory and never touched. The mapping goes at
    /// `prefer` when that range is free (see [`super::preferred_base`]).
    pub fn create(
        name: &str,
        len: usize,
        hole: std::ops::Range<usize>,
        preallocate: bool,
        prefer: Option<usize>,
    ) -> Result<Segment> {
        let cname = CString::new(name).map_err(|_| Error::Inner(format!("bad segment name {name}")))?;
        // SAFETY: cname is a valid NUL-terminated string.
        let fd = unsafe {
            libc::shm_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600,
            )
        };
        if fd < 0 {
            return Err(os_err("shm_open", name));
        }
        let cleanup = |e: Error| {
            // SAFETY: fd is open and cname valid; undo the creation on failure.
            unsafe {
                libc::close(fd);
                libc::shm_unlink(cname.as_ptr());
            }
            e
        };
        // SAFETY: fd is a valid descriptor we own.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return Err(cleanup(os_err("ftruncate", name)));
        }
        let hole = hole.start.min(len)..hole.end.clamp(hole.start.min(len), len);
        let backed = [(0, hole.start), (hole.end, len - hole.end)];
        for (from, n) in backed.into_iter().filter(|&(_, n)| preallocate && n > 0) {
            // SAFETY: fd is a valid descriptor we own.
            let rc = unsafe { libc::posix_fallocate(fd, from as libc::off_t, n as libc::off_t) };
            if rc != 0 {
                return Err(cleanup(Error::Smem(format!(
                    "reserving {len} bytes for {name} failed ({}); /dev/shm is too small for the heap: \
                     enlarge it (e.g. docker --shm-size, mount -o remount,size=...) or lower local_mem_size",
                    std::io::Error::from_raw_os_error(rc)
                ))));
            }
        }
        let base = map(fd, len, name, prefer).map_err(cleanup)?;
        // SAFETY: fd is open and ours; the segment owns it from here. A failed flock only makes
        // the object look unused to a cleanup (its pid is checked too).
        let lock = unsafe {
            libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB);
            <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd)
        };
        Ok(Segment {
            base,
            len,
            name: name.to_string(),
            owner: true,
            unlinked: false,
            adopted: false,
            lock: Some(lock),
        })
    }

    /// Moves the program's memory `[addr, addr + len)` (page-aligned, mapped, writable) onto a new
    /// shared-memory object `name`: the object is filled with the current contents, then mapped
    /// over the range in place, so the program's pointers stay valid and peers can map the object.
    /// The range stays mapped (on the unlinked object) after the segment is dropped.
    pub fn adopt(name: &str, addr: usize, len: usize) -> Result<Segment> {
        let mut tmp = Segment::create(name, len, 0..0, false, None)?;
        let cname = CString::new(name).map_err(|_| Error::Inner(format!("bad segment name {name}")))?;
        // SAFETY: plain libc calls on a NUL-terminated name.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os_err("shm_open (adopt)", name));
        }
        // other threads of the program may be writing there: they wait from the copy until the
        // mapping is in place (their writes would be lost otherwise; `freeze`)
        let window = match super::freeze::Window::open(addr, len) {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: fd is ours.
                unsafe { libc::close(fd) };
                return Err(e);
            }
        };
        // only the pages holding something are copied (the fresh object reads as zeros): a .bss
        // nobody wrote costs no shared memory until it is written (every page of it was taken from
        // /dev/shm). Their blocks are reserved first, so a full /dev/shm is an error here, not a
        // SIGBUS during the copy.
        // SAFETY: `addr..addr+len` is mapped, readable program memory, page-aligned (caller's
        // contract).
        let runs = unsafe { nonzero_runs(addr, len, page_size()) };
        let used: usize = runs.iter().map(|r| r.1).sum();
        for &(off, n) in &runs {
            // SAFETY: fd is an open descriptor of the object, which is `len` bytes long.
            let rc = unsafe { libc::posix_fallocate(fd, off as libc::off_t, n as libc::off_t) };
            if rc != 0 {
                drop(window);
                // SAFETY: fd is ours.
                unsafe { libc::close(fd) };
                return Err(Error::Smem(format!(
                    "moving the program's global and static data ({len} bytes at {addr:#x}, {used} \
                     of them in use) onto shared memory: /dev/shm has no room for it ({}); enlarge \
                     /dev/shm, or set ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0 (global and static \
                     variables are then not symmetric)",
                    std::io::Error::from_raw_os_error(rc)
                )));
            }
        }
        log::debug!("program data {addr:#x} (+{len}): {used} bytes in use copied");
        for (off, n) in runs {
            // SAFETY: both ranges lie inside `len` bytes of the program's range and of `tmp`'s
            // fresh mapping (reserved above); they do not overlap.
            unsafe { copy_words((addr + off) as *const u8, tmp.base.add(off), n) };
        }
        // SAFETY: replaces the caller's mapped, page-aligned range with the object holding the same
        // bytes (MAP_FIXED over memory the program owns; nothing else is unmapped).
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            )
        };
        let mapped = p != libc::MAP_FAILED;
        let err = (!mapped).then(|| os_err("mmap over the program's data", name));
        if window.broken() {
            log::warn!(
                "moving the program's data {addr:#x} (+{len}) onto shared memory: this thread wrote \
                 there during the move (a write made meanwhile may be lost)"
            );
        }
        drop(window);
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
        if let Some(e) = err {
            return Err(e);
        }
        // pages not copied get their memory when first written: a full /dev/shm then is a SIGBUS
        // with a message naming the remedies for program data
        super::sigbus::track_data(addr, len);
        // the temporary view goes; the object (not yet unlinked) and its lock stay for the peers
        tmp.owner = false;
        let lock = tmp.lock.take();
        drop(tmp);
        Ok(Segment {
            base: addr as *mut u8,
            len,
            name: name.to_string(),
            owner: true,
            unlinked: false,
            adopted: true,
            lock,
        })
    }

    /// Maps a peer's object `name`, which must be exactly `len` bytes.
    pub fn open_peer(name: &str, len: usize) -> Result<Segment> {
        let cname = CString::new(name).map_err(|_| Error::Inner(format!("bad segment name {name}")))?;
        // SAFETY: cname is a valid NUL-terminated string.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os_err("shm_open (peer)", name));
        }
        // SAFETY: fd is valid; st is a plain out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_size as u64 != len as u64 {
            // SAFETY: fd is open.
            unsafe { libc::close(fd) };
            return Err(Error::Smem(format!(
                "peer object {name} has {} bytes, expected {len}",
                st.st_size
            )));
        }
        let mapped = map(fd, len, name, None);
        // SAFETY: fd is open; the mapping (if any) keeps the object alive.
        unsafe { libc::close(fd) };
        Ok(Segment {
            base: mapped?,
            len,
            name: name.to_string(),
            owner: false,
            unlinked: true,
            adopted: false,
            lock: None,
        })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Removes the name (the memory stays mapped by everyone who has it). Idempotent.
    pub fn unlink(&mut self) {
        if self.owner && !self.unlinked {
            if let Ok(c) = CString::new(self.name.as_str()) {
                // SAFETY: c is a valid NUL-terminated string.
                unsafe { libc::shm_unlink(c.as_ptr()) };
            }
            self.unlinked = true;
        }
        self.lock = None;
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        self.unlink();
        if self.adopted {
            // still the program's memory (every page written by the copy, so never a SIGBUS)
            return;
        }
        super::sigbus::untrack(self.base as usize);
        // SAFETY: base/len describe a mapping made by this object and unmapped only here.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The runs `(offset, length)` of whole pages of `[addr, addr + len)` that hold a nonzero byte.
///
/// # Safety
/// The range must be mapped and readable, `addr` and `len` multiples of `page`.
unsafe fn nonzero_runs(addr: usize, len: usize, page: usize) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for off in (0..len).step_by(page) {
        // SAFETY: the caller's contract; one page, word-aligned.
        let words = unsafe { std::slice::from_raw_parts((addr + off) as *const u64, page / 8) };
        if words.iter().all(|&w| w == 0) {
            continue;
        }
        match runs.last_mut() {
            Some(last) if last.0 + last.1 == off => last.1 += page,
            _ => runs.push((off, page)),
        }
    }
    runs
}

/// Copies `len` bytes (rounded down to whole words) from `src` to `dst`, word by word with
/// volatile accesses, so never through `memcpy`: a program built with AddressSanitizer intercepts
/// `memcpy` and checks it against the red zones between its globals, and the range moved by
/// [`Segment::adopt`] is the program's whole writable data, red zones included (every ASan-built
/// OpenSHMEM program aborted in `shmem_init`).
///
/// # Safety
/// Both ranges must be valid for `len` bytes, 8-byte aligned, and must not overlap.
unsafe fn copy_words(src: *const u8, dst: *mut u8, len: usize) {
    debug_assert!((src as usize).is_multiple_of(8) && (dst as usize).is_multiple_of(8));
    let (src, dst) = (src.cast::<u64>(), dst.cast::<u64>());
    for i in 0..len / 8 {
        // SAFETY: the caller's contract; `i` stays below `len / 8`.
        unsafe { dst.add(i).write_volatile(src.add(i).read_volatile()) };
    }
}

/// Maps `len` bytes of `fd` from `offset` over `[addr, addr + len)` (shared, readable and
/// writable), replacing what was mapped there.
///
/// # Safety
/// `[addr, addr + len)` must be page-aligned address space the caller owns (a reservation, or part
/// of a [`Segment`]) that nothing reads or writes while it is replaced.
pub unsafe fn map_over(
    addr: usize,
    len: usize,
    fd: std::os::fd::BorrowedFd<'_>,
    offset: u64,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the caller's contract; MAP_FIXED replaces only the given range.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Login name of the effective user (or the numeric uid), used in object names.
pub fn user_name() -> String {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut buf = vec![0 as libc::c_char; 1024];
    // SAFETY: pwd/result are plain out-parameters, buf outlives the call and its length is passed.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as above.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
        // SAFETY: pw_name points into buf and is NUL-terminated on success.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }
            .to_string_lossy()
            .into_owned();
        if !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        {
            return name;
        }
    }
    uid.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn try_lock(file: &std::fs::File) -> bool {
        // SAFETY: flock on an open descriptor of ours.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    }

    /// An owner holds a shared lock on its object while the name exists (what `aclshmrun`'s
    /// stale-object cleanup looks for); it goes with the owner's mapping (Linux keeps a `flock`
    /// while a mapping refers to the open file, so a live PE keeps it even after the name goes).
    #[test]
    fn owners_lock_their_objects_until_the_name_goes() {
        let name = format!("/aclshmem-segtest-{}-lock", std::process::id());
        let mut seg = Segment::create(&name, 1 << 16, 0..0, false, None).unwrap();
        let file = std::fs::File::open(format!("/dev/shm{name}")).unwrap();
        assert!(!try_lock(&file), "the owner's lock is held");
        let peer = Segment::open_peer(&name, 1 << 16).unwrap();
        drop(peer);
        assert!(!try_lock(&file), "a peer's mapping leaves the owner's lock alone");
        seg.unlink();
        assert!(std::fs::metadata(format!("/dev/shm{name}")).is_err());
        drop(seg);
        assert!(try_lock(&file), "released with the mapping");
    }

    #[test]
    fn nonzero_runs_are_the_written_pages() {
        let page = page_size();
        // five pages and one more for the alignment
        let mut buf = vec![0u64; 6 * page / 8];
        let base = (buf.as_mut_ptr() as usize).next_multiple_of(page);
        let runs = || {
            // SAFETY: the five pages from `base` lie inside `buf`, alive until the end
            unsafe { nonzero_runs(base, 5 * page, page) }
        };
        let write = |at: usize, v: u8| {
            assert!(at < 5 * page);
            // SAFETY: inside the five pages of `buf`
            unsafe { ((base + at) as *mut u8).write(v) };
        };
        assert!(runs().is_empty());
        write(page + 40, 1);
        write(3 * page + 8, 1);
        assert_eq!(runs(), [(page, page), (3 * page, page)]);
        write(3 * page - 1, 9);
        assert_eq!(runs(), [(page, 3 * page)]);
        drop(buf);
    }
}

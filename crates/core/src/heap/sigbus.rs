//! A clear message instead of a bare SIGBUS when a page of symmetric memory cannot be backed.
//!
//! Heaps whose pages are allocated on first touch (`ACLSHMEM_SHM_PREALLOCATE=0`, the default of
//! the OpenSHMEM surface, as SOS and OSHMEM allocate theirs) and the program data moved onto shared
//! memory get their pages from `/dev/shm` when they are first written. If that file system is full
//! by then, the kernel answers the write with SIGBUS. Every mapping made by a
//! [`Segment`](super::segment::Segment) is recorded here; a SIGBUS whose fault address lies in one
//! of them prints one line naming the PE, the address and what to change, then ends the process
//! with the default action of SIGBUS (so launchers report the signal as before). Any other SIGBUS
//! goes to the handler that was installed before ours.
//!
//! `unsafe`: sigaction and write through libc; the handler only reads atomics and writes to
//! stderr (async-signal-safe).

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

/// Mappings tracked at once: two heaps per instance plus peers' mappings and program data.
const SLOTS: usize = 1024;

/// `[start, end)` of each recorded mapping; `start == 0`: free slot.
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Whether each recorded mapping is the program's own data moved onto shared memory (its message
/// names other remedies than a heap's).
static DATA: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
/// Serialises writers of the table (the handler only reads it).
static TABLE: Mutex<()> = Mutex::new(());
/// The PE number printed in the message (-1: not known yet).
static PE: AtomicI32 = AtomicI32::new(-1);
/// The SIGBUS action in place before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// The PE this process is, for the message.
pub fn set_pe(pe: i32) {
    PE.store(pe, Ordering::Relaxed);
}

/// Records the heap mapping `[start, start + len)`; installs the handler on first use.
pub fn track(start: usize, len: usize) {
    record(start, len, false);
}

/// Records `[start, start + len)` of the program's data moved onto shared memory
/// ([`super::segment::Segment::adopt`]).
pub fn track_data(start: usize, len: usize) {
    record(start, len, true);
}

fn record(start: usize, len: usize, data: bool) {
    install();
    let _g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = (0..SLOTS).find(|&i| STARTS[i].load(Ordering::Relaxed) == 0) {
        DATA[i].store(data, Ordering::Relaxed);
        ENDS[i].store(start + len, Ordering::Relaxed);
        STARTS[i].store(start, Ordering::Release);
    } else {
        log::debug!("SIGBUS table full: mapping {start:#x} (+{len}) not tracked");
    }
}

/// Forgets the mapping starting at `start` (before it is unmapped).
pub fn untrack(start: usize) {
    let _g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = (0..SLOTS).find(|&i| STARTS[i].load(Ordering::Relaxed) == start) {
        STARTS[i].store(0, Ordering::Release);
        ENDS[i].store(0, Ordering::Relaxed);
    }
}

/// Whether `addr` lies in a recorded mapping.
#[cfg(test)]
fn tracked(addr: usize) -> bool {
    slot_of(addr).is_some()
}

fn slot_of(addr: usize) -> Option<usize> {
    (0..SLOTS).find(|&i| {
        let s = STARTS[i].load(Ordering::Acquire);
        s != 0 && addr >= s && addr < ENDS[i].load(Ordering::Relaxed)
    })
}

fn install() {
    PREVIOUS.get_or_init(|| {
        // SAFETY: plain sigaction calls with valid, zero-initialised structures; the handler
        // below is async-signal-safe.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_sigbus as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
                old.sa_sigaction = libc::SIG_DFL;
            }
            old
        }
    });
}

/// Appends `text` to `buf` at `*n` (truncating at the end of the buffer).
fn put(buf: &mut [u8], n: &mut usize, text: &[u8]) {
    for &b in text {
        if *n < buf.len() {
            buf[*n] = b;
            *n += 1;
        }
    }
}

/// Appends `v` in base `radix` (10 or 16).
fn put_num(buf: &mut [u8], n: &mut usize, mut v: u64, radix: u64) {
    let mut digits = [0u8; 20];
    let mut k = 0;
    loop {
        digits[k] = b"0123456789abcdef"[(v % radix) as usize];
        k += 1;
        v /= radix;
        if v == 0 {
            break;
        }
    }
    while k > 0 {
        k -= 1;
        put(buf, n, &digits[k..=k]);
    }
}

/// The message for a fault at `addr` on PE `pe` (-1: unknown) in a heap or, with `data`, in the
/// program's data; returns its length in `buf`.
fn message(buf: &mut [u8], pe: i32, addr: usize, data: bool) -> usize {
    let mut n = 0;
    put(buf, &mut n, b"aclshmem: ");
    if pe >= 0 {
        put(buf, &mut n, b"PE ");
        put_num(buf, &mut n, pe as u64, 10);
        put(buf, &mut n, b": ");
    }
    put(
        buf,
        &mut n,
        b"no memory could back the symmetric-memory page at 0x",
    );
    put_num(buf, &mut n, addr as u64, 16);
    if data {
        put(
            buf,
            &mut n,
            b" (SIGBUS): it holds the program's global and static data, moved onto shared memory \
              at init, whose pages are allocated when first written, and the shared-memory file \
              system (/dev/shm) is full. Enlarge /dev/shm, or set ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0 \
              (global and static variables are then not symmetric).\n",
        );
        return n;
    }
    put(
        buf,
        &mut n,
        b" (SIGBUS): its pages are allocated on first touch and the shared-memory file system \
          (/dev/shm) is full. Enlarge /dev/shm, lower the heap size (SHMEM_SYMMETRIC_SIZE or \
          ACLSHMEM_LOCAL_MEM_SIZE), or set ACLSHMEM_SHM_PREALLOCATE=1 to reserve the pages at init.\n",
    );
    n
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // si_code > 0: raised by the kernel for a fault (not kill/sigqueue), so si_addr is meaningful
    if let Some(slot) = slot_of(addr).filter(|_| code > 0) {
        let mut buf = [0u8; 512];
        let data = DATA[slot].load(Ordering::Relaxed);
        let n = message(&mut buf, PE.load(Ordering::Relaxed), addr, data);
        // SAFETY: write and sigaction are async-signal-safe; buf holds n bytes. Returning re-runs
        // the faulting access, which now ends the process with SIGBUS's default action.
        unsafe {
            libc::write(2, buf.as_ptr().cast(), n);
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        }
        return;
    }
    let Some(prev) = PREVIOUS.get() else { return };
    // SAFETY: called from the handler with the arguments the kernel passed it.
    unsafe { chain(prev, sig, info, ctx) }
}

/// Passes signal `sig` on to `prev`, the action in place before a handler of this library: the
/// default action (a fault re-raises itself when the handler returns, a sent signal is re-sent),
/// or the previous handler, called with the same arguments.
///
/// # Safety
/// Only from a signal handler, with the arguments the kernel passed it; `prev` is the action
/// `sigaction` reported for `sig`.
pub(super) unsafe fn chain(
    prev: &libc::sigaction,
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    let h = prev.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        // SAFETY: sigaction and raise are async-signal-safe.
        unsafe {
            libc::sigaction(sig, prev, std::ptr::null_mut());
            if code <= 0 {
                libc::raise(sig);
            }
        }
    } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed as an SA_SIGINFO handler with this signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: the previous handler was installed as a plain handler with this signature.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
        f(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_finds_tracked_ranges_only() {
        let base = 0x7000_0000_0000usize;
        track(base, 4096);
        assert!(tracked(base) && tracked(base + 4095));
        assert!(!tracked(base + 4096) && !tracked(base - 1));
        untrack(base);
        assert!(!tracked(base));
    }

    #[test]
    fn the_message_names_pe_address_and_remedy() {
        let mut buf = [0u8; 512];
        let n = message(&mut buf, 3, 0x7f00_dead_b000, false);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.starts_with("aclshmem: PE 3: "), "{text}");
        assert!(text.contains("0x7f00deadb000"), "{text}");
        assert!(text.contains("/dev/shm") && text.contains("ACLSHMEM_SHM_PREALLOCATE=1"));
        assert!(text.ends_with('\n'));
        let n = message(&mut buf, -1, 0, false);
        assert!(
            std::str::from_utf8(&buf[..n])
                .unwrap()
                .starts_with("aclshmem: no memory")
        );
        // the program's data: its own remedy, not the heap's
        let n = message(&mut buf, 1, 0x1000, true);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.contains("ACLSHMEM_OSHMEM_SYMMETRIC_DATA=0"), "{text}");
        assert!(!text.contains("PREALLOCATE") && text.ends_with('\n'), "{text}");
    }
}

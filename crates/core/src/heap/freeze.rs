//! Other threads' writes while the program's data is moved onto shared memory ([`Segment::adopt`]).
//!
//! `adopt` copies a range of the program's memory into a shared-memory object and maps the object
//! over the range. A write by another thread of the program between the copy and the mapping
//! would land in the pages being replaced and be lost (a thread the program started before
//! `shmem_init`, counting into a global, lost thousands of increments). So the range is made
//! read-only for the move ([`Window`]): a thread writing there takes a SIGSEGV, whose handler
//! here waits until the move is done and returns, and the write runs again, on the new mapping.
//! Reads go on meanwhile. Any other SIGSEGV goes to the handler that was in place before. The
//! handler is installed for the move only.
//!
//! A system call writing into the range during the move fails with `EFAULT` instead (the kernel
//! raises no signal for it): the window lasts one copy of the range.
//!
//! [`Segment::adopt`]: super::segment::Segment::adopt
//!
//! `unsafe`: sigaction, mprotect and gettid through libc; the handler only reads atomics, yields
//! and calls the previous handler (async-signal-safe).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// `[LO, HI)`: the range being moved (0, 0: none).
static LO: AtomicUsize = AtomicUsize::new(0);
static HI: AtomicUsize = AtomicUsize::new(0);
/// True while the range is read-only.
static FROZEN: AtomicBool = AtomicBool::new(false);
/// The thread moving the range (a fault of its own would wait for itself).
static MOVER: AtomicI32 = AtomicI32::new(0);
/// Set when the moving thread itself wrote into the range: the range was made writable again.
static BROKEN: AtomicBool = AtomicBool::new(false);
/// The SIGSEGV action in place before the current window's (read by the handler; stored before it
/// is installed; a record is never freed, so a handler still running never reads a freed one, and
/// a new one is made only when the action changed).
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());

/// While a `Window` lives, `[addr, addr + len)` is read-only and writers wait (see the module).
pub struct Window {
    addr: usize,
    len: usize,
    previous: libc::sigaction,
}

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

impl Window {
    /// Makes `[addr, addr + len)` (page-aligned, mapped, writable) read-only, writers waiting.
    pub fn open(addr: usize, len: usize) -> Result<Window> {
        LO.store(addr, Ordering::Relaxed);
        HI.store(addr + len, Ordering::Relaxed);
        MOVER.store(gettid(), Ordering::Relaxed);
        BROKEN.store(false, Ordering::Relaxed);
        FROZEN.store(true, Ordering::Release);
        // SAFETY: sigaction with valid, zero-initialised structures; the handler is
        // async-signal-safe.
        let previous = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_segv as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut old) != 0 {
                old.sa_sigaction = libc::SIG_DFL;
            }
            // a new record only when the action differs from the kept one (init/finalize cycles
            // find the same one every time: nothing grows)
            let kept = PREVIOUS.load(Ordering::Acquire);
            let same = kept
                .as_ref()
                .is_some_and(|k| k.sa_sigaction == old.sa_sigaction && k.sa_flags == old.sa_flags);
            if !same {
                PREVIOUS.store(Box::into_raw(Box::new(old)), Ordering::Release);
            }
            if libc::sigaction(libc::SIGSEGV, &new, std::ptr::null_mut()) != 0 {
                FROZEN.store(false, Ordering::Release);
                return Err(Error::Smem(format!(
                    "sigaction(SIGSEGV) before moving the program's data: {}",
                    std::io::Error::last_os_error()
                )));
            }
            old
        };
        let w = Window { addr, len, previous };
        // SAFETY: the caller's mapped, page-aligned range.
        if unsafe { libc::mprotect(addr as *mut libc::c_void, len, libc::PROT_READ) } != 0 {
            return Err(Error::Smem(format!(
                "mprotect of the program's data {addr:#x} (+{len}): {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(w)
    }

    /// Whether the moving thread wrote into the range itself while it was read-only (then it was
    /// made writable again, and a copy made meanwhile may miss that write).
    pub fn broken(&self) -> bool {
        BROKEN.load(Ordering::Acquire)
    }
}

impl Drop for Window {
    /// Lets the waiting writers go (the range is mapped anew by then, or made writable again) and
    /// puts the previous SIGSEGV action back.
    fn drop(&mut self) {
        // a move that failed before mapping leaves the old pages: writable again
        // SAFETY: the range given to `open`; PROT_READ|WRITE is what it had. On the new mapping
        // (already read-write) this changes nothing.
        unsafe {
            libc::mprotect(
                self.addr as *mut libc::c_void,
                self.len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        FROZEN.store(false, Ordering::Release);
        // SAFETY: the action sigaction reported in `open`.
        unsafe { libc::sigaction(libc::SIGSEGV, &self.previous, std::ptr::null_mut()) };
        LO.store(0, Ordering::Relaxed);
        HI.store(0, Ordering::Relaxed);
    }
}

extern "C" fn on_segv(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    let (lo, hi) = (LO.load(Ordering::Relaxed), HI.load(Ordering::Relaxed));
    if code > 0 && addr >= lo && addr < hi {
        if gettid() == MOVER.load(Ordering::Relaxed) {
            // the moving thread itself: it cannot wait for itself
            BROKEN.store(true, Ordering::Release);
            // SAFETY: mprotect is async-signal-safe; the range was read-write before.
            unsafe {
                libc::mprotect(
                    lo as *mut libc::c_void,
                    hi - lo,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            return;
        }
        while FROZEN.load(Ordering::Acquire) {
            // SAFETY: sched_yield is async-signal-safe.
            unsafe { libc::sched_yield() };
        }
        // returning runs the write again: on the new mapping (read-write)
        return;
    }
    // SAFETY: null or a leaked record of the action sigaction reported (never freed)
    let Some(prev) = (unsafe { PREVIOUS.load(Ordering::Acquire).as_ref() }) else {
        return;
    };
    // SAFETY: the arguments the kernel passed; `prev` is the action sigaction reported.
    unsafe { super::sigbus::chain(prev, sig, info, ctx) }
}

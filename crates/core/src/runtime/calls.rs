//! Which threads are inside a library call, so that finalize can wait for them before it releases
//! an instance: a call racing with finalize on another thread gets `NotInited` (or completes
//! first) instead of touching freed memory.
//!
//! Every thread that calls the library gets an [`Entry`] on its first call (recycled when the
//! thread exits): a busy flag that only its thread writes. The outermost call on a thread sets it,
//! then loads the instance pointer ([`super::current`]); finalize clears the pointer, then waits
//! until every other thread's flag is clear ([`quiesce`]). Both sides need their store ordered
//! before their load. (Setting and clearing the flag are plain stores, not increments: a
//! read-modify-write would chain every call to the previous one through memory.)
//! Calls are the hot path, so they pay only a compiler fence, and finalize pays a process-wide
//! barrier, `membarrier(2)` with `MEMBARRIER_CMD_PRIVATE_EXPEDITED`, which runs a full memory
//! barrier on every CPU running a thread of this process: afterwards either finalize sees a
//! caller's flag, or that caller's load comes after the barrier and sees the cleared
//! pointer. Where membarrier is not available, callers use a full fence instead (slower, the same
//! guarantee).
//!
//! Finding the calling thread's entry is on every call too. Rust's `thread_local!` in a shared
//! library goes through `__tls_get_addr` (the general-dynamic TLS model: a call and about a dozen
//! instructions, a quarter of a `p`/`g` on shared memory), so on x86-64 the entry pointer lives in
//! a TLS word defined below in assembly and reached through a TLS descriptor: glibc places the
//! library's TLS in its static block when there is room (the descriptor's resolver then returns
//! the offset at once: a call of two instructions; callgrind, 2-PE `int64_g`/`_p` loops: 68.6
//! instructions per call against 65.5 with initial-exec), else in dynamic TLS. (The initial-exec model,
//! used before, marked the library as needing static TLS for all of its thread-locals, 408 bytes
//! of the 512 glibc keeps for libraries loaded later: `dlopen` of it failed once other such
//! libraries had used that room.) Other targets use `thread_local!`.

#[cfg(not(target_arch = "x86_64"))]
use std::cell::Cell;
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering, compiler_fence, fence};
use std::time::{Duration, Instant};

use super::Slot;
use crate::util::Locked;

/// One thread's calls in progress, on a cache line of its own (its thread writes it twice per call).
#[repr(align(64))]
pub struct Entry {
    /// [`BUSY`] while the owning thread is inside a library call, plus [`FENCED`] from its
    /// creation if calls fence for themselves (only the owning thread writes it).
    busy: AtomicU32,
    /// With [`OVERRIDE`] in `busy`: the instance slot this thread's calls use instead of the
    /// process-wide current one (a kernel block that called `aclshmemx_instance_ctx_set`). Only
    /// the owning thread reads or writes it.
    over: AtomicPtr<Slot>,
}

/// Every entry ever made (entries are recycled, never freed).
static ENTRIES: Mutex<Vec<&'static Entry>> = Mutex::new(Vec::new());
/// Entries whose thread exited, for new threads to take (a kernel launch of thousands of blocks
/// starts thousands of threads at once: each takes one in constant time, where a search of
/// [`ENTRIES`] made their registrations quadratic under its lock).
static FREE: Mutex<Vec<&'static Entry>> = Mutex::new(Vec::new());
/// Callers use a full fence: membarrier is not available.
static FULL_FENCE: AtomicBool = AtomicBool::new(false);
static SETUP: Once = Once::new();

thread_local! {
    /// Gives the entry back when the thread exits.
    static RELEASE: RefCell<Option<Release>> = const { RefCell::new(None) };
}

#[cfg(not(target_arch = "x86_64"))]
thread_local! {
    /// This thread's entry (no destructor, so it is usable while the thread's other thread-locals
    /// are being destroyed).
    static MINE: Cell<Option<&'static Entry>> = const { Cell::new(None) };
}

// This thread's entry, or null: an initial-exec TLS word (see the module documentation).
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl aclshmem_calls_mine",
    ".hidden aclshmem_calls_mine",
    ".type aclshmem_calls_mine, @object",
    ".size aclshmem_calls_mine, 8",
    "aclshmem_calls_mine:",
    ".zero 8",
    ".popsection",
);

/// Address of this thread's entry word.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn mine_word() -> *mut *const Entry {
    let p: *mut *const Entry;
    // SAFETY: a TLS descriptor call: the dynamic linker's resolver returns the word's offset from
    // the thread pointer in rax (fs:0 holds the thread pointer's own address on x86-64 Linux) and
    // keeps every other integer register; the vector registers are declared clobbered, since
    // glibc's resolver for a module without static TLS room (before 2.39) may not keep them.
    // The result is constant for a thread.
    unsafe {
        core::arch::asm!(
            "lea rax, [rip + aclshmem_calls_mine@TLSDESC]",
            "call qword ptr [rax + aclshmem_calls_mine@TLSCALL]",
            "add rax, qword ptr fs:[0]",
            out("rax") p,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly)
        );
    }
    p
}

/// This thread's entry, if it has one.
#[inline(always)]
fn mine() -> Option<&'static Entry> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: this thread's TLS word, written only by this thread (in `set_mine`), holding
        // null or a leaked entry.
        unsafe { (*mine_word()).as_ref() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        MINE.with(Cell::get)
    }
}

fn set_mine(e: &'static Entry) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `mine`.
    unsafe {
        *mine_word() = e;
    }
    #[cfg(not(target_arch = "x86_64"))]
    MINE.with(|m| m.set(Some(e)));
}

struct Release(&'static Entry);

impl Drop for Release {
    fn drop(&mut self) {
        // still the owning thread: the next owner starts without this one's instance slot
        let b = self.0.busy.load(Ordering::Relaxed);
        self.0.busy.store(b & !OVERRIDE, Ordering::Relaxed);
        self.0.over.store(std::ptr::null_mut(), Ordering::Relaxed);
        FREE.locked().push(self.0);
    }
}

const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> bool {
    // SAFETY: membarrier takes two integer arguments and touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_long, 0 as libc::c_long) == 0 }
}

/// Once per process, before the first entry is made (so every entry's [`FENCED`] bit is right from
/// the start and only its thread ever writes the word) and before the first instance is published:
/// registers for expedited membarrier, or makes callers fence.
/// Logs nothing (it runs inside a caller's first call, and a user's log callback could call back
/// in): [`setup_report`] does, from init.
pub fn setup() {
    SETUP.call_once(|| {
        if !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            SETUP_ERRNO.store(errno, Ordering::Relaxed);
            FULL_FENCE.store(true, Ordering::SeqCst);
        }
    });
}

/// Why membarrier registration failed (an errno), when it did.
static SETUP_ERRNO: AtomicI32 = AtomicI32::new(0);

/// [`setup`], then logs once that calls fence for themselves if membarrier is not available.
pub fn setup_report() {
    setup();
    static REPORTED: AtomicBool = AtomicBool::new(false);
    if FULL_FENCE.load(Ordering::Relaxed) && !REPORTED.swap(true, Ordering::Relaxed) {
        log::info!(
            "membarrier(2) is not available ({}): library calls use a full fence so that finalize \
             can wait for calls on other threads",
            std::io::Error::from_raw_os_error(SETUP_ERRNO.load(Ordering::Relaxed))
        );
    }
}

/// Bit 0 of [`Entry::busy`]: the owning thread is inside a library call.
const BUSY: u32 = 1;
/// Bit 1 of [`Entry::busy`], set for good in every entry when membarrier is not available: calls
/// take a full fence after setting [`BUSY`]. Keeping it in the word the call loads anyway leaves a
/// single test on the fast path.
const FENCED: u32 = 2;
/// Bit 2 of [`Entry::busy`]: this thread's calls use [`Entry::over`] as their instance slot. Kept
/// in the word the call loads anyway, so threads without an override pay nothing for the feature.
const OVERRIDE: u32 = 4;

/// Marks the start of a call on this thread and returns the instance slot the call uses; the
/// caller then loads the slot's instance pointer and calls [`leave`] with the entry when done (or
/// at once if there is no instance). The entry is `None` for a call nested in another call of the
/// same thread (the outer one owns the flag).
#[inline]
pub fn enter() -> (Option<&'static Entry>, &'static Slot) {
    let e = match mine() {
        Some(e) => e,
        None => register(),
    };
    if e.busy.load(Ordering::Relaxed) != 0 {
        return enter_slow(e);
    }
    // Relaxed: the order against the caller's following load comes from finalize's membarrier,
    // which runs a full barrier on this CPU (see the module documentation)
    e.busy.store(BUSY, Ordering::Relaxed);
    // the compiler must keep the store before the caller's load too
    compiler_fence(Ordering::SeqCst);
    (Some(e), super::current_slot())
}

/// [`enter`] when the flag word is not plain idle: a nested call, calls fence for themselves, or
/// the thread has its own instance slot.
#[cold]
#[inline(never)]
fn enter_slow(e: &'static Entry) -> (Option<&'static Entry>, &'static Slot) {
    let b = e.busy.load(Ordering::Relaxed);
    let slot = if b & OVERRIDE != 0 {
        // SAFETY: `set_override` stored a slot, and slots are never freed
        unsafe { &*e.over.load(Ordering::Relaxed) }
    } else {
        super::current_slot()
    };
    if b & BUSY != 0 {
        return (None, slot);
    }
    e.busy.store(b | BUSY, Ordering::Relaxed);
    if b & FENCED != 0 {
        // no membarrier: the store must be ordered before the caller's load of the instance pointer
        fence(Ordering::SeqCst);
    } else {
        compiler_fence(Ordering::SeqCst);
    }
    (Some(e), slot)
}

/// Gives the calling thread its own instance slot (`Some`) for all its later calls, or takes it
/// back (`None`): the per-block instance of a kernel block that calls
/// `aclshmemx_instance_ctx_set`. Not while the thread is inside a call that uses the slot.
pub fn set_override(slot: Option<&'static Slot>) {
    let e = match mine() {
        Some(e) => e,
        None if slot.is_none() => return,
        None => register(),
    };
    e.over.store(
        slot.map_or(std::ptr::null_mut(), |s| s as *const Slot as *mut Slot),
        Ordering::Relaxed,
    );
    // only this thread writes the word; a call in progress (BUSY) keeps its bit
    let b = e.busy.load(Ordering::Relaxed);
    let b = if slot.is_some() {
        b | OVERRIDE
    } else {
        b & !OVERRIDE
    };
    e.busy.store(b, Ordering::Relaxed);
}

/// The calling thread's own instance slot, if [`set_override`] gave it one.
pub fn override_slot() -> Option<&'static Slot> {
    let e = mine()?;
    if e.busy.load(Ordering::Relaxed) & OVERRIDE == 0 {
        return None;
    }
    // SAFETY: as in `enter_slow`
    Some(unsafe { &*e.over.load(Ordering::Relaxed) })
}

/// Marks the end of a call started by [`enter`] on this thread.
#[inline]
pub fn leave(e: Option<&'static Entry>) {
    if let Some(e) = e {
        // only this thread writes the word, so the load sees its own last store
        let b = e.busy.load(Ordering::Relaxed);
        // Release: everything the call did happens-before finalize's Acquire load of the flag
        e.busy.store(b & !BUSY, Ordering::Release);
    }
}

#[cold]
fn register() -> &'static Entry {
    // Every thread passes here before its first `enter`: `call_once` returns only after the setup
    // completed and synchronises with it, and the entry is made after it, so the entry's FENCED bit
    // is right from the start
    setup();
    let recycled = FREE.locked().pop();
    let e = recycled.unwrap_or_else(|| {
        let idle = if FULL_FENCE.load(Ordering::Relaxed) {
            FENCED
        } else {
            0
        };
        let e: &'static Entry = Box::leak(Box::new(Entry {
            busy: AtomicU32::new(idle),
            over: AtomicPtr::new(std::ptr::null_mut()),
        }));
        ENTRIES.locked().push(e);
        e
    });
    set_mine(e);
    // a thread already tearing down its thread-locals keeps its entry for good
    let _ = RELEASE.try_with(|r| *r.borrow_mut() = Some(Release(e)));
    e
}

/// After an instance pointer was cleared: waits (at most `limit`) until no other thread is inside
/// a library call. Returns how many still are.
pub fn quiesce(limit: Duration) -> usize {
    if FULL_FENCE.load(Ordering::Relaxed) {
        fence(Ordering::SeqCst);
    } else if !membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) {
        log::warn!(
            "membarrier(2) failed ({}); waiting a moment for calls on other threads instead",
            std::io::Error::last_os_error()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mine = mine().map(|e| e as *const Entry);
    let others: Vec<&'static Entry> = ENTRIES
        .locked()
        .iter()
        .copied()
        .filter(|e| Some(*e as *const Entry) != mine)
        .collect();
    let start = Instant::now();
    let mut b = crate::wait::Backoff::new();
    loop {
        let busy = others
            .iter()
            .filter(|e| e.busy.load(Ordering::Acquire) & BUSY != 0)
            .count();
        if busy == 0 || start.elapsed() > limit {
            return busy;
        }
        b.snooze();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exited_threads_give_their_entries_to_new_ones() {
        let enter_once = || {
            let (e, _) = enter();
            leave(e);
            e.map(|e| e as *const Entry as usize)
        };
        // one thread's entry goes to the free list when it exits
        let first = std::thread::spawn(enter_once).join().unwrap();
        assert!(first.is_some());
        let made = ENTRIES.locked().len();
        // threads started one after another reuse entries (other tests of this process may
        // start threads meanwhile, but not 500 at once)
        for _ in 0..500 {
            assert!(std::thread::spawn(enter_once).join().unwrap().is_some());
        }
        let grown = ENTRIES.locked().len() - made;
        assert!(grown < 100, "500 threads one after another made {grown} entries");
        // a thread's entry is its own while it lives
        let a = std::thread::spawn(move || {
            let (e, _) = enter();
            let mine = e.map(|e| e as *const Entry as usize);
            let (nested, _) = enter();
            assert!(nested.is_none(), "a nested call owns no entry");
            leave(e);
            mine
        });
        assert!(a.join().unwrap().is_some());
    }
}

//! The kernel-block context of the CPU device mode: which block of which launch the calling thread
//! runs, its private UB (unified buffer), and the launch-wide rendezvous (`AscendC::SyncAll`).
//!
//! A kernel launch (the `kernel` module) runs every block on its own thread and installs a [`Block`] in
//! that thread for the duration of the block. Calls that behave differently inside a kernel (the
//! barriers, UB operands of RMA) ask [`current`]; outside a kernel it is `None` and they keep their
//! host semantics. UB addresses are small integers (byte offsets into the block's UB, spec
//! device-api 1.5): [`ub_local`] turns one into a pointer into the calling block's buffer.
//!
//! `unsafe`: the thread-local raw pointer to the running block (valid while the block runs) and
//! pointer arithmetic inside the block's UB.

use std::cell::Cell;
use std::sync::{Condvar, Mutex};

use crate::error::{Error, Result};

/// Bytes of UB per block (`ub_limit` of the original: 192 KiB per AIV).
pub const UB_SIZE: usize = 192 * 1024;

/// Which cores run a kernel's body (spec device-api 1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// `[[bisheng::core_ratio(0, 1)]]`: `blockDim` AIV contexts.
    Aiv,
    /// No ratio attribute (MIX 1:2): per block two AIV contexts and one AIC context, all running
    /// the kernel body (`ASCEND_IS_AIC` selects the AIC's part).
    Mix,
}

impl KernelKind {
    /// From the launcher's integer (0 = AIV, 1 = MIX).
    pub fn from_c(v: u32) -> Result<KernelKind> {
        match v {
            0 => Ok(KernelKind::Aiv),
            1 => Ok(KernelKind::Mix),
            _ => Err(Error::InvalidParam(format!(
                "kernel kind {v} is neither AIV (0) nor MIX (1)"
            ))),
        }
    }

    /// AIV contexts per block.
    pub fn sub_blocks(self) -> u32 {
        match self {
            KernelKind::Aiv => 1,
            KernelKind::Mix => 2,
        }
    }

    /// AIC contexts per block.
    pub fn aic_per_block(self) -> u32 {
        match self {
            KernelKind::Aiv => 0,
            KernelKind::Mix => 1,
        }
    }
}

/// A reusable rendezvous of the contexts of one launch (all AIV contexts, or AIV and AIC). A
/// context that fails (a faulting block) breaks it, so the others do not wait for ever: their waits
/// then return an error. A context that returned from the kernel leaves it: later rendezvous count
/// only the contexts still running (an AIC that returns at once does not hold up the AIVs).
pub struct Rendezvous {
    state: Mutex<RendezvousState>,
    cv: Condvar,
    /// A device barrier found it broken before its PE-level barrier ran: this PE missed a barrier
    /// its peers take part in (see `kernel::run`).
    skipped_pe_barrier: std::sync::atomic::AtomicBool,
    /// `RendezvousState::broken`, readable without the lock (the blocks' waits look at it).
    broken_flag: std::sync::atomic::AtomicBool,
}

struct RendezvousState {
    /// Contexts still taking part.
    members: usize,
    arrived: usize,
    generation: u64,
    broken: bool,
    /// The last generation was completed by a [`Rendezvous::leave`], so no arrival was the last:
    /// the first of its waiters to wake takes that role.
    unclaimed: bool,
}

impl Rendezvous {
    pub fn new(n: usize) -> Rendezvous {
        Rendezvous {
            state: Mutex::new(RendezvousState {
                members: n,
                arrived: 0,
                generation: 0,
                broken: false,
                unclaimed: false,
            }),
            cv: Condvar::new(),
            skipped_pe_barrier: std::sync::atomic::AtomicBool::new(false),
            broken_flag: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A block found this rendezvous broken where its PE-level barrier was to run.
    pub fn mark_skipped_pe_barrier(&self) {
        self.skipped_pe_barrier
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether a device barrier of this launch never ran its PE-level barrier.
    pub fn skipped_pe_barrier(&self) -> bool {
        self.skipped_pe_barrier.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until every member arrived. Returns true for exactly one caller of each generation
    /// (the last to arrive, or when a leaving context completed it, the first waiter to wake).
    pub fn wait(&self) -> Result<bool> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.broken {
            return Err(broken());
        }
        s.arrived += 1;
        if s.arrived >= s.members {
            s.arrived = 0;
            s.generation = s.generation.wrapping_add(1);
            self.cv.notify_all();
            return Ok(true);
        }
        let gen_now = s.generation;
        while s.generation == gen_now && !s.broken {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.generation == gen_now {
            return Err(broken());
        }
        if s.unclaimed {
            s.unclaimed = false;
            return Ok(true);
        }
        Ok(false)
    }

    /// A context returned from the kernel: it takes part in no later rendezvous. Completes the
    /// current one when everyone else already waits in it.
    pub fn leave(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.members = s.members.saturating_sub(1);
        if s.arrived > 0 && s.arrived >= s.members {
            s.arrived = 0;
            s.generation = s.generation.wrapping_add(1);
            s.unclaimed = true;
            self.cv.notify_all();
        }
    }

    /// A context ended without reaching the rendezvous: release every waiter with an error.
    pub fn break_all(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.broken = true;
        self.broken_flag.store(true, std::sync::atomic::Ordering::Release);
        self.cv.notify_all();
    }
}

/// Whether the calling thread runs a block of a launch in which another block failed.
#[inline]
pub fn launch_broken() -> bool {
    current().is_some_and(|b| b.cores().broken_flag.load(std::sync::atomic::Ordering::Acquire))
}

/// `Err` when the calling thread runs a block of a launch in which another block failed: a wait
/// of such a block gives up (on the NPU the failure aborts the whole kernel; here the block's
/// waits for a flag the failed block was to set never ended, and the launch never completed).
#[inline]
pub fn check_launch() -> Result<()> {
    if launch_broken() {
        return Err(Error::Inner(
            "another block of this kernel launch failed while this block waited".into(),
        ));
    }
    Ok(())
}

fn broken() -> Error {
    Error::Inner("another block of this kernel launch failed; the launch-wide barrier is broken".into())
}

/// One running block context (one AIV or AIC of the launch).
pub struct Block {
    /// `GetBlockIdx()`: `0..blocks * sub_blocks` on an AIV, `0..blocks` on an AIC.
    pub idx: u32,
    /// An AIC context of a MIX kernel (`ASCEND_IS_AIC`).
    pub aic: bool,
    /// `GetBlockNum()`: the launch's `blockDim`.
    pub blocks: u32,
    pub kind: KernelKind,
    /// This context's UB, [`UB_SIZE`] bytes, owned by the worker thread.
    pub ub: *mut u8,
    /// The AIV contexts of the launch (`SyncAll()`, the `_vec` device barriers' core phase).
    pub all: *const Rendezvous,
    /// Every context, AIV and AIC (`SyncAll<false>()`, the device barriers' core phase).
    pub cores: *const Rendezvous,
}

thread_local! {
    static CURRENT: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
}

/// The block the calling thread runs, if any.
#[inline]
pub fn current() -> Option<&'static Block> {
    let p = CURRENT.with(|c| c.get());
    // SAFETY: `enter` stores a pointer that stays valid until `leave` resets it on the same thread;
    // the reference is only used by calls made from inside the block.
    unsafe { p.as_ref() }
}

/// Installs `b` as the calling thread's block until [`leave`].
///
/// # Safety
/// `b` must stay valid until `leave` is called on this thread.
pub unsafe fn enter(b: *const Block) {
    CURRENT.with(|c| c.set(b));
}

/// Ends the calling thread's block.
pub fn leave() {
    CURRENT.with(|c| c.set(std::ptr::null()));
}

impl Block {
    /// `GetSubBlockIdx()` (0 on an AIC).
    pub fn sub_idx(&self) -> u32 {
        if self.aic {
            0
        } else {
            self.idx % self.kind.sub_blocks()
        }
    }

    /// The rendezvous of the launch's AIV contexts.
    pub fn rendezvous(&self) -> &Rendezvous {
        // SAFETY: the launch keeps its rendezvous alive until every block returned.
        unsafe { &*self.all }
    }

    /// The rendezvous of every context of the launch (AIV and AIC).
    pub fn cores(&self) -> &Rendezvous {
        // SAFETY: as for `rendezvous`.
        unsafe { &*self.cores }
    }
}

/// A local operand below [`UB_SIZE`] inside a kernel block is a UB offset of that block: the
/// pointer into its buffer, after checking that `[off, off + len)` fits (spec device-api 6.6: a
/// span beyond the UB does nothing upstream; here it is a logged error and nothing moves).
/// Outside a kernel the address is returned unchanged.
#[cold]
pub fn ub_local(off: usize, len: usize, what: &str) -> Result<*mut u8> {
    let Some(b) = current() else {
        return Ok(off as *mut u8);
    };
    match off.checked_add(len) {
        Some(end) if end <= UB_SIZE => {
            // SAFETY: off + len <= UB_SIZE, inside the block's buffer.
            Ok(unsafe { b.ub.add(off) })
        }
        _ => Err(Error::InvalidParam(format!(
            "{what}: UB span [{off}, {off} + {len}) of block {} ends beyond the {UB_SIZE}-byte UB",
            b.idx
        ))),
    }
}

/// Points the calling thread's `%gs` segment base at `ub` (x86-64), so kernels compiled with
/// clang++ (where `__ubuf__` is the `%gs`-relative address space 256, `device/aclshmem_cpu.h`)
/// load and store UB offsets of this block directly: `*(__ubuf__ int32_t *)32` is the word at
/// `ub + 32`. glibc keeps thread-local storage in `%fs`; nothing else in the process uses `%gs`.
/// `None` resets the base to 0 (a stray `%gs` access then faults instead of hitting a stale UB).
/// Elsewhere a no-op: there `__ubuf__` is empty, and a direct dereference of a UB offset hits the
/// reserved low addresses ([`reserve_low_addresses`]) and faults.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub fn set_ub_segment(ub: Option<*mut u8>) {
    const ARCH_SET_GS: libc::c_int = 0x1001;
    let base = ub.map_or(0, |p| p as libc::c_ulong);
    // SAFETY: arch_prctl(ARCH_SET_GS) only changes this thread's GS base register, which neither
    // glibc nor Rust code uses (TLS is %fs-relative).
    let rc = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, base) };
    if rc != 0 {
        log::warn!(
            "arch_prctl(ARCH_SET_GS) failed ({}): direct UB dereferences of this block fault",
            std::io::Error::last_os_error()
        );
    }
}

/// See the x86-64 version: no segment register to point at the UB here.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
pub fn set_ub_segment(_ub: Option<*mut u8>) {}

/// Keeps the addresses below [`UB_SIZE`] unmapped for the life of the process (a `PROT_NONE`
/// reservation of what the kernel's `mmap_min_addr` leaves mappable), so that a UB offset used as
/// an ordinary pointer (a kernel built without the `%gs` UB mapping dereferencing `__ubuf__`
/// pointers) always faults, and the launch reports it, instead of reading whatever got mapped
/// there. Done once, at the first kernel launch; failure is logged, not fatal.
pub fn reserve_low_addresses() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let page = 4096usize;
        let min = std::fs::read_to_string("/proc/sys/vm/mmap_min_addr")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(65536)
            .max(page);
        let start = min.next_multiple_of(page);
        if start >= UB_SIZE {
            return;
        }
        let len = UB_SIZE - start;
        if crate::util::reserve_exactly(start, len).is_none() {
            log::debug!(
                "cannot reserve [{start:#x}, {UB_SIZE:#x}) (UB offsets used as plain pointers may not fault)"
            );
        }
    });
}

/// [`ub_local`] applied to a local operand when it is a UB offset (fast check first).
#[inline(always)]
pub fn local_operand(p: *mut u8, len: usize, what: &str) -> Result<*mut u8> {
    if (p as usize) < UB_SIZE {
        ub_local(p as usize, len, what)
    } else {
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::Rendezvous;
    use std::sync::Arc;

    /// A generation completed by a member leaving still has exactly one leader among its waiters,
    /// and later generations count only the members left.
    #[test]
    fn leave_completes_a_generation_with_one_leader() {
        let r = Arc::new(Rendezvous::new(3));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let r = Arc::clone(&r);
                std::thread::spawn(move || r.wait().expect("not broken"))
            })
            .collect();
        while r.state.lock().unwrap().arrived < 2 {
            std::thread::yield_now();
        }
        r.leave();
        let leaders = waiters
            .into_iter()
            .map(|w| w.join().unwrap())
            .filter(|&l| l)
            .count();
        assert_eq!(leaders, 1);
        // two members left: the second arrival completes the next generation
        let r2 = Arc::clone(&r);
        let t = std::thread::spawn(move || r2.wait().expect("not broken"));
        let mine = r.wait().expect("not broken");
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "one leader per generation");
    }
}

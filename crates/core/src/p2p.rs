//! Point-to-point synchronisation: signals and the wait/test families (spec 8.4, 8.5).
//!
//! Memory ordering: the protocol of `aclshmem_protocol::signal` (model-checked with loom in
//! crates/protocol/tests/loom.rs, where the orderings are argued): a waiter reads each word with
//! Acquire (`signal::WAIT`); a signal SET is a Release store (`signal::SET`) and a signal ADD a
//! SeqCst read-modify-write (`signal::ADD`), both issued after the put's data copy. So whatever a
//! PE wrote before signalling (the put's data included) is visible to a PE whose wait observed the
//! signal. Same-node signals and waits call that module; signals through a transport
//! (`Transport::put_signal`) order the data before the signal with the transport's fence, and the
//! atomic lands with the same orderings (`transport/shm.rs`, `CpuAtomic`). `unsafe` here turns the
//! validated raw addresses of a [`WaitSet`] into atomic loads.

use crate::error::{Error, Result};
use crate::rma;
use crate::runtime::{self, Current, Instance};
use crate::transport::{AmoOp, Width};
use crate::wait::Backoff;
use crate::word::Word;
use aclshmem_protocol::signal;
use std::sync::atomic::{AtomicI32, Ordering};

/// `aclshmem_cmp_op_type_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    /// From the C value; anything outside 0..5 is an error.
    pub fn from_c(v: i32) -> Result<Cmp> {
        Ok(match v {
            0 => Cmp::Eq,
            1 => Cmp::Ne,
            2 => Cmp::Gt,
            3 => Cmp::Ge,
            4 => Cmp::Lt,
            5 => Cmp::Le,
            _ => {
                return Err(Error::InvalidParam(format!(
                    "cmp {v} is not an aclshmem_cmp_op_type_t (0..5)"
                )));
            }
        })
    }

    #[inline]
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
        }
    }
}

pub use crate::transport::{Completion, SignalOp};

impl SignalOp {
    /// From `aclshmem_signal_op_type_t`.
    pub fn from_c(v: i32) -> Result<SignalOp> {
        match v {
            0 => Ok(SignalOp::Set),
            1 => Ok(SignalOp::Add),
            _ => Err(Error::InvalidParam(format!(
                "sig_op {v} is neither ACLSHMEM_SIGNAL_SET (0) nor ACLSHMEM_SIGNAL_ADD (1)"
            ))),
        }
    }
}

/// Checks a word address: non-NULL and aligned for `T`.
pub fn check_word<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidParam(format!("{what} is NULL")));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::InvalidParam(format!(
            "{what} {p:p} is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// Updates the 32-bit signal word at symmetric `sig_addr` on PE `pe`.
pub fn signal(sig_addr: *mut i32, value: i32, op: SignalOp, pe: i32) -> Result<()> {
    signal_in(&*runtime::current()?, sig_addr, value, op, pe)
}

/// [`signal`] on instance `inst`.
pub fn signal_in(inst: &Instance, sig_addr: *mut i32, value: i32, op: SignalOp, pe: i32) -> Result<()> {
    check_word(sig_addr, "sig_addr")?;
    let r = inst.remote(sig_addr as usize, 4, pe, "sig_addr")?;
    let Some(p) = r.direct() else {
        let amo = match op {
            SignalOp::Set => AmoOp::Set(value as u32 as u64),
            SignalOp::Add => AmoOp::FetchAdd(value as u32 as u64),
        };
        return inst.routes().to(r.pe)?.atomic(r, Width::W32, amo).map(|_| ());
    };
    // SAFETY: p is a 4-byte aligned word inside PE pe's mapped heap (checked above), which stays
    // mapped while the instance lives.
    unsafe { deliver(p as *mut i32, value, op) };
    Ok(())
}

/// Put-with-signal: copies `len` bytes from local `src` to symmetric `dst` on PE `pe`, then updates
/// the 32-bit signal word at symmetric `sig_addr` there (`sig_op`: `aclshmem_signal_op_type_t`).
/// A PE whose wait observes the signal sees the data. Nothing is written when any argument is bad
/// (the signal is checked before the data moves), except a bad `sig_op` in a kernel: the data is
/// copied and the signal left alone, as the device API has it. Blocking.
///
/// # Safety
/// A non-NULL `src` must be readable for `len` bytes.
pub unsafe fn put_signal(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    sig_addr: *mut i32,
    value: i32,
    sig_op: i32,
    pe: i32,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe {
        put_signal_in(
            &*runtime::current()?,
            dst,
            src,
            len,
            sig_addr,
            value,
            sig_op,
            pe,
            false,
        )
    }
}

/// Non-blocking [`put_signal`]: complete at the latest at quiet.
///
/// # Safety
/// As for [`put_signal`], and `src` stays unchanged until the next quiet.
pub unsafe fn put_signal_nbi(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    sig_addr: *mut i32,
    value: i32,
    sig_op: i32,
    pe: i32,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe {
        put_signal_in(
            &*runtime::current()?,
            dst,
            src,
            len,
            sig_addr,
            value,
            sig_op,
            pe,
            true,
        )
    }
}

/// [`put_signal`] / [`put_signal_nbi`] on instance `inst`.
///
/// # Safety
/// As for [`put_signal_nbi`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn put_signal_in(
    inst: &Instance,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    sig_addr: *mut i32,
    value: i32,
    sig_op: i32,
    pe: i32,
    nbi: bool,
) -> Result<()> {
    let op = match SignalOp::from_c(sig_op) {
        Ok(op) => op,
        Err(e) if crate::block::current().is_some() => {
            // in a kernel, the device API's rule (spec device-api 2.9): the data is copied, the
            // signal left alone (logged); a host call writes nothing
            // SAFETY: forwarded.
            unsafe { rma::put_in(inst, dst, src, len, pe, nbi)? };
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    check_word(sig_addr, "sig_addr")?;
    if pe >= 0 && pe as usize == inst.my_pe() && inst.locate(sig_addr as usize, 4).is_none() {
        // SAFETY: forwarded.
        return unsafe { local_device_signal(inst, dst, src, len, sig_addr, value, op, pe, nbi) };
    }
    let sig = inst.remote(sig_addr as usize, 4, pe, "sig_addr")?;
    if sig.direct().is_some() || len == 0 {
        // same node: the copy completes before the signal's Release store / SeqCst add
        // SAFETY: forwarded.
        unsafe { rma::put_in(inst, dst, src, len, pe, nbi)? };
        return signal_in(inst, sig_addr, value, op, pe);
    }
    let d = inst.remote(dst as usize, len, pe, "dest")?;
    if src.is_null() {
        return Err(Error::InvalidParam("source is NULL".into()));
    }
    let t = inst.routes().to(sig.pe)?;
    let done = if nbi {
        Completion::Quiet
    } else {
        Completion::Remote
    };
    // SAFETY: `d` is a checked range of the peer's heap; `src` is the caller's buffer.
    unsafe { t.put_signal(d, src, len, sig, Width::W32, op, value as u32 as u64, done) }
}

/// OpenSHMEM's put-with-signal on the current instance: a 64-bit signal word at symmetric
/// `sig_addr` on PE `pe`, updated after the data (a PE whose wait observes it sees the data);
/// `done` is [`Completion::Local`] for the blocking form, [`Completion::Quiet`] for `_nbi`. On
/// this node both are complete on return (the copy, then a sequentially consistent update); to a
/// PE on another node it is one message.
///
/// # Safety
/// A non-NULL `src` must be readable for `len` bytes (and stay unchanged until `quiet` for
/// [`Completion::Quiet`]).
#[allow(clippy::too_many_arguments)]
pub unsafe fn put_signal64(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    sig_addr: *mut u64,
    value: u64,
    op: SignalOp,
    pe: i32,
    done: Completion,
) -> Result<()> {
    let inst = &*runtime::current()?;
    check_word(sig_addr, "sig_addr")?;
    let sig = inst.remote(sig_addr as usize, 8, pe, "sig_addr")?;
    if let Some(p) = sig.direct() {
        // SAFETY: forwarded.
        unsafe { rma::put_in(inst, dst, src, len, pe, false)? };
        // SAFETY: an 8-byte aligned word inside PE pe's mapped heap (checked above), mapped while
        // the instance lives.
        let word = unsafe { std::sync::atomic::AtomicU64::from_ptr(p as *mut u64) };
        // sequentially consistent, as the AMOs: a PE that sees the signal sees the data
        match op {
            SignalOp::Set => word.store(value, Ordering::SeqCst),
            SignalOp::Add => {
                word.fetch_add(value, Ordering::SeqCst);
            }
        }
        return Ok(());
    }
    if len == 0 {
        let amo = match op {
            SignalOp::Set => AmoOp::Set(value),
            SignalOp::Add => AmoOp::FetchAdd(value),
        };
        return inst.routes().to(sig.pe)?.atomic(sig, Width::W64, amo).map(|_| ());
    }
    let d = inst.remote(dst as usize, len, pe, "dest")?;
    if src.is_null() {
        return Err(Error::InvalidParam("source is NULL".into()));
    }
    let t = inst.routes().to(sig.pe)?;
    // SAFETY: `d` is a checked range of the peer's heap; `src` is the caller's buffer.
    unsafe { t.put_signal(d, src, len, sig, Width::W64, op, value, done) }
}

/// Put-with-signal to the calling PE whose signal word is not symmetric. The original accepts a
/// signal word in local device memory (`aclrtMalloc`) when the target is the caller itself (its
/// device path translates addresses only for other PEs), and its own tests rely on it; so do we,
/// exactly then: the whole word lies in a live allocation of the ACL runtime. Any other address
/// outside the heap is refused as for every operation.
///
/// # Safety
/// As for [`put_signal_nbi`].
#[allow(clippy::too_many_arguments)]
unsafe fn local_device_signal(
    inst: &Instance,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    sig_addr: *mut i32,
    value: i32,
    op: SignalOp,
    pe: i32,
    nbi: bool,
) -> Result<()> {
    if !crate::acl::device_range_is_live(sig_addr.cast(), 4) {
        return Err(Error::InvalidParam(inst.not_symmetric(
            "sig_addr",
            sig_addr as usize,
            4,
        )));
    }
    // the data part is an ordinary put to this PE (checked like any other)
    // SAFETY: forwarded.
    unsafe { rma::put_in(inst, dst, src, len, pe, nbi)? };
    // SAFETY: an aligned (checked) word inside a live aclrtMalloc block of this process.
    unsafe { deliver(sig_addr, value, op) };
    Ok(())
}

/// Updates a signal word after the data (`aclshmem_protocol::signal`: Release store or SeqCst add).
///
/// # Safety
/// `word` must be a live, 4-byte aligned word (of a mapped heap or this process's memory).
unsafe fn deliver(word: *mut i32, value: i32, op: SignalOp) {
    // SAFETY: the caller's contract.
    let word = unsafe { AtomicI32::from_ptr(word) };
    match op {
        SignalOp::Set => signal::set(word, value),
        SignalOp::Add => {
            signal::add(word, value);
        }
    }
}

/// Waits until the local word `*ivar` satisfies `cmp` against `value`.
///
/// # Safety
/// A non-NULL `ivar` must point to a live `T` for the duration of the wait.
pub unsafe fn wait_until<T: Word>(ivar: *mut T, cmp: Cmp, value: T) -> Result<()> {
    let inst = runtime::current()?;
    check_symmetric(&inst, ivar, 1, "ivar")?;
    // SAFETY: forwarded.
    unsafe { wait_until_in(&inst, ivar, "ivar", cmp, value) }
}

/// The ivars of the wait/test families are symmetric (spec 8.5.2): `[ivars, ivars + n)` must lie in
/// a user range of this PE's heaps, as RMA operands do (NULL and alignment are checked apart).
fn check_symmetric<T>(inst: &Instance, ivars: *const T, n: usize, what: &str) -> Result<()> {
    if ivars.is_null() || n == 0 {
        return Ok(());
    }
    let len = n
        .checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| Error::InvalidValue(format!("{n} elements overflow")))?;
    if waitable(inst, ivars.cast(), len) {
        Ok(())
    } else {
        Err(Error::InvalidParam(inst.not_symmetric(what, ivars as usize, len)))
    }
}

/// Memory a wait or test may read (it reads the address as given, spec device-api 2.0.4): this
/// PE's symmetric memory, which the others' puts reach; a peer's copy mapped here (an
/// `aclshmem_ptr` result: the allgather kernels poll a peer's flag that way); live local device
/// memory (`aclrtMalloc`), which a put-with-signal to this PE may name. Any other address never
/// changes but by this process itself: refused rather than waited on forever.
fn waitable(inst: &Instance, p: *const u8, len: usize) -> bool {
    inst.locate(p as usize, len).is_some()
        || inst.in_peer_copy(p as usize, len)
        || crate::acl::device_range_is_live(p, len)
}

/// A signal word this PE waits on (`aclshmem_signal_wait_until` and its stream form, OpenSHMEM's
/// `shmem_signal_wait_until`): memory a wait may read ([`waitable`]; a word of live local device
/// memory is what a put-with-signal to this PE may name, see `local_device_signal`).
pub fn check_signal_word<T>(inst: &Instance, sig: *const T, what: &str) -> Result<()> {
    check_word(sig, what)?;
    let len = std::mem::size_of::<T>();
    if waitable(inst, sig.cast(), len) {
        Ok(())
    } else {
        Err(Error::InvalidParam(inst.not_symmetric(what, sig as usize, len)))
    }
}

/// Waits on the current instance until the signal word `*sig` satisfies `cmp` against `value`
/// (checked by [`check_signal_word`]).
///
/// # Safety
/// A non-NULL `sig` must point to a live `T` for the duration of the wait.
pub unsafe fn signal_wait_until<T: Word>(sig: *mut T, what: &str, cmp: Cmp, value: T) -> Result<()> {
    let inst = runtime::current()?;
    check_signal_word(&inst, sig, what)?;
    // SAFETY: forwarded.
    unsafe { wait_until_in(&inst, sig, what, cmp, value) }
}

/// [`wait_until`] naming the argument `what` in errors.
///
/// # Safety
/// As for [`wait_until`].
pub unsafe fn wait_until_named<T: Word>(ivar: *mut T, what: &str, cmp: Cmp, value: T) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { wait_until_in(&*runtime::current()?, ivar, what, cmp, value) }
}

/// [`wait_until_named`] on instance `inst` (whose transports it drives while waiting).
///
/// # Safety
/// As for [`wait_until`].
pub unsafe fn wait_until_in<T: Word>(
    inst: &Instance,
    ivar: *mut T,
    what: &str,
    cmp: Cmp,
    value: T,
) -> Result<()> {
    check_word(ivar, what)?;
    let mut b = Backoff::new();
    let mut alone = crate::sync::Alone::default();
    signal::wait_until(
        &Ivar(ivar),
        |v| cmp.holds(v, value),
        || {
            inst.routes().progress();
            b.snooze();
            crate::block::check_launch()?;
            alone.check(inst, what)
        },
    )
    .map(|_| ())
}

/// A local word of the wait families, watched through [`signal::wait_until`].
struct Ivar<T>(*mut T);

impl<T: Word> signal::Watch for Ivar<T> {
    type V = T;
    #[inline(always)]
    fn load(&self, order: Ordering) -> T {
        // the core's typed loads (`Word::load`) are Acquire, what the protocol asks for
        debug_assert_eq!(order, signal::WAIT);
        // SAFETY: the pointer is non-NULL and aligned (checked by the caller) and live (the wait's
        // contract).
        unsafe { T::load(self.0) }
    }
}

/// One comparison of the local word `*ivar`.
///
/// # Safety
/// A non-NULL `ivar` must point to a live `T`.
/// Drives the transports once first, as every polling call does: a loop of tests is how many
/// programs wait, and over a network with no progress thread nothing else would move a peer's
/// update into memory.
pub unsafe fn test<T: Word>(ivar: *mut T, cmp: Cmp, value: T) -> Result<bool> {
    let inst = runtime::current()?;
    check_word(ivar, "ivars")?;
    check_symmetric(&inst, ivar, 1, "ivars")?;
    inst.routes().progress();
    let holds = cmp.holds(signal::peek(&Ivar(ivar)), value);
    crate::wait::polled(holds);
    Ok(holds)
}

/// The local word `*word`, read atomically after driving the transports once (a polling read,
/// such as OpenSHMEM's `shmem_signal_fetch`; see [`test`]).
///
/// # Safety
/// A non-NULL `word` must point to a live `T`.
pub unsafe fn fetch_polled<T: Word>(word: *mut T, what: &str) -> Result<T> {
    let inst = runtime::current()?;
    check_word(word, what)?;
    inst.routes().progress();
    // SAFETY: non-NULL and aligned (checked), live (contract).
    Ok(unsafe { T::load(word) })
}

/// What the elements of a set are compared with.
pub enum Against<'a, T> {
    One(T),
    Each(&'a [T]),
}

/// The arguments of a set-valued wait or test, checked.
pub struct WaitSet<'a, T> {
    inst: Current,
    ivars: *mut T,
    n: usize,
    status: Option<&'a [i32]>,
    cmp: Cmp,
    against: Against<'a, T>,
}

impl<'a, T: Word> WaitSet<'a, T> {
    /// # Safety
    /// A non-NULL `ivars` must point to `n` live, aligned `T`s for the life of the set.
    pub unsafe fn new(
        ivars: *mut T,
        n: usize,
        status: Option<&'a [i32]>,
        cmp: Cmp,
        against: Against<'a, T>,
    ) -> Result<Self> {
        let inst = runtime::current()?;
        if n > 0 {
            check_word(ivars, "ivars")?;
            check_symmetric(&inst, ivars, n, "ivars")?;
        }
        if let Against::Each(v) = &against
            && v.len() != n
        {
            return Err(Error::InvalidParam(
                "cmp_values does not hold nelems values".into(),
            ));
        }
        Ok(WaitSet {
            inst,
            ivars,
            n,
            status,
            cmp,
            against,
        })
    }

    #[inline]
    fn included(&self, i: usize) -> bool {
        self.status.is_none_or(|s| s[i] == 0)
    }

    /// Whether any element takes part (status not all excluded, nelems > 0).
    pub fn any_included(&self) -> bool {
        (0..self.n).any(|i| self.included(i))
    }

    #[inline]
    fn satisfied(&self, i: usize) -> bool {
        let value = match &self.against {
            Against::One(v) => *v,
            Against::Each(v) => v[i],
        };
        // SAFETY: i < n and the constructor's contract makes ivars[0..n) valid and aligned.
        let ivar = Ivar(unsafe { self.ivars.add(i) });
        self.cmp.holds(signal::peek(&ivar), value)
    }

    /// Included elements that hold now, in index order.
    fn holding(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.n).filter(|&i| self.included(i) && self.satisfied(i))
    }

    /// Every test drives the transports once first (see [`test`]); the waits below are loops of
    /// tests.
    #[inline]
    fn drive(&self) {
        self.inst.routes().progress();
    }

    /// Whether every included element holds (true for an empty set).
    pub fn test_all(&self) -> bool {
        let all = self.all_hold();
        crate::wait::polled(all);
        all
    }

    /// [`Self::test_all`] without the polling yield (the waits' own test: they back off).
    fn all_hold(&self) -> bool {
        self.drive();
        (0..self.n).all(|i| !self.included(i) || self.satisfied(i))
    }

    /// Index of the first included element that holds, or `usize::MAX` (SIZE_MAX).
    pub fn test_any(&self) -> usize {
        let found = self.first_holding();
        crate::wait::polled(found != usize::MAX);
        found
    }

    /// [`Self::test_any`] without the polling yield (the waits' own test: they back off).
    fn first_holding(&self) -> usize {
        self.drive();
        self.holding().next().unwrap_or(usize::MAX)
    }

    /// [`Self::test_any`] searching from the index after the one this thread's last successful
    /// search returned (round robin, as Sandia OpenSHMEM: the OpenSHMEM surface), so a loop that
    /// serves whichever element holds reaches every element that keeps holding, not only the
    /// lowest. (The aclshmem surface keeps the first index, as its kernels' device-side calls do.)
    pub fn test_any_round_robin(&self) -> usize {
        thread_local!(static NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        if self.n == 0 {
            return usize::MAX;
        }
        self.drive();
        let start = NEXT.with(|c| c.get()) % self.n;
        let found = (start..self.n)
            .chain(0..start)
            .find(|&i| self.included(i) && self.satisfied(i));
        crate::wait::polled(found.is_some());
        match found {
            Some(i) => {
                NEXT.with(|c| c.set(i + 1));
                i
            }
            None => usize::MAX,
        }
    }

    /// Writes the indices of the included elements that hold into `indices`; returns how many.
    pub fn test_some(&self, indices: &mut [usize]) -> usize {
        let count = self.some_holding(indices);
        crate::wait::polled(count > 0);
        count
    }

    /// [`Self::test_some`] without the polling yield (the waits' own test: they back off).
    fn some_holding(&self, indices: &mut [usize]) -> usize {
        self.drive();
        let mut count = 0;
        for i in self.holding() {
            indices[count] = i;
            count += 1;
        }
        count
    }

    /// (A block of a kernel launch in which another block failed gives up: see
    /// [`crate::block::check_launch`], which its caller then asks; so do the two below.)
    pub fn wait_all(&self) {
        let mut b = Backoff::new();
        while !self.all_hold() && !crate::block::launch_broken() {
            b.snooze();
        }
    }

    /// Waits for any included element; `usize::MAX` at once when none is included.
    pub fn wait_any(&self) -> usize {
        if !self.any_included() {
            return usize::MAX;
        }
        let mut b = Backoff::new();
        loop {
            let i = self.first_holding();
            if i != usize::MAX || crate::block::launch_broken() {
                return i;
            }
            b.snooze();
        }
    }

    /// Waits until at least one included element holds and collects all that do; 0 at once when
    /// none is included.
    pub fn wait_some(&self, indices: &mut [usize]) -> usize {
        if !self.any_included() {
            return 0;
        }
        let mut b = Backoff::new();
        loop {
            let n = self.some_holding(indices);
            if n > 0 || crate::block::launch_broken() {
                return n;
            }
            b.snooze();
        }
    }
}

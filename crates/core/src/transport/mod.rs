//! Transports: how an operation reaches a peer's copy of a symmetric heap.
//!
//! A [`Transport`] moves bytes and performs atomics on *remote symmetric locations* ([`Remote`]:
//! which heap, which byte offset, which PE), never on raw peer addresses, so a transport with
//! registered memory and per-peer remote keys (the next one: UCX for peers on other nodes) fits the
//! same interface: it keeps its keys per heap (registered in [`Transport::attach_heap`], which every
//! heap creation calls collectively) and translates `(heap.kind(), off, pe)` itself.
//!
//! The instance chooses one transport per peer at init ([`Routes`], built by [`select`]): the first
//! registered transport that reaches the PE. The data path keeps one fast path beside the generic
//! one: when a heap maps the peer for direct access ([`Remote::direct`]: one subtraction and one
//! table load), the copy or atomic instruction is done inline; otherwise the call goes through the
//! peer's transport. `ACLSHMEM_DIRECT_ACCESS=0` turns the fast path off so every operation takes
//! the generic path (the test suite runs that way too).
//!
//! Ordering guarantees every transport gives:
//! * `put`/`get`/`iput`/`iget` (blocking): complete at return (source reusable / destination filled);
//! * `*_nbi`: issued; complete at the latest when [`Transport::quiet`] returns;
//! * `put_signal`: the data is visible at the target before the signal update is (release);
//! * `atomic`: one indivisible read-modify-write, sequentially consistent with other atomics on the
//!   same word from any PE;
//! * `fence`: operations to the same PE issued before it are delivered before those after it;
//! * `quiet`: every operation issued before it is complete and visible;
//! * `progress`: called by every wait loop, so a transport that needs the CPU to move data (a
//!   network engine's worker) advances while a PE waits.

pub(crate) mod shm;
pub(crate) mod ucx;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::SymmetricHeap;

/// A location in PE `pe`'s copy of `heap`, at byte offset `off` (checked against the heap size).
#[derive(Clone, Copy)]
pub(crate) struct Remote<'a> {
    pub heap: &'a SymmetricHeap,
    pub off: usize,
    pub pe: usize,
}

impl Remote<'_> {
    /// The peer's address for inline loads and stores, when the fast path may use it.
    #[inline]
    pub fn direct(&self) -> Option<*mut u8> {
        self.heap.direct_addr(self.off, self.pe)
    }

    /// The same heap `delta` bytes further on.
    #[inline]
    pub fn at(&self, delta: usize) -> Self {
        Remote {
            off: self.off + delta,
            ..*self
        }
    }
}

/// Which call a message for a mailbox ([`Transport::mail`]) belongs to: the team slot (so a new
/// team there drops what is left), a part number and a tag the collective chooses (kind, call
/// number, sender).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MailKey {
    pub slot: u32,
    /// Which part of the call's data (a long payload goes in several messages).
    pub part: u32,
    pub tag: u64,
}

/// Width of an atomic word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    W32,
    W64,
}

/// An atomic operation on a remote word; values are the word's bits, zero-extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AmoOp {
    Fetch,
    Set(u64),
    Swap(u64),
    CompareSwap { cond: u64, value: u64 },
    FetchAdd(u64),
    FetchAnd(u64),
    FetchOr(u64),
    FetchXor(u64),
}

/// When a put-with-signal is complete ([`Transport::put_signal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// At the target when the call returns (the aclshmem API's blocking forms: the original's
    /// blocking kernel waits for its transfer).
    Remote,
    /// The source is reusable when the call returns; delivered at the latest at `quiet`
    /// (OpenSHMEM's blocking `shmem_put_signal`).
    Local,
    /// Issued only: the source stays untouched and the call completes at `quiet` (`_nbi`).
    Quiet,
}

/// How the signal word of a put-with-signal changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalOp {
    Set,
    Add,
}

/// Element layout of a strided transfer: `n` elements of `elem` bytes, element `i` at
/// `i * dst_stride` / `i * src_stride` elements from the start (strides may be negative).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strides {
    pub elem: usize,
    pub dst_stride: isize,
    pub src_stride: isize,
    pub n: usize,
}

/// One way of reaching peers. See the module documentation for the ordering guarantees.
pub(crate) trait Transport: Send + Sync {
    /// Name for logs and `ACLSHMEM_INFO`.
    fn name(&self) -> &'static str;

    /// Whether this transport can reach PE `pe`.
    fn reaches(&self, pe: usize) -> bool;

    /// Collective over all PEs, called once for every heap the instance creates (the device heap at
    /// init, the host heap on its first allocation): register the memory, exchange keys.
    fn attach_heap(&self, _heap: &SymmetricHeap, _boot: &dyn Bootstrap) -> Result<()> {
        Ok(())
    }

    /// Blocking put of `len` bytes from local `src`.
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes; `dst..dst+len` lies inside the heap.
    unsafe fn put(&self, dst: Remote<'_>, src: *const u8, len: usize) -> Result<()>;

    /// Non-blocking put: `src` may be reused only after [`Transport::quiet`].
    ///
    /// # Safety
    /// As for `put`, and `src` stays readable and unchanged until the next quiet.
    unsafe fn put_nbi(&self, dst: Remote<'_>, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: forwarded; a blocking put satisfies the non-blocking contract.
        unsafe { self.put(dst, src, len) }
    }

    /// Blocking get of `len` bytes into local `dst`.
    ///
    /// # Safety
    /// `dst` must be writable for `len` bytes; `src..src+len` lies inside the heap.
    unsafe fn get(&self, src: Remote<'_>, dst: *mut u8, len: usize) -> Result<()>;

    /// Non-blocking get: `dst` holds the data after [`Transport::quiet`].
    ///
    /// # Safety
    /// As for `get`, and `dst` stays writable until the next quiet.
    unsafe fn get_nbi(&self, src: Remote<'_>, dst: *mut u8, len: usize) -> Result<()> {
        // SAFETY: forwarded; a blocking get satisfies the non-blocking contract.
        unsafe { self.get(src, dst, len) }
    }

    /// Blocking strided put; `dst` is the first element's location.
    ///
    /// # Safety
    /// Every source element must be readable; every destination element lies inside the heap.
    unsafe fn iput(&self, dst: Remote<'_>, src: *const u8, s: Strides) -> Result<()>;

    /// Blocking strided get; `src` is the first element's location.
    ///
    /// # Safety
    /// Every destination element must be writable; every source element lies inside the heap.
    unsafe fn iget(&self, src: Remote<'_>, dst: *mut u8, s: Strides) -> Result<()>;

    /// An atomic operation on the `width` word at `at` (aligned); returns the previous value
    /// (the current one for `Fetch`).
    fn atomic(&self, at: Remote<'_>, width: Width, op: AmoOp) -> Result<u64>;

    /// An atomic whose previous value nobody needs (a counter the target polls): may return once
    /// the operation is issued; complete at the latest when `quiet` returns, ordered by `fence`
    /// like a put. The default is the blocking [`Transport::atomic`].
    fn atomic_post(&self, at: Remote<'_>, width: Width, op: AmoOp) -> Result<()> {
        self.atomic(at, width, op).map(|_| ())
    }

    /// An update of a counter whose target waits for it (a barrier's arrival counter, polled by
    /// its target before it goes on): may return once issued. A later `quiet` on this PE need not
    /// complete it (what the caller needs from it, the target learns by seeing it), and it is not
    /// ordered after the caller's earlier operations by `fence`: callers issue it after a quiet.
    /// It completes eventually, as the target's wait requires. The default is
    /// [`Transport::atomic_post`].
    fn notify(&self, at: Remote<'_>, width: Width, op: AmoOp) -> Result<()> {
        self.atomic_post(at, width, op)
    }

    /// Put of `len` bytes at `dst`, then the 64-bit `word` stored at `flag` (aligned, same PE): a
    /// PE that observes the word (Acquire) sees the data. For a word its target waits for before
    /// it goes on (a leader's partial result in a reduction), like [`Transport::notify`]: a later
    /// `quiet` need not complete it, and it is not ordered with the caller's other operations.
    /// The default is a put, a fence and a put of the word.
    ///
    /// # Safety
    /// As for `put`; `flag` lies inside the heap.
    unsafe fn put_notify(
        &self,
        dst: Remote<'_>,
        src: *const u8,
        len: usize,
        flag: Remote<'_>,
        word: u64,
    ) -> Result<()> {
        // SAFETY: forwarded; the word lives on this stack frame during the blocking put.
        unsafe {
            self.put(dst, src, len)?;
            self.fence()?;
            self.put(flag, (&word as *const u64).cast(), 8)
        }
    }

    /// Put of `len` bytes, then the signal update of the `width` word at `sig`: a PE that observes
    /// the signal sees the data. `done`: when the call is complete ([`Completion`]).
    ///
    /// # Safety
    /// As for `put`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn put_signal(
        &self,
        dst: Remote<'_>,
        src: *const u8,
        len: usize,
        sig: Remote<'_>,
        width: Width,
        op: SignalOp,
        value: u64,
        done: Completion,
    ) -> Result<()> {
        // SAFETY: forwarded.
        unsafe {
            if done == Completion::Quiet {
                self.put_nbi(dst, src, len)?;
            } else {
                self.put(dst, src, len)?;
            }
        }
        // the signal must not overtake the data
        self.fence()?;
        let op = match op {
            SignalOp::Set => AmoOp::Set(value),
            SignalOp::Add => AmoOp::FetchAdd(value),
        };
        self.atomic(sig, width, op).map(|_| ())
    }

    /// Whether this transport has mailboxes ([`Transport::mail`]).
    fn has_mail(&self) -> bool {
        false
    }

    /// Sends `len` bytes to PE `pe`'s mailbox under `key`, with a `note` the receiver reads (what
    /// the sender makes of the call, say, for the receiver to compare with its own), where they
    /// stay until the call they are for takes them ([`Transport::take_mail`]) or the team slot is
    /// reused
    /// ([`Transport::drop_mail`]): a collective's data that may arrive before its receiver is in
    /// the call, so the sender need not wait for the receiver. The source is reusable on return;
    /// like [`Transport::notify`], the target waits for it, so `quiet` need not complete it.
    /// Keys are never reused while a message under them may be in flight (the caller numbers its
    /// calls). Transports without mailboxes ([`Transport::has_mail`]) refuse.
    ///
    /// # Safety
    /// `src` holds `len` readable bytes.
    unsafe fn mail(&self, pe: usize, key: MailKey, note: u64, src: *const u8, len: usize) -> Result<()> {
        let _ = (key, note, src, len);
        Err(Error::NotSupported(format!(
            "the {} transport to PE {pe} has no mailboxes",
            self.name()
        )))
    }

    /// Takes the message under `key` from this PE's mailbox: `None` while it has not arrived,
    /// `Some(Ok(note))` once its `len` bytes are copied to `dst` (`note`: the sender's),
    /// `Some(Err(n))` when it holds `n` bytes instead (the message is dropped, `dst` untouched).
    ///
    /// # Safety
    /// `dst` holds `len` writable bytes.
    unsafe fn take_mail(
        &self,
        key: MailKey,
        dst: *mut u8,
        len: usize,
    ) -> Option<std::result::Result<u64, usize>> {
        let _ = (key, dst, len);
        None
    }

    /// Drops every message kept for team slot `slot` (a new team is installed there).
    fn drop_mail(&self, slot: u32) {
        let _ = slot;
    }

    /// Orders earlier operations to each PE before later ones to the same PE.
    fn fence(&self) -> Result<()>;

    /// Completes every operation issued so far (a [`Transport::notify`] may still be in flight).
    fn quiet(&self) -> Result<()>;

    /// Advances outstanding work; called from every wait loop.
    fn progress(&self) {}

    /// Whether the transport advances without [`Transport::progress`] calls (it completes at
    /// once, or runs a thread of its own): a blocking call that does not drive it, such as a
    /// bootstrap collective, then leaves no peer waiting on this PE.
    fn progresses_alone(&self) -> bool {
        true
    }

    /// Tells the transport that a program thread is inside the library and progresses it
    /// often, without progressing now (a progress thread may then leave the work to it).
    fn drive(&self) {}

    /// Whether every operation is complete and visible when its call returns (a CPU copy or
    /// atomic into mapped memory): then quiet and fence need only the caller's memory fence, and
    /// [`Routes`] skips the transport's own.
    fn completes_at_once(&self) -> bool {
        false
    }
}

/// The transports of one instance and, per PE, which one reaches it.
pub(crate) struct Routes {
    transports: Vec<Box<dyn Transport>>,
    /// Index into `transports` per PE; `NONE` when no transport reaches it.
    route: Vec<u8>,
    /// Whether any transport needs [`Transport::progress`] calls.
    needs_progress: bool,
    /// Whether any transport has operations that complete later (so quiet and fence must ask).
    deferred: bool,
    /// Whether some transport advances only inside library calls (UCX without its progress
    /// thread): see [`Routes::driven_by_calls`].
    by_calls: bool,
}

const NONE: u8 = u8::MAX;

/// Set once an instance of this process has a transport that advances only inside library calls
/// ([`Routes::driven_by_calls`]): one load on the polling calls' hot path, where the instance's
/// own flag cost them 6-8 instructions.
static DRIVEN_BY_CALLS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a polling call should call `rma::progress_polled`.
#[inline(always)]
pub(crate) fn polling_drives() -> bool {
    DRIVEN_BY_CALLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Registry: builds every transport of this build and routes each PE to the first that reaches
/// it. A new transport is one file in this directory plus one line here.
///
/// Collective (UCX exchanges worker addresses): every PE calls it with the same `force_ucx`.
/// Shared memory reaches this PE's node (only this PE itself with `force_ucx`,
/// `ACLSHMEM_TRANSPORT=ucx`); UCX, loaded only then, reaches every other PE.
pub(crate) fn select(
    my_pe: usize,
    same_node: &[bool],
    force_ucx: bool,
    boot: &dyn Bootstrap,
) -> Result<Routes> {
    let shm_reach: Vec<bool> = (0..same_node.len())
        .map(|pe| if force_ucx { pe == my_pe } else { same_node[pe] })
        .collect();
    let mut transports: Vec<Box<dyn Transport>> = vec![Box::new(shm::Shm::new(my_pe, &shm_reach))];
    let ucx_reach: Vec<bool> = shm_reach.iter().map(|&s| !s).collect();
    // every PE of a job that spans nodes has a peer elsewhere, so this is decided alike everywhere
    if ucx_reach.contains(&true) {
        transports.push(Box::new(ucx::Ucx::create(boot, ucx_reach)?));
    }
    let route = (0..same_node.len())
        .map(|pe| {
            transports
                .iter()
                .position(|t| t.reaches(pe))
                .map_or(NONE, |i| i as u8)
        })
        .collect();
    let deferred = transports.iter().any(|t| !t.completes_at_once());
    let by_calls = deferred && !transports.iter().all(|t| t.progresses_alone());
    if by_calls {
        DRIVEN_BY_CALLS.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(Routes {
        needs_progress: deferred,
        deferred,
        by_calls,
        transports,
        route,
    })
}

impl Routes {
    /// The transport that reaches `pe` (in range: checked by the caller).
    #[inline]
    pub fn to(&self, pe: usize) -> Result<&dyn Transport> {
        match self.route.get(pe) {
            Some(&i) if i != NONE => Ok(self.transports[i as usize].as_ref()),
            _ => Err(Error::NotSupported(format!(
                "PE {pe} is on another node, which this build cannot reach"
            ))),
        }
    }

    /// Whether every PE has a transport.
    pub fn reaches_all(&self) -> bool {
        !self.route.contains(&NONE)
    }

    /// "shm: PEs 0 1 2; none: PEs 3" (for the init log).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (i, t) in self.transports.iter().enumerate() {
            let pes: Vec<String> = (0..self.route.len())
                .filter(|&pe| self.route[pe] as usize == i)
                .map(|pe| pe.to_string())
                .collect();
            if !pes.is_empty() {
                parts.push(format!("{}: PEs {}", t.name(), pes.join(" ")));
            }
        }
        let none: Vec<String> = (0..self.route.len())
            .filter(|&pe| self.route[pe] == NONE)
            .map(|pe| pe.to_string())
            .collect();
        if !none.is_empty() {
            parts.push(format!("unreachable: PEs {}", none.join(" ")));
        }
        parts.join("; ")
    }

    /// Runs `f`, a blocking call that does not drive the transports itself (a bootstrap
    /// collective inside a collective allocation, free or finalize), while a helper thread drives
    /// them, when some transport advances only when driven: a peer's get, atomic or quiet waiting
    /// on this PE is served meanwhile (without the network transport's progress thread nobody
    /// else would serve it, and the peer would wait until it gives up).
    pub fn drive_while<T>(&self, f: impl FnOnce() -> T) -> T {
        if !self.needs_progress || self.transports.iter().all(|t| t.progresses_alone()) {
            return f();
        }
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("aclshmem-drive".into())
                .spawn_scoped(s, || {
                    crate::logging::internal_thread();
                    let mut b = crate::wait::Backoff::new();
                    while !done.load(std::sync::atomic::Ordering::Acquire) {
                        self.progress();
                        b.snooze();
                    }
                });
            if let Err(e) = helper {
                // no thread to spare: the call runs undriven (peers waiting on this PE wait
                // until it returns, as without this helper)
                log::warn!("no thread to drive the transports during a blocking collective: {e}");
            }
            // the helper stops however `f` ends (a panic too: the scope waits for the helper)
            struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, std::sync::atomic::Ordering::Release);
                }
            }
            let _stop = Stop(&done);
            f()
        })
    }

    /// Whether some transport advances only inside library calls (UCX without its progress
    /// thread). Then the calls a program may poll in a loop of its own on a word of this node (a
    /// fetching atomic, a `g`), which need no transport themselves, drive it too: a PE that spins
    /// on its own lock word with compare-and-swap let its peers' atomics to it wait for ever.
    #[inline(always)]
    pub fn driven_by_calls(&self) -> bool {
        self.by_calls
    }

    /// Lets every transport advance (wait loops call this between polls).
    #[inline]
    pub fn progress(&self) {
        if self.needs_progress {
            for t in &self.transports {
                t.progress();
            }
        }
    }

    /// [`Transport::drive`] on every transport that needs progress calls.
    #[inline]
    pub fn drive(&self) {
        if self.needs_progress {
            for t in &self.transports {
                t.drive();
            }
        }
    }

    /// Quiet on every transport whose operations complete later (the caller has issued its own
    /// memory fence for those that complete at once).
    #[inline]
    pub fn quiet(&self) -> Result<()> {
        if self.deferred {
            for t in self.transports.iter().filter(|t| !t.completes_at_once()) {
                t.quiet()?;
            }
        }
        Ok(())
    }

    /// Fence on every transport whose operations complete later (see [`Routes::quiet`]).
    #[inline]
    pub fn fence(&self) -> Result<()> {
        if self.deferred {
            for t in self.transports.iter().filter(|t| !t.completes_at_once()) {
                t.fence()?;
            }
        }
        Ok(())
    }

    /// Drops the messages kept for team slot `slot` in every transport's mailboxes.
    pub fn drop_mail(&self, slot: u32) {
        for t in &self.transports {
            t.drop_mail(slot);
        }
    }

    /// Collective: registers `heap` with every transport.
    pub fn attach_heap(&self, heap: &SymmetricHeap, boot: &dyn Bootstrap) -> Result<()> {
        for t in &self.transports {
            t.attach_heap(heap, boot)?;
        }
        Ok(())
    }
}

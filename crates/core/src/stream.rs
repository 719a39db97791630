//! Stream-ordered operations (`aclshmemx_*_on_stream`) and their CPU profiling records.
//!
//! libaclshmem reaches ACL streams only through entry points resolved at run time in the program
//! (`dlsym(RTLD_DEFAULT)`): the program links an ACL runtime (CANN's, or this repository's CPU
//! libascendcl.so) when it uses streams. An operation is boxed and launched as a host function on
//! the stream (`aclshimLaunchHostFuncWithStatus` when the runtime has it, so a failing operation is
//! reported by the stream's next synchronize; else `aclrtLaunchHostFunc`), so it runs in stream order
//! without blocking the calling thread. Without an ACL runtime the operation runs inline, and the
//! log says so once.
//!
//! `unsafe`: calls through resolved C function pointers and the boxed-closure trampoline.

use std::ffi::{c_int, c_void};

use crate::acl::{Lazy, resolve};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicUsize, Ordering};
use std::time::Instant;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::instance::Instance;
use aclshmem_abi::{ACLSHMEM_CYCLE_PROF_FRAME_CNT, ACLSHMEM_CYCLE_PROF_MAX_BLOCK, ProfPe};

type HostFn = unsafe extern "C" fn(*mut c_void);
type StatusFn = unsafe extern "C" fn(*mut c_void) -> c_int;

type LaunchFn = unsafe extern "C" fn(*mut c_void, HostFn, *mut c_void) -> c_int;
type LaunchStatusFn = unsafe extern "C" fn(*mut c_void, StatusFn, *mut c_void) -> c_int;
type CreateFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type StreamFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The ACL entry points libaclshmem uses.
struct Acl {
    launch: LaunchFn,
    launch_status: Option<LaunchStatusFn>,
    create: Option<CreateFn>,
    destroy: Option<StreamFn>,
    sync: Option<StreamFn>,
}

fn acl() -> Option<&'static Acl> {
    static ACL: Lazy<Acl> = Lazy::new();
    ACL.get(|| {
        let launch = resolve("aclrtLaunchHostFunc")?;
        // SAFETY: each symbol is the ACL runtime function of that name, with the C signature of
        // acl/acl_rt.h (and acl/acl_shim.h for the status variant).
        unsafe {
            Some(Acl {
                launch: std::mem::transmute::<*mut c_void, LaunchFn>(launch),
                launch_status: resolve("aclshimLaunchHostFuncWithStatus")
                    .map(|p| std::mem::transmute::<*mut c_void, LaunchStatusFn>(p)),
                create: resolve("aclrtCreateStream").map(|p| std::mem::transmute::<*mut c_void, CreateFn>(p)),
                destroy: resolve("aclrtDestroyStream")
                    .map(|p| std::mem::transmute::<*mut c_void, StreamFn>(p)),
                sync: resolve("aclrtSynchronizeStream")
                    .map(|p| std::mem::transmute::<*mut c_void, StreamFn>(p)),
            })
        }
    })
}

/// What a stream runs: an operation on the instance that was current when it was queued. It may
/// run more than once: a stream being captured into an ACL graph records it, and every execution
/// of the graph runs it again.
pub type Op = Arc<dyn Fn(&Instance) -> Result<()> + Send + Sync>;

struct Task {
    /// Captured at queue time: a later context switch does not redirect the operation, and
    /// finalize waits for (or cancels) operations that still hold their instance.
    inst: Arc<Instance>,
    call: &'static str,
    frame: Frame,
    op: Op,
}

/// What `run` still needs after the operation: its name and profiling frame.
struct TaskDone {
    call: &'static str,
    frame: Frame,
}

/// `ACL_ERROR_RT_INTERNAL_ERROR`: a failed operation, reported by the stream's next synchronize.
const STREAM_ERROR: c_int = 507000;

fn run(task: Task) -> c_int {
    let start = Instant::now();
    let Task {
        inst,
        call,
        frame,
        op,
    } = task;
    let r = if inst.is_closing() {
        Err(Error::NotInited)
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&inst)))
            .unwrap_or_else(|_| Err(Error::Inner("panic in a stream-ordered operation".into())))
    };
    let pe = inst.my_pe();
    let prof = prof_of(inst.id());
    // the instance may be released from here on (finalize waits for this count)
    drop(inst);
    let task = TaskDone { call, frame };
    prof_record(prof, task.frame, start.elapsed().as_nanos() as i64);
    match r {
        Ok(()) => 0,
        Err(e) => {
            log::error!("[PE {pe}] {}: {e}", task.call);
            STREAM_ERROR
        }
    }
}

unsafe extern "C" fn trampoline(args: *mut c_void) {
    // SAFETY: args is the Box<Task> leaked by `enqueue`, run exactly once.
    run(*unsafe { Box::from_raw(args as *mut Task) });
}

unsafe extern "C" fn trampoline_status(args: *mut c_void) -> c_int {
    // SAFETY: as above.
    run(*unsafe { Box::from_raw(args as *mut Task) })
}

/// Which streams a NULL handle means (spec 7): most calls use the library's internal stream, the
/// barriers and handle_wait pass NULL to the ACL default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullStream {
    Internal,
    Default,
}

/// Runs `op` in order on `stream`, on `inst` (the instance current when the call was made: the
/// operation keeps it alive until it ran).
pub fn enqueue(
    inst: Arc<Instance>,
    stream: *mut c_void,
    null: NullStream,
    call: &'static str,
    frame: Frame,
    op: Op,
) -> Result<()> {
    let task = Task {
        inst,
        call,
        frame,
        op,
    };
    let Some(acl) = acl() else {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            log::debug!("no ACL runtime in this process: stream-ordered calls run inline");
        }
        // an error is reported by `run` already (inline, there is no stream to report it to)
        run(task);
        return Ok(());
    };
    let stream = if stream.is_null() && null == NullStream::Internal {
        internal_stream()?
    } else {
        stream
    };
    let args = Box::into_raw(Box::new(task)) as *mut c_void;
    // SAFETY: the runtime calls the trampoline once with `args`, which stays valid until then.
    let rc = unsafe {
        match acl.launch_status {
            Some(f) => f(stream, trampoline_status, args),
            None => (acl.launch)(stream, trampoline, args),
        }
    };
    if rc != 0 {
        // the runtime refused it, so it will never run: take the task back
        // SAFETY: args came from Box::into_raw above and was not consumed.
        let task = *unsafe { Box::from_raw(args as *mut Task) };
        if rc == RT_FEATURE_NOT_SUPPORT {
            // the stream is being captured into a graph, which takes only work it can replay
            return enqueue_captured(task, stream);
        }
        return Err(Error::InvalidParam(format!(
            "the ACL runtime refused to queue on stream {stream:p} (error {rc})"
        )));
    }
    Ok(())
}

/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`: what the CPU runtime answers a one-shot job while the
/// stream is capturing.
const RT_FEATURE_NOT_SUPPORT: c_int = 207000;

/// Queues `task` as replayable work (see [`enqueue_reusable`]): recorded by the graph being
/// captured, run by every execution of it. The graph holds the instance weakly (a graph may
/// outlive it: finalize does not wait for graphs); an execution after finalize fails as a call
/// before init does.
fn enqueue_captured(task: Task, stream: *mut c_void) -> Result<()> {
    let Task {
        inst,
        call,
        frame,
        op,
    } = task;
    let weak = Arc::downgrade(&inst);
    drop(inst);
    enqueue_reusable(
        stream,
        call,
        Arc::new(move || {
            let inst = weak.upgrade().ok_or(Error::NotInited)?;
            match run(Task {
                inst,
                call,
                frame,
                op: op.clone(),
            }) {
                0 => Ok(()),
                _ => Err(Error::Inner("failed (logged above)".into())),
            }
        }),
    )
}

/// Work that needs no instance (a kernel launch): runs in order on `stream` (NULL = the ACL default
/// stream); a failure is reported by the stream's next synchronize when the runtime can report
/// one (`aclshimLaunchHostFuncWithStatus`), else logged. Without an ACL runtime it runs inline and
/// its error is returned.
pub fn enqueue_work(stream: *mut c_void, call: &'static str, work: Work) -> Result<()> {
    let Some(acl) = acl() else {
        return work();
    };
    // the handle is only passed on to the runtime, which checks it
    let stream: *mut c_void = stream.cast();
    let args = Box::into_raw(Box::new(WorkTask { call, work })) as *mut c_void;
    // SAFETY: the runtime calls the trampoline once with `args`, which stays valid until then.
    let rc = unsafe {
        match acl.launch_status {
            Some(f) => f(stream, work_trampoline_status, args),
            None => (acl.launch)(stream, work_trampoline, args),
        }
    };
    if rc != 0 {
        // SAFETY: args came from Box::into_raw above and was not consumed.
        drop(unsafe { Box::from_raw(args as *mut WorkTask) });
        return Err(Error::InvalidParam(format!(
            "the ACL runtime refused to queue on stream {stream:p} (error {rc})"
        )));
    }
    Ok(())
}

/// What [`enqueue_work`] runs.
pub type Work = Box<dyn FnOnce() -> Result<()> + Send>;

/// Work that may run more than once: once per execution of an ACL graph that captured it.
pub type Reusable = std::sync::Arc<dyn Fn() -> Result<()> + Send + Sync>;

type LaunchReusableFn =
    unsafe extern "C" fn(*mut c_void, StatusFn, *mut c_void, unsafe extern "C" fn(*mut c_void)) -> c_int;

/// [`enqueue_work`] for work that can be replayed: through the CPU runtime's
/// `aclshimLaunchHostFuncReusable` when present, so a stream being captured into a graph
/// (`aclmdlRICaptureBegin`) records it and every execution of the graph runs it again; otherwise
/// as one-shot work.
pub fn enqueue_reusable(stream: *mut c_void, call: &'static str, work: Reusable) -> Result<()> {
    static F: Lazy<LaunchReusableFn> = Lazy::new();
    let f = F.get(|| {
        // SAFETY: the CPU runtime exports this symbol with exactly this C signature (acl/acl_shim.h).
        resolve("aclshimLaunchHostFuncReusable")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, LaunchReusableFn>(p) })
    });
    let Some(f) = f.filter(|_| acl().is_some()) else {
        return enqueue_work(stream, call, Box::new(move || work()));
    };
    // the handle is only passed on to the runtime, which checks it
    let stream: *mut c_void = stream.cast();
    let args = Box::into_raw(Box::new(ReusableTask { call, work })) as *mut c_void;
    // SAFETY: the runtime calls the trampoline with `args` until it calls `release_reusable` once
    // (also when it refuses to queue), which frees the box.
    let rc = unsafe { f(stream, reusable_trampoline, args, release_reusable) };
    if rc != 0 {
        return Err(Error::InvalidParam(format!(
            "the ACL runtime refused to queue on stream {stream:p} (error {rc})"
        )));
    }
    Ok(())
}

struct ReusableTask {
    call: &'static str,
    work: Reusable,
}

unsafe extern "C" fn reusable_trampoline(args: *mut c_void) -> c_int {
    // SAFETY: args is the live Box<ReusableTask> of `enqueue_reusable` (not yet released).
    let t = unsafe { &*(args as *const ReusableTask) };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (t.work)()))
        .unwrap_or_else(|_| Err(Error::Inner("panic in stream-ordered work".into())));
    match r {
        Ok(()) => 0,
        Err(e) => {
            log::error!("{}: {e}", t.call);
            STREAM_ERROR
        }
    }
}

unsafe extern "C" fn release_reusable(args: *mut c_void) {
    // SAFETY: args came from Box::into_raw in `enqueue_reusable`; the runtime releases it once.
    drop(unsafe { Box::from_raw(args as *mut ReusableTask) });
}

struct WorkTask {
    call: &'static str,
    work: Work,
}

fn run_work(t: WorkTask) -> c_int {
    let WorkTask { call, work } = t;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(Error::Inner("panic in stream-ordered work".into())));
    match r {
        Ok(()) => 0,
        Err(e) => {
            log::error!("{call}: {e}");
            STREAM_ERROR
        }
    }
}

unsafe extern "C" fn work_trampoline(args: *mut c_void) {
    // SAFETY: args is the Box<WorkTask> leaked by `enqueue_work`, run exactly once.
    run_work(*unsafe { Box::from_raw(args as *mut WorkTask) });
}

unsafe extern "C" fn work_trampoline_status(args: *mut c_void) -> c_int {
    // SAFETY: as above.
    run_work(*unsafe { Box::from_raw(args as *mut WorkTask) })
}

/// The library's own stream (created on first use; NULL = the ACL default stream when creation is
/// not possible, e.g. no device set on this thread).
static INTERNAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

fn internal_stream() -> Result<*mut c_void> {
    let s = INTERNAL.load(Ordering::Acquire);
    if !s.is_null() {
        return Ok(s);
    }
    let Some(create) = acl().and_then(|a| a.create) else {
        return Ok(std::ptr::null_mut());
    };
    let mut s = std::ptr::null_mut();
    // SAFETY: aclrtCreateStream(aclrtStream *).
    let rc = unsafe { create(&mut s) };
    if rc != 0 || s.is_null() {
        log::warn!("aclrtCreateStream failed ({rc}): the internal stream is the ACL default stream");
        return Ok(std::ptr::null_mut());
    }
    match INTERNAL.compare_exchange(std::ptr::null_mut(), s, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(s),
        Err(existing) => {
            if let Some(destroy) = acl().and_then(|a| a.destroy) {
                // SAFETY: s was created just above and is not shared.
                unsafe { destroy(s) };
            }
            Ok(existing)
        }
    }
}

/// The library's internal stream (created on first use; NULL = the ACL default stream, also when
/// there is no ACL runtime): `g_state_host.default_stream`.
pub fn internal_stream_handle() -> *mut c_void {
    if acl().is_none() {
        return std::ptr::null_mut();
    }
    internal_stream().unwrap_or(std::ptr::null_mut())
}

/// Init: creates the internal stream now, on the thread that set the device (as programs do
/// before init), when an ACL runtime is present.
pub fn open_internal_stream() {
    if acl().is_some() {
        let _ = internal_stream();
    }
}

/// The blocking host calls (barriers, syncs, waits) complete the internal stream's work first, as
/// the original does (spec 7).
pub fn sync_internal() {
    if crate::block::current().is_some() {
        // a kernel block must not wait for a stream (its own launch may be queued on it)
        return;
    }
    let s = INTERNAL.load(Ordering::Acquire);
    if s.is_null() {
        return;
    }
    if let Some(sync) = acl().and_then(|a| a.sync) {
        // SAFETY: s is the live internal stream; this is never called from its own worker.
        let rc = unsafe { sync(s) };
        if rc != 0 {
            log::error!("an operation queued on the internal stream failed (aclrtSynchronizeStream: {rc})");
        }
    }
}

/// Finalize: drains and destroys the internal stream.
pub fn close_internal_stream() {
    let s = INTERNAL.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if s.is_null() {
        return;
    }
    if let Some(acl) = acl() {
        // SAFETY: s is the internal stream created by `internal_stream`, no longer reachable.
        unsafe {
            if let Some(sync) = acl.sync {
                sync(s);
            }
            if let Some(destroy) = acl.destroy {
                destroy(s);
            }
        }
    }
}

// ---- profiling (aclshmemx_get_prof) ----

/// Frame ids of the profiling records: which kind of stream-ordered operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    Put = 0,
    Get = 1,
    Quiet = 2,
    Signal = 3,
    SignalWait = 4,
    Barrier = 5,
    HandleWait = 6,
}

/// The profiling state of one instance id ([`prof_of`]): whether this PE is the profiled one of that
/// instance (`SHMEM_CYCLE_PROF_PE` names a PE of each instance's own numbering), its number there,
/// and the counters. Block 0 = this PE's stream-ordered operations; `cycles` holds nanoseconds.
pub struct Prof {
    on: AtomicBool,
    my_pe: AtomicUsize,
    count: [AtomicI64; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
    nanos: [AtomicI64; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
    out: AtomicPtr<ProfPe>,
    /// The table kernels write with `SHMEMI_PROF_START/END` (the device-state record's `profs`):
    /// per block, cycles and counts; merged into `out` by [`get_prof`].
    device: AtomicPtr<ProfPe>,
}

impl Prof {
    pub const fn new() -> Prof {
        Prof {
            on: AtomicBool::new(false),
            my_pe: AtomicUsize::new(0),
            count: [const { AtomicI64::new(0) }; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
            nanos: [const { AtomicI64::new(0) }; ACLSHMEM_CYCLE_PROF_FRAME_CNT],
            out: AtomicPtr::new(std::ptr::null_mut()),
            device: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

impl Default for Prof {
    fn default() -> Prof {
        Prof::new()
    }
}

/// The profiling state of instance `id`, made at its first use and kept for the process (the
/// tables handed to the program stay valid after a finalize). Every stream-ordered operation
/// looks it up: instance 0's is a static, another instance's is remembered by the thread (a
/// stream's worker runs one instance's operations in a row), so the list's lock is taken only
/// when the thread meets another instance.
pub fn prof_of(id: u64) -> &'static Prof {
    static SLOT0: Prof = Prof::new();
    static OTHERS: Mutex<Vec<(u64, &'static Prof)>> = Mutex::new(Vec::new());
    thread_local! {
        static LAST: std::cell::Cell<Option<(u64, &'static Prof)>> = const { std::cell::Cell::new(None) };
    }
    if id == 0 {
        return &SLOT0;
    }
    if let Some((i, p)) = LAST.with(|l| l.get())
        && i == id
    {
        return p;
    }
    let mut others = OTHERS.lock().unwrap_or_else(|e| e.into_inner());
    let p = match others.iter().find(|(i, _)| *i == id) {
        Some((_, p)) => *p,
        None => {
            let p: &'static Prof = Box::leak(Box::new(Prof::new()));
            others.push((id, p));
            p
        }
    };
    LAST.with(|l| l.set(Some((id, p))));
    p
}

/// Init of an instance in which this PE is `my_pe`: profiling is on when SHMEM_CYCLE_PROF_PE names
/// this PE (invalid value: PE 0, warned).
pub fn configure_prof(prof: &Prof, my_pe: usize) {
    prof.my_pe.store(my_pe, Ordering::Relaxed);
    let on = match crate::config::SHMEM_CYCLE_PROF_PE.get() {
        Ok(None) => false,
        Ok(Some(p)) if p < aclshmem_abi::ACLSHMEM_MAX_PES => p == my_pe,
        _ => {
            let v = crate::config::SHMEM_CYCLE_PROF_PE.raw().unwrap_or_default();
            log::warn!("SHMEM_CYCLE_PROF_PE=\"{v}\" is not a PE number: profiling PE 0");
            my_pe == 0
        }
    };
    prof.on.store(on, Ordering::Release);
}

fn prof_record(p: &Prof, frame: Frame, nanos: i64) {
    if p.on.load(Ordering::Relaxed) {
        p.count[frame as usize].fetch_add(1, Ordering::Relaxed);
        p.nanos[frame as usize].fetch_add(nanos, Ordering::Relaxed);
    }
}

/// A zeroed, library-owned `ProfPe` (1 MiB) in `slot`, allocated once for the process.
fn prof_table(slot: &AtomicPtr<ProfPe>, my_pe: usize) -> Option<*mut ProfPe> {
    let out = slot.load(Ordering::Acquire);
    if !out.is_null() {
        return Some(out);
    }
    let layout = std::alloc::Layout::new::<ProfPe>();
    // SAFETY: ProfPe is plain integers, valid when zeroed; the layout is non-zero-sized.
    let fresh = unsafe { std::alloc::alloc_zeroed(layout) } as *mut ProfPe;
    if fresh.is_null() {
        return None;
    }
    // SAFETY: fresh is a valid zeroed ProfPe not shared yet.
    unsafe { (*fresh).pe_id = my_pe as i32 };
    Some(
        match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => fresh,
            Err(existing) => {
                // SAFETY: fresh was allocated above with the same layout and never shared.
                unsafe { std::alloc::dealloc(fresh.cast(), layout) };
                existing
            }
        },
    )
}

/// The table kernels of this PE record `SHMEMI_PROF_START/END` into (`profs` of the device-state
/// record, `pe_id` = this PE), or NULL when this PE is not profiled (the macros then do nothing).
pub fn device_prof_table(prof: &Prof) -> *mut ProfPe {
    if !prof.on.load(Ordering::Acquire) {
        return std::ptr::null_mut();
    }
    prof_table(&prof.device, prof.my_pe.load(Ordering::Relaxed)).unwrap_or(std::ptr::null_mut())
}

/// `aclshmemx_get_prof`: the library-owned record of this PE (None when this PE is not profiled),
/// printed when `verbose`: the kernels' `SHMEMI_PROF_*` table, plus in block 0 this PE's
/// stream-ordered operations.
pub fn get_prof(p: &Prof, verbose: bool) -> Option<*mut ProfPe> {
    if !p.on.load(Ordering::Acquire) {
        return None;
    }
    let my_pe = p.my_pe.load(Ordering::Relaxed);
    let out = prof_table(&p.out, my_pe)?;
    let device = p.device.load(Ordering::Acquire);
    // SAFETY: out points at the library-owned ProfPe; the program reads it between calls.
    let rec = unsafe { &mut *out };
    rec.pe_id = my_pe as i32;
    for b in 0..ACLSHMEM_CYCLE_PROF_MAX_BLOCK {
        for f in 0..ACLSHMEM_CYCLE_PROF_FRAME_CNT {
            let (mut count, mut cycles) = if device.is_null() {
                (0, 0)
            } else {
                // SAFETY: the device table lives for the process; kernels update its words with
                // atomic adds, read here the same way.
                unsafe {
                    let d = &raw mut (*device).block_prof[b];
                    (
                        AtomicI64::from_ptr(&raw mut (*d).ccount[f]).load(Ordering::Relaxed),
                        AtomicI64::from_ptr(&raw mut (*d).cycles[f]).load(Ordering::Relaxed),
                    )
                }
            };
            if b == 0 {
                count += p.count[f].load(Ordering::Relaxed);
                cycles += p.nanos[f].load(Ordering::Relaxed);
            }
            rec.block_prof[b].ccount[f] = count;
            rec.block_prof[b].cycles[f] = cycles;
        }
    }
    if verbose {
        println!("BlockID FrameID Cycles Count AvgTime(us)");
        for b in 0..ACLSHMEM_CYCLE_PROF_MAX_BLOCK {
            for f in 0..ACLSHMEM_CYCLE_PROF_FRAME_CNT {
                let (cycles, count) = (rec.block_prof[b].cycles[f], rec.block_prof[b].ccount[f]);
                if count != 0 {
                    println!(
                        "{b} {f} {cycles} {count} {:.3}",
                        cycles as f64 / count as f64 / 1000.0
                    );
                }
            }
        }
    }
    Some(out)
}

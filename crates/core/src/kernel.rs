//! Kernel launches of the CPU device mode (`k<<<blockDim, l2ctrl, stream>>>(args)`, rewritten by
//! the `aclshmem-cxx` compiler wrapper into a call of the launcher in `device/aclshmem_launch.h`).
//!
//! A launch is queued on its ACL stream like every other stream task, so it runs after the work
//! queued before it and before the work queued after it. When it runs, every block context runs on
//! its own thread at the same time: upstream kernels assume all blocks are resident (barriers,
//! `SyncAll`, spin-waits on flags set by other blocks), so a pool smaller than the launch would
//! deadlock. Threads are kept in a pool and reused by later launches; a launch larger than the pool
//! grows it, and the extra threads stay for reuse: they never exit (the process's exit ends them at
//! once). Thousands of threads ending together after a launch, each unmapping its UB and its
//! stack, queued on the kernel's memory-map lock and, with UCX loaded, spun on the lock of UCX's
//! unmap hook: on 2 nodes of the virtual cluster, a second 4000-block launch, or the finalize
//! after one, stalled for minutes while 600 exiting threads burnt both CPUs (136 s of CPU), and
//! the other PE's remote atomics timed out. Each thread owns its block's UB buffer for the life
//! of the thread.
//!
//! A block that fails (a C++ exception, a fault caught by the launcher, a panic) breaks the
//! launch-wide rendezvous so no other block waits for it for ever, and the launch reports the
//! failure to the stream: the next `aclrtSynchronizeStream` returns an error (with the CPU
//! libascendcl), and the log names the block and the reason.
//!
//! `unsafe`: calls of the C kernel trampoline and its closure pointer.

use std::ffi::{c_int, c_void};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex};

use crate::block::{self, Block, KernelKind, Rendezvous, UB_SIZE};
use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::{collectives, runtime, stream};

/// Runs one block: the C trampoline of the launch, given the launch's closure. Returns 0, or
/// non-zero when the block failed (after [`block_failed`] told why).
pub type BlockFn = unsafe extern "C" fn(closure: *mut c_void) -> c_int;
/// Frees the launch's closure once every block returned.
pub type FreeFn = unsafe extern "C" fn(closure: *mut c_void);

/// Largest `blockDim` accepted (one thread per block context).
pub const MAX_BLOCK_DIM: u32 = 65535;
/// Stack of a block thread (kernels keep their locals on it).
const STACK: usize = 4 << 20;

/// One kernel launch as the launcher hands it over.
pub struct Launch {
    pub kind: KernelKind,
    pub block_dim: u32,
    pub func: BlockFn,
    pub closure: *mut c_void,
    pub free: Option<FreeFn>,
}

// SAFETY: the closure is built by the launcher for exactly this launch and is only read (by every
// block, concurrently, as the C++ launcher allows: it is a const tuple of by-value arguments) until
// `free` runs once after the last block.
unsafe impl Send for Launch {}
// SAFETY: as above; blocks only call `func(closure)`.
unsafe impl Sync for Launch {}

impl Drop for Launch {
    fn drop(&mut self) {
        if let Some(f) = self.free {
            // SAFETY: the closure belongs to this launch and no block runs any more.
            unsafe { f(self.closure) };
        }
    }
}

/// Queues `l` on `stream` (NULL = the ACL default stream; without an ACL runtime in the process
/// the launch runs at once and its failure is returned).
pub fn launch(stream: *mut c_void, l: Launch) -> Result<()> {
    if l.block_dim == 0 || l.block_dim > MAX_BLOCK_DIM {
        return Err(Error::InvalidParam(format!(
            "blockDim {} is outside 1..={MAX_BLOCK_DIM}",
            l.block_dim
        )));
    }
    if block::current().is_some() {
        return Err(Error::NotSupported(
            "a kernel launch from inside a kernel block".into(),
        ));
    }
    block::reserve_low_addresses();
    let l = Arc::new(l);
    stream::enqueue_reusable(stream, "kernel launch", Arc::new(move || run(&l)))
}

/// Runs every block context of `l` at once and waits for all of them (once per execution: a launch
/// captured into an ACL graph runs again with every execution of the graph).
pub fn run(l: &Arc<Launch>) -> Result<()> {
    // contexts 0..aiv are the AIVs (GetBlockIdx() = the context number), the rest the AICs of a
    // MIX launch (GetBlockIdx() = context - aiv)
    let aiv = (l.block_dim * l.kind.sub_blocks()) as usize;
    let n = aiv + (l.block_dim * l.kind.aic_per_block()) as usize;
    let shared = Arc::new(Shared {
        launch: Arc::clone(l),
        all: Rendezvous::new(aiv),
        cores: Rendezvous::new(n),
        aiv,
        n,
        done: Mutex::new(Done {
            finished: 0,
            failures: Vec::new(),
        }),
        first_failure: std::sync::atomic::AtomicUsize::new(usize::MAX),
        cv: Condvar::new(),
    });
    for ctx in 0..n {
        let s = Arc::clone(&shared);
        if let Err(e) = dispatch(Box::new(move |ub, idle| run_block(&s, ctx, ub, idle))) {
            // the blocks already running must not wait for the missing ones
            shared.all.break_all();
            shared.cores.break_all();
            let mut d = shared.done.lock().unwrap_or_else(|e| e.into_inner());
            for missing in ctx..n {
                d.failures.push((missing, format!("not started: {e}")));
            }
            d.finished += n - ctx;
            break;
        }
    }
    let mut d = shared.done.lock().unwrap_or_else(|e| e.into_inner());
    while d.finished < n {
        d = shared.cv.wait(d).unwrap_or_else(|e| e.into_inner());
    }
    if d.failures.is_empty() {
        return Ok(());
    }
    d.failures.sort_by_key(|f| f.0);
    // the cause: the block that failed first (the others failed because it broke their
    // rendezvous: "another block of the launch failed")
    let first = shared.first_failure.load(std::sync::atomic::Ordering::SeqCst);
    let (ctx, why) = d.failures.iter().find(|f| f.0 == first).unwrap_or(&d.failures[0]);
    let which = if *ctx < aiv {
        format!("block {ctx}")
    } else {
        format!("AIC block {}", ctx - aiv)
    };
    let pe = runtime::current_pe().map_or_else(|| "?".to_string(), |p| p.to_string());
    let summary = format!(
        "[PE {pe}] kernel failed in {} of {n} block contexts; {which}: {why}",
        d.failures.len()
    );
    if shared.all.skipped_pe_barrier() || shared.cores.skipped_pe_barrier() {
        // blocks of this launch were in a device barrier (aclshmem_barrier_all, a team barrier)
        // that this PE now never joins, while the other PEs' blocks wait in it: going on would
        // pair their device barrier with this PE's next barrier (a host one, say), so every later
        // barrier would be one off and the job would hang in the end. It ends here instead.
        let msg = format!(
            "{summary}; other blocks of the launch were waiting in a device barrier that this PE \
             can no longer join, so the PEs' barriers would not match any more: ending the job"
        );
        log::error!("{msg}");
        crate::logging::write_stderr(&format!("aclshmem: {msg}\n"));
        runtime::global_exit(1);
    }
    Err(Error::Inner(summary))
}

struct Shared {
    launch: Arc<Launch>,
    /// The AIV contexts.
    all: Rendezvous,
    /// Every context (AIV and AIC).
    cores: Rendezvous,
    /// AIV contexts (the first `aiv` context numbers).
    aiv: usize,
    /// All contexts.
    n: usize,
    done: Mutex<Done>,
    cv: Condvar,
    /// The context that failed first (`usize::MAX`: none yet).
    first_failure: std::sync::atomic::AtomicUsize,
}

struct Done {
    finished: usize,
    /// (context number, why)
    failures: Vec<(usize, String)>,
}

/// Runs block context `ctx` on the calling pool thread; `idle` puts the thread back into the pool
/// just before the launch learns that the block finished, so a launch that follows at once finds
/// it there (not yet back, it made the pool start one more thread for good).
fn run_block(s: &Shared, ctx: usize, ub: *mut u8, idle: &dyn Fn()) {
    let aic = ctx >= s.aiv;
    let b = Block {
        idx: if aic { ctx - s.aiv } else { ctx } as u32,
        aic,
        blocks: s.launch.block_dim,
        kind: s.launch.kind,
        ub,
        all: &s.all,
        cores: &s.cores,
    };
    // SAFETY: `b` outlives the block (left below, before `b` goes out of scope).
    unsafe { block::enter(&b) };
    block::set_ub_segment(Some(ub));
    FAILURE.with(|f| f.borrow_mut().take());
    set_abandon(None);
    let f = s.launch.func;
    let c = s.launch.closure;
    // SAFETY: the launcher's trampoline, called with its own closure, once per block context.
    let r = std::panic::catch_unwind(|| unsafe { f(c) });
    ABANDON.with(|a| a.set(None));
    block::set_ub_segment(None);
    block::leave();
    // a block's own instance (device-side `aclshmemx_instance_ctx_set`) ends with the block
    crate::runtime::clear_thread_current();
    let failure = match r {
        Ok(0) => None,
        Ok(_) => Some(
            FAILURE
                .with(|f| f.borrow_mut().take())
                .unwrap_or_else(|| "the block reported a failure".into()),
        ),
        Err(_) => Some("panic inside the block".into()),
    };
    if failure.is_some() {
        // recorded before the rendezvous break, so the blocks failing because of it come later
        let _ = s.first_failure.compare_exchange(
            usize::MAX,
            ctx,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        );
        s.all.break_all();
        s.cores.break_all();
    } else {
        if !aic {
            s.all.leave();
        }
        s.cores.leave();
    }
    idle();
    let mut d = s.done.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = failure {
        d.failures.push((ctx, why));
    }
    d.finished += 1;
    if d.finished == s.n {
        s.cv.notify_all();
    }
}

thread_local! {
    static FAILURE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// The launcher's way out of the calling block ([`set_abandon`]).
    static ABANDON: std::cell::Cell<Option<extern "C" fn()>> = const { std::cell::Cell::new(None) };
    /// The block is being abandoned: its failure is already recorded.
    static ABANDONED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Records why the calling block fails (the launcher calls it before its trampoline returns
/// non-zero). A block abandoned by [`abandon_if_broken`] keeps that reason.
pub fn block_failed(why: String) {
    if ABANDONED.with(|a| a.get()) {
        return;
    }
    FAILURE.with(|f| *f.borrow_mut() = Some(why));
}

/// The launcher's function that ends the calling block at once (it jumps back into the block's
/// entry, as after a fault), or `None` when the block ends: registered by the launcher of this
/// build's device headers around each block.
pub fn set_abandon(hook: Option<extern "C" fn()>) {
    ABANDON.with(|a| a.set(hook));
    ABANDONED.with(|a| a.set(false));
}

/// Ends the calling block when it runs in a launch another block of which failed and its
/// launcher registered a way out (called where a device call failed, after its error was
/// reported, with nothing left to drop): a block that waited for a flag the failed block was to
/// set gives up its wait with an error, and its kernel would go on as if the flag had come. On
/// the NPU the failed block aborts the whole kernel; here each such block ends with it.
pub fn abandon_if_broken(call: &str) {
    if !crate::block::launch_broken() {
        return;
    }
    let Some(hook) = ABANDON.with(|a| a.get()) else {
        return;
    };
    FAILURE.with(|f| {
        *f.borrow_mut() = Some(format!(
            "abandoned in {call}: another block of the launch failed while this one waited"
        ))
    });
    ABANDONED.with(|a| a.set(true));
    hook();
}

// ---- the block thread pool ----

/// A block for a pool thread: called with the thread's UB and a function that puts the thread
/// back into the pool (once, when the block is done with the thread).
type Job = Box<dyn FnOnce(*mut u8, &dyn Fn()) + Send>;

static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());

fn dispatch(job: Job) -> Result<()> {
    let mut job = job;
    loop {
        let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let Some(tx) = idle else { break };
        match tx.send(job) {
            Ok(()) => return Ok(()),
            // that worker is gone: try the next one
            Err(e) => job = e.0,
        }
    }
    spawn_worker(job)
}

/// Pool threads started so far (tests).
static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn spawn_worker(first: Job) -> Result<()> {
    STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (tx, rx) = channel::<Job>();
    let r = std::thread::Builder::new()
        .name("aclshmem-block".into())
        .stack_size(STACK)
        .spawn(move || {
            let mut ub = vec![0u8; UB_SIZE];
            let idle = || IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(tx.clone());
            first(ub.as_mut_ptr(), &idle);
            // the thread never exits: `rx.recv` fails only when every sender is gone, and `tx`
            // lives here
            while let Ok(job) = rx.recv() {
                job(ub.as_mut_ptr(), &idle);
            }
        });
    r.map(drop)
        .map_err(|e| Error::Inner(format!("cannot start a kernel block thread: {e}")))
}

// ---- device-side calls that differ from their host namesakes ----

/// `aclshmem_barrier_all` / `aclshmem_barrier(team)` called from a kernel block: every block
/// context of the launch arrives (AIV and AIC; with `with_aic` false, the `_vec` forms, only the
/// AIVs, and an AIC's call returns at once), the last to arrive runs the PE-level barrier of the
/// team (the same barrier, and the same per-team counter, as the host call), and all leave
/// together. A full fence on both sides makes the blocks' earlier stores visible to every member
/// (spec device-api 6.4). `team` `ACLSHMEM_TEAM_INVALID` returns at once.
pub fn device_barrier(b: &Block, team: Option<i32>, with_aic: bool) -> Result<()> {
    if team == Some(aclshmem_abi::ACLSHMEM_TEAM_INVALID) || (b.aic && !with_aic) {
        return Ok(());
    }
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    let all = if with_aic { b.cores() } else { b.rendezvous() };
    let leader = match all.wait() {
        Ok(leader) => leader,
        Err(e) => {
            // another block failed before everyone arrived: nobody of this PE runs the PE-level
            // barrier, which the other PEs wait in (see `run`)
            all.mark_skipped_pe_barrier();
            return Err(e);
        }
    };
    let r = if leader {
        let inst = runtime::current()?;
        match team {
            None => collectives::barrier_all(&inst),
            Some(t) => collectives::team_barrier(&inst, t),
        }
    } else {
        Ok(())
    };
    all.wait()?;
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    r
}

/// `AscendC::SyncAll()` (`with_aic` false: the AIV contexts; an AIC's call returns at once) and
/// `SyncAll<false>()` (`with_aic`: every context, AIV and AIC): all arrive before any leaves.
pub fn sync_all(b: &Block, with_aic: bool) -> Result<()> {
    if b.aic && !with_aic {
        return Ok(());
    }
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    if with_aic {
        b.cores().wait()?;
    } else {
        b.rendezvous().wait()?;
    }
    Ok(())
}

// ---- the device-state record (spec device-api 1.8) ----

/// One PE's `aclshmem_device_host_state_t` with the tables it points into.
struct StateRecord {
    state: Box<aclshmem_abi::DeviceHostState>,
    _device_bases: Vec<*mut c_void>,
    _host_bases: Vec<*mut c_void>,
    /// One record per team slot ever seen (kept while the record lives, so a pointer a kernel read
    /// stays valid after the team is destroyed); `team_pools` points at the live ones.
    teams: Vec<Option<Box<aclshmem_abi::TeamRecord>>>,
    /// The team table the records were last filled from.
    seen: Vec<Option<crate::team_table::Team>>,
    /// What `qp_info` points at (`aclshmemi_qp_info_fetch()` of the device headers).
    _rdma_info: Box<RdmaInfo>,
}

/// The original's `aclshmemi_rdma_info`, the RoCE queue pairs' metadata its device code reads
/// through the record's `qp_info`: the queue pairs per connection (`aclshmemx_set_qp_num`, 1 unless
/// set) and the addresses of the hardware queues, which the CPU engines do not have (0).
#[repr(C)]
struct RdmaInfo {
    qp_num: u32,
    sq_ptr: u64,
    rq_ptr: u64,
    scq_ptr: u64,
    rcq_ptr: u64,
    mem_ptr: u64,
}

// SAFETY: the record is plain data; its pointers point into the library's heap mappings and into
// the boxes owned next to it, which live as long as the record.
unsafe impl Send for StateRecord {}

/// `aclshmem_transport_t` bits of the record's `topo_list`.
const TRANSPORT_MTE: u8 = 1;
const TRANSPORT_ROCE: u8 = 2;
const TRANSPORT_SDMA: u8 = 4;
const TRANSPORT_UDMA: u8 = 8;

/// The `topo_list` bits of the engines in `data_op_engine_type` `engines` (`ACLSHMEM_DATA_OP_MTE`
/// 0x1, `_SDMA` 0x2, `_ROCE` 0x4, `_UDMA` 0x8: another order than the transport bits).
fn topo_bits(engines: u32) -> u8 {
    [
        (0x1, TRANSPORT_MTE),
        (0x2, TRANSPORT_SDMA),
        (0x4, TRANSPORT_ROCE),
        (0x8, TRANSPORT_UDMA),
    ]
    .iter()
    .filter(|&&(e, _)| engines & e != 0)
    .fold(0, |acc, &(_, t)| acc | t)
}

/// The calling PE's device-state record (what `aclshmemi_get_state()` returns to kernels), built
/// on first use for the current instance: `mype`, `npes`, the device heap's base and size, every
/// PE's heap base (`p2p_device_heap_base`, and the host-side heap's when it exists), `topo_list`
/// (`ACLSHMEM_TRANSPORT_MTE` and the engines chosen at init for every PE mapped here, the RoCE
/// and UDMA ones chosen for the PEs reached through a transport), the UB configurations, and
/// `team_pools` (a record of every live team, refreshed when the team table changed), `profs` (the
/// `SHMEMI_PROF_*` table when SHMEM_CYCLE_PROF_PE names this PE, else NULL). The sync-pool
/// fields are 0 (the CPU barriers do not use them). Kernels may write it (device config setters).
/// Each instance has its own record, kept by the instance ([`Instance::kernel_state`]) until it
/// is finalized: another instance asking for its own frees nothing (it once replaced a single
/// record, freeing what a block of the other instance still read), and an instance initialized
/// after a finalize gets a new one (the old one, found again at the same address, described the
/// finalized heap).
pub fn device_state() -> Result<*mut aclshmem_abi::DeviceHostState> {
    let inst = runtime::current()?;
    let mut kept = inst.kernel_state();
    if let Some(rec) = kept.as_mut().and_then(|b| b.downcast_mut::<StateRecord>()) {
        refresh_host_heap(&inst, rec);
        refresh_teams(&inst, rec);
        return Ok(&mut *rec.state);
    }
    let rec = kept.insert(Box::new(new_record(&inst)));
    let rec = rec
        .downcast_mut::<StateRecord>()
        .ok_or_else(|| Error::Inner("device-state record of another type".into()))?;
    Ok(&mut *rec.state)
}

/// Sets the UB scratch configuration of `engine` (`aclshmemx_set_{mte,sdma,rdma,udma}_config`: the
/// host setters and, through the same entry points, the device setters of spec 2.15) and writes it
/// into the instance's device-state record when kernels already have one, as the original
/// republishes its record: the calling kernel's later reads and every later kernel see it (the
/// record kept the values of its first use).
pub fn set_ub_config(
    inst: &Instance,
    engine: crate::instance::Engine,
    offset: u64,
    ub_size: u32,
    sync_id: u32,
) -> Result<()> {
    use crate::instance::Engine;
    inst.set_ub_config(engine, offset, ub_size, sync_id)?;
    let mut kept = inst.kernel_state();
    if let Some(rec) = kept.as_mut().and_then(|b| b.downcast_mut::<StateRecord>()) {
        let c = inst.ub_config(engine);
        let state = &mut *rec.state;
        let field = match engine {
            Engine::Mte => &raw mut state.mte_config,
            Engine::Sdma => &raw mut state.sdma_config,
            Engine::Rdma => &raw mut state.rdma_config,
            Engine::Udma => &raw mut state.udma_config,
        };
        // SAFETY: a field of the live record; kernels of other threads may read it meanwhile, as
        // the original's device code reads the record while the host republishes it
        unsafe { field.write_volatile(c) };
    }
    Ok(())
}

/// Every PE's base of heap `kind` as `aclshmem_ptr` answers (mapped; NULL for PEs on other nodes),
/// empty when the heap does not exist.
fn heap_bases(inst: &Instance, kind: crate::heap::HeapKind) -> Vec<*mut c_void> {
    match inst.heap(kind) {
        Some(h) => (0..inst.n_pes())
            // mapped, as `aclshmem_ptr` answers (also with the fast path off)
            .map(|pe| h.mapped_addr(0, pe).unwrap_or(std::ptr::null_mut()).cast())
            .collect(),
        None => Vec::new(),
    }
}

/// Fills in the `HOST_SIDE` heap's bases once that heap exists (it may appear after the record was
/// made: its first allocation creates it).
fn refresh_host_heap(inst: &Instance, rec: &mut StateRecord) {
    use crate::heap::HeapKind;
    if !rec.state.host_heap_base.is_null() {
        return;
    }
    let Some(h) = inst.heap(HeapKind::Host) else {
        return;
    };
    rec._host_bases = heap_bases(inst, HeapKind::Host);
    rec.state.host_heap_base = h.base().cast();
    rec.state.p2p_host_heap_base = rec._host_bases.as_mut_ptr();
}

/// A new record for `inst` (see [`device_state`]).
fn new_record(inst: &Instance) -> StateRecord {
    use crate::heap::HeapKind;
    use crate::instance::Engine;
    let n = inst.n_pes();
    let me = inst.my_pe();
    let mut device_bases = heap_bases(inst, HeapKind::Device);
    // SAFETY: DeviceHostState and TeamRecord are plain integers, pointers and arrays: all-zero is
    // a valid value of each (NULL pointers, false flags).
    let mut state: Box<aclshmem_abi::DeviceHostState> = unsafe { boxed_zeroed() };
    state.version = 1;
    state.mype = me as c_int;
    state.npes = n as c_int;
    state.heap_base = inst.heap_base(HeapKind::Device).cast();
    state.heap_size = inst.heap(HeapKind::Device).map_or(0, |h| h.size());
    if !device_bases.is_empty() {
        state.p2p_device_heap_base = device_bases.as_mut_ptr();
    }
    let reach = topo_bits(inst.engines());
    for (pe, b) in device_bases.iter().enumerate() {
        state.topo_list[pe] = if !b.is_null() {
            // mapped: the direct path, and every engine the program chose (all of them copy
            // through the same mapping here)
            TRANSPORT_MTE | reach
        } else if pe != me && inst.routes().to(pe).is_ok() {
            // through a transport: the network engines the program chose
            reach & (TRANSPORT_ROCE | TRANSPORT_UDMA)
        } else {
            0
        };
    }
    state.is_aclshmem_initialized = true;
    state.is_aclshmem_created = true;
    state.mte_config = inst.ub_config(Engine::Mte);
    state.sdma_config = inst.ub_config(Engine::Sdma);
    state.rdma_config = inst.ub_config(Engine::Rdma);
    state.udma_config = inst.ub_config(Engine::Udma);
    state.profs = stream::device_prof_table(stream::prof_of(inst.id()));
    // the barriers' per-team lines and generation counters in the heap's reserved region, laid
    // out as the spec's record describes (team t at sync_pool + t * SYNC_ARRAY_SIZE, counters
    // SYNC_COUNTER_SIZE apart); the core barrier of one launch is the launcher's own rendezvous,
    // so core_sync_pool / core_sync_counter stay 0
    let base = inst.heap_base(HeapKind::Device) as u64;
    state.sync_pool = base + inst.sync_pool() as u64;
    state.sync_counter = base + inst.sync_counters() as u64;
    // the queue-pair count is frozen while an instance lives
    let rdma_info = Box::new(RdmaInfo {
        qp_num: crate::runtime::qp::qp_num(),
        sq_ptr: 0,
        rq_ptr: 0,
        scq_ptr: 0,
        rcq_ptr: 0,
        mem_ptr: 0,
    });
    state.qp_info = &*rdma_info as *const RdmaInfo as u64;
    let mut rec = StateRecord {
        state,
        _device_bases: device_bases,
        _host_bases: Vec::new(),
        teams: (0..aclshmem_abi::ACLSHMEM_MAX_TEAMS).map(|_| None).collect(),
        seen: Vec::new(),
        _rdma_info: rdma_info,
    };
    refresh_host_heap(inst, &mut rec);
    refresh_teams(inst, &mut rec);
    rec
}

/// Points `team_pools` at a record of every live team of this PE (filled as the original's
/// `aclshmemx_team_t`: rank, start, stride, size, index, both directions of `pe_mapping`): the
/// records of the teams that changed since the last call.
fn refresh_teams(inst: &crate::instance::Instance, rec: &mut StateRecord) {
    let n = inst.n_pes();
    let now: Vec<Option<crate::team_table::Team>> = {
        let teams = inst.teams();
        (0..aclshmem_abi::ACLSHMEM_MAX_TEAMS)
            .map(|slot| teams.at(slot))
            .collect()
    };
    if now == rec.seen {
        return;
    }
    for (slot, t) in now.iter().enumerate() {
        // only the teams that changed: rewriting every live team's record on each split made a
        // program splitting 2047 teams spend 40 % of its time here (16 PEs)
        if rec.seen.get(slot) == Some(t) {
            continue;
        }
        let Some(t) = t else {
            rec.state.team_pools[slot] = std::ptr::null_mut();
            continue;
        };
        // SAFETY: TeamRecord is plain integers: all-zero is a valid value.
        let r = rec.teams[slot].get_or_insert_with(|| unsafe { boxed_zeroed() });
        r.mype = t.my_index as c_int;
        r.start = t.start as c_int;
        r.stride = t.stride as c_int;
        r.size = t.size as c_int;
        r.team_idx = slot as c_int;
        for i in 0..t.size.min(aclshmem_abi::ACLSHMEM_MAX_PES) {
            r.pe_mapping[i] = t.world_pe(i) as i32;
        }
        for g in 0..n.min(aclshmem_abi::ACLSHMEM_MAX_PES) {
            r.pe_mapping[aclshmem_abi::ACLSHMEM_MAX_PES + g] = t.index_of(g).map_or(-1, |i| i as i32);
        }
        rec.state.team_pools[slot] = &mut **r;
    }
    rec.seen = now;
}

/// A zeroed heap value of `T` (too large for the stack).
///
/// # Safety
/// All-zero bytes must be a valid `T`.
unsafe fn boxed_zeroed<T>() -> Box<T> {
    let layout = std::alloc::Layout::new::<T>();
    // SAFETY: T is not zero-sized here (the records are tens of KiB).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: p was allocated with T's layout and is a valid T per the caller's contract.
    unsafe { Box::from_raw(p) }
}

/// `aclshmemx_roce_barrier` and friends: the PE-level barrier of `team`, made by one block per PE
/// (the other blocks of the launch do not take part).
pub fn pe_barrier(team: i32) -> Result<()> {
    if team == aclshmem_abi::ACLSHMEM_TEAM_INVALID {
        return Ok(());
    }
    let inst = runtime::current()?;
    collectives::team_barrier(&inst, team)
}

// ---- per-core notifies (aclshmemx_sdma_notify_record, g_state_host.notify_arr) ----

type CreateNotifyFn = unsafe extern "C" fn(*mut *mut c_void, u64) -> c_int;
type NotifySetFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// `n` new notifies of the ACL runtime (`aclrtCreateNotify`), or an empty list when the runtime in
/// the process has none (then the device notify record is a logged error).
pub fn create_notifies(n: usize) -> Vec<*mut c_void> {
    let Some(f) = crate::acl::resolve("aclrtCreateNotify") else {
        return Vec::new();
    };
    // SAFETY: the ACL runtime exports aclrtCreateNotify with this C signature (acl/acl_rt.h).
    let create = unsafe { std::mem::transmute::<*mut c_void, CreateNotifyFn>(f) };
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut h = std::ptr::null_mut();
        // SAFETY: aclrtCreateNotify writes one handle into `h`.
        if unsafe { create(&mut h, 0) } != 0 || h.is_null() {
            log::warn!("aclrtCreateNotify failed: the per-core notifies of the host state are incomplete");
            break;
        }
        out.push(h);
    }
    out
}

/// Sets `notify` now (the CPU libascendcl's `aclshimNotifySet`).
pub fn notify_set(notify: *mut c_void) -> Result<()> {
    static F: crate::acl::Lazy<NotifySetFn> = crate::acl::Lazy::new();
    let f = F.get(|| {
        // SAFETY: the shim exports aclshimNotifySet with this C signature (acl/acl_shim.h).
        crate::acl::resolve("aclshimNotifySet")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, NotifySetFn>(p) })
    });
    let Some(f) = f else {
        return Err(Error::NotSupported(
            "notify records need the CPU ACL runtime (aclshimNotifySet of libascendcl)".into(),
        ));
    };
    // SAFETY: `notify` is a handle created by the runtime; the call only looks it up.
    match unsafe { f(notify) } {
        0 => Ok(()),
        rc => Err(Error::Inner(format!("aclshimNotifySet failed ({rc})"))),
    }
}

/// Whether the object that a reference of this library to its exported global `name` (`size`
/// bytes; `p` is where the reference leads) reaches may be written. Such references resolve
/// through the dynamic linker, so a program that defines a global of the same name takes them
/// over. Writable: the library's own definition; the program's copy of it (a copy relocation: the
/// program reads the library's global); a definition of exactly `size` bytes (a program written
/// for the original that defines it itself). Not writable, with one warning: an unrelated object
/// of the program that happens to have the name.
pub fn exported_global_is_ours(p: *const u8, size: usize, name: &str) -> bool {
    const RTLD_DL_SYMENT: libc::c_int = 1;
    // SAFETY: dladdr / dladdr1 only read the loader's tables; the out-parameters are ours.
    let (here, there, sym_size) = unsafe {
        let mut here: libc::Dl_info = std::mem::zeroed();
        let mut info: libc::Dl_info = std::mem::zeroed();
        let mut sym: *mut libc::c_void = std::ptr::null_mut();
        let this = exported_global_is_ours as *const libc::c_void;
        if libc::dladdr(this, &mut here) == 0
            || libc::dladdr1(p.cast(), &mut info, &mut sym, RTLD_DL_SYMENT) == 0
        {
            return false;
        }
        let sym_size = if sym.is_null() {
            0
        } else {
            (*(sym as *const libc::Elf64_Sym)).st_size as usize
        };
        (here.dli_fbase, info.dli_fbase, sym_size)
    };
    if here == there || sym_size == size {
        return true;
    }
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        log::warn!(
            "the program defines a global `{name}` of {sym_size} bytes, not the library's ({size} bytes): the library leaves it alone"
        );
    });
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    const BLOCKS: u32 = 1100;
    static ALL_IN: std::sync::Barrier = std::sync::Barrier::new(BLOCKS as usize);

    /// A block that returns once every block of the launch runs (so the launch needs a thread for
    /// each).
    unsafe extern "C" fn meet(_closure: *mut c_void) -> c_int {
        ALL_IN.wait();
        0
    }

    fn launch() {
        let l = Arc::new(Launch {
            kind: KernelKind::Aiv,
            block_dim: BLOCKS,
            func: meet,
            closure: std::ptr::null_mut(),
            free: None,
        });
        run(&l).expect("launch");
    }

    #[test]
    fn launches_reuse_every_thread_of_the_pool() {
        // (the only test of this crate that launches: nobody else takes pool threads meanwhile)
        launch();
        let started = STARTED.load(Ordering::Relaxed);
        assert!(
            started >= BLOCKS as usize,
            "{started} threads for {BLOCKS} blocks"
        );
        // more blocks than the pool once kept, launched again at once: every thread of the first
        // launch is back in the pool, none ended, none is started
        for _ in 0..3 {
            launch();
            assert_eq!(
                STARTED.load(Ordering::Relaxed),
                started,
                "a later launch started threads"
            );
        }
        assert_eq!(IDLE.lock().unwrap().len(), started);
    }
}

//! `aclshmemx_init_attr` and finalize (spec 8.1, 9).
//!
//! `unsafe`: comm_args is read as the C type the init mode documents, and the live instance is
//! taken back from its raw pointer at finalize.

use crate::util::Locked;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{
    LAST_N_PES, LAST_PE, LIFECYCLE, SLOT0, Slot, create_slot, current_slot, forget_slot, make_current, slot,
};
use crate::bootstrap::Bootstrap;
use crate::bootstrap::config_store::{ConfigStore, Endpoint, Listen, StoreConfig};
use crate::bootstrap::uid::Rendezvous;
use crate::error::{Error, Result};
use crate::heap::{HeapKind, SymmetricHeap};
use crate::instance::Parts;
use crate::runtime::Instance;
use crate::{config, logging};
use aclshmem_abi::*;

/// Attribute checks, in the original's order (spec 8.1 step 5). `zero_size_ok`: a
/// `local_mem_size` of 0 is allowed (user buffers give the heap).
fn validate(a: &InitAttr, zero_size_ok: bool) -> Result<()> {
    if a.my_pe < 0 {
        return Err(Error::InvalidValue(format!("my_pe {} is negative", a.my_pe)));
    }
    if a.n_pes <= 0 {
        return Err(Error::InvalidValue(format!("n_pes {} must be positive", a.n_pes)));
    }
    if a.n_pes as usize > ACLSHMEM_MAX_PES {
        return Err(Error::InvalidValue(format!(
            "n_pes {} exceeds ACLSHMEM_MAX_PES ({ACLSHMEM_MAX_PES})",
            a.n_pes
        )));
    }
    if a.my_pe >= a.n_pes {
        return Err(Error::InvalidParam(format!(
            "my_pe {} is not below n_pes {}",
            a.my_pe, a.n_pes
        )));
    }
    if a.local_mem_size == 0 && !zero_size_ok {
        return Err(Error::InvalidValue("local_mem_size is 0".into()));
    }
    if a.local_mem_size > ACLSHMEM_MAX_LOCAL_SIZE {
        return Err(Error::InvalidValue(format!(
            "local_mem_size {} exceeds ACLSHMEM_MAX_LOCAL_SIZE ({ACLSHMEM_MAX_LOCAL_SIZE})",
            a.local_mem_size
        )));
    }
    if a.option_attr.shm_init_timeout == 0 {
        return Err(Error::InvalidValue("option_attr.shm_init_timeout is 0".into()));
    }
    if a.option_attr.control_operation_timeout == 0 {
        return Err(Error::InvalidValue(
            "option_attr.control_operation_timeout is 0".into(),
        ));
    }
    if !(0x1..=0xF).contains(&a.option_attr.data_op_engine_type) {
        return Err(Error::InvalidValue(format!(
            "option_attr.data_op_engine_type {:#x} is not in 0x1..0xF",
            a.option_attr.data_op_engine_type
        )));
    }
    Ok(())
}

/// The `ip_port` field as text (up to the first NUL).
pub fn ip_port_str(a: &InitAttr) -> String {
    let bytes: Vec<u8> = a
        .ip_port
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn choose_bootstrap(flags: u32, a: &InitAttr) -> Result<Box<dyn Bootstrap>> {
    let connect_timeout = Duration::from_secs(a.option_attr.shm_init_timeout as u64);
    let op_timeout = Duration::from_secs(a.option_attr.control_operation_timeout as u64);
    let tls = crate::bootstrap::config_store::tls::load()?;
    let store = |addrs: Vec<std::net::SocketAddr>,
                 host: String,
                 token: Vec<u8>,
                 listen: Listen|
     -> Result<Box<dyn Bootstrap>> {
        let cfg = StoreConfig {
            addrs,
            my_pe: a.my_pe as usize,
            n_pes: a.n_pes as usize,
            token,
            connect_timeout,
            op_timeout,
            listen,
            tls: tls.clone().map(|t| (t, host)),
        };
        Ok(Box::new(ConfigStore::connect(cfg)?))
    };
    // SAFETY: comm_args is documented to point at an aclshmemx_uniqueid_t in UID mode (and may in
    // DEFAULT mode); it is read only when non-NULL.
    let uid = || unsafe { (a.comm_args as *const UniqueId).as_ref() }.and_then(Rendezvous::decode);
    let uid_store = |r: Rendezvous| {
        let listen = match (a.my_pe, r.take_listener()) {
            (0, Some(l)) => Listen::Ready(l),
            _ => Listen::Bind,
        };
        store(vec![r.addr], r.addr.ip().to_string(), r.secret.to_vec(), listen)
    };
    if flags & ACLSHMEMX_INIT_WITH_UNIQUEID != 0 {
        let r = uid().ok_or_else(|| {
            Error::InvalidParam(
                "ACLSHMEMX_INIT_WITH_UNIQUEID needs comm_args = a unique id from aclshmemx_get_uniqueid"
                    .into(),
            )
        })?;
        return uid_store(r);
    }
    if flags & ACLSHMEMX_INIT_WITH_MPI != 0 {
        return Ok(Box::new(crate::bootstrap::mpi::Mpi::new(
            a.comm_args,
            a.my_pe as usize,
            a.n_pes as usize,
        )?));
    }
    if flags & ACLSHMEMX_INIT_WITH_DEFAULT == 0 {
        return Err(Error::InvalidParam(format!(
            "bootstrap flags {flags:#x} select no known mode"
        )));
    }
    // DEFAULT: a valid ip_port first, else a valid unique id in comm_args (spec 9.1)
    let endpoint = match Endpoint::parse(&ip_port_str(a)) {
        Ok(e) => e,
        Err(e) => return uid().map_or(Err(e), uid_store),
    };
    // no token (no launcher): empty, and the store makes a per-job secret (config_store::secret)
    let token = config::ACLSHMEM_JOB_TOKEN
        .get()?
        .map(String::into_bytes)
        .unwrap_or_default();
    let sock = a.option_attr.sock_fd;
    let listen = if a.my_pe == 0 && sock > 0 {
        Listen::Fd(sock)
    } else {
        Listen::Bind
    };
    store(endpoint.resolve()?, endpoint.host.clone(), token, listen)
}

/// The settings that choose how the PEs work with each other (transports, the collectives'
/// algorithms, the program data's move): each as `NAME=value`, one per line.
fn shared_settings() -> Result<String> {
    macro_rules! lines {
        ($($var:ident),* $(,)?) => {
            [$(format!("{}={}", config::$var.name, config::$var.value()?)),*]
        };
    }
    Ok(lines![
        ACLSHMEM_TRANSPORT,
        ACLSHMEM_DIRECT_ACCESS,
        ACLSHMEM_UCX_PUT_AM,
        ACLSHMEM_BCAST_ALGO,
        ACLSHMEM_COLLECT_ALGO,
        ACLSHMEM_ALLTOALL_ALGO,
        ACLSHMEM_REDUCE_ALGO,
        ACLSHMEM_OSHMEM_SYMMETRIC_DATA,
    ]
    .join("\n"))
}

/// Every PE must have the same [`shared_settings`]: compared at init, so PEs that differ fail
/// together, naming the variable (collectives whose members used different algorithms returned
/// wrong data with rc 0; a transport or direct access set on some PEs only failed init with
/// unreadable messages, or hung the first barrier).
fn agree_settings(boot: &dyn Bootstrap, me: usize) -> Result<()> {
    let mine = shared_settings()?;
    for (pe, theirs) in boot.allgather(mine.as_bytes())?.iter().enumerate() {
        let theirs = String::from_utf8_lossy(theirs);
        if theirs == mine {
            continue;
        }
        let (here, there) = mine
            .lines()
            .zip(theirs.lines())
            .find(|(a, b)| a != b)
            .unwrap_or((&mine, &theirs));
        let (name, here) = here.split_once('=').unwrap_or(("a setting", here));
        let there = there.split_once('=').map_or(there, |(_, v)| v);
        return Err(Error::InvalidParam(format!(
            "{name} differs between PEs: {here} on PE {me}, {there} on PE {pe}; it must be the same on every PE"
        )));
    }
    Ok(())
}

fn job_id(boot: &dyn Bootstrap) -> String {
    config::ACLSHMEM_JOB_ID
        .get()
        .ok()
        .flatten()
        .filter(|j| j.len() <= 64 && j.bytes().all(|b| b.is_ascii_alphanumeric()))
        .unwrap_or_else(|| format!("{:016x}", boot.session()))
}

/// `aclshmemx_init_attr`.
pub fn init(flags: u32, attr: &mut InitAttr) -> Result<()> {
    init_with(flags, attr, None)
}

/// `aclshmemx_init_attr_with_buffers`: [`init`] with the program's device buffers as a fixed part
/// of the device heap ([`super::buffers`]).
pub fn init_with_buffers(flags: u32, attr: &mut InitAttr, buffers: &[BufferDesc]) -> Result<()> {
    init_with(flags, attr, Some(buffers))
}

fn init_with(flags: u32, attr: &mut InitAttr, buffers: Option<&[BufferDesc]>) -> Result<()> {
    let _g = LIFECYCLE.locked();
    crate::util::occupy_standard_descriptors();
    crate::util::on_job_end(end_job);
    super::calls::setup_report();
    let id = attr.instance_id;
    let previous = current_slot();
    let (slot, created) = if id == 0 {
        (&SLOT0, false)
    } else {
        let pure_uid = ip_port_str(attr).is_empty() && !attr.comm_args.is_null();
        if flags & ACLSHMEMX_INIT_WITH_DEFAULT != 0
            && flags & (ACLSHMEMX_INIT_WITH_UNIQUEID | ACLSHMEMX_INIT_WITH_MPI) == 0
            && !pure_uid
        {
            select_instance_port(attr)?;
        }
        match slot(id) {
            Some(s) => {
                log::warn!("instance {id} exists already; reusing its context");
                (s, false)
            }
            None => (create_slot(id), true),
        }
    };
    make_current(slot);
    let undo = || {
        if created {
            forget_slot(id);
            make_current(previous);
        }
    };
    if slot.status.load(Ordering::Acquire) != ACLSHMEM_STATUS_NOT_INITIALIZED {
        undo();
        return Err(Error::Inner(format!(
            "instance {id} is already initialised; finalize it first"
        )));
    }
    let _ = logging::set_level(logging::ERROR);
    let prepared = validate(attr, buffers.is_some())
        .and_then(|()| buffers.map_or(Ok(Vec::new()), |b| super::buffers::prepare(b, attr)));
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => {
            release_uid(flags, attr);
            undo();
            return Err(e);
        }
    };
    match build(flags, attr, slot, prepared) {
        Ok(inst) => {
            LAST_PE.store(inst.my_pe() as i32, Ordering::Relaxed);
            LAST_N_PES.store(inst.n_pes() as i32, Ordering::Relaxed);
            slot.live
                .store(Arc::into_raw(Arc::new(inst)) as *mut Instance, Ordering::Release);
            slot.status
                .store(ACLSHMEM_STATUS_IS_INITIALIZED, Ordering::Release);
            crate::stream::configure_prof(crate::stream::prof_of(id), attr.my_pe as usize);
            crate::stream::open_internal_stream();
            crate::util::at_normal_exit(finalize_at_exit);
            log::info!("PE {} of {}: instance {id} initialised", attr.my_pe, attr.n_pes);
            Ok(())
        }
        Err(e) => {
            slot.status
                .store(ACLSHMEM_STATUS_NOT_INITIALIZED, Ordering::Release);
            release_uid(flags, attr);
            undo();
            Err(e)
        }
    }
}

/// A failed init closes the socket `aclshmemx_get_uniqueid` kept for the id it was given (PE 0's
/// process), as init removes what it made: a program retrying init leaked one per attempt. The id
/// stays usable (init binds its address again). Only where init reads `comm_args` as an id.
fn release_uid(flags: u32, a: &InitAttr) {
    let as_uid = flags & ACLSHMEMX_INIT_WITH_UNIQUEID != 0
        || (flags & ACLSHMEMX_INIT_WITH_DEFAULT != 0
            && flags & ACLSHMEMX_INIT_WITH_MPI == 0
            && Endpoint::parse(&ip_port_str(a)).is_err());
    if !as_uid {
        return;
    }
    // SAFETY: as in `choose_bootstrap`: comm_args points at an aclshmemx_uniqueid_t in these
    // modes; read only when non-NULL.
    if let Some(r) = unsafe { (a.comm_args as *const UniqueId).as_ref() }.and_then(Rendezvous::decode) {
        r.release();
    }
}

/// A program that returns from `main` (or calls `exit`) with status 0 while instances are still
/// initialised: each one whose bootstrap takes a PE leaving without finalize for dead (the config
/// store: DEFAULT and UNIQUEID modes) is finalized here, after telling the other PEs that this
/// one left (`sync::depart`, in [`finalize`]). Without this, the first PE out of such a program ended the others
/// as a lost PE (status 1), often while they were still in their own exit. The finalize waits for
/// the others as an explicit one does; with a nonzero status (an error) the PE leaves as it did,
/// and the job ends as when a PE dies. Instances of the MPI bootstrap are left to MPI (whose own
/// finalize may have run already): the PE only tells the others it left (`sync::depart`), so
/// their waits for it fail rather than hang. The OpenSHMEM surface's implicit finalize runs
/// before this.
fn finalize_at_exit(status: i32) {
    if status != 0 || crate::util::ending() {
        return;
    }
    finalizing_at_exit();
    let mut slots = vec![&SLOT0];
    slots.extend(super::SLOTS.locked().iter().copied());
    for s in slots {
        let p = s.live.load(Ordering::Acquire);
        if p.is_null() {
            continue;
        }
        // SAFETY: the slot's own reference keeps a live instance alive until a finalize takes it
        // out, and only this thread (the process's exit) finalizes now, after this borrow's last use
        let inst = unsafe { &*p };
        if !inst.boot().watches_departures() {
            // MPI: no finalize (MPI's own may have run), but the others learn that this PE left,
            // so a barrier or wait of theirs for it fails after the departure grace, naming it,
            // instead of waiting for ever (and mpirun with it)
            if let Err(e) = crate::sync::depart(inst) {
                log::warn!(
                    "[PE {}] telling the others that this PE leaves: {e}",
                    inst.my_pe()
                );
            }
            continue;
        }
        let pe = inst.my_pe();
        // (the instance is gone after this: `inst` is not used again)
        if let Err(e) = finalize(Some(s.id)) {
            log::error!("[PE {pe}] finalize at exit of instance {}: {e}", s.id);
        }
    }
}

/// Multi-instance DEFAULT mode (spec 9.4): `ip_port` is a template with port 0 and instance `k`
/// listens on port `start + k` of SHMEM_INSTANCE_PORT_RANGE=`start:end`; `ip_port` is rewritten.
fn select_instance_port(attr: &mut InitAttr) -> Result<()> {
    let id = attr.instance_id;
    let url = ip_port_str(attr);
    let template = url
        .strip_suffix(":0")
        .filter(|t| t.starts_with("tcp://") || t.starts_with("tcp6://"))
        .ok_or_else(|| {
            Error::InvalidValue(format!(
                "instance {id}: ip_port \"{url}\" must be a template with port 0 (tcp://host:0)"
            ))
        })?;
    let (start, end) = config::SHMEM_INSTANCE_PORT_RANGE.get()?.ok_or_else(|| {
        Error::InvalidValue(format!(
            "instance {id}: SHMEM_INSTANCE_PORT_RANGE (start:end) is not set"
        ))
    })?;
    if id > (end - start) as u64 {
        return Err(Error::InvalidValue(format!(
            "instance {id} does not fit SHMEM_INSTANCE_PORT_RANGE={start}:{end}"
        )));
    }
    let rewritten = format!("{template}:{}", start as u64 + id);
    if rewritten.len() >= ACLSHMEM_MAX_IP_PORT_LEN {
        return Err(Error::InvalidValue(format!(
            "instance {id}: \"{rewritten}\" is too long"
        )));
    }
    attr.ip_port = [0; ACLSHMEM_MAX_IP_PORT_LEN];
    for (d, s) in attr.ip_port.iter_mut().zip(rewritten.bytes()) {
        *d = s as std::ffi::c_char;
    }
    Ok(())
}

fn build(
    flags: u32,
    attr: &InitAttr,
    slot: &Slot,
    buffers: Vec<super::buffers::Prepared>,
) -> Result<Instance> {
    // everything that can fail without talking to the other PEs comes before the bootstrap, so a
    // bad setting fails on every PE alike instead of leaving the others waiting
    let algos = crate::algos::Algos::from_env()?;
    let force_ucx = config::ACLSHMEM_TRANSPORT.value()? == "ucx";
    // with every peer forced through UCX, the fast path must not bypass it
    let direct_access = config::ACLSHMEM_DIRECT_ACCESS.value()? && !force_ucx;
    let limits = crate::wait::Limits {
        warn: Some(config::ACLSHMEM_STALL_WARNING.value()?).filter(|d| !d.is_zero()),
        // 0 means no limit, as for the stall warning (every barrier failed at once)
        limit: config::ACLSHMEM_COLLECTIVE_TIMEOUT
            .get()?
            .filter(|d| !d.is_zero()),
    };
    let boot = choose_bootstrap(flags, attr)?;
    crate::heap::sigbus::set_pe(attr.my_pe);
    let heap_size = attr
        .local_mem_size
        .checked_add(ACLSHMEM_EXTRA_SIZE)
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| Error::InvalidValue("local_mem_size overflows".into()))?;
    let total: usize = buffers.iter().map(|b| b.size).sum();
    let size = heap_size
        .checked_add(total)
        .ok_or_else(|| Error::InvalidValue("the user buffers' sizes overflow".into()))?;
    // the library's blocks, then the buffers (the fixed part of the heap), then the allocatable
    // local_mem_size
    let layout = crate::instance::plan(size, total)?;
    let placed = super::buffers::place(layout.buffers, &buffers);
    let job = job_id(boot.as_ref());
    let made = (|| {
        agree_settings(boot.as_ref(), attr.my_pe as usize)?;
        super::buffers::check_layout(boot.as_ref(), attr.local_mem_size, &buffers)?;
        let nodes = crate::heap::node_map(boot.as_ref())?;
        let same_node: Vec<bool> = nodes.iter().map(|&n| n == nodes[attr.my_pe as usize]).collect();
        let routes = crate::transport::select(attr.my_pe as usize, &same_node, force_ucx, boot.as_ref())?;
        log::debug!("PE {}: transports: {}", attr.my_pe, routes.describe());
        let mut device = SymmetricHeap::create_with_hole(
            boot.as_ref(),
            attr.instance_id,
            HeapKind::Device,
            size,
            layout.buffers..layout.buffers + total,
            &job,
            direct_access,
        )?;
        if !buffers.is_empty() {
            let pieces: Vec<_> = buffers.into_iter().map(|b| (b.fd, b.offset, b.size)).collect();
            device.map_buffers(boot.as_ref(), layout.buffers, &pieces)?;
        }
        routes.attach_heap(&device, boot.as_ref())?;
        let reserved = crate::instance::reserve_internal(&mut device, total)?;
        if reserved != layout {
            return Err(Error::Inner(format!(
                "the device heap's layout {reserved:?} differs from the one planned, {layout:?}"
            )));
        }
        let (sync_pool, sync_counters, rings) = (layout.sync_pool, layout.sync_counters, layout.rings);
        crate::wait::set_node_load(same_node.iter().filter(|&&s| s).count());
        Ok::<_, Error>((routes, device, sync_pool, sync_counters, rings, nodes))
    })();
    let (routes, device, sync_pool, sync_counters, rings, nodes) = match made {
        Ok(v) => v,
        Err(e) => {
            boot.finalize();
            return Err(e);
        }
    };
    slot.status.store(ACLSHMEM_STATUS_SHM_CREATED, Ordering::Release);
    log::debug!("PE {}: symmetric heap created ({heap_size} bytes)", attr.my_pe);
    let parts = Parts {
        id: slot.id,
        my_pe: attr.my_pe as usize,
        n_pes: attr.n_pes as usize,
        heap_size,
        job,
        boot,
        device,
        routes,
        sync_pool,
        sync_counters,
        rings,
        limits,
        direct_access,
        algos,
        nodes,
        buffers: placed,
        engines: attr.option_attr.data_op_engine_type as u32,
    };
    let inst = Instance::new(parts);
    let info = config::ACLSHMEM_INFO.value().unwrap_or_else(|e| {
        // an error message: init logs at ERROR unless SHMEM_LOG_LEVEL says otherwise, and a
        // warning went unseen
        log::error!("{e}: not printing the environment table");
        false
    });
    if inst.my_pe() == 0 && info {
        println!("{}", config::describe());
    }
    if let Err(e) = inst.boot().barrier() {
        inst.into_bootstrap().finalize();
        return Err(e);
    }
    Ok(inst)
}

/// The instance the OpenSHMEM surface holds between its `shmem_init` and the matching
/// `shmem_finalize` (its id + 1; 0: none), and whether the aclshmem API finalized it meanwhile.
/// One process, one runtime: a program (or a library inside it) that uses both APIs may end them
/// in either order, and OpenSHMEM calls stay valid until `shmem_finalize`.
static OPENSHMEM_HOLDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static FINALIZE_DEFERRED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The OpenSHMEM surface holds instance `id` (its `shmem_init`).
pub fn openshmem_hold(id: u64) {
    FINALIZE_DEFERRED.store(false, Ordering::SeqCst);
    OPENSHMEM_HOLDS.store(id + 1, Ordering::SeqCst);
}

/// The OpenSHMEM surface lets its instance go (its last `shmem_finalize`): whether an aclshmem
/// finalize of it was deferred until now (the caller then finalizes it).
pub fn openshmem_release() -> bool {
    OPENSHMEM_HOLDS.store(0, Ordering::SeqCst);
    FINALIZE_DEFERRED.swap(false, Ordering::SeqCst)
}

/// `aclshmem_finalize` / `aclshmemx_finalize(id)` of the aclshmem API: [`finalize`], unless the
/// OpenSHMEM surface still holds that instance; then it ends at the matching `shmem_finalize`
/// (the aclshmem calls meanwhile still work).
pub fn finalize_api(id: Option<u64>) -> Result<()> {
    let held = OPENSHMEM_HOLDS.load(Ordering::SeqCst);
    let target = id.unwrap_or_else(|| current_slot().id);
    if held != 0
        && held - 1 == target
        && slot(target).is_some_and(|s| !s.live.load(Ordering::Acquire).is_null())
    {
        log::debug!(
            "finalize of instance {target}: the OpenSHMEM surface still uses it (shmem_init without \
             shmem_finalize yet); it ends at shmem_finalize"
        );
        FINALIZE_DEFERRED.store(true, Ordering::SeqCst);
        return Ok(());
    }
    finalize(id)
}

/// Ends instance `id` (the current one for `None`): collective.
pub fn finalize(id: Option<u64>) -> Result<()> {
    let _g = LIFECYCLE.locked();
    let slot = match id {
        None => current_slot(),
        Some(id) => slot(id).ok_or_else(|| Error::Inner(format!("instance {id} does not exist")))?,
    };
    if let Some(id) = id
        && id != 0
        && slot.live.load(Ordering::Acquire).is_null()
    {
        // a finalized instance other than 0 is unknown, as to aclshmemx_instance_ctx_set
        return Err(Error::Inner(format!(
            "instance {id} is not initialised (finalized already?)"
        )));
    }
    // finalizing another instance makes it current first; afterwards instance 0 is current again
    make_current(slot);
    let p = slot.live.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if slot.id != 0 {
        make_current(&SLOT0);
    }
    // the last instance gone: the queue-pair configuration returns to its default
    super::qp::reset_if_idle();
    // exception reporting ends with any finalize (the original's rule)
    super::exception::clear();
    if p.is_null() {
        // never initialised (or already finalized): nothing to release
        slot.status
            .store(ACLSHMEM_STATUS_NOT_INITIALIZED, Ordering::Release);
        return Ok(());
    }
    // SAFETY: p came from Arc::into_raw in init and was just removed from the slot: this takes
    // back the slot's count.
    let inst = unsafe { Arc::from_raw(p as *const Instance) };
    // calls already inside the library on other threads (a program error, spec 11.2) finish first
    let inside = super::calls::quiesce(DRAIN_LIMIT);
    if inside > 0 {
        log::error!(
            "[PE {}] finalize: {inside} other thread(s) are still inside library calls of instance {} \
             after {} s; its heaps stay mapped until the process ends",
            inst.my_pe(),
            inst.id(),
            DRAIN_LIMIT.as_secs()
        );
        crate::logging::write_stderr(&format!(
            "aclshmem: [PE {}] finalize ran while {inside} other thread(s) were inside library calls; \
             instance {} is left mapped\n",
            inst.my_pe(),
            inst.id()
        ));
        crate::stream::close_internal_stream();
        let _ = inst.boot().barrier();
        inst.boot().finalize();
        // the other threads still use the instance: it must outlive them, so it is never freed
        std::mem::forget(inst);
        slot.status
            .store(ACLSHMEM_STATUS_NOT_INITIALIZED, Ordering::Release);
        return Err(Error::Inner(format!(
            "finalize: {inside} thread(s) still inside library calls"
        )));
    }
    // stream-ordered work of the library's own stream ends before the heaps go
    crate::stream::close_internal_stream();
    // work queued on the program's streams holds counts of its own: let it finish first
    let inst = drain(inst);
    if AT_EXIT.load(Ordering::Relaxed)
        && let Err(e) = crate::sync::depart(&inst)
    {
        log::error!(
            "[PE {}] finalize at exit: telling the other PEs that this one left failed: {e}",
            inst.my_pe()
        );
    }
    // what this PE issued completes first (OpenSHMEM 1.5, shmem_finalize: it completes pending
    // communication): over a network a put may still be in flight or batched here, and its
    // target must apply it before the barrier below lets anybody tear down
    std::sync::atomic::fence(Ordering::SeqCst);
    let done = inst.routes().quiet();
    if let Err(e) = &done {
        log::error!(
            "[PE {}] finalize: completing this PE's outstanding operations failed: {e}",
            inst.my_pe()
        );
    }
    // nobody may unmap while a peer still reads or writes its memory
    // (driving the transports meanwhile: a peer still in its quiet needs this PE to apply and
    // acknowledge its puts)
    let barrier = inst.routes().drive_while(|| inst.boot().barrier()).and(done);
    if let Err(e) = &barrier
        && AT_EXIT.load(Ordering::Relaxed)
    {
        // a finalize at exit whose PEs did not all come: the others (waiting for this one where
        // no departure is noticed) would wait for ever once this PE has left quietly
        crate::bootstrap::config_store::client::announce(&format!(
            "[PE {}] the finalize at exit failed ({e}): ending the job",
            inst.my_pe()
        ));
        inst.boot().global_exit(1);
        crate::util::exit_process(1);
    }
    match Arc::try_unwrap(inst) {
        Ok(inst) => inst.into_bootstrap().finalize(),
        Err(stuck) => {
            log::error!(
                "[PE {}] finalize: {} stream-queued operation(s) of instance {} never ran; they will be \
                 cancelled if they start, and this instance's heaps stay mapped until the process ends",
                stuck.my_pe(),
                Arc::strong_count(&stuck) - 1,
                stuck.id()
            );
            stuck.boot().finalize();
            // the operations still hold the instance: it must outlive them, so it is never freed
            std::mem::forget(stuck);
        }
    }
    slot.status
        .store(ACLSHMEM_STATUS_NOT_INITIALIZED, Ordering::Release);
    barrier
}

/// Set by the finalize at exit (this file's `finalize_at_exit` and the OpenSHMEM surface's):
/// [`finalizing_at_exit`].
static AT_EXIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The process is exiting without having finalized: from now on a finalize first tells the other
/// PEs that this one left (`sync::depart`), and one that fails (its barrier or its quiet) ends the
/// whole job with status 1 instead of returning the error, which no caller would see.
pub fn finalizing_at_exit() {
    AT_EXIT.store(true, Ordering::Relaxed);
}

/// How long finalize waits for stream-queued operations of its instance to run.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// Waits (bounded by [`DRAIN_LIMIT`]) until no stream-queued operation holds `inst`; if some still
/// do, marks the instance closing so that they are cancelled when they start.
fn drain(inst: Arc<Instance>) -> Arc<Instance> {
    let start = std::time::Instant::now();
    let mut b = crate::wait::Backoff::new();
    while Arc::strong_count(&inst) > 1 {
        if start.elapsed() > DRAIN_LIMIT {
            inst.close();
            break;
        }
        b.snooze();
    }
    inst
}

/// `aclshmem_global_exit`: every PE of the job exits with `status`, this one included.
/// [`crate::util::end_job`]'s way to end the job: a global exit.
fn end_job(status: i32) {
    global_exit(status)
}

pub fn global_exit(status: i32) -> ! {
    // the other PEs get the argument (their messages name the call as made) and end with the
    // status a process can have (`job_status`)
    let code = crate::util::job_status(status);
    match super::current() {
        Ok(inst) => {
            log::error!(
                "[PE {}] aclshmem_global_exit({status}): ending the job with status {code}",
                inst.my_pe()
            );
            inst.boot().global_exit(status);
        }
        Err(_) => log::error!(
            "aclshmem_global_exit({status}) before init: exiting this process only, with status {code}"
        ),
    }
    log::logger().flush();
    crate::util::exit_process(code)
}

//! Bindings of the newer original releases: instances (`InitMode`, `aclshmemx_init_attr`,
//! `aclshmemx_set_attr_uniqueid_args`, `aclshmemx_instance_ctx_get/set`, `InstanceContext`), the heap
//! kinds (`aclshmemx_malloc/calloc/align/free`), the engine configurations
//! (`aclshmemx_set_{mte,sdma,rdma,udma}_config`), team barriers (`aclshmem_barrier/sync/sync_all`,
//! `aclshmemx_barrier[_all]_on_stream`, `Handle`, `aclshmemx_handle_wait`), profiling
//! (`aclshmemx_get_prof/show_prof`, `ProfData`) and the team constants.
//!
//! Instance ids and team handles are checked here, before the C call, as the original's binding
//! does: an instance id must be an `int` (not a `bool`) in `0..=254`, a team handle an `int` in
//! `0..ACLSHMEM_MAX_TEAMS` naming a live team; anything else raises `ValueError`. A void C call that
//! is handed a dead team only logs, so the check is what tells a Python caller.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use aclshmem_abi as abi;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use crate::{InitAttr, UniqueId, ffi, nogil, p};

/// Instances per process the public API allows: ids `0..MAX_INSTANCES`.
pub const MAX_INSTANCES: u64 = 255;

/// The `ValueError` unless `value` is an `int` (not a `bool`) in `0..=254`.
pub fn instance_id_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    let bad = || PyValueError::new_err(format!("instance_id must be an int in 0..={}", MAX_INSTANCES - 1));
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    match value.extract::<u64>() {
        Ok(v) if v < MAX_INSTANCES => Ok(v),
        _ => Err(bad()),
    }
}

/// The team handle `value` (an `int`, not a `bool`, in `0..ACLSHMEM_MAX_TEAMS`), or `ValueError`.
fn team_arg(value: &Bound<'_, PyAny>) -> PyResult<c_int> {
    let bad = || PyValueError::new_err(format!("team must be an int in 0..{}", abi::ACLSHMEM_MAX_TEAMS));
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    match value.extract::<i64>() {
        Ok(v) if (0..abi::ACLSHMEM_MAX_TEAMS as i64).contains(&v) => Ok(v as c_int),
        _ => Err(bad()),
    }
}

/// Whether `team` is a live team of the current instance (the library is initialised and the team
/// has members).
fn team_is_live(team: c_int) -> bool {
    if !(0..abi::ACLSHMEM_MAX_TEAMS as c_int).contains(&team) {
        return false;
    }
    // SAFETY: no arguments / a plain value argument.
    unsafe {
        ffi::aclshmemx_init_status() == abi::ACLSHMEM_STATUS_IS_INITIALIZED
            && ffi::aclshmem_team_n_pes(team) > 0
    }
}

/// [`team_arg`], then `ValueError` unless the team is live.
fn live_team_arg(value: &Bound<'_, PyAny>) -> PyResult<c_int> {
    let team = team_arg(value)?;
    if !team_is_live(team) {
        return Err(PyValueError::new_err(format!(
            "team {team} is not a live team of the current instance"
        )));
    }
    Ok(team)
}

/// A stream handle (0 = the default stream) as the C `aclrtStream`.
fn stream_ptr(stream: usize) -> *mut c_void {
    p(stream)
}

// ---------------------------------------------------------------------------------------------
// instances

/// `aclshmemx_init_attr(bootstrap_flags, attributes)` with an `InitMode` (or its int); returns the
/// code. For `InitMode.UNIQUEID` the attributes come from `aclshmemx_set_attr_uniqueid_args`.
#[pyfunction]
fn aclshmemx_init_attr(py: Python<'_>, bootstrap_flags: u32, attributes: PyRef<'_, InitAttr>) -> i32 {
    let mut attr = attributes.to_c(py);
    drop(attributes);
    nogil(py, move || {
        attr.with(|a| {
            // SAFETY: a valid attribute struct; its `comm_args` (when set) points at the unique
            // id it owns, alive for the call.
            unsafe { ffi::aclshmemx_init_attr(bootstrap_flags, a) }
        })
    })
}

/// `aclshmemx_set_attr_uniqueid_args(my_pe, n_pes, local_mem_size, uid, attr)`: fills `attr` for a
/// unique-id init (`aclshmemx_init_attr(InitMode.UNIQUEID, attr)`). `attr` keeps its own copy of
/// `uid`, so deleting the `UniqueId` afterwards is harmless. On failure `attr` is unchanged. Returns
/// the code.
#[pyfunction]
fn aclshmemx_set_attr_uniqueid_args(
    py: Python<'_>,
    my_pe: i32,
    n_pes: i32,
    local_mem_size: i64,
    uid: PyRef<'_, UniqueId>,
    mut attr: PyRefMut<'_, InitAttr>,
) -> i32 {
    let mut c = attr.to_c(py);
    c.uid = Some(Box::new(uid.to_c()));
    drop(uid);
    let (rc, c) = py.allow_threads(move || {
        let rc = c.with(|a| {
            let u = a.comm_args.cast::<abi::UniqueId>();
            // SAFETY: the C struct and the unique id it points at are valid for the call; the
            // library only stores the pointer (`comm_args`), which `with` clears again.
            unsafe { ffi::aclshmemx_set_attr_uniqueid_args(my_pe, n_pes, local_mem_size, u, a) }
        });
        (rc, c)
    });
    if rc == 0 {
        attr.my_rank = c.attr.my_pe;
        attr.n_ranks = c.attr.n_pes;
        attr.local_mem_size = c.attr.local_mem_size;
        attr.uid = c.uid;
    }
    rc
}

/// A snapshot of `aclshmem_instance_ctx`: the current instance's `id`.
#[pyclass(module = "shmem._pyshmem", frozen)]
struct InstanceContext {
    #[pyo3(get)]
    id: u64,
}

#[pymethods]
impl InstanceContext {
    fn __repr__(&self) -> String {
        format!("InstanceContext(id={})", self.id)
    }
}

/// The current instance as an `InstanceContext`, or None when the library has none.
#[pyfunction]
fn aclshmemx_instance_ctx_get() -> Option<InstanceContext> {
    // SAFETY: no arguments; the returned pointer is NULL or valid for the process's life.
    let ctx = unsafe { ffi::aclshmemx_instance_ctx_get() };
    if ctx.is_null() {
        return None;
    }
    // SAFETY: non-null, see above.
    let id = unsafe { (*ctx).id };
    Some(InstanceContext { id })
}

/// `aclshmemx_instance_ctx_set(instance_id)`: makes the instance current for later calls; returns
/// the code (`ValueError` for an id outside 0..=254).
#[pyfunction]
fn aclshmemx_instance_ctx_set(py: Python<'_>, instance_id: &Bound<'_, PyAny>) -> PyResult<i32> {
    let id = instance_id_arg(instance_id)?;
    // SAFETY: plain value argument.
    Ok(nogil(py, move || unsafe { ffi::aclshmemx_instance_ctx_set(id) }))
}

/// `aclshmemx_finalize(instance_id)`: finalizes that instance; returns the code (`ValueError` for
/// an id outside 0..=254, a bool included).
#[pyfunction]
fn aclshmemx_finalize(py: Python<'_>, instance_id: &Bound<'_, PyAny>) -> PyResult<i32> {
    let id = instance_id_arg(instance_id)?;
    // SAFETY: plain value argument.
    Ok(nogil(py, move || unsafe { ffi::aclshmemx_finalize(id) }))
}

// ---------------------------------------------------------------------------------------------
// heap kinds: 0 on failure, as the C calls (the older aclshmem_malloc binding raises instead)

#[pyfunction]
#[pyo3(signature = (size, mem_type = abi::DEVICE_SIDE))]
fn aclshmemx_malloc(py: Python<'_>, size: usize, mem_type: c_int) -> usize {
    // SAFETY: plain value arguments.
    nogil(py, move || unsafe { ffi::aclshmemx_malloc(size, mem_type) }
        as usize)
}

#[pyfunction]
#[pyo3(signature = (count, size, mem_type = abi::DEVICE_SIDE))]
fn aclshmemx_calloc(py: Python<'_>, count: usize, size: usize, mem_type: c_int) -> usize {
    // SAFETY: plain value arguments.
    nogil(
        py,
        move || unsafe { ffi::aclshmemx_calloc(count, size, mem_type) } as usize,
    )
}

#[pyfunction]
#[pyo3(signature = (alignment, size, mem_type = abi::DEVICE_SIDE))]
fn aclshmemx_align(py: Python<'_>, alignment: usize, size: usize, mem_type: c_int) -> usize {
    // SAFETY: plain value arguments.
    nogil(
        py,
        move || unsafe { ffi::aclshmemx_align(alignment, size, mem_type) } as usize,
    )
}

/// Frees (collectively) an allocation of the `mem_type` heap.
#[pyfunction]
#[pyo3(signature = (ptr, mem_type = abi::DEVICE_SIDE))]
fn aclshmemx_free(py: Python<'_>, ptr: usize, mem_type: c_int) {
    // SAFETY: the library checks that `ptr` is an allocation of that heap (anything else is logged).
    nogil(py, move || unsafe { ffi::aclshmemx_free(p(ptr), mem_type) })
}

// ---------------------------------------------------------------------------------------------
// engine configurations: the C call's code

macro_rules! config_fns {
    ($($name:ident),*) => {$(
        #[pyfunction]
        fn $name(py: Python<'_>, offset: u64, ub_size: u32, sync_id: u32) -> i32 {
            // SAFETY: plain value arguments.
            nogil(py, move || unsafe { ffi::$name(offset, ub_size, sync_id) })
        }
    )*};
}
config_fns!(
    aclshmemx_set_mte_config,
    aclshmemx_set_sdma_config,
    aclshmemx_set_rdma_config,
    aclshmemx_set_udma_config
);

// ---------------------------------------------------------------------------------------------
// barriers

/// Barrier over the live team `team` (collective over its members).
#[pyfunction]
fn aclshmem_barrier(py: Python<'_>, team: &Bound<'_, PyAny>) -> PyResult<()> {
    let t = live_team_arg(team)?;
    // SAFETY: plain value argument.
    nogil(py, move || unsafe { ffi::aclshmem_barrier(t) });
    Ok(())
}

/// Same as `aclshmem_barrier`.
#[pyfunction]
fn aclshmem_sync(py: Python<'_>, team: &Bound<'_, PyAny>) -> PyResult<()> {
    let t = live_team_arg(team)?;
    // SAFETY: plain value argument.
    nogil(py, move || unsafe { ffi::aclshmem_sync(t) });
    Ok(())
}

#[pyfunction]
fn aclshmem_sync_all(py: Python<'_>) {
    // SAFETY: no arguments.
    nogil(py, || unsafe { ffi::aclshmem_sync_all() })
}

/// Queues a barrier over the live team `team` on `stream` (0 = the default stream).
#[pyfunction]
fn aclshmemx_barrier_on_stream(py: Python<'_>, team: &Bound<'_, PyAny>, stream: usize) -> PyResult<()> {
    let t = live_team_arg(team)?;
    // SAFETY: the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_barrier_on_stream(t, stream_ptr(stream))
    });
    Ok(())
}

/// Queues a barrier over all PEs on `stream` (0 = the default stream).
#[pyfunction]
fn aclshmemx_barrier_all_on_stream(py: Python<'_>, stream: usize) {
    // SAFETY: the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_barrier_all_on_stream(stream_ptr(stream))
    })
}

/// `aclshmem_handle_t`: the team a handle wait covers (default: the world team). Setting or
/// constructing it with anything but a live team raises `ValueError`.
#[pyclass(module = "shmem._pyshmem")]
struct Handle {
    team: c_int,
}

#[pymethods]
impl Handle {
    #[new]
    #[pyo3(signature = (team_id = None))]
    fn new(team_id: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let team = match team_id {
            None => abi::ACLSHMEM_TEAM_WORLD,
            Some(v) => live_team_arg(v)?,
        };
        Ok(Handle { team })
    }

    #[getter]
    fn get_team_id(&self) -> c_int {
        self.team
    }

    #[setter]
    fn set_team_id(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.team = live_team_arg(value)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("Handle(team_id={})", self.team)
    }
}

/// Queues on `stream` the completion of this PE's operations towards the handle's team, then a
/// barrier of the team (collective over its members). `ValueError` when the team is not live.
#[pyfunction]
fn aclshmemx_handle_wait(py: Python<'_>, handle: PyRef<'_, Handle>, stream: usize) -> PyResult<()> {
    let team = handle.team;
    drop(handle);
    if !team_is_live(team) {
        return Err(PyValueError::new_err(format!(
            "handle.team_id {team} is not a live team of the current instance"
        )));
    }
    // SAFETY: the stream is an ACL handle or 0; the handle is passed by value.
    nogil(py, move || unsafe {
        ffi::aclshmemx_handle_wait(abi::Handle { team_id: team }, stream_ptr(stream))
    });
    Ok(())
}

/// Whether `team_id` is a live team of the current instance (never raises).
#[pyfunction]
fn _is_valid_team(team_id: i64) -> bool {
    (0..abi::ACLSHMEM_MAX_TEAMS as i64).contains(&team_id) && team_is_live(team_id as c_int)
}

// ---------------------------------------------------------------------------------------------
// profiling

/// A copy of the profiled PE's record: `pe_id`, and `ccount` / `cycles` as 64 lists (blocks) of
/// 1024 ints (frames).
#[pyclass(module = "shmem._pyshmem", frozen)]
struct ProfData {
    #[pyo3(get)]
    pe_id: i32,
    #[pyo3(get)]
    ccount: Vec<Vec<i64>>,
    #[pyo3(get)]
    cycles: Vec<Vec<i64>>,
}

#[pymethods]
impl ProfData {
    fn __repr__(&self) -> String {
        format!("ProfData(pe_id={})", self.pe_id)
    }
}

/// The library's record is one buffer it rewrites on every read: reads are serialised so that each
/// caller copies a whole one.
static PROF_READ: Mutex<()> = Mutex::new(());

/// A copy of this PE's profiling record (`verbose` also prints it), or None when this PE is not the
/// profiled one (SHMEM_CYCLE_PROF_PE).
#[pyfunction]
#[pyo3(signature = (verbose = false))]
fn aclshmemx_get_prof(py: Python<'_>, verbose: bool) -> Option<ProfData> {
    py.allow_threads(move || {
        let _g = PROF_READ.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: *mut abi::ProfPe = std::ptr::null_mut();
        // SAFETY: `out` is a valid out-pointer.
        unsafe { ffi::aclshmemx_get_prof(&mut out, verbose) };
        if out.is_null() {
            return None;
        }
        // SAFETY: the library's record, valid and not rewritten while PROF_READ is held (every
        // reader of this process goes through it).
        let rec = unsafe { &*out };
        Some(ProfData {
            pe_id: rec.pe_id,
            ccount: rec.block_prof.iter().map(|b| b.ccount.to_vec()).collect(),
            cycles: rec.block_prof.iter().map(|b| b.cycles.to_vec()).collect(),
        })
    })
}

/// Prints this PE's profiling record (deprecated form of `aclshmemx_get_prof(True)`).
#[pyfunction]
fn aclshmemx_show_prof(py: Python<'_>) {
    py.allow_threads(|| {
        let _g = PROF_READ.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: no arguments.
        unsafe { ffi::aclshmemx_show_prof() }
    })
}

/// A team split that fails raises `RuntimeError` (a PE outside the new team gets
/// `ACLSHMEM_TEAM_INVALID`, -1, which is not an error).
#[pyfunction]
fn team_split_strided(py: Python<'_>, parent: i32, start: i32, stride: i32, size: i32) -> PyResult<i32> {
    let (rc, t) = nogil(py, move || {
        let mut t: c_int = abi::ACLSHMEM_TEAM_INVALID;
        // SAFETY: `t` is a valid out-pointer.
        let rc = unsafe { ffi::aclshmem_team_split_strided(parent, start, stride, size, &mut t) };
        (rc, t)
    });
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "aclshmem_team_split_strided(parent={parent}, start={start}, stride={stride}, size={size}) failed ({rc})"
        )));
    }
    Ok(t)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<InstanceContext>()?;
    m.add_class::<Handle>()?;
    m.add_class::<ProfData>()?;
    m.add("ACLSHMEM_TEAM_WORLD", abi::ACLSHMEM_TEAM_WORLD)?;
    m.add("ACLSHMEM_TEAM_INVALID", abi::ACLSHMEM_TEAM_INVALID)?;
    m.add("ACLSHMEM_MAX_TEAMS", abi::ACLSHMEM_MAX_TEAMS)?;
    m.add_function(wrap_pyfunction!(aclshmemx_init_attr, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_attr_uniqueid_args, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_instance_ctx_get, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_instance_ctx_set, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_finalize, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_malloc, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_calloc, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_align, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_free, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_mte_config, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_sdma_config, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_rdma_config, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_udma_config, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_barrier, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_sync, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_sync_all, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_barrier_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_barrier_all_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_handle_wait, m)?)?;
    m.add_function(wrap_pyfunction!(_is_valid_team, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_get_prof, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_show_prof, m)?)?;
    m.add_function(wrap_pyfunction!(team_split_strided, m)?)?;
    Ok(())
}

//! `shmem._pyshmem`: the original's pybind11 module (spec host-api.md §13.3), written with PyO3 over
//! the C ABI of `libaclshmem.so`.
//!
//! The C functions are declared in [`ffi`] and left undefined in this module: `shmem/__init__.py`
//! loads `libaclshmem.so` with `RTLD_GLOBAL` before importing it, so the dynamic linker binds them to
//! the one library of the process (the same one a C extension or a ctypes-loaded C library linked
//! against `-laclshmem` binds to: one runtime, one heap, one set of PEs).
//!
//! Addresses and streams are Python `int`s; a stream of 0 is the default stream. Every call that can
//! wait runs with the GIL released (`Python::allow_threads`); transfers below [`NOGIL_MIN_BYTES`]
//! and single-element `p`/`g` keep it (a bounded copy on one node, cheaper than the GIL round trip).
//! The point-to-point waits also let Ctrl-C end them ([`wait`]).

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use aclshmem_abi as abi;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

mod buffer;
mod ffi;
mod newer;
mod typed;
mod wait;

/// Length of `aclshmemx_uniqueid_t` in bytes.
const UID_LEN: usize = std::mem::size_of::<abi::UniqueId>();

/// Turns a Python address into a pointer.
fn p(addr: usize) -> *mut c_void {
    addr as *mut c_void
}

/// Runs `f` with the GIL released (it may wait for other PEs).
fn nogil<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> T {
    py.allow_threads(f)
}

/// Transfers smaller than this keep the GIL: to a same-node peer they are a bounded copy that
/// takes less time than releasing and re-taking the GIL (measured: ~0.3 us per call). Every wait,
/// barrier, quiet, allocation, init/finalize and larger transfer releases it.
pub const NOGIL_MIN_BYTES: usize = 16 << 10;

/// Runs `f`, releasing the GIL only for transfers of at least [`NOGIL_MIN_BYTES`].
fn nogil_if<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, bytes: usize, f: F) -> T {
    if bytes >= NOGIL_MIN_BYTES {
        py.allow_threads(f)
    } else {
        f()
    }
}

// ---------------------------------------------------------------------------------------------
// classes

/// `aclshmem_init_optional_attr_t`.
#[pyclass(module = "shmem._pyshmem")]
#[derive(Clone)]
struct OptionalAttr {
    #[pyo3(get, set)]
    version: i32,
    #[pyo3(get, set)]
    data_op_engine_type: i32,
    #[pyo3(get, set)]
    shm_init_timeout: u32,
    #[pyo3(get, set)]
    shm_create_timeout: u32,
    #[pyo3(get, set)]
    control_operation_timeout: u32,
    #[pyo3(get, set, name = "sockFd")]
    sock_fd: i32,
}

#[pymethods]
impl OptionalAttr {
    #[new]
    fn new() -> Self {
        let d = abi::InitOptionalAttr::default();
        OptionalAttr {
            version: d.version,
            data_op_engine_type: d.data_op_engine_type,
            shm_init_timeout: 120,
            shm_create_timeout: 120,
            control_operation_timeout: 120,
            sock_fd: -1,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "OptionalAttr(version={}, data_op_engine_type={}, shm_init_timeout={}, shm_create_timeout={}, control_operation_timeout={}, sockFd={})",
            self.version,
            self.data_op_engine_type,
            self.shm_init_timeout,
            self.shm_create_timeout,
            self.control_operation_timeout,
            self.sock_fd
        )
    }
}

impl OptionalAttr {
    fn to_c(&self) -> abi::InitOptionalAttr {
        abi::InitOptionalAttr {
            version: self.version,
            data_op_engine_type: self.data_op_engine_type,
            shm_init_timeout: self.shm_init_timeout,
            shm_create_timeout: self.shm_create_timeout,
            control_operation_timeout: self.control_operation_timeout,
            sock_fd: self.sock_fd,
        }
    }
}

/// `aclshmemx_init_attr_t` (`my_rank`/`n_ranks` are the C fields `my_pe`/`n_pes`). `option_attr`
/// is a member object, as in the original: `attr.option_attr.shm_init_timeout = 30` changes `attr`;
/// assigning `attr.option_attr = o` copies `o`.
#[pyclass(module = "shmem._pyshmem")]
struct InitAttr {
    #[pyo3(get, set)]
    my_rank: i32,
    #[pyo3(get, set)]
    n_ranks: i32,
    ip_port: String,
    #[pyo3(get, set)]
    local_mem_size: u64,
    option_attr: Py<OptionalAttr>,
    /// `instance_id` (0..=254).
    instance_id: u64,
    /// The unique id given to `aclshmemx_set_attr_uniqueid_args`, owned here (the C struct's
    /// `comm_args` points at it), so the caller's `UniqueId` may go away before init.
    uid: Option<Box<abi::UniqueId>>,
}

#[pymethods]
impl InitAttr {
    #[new]
    fn new(py: Python<'_>) -> PyResult<Self> {
        Self::from_c(py, &abi::InitAttr::default())
    }

    #[getter]
    fn get_option_attr(&self, py: Python<'_>) -> Py<OptionalAttr> {
        self.option_attr.clone_ref(py)
    }

    #[setter]
    fn set_option_attr(&mut self, py: Python<'_>, v: PyRef<'_, OptionalAttr>) -> PyResult<()> {
        self.option_attr = Py::new(py, v.clone())?;
        Ok(())
    }

    /// The instance this attribute set initialises (0..=254; anything else, a bool included,
    /// raises `ValueError`).
    #[getter]
    fn get_instance_id(&self) -> u64 {
        self.instance_id
    }

    #[setter]
    fn set_instance_id(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.instance_id = newer::instance_id_arg(v)?;
        Ok(())
    }

    /// The config-store URL, truncated to 63 bytes as the C field holds.
    #[getter]
    fn get_ip_port(&self) -> String {
        self.ip_port.clone()
    }

    #[setter]
    fn set_ip_port(&mut self, v: &str) {
        let mut s = v.to_string();
        let mut cut = s.len().min(abi::ACLSHMEM_MAX_IP_PORT_LEN - 1);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        self.ip_port = s;
    }

    fn __repr__(&self) -> String {
        format!(
            "InitAttr(my_rank={}, n_ranks={}, ip_port={:?}, local_mem_size={}, instance_id={})",
            self.my_rank, self.n_ranks, self.ip_port, self.local_mem_size, self.instance_id
        )
    }
}

/// A copy of an `InitAttr` as the C struct, with its own copy of the unique id, to hand to the
/// library with the GIL released. `comm_args` is NULL except inside [`CInitAttr::with`].
struct CInitAttr {
    attr: abi::InitAttr,
    uid: Option<Box<abi::UniqueId>>,
}

// SAFETY: the only pointer inside, `attr.comm_args`, is NULL outside `with`, which points it at
// `uid`, owned by the same value.
unsafe impl Send for CInitAttr {}

impl CInitAttr {
    /// Runs `f` with the C struct, `comm_args` pointing at the owned unique id (when there is one).
    fn with<T>(&mut self, f: impl FnOnce(&mut abi::InitAttr) -> T) -> T {
        if let Some(u) = &mut self.uid {
            self.attr.comm_args = (&mut **u as *mut abi::UniqueId).cast();
        }
        let r = f(&mut self.attr);
        self.attr.comm_args = std::ptr::null_mut();
        r
    }
}

impl InitAttr {
    fn to_c(&self, py: Python<'_>) -> CInitAttr {
        let mut a = abi::InitAttr {
            my_pe: self.my_rank,
            n_pes: self.n_ranks,
            local_mem_size: self.local_mem_size,
            option_attr: self.option_attr.borrow(py).to_c(),
            instance_id: self.instance_id,
            ..abi::InitAttr::default()
        };
        for (d, s) in a.ip_port.iter_mut().zip(self.ip_port.bytes()) {
            *d = s as c_char;
        }
        CInitAttr {
            attr: a,
            uid: self.uid.clone(),
        }
    }

    fn from_c(py: Python<'_>, a: &abi::InitAttr) -> PyResult<Self> {
        let bytes: Vec<u8> = a
            .ip_port
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let o = &a.option_attr;
        Ok(InitAttr {
            my_rank: a.my_pe,
            n_ranks: a.n_pes,
            ip_port: String::from_utf8_lossy(&bytes).into_owned(),
            local_mem_size: a.local_mem_size,
            option_attr: Py::new(
                py,
                OptionalAttr {
                    version: o.version,
                    data_op_engine_type: o.data_op_engine_type,
                    shm_init_timeout: o.shm_init_timeout,
                    shm_create_timeout: o.shm_create_timeout,
                    control_operation_timeout: o.control_operation_timeout,
                    sock_fd: o.sock_fd,
                },
            )?,
            instance_id: a.instance_id,
            uid: None,
        })
    }
}

/// `aclshmem_team_config_t` (only `num_contexts` is visible, as in the original).
#[pyclass(module = "shmem._pyshmem")]
#[derive(Clone)]
struct TeamConfig {
    #[pyo3(get, set)]
    num_contexts: i32,
}

#[pymethods]
impl TeamConfig {
    #[new]
    fn new() -> Self {
        TeamConfig { num_contexts: 0 }
    }
}

/// `aclshmemx_uniqueid_t`: `internal` (124 bytes) is settable only when `version == 65672`.
#[pyclass(module = "shmem._pyshmem")]
#[derive(Clone)]
struct UniqueId {
    #[pyo3(get, set)]
    version: i32,
    #[pyo3(get, set)]
    my_pe: i32,
    #[pyo3(get, set)]
    n_pes: i32,
    internal: Vec<u8>,
}

#[pymethods]
impl UniqueId {
    #[new]
    fn new() -> Self {
        UniqueId {
            version: abi::ACLSHMEM_UNIQUEID_VERSION,
            my_pe: 0,
            n_pes: 0,
            internal: vec![0; 124],
        }
    }

    #[getter]
    fn get_internal<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.internal)
    }

    #[setter]
    fn set_internal(&mut self, v: Vec<u8>) -> PyResult<()> {
        if self.version != abi::ACLSHMEM_UNIQUEID_VERSION {
            return Err(PyValueError::new_err(format!(
                "UniqueId.internal can be set only when version == {}",
                abi::ACLSHMEM_UNIQUEID_VERSION
            )));
        }
        if v.len() != abi::ACLSHMEM_UNIQUE_ID_INNER_LEN {
            return Err(PyValueError::new_err(format!(
                "UniqueId.internal must be exactly {} bytes, got {}",
                abi::ACLSHMEM_UNIQUE_ID_INNER_LEN,
                v.len()
            )));
        }
        self.internal = v;
        Ok(())
    }

    /// The 136 bytes of the C struct.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(UID_LEN);
        out.extend_from_slice(&self.version.to_ne_bytes());
        out.extend_from_slice(&self.my_pe.to_ne_bytes());
        out.extend_from_slice(&self.n_pes.to_ne_bytes());
        out.extend_from_slice(&self.internal);
        PyBytes::new(py, &out)
    }

    /// Pickling and `copy`: the state is the 136 bytes of `to_bytes` (a `UniqueId` is what
    /// `comm.bcast` or `torch.distributed.broadcast_object_list` hands around).
    fn __getstate__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.to_bytes(py)
    }

    fn __setstate__(&mut self, state: &[u8]) -> PyResult<()> {
        *self = Self::from_bytes(state)?;
        Ok(())
    }

    /// Parses the 136 bytes of a unique id (any other length raises `ValueError`).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        if data.len() != UID_LEN {
            return Err(PyValueError::new_err(format!(
                "a unique id is exactly {UID_LEN} bytes, got {}",
                data.len()
            )));
        }
        let u = uid_from_bytes(data)?;
        Ok(UniqueId {
            version: u.version,
            my_pe: u.my_pe,
            n_pes: u.n_pes,
            internal: u.internal.iter().map(|&c| c as u8).collect(),
        })
    }
}

impl UniqueId {
    fn to_c(&self) -> abi::UniqueId {
        let mut internal = [0 as c_char; abi::ACLSHMEM_UNIQUE_ID_INNER_LEN];
        for (d, s) in internal.iter_mut().zip(&self.internal) {
            *d = *s as c_char;
        }
        abi::UniqueId {
            version: self.version,
            my_pe: self.my_pe,
            n_pes: self.n_pes,
            internal,
        }
    }
}

fn uid_from_bytes(data: &[u8]) -> PyResult<abi::UniqueId> {
    if data.len() < UID_LEN {
        return Err(PyValueError::new_err(format!(
            "a unique id needs at least {UID_LEN} bytes, got {}",
            data.len()
        )));
    }
    let i32_at = |o: usize| i32::from_ne_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
    let mut internal = [0 as c_char; abi::ACLSHMEM_UNIQUE_ID_INNER_LEN];
    for (d, s) in internal.iter_mut().zip(&data[12..UID_LEN]) {
        *d = *s as c_char;
    }
    Ok(abi::UniqueId {
        version: i32_at(0),
        my_pe: i32_at(4),
        n_pes: i32_at(8),
        internal,
    })
}

fn uid_to_bytes(u: &abi::UniqueId) -> Vec<u8> {
    let mut out = Vec::with_capacity(UID_LEN);
    out.extend_from_slice(&u.version.to_ne_bytes());
    out.extend_from_slice(&u.my_pe.to_ne_bytes());
    out.extend_from_slice(&u.n_pes.to_ne_bytes());
    out.extend(u.internal.iter().map(|&c| c as u8));
    out
}

// ---------------------------------------------------------------------------------------------
// init / finalize / info

/// `aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, attributes)`; returns the code.
#[pyfunction]
fn aclshmem_init(py: Python<'_>, attributes: PyRef<'_, InitAttr>) -> i32 {
    let mut attr = attributes.to_c(py);
    drop(attributes);
    nogil(py, move || {
        attr.with(|a| {
            // SAFETY: a valid attribute struct that lives for the call.
            unsafe { ffi::aclshmemx_init_attr(abi::ACLSHMEMX_INIT_WITH_DEFAULT, a) }
        })
    })
}

/// Unique-id init: -1 if `uid` is shorter than 136 bytes (longer buffers, e.g. 512 bytes, are fine).
#[pyfunction]
fn aclshmem_init_using_unique_id(py: Python<'_>, mype: i32, npes: i32, mem_size: i64, uid: &[u8]) -> i32 {
    let Ok(mut u) = uid_from_bytes(uid) else {
        return -1;
    };
    nogil(py, move || {
        let mut attr = abi::InitAttr::default();
        // SAFETY: `u` and `attr` are valid and live until init_attr returns.
        let rc = unsafe { ffi::aclshmemx_set_attr_uniqueid_args(mype, npes, mem_size, &mut u, &mut attr) };
        if rc != 0 {
            return rc;
        }
        // SAFETY: as above.
        unsafe { ffi::aclshmemx_init_attr(abi::ACLSHMEMX_INIT_WITH_UNIQUEID, &mut attr) }
    })
}

/// Extension: `aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_MPI)` over MPI_COMM_WORLD (the library's
/// MPI bootstrap; the job must be started by mpirun; `my_pe`/`n_pes` are the MPI rank and size).
/// Returns the code.
#[pyfunction]
fn aclshmemx_init_with_mpi(py: Python<'_>, my_pe: i32, n_pes: i32, mem_size: u64) -> i32 {
    nogil(py, move || {
        let mut attr = abi::InitAttr {
            my_pe,
            n_pes,
            local_mem_size: mem_size,
            ..abi::InitAttr::default()
        };
        // SAFETY: `attr` is valid for the call.
        unsafe { ffi::aclshmemx_init_attr(abi::ACLSHMEMX_INIT_WITH_MPI, &mut attr) }
    })
}

/// Extension: `aclshmemx_set_attr_from_env` (aclshmrun, torchrun or mpirun variables) as an
/// `InitAttr`; raises `RuntimeError` when the environment describes no job it can use.
#[pyfunction]
fn aclshmemx_set_attr_from_env(py: Python<'_>) -> PyResult<InitAttr> {
    let mut a = abi::InitAttr::default();
    // SAFETY: `a` is valid for the call.
    let rc = unsafe { ffi::aclshmemx_set_attr_from_env(&mut a) };
    if rc != 0 {
        // the code alone cannot tell which: the library's log names it
        return Err(PyRuntimeError::new_err(format!(
            "aclshmemx_set_attr_from_env failed ({rc}): no launcher variables (aclshmrun, torchrun, \
             mpirun, PMI), no rendezvous address (ACLSHMEM_IP_PORT, or MASTER_ADDR and MASTER_PORT), \
             or a malformed value; the library's log says which"
        )));
    }
    InitAttr::from_c(py, &a)
}

/// `ACLSHMEM_LOCAL_MEM_SIZE` as the library reads it (bytes or a K/M/G/T suffix; its default when
/// unset), for an init that takes the heap size from the environment without
/// `aclshmemx_set_attr_from_env`. `ValueError` for a malformed value.
#[pyfunction]
fn _local_mem_size_from_env() -> PyResult<u64> {
    aclshmem_config::ACLSHMEM_LOCAL_MEM_SIZE
        .value()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The 136 bytes of a fresh unique id; raises `RuntimeError` on failure.
#[pyfunction]
fn aclshmem_get_unique_id<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
    let (rc, u) = nogil(py, || {
        let mut u = abi::UniqueId {
            version: 0,
            my_pe: 0,
            n_pes: 0,
            internal: [0; abi::ACLSHMEM_UNIQUE_ID_INNER_LEN],
        };
        // SAFETY: `u` is valid for the call.
        let rc = unsafe { ffi::aclshmemx_get_uniqueid(&mut u) };
        (rc, u)
    });
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "aclshmemx_get_uniqueid failed ({rc})"
        )));
    }
    Ok(PyBytes::new(py, &uid_to_bytes(&u)))
}

#[pyfunction]
fn aclshmem_finalize(py: Python<'_>) -> i32 {
    // SAFETY: no arguments.
    nogil(py, || unsafe { ffi::aclshmem_finalize() })
}

/// `aclshmemx_set_qp_num(engine, qp_num)`: queue pairs per peer connection of `engine` (an
/// `OpEngineType` or its int), before init. 0, or the library's error code (non-int arguments and
/// counts outside uint32 raise TypeError / OverflowError).
#[pyfunction]
fn aclshmemx_set_qp_num(py: Python<'_>, engine: i32, qp_num: u32) -> i32 {
    // SAFETY: plain value arguments.
    nogil(py, move || unsafe { ffi::aclshmemx_set_qp_num(engine, qp_num) })
}

/// The phase of the current instance as an `InitStatus`.
#[pyfunction]
fn aclshmemx_init_status(py: Python<'_>) -> PyResult<PyObject> {
    // SAFETY: no arguments.
    let s = unsafe { ffi::aclshmemx_init_status() };
    enum_value(py, "InitStatus", s as i64)
}

#[pyfunction]
fn aclshmem_info_get_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both out-pointers are valid.
    unsafe { ffi::aclshmem_info_get_version(&mut major, &mut minor) };
    (major, minor)
}

#[pyfunction]
fn aclshmem_info_get_name() -> String {
    let mut buf = [0 as c_char; abi::ACLSHMEM_MAX_NAME_LEN];
    // SAFETY: the buffer holds ACLSHMEM_MAX_NAME_LEN bytes, as the function requires.
    unsafe { ffi::aclshmem_info_get_name(buf.as_mut_ptr()) };
    // SAFETY: the library writes a NUL-terminated string into the buffer.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[pyfunction]
fn aclshmem_global_exit(py: Python<'_>, status: i32) {
    // SAFETY: plain value argument.
    nogil(py, move || unsafe { ffi::aclshmem_global_exit(status) })
}

#[pyfunction]
fn get_ffts_config() -> u64 {
    // SAFETY: no arguments.
    unsafe { ffi::util_get_ffts_config() }
}

// ---------------------------------------------------------------------------------------------
// TLS, logging

/// The Python callables behind the C callbacks (the C callback types carry no user data).
static LOGGER: Mutex<Option<Py<PyAny>>> = Mutex::new(None);
static DECRYPT: Mutex<Option<Py<PyAny>>> = Mutex::new(None);

/// Set by an `atexit` handler (module init registers it): the interpreter is exiting, so the
/// library's own threads (which may still log, say about a PE that ended) must not call into Python
/// any more: taking the GIL while the interpreter is torn down faults.
static PY_EXITING: AtomicBool = AtomicBool::new(false);

/// The `atexit` handler: no Python callback is called from here on; the callables are released.
#[pyfunction]
fn _release_callbacks() {
    PY_EXITING.store(true, Ordering::Release);
    let logger = LOGGER.lock().ok().and_then(|mut g| g.take());
    let decrypt = DECRYPT.lock().ok().and_then(|mut g| g.take());
    drop((logger, decrypt));
}

/// Whether a C callback may call into Python now.
fn python_callable() -> bool {
    // SAFETY: Py_IsInitialized has no preconditions.
    !PY_EXITING.load(Ordering::Acquire) && unsafe { pyo3::ffi::Py_IsInitialized() } != 0
}

/// C logger calling the registered Python `func(level, msg)` with the GIL held. Without a Python
/// function (`set_extern_logger(None)`, or once the interpreter exits) the message goes to stderr.
unsafe extern "C" fn logger_trampoline(level: c_int, msg: *const c_char) {
    let text = if msg.is_null() {
        String::new()
    } else {
        // SAFETY: the library passes a NUL-terminated message.
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    };
    let registered = LOGGER.lock().map(|g| g.is_some()).unwrap_or(false);
    if !registered || !python_callable() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{text}");
        return;
    }
    Python::with_gil(|py| {
        let f = LOGGER
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|f| f.clone_ref(py)));
        if let Some(f) = f
            && let Err(e) = f.call1(py, (level, text))
        {
            e.print(py);
        }
    });
}

/// C decrypt handler calling the registered Python `func(cipher: str) -> str`.
unsafe extern "C" fn decrypt_trampoline(
    cipher: *const c_char,
    cipher_len: usize,
    plain: *mut c_char,
    plain_len: *mut usize,
) -> c_int {
    if cipher.is_null()
        || plain.is_null()
        || plain_len.is_null()
        || cipher_len > 10 << 20
        || !python_callable()
    {
        return -1;
    }
    // SAFETY: the library passes `cipher_len` readable bytes.
    let c = unsafe { std::slice::from_raw_parts(cipher.cast::<u8>(), cipher_len) };
    let c = String::from_utf8_lossy(c).into_owned();
    let out: Option<String> = Python::with_gil(|py| {
        let f = DECRYPT
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|f| f.clone_ref(py)))?;
        match f.call1(py, (c,)).and_then(|r| r.extract::<String>(py)) {
            Ok(s) => Some(s),
            Err(e) => {
                e.print(py);
                None
            }
        }
    });
    let Some(out) = out else { return -1 };
    // SAFETY: `plain_len` is valid (checked non-null) and holds the capacity of `plain`.
    let cap = unsafe { *plain_len };
    if out.len() >= cap {
        return -1;
    }
    // SAFETY: `plain` has `cap` > out.len() writable bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(out.as_ptr(), plain.cast::<u8>(), out.len());
        *plain.add(out.len()) = 0;
        *plain_len = out.len();
    }
    0
}

/// `aclshmemx_set_config_store_tls_key`; `py_decrypt_func(cipher) -> plain` or None.
#[pyfunction]
#[pyo3(signature = (tls_pk, tls_pk_pw, py_decrypt_func = None))]
fn set_conf_store_tls_key(
    py: Python<'_>,
    tls_pk: &str,
    tls_pk_pw: &str,
    py_decrypt_func: Option<Py<PyAny>>,
) -> PyResult<i32> {
    callable_or_none(py, &py_decrypt_func, "py_decrypt_func")?;
    let handler: abi::DecryptHandler = if py_decrypt_func.is_some() {
        Some(decrypt_trampoline)
    } else {
        None
    };
    if let Ok(mut g) = DECRYPT.lock() {
        *g = py_decrypt_func;
    }
    // SAFETY: pointers and lengths describe the two strings, which live for the call.
    Ok(unsafe {
        ffi::aclshmemx_set_config_store_tls_key(
            tls_pk.as_ptr().cast(),
            tls_pk.len() as u32,
            tls_pk_pw.as_ptr().cast(),
            tls_pk_pw.len() as u32,
            handler,
        )
    })
}

/// A callback argument must be callable or None (pybind11 refuses other objects with TypeError
/// too): a non-callable one would only fail, and lose its message, when the library calls it.
fn callable_or_none(py: Python<'_>, f: &Option<Py<PyAny>>, name: &str) -> PyResult<()> {
    match f {
        Some(f) if !f.bind(py).is_callable() => Err(PyTypeError::new_err(format!(
            "{name} must be callable or None, got {}",
            f.bind(py).get_type().name()?
        ))),
        _ => Ok(()),
    }
}

/// `aclshmemx_set_conf_store_tls(enable, tls_info, len)`.
#[pyfunction]
fn set_conf_store_tls(enable: bool, tls_info: &str) -> i32 {
    let s = std::ffi::CString::new(tls_info).unwrap_or_default();
    // SAFETY: `s` is a NUL-terminated string of `tls_info.len()` bytes, alive for the call.
    unsafe { ffi::aclshmemx_set_conf_store_tls(enable, s.as_ptr(), tls_info.len() as u32) }
}

#[pyfunction]
fn set_log_level(level: i32) -> i32 {
    // SAFETY: plain value argument.
    unsafe { ffi::aclshmemx_set_log_level(level) }
}

/// `aclshmemx_set_extern_logger` with a Python `func(level: int, msg: str)` (None restores stderr).
#[pyfunction]
#[pyo3(signature = (func))]
fn set_extern_logger(py: Python<'_>, func: Option<Py<PyAny>>) -> PyResult<i32> {
    callable_or_none(py, &func, "func")?;
    let on = func.is_some();
    if let Ok(mut g) = LOGGER.lock() {
        *g = func;
    }
    let cb: abi::ExternLogger = if on { Some(logger_trampoline) } else { None };
    // SAFETY: the trampoline has the C signature the library expects.
    Ok(unsafe { ffi::aclshmemx_set_extern_logger(cb) })
}

// ---------------------------------------------------------------------------------------------
// heap

fn addr_or_err(ptr: *mut c_void, what: &str) -> PyResult<usize> {
    if ptr.is_null() {
        Err(PyRuntimeError::new_err(format!("{what} returned NULL")))
    } else {
        Ok(ptr as usize)
    }
}

#[pyfunction]
fn aclshmem_malloc(py: Python<'_>, size: usize) -> PyResult<usize> {
    // SAFETY: plain value argument.
    let r = nogil(py, move || unsafe { ffi::aclshmem_malloc(size) } as usize);
    addr_or_err(r as *mut c_void, "aclshmem_malloc")
}

#[pyfunction]
fn aclshmem_calloc(py: Python<'_>, nmemb: usize, size: usize) -> PyResult<usize> {
    // SAFETY: plain value arguments.
    let r = nogil(py, move || unsafe { ffi::aclshmem_calloc(nmemb, size) } as usize);
    addr_or_err(r as *mut c_void, "aclshmem_calloc")
}

#[pyfunction]
fn aclshmem_align(py: Python<'_>, alignment: usize, size: usize) -> PyResult<usize> {
    // SAFETY: plain value arguments.
    let r = nogil(py, move || unsafe { ffi::aclshmem_align(alignment, size) }
        as usize);
    addr_or_err(r as *mut c_void, "aclshmem_align")
}

#[pyfunction]
fn aclshmem_free(py: Python<'_>, ptr: usize) {
    // SAFETY: the library checks that `ptr` is a heap allocation (anything else is logged).
    nogil(py, move || unsafe { ffi::aclshmem_free(p(ptr)) })
}

#[pyfunction]
fn aclshmem_ptr(ptr: usize, peer: i32) -> usize {
    // SAFETY: the library only translates the address (0 when it is not symmetric).
    unsafe { ffi::aclshmem_ptr(p(ptr), peer) as usize }
}

/// The heap base of `mem_type` (None = DEVICE_SIDE), or 0.
#[pyfunction]
#[pyo3(signature = (mem_type = None))]
fn aclshmemx_get_heap_base(mem_type: Option<i32>) -> usize {
    // SAFETY: plain value argument.
    unsafe { ffi::aclshmemx_get_heap_base(mem_type.unwrap_or(abi::DEVICE_SIDE)) as usize }
}

// ---------------------------------------------------------------------------------------------
// PEs and teams

#[pyfunction]
#[pyo3(signature = (team = None))]
fn my_pe(team: Option<i32>) -> i32 {
    // SAFETY: plain value arguments.
    unsafe {
        match team {
            None => ffi::aclshmem_my_pe(),
            Some(t) => ffi::aclshmem_team_my_pe(t),
        }
    }
}

#[pyfunction]
#[pyo3(signature = (team = None))]
fn pe_count(team: Option<i32>) -> i32 {
    // SAFETY: plain value arguments.
    unsafe {
        match team {
            None => ffi::aclshmem_n_pes(),
            Some(t) => ffi::aclshmem_team_n_pes(t),
        }
    }
}

#[pyfunction]
fn team_my_pe(team_id: i32) -> i32 {
    // SAFETY: plain value argument.
    unsafe { ffi::aclshmem_team_my_pe(team_id) }
}

#[pyfunction]
fn team_n_pes(team_id: i32) -> i32 {
    // SAFETY: plain value argument.
    unsafe { ffi::aclshmem_team_n_pes(team_id) }
}

/// `(x_team, y_team)`; raises `RuntimeError` on error.
#[pyfunction]
fn team_split_2d(py: Python<'_>, parent: i32, x_range: i32) -> PyResult<(i32, i32)> {
    let (rc, x, y) = nogil(py, move || {
        let (mut x, mut y): (c_int, c_int) = (-1, -1);
        // SAFETY: both out-pointers are valid.
        let rc = unsafe { ffi::aclshmem_team_split_2d(parent, x_range, &mut x, &mut y) };
        (rc, x, y)
    });
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "aclshmem_team_split_2d failed ({rc})"
        )));
    }
    Ok((x, y))
}

#[pyfunction]
fn team_translate_pe(src_team: i32, src_pe: i32, dest_team: i32) -> i32 {
    // SAFETY: plain value arguments.
    unsafe { ffi::aclshmem_team_translate_pe(src_team, src_pe, dest_team) }
}

#[pyfunction]
fn team_destroy(py: Python<'_>, team: i32) {
    // SAFETY: plain value argument.
    nogil(py, move || unsafe { ffi::aclshmem_team_destroy(team) })
}

#[pyfunction]
fn aclshmem_team_get_config(team: i32) -> PyResult<TeamConfig> {
    let mut c = abi::TeamConfig {
        version: 0,
        num_contexts: 0,
        uniqueid: 0,
        padding: [0; abi::TEAM_CONFIG_PADDING],
    };
    // SAFETY: `c` is a valid out-pointer.
    let rc = unsafe { ffi::aclshmem_team_get_config(team, &mut c) };
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "aclshmem_team_get_config failed ({rc})"
        )));
    }
    Ok(TeamConfig {
        num_contexts: c.num_contexts,
    })
}

// ---------------------------------------------------------------------------------------------
// RMA, signals, streams

macro_rules! mem_fns {
    ($($name:ident),*) => {$(
        #[pyfunction]
        fn $name(py: Python<'_>, dst: usize, src: usize, elem_size: usize, pe: i32) {
            // SAFETY: the library validates the symmetric address and the PE; the local buffer is
            // the caller's responsibility, as in C.
            nogil_if(py, elem_size, move || unsafe { ffi::$name(p(dst), p(src), elem_size, pe) })
        }
    )*};
}
mem_fns!(
    aclshmem_putmem,
    aclshmem_getmem,
    aclshmem_putmem_nbi,
    aclshmem_getmem_nbi
);

macro_rules! mem_signal_fns {
    ($($name:ident),*) => {$(
        #[pyfunction]
        #[allow(clippy::too_many_arguments)]
        fn $name(py: Python<'_>, dst: usize, src: usize, elem_size: usize, sig: usize, signal: i32, sig_op: i32, pe: i32) {
            // SAFETY: as for putmem; the signal address is validated by the library.
            nogil(py, move || unsafe { ffi::$name(p(dst), p(src), elem_size, p(sig), signal, sig_op, pe) })
        }
    )*};
}
mem_signal_fns!(aclshmemx_putmem_signal, aclshmemx_putmem_signal_nbi);

#[pyfunction]
fn aclshmemx_putmem_on_stream(
    py: Python<'_>,
    dst: usize,
    src: usize,
    elem_size: usize,
    pe: i32,
    stream: usize,
) {
    // SAFETY: as for putmem; the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_putmem_on_stream(p(dst), p(src), elem_size, pe, p(stream))
    })
}

#[pyfunction]
fn aclshmemx_getmem_on_stream(
    py: Python<'_>,
    dst: usize,
    src: usize,
    elem_size: usize,
    pe: i32,
    stream: usize,
) {
    // SAFETY: as for putmem; the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_getmem_on_stream(p(dst), p(src), elem_size, pe, p(stream))
    })
}

#[pyfunction]
fn aclshmemx_signal_op_on_stream(
    py: Python<'_>,
    sig_addr: usize,
    signal: i32,
    sig_op: i32,
    pe: i32,
    stream: usize,
) {
    // SAFETY: the library validates the signal address; the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_signal_op_on_stream(sig_addr as *mut i32, signal, sig_op, pe, p(stream))
    })
}

#[pyfunction]
fn aclshmemx_signal_wait_until_on_stream(
    py: Python<'_>,
    sig_addr: usize,
    cmp: i32,
    cmp_val: i32,
    stream: usize,
) {
    // SAFETY: the library validates the signal address; the stream is an ACL handle or 0.
    nogil(py, move || unsafe {
        ffi::aclshmemx_signal_wait_until_on_stream(sig_addr as *mut i32, cmp, cmp_val, p(stream))
    })
}

#[pyfunction]
fn aclshmemx_quiet_on_stream(py: Python<'_>, stream: usize) {
    // SAFETY: the stream is an ACL handle or 0.
    nogil(py, move || unsafe { ffi::aclshmemx_quiet_on_stream(p(stream)) })
}

/// Blocks until the local signal word at `sig_addr` satisfies `cmp` against `cmp_val`; Ctrl-C
/// (any exception a signal handler raises) ends the wait ([`wait`]: it polls the word with
/// `aclshmem_int32_test`, a signal word being a 32-bit word).
#[pyfunction]
fn aclshmem_signal_wait_until(py: Python<'_>, sig_addr: usize, cmp: i32, cmp_val: i32) -> PyResult<()> {
    if sig_addr == 0 {
        return Err(PyValueError::new_err("sig_addr must not be 0"));
    }
    let test = |c| {
        let mut r: c_int = 0;
        // SAFETY: the library checks the word (in a heap, aligned) before it reads it; `r` is a
        // valid out-pointer.
        unsafe { typed::c_wait::aclshmem_int32_test(sig_addr as *mut i32, c, cmp_val, &mut r) };
        r == 1
    };
    // SAFETY: non-null; the library checks that the word lies in the symmetric heap.
    let c_wait = move || unsafe { ffi::aclshmem_signal_wait_until(sig_addr as *mut i32, cmp, cmp_val) };
    wait::one(py, wait::aligned::<i32>(sig_addr), cmp, test, c_wait)
}

/// Extension (not in the original's binding, which has none): `aclshmem_quiet`.
#[pyfunction]
fn aclshmem_quiet(py: Python<'_>) {
    // SAFETY: no arguments.
    nogil(py, || unsafe { ffi::aclshmem_quiet() })
}

/// Extension: `aclshmem_barrier_all`.
#[pyfunction]
fn aclshmem_barrier_all(py: Python<'_>) {
    // SAFETY: no arguments.
    nogil(py, || unsafe { ffi::aclshmem_barrier_all() })
}

// ---------------------------------------------------------------------------------------------
// enums

/// Creates the int-like enums as `enum.IntEnum` classes of this module.
fn add_enums(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let int_enum = py.import("enum")?.getattr("IntEnum")?;
    let enums: &[(&str, &[(&str, i64)])] = &[
        (
            "OpEngineType",
            &[
                ("MTE", abi::ACLSHMEM_DATA_OP_MTE as i64),
                ("SDMA", abi::ACLSHMEM_DATA_OP_SDMA as i64),
                ("ROCE", abi::ACLSHMEM_DATA_OP_ROCE as i64),
                ("UDMA", abi::ACLSHMEM_DATA_OP_UDMA as i64),
            ],
        ),
        (
            "InitStatus",
            &[
                ("NOT_INITIALIZED", 0),
                ("SHM_CREATED", 1),
                ("INITIALIZED", 2),
                ("INVALID", i32::MAX as i64),
            ],
        ),
        (
            "InitMode",
            &[
                ("DEFAULT", abi::ACLSHMEMX_INIT_WITH_DEFAULT as i64),
                ("MPI", abi::ACLSHMEMX_INIT_WITH_MPI as i64),
                ("UNIQUEID", abi::ACLSHMEMX_INIT_WITH_UNIQUEID as i64),
            ],
        ),
        ("SignalOp", &[("SIGNAL_SET", 0), ("SIGNAL_ADD", 1)]),
        (
            "CmpOp",
            &[
                ("CMP_EQ", 0),
                ("CMP_NE", 1),
                ("CMP_GT", 2),
                ("CMP_GE", 3),
                ("CMP_LT", 4),
                ("CMP_LE", 5),
            ],
        ),
        (
            "MemType",
            &[
                ("HOST_SIDE", abi::HOST_SIDE as i64),
                ("DEVICE_SIDE", abi::DEVICE_SIDE as i64),
            ],
        ),
    ];
    for (name, members) in enums {
        let kw = PyDict::new(py);
        kw.set_item("module", "shmem._pyshmem")?;
        let items: Vec<(&str, i64)> = members.to_vec();
        let cls = int_enum.call((*name, items), Some(&kw))?;
        m.add(*name, cls)?;
    }
    Ok(())
}

/// `ENUM(value)` of this module.
fn enum_value(py: Python<'_>, name: &str, v: i64) -> PyResult<PyObject> {
    let m = py.import("shmem._pyshmem")?;
    Ok(m.getattr(name)?.call1(PyTuple::new(py, [v])?)?.unbind())
}

// ---------------------------------------------------------------------------------------------

#[pymodule]
fn _pyshmem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<OptionalAttr>()?;
    m.add_class::<InitAttr>()?;
    m.add_class::<TeamConfig>()?;
    m.add_class::<UniqueId>()?;
    add_enums(m)?;
    m.add("UNIQUE_ID_LEN", UID_LEN)?;
    // from the start of the interpreter's exit on, the library's threads log to stderr
    let release = wrap_pyfunction!(_release_callbacks, m)?;
    m.py().import("atexit")?.call_method1("register", (release,))?;
    m.add_function(wrap_pyfunction!(aclshmem_init, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_init_using_unique_id, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_init_with_mpi, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_attr_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(_local_mem_size_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_get_unique_id, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_finalize, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_set_qp_num, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_init_status, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_info_get_version, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_info_get_name, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_global_exit, m)?)?;
    m.add_function(wrap_pyfunction!(get_ffts_config, m)?)?;
    m.add_function(wrap_pyfunction!(set_conf_store_tls_key, m)?)?;
    m.add_function(wrap_pyfunction!(set_conf_store_tls, m)?)?;
    m.add_function(wrap_pyfunction!(set_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(set_extern_logger, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_malloc, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_calloc, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_align, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_free, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_ptr, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_get_heap_base, m)?)?;
    m.add_function(wrap_pyfunction!(my_pe, m)?)?;
    m.add_function(wrap_pyfunction!(pe_count, m)?)?;
    m.add_function(wrap_pyfunction!(team_my_pe, m)?)?;
    m.add_function(wrap_pyfunction!(team_n_pes, m)?)?;
    m.add_function(wrap_pyfunction!(team_split_2d, m)?)?;
    m.add_function(wrap_pyfunction!(team_translate_pe, m)?)?;
    m.add_function(wrap_pyfunction!(team_destroy, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_team_get_config, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_putmem, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_getmem, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_putmem_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_getmem_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_putmem_signal, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_putmem_signal_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_putmem_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_getmem_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_signal_op_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_signal_wait_until_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmemx_quiet_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_signal_wait_until, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_quiet, m)?)?;
    m.add_function(wrap_pyfunction!(aclshmem_barrier_all, m)?)?;
    typed::register(m)?;
    buffer::register(m)?;
    newer::register(m)?;
    Ok(())
}

//! `Buffer(addr, length)` of `shmem.core` with the buffer protocol (a writable 1-D view of bytes,
//! so `memoryview(buf)`, `numpy.frombuffer(buf, ...)` and `torch.frombuffer(buf, ...)` are zero
//! copy), and the exceptions `AclshmemError` / `AclshmemInvalid`.
//!
//! The buffer protocol is why this module is built for one CPython version (no abi3): the limited
//! API has it only from Python 3.11, and the package supports 3.9.

use std::ffi::{c_int, c_void};

use pyo3::create_exception;
use pyo3::exceptions::{PyBufferError, PyException};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyTuple};

create_exception!(_pyshmem, AclshmemError, PyException, "An aclshmem call failed.");
create_exception!(
    _pyshmem,
    AclshmemInvalid,
    AclshmemError,
    "An invalid argument for an aclshmem call."
);

/// `length` bytes at `addr` (normally symmetric memory). Does not own the memory.
#[pyclass(module = "shmem.core.utils", subclass, weakref)]
pub struct Buffer {
    #[pyo3(get)]
    addr: usize,
    #[pyo3(get)]
    length: usize,
}

#[pymethods]
impl Buffer {
    /// `addr` must be an `int` (not a `bool`) in `1..=INTPTR_MAX`, `length` an `int` (not a `bool`)
    /// in `1..=SIZE_MAX`; anything else raises `AclshmemInvalid`. Further arguments are for
    /// subclasses (`shmem.core.Buffer` takes a `mem_type`).
    #[new]
    #[pyo3(signature = (addr, length, *_args, **_kwargs))]
    fn new(
        addr: &Bound<'_, PyAny>,
        length: &Bound<'_, PyAny>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let addr = int_arg(addr, "addr", 1, isize::MAX as u128)?;
        let length = int_arg(length, "length", 1, usize::MAX as u128)?;
        Ok(Buffer {
            addr: addr as usize,
            length: length as usize,
        })
    }

    fn __len__(&self) -> usize {
        self.length
    }

    fn __repr__(&self) -> String {
        format!("Buffer(addr=0x{:x}, length={})", self.addr, self.length)
    }

    /// # Safety
    /// Called by CPython with a valid `view` (the buffer protocol).
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        // a `shmem.core.Buffer` whose memory was freed (its own allocation, or that of its owner
        // or of the array it holds) exports nothing: the address may be a newer block's by now
        if let Ok(freed) = slf.as_any().getattr(intern!(slf.py(), "release_called"))
            && freed.is_truthy()?
        {
            return Err(AclshmemInvalid::new_err("the Buffer's memory was freed"));
        }
        let (addr, len) = {
            let b = slf.borrow();
            (b.addr, b.length)
        };
        if len > isize::MAX as usize {
            return Err(PyBufferError::new_err(format!(
                "a Buffer of {len} bytes is longer than a memoryview can be (isize::MAX)"
            )));
        }
        // SAFETY: `view` is non-null and CPython hands us the struct to fill; the memory is the
        // caller's symmetric allocation (alive until freed, documented in shmem.core).
        unsafe {
            (*view).obj = slf.into_any().into_ptr();
            (*view).buf = addr as *mut c_void;
            (*view).len = len as isize;
            (*view).readonly = 0;
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                c"B".as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    /// # Safety
    /// Called by CPython; nothing to release (the view's `obj` reference is dropped by CPython).
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

/// `value` as an integer in `min..=max`: an `int`, not a `bool`, else `AclshmemInvalid`.
fn int_arg(value: &Bound<'_, PyAny>, name: &str, min: u128, max: u128) -> PyResult<u128> {
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(AclshmemInvalid::new_err(format!(
            "Buffer {name} must be an int, got {}",
            value.get_type().name()?
        )));
    }
    match value.extract::<u128>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(AclshmemInvalid::new_err(format!(
            "Buffer {name} must satisfy {min} <= {name} <= {max}, got {value}"
        ))),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Buffer>()?;
    m.add("AclshmemError", py.get_type::<AclshmemError>())?;
    m.add("AclshmemInvalid", py.get_type::<AclshmemInvalid>())?;
    Ok(())
}

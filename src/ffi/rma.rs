//! C entry points of `host/data_plane/shmem_host_rma.h` (spec 8.3).

use std::ffi::{c_int, c_void};

use super::guard;
use crate::error::Error;
use crate::runtime;

/// Address of the object `ptr` (a symmetric address of the calling PE, either heap) in PE `pe`'s
/// copy, usable with ordinary loads and stores: `aclshmem_ptr(p, my_pe) == p`. NULL when not
/// initialised, when `pe` is outside [0, n_pes), when `ptr` is not inside a symmetric heap, or when
/// `pe` runs on another node. Not collective.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_ptr(ptr: *mut c_void, pe: c_int) -> *mut c_void {
    guard("aclshmem_ptr", || {
        let inst = runtime::current()?;
        if pe < 0 || pe as usize >= inst.n_pes {
            return Err(Error::InvalidParam(format!(
                "pe {pe} is outside [0, {})",
                inst.n_pes
            )));
        }
        let (heap, off) = inst
            .locate(ptr as usize, 1)
            .ok_or_else(|| Error::InvalidParam(format!("{ptr:p} is not inside the symmetric heap")))?;
        Ok(heap
            .peer_addr(off, pe as usize)
            .map_or(std::ptr::null_mut(), |p| p.cast()))
    })
}

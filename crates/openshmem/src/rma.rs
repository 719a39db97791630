//! Remote memory access (OpenSHMEM 1.5 chapter 9.6): the helpers behind the generated typed, sized
//! and `mem` families of `typed.rs`. Each resolves the context's PE numbering and calls one
//! function of `aclshmem_core::rma`; element counts become byte counts with an overflow check.

use std::ffi::c_int;

use crate::ctx::{self, shmem_ctx_t};
use aclshmem_core::error::Result;
use aclshmem_core::rma as core;

/// Contiguous put of `n` elements of `T` (blocking, or `_nbi`).
///
/// # Safety
/// `src` must be readable for `n` elements (and stay unchanged until the next quiet for `nbi`).
#[inline(always)]
pub(crate) unsafe fn put<T>(
    c: shmem_ctx_t,
    dest: *mut T,
    src: *const T,
    n: usize,
    pe: c_int,
    nbi: bool,
) -> Result<()> {
    let pe = ctx::pe(c, pe)?;
    let len = core::bytes(n, std::mem::size_of::<T>())?;
    // SAFETY: forwarded.
    unsafe {
        if nbi {
            core::put_nbi(dest.cast(), src.cast(), len, pe)
        } else {
            core::put_local(dest.cast(), src.cast(), len, pe)
        }
    }
}

/// Contiguous get of `n` elements of `T`.
///
/// # Safety
/// `dest` must be writable for `n` elements.
#[inline(always)]
pub(crate) unsafe fn get<T>(
    c: shmem_ctx_t,
    dest: *mut T,
    src: *const T,
    n: usize,
    pe: c_int,
    nbi: bool,
) -> Result<()> {
    let pe = ctx::pe(c, pe)?;
    let len = core::bytes(n, std::mem::size_of::<T>())?;
    // SAFETY: forwarded.
    unsafe {
        if nbi {
            core::get_nbi(dest.cast(), src.cast(), len, pe)
        } else {
            core::get(dest.cast(), src.cast(), len, pe)
        }
    }
}

/// Strided put (strides in elements).
///
/// # Safety
/// Every source element must be readable.
#[inline]
pub(crate) unsafe fn iput<T>(
    c: shmem_ctx_t,
    dest: *mut T,
    src: *const T,
    dst: isize,
    sst: isize,
    n: usize,
    pe: c_int,
) -> Result<()> {
    let pe = ctx::pe(c, pe)?;
    // SAFETY: forwarded.
    unsafe { core::iput_local(dest.cast(), src.cast(), std::mem::size_of::<T>(), dst, sst, n, pe) }
}

/// Strided get (strides in elements).
///
/// # Safety
/// Every destination element must be writable.
#[inline]
pub(crate) unsafe fn iget<T>(
    c: shmem_ctx_t,
    dest: *mut T,
    src: *const T,
    dst: isize,
    sst: isize,
    n: usize,
    pe: c_int,
) -> Result<()> {
    let pe = ctx::pe(c, pe)?;
    // SAFETY: forwarded.
    unsafe { core::iget(dest.cast(), src.cast(), std::mem::size_of::<T>(), dst, sst, n, pe) }
}

/// Single-element put.
#[inline(always)]
pub(crate) fn p<T: Copy>(c: shmem_ctx_t, dest: *mut T, value: T, pe: c_int) -> Result<()> {
    core::p_local(dest, value, ctx::pe(c, pe)?)
}

/// Single-element get.
#[inline(always)]
pub(crate) fn g<T: Copy + Default>(c: shmem_ctx_t, src: *const T, pe: c_int) -> Result<T> {
    core::g(src, ctx::pe(c, pe)?)
}

/// Completes every put, AMO and signal this PE issued (all contexts): they are visible at their
/// targets when it returns.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_quiet() {
    crate::guard("shmem_quiet", (), core::quiet)
}

/// Orders this PE's puts, AMOs and signals to each PE: those issued before it are delivered before
/// those issued after it.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_fence() {
    crate::guard("shmem_fence", (), core::fence)
}

//! C entry points of `host/mem/shmem_host_heap.h` (spec 8.2).
//!
//! The `aclshmemx_*` forms take a `mem_type` with a C++ default argument, so their declarations are
//! written out in the header fragment cbindgen/trailer.h; the others are generated from here.

use std::ffi::c_void;

use super::guard;
use super::types::aclshmem_mem_type_t;
use aclshmem_core::HeapKind;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime::{self, AllocRequest, BootstrapAgreement};

fn allocate(kind: HeapKind, size: u64, align: u64, zero: bool) -> Result<*mut c_void> {
    let inst = runtime::current()?;
    Ok(inst
        .allocate(
            AllocRequest {
                kind,
                size,
                align,
                zero,
            },
            &BootstrapAgreement,
        )?
        .map_or(std::ptr::null_mut(), |p| p.cast()))
}

/// calloc's argument rule: zero or overflowing arguments return NULL at once, without the
/// collective step (as the original).
fn calloc_size(kind: HeapKind, nmemb: usize, size: usize) -> Result<Option<u64>> {
    let heap_size = runtime::current()?.heap_size();
    let _ = kind;
    if nmemb == 0 || size == 0 || nmemb > heap_size / size {
        return Ok(None);
    }
    Ok(Some((nmemb * size) as u64))
}

fn align_arg(alignment: usize) -> Result<u64> {
    if alignment > aclshmem_core::BASE_ALIGN {
        return Err(Error::InvalidParam(format!(
            "alignment {alignment} exceeds 1 GiB (ACLSHMEM_HEAP_ALIGNMENT_SIZE)"
        )));
    }
    if alignment == 0 || !alignment.is_power_of_two() {
        return Err(Error::InvalidParam(format!(
            "alignment {alignment} is not a power of two"
        )));
    }
    Ok(alignment as u64)
}

fn free_in(ptr: *mut c_void, kind: Option<HeapKind>) -> Result<()> {
    let inst = runtime::current()?;
    if ptr.is_null() {
        return Ok(());
    }
    inst.free(ptr as usize, kind, &BootstrapAgreement)
}

/// Allocates `size` bytes in the symmetric (DEVICE_SIDE) heap. Collective: every PE must call it in
/// the same order with the same size. Returns NULL (on every PE) when not initialised, for size 0,
/// when no block fits, or when PEs asked for different sizes (logged with every size). Memory is not
/// initialised. 16-byte aligned.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_malloc(size: usize) -> *mut c_void {
    guard("aclshmem_malloc", || {
        allocate(HeapKind::Device, size as u64, 16, false)
    })
}

/// Like aclshmem_malloc for `nmemb * size` bytes, zero-filled on every PE before it returns.
/// Zero or overflowing arguments return NULL at once without the collective step.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_calloc(nmemb: usize, size: usize) -> *mut c_void {
    guard("aclshmem_calloc", || {
        match calloc_size(HeapKind::Device, nmemb, size)? {
            Some(total) => allocate(HeapKind::Device, total, 16, true),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// Like aclshmem_malloc with the address a multiple of `alignment` (a non-zero power of two up to
/// 1 GiB; otherwise NULL after the collective step).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_align(alignment: usize, size: usize) -> *mut c_void {
    guard("aclshmem_align", || {
        allocate_aligned(HeapKind::Device, alignment, size)
    })
}

fn allocate_aligned(kind: HeapKind, alignment: usize, size: usize) -> Result<*mut c_void> {
    match align_arg(alignment) {
        Ok(align) => allocate(kind, size as u64, align, false),
        Err(e) => {
            // the collective step still happens, so every PE counts the same calls
            allocate(kind, 0, 16, false)?;
            Err(e)
        }
    }
}

/// Frees a block of either symmetric heap. NULL: local no-op. Otherwise collective (a barrier
/// first). A pointer that is not the start of a live block (interior pointer, double free, not in
/// the heap) is logged and nothing is freed.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_free(ptr: *mut c_void) {
    guard("aclshmem_free", || free_in(ptr, None))
}

/// aclshmem_malloc on the heap selected by `mem_type` (HOST_SIDE or DEVICE_SIDE; C++ default
/// DEVICE_SIDE). The HOST_SIDE heap is created by its first allocation (collective).
///
/// (Declared with its C++ default argument in the header fragment cbindgen/trailer.h.)
///
/// cbindgen:ignore
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_malloc(size: usize, mem_type: aclshmem_mem_type_t) -> *mut c_void {
    guard("aclshmemx_malloc", || {
        allocate(HeapKind::from_c(mem_type)?, size as u64, 16, false)
    })
}

/// aclshmem_calloc on the heap selected by `mem_type`.
///
/// (Declared with its C++ default argument in the header fragment cbindgen/trailer.h.)
///
/// cbindgen:ignore
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_calloc(count: usize, size: usize, mem_type: aclshmem_mem_type_t) -> *mut c_void {
    guard("aclshmemx_calloc", || {
        let kind = HeapKind::from_c(mem_type)?;
        match calloc_size(kind, count, size)? {
            Some(total) => allocate(kind, total, 16, true),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// aclshmem_align on the heap selected by `mem_type`.
///
/// (Declared with its C++ default argument in the header fragment cbindgen/trailer.h.)
///
/// cbindgen:ignore
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_align(
    alignment: usize,
    size: usize,
    mem_type: aclshmem_mem_type_t,
) -> *mut c_void {
    guard("aclshmemx_align", || {
        allocate_aligned(HeapKind::from_c(mem_type)?, alignment, size)
    })
}

/// aclshmem_free on the heap selected by `mem_type`; a pointer of the other heap is logged and
/// not freed.
///
/// (Declared with its C++ default argument in the header fragment cbindgen/trailer.h.)
///
/// cbindgen:ignore
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_free(ptr: *mut c_void, mem_type: aclshmem_mem_type_t) {
    guard("aclshmemx_free", || {
        free_in(ptr, Some(HeapKind::from_c(mem_type)?))
    })
}

/// This PE's base address of the heap selected by `mem_type`; NULL when not initialised or when
/// that heap does not exist yet (HOST_SIDE before its first allocation).
///
/// (Declared with its C++ default argument in the header fragment cbindgen/trailer.h.)
///
/// cbindgen:ignore
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_get_heap_base(mem_type: aclshmem_mem_type_t) -> *mut c_void {
    guard("aclshmemx_get_heap_base", || {
        let kind = HeapKind::from_c(mem_type)?;
        let inst = runtime::current()?;
        Ok(inst.heap(kind).map_or(std::ptr::null_mut(), |h| h.base().cast()))
    })
}

/// The symmetric-heap address of `ptr`, an address inside one of the buffers given to
/// `aclshmemx_init_attr_with_buffers` (the same offset into the buffer's part of the heap); NULL
/// (logged) for any other address, before init and after finalize. Not collective.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_get_buffer_ptr(ptr: *mut c_void) -> *mut c_void {
    guard("aclshmemx_get_buffer_ptr", || {
        let inst = runtime::current()?;
        inst.buffer_ptr(ptr as usize).map(|p| p.cast()).ok_or_else(|| {
            Error::InvalidParam(format!(
                "{ptr:p} is not inside a buffer given to aclshmemx_init_attr_with_buffers"
            ))
        })
    })
}

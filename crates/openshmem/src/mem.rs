//! Memory management (OpenSHMEM 1.5 chapter 9.3): the symmetric heap of the core (its device-side
//! heap, the one the aclshmem API's `aclshmem_malloc` uses too). Every routine that acts is
//! collective: every PE calls it in the same order with the same arguments; PEs that ask for
//! different sizes all get NULL (logged). Those that perform no action (a size of 0, freeing
//! NULL) return at once without a barrier, as the specification says. Failures return NULL, as the
//! specification says, and never end the job.

use std::collections::HashMap;
use std::ffi::{c_long, c_void};
use std::sync::Mutex;

use crate::guard_soft;
use aclshmem_core::HeapKind;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime::{self, AllocRequest, WorldAgreement};

/// Sizes of the blocks this surface allocated (shmem_realloc copies the old contents).
static SIZES: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn sizes<R>(f: impl FnOnce(&mut HashMap<usize, usize>) -> R) -> R {
    f(SIZES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new))
}

fn allocate(size: usize, align: usize, zero: bool) -> Result<*mut c_void> {
    if size == 0 {
        // no action: no barrier either (OpenSHMEM 1.5, 9.3)
        runtime::current()?;
        return Ok(std::ptr::null_mut());
    }
    agreed_allocation(size, align, zero)
}

/// The collective allocation step of the core (size 0: the step alone, nothing allocated).
fn agreed_allocation(size: usize, align: usize, zero: bool) -> Result<*mut c_void> {
    let inst = runtime::current()?;
    let p = inst
        .allocate(
            AllocRequest {
                kind: HeapKind::Device,
                size: size as u64,
                align: align as u64,
                zero,
            },
            &WorldAgreement,
        )?
        .map_or(std::ptr::null_mut(), |p| p.cast::<c_void>());
    if !p.is_null() {
        sizes(|m| m.insert(p as usize, size));
    }
    Ok(p)
}

fn free(ptr: *mut c_void) -> Result<()> {
    let inst = runtime::current()?;
    if ptr.is_null() {
        // no action, and so no barrier (OpenSHMEM 1.5, 9.3.2)
        return Ok(());
    }
    sizes(|m| m.remove(&(ptr as usize)));
    inst.free(ptr as usize, Some(HeapKind::Device), &WorldAgreement)
}

/// Allocates `size` bytes of symmetric memory (16-byte aligned). Collective. NULL for size 0 (at
/// once, no barrier), when no block fits, or when the PEs asked for different sizes.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    guard_soft("shmem_malloc", std::ptr::null_mut(), || allocate(size, 16, false))
}

/// [`shmem_malloc`] with hints (`SHMEM_MALLOC_ATOMICS_REMOTE`, `SHMEM_MALLOC_SIGNAL_REMOTE`): the
/// hints are accepted and do not change the placement (every block is equally fast here).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc_with_hints(size: usize, hints: c_long) -> *mut c_void {
    let _ = hints;
    guard_soft("shmem_malloc_with_hints", std::ptr::null_mut(), || {
        allocate(size, 16, false)
    })
}

/// `count * size` zero-filled bytes of symmetric memory. Collective. NULL when either is 0 or the
/// product overflows.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    guard_soft("shmem_calloc", std::ptr::null_mut(), || {
        match count.checked_mul(size) {
            Some(0) | None => Ok(std::ptr::null_mut()),
            Some(n) => allocate(n, 16, true),
        }
    })
}

/// `size` bytes aligned to `alignment` (a power of two). Collective.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    guard_soft("shmem_align", std::ptr::null_mut(), || {
        if size == 0 {
            // no action, whatever the alignment
            return Ok(std::ptr::null_mut());
        }
        if !alignment.is_power_of_two() || alignment > aclshmem_core::BASE_ALIGN {
            // the collective step still happens, so every PE counts the same calls
            agreed_allocation(0, 16, false)?;
            return Err(Error::InvalidParam(format!(
                "alignment {alignment} is not a power of two up to 1 GiB"
            )));
        }
        allocate(size, alignment.max(16), false)
    })
}

/// Resizes a symmetric block, keeping `min(old, new)` bytes of its contents. Collective. In place
/// when it can (a smaller size; a larger one when the space right after the block is free), else
/// a new block, the contents copied, the old one freed (a barrier before). `ptr` NULL:
/// [`shmem_malloc`]; `size` 0: frees `ptr` and returns NULL. When no new block fits, returns NULL
/// and `ptr` stays valid.
///
/// # Safety
/// `ptr` must be NULL or a block returned by this surface's allocation routines and not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // a pointer that is no block is the program's error, handled as `shmem_free`'s (a message, and
    // the job ends unless errors are to continue); a failing allocation returns NULL
    if !ptr.is_null() && !crate::guard("shmem_realloc", false, || block_size(ptr).map(|_| true)) {
        return std::ptr::null_mut();
    }
    guard_soft("shmem_realloc", std::ptr::null_mut(), || {
        if ptr.is_null() {
            return allocate(size, 16, false);
        }
        if size == 0 {
            free(ptr)?;
            return Ok(std::ptr::null_mut());
        }
        let old = block_size(ptr)?;
        // in place when it can (shrinking; growing into free space right after the block): a
        // block of most of the heap can then grow, where a new block must fit beside the old one
        let inst = runtime::current()?;
        if inst.resize(ptr as usize, size as u64, &WorldAgreement)? {
            sizes(|m| m.insert(ptr as usize, size));
            return Ok(ptr);
        }
        let new = allocate(size, 16, false)?;
        if new.is_null() {
            return Ok(new);
        }
        // SAFETY: both blocks are live, distinct and at least min(old, size) bytes long.
        unsafe { std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), new.cast::<u8>(), old.min(size)) };
        free(ptr)?;
        Ok(new)
    })
}

/// The size of the live block `ptr` starts, or an error naming it.
fn block_size(ptr: *mut c_void) -> Result<usize> {
    sizes(|m| m.get(&(ptr as usize)).copied())
        .ok_or_else(|| Error::InvalidParam(format!("ptr {ptr:p} is not a block of shmem_malloc and friends")))
}

/// Frees a symmetric block (collective: a barrier first). NULL: nothing, not even a barrier.
///
/// # Safety
/// `ptr` must be NULL or a live symmetric block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_free(ptr: *mut c_void) {
    crate::guard("shmem_free", (), || free(ptr))
}

/// Deprecated: [`shmem_malloc`].
#[unsafe(no_mangle)]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    shmem_malloc(size)
}

/// Deprecated: [`shmem_free`].
///
/// # Safety
/// As for [`shmem_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shfree(ptr: *mut c_void) {
    // SAFETY: forwarded.
    unsafe { shmem_free(ptr) }
}

/// Deprecated: [`shmem_realloc`].
///
/// # Safety
/// As for [`shmem_realloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: forwarded.
    unsafe { shmem_realloc(ptr, size) }
}

/// Deprecated: [`shmem_align`].
#[unsafe(no_mangle)]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    shmem_align(alignment, size)
}

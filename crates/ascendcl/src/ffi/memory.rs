//! Memory: `aclrtMalloc`, `aclrtMallocHost`, `aclrtFree`, `aclrtFreeHost`, `aclrtGetMemInfo`,
//! `aclrtMemcpy[Async]`, `aclrtMemset[Async]`. "Device" memory is host memory, so every
//! `aclrtMemcpyKind` direction is a plain CPU copy and the kind is checked only for range.
#![allow(non_snake_case)]

use std::ffi::{c_int, c_void};

use super::{SendPtr, from_c, guard_or, require, status, write_out};
use crate::device;
use crate::error::{AclError, Error};
use crate::memory::{self, Copy, Kind};

/// Number of `aclrtMemAttr` values (0..=17).
const MEM_ATTRS: i32 = 18;

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);` — `size`
/// zero-filled bytes of "device" memory on the current device, 64-byte aligned; every policy value
/// is accepted. NULL/`size == 0` → 100000; no current device → 107002; out of memory → 207001.
///
/// # Safety
/// `devPtr` must be NULL or valid for a write of `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, _policy: i32) -> AclError {
    status("aclrtMalloc", || {
        require(devPtr, "devPtr")?;
        if size == 0 {
            return Err(Error::invalid_param("size is 0"));
        }
        let dev = device::current_device()?;
        let p = memory::allocate(size, Kind::Device(dev))?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(devPtr, "devPtr", p.cast()) }
    })
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size);` — `size` zero-filled bytes of host
/// memory, 64-byte aligned. NULL/`size == 0` → 100000; out of memory → 207001.
///
/// # Safety
/// `hostPtr` must be NULL or valid for a write of `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> AclError {
    status("aclrtMallocHost", || {
        require(hostPtr, "hostPtr")?;
        let p = memory::allocate(size, Kind::Host)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(hostPtr, "hostPtr", p.cast()) }
    })
}

/// `aclError aclrtFree(void *devPtr);` — frees `aclrtMalloc` memory at once (no implicit sync).
/// NULL → 100000; not a live `aclrtMalloc` block → `ACL_ERROR_RT_MEMORY_FREE` (207002).
///
/// # Safety
/// No queued or running task may still use the block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(devPtr: *mut c_void) -> AclError {
    status("aclrtFree", || memory::free(devPtr.addr(), false))
}

/// Shim extension (`acl/acl_shim.h`), `int aclshimDeviceRangeIsLive(const void *ptr, size_t len);`:
/// 1 when `[ptr, ptr + len)` lies inside a live `aclrtMalloc` block (the bytes requested), else 0.
/// libaclshmem asks it (resolved at run time) before accepting local device memory as the signal
/// word of a put-with-signal to the calling PE itself, as the original's device path does.
#[unsafe(no_mangle)]
pub extern "C" fn aclshimDeviceRangeIsLive(ptr: *const c_void, len: usize) -> c_int {
    guard_or("aclshimDeviceRangeIsLive", 0, || {
        Ok(c_int::from(memory::device_range_is_live(ptr.addr(), len)))
    })
}

/// `aclError aclrtFreeHost(void *hostPtr);` — frees `aclrtMallocHost` memory. NULL → 100000; not a
/// live `aclrtMallocHost` block → `ACL_ERROR_RT_MEMORY_FREE` (207002).
///
/// # Safety
/// No queued or running task may still use the block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(hostPtr: *mut c_void) -> AclError {
    status("aclrtFreeHost", || memory::free(hostPtr.addr(), true))
}

/// `aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);` — every attribute
/// reports the current device's figures: `total` = `ACL_SHIM_DEVICE_MEM_SIZE`, `free` = total minus
/// live `aclrtMalloc` bytes. NULL or attribute outside 0..=17 → 100000; no current device → 107002.
///
/// # Safety
/// `free` and `total` must be NULL or valid for a write of `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(attr: i32, free: *mut usize, total: *mut usize) -> AclError {
    status("aclrtGetMemInfo", || {
        require(free, "free")?;
        require(total, "total")?;
        if !(0..MEM_ATTRS).contains(&attr) {
            return Err(Error::invalid_param(format!("invalid aclrtMemAttr {attr}")));
        }
        let (f, t) = memory::mem_info(device::current_device()?);
        // SAFETY: both valid for writes per this function's contract.
        unsafe {
            write_out(free, "free", f)?;
            write_out(total, "total", t)
        }
    })
}

/// `aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);`
/// — synchronous copy in the calling thread (not ordered after queued stream work). `count == 0` →
/// success; NULL → 100000; kind outside 0..=5 → 100000; `count > destMax` → 107000.
///
/// # Safety
/// `src` must be readable and `dst` writable for `count` bytes (`destMax` must not exceed `dst`'s size).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> AclError {
    status("aclrtMemcpy", || {
        if let Copy::Bytes(n) = memory::check_copy(dst.cast(), destMax, src.cast(), count, kind)? {
            // SAFETY: readable/writable for `n == count` bytes per this function's contract.
            unsafe { memory::copy_bytes(dst.cast(), src.cast(), n) };
        }
        Ok(())
    })
}

/// `aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind, aclrtStream stream);` — the copy is queued on `stream` (NULL = default
/// stream); same parameter rules as `aclrtMemcpy`.
///
/// # Safety
/// As `aclrtMemcpy`, and both buffers must stay valid until the stream has run the copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: i32,
    stream: *mut c_void,
) -> AclError {
    status("aclrtMemcpyAsync", || {
        let Copy::Bytes(n) = memory::check_copy(dst.cast(), destMax, src.cast(), count, kind)? else {
            return Ok(());
        };
        let s = device::stream(from_c(stream))?;
        let (d, sp) = (SendPtr(dst), SendPtr(src.cast_mut()));
        s.enqueue_replayable(move || {
            // SAFETY: the caller keeps both buffers valid for `n` bytes until this task has run.
            unsafe { memory::copy_bytes(d.get().cast(), sp.get().cast(), n) };
            Ok(())
        })
    })
}

/// `aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);` — fills
/// `count` bytes with the low 8 bits of `value`, synchronously. `count == 0` → success; NULL →
/// 100000; `count > maxCount` → 107000; no current device → 107002.
///
/// # Safety
/// `devPtr` must be writable for `count` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count: usize,
) -> AclError {
    status("aclrtMemset", || {
        if let Copy::Bytes(n) = memory::check_set(devPtr.cast(), maxCount, count)? {
            device::current_context()?;
            // SAFETY: writable for `n == count` bytes per this function's contract.
            unsafe { memory::fill_bytes(devPtr.cast(), value, n) };
        }
        Ok(())
    })
}

/// `aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
/// aclrtStream stream);` — `aclrtMemset` queued on `stream` (NULL = default stream).
///
/// # Safety
/// `devPtr` must stay writable for `count` bytes until the stream has run the fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count: usize,
    stream: *mut c_void,
) -> AclError {
    status("aclrtMemsetAsync", || {
        let Copy::Bytes(n) = memory::check_set(devPtr.cast(), maxCount, count)? else {
            return Ok(());
        };
        let s = device::stream(from_c(stream))?;
        let d = SendPtr(devPtr);
        s.enqueue_replayable(move || {
            // SAFETY: the caller keeps the buffer writable for `n` bytes until this task has run.
            unsafe { memory::fill_bytes(d.get().cast(), value, n) };
            Ok(())
        })
    })
}

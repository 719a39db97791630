//! Devices and contexts: `aclrtSetDevice`, `aclrtResetDevice[Force]`, `aclrtGetDevice`,
//! `aclrtGetDeviceCount`, `aclrtGetSocName`, `aclrtGetRunMode`, `aclrtSynchronizeDevice[WithTimeout]`,
//! `aclrtGetDeviceInfo`, `aclGetDeviceCapability`, `aclrtCreateContext`, `aclrtDestroyContext`, `aclrtSetCurrentContext`, `aclrtGetCurrentContext`.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};

use super::{from_c, guard_or, require, status, timeout_ms, to_c, write_out};
use crate::error::AclError;
use crate::{config, device, device_info};

/// `aclrtRunMode` value `ACL_HOST`.
pub const ACL_HOST: i32 = 1;

/// `aclError aclrtSetDevice(int32_t deviceId);` — makes `deviceId` (0 ≤ id < device count) the
/// calling thread's current device, creating its default context on first use; counted per device.
/// Out of range → `ACL_ERROR_RT_INVALID_DEVICEID` (107001).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(deviceId: i32) -> AclError {
    status("aclrtSetDevice", || device::set_device(deviceId))
}

/// `aclError aclrtResetDevice(int32_t deviceId);` — drops one reference; at zero the device's default
/// context and its streams are drained and destroyed. No reference left →
/// `ACL_ERROR_RT_CONTEXT_NULL` (107002).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(deviceId: i32) -> AclError {
    status("aclrtResetDevice", || device::reset_device(deviceId, false))
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId);` — drops every reference at once.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceForce(deviceId: i32) -> AclError {
    status("aclrtResetDeviceForce", || device::reset_device(deviceId, true))
}

/// `aclError aclrtGetDevice(int32_t *deviceId);` — the calling thread's current device.
/// None → `ACL_ERROR_RT_CONTEXT_NULL` (107002); NULL → `ACL_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `deviceId` must be NULL or valid for a write of `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(deviceId: *mut i32) -> AclError {
    status("aclrtGetDevice", || {
        require(deviceId, "deviceId")?;
        let id = device::current_device()?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(deviceId, "deviceId", id) }
    })
}

/// `aclError aclrtGetDeviceCount(uint32_t *count);` — `ACL_SHIM_DEVICE_COUNT`, default 16.
///
/// # Safety
/// `count` must be NULL or valid for a write of `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> AclError {
    // SAFETY: valid for writes per this function's contract.
    status("aclrtGetDeviceCount", || unsafe {
        write_out(count, "count", device::device_count())
    })
}

/// `const char *aclrtGetSocName(void);` — `ACL_SHIM_SOC_NAME`, default `"Ascend910B4"`; the string
/// lives as long as the process.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSocName() -> *const c_char {
    guard_or("aclrtGetSocName", std::ptr::null(), || {
        Ok(config::soc_name().as_ptr())
    })
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode);` — always `ACL_HOST` (1).
///
/// # Safety
/// `runMode` must be NULL or valid for a write of a C `enum` (`int`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(runMode: *mut i32) -> AclError {
    // SAFETY: valid for writes per this function's contract.
    status("aclrtGetRunMode", || unsafe {
        write_out(runMode, "runMode", ACL_HOST)
    })
}

/// `aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value);` — a static
/// property of device `deviceId` (0 ≤ id < device count; no `aclrtSetDevice` or `aclInit` needed).
/// Every device is the same Ascend 910B4-like NPU: AICPU_CORE_NUM 6, AICORE_CORE_NUM and
/// CUBE_CORE_NUM 20, VECTOR_CORE_NUM 40, L2_CACHE_SIZE 192 MiB, TOTAL_GLOBAL_MEM_SIZE the
/// `total` of `aclrtGetMemInfo` (`ACL_SHIM_DEVICE_MEM_SIZE`), PHY_CHIP_ID and SUPER_POD_DEVIDE_ID
/// the device id, SMP_ID / SUPER_POD_SERVER_ID / SUPER_POD_ID / MAINBOARD_ID 0 (one process, one
/// server), CUST_OP_PRIVILEGE 0 (restricted), IS_VIRTUAL 0.
/// NULL `value` → 100000 (checked first); bad id → `ACL_ERROR_RT_INVALID_DEVICEID` (107001);
/// WARP_SIZE, MAX_THREAD_PER_VECTOR_CORE, LOCAL_MEM_PER_VECTOR_CORE (unsupported on these parts) →
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000); any other `attr` → `ACL_ERROR_RT_PARAM_INVALID`
/// (107000). `value` is written only on success.
///
/// # Safety
/// `value` must be NULL or valid for a write of `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceInfo(deviceId: u32, attr: i32, value: *mut i64) -> AclError {
    status("aclrtGetDeviceInfo", || {
        require(value, "value")?;
        let v = device_info::device_attribute(deviceId, attr)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(value, "value", v) }
    })
}

/// `aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value);`
/// (`acl_base_rt.h`) — `ACL_DEVICE_INFO_AI_CORE_NUM` 20, `ACL_DEVICE_INFO_VECTOR_CORE_NUM` 40,
/// `ACL_DEVICE_INFO_L2_SIZE` 192 MiB, for any device 0 ≤ id < device count. As in CANN's ACL layer,
/// every failure — NULL `value`, bad id, `ACL_DEVICE_INFO_UNDEFINED` or an unknown value — is
/// `ACL_ERROR_INVALID_PARAM` (100000); `value` is written only on success.
///
/// # Safety
/// `value` must be NULL or valid for a write of `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDeviceCapability(deviceId: u32, deviceInfo: i32, value: *mut i64) -> AclError {
    status("aclGetDeviceCapability", || {
        require(value, "value")?;
        let v = device_info::device_capability(deviceId, deviceInfo)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(value, "value", v) }
    })
}

/// `rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len);` (CANN runtime,
/// `include/runtime/rt_ffts.h`): the FFTS control address host code hands to kernels. The CPU has
/// no FFTS: writes 0 and 0 (kernels' `util_set_ffts_config` ignores it). NULL → 100000.
///
/// # Safety
/// `addr` and `len` must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rtGetC2cCtrlAddr(addr: *mut u64, len: *mut u32) -> AclError {
    // SAFETY: valid for writes per this function's contract.
    status("rtGetC2cCtrlAddr", || unsafe {
        write_out(addr, "addr", 0u64)?;
        write_out(len, "len", 0u32)
    })
}

/// `aclError aclrtSynchronizeDevice(void);` — waits for every stream of the current device and
/// returns the first error any of them reported.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDevice() -> AclError {
    status("aclrtSynchronizeDevice", || device::synchronize_device(None))
}

/// `aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);` — as `aclrtSynchronizeDevice`
/// within `timeout` ms (−1 = forever; < −1 → 107000; expiry → `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> AclError {
    status("aclrtSynchronizeDeviceWithTimeout", || {
        device::synchronize_device(timeout_ms(timeout)?)
    })
}

/// `aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);` — a new context (with its
/// own default stream) on `deviceId`, made current for the calling thread.
///
/// # Safety
/// `context` must be NULL or valid for a write of `aclrtContext`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(context: *mut *mut c_void, deviceId: i32) -> AclError {
    status("aclrtCreateContext", || {
        require(context, "context")?;
        let handle = device::create_context(deviceId)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(context, "context", to_c(handle)) }
    })
}

/// `aclError aclrtDestroyContext(aclrtContext context);` — drains and destroys an explicit context
/// and its streams. NULL → 100000; unknown/destroyed → `ACL_ERROR_RT_INVALID_HANDLE` (107017);
/// a default context → `ACL_ERROR_RT_PARAM_INVALID` (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyContext(context: *mut c_void) -> AclError {
    status("aclrtDestroyContext", || {
        require(context, "context")?;
        device::destroy_context(from_c(context))
    })
}

/// `aclError aclrtSetCurrentContext(aclrtContext context);` — binds `context` (and its device) to the
/// calling thread.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetCurrentContext(context: *mut c_void) -> AclError {
    status("aclrtSetCurrentContext", || {
        require(context, "context")?;
        device::set_current_context(from_c(context))
    })
}

/// `aclError aclrtGetCurrentContext(aclrtContext *context);` — the calling thread's context (the
/// one set last, or the default context bound by `aclrtSetDevice`). None → 107002.
///
/// # Safety
/// `context` must be NULL or valid for a write of `aclrtContext`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut *mut c_void) -> AclError {
    status("aclrtGetCurrentContext", || {
        require(context, "context")?;
        let handle = device::current_context_handle()?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(context, "context", to_c(handle)) }
    })
}

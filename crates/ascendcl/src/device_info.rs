//! Static properties of the emulated device, answered by `aclrtGetDeviceInfo` and
//! `aclGetDeviceCapability`.
//!
//! Every virtual device is the same Ascend 910B4-like NPU that the rest of the project describes:
//! `aclrtGetSocName` says `"Ascend910B4"` and `include/tiling/platform/platform_ascendc.h` tells
//! kernels 20 cube (AIC) and 40 vector (AIV) cores and a 192 MiB L2. The numbers live here once so
//! the two queries cannot disagree with each other; a unit test pins them to the platform header.

use crate::config;
use crate::error::{Error, Result, code};

/// AI Cores (= cube cores: the 910B splits each AI Core into one AIC and two AIVs).
pub const AI_CORES: i64 = 20;
/// Vector cores (AIV).
pub const VECTOR_CORES: i64 = 40;
/// AI CPUs: `ai_cpu_cnt` of CANN's Ascend910B platform configuration.
pub const AI_CPUS: i64 = 6;
/// L2 cache bytes.
pub const L2_BYTES: i64 = 192 << 20;

/// `aclrtDevAttr` values (`acl/acl_rt.h`).
pub mod attr {
    pub const AICPU_CORE_NUM: i32 = 1;
    pub const AICORE_CORE_NUM: i32 = 101;
    pub const CUBE_CORE_NUM: i32 = 102;
    pub const VECTOR_CORE_NUM: i32 = 201;
    pub const WARP_SIZE: i32 = 202;
    pub const MAX_THREAD_PER_VECTOR_CORE: i32 = 203;
    pub const LOCAL_MEM_PER_VECTOR_CORE: i32 = 204;
    pub const TOTAL_GLOBAL_MEM_SIZE: i32 = 301;
    pub const L2_CACHE_SIZE: i32 = 302;
    pub const SMP_ID: i32 = 401;
    pub const PHY_CHIP_ID: i32 = 402;
    pub const SUPER_POD_DEVICE_ID: i32 = 403;
    pub const SUPER_POD_SERVER_ID: i32 = 404;
    pub const SUPER_POD_ID: i32 = 405;
    pub const CUST_OP_PRIVILEGE: i32 = 406;
    pub const MAINBOARD_ID: i32 = 407;
    pub const IS_VIRTUAL: i32 = 501;
}

/// `aclDeviceInfo` values (`acl/acl_base_rt.h`).
pub mod info {
    pub const UNDEFINED: i32 = -1;
    pub const AI_CORE_NUM: i32 = 0;
    pub const VECTOR_CORE_NUM: i32 = 1;
    pub const L2_SIZE: i32 = 2;
}

/// Is `device` one of the virtual devices? (A `uint32_t` id, so no negative case.)
fn exists(device: u32) -> bool {
    device < config::device_count()
}

/// One `aclrtDevAttr` of `device`.
///
/// Errors: id outside `[0, device count)` → `ACL_ERROR_RT_INVALID_DEVICEID` (as `aclrtSetDevice`);
/// WARP_SIZE / MAX_THREAD_PER_VECTOR_CORE / LOCAL_MEM_PER_VECTOR_CORE, which CANN documents as not
/// supported on these parts → `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`; any other value → the runtime
/// layer's `ACL_ERROR_RT_PARAM_INVALID` (the ACL layer forwards `attr` unchecked).
pub fn device_attribute(device: u32, attr: i32) -> Result<i64> {
    if !exists(device) {
        return Err(Error::new(
            code::RT_INVALID_DEVICEID,
            format!("device id {device} out of range [0, {})", config::device_count()),
        ));
    }
    Ok(match attr {
        attr::AICPU_CORE_NUM => AI_CPUS,
        attr::AICORE_CORE_NUM | attr::CUBE_CORE_NUM => AI_CORES,
        attr::VECTOR_CORE_NUM => VECTOR_CORES,
        attr::TOTAL_GLOBAL_MEM_SIZE => i64::try_from(config::device_mem_size()).unwrap_or(i64::MAX),
        attr::L2_CACHE_SIZE => L2_BYTES,
        // All virtual devices live in this one process, so in one operating system.
        attr::SMP_ID => 0,
        // One chip per device, numbered like the devices; one server, not part of a SuperPOD.
        attr::PHY_CHIP_ID | attr::SUPER_POD_DEVICE_ID => i64::from(device),
        attr::SUPER_POD_SERVER_ID | attr::SUPER_POD_ID | attr::MAINBOARD_ID => 0,
        // 0 = custom operators run with restricted system calls (the runtime's default).
        attr::CUST_OP_PRIVILEGE => 0,
        // A physical device as far as programs can tell, not an Ascend virtualization instance.
        attr::IS_VIRTUAL => 0,
        attr::WARP_SIZE | attr::MAX_THREAD_PER_VECTOR_CORE | attr::LOCAL_MEM_PER_VECTOR_CORE => {
            return Err(Error::new(
                code::RT_FEATURE_NOT_SUPPORT,
                format!("aclrtDevAttr {attr} is not supported on this device (SIMT attributes)"),
            ));
        }
        other => {
            return Err(Error::rt_param(format!(
                "invalid aclrtDevAttr {other} for device id {device}"
            )));
        }
    })
}

/// One `aclDeviceInfo` capability of `device`. The ACL layer checks everything itself, so every
/// failure (id outside `[0, device count)`, `ACL_DEVICE_INFO_UNDEFINED`, any other value) is
/// `ACL_ERROR_INVALID_PARAM`.
pub fn device_capability(device: u32, what: i32) -> Result<i64> {
    if !exists(device) {
        return Err(Error::invalid_param(format!(
            "device id {device} out of range [0, {})",
            config::device_count()
        )));
    }
    match what {
        info::AI_CORE_NUM => Ok(AI_CORES),
        info::VECTOR_CORE_NUM => Ok(VECTOR_CORES),
        info::L2_SIZE => Ok(L2_BYTES),
        other => Err(Error::invalid_param(format!(
            "invalid aclDeviceInfo {other} for device id {device}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers agree with what `platform_ascendc.h` tells kernels.
    #[test]
    fn matches_the_platform_header() {
        let header = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../include/tiling/platform/platform_ascendc.h"),
        )
        .expect("read platform_ascendc.h");
        assert!(header.contains(&format!("kAic = {AI_CORES};")), "AIC count");
        assert!(header.contains(&format!("kAiv = {VECTOR_CORES};")), "AIV count");
        assert!(
            header.contains("case CoreMemType::L2: size = 192ull * 1024 * 1024;")
                && L2_BYTES == 192 * 1024 * 1024,
            "L2 size"
        );
    }

    #[test]
    fn attributes_and_capabilities_agree() {
        assert_eq!(device_attribute(0, attr::AICORE_CORE_NUM), Ok(20));
        assert_eq!(device_attribute(0, attr::CUBE_CORE_NUM), Ok(20));
        assert_eq!(device_attribute(0, attr::VECTOR_CORE_NUM), Ok(40));
        assert_eq!(device_attribute(0, attr::AICPU_CORE_NUM), Ok(6));
        assert_eq!(device_attribute(0, attr::L2_CACHE_SIZE), Ok(192 << 20));
        assert_eq!(device_capability(0, info::AI_CORE_NUM), Ok(20));
        assert_eq!(device_capability(0, info::VECTOR_CORE_NUM), Ok(40));
        assert_eq!(device_capability(0, info::L2_SIZE), Ok(192 << 20));
        assert_eq!(device_attribute(3, attr::PHY_CHIP_ID), Ok(3));
        assert_eq!(
            device_attribute(0, attr::TOTAL_GLOBAL_MEM_SIZE),
            Ok(config::device_mem_size() as i64)
        );
    }

    #[test]
    fn error_codes() {
        let code_of = |r: Result<i64>| r.unwrap_err().code();
        let n = config::device_count();
        assert_eq!(
            code_of(device_attribute(n, attr::AICORE_CORE_NUM)),
            code::RT_INVALID_DEVICEID
        );
        assert_eq!(
            code_of(device_attribute(u32::MAX, attr::IS_VIRTUAL)),
            code::RT_INVALID_DEVICEID
        );
        assert_eq!(
            code_of(device_attribute(0, attr::WARP_SIZE)),
            code::RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(code_of(device_attribute(0, 0)), code::RT_PARAM_INVALID);
        assert_eq!(code_of(device_attribute(0, 303)), code::RT_PARAM_INVALID);
        assert_eq!(code_of(device_capability(n, info::L2_SIZE)), code::INVALID_PARAM);
        assert_eq!(
            code_of(device_capability(0, info::UNDEFINED)),
            code::INVALID_PARAM
        );
        assert_eq!(code_of(device_capability(0, 3)), code::INVALID_PARAM);
    }
}

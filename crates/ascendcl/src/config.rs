//! Every environment variable the shim reads, in one table. Each is read once per process, the
//! first time it is needed, so a program sees one consistent value.

use std::ffi::{CStr, CString};
use std::sync::OnceLock;

/// One configuration variable.
pub struct Var {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

pub const DEVICE_COUNT: Var = Var {
    name: "ACL_SHIM_DEVICE_COUNT",
    default: "16",
    doc: "number of virtual devices (ids 0..N-1) reported by aclrtGetDeviceCount; 1..=65536",
};

pub const SOC_NAME: Var = Var {
    name: "ACL_SHIM_SOC_NAME",
    default: "Ascend910B4",
    doc: "string returned by aclrtGetSocName (1..=63 printable ASCII characters)",
};

pub const DEVICE_MEM_SIZE: Var = Var {
    name: "ACL_SHIM_DEVICE_MEM_SIZE",
    default: "physical RAM / device count",
    doc: "bytes reported as each device's total memory by aclrtGetMemInfo and aclrtGetDeviceInfo",
};

/// All variables, for documentation and diagnostics.
pub const ALL: [&Var; 3] = [&DEVICE_COUNT, &SOC_NAME, &DEVICE_MEM_SIZE];

/// Largest accepted `ACL_SHIM_DEVICE_COUNT`.
pub const MAX_DEVICES: u32 = 65536;

fn warn_ignored(var: &Var, value: &str) {
    eprintln!(
        "ascendcl: ignoring {}={value:?} ({}); using {}",
        var.name, var.doc, var.default
    );
}

/// Parses a device count; `None` for anything outside `1..=MAX_DEVICES`.
pub fn parse_device_count(value: &str) -> Option<u32> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_DEVICES).contains(n))
}

/// Parses a SoC name; `None` unless 1..=63 printable ASCII characters.
pub fn parse_soc_name(value: &str) -> Option<CString> {
    let ok = (1..=63).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_graphic());
    if ok { CString::new(value).ok() } else { None }
}

/// Parses a memory size in bytes (plain decimal, optional K/M/G suffix, powers of 1024).
pub fn parse_mem_size(value: &str) -> Option<usize> {
    let v = value.trim();
    let (digits, shift) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 10),
        'm' | 'M' => (&v[..v.len() - 1], 20),
        'g' | 'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    let n = digits.parse::<usize>().ok()?;
    n.checked_mul(1usize << shift).filter(|&n| n > 0)
}

/// Number of virtual devices.
pub fn device_count() -> u32 {
    static VALUE: OnceLock<u32> = OnceLock::new();
    *VALUE.get_or_init(|| match std::env::var(DEVICE_COUNT.name) {
        Ok(v) => parse_device_count(&v).unwrap_or_else(|| {
            warn_ignored(&DEVICE_COUNT, &v);
            16
        }),
        Err(_) => 16,
    })
}

/// SoC name; the pointer stays valid for the life of the process.
pub fn soc_name() -> &'static CStr {
    static VALUE: OnceLock<CString> = OnceLock::new();
    let default = || CString::new(SOC_NAME.default).expect("no NUL in default");
    VALUE.get_or_init(|| match std::env::var(SOC_NAME.name) {
        Ok(v) => parse_soc_name(&v).unwrap_or_else(|| {
            warn_ignored(&SOC_NAME, &v);
            default()
        }),
        Err(_) => default(),
    })
}

fn physical_memory() -> usize {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return 16 << 30;
    }
    (pages as usize).saturating_mul(page as usize)
}

/// Total memory of each virtual device.
pub fn device_mem_size() -> usize {
    static VALUE: OnceLock<usize> = OnceLock::new();
    let default = || (physical_memory() / device_count() as usize).max(1 << 20);
    *VALUE.get_or_init(|| match std::env::var(DEVICE_MEM_SIZE.name) {
        Ok(v) => parse_mem_size(&v).unwrap_or_else(|| {
            warn_ignored(&DEVICE_MEM_SIZE, &v);
            default()
        }),
        Err(_) => default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_device_count("8"), Some(8));
        assert_eq!(parse_device_count(" 16 "), Some(16));
        assert_eq!(parse_device_count("0"), None);
        assert_eq!(parse_device_count("x"), None);
        assert_eq!(parse_device_count("70000"), None);
        assert_eq!(
            parse_soc_name("Ascend950PR").unwrap().to_str().unwrap(),
            "Ascend950PR"
        );
        assert!(parse_soc_name("").is_none());
        assert!(parse_soc_name("a b").is_none());
        assert_eq!(parse_mem_size("4G"), Some(4 << 30));
        assert_eq!(parse_mem_size("512m"), Some(512 << 20));
        assert_eq!(parse_mem_size("1000"), Some(1000));
        assert_eq!(parse_mem_size("0"), None);
        assert_eq!(parse_mem_size("G"), None);
    }
}

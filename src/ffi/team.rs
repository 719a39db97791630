//! C entry points of `host/team/shmem_host_team.h` (spec 8.7).

use std::ffi::c_int;

use super::guard;
use crate::runtime;

/// This PE's number in the current instance; -1 before the first init (the last value is kept
/// after finalize, as in the original).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_my_pe() -> c_int {
    guard("aclshmem_my_pe", || {
        Ok(runtime::current().map_or_else(|_| runtime::last_pe(), |i| i.my_pe as c_int))
    })
}

/// Number of PEs of the current instance; -1 before the first init (kept after finalize).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_n_pes() -> c_int {
    guard("aclshmem_n_pes", || {
        Ok(runtime::current().map_or_else(|_| runtime::last_n_pes(), |i| i.n_pes as c_int))
    })
}

//! `libaclshmem_panic_probe.so`: the library's exports plus a hook that panics inside the C
//! boundary, for `tests/panic.rs`, which gives it to `tests/c/panic_probe.c` in place of
//! libaclshmem.so (its SONAME is libaclshmem.so too). Never installed.

use std::ffi::c_int;

// every `#[no_mangle]` export of the aclshmem rlib (both surfaces) is exported by this cdylib too
pub use aclshmem;

/// Panics inside `ffi::guard` with a message naming `what`. The caller gets
/// `ACLSHMEM_INNER_ERROR` and a logged message naming the panic; the process goes on and later
/// calls behave as before.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_test_panic(what: c_int) -> c_int {
    aclshmem::ffi::guard("aclshmemx_test_panic", || -> aclshmem::Result<c_int> {
        panic!("test panic {what}")
    })
}

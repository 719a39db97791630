//! libaclshmem: the aclshmem C ABI (`libaclshmem.so`, also installed as `libshmem.so`).
//!
//! This crate is a thin surface: every export in [`ffi`] checks and converts its C arguments, calls
//! one function of the core runtime (`aclshmem-core`, in `crates/core/`) and turns the result into
//! the C return value through the one panic-catching boundary, [`ffi::guard`]. The C layouts come
//! from the leaf crate `aclshmem-abi` (`crates/abi/`). `include/shmem.h` is generated from
//! [`ffi`] by cbindgen (`tests/header.rs`). See `docs/architecture.md` for the layers.

pub mod ffi;

/// The OpenSHMEM 1.5 surface (`shmem_*`, crate `crates/openshmem`): linked into this library so
/// `libaclshmem.so` exports both APIs over one runtime.
pub use aclshmem_openshmem as openshmem;

pub use aclshmem_core::{Error, Result};

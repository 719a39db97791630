//! `libascendcl.so` for machines without an NPU: a CPU implementation of the ACL runtime subset that
//! CANN SHMEM host programs call (`acl/acl.h`). "Device" memory is host memory; a stream is an
//! ordered queue served by a worker thread; devices are virtual.
//!
//! Module map (safe core; nothing C-facing outside [`ffi`]):
//! - [`error`]   ACL error codes and the `Error` type
//! - [`config`]  every environment variable
//! - [`init`]    aclInit / aclFinalize state machine
//! - [`device`]  virtual devices, contexts, stream registry
//! - [`device_info`] static properties of the emulated device (core counts, L2, ids)
//! - [`stream`]  the ordered work queue and its worker
//! - [`event`]   events recorded into streams
//! - [`callback`] host callbacks of the subscription model (aclrtSubscribeReport ...)
//! - [`notify`]  notifies (one-bit flags between streams)
//! - [`memory`]  tracked allocations, memcpy/memset parameter rules
//! - [`handle`]  opaque handle registries
//! - [`vmem`]    reserved address ranges, physical memory objects and their mappings
//! - [`ffi`]     the C ABI (the only `#[unsafe(no_mangle)]` items)

pub mod callback;
pub mod config;
pub mod device;
pub mod device_info;
pub mod error;
pub mod event;
pub mod exception;
pub mod ffi;
pub mod handle;
pub mod init;
pub mod memory;
pub mod notify;
pub mod stream;
pub mod vmem;

pub use error::{AclError, Error, Result};

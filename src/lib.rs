//! libaclshmem: a CPU-backed, drop-in implementation of the CANN SHMEM host API.
//!
//! Module map (see DESIGN.md):
//! * [`ffi`] — the C ABI, one file per header area; nothing C-facing lives elsewhere.
//! * [`runtime`] — instances, init/finalize state machine.
//! * [`bootstrap`] — how PEs find each other (config store over TCP) and control-plane collectives.
//! * [`heap`] — symmetric heaps: deterministic allocator + POSIX shared-memory segments.
//! * [`sync`] — barriers.  [`wait`] — the waiting policy.  [`logging`] — the log backend.
//! * [`config`] — every environment variable.  [`error`] — the error enum and its C codes.

pub mod atomic;
pub mod bootstrap;
pub mod collectives;
pub mod config;
pub mod error;
pub mod ffi;
pub mod heap;
pub mod logging;
pub mod p2p;
pub mod rma;
pub mod runtime;
pub mod stream;
pub mod sync;
pub mod team;
pub mod transport;
pub mod wait;
pub mod word;

pub use error::{Error, Result};

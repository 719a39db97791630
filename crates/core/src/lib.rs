//! aclshmem-core: the runtime of libaclshmem, behind a Rust API that the API surfaces (the aclshmem C
//! ABI in the root crate; later the OpenSHMEM names, the Python package, the device mode) call.
//!
//! Layers, each depending only on those below it (docs/architecture.md draws them):
//!
//! 1. the API: [`runtime`] (init/finalize, instances, allocation), [`rma`], [`p2p`] (signals,
//!    waits), [`atomic`], [`sync`] (barriers), [`team`], [`collectives`], [`stream`];
//! 2. `team`/`sync`/`collectives` build on the transports and the heap;
//! 3. `transport` (trait `Transport`, chosen per peer: `transport/shm.rs` for peers on this node),
//!    `heap` (allocator + shared-memory segments), `bootstrap` (config store, unique id, MPI);
//! 4. [`config`] (every environment variable, typed), [`error`], [`logging`], `wait` (the waiting
//!    policy), `word` (atomic words), and the C layouts of the leaf crate `aclshmem-abi`.
//!
//! Functions that read or write caller memory are `unsafe fn` taking typed pointers, with a
//! `# Safety` section; safe functions never write through an address that arrived as an integer.
//! A new transport is one file in `transport/` plus its registration in `transport::select`; a new
//! API surface is a new crate over this one.

pub mod atomic;
mod bootstrap;
pub mod collectives;
pub mod error;
mod heap;
pub mod logging;
pub mod p2p;
pub mod rma;
pub mod runtime;
pub mod stream;
pub mod sync;
pub mod team;
mod transport;
mod util;
mod wait;
mod word;

pub use aclshmem_config as config;
pub use bootstrap::env::job_from_env;
pub use bootstrap::uid::get_uniqueid;
pub use error::{Error, Result};
pub use heap::HeapKind;
pub use heap::segment::BASE_ALIGN;
pub use transport::SignalOp;
pub use word::{IntWord, Word};

/// Config-store TLS settings (`aclshmemx_set_conf_store_tls`, `aclshmemx_set_config_store_tls_key`).
pub mod tls {
    pub use crate::bootstrap::config_store::tls::{configure, set_key};
}

/// What the fuzz targets (`fuzz/`) exercise: the config store's wire format.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::bootstrap::config_store::protocol;
}

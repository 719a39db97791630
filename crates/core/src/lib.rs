//! aclshmem-core: the runtime of libaclshmem, behind a Rust API that the API surfaces (the aclshmem C
//! ABI in the root crate; later the OpenSHMEM names, the Python package, the device mode) call.
//!
//! Layers, each depending only on those below it (or on its own layer, without cycles); the test
//! `tests/layers.rs` checks the graph and docs/architecture.md draws it:
//!
//! 1. the API the surfaces call: [`runtime`] (init/finalize, the current instance, allocation),
//!    [`rma`], [`p2p`] (signals, waits), [`atomic`], [`stream`] (stream-ordered operations),
//!    [`host`] (blocking host calls that complete the internal stream first);
//! 2. [`team`] (splits), `collectives`, [`sync`] (barriers, the team exchange);
//! 3. `instance` (one initialised instance: heaps, routes, teams, algorithms), `team_table` (the
//!    team records), `algos` (collective algorithm choice);
//! 4. `transport` (trait `Transport`, chosen per peer: `transport/shm.rs` for peers on this node),
//!    `heap` (allocator + shared-memory segments), `bootstrap` (config store, unique id, MPI);
//! 5. [`config`] (the typed environment table, crate `aclshmem-config`), [`error`], [`logging`],
//!    `wait` (the waiting policy), `word` (atomic words), `util`; C layouts come from the leaf
//!    crate `aclshmem-abi`.
//!
//! Functions that read or write caller memory are `unsafe fn` taking typed pointers, with a
//! `# Safety` section; safe functions never write through an address that arrived as an integer.
//! A *symmetric* address (the remote operand of put/get, atomics, signals, collectives) is never
//! dereferenced either: it only yields an offset into one of the library's own heap mappings
//! (after the range check), and the access goes through the mapping or the peer's transport.
//! A new transport is one file in `transport/` plus its registration in `transport::select`; a new
//! API surface is a new crate over this one.

mod acl;
mod algos;
pub mod args;
pub mod atomic;
pub mod block;
mod bootstrap;
pub mod collectives;
pub mod error;
mod heap;
pub mod host;
mod instance;
pub mod kernel;
pub mod logging;
pub mod p2p;
pub mod rma;
pub mod runtime;
pub mod stream;
pub mod sync;
pub mod team;
mod team_table;
mod transport;
mod util;
mod wait;
mod word;

pub use aclshmem_config as config;
pub use bootstrap::env::{Launched, job_from_env, launched};
pub use bootstrap::uid::get_uniqueid;
pub use error::{Error, Result};
pub use heap::HeapKind;
pub use heap::pages_on_first_touch_by_default;
pub use heap::segment::BASE_ALIGN;
pub use transport::SignalOp;
pub use util::sanitizer_runtime;
pub use word::{IntWord, Word};

/// Config-store TLS settings (`aclshmemx_set_conf_store_tls`, `aclshmemx_set_config_store_tls_key`).
pub mod tls {
    pub use crate::bootstrap::config_store::tls::{configure, set_key};
}

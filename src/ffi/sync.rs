//! C entry points of `host/data_plane/shmem_host_cc.h` (spec 8.6).

use super::guard;
use crate::{runtime, sync};

/// Barrier over all PEs. Collective. Returns on every PE only after all arrived; every store and
/// put a PE issued before it is complete and visible to every PE afterwards. Before init: logged,
/// no-op.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_barrier_all() {
    guard("aclshmem_barrier_all", || sync::barrier_all(runtime::current()?))
}

/// Same as aclshmem_barrier_all (the original implements sync exactly as barrier).
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_sync_all() {
    guard("aclshmem_sync_all", || sync::barrier_all(runtime::current()?))
}

//! Blocking host-side calls that first complete the work queued on the library's internal stream,
//! as the original does (spec 7), then run on the current instance.

use crate::error::Result;
use crate::{collectives, runtime, stream};

/// `aclshmem_barrier(team)` / `aclshmem_sync(team)`: `ACLSHMEM_TEAM_INVALID` is a no-op (what
/// non-members of a split received), as in the original.
pub fn team_barrier(handle: i32) -> Result<()> {
    stream::sync_internal();
    if handle == aclshmem_abi::ACLSHMEM_TEAM_INVALID {
        return Ok(());
    }
    collectives::team_barrier(&*runtime::current()?, handle)
}

/// `aclshmem_barrier_all` / `aclshmem_sync_all`.
pub fn barrier_all() -> Result<()> {
    stream::sync_internal();
    collectives::barrier_all(&*runtime::current()?)
}

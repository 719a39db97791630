//! Bootstraps: how the PEs of a job find each other and run the control-plane collectives.
//!
//! A new bootstrap is one file implementing [`Bootstrap`] plus one line where init picks it.

pub mod config_store;
pub mod env;
pub mod mpi;
pub mod uid;

use crate::error::Result;

/// The control-plane collectives every bootstrap provides. Not on any data path.
pub trait Bootstrap: Send + Sync {
    fn my_pe(&self) -> usize;
    fn n_pes(&self) -> usize;
    /// A random id shared by every PE of this job (names shared-memory objects when the launcher
    /// gave no job id).
    fn session(&self) -> u64;
    /// Every PE contributes `data`; returns all contributions in PE order.
    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// [`Bootstrap::allgather`], giving up (on every PE) when `check`, asked now and then while
    /// the others are awaited, names a PE that is busy with something else and will not
    /// contribute. Where the bootstrap cannot give a collective up (MPI), the plain allgather.
    fn allgather_checked(&self, data: &[u8], check: &dyn Fn() -> Option<String>) -> Result<Vec<Vec<u8>>> {
        let _ = check;
        self.allgather(data)
    }
    /// Returns once every PE has called it.
    fn barrier(&self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }
    /// Ends the whole job with `status`: tells every PE, which exit with it. Returns only if that
    /// did not end this process (the caller then exits itself).
    fn global_exit(&self, status: i32);
    /// Leaves the job; the last step of finalize. Called once.
    fn finalize(&self);
    /// Whether a PE that leaves without [`Bootstrap::finalize`] is taken for dead, ending the job
    /// (the config store watches its PEs; MPI leaves that to its launcher): then a program that
    /// returns from `main` without finalizing is finalized at exit (`runtime::init`).
    fn watches_departures(&self) -> bool {
        false
    }
}

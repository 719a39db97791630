//! Which algorithm each collective family uses, chosen per instance at init from the environment
//! (`ACLSHMEM_{BCAST,COLLECT,ALLTOALL,REDUCE}_ALGO`), so tests can run every variant.

use crate::config;
use crate::error::{Error, Result};

/// Data movement of broadcast, collect, fcollect and alltoall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Pull,
    Push,
}

/// Reduction algorithm; `Auto` picks `Direct` up to [`DIRECT_LIMIT`] bytes, else `Scatter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceAlgo {
    Auto,
    Direct,
    Scatter,
}

/// Reductions up to this many bytes read every source directly.
pub const DIRECT_LIMIT: usize = 16 * 1024;

/// Algorithm choice of one instance, read from the environment at init.
#[derive(Debug, Clone, Copy)]
pub struct Algos {
    pub broadcast: Move,
    pub collect: Move,
    pub alltoall: Move,
    pub reduce: ReduceAlgo,
}

fn pick_move(var: &config::Var<&'static str>) -> Result<Move> {
    match var.value()? {
        "auto" | "pull" => Ok(Move::Pull),
        "push" => Ok(Move::Push),
        other => Err(Error::InvalidValue(format!(
            "{}=\"{other}\": expected auto, pull or push",
            var.name
        ))),
    }
}

impl Algos {
    pub fn from_env() -> Result<Algos> {
        let reduce = match config::ACLSHMEM_REDUCE_ALGO.value()? {
            "auto" => ReduceAlgo::Auto,
            "direct" => ReduceAlgo::Direct,
            "scatter" => ReduceAlgo::Scatter,
            other => {
                return Err(Error::InvalidValue(format!(
                    "ACLSHMEM_REDUCE_ALGO=\"{other}\": expected auto, direct or scatter"
                )));
            }
        };
        Ok(Algos {
            broadcast: pick_move(&config::ACLSHMEM_BCAST_ALGO)?,
            collect: pick_move(&config::ACLSHMEM_COLLECT_ALGO)?,
            alltoall: pick_move(&config::ACLSHMEM_ALLTOALL_ALGO)?,
            reduce,
        })
    }
}

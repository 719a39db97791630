//! Job description from the environment of a launcher (aclshmrun, torchrun, Open MPI, PMI), for the
//! `aclshmemx_set_attr_from_env` extension.

use crate::config::{self, Var};
use crate::error::{Error, Result};

/// What the environment says about this PE's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnv {
    pub my_pe: i32,
    pub n_pes: i32,
    pub ip_port: String,
    pub local_mem_size: u64,
}

/// A launcher variable holding a PE number or a number of PEs.
type PeVar = Var<i32>;

fn int(var: &PeVar) -> Result<Option<i32>> {
    Ok(var.get()?)
}

/// Rank, size, launcher name and whether that launcher starts MPI jobs (an MPI library can then
/// bootstrap them), from the first family of variables that is present; `None` when none is (no
/// launcher). A rank without its size, or a malformed value, is an error.
fn rank_and_size() -> Result<Option<(i32, i32, &'static str, bool)>> {
    let families: [(&PeVar, &[&PeVar], &'static str, bool); 5] = [
        (
            &config::ACLSHMEM_MY_PE,
            &[&config::ACLSHMEM_N_PES],
            "aclshmrun",
            false,
        ),
        (&config::RANK, &[&config::WORLD_SIZE], "torchrun", false),
        (
            &config::OMPI_COMM_WORLD_RANK,
            &[&config::OMPI_COMM_WORLD_SIZE],
            "Open MPI",
            true,
        ),
        (&config::PMI_RANK, &[&config::PMI_SIZE], "PMI", true),
        (
            &config::PMIX_RANK,
            &[&config::OMPI_COMM_WORLD_SIZE, &config::PMI_SIZE],
            "PMIx",
            true,
        ),
    ];
    for (rank_var, size_vars, who, mpi) in families {
        if let Some(rank) = int(rank_var)? {
            for size_var in size_vars {
                if let Some(size) = int(size_var)? {
                    return Ok(Some((rank, size, who, mpi)));
                }
            }
            return Err(Error::InvalidParam(format!(
                "{} is set but not the number of PEs ({who})",
                rank_var.name
            )));
        }
    }
    Ok(None)
}

/// The rendezvous URL: ACLSHMEM_IP_PORT, else MASTER_ADDR with MASTER_PORT + 1 (torch's own store
/// holds MASTER_PORT); `None` when neither is set.
fn rendezvous() -> Result<Option<String>> {
    let url = if let Some(url) = config::ACLSHMEM_IP_PORT.get()? {
        url
    } else if let (Some(addr), Some(port)) = (config::MASTER_ADDR.get()?, config::MASTER_PORT.get()?) {
        let port = port
            .checked_add(1)
            .ok_or_else(|| Error::InvalidValue("MASTER_PORT is 65535".into()))?;
        if addr.contains(':') {
            format!("tcp6://[{addr}]:{port}")
        } else {
            format!("tcp://{addr}:{port}")
        }
    } else {
        return Ok(None);
    };
    if url.len() >= aclshmem_abi::ACLSHMEM_MAX_IP_PORT_LEN {
        return Err(Error::InvalidValue(format!(
            "rendezvous address \"{url}\" is longer than 63 characters"
        )));
    }
    Ok(Some(url))
}

/// What a launcher's environment says about this PE's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub my_pe: i32,
    pub n_pes: i32,
    /// Which family of variables gave rank and size ("aclshmrun", "torchrun", "Open MPI", "PMI",
    /// "PMIx").
    pub launcher: &'static str,
    /// Whether that launcher starts MPI jobs (Open MPI, PMI, PMIx): an MPI library can bootstrap it.
    pub mpi: bool,
    /// The rendezvous address, when the environment names one.
    pub rendezvous: Option<String>,
}

/// The launcher's description of the job; `Ok(None)` only when no launcher variable is set at all
/// (a program started by hand), an error when one is set but unusable (malformed, a rank without
/// a size, an address too long).
pub fn launched() -> Result<Option<Launched>> {
    let Some((my_pe, n_pes, launcher, mpi)) = rank_and_size()? else {
        return Ok(None);
    };
    Ok(Some(Launched {
        my_pe,
        n_pes,
        launcher,
        mpi,
        rendezvous: rendezvous()?,
    }))
}

/// The error of a job without a rendezvous address. It names the launcher that was found (the job
/// is there; the address is what is missing) and, for an MPI launcher (`mpirun` starting the
/// program directly, which sets no address), the MPI init mode, whose bootstrap needs none.
fn no_rendezvous(job: &Launched) -> Error {
    let what = format!(
        "started by {} as PE {} of {}, but no rendezvous address is set",
        job.launcher, job.my_pe, job.n_pes
    );
    Error::InvalidParam(if job.mpi {
        format!(
            "{what}: set MASTER_ADDR and MASTER_PORT (or ACLSHMEM_IP_PORT) for every process, or \
             initialise with ACLSHMEMX_INIT_WITH_MPI (MPI's own bootstrap, no address needed)"
        )
    } else {
        format!("{what}: set MASTER_ADDR and MASTER_PORT (or ACLSHMEM_IP_PORT)")
    })
}

/// Reads the job description; `ACLSHMEM_LOCAL_MEM_SIZE` defaults to the table's value (128 MiB).
pub fn job_from_env() -> Result<JobEnv> {
    let job = launched()?.ok_or_else(|| {
        Error::InvalidParam(
            "no launcher environment found: run under aclshmrun, torchrun, mpirun or a PMI launcher \
             (ACLSHMEM_MY_PE/ACLSHMEM_N_PES, RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE or PMI_RANK/PMI_SIZE)"
                .into(),
        )
    })?;
    let ip_port = match job.rendezvous {
        Some(ref url) => url.clone(),
        None => return Err(no_rendezvous(&job)),
    };
    let local_mem_size = config::ACLSHMEM_LOCAL_MEM_SIZE.value()?;
    Ok(JobEnv {
        my_pe: job.my_pe,
        n_pes: job.n_pes,
        ip_port,
        local_mem_size,
    })
}

//! The one table of every environment variable the library and its launcher read.
//!
//! Code never calls `std::env::var` with a literal: it reads an [`EnvVar`] from this file, so
//! `ACLSHMEM_INFO=1` can print the effective table and the README can list them all.

/// One environment variable: its name, its default (as text, empty = unset) and what it means.
#[derive(Debug)]
pub struct EnvVar {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

impl EnvVar {
    /// The variable's value when set and non-empty.
    pub fn get(&self) -> Option<String> {
        std::env::var(self.name).ok().filter(|v| !v.is_empty())
    }

    /// The value, or the documented default.
    pub fn get_or_default(&self) -> String {
        self.get().unwrap_or_else(|| self.default.to_string())
    }

    /// True when set to `1`, `true`, `yes` or `on`.
    pub fn is_on(&self) -> bool {
        matches!(
            self.get_or_default().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    }
}

macro_rules! env_table {
    ($($id:ident = $default:expr, $doc:expr;)*) => {
        $(
            #[doc = $doc]
            pub const $id: EnvVar = EnvVar { name: stringify!($id), default: $default, doc: $doc };
        )*
        /// Every variable, in documentation order.
        pub const ALL: &[EnvVar] = &[$($id),*];
    };
}

env_table! {
    SHMEM_LOG_LEVEL = "", "DEBUG, INFO, WARN, ERROR or FATAL; overrides every level set by the program (aclshmemx_set_log_level, init).";
    SHMEM_LOG_TO_STDOUT = "0", "1: log lines go to stdout instead of a log file.";
    SHMEM_LOG_PATH = "", "Directory of the log files (default $HOME/shmem/log); a file aclshmem_<pid>_<time>.log is created on the first message.";
    ACLSHMEM_INFO = "0", "1: print the effective environment table at init (PE 0).";
    ACLSHMEM_MY_PE = "", "Launcher: this process's PE number (read by aclshmemx_set_attr_from_env).";
    ACLSHMEM_N_PES = "", "Launcher: number of PEs of the job.";
    ACLSHMEM_IP_PORT = "", "Launcher: rendezvous URL of the config store, tcp://host:port or tcp6://[addr]:port.";
    ACLSHMEM_LOCAL_PE = "", "Launcher: index of this PE among the PEs of its node.";
    ACLSHMEM_LOCAL_N_PES = "", "Launcher: number of PEs on this node.";
    ACLSHMEM_JOB_TOKEN = "", "Launcher: the job secret every PE presents to the config store; connections without it are dropped.";
    ACLSHMEM_JOB_ID = "", "Launcher: job id carried in shared-memory object names (aclshmem-<user>-<job>-...), so the launcher can remove leftovers.";
    ACLSHMEM_LOCAL_MEM_SIZE = "128M", "local_mem_size filled by aclshmemx_set_attr_from_env: bytes, or with a K/M/G suffix.";
    ACLSHMEM_SHM_PREALLOCATE = "0", "1: reserve every heap page at init (posix_fallocate), so running out of /dev/shm fails init instead of a later SIGBUS.";
    ACLSHMEM_DIRECT_ACCESS = "1", "0: peers on this node are reached through the transport interface instead of inline loads and stores (every operation takes the generic path; for testing it).";
    ACLSHMEM_SHM_DIR = "/dev/shm", "Mount point of the POSIX shared-memory file system whose free space is checked at init.";
    SHMEM_UID_SESSION_ID = "", "aclshmemx_get_uniqueid: PE 0's rendezvous address, ipv4:port, [ipv6]:port or hostname:port (bound exactly).";
    SHMEM_UID_SOCK_IFNAME = "", "aclshmemx_get_uniqueid when SHMEM_UID_SESSION_ID is unset: <ifname>[:inet4|inet6], interface name prefix; unset: first up non-loopback, non-virtual interface (loopback when none).";
    SHMEM_INSTANCE_PORT_RANGE = "", "Multi-instance DEFAULT mode: start:end; instance k (ip_port tcp://host:0) listens on port start + k.";
    ACLSHMEM_MPI_LIB = "", "ACLSHMEMX_INIT_WITH_MPI when the program does not link MPI: the MPI library to load (default: Open MPI's libmpi.so.40 under mpirun of Open MPI, else MPICH's libmpich.so.12).";
    SHMEM_CYCLE_PROF_PE = "", "PE whose stream-ordered operations are profiled (aclshmemx_get_prof): counts and nanoseconds per operation kind; unset: off.";
    ACLSHMEM_BCAST_ALGO = "auto", "Broadcast data movement: pull (every member copies from the root; auto) or push (the root writes to every member).";
    ACLSHMEM_COLLECT_ALGO = "auto", "collect/fcollect data movement: pull (auto) or push.";
    ACLSHMEM_ALLTOALL_ALGO = "auto", "alltoall data movement: pull (auto) or push.";
    ACLSHMEM_REDUCE_ALGO = "auto", "Reductions: direct (every member reduces everything), scatter (each member reduces one chunk and writes it everywhere), auto (direct up to 16 KiB).";
    RANK = "", "torchrun: global rank (used when ACLSHMEM_MY_PE is unset).";
    WORLD_SIZE = "", "torchrun: number of ranks.";
    LOCAL_RANK = "", "torchrun: rank on this node.";
    LOCAL_WORLD_SIZE = "", "torchrun: ranks on this node.";
    MASTER_ADDR = "", "torchrun: host of rank 0; the config store listens on MASTER_PORT + 1 there (MASTER_PORT itself belongs to torch's own store).";
    MASTER_PORT = "", "torchrun: port of torch's store on MASTER_ADDR.";
    OMPI_COMM_WORLD_RANK = "", "Open MPI: rank (used when neither launcher nor torchrun variables are set).";
    OMPI_COMM_WORLD_SIZE = "", "Open MPI: number of ranks.";
    PMI_RANK = "", "PMI (MPICH/Hydra, Slurm): rank.";
    PMI_SIZE = "", "PMI: number of ranks.";
    PMIX_RANK = "", "PMIx: rank (the size comes from OMPI_COMM_WORLD_SIZE or PMI_SIZE).";
}

/// Renders the table with effective values, for `ACLSHMEM_INFO=1`.
pub fn describe() -> String {
    let mut out = String::from("libaclshmem environment:\n");
    for v in ALL {
        let value = v.get().unwrap_or_else(|| format!("{} (default)", v.default));
        out.push_str(&format!("  {:<26} = {:<24} {}\n", v.name, value, v.doc));
    }
    out
}

/// Parses a byte size: plain digits or digits followed by K, M, G or T (binary multiples).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, mult) = match t.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return None,
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("128M"), Some(128 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999999999999T"), None);
    }

    #[test]
    fn table_names_are_unique() {
        let mut names: Vec<_> = ALL.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}

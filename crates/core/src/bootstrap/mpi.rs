//! MPI bootstrap (ACLSHMEMX_INIT_WITH_MPI): the control-plane collectives run over an MPI
//! communicator. The MPI library is found at run time — in the program itself when it links MPI,
//! else by `dlopen` (ACLSHMEM_MPI_LIB, or the Open MPI / MPICH library the launcher's environment
//! points at) — so libaclshmem has no build-time MPI dependency. Open MPI and MPICH differ in
//! their handles (pointers to globals vs. integer constants); both are handled here.
//!
//! `unsafe`: symbols are resolved with dlsym and called through function pointers of the MPI
//! standard's C signatures.

use std::ffi::{CString, c_int, c_void};

use super::Bootstrap;
use crate::config;
use crate::error::{Error, Result};

/// How the MPI implementation spells its handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    /// Open MPI: `MPI_Comm`/`MPI_Datatype` are pointers; MPI_COMM_WORLD = &ompi_mpi_comm_world.
    OpenMpi,
    /// MPICH: handles are `int`; MPI_COMM_WORLD = 0x44000000, MPI_BYTE = 0x4c00010d.
    Mpich,
}

const MPICH_COMM_WORLD: c_int = 0x4400_0000;
const MPICH_BYTE: c_int = 0x4c00_010d;

/// A communicator or datatype handle of either flavor (passed in an integer register).
#[derive(Debug, Clone, Copy)]
enum H {
    Ptr(*mut c_void),
    Int(c_int),
}

struct Api {
    flavor: Flavor,
    initialized: *mut c_void,
    init: *mut c_void,
    finalized: *mut c_void,
    finalize: *mut c_void,
    comm_rank: *mut c_void,
    comm_size: *mut c_void,
    allgather: *mut c_void,
    barrier: *mut c_void,
    abort: *mut c_void,
    byte: H,
    world: H,
}

fn sym(handle: *mut c_void, name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    // SAFETY: dlsym with a valid handle (or RTLD_DEFAULT) and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Candidate libraries when the program does not link MPI itself.
fn candidates() -> Vec<String> {
    if let Some(lib) = config::ACLSHMEM_MPI_LIB.get().ok().flatten() {
        return vec![lib];
    }
    let ompi = ["libmpi.so.40".to_string(), "libmpi.so".into()];
    let mpich = [
        "libmpich.so.12".to_string(),
        "libmpi.so.12".into(),
        "libmpich.so".into(),
    ];
    // follow the launcher: Open MPI's mpirun sets OMPI_*, MPICH's hydra sets PMI_*
    if config::OMPI_COMM_WORLD_SIZE.is_set() {
        ompi.into_iter().chain(mpich).collect()
    } else {
        mpich.into_iter().chain(ompi).collect()
    }
}

fn open_library() -> Result<*mut c_void> {
    if sym(libc::RTLD_DEFAULT, "MPI_Init").is_some() {
        return Ok(libc::RTLD_DEFAULT);
    }
    let mut tried = vec![];
    for name in candidates() {
        let c = CString::new(name.clone()).map_err(|_| Error::InvalidValue("bad MPI library name".into()))?;
        // SAFETY: dlopen with a NUL-terminated name; the library stays loaded for the process.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !h.is_null() {
            return Ok(h);
        }
        tried.push(name);
    }
    Err(Error::InvalidValue(format!(
        "no MPI library found (tried {}; set ACLSHMEM_MPI_LIB to its path)",
        tried.join(", ")
    )))
}

impl Api {
    fn load() -> Result<Api> {
        let lib = open_library()?;
        let need =
            |name: &str| sym(lib, name).ok_or_else(|| Error::Inner(format!("the MPI library has no {name}")));
        let (flavor, world, byte) = match sym(lib, "ompi_mpi_comm_world") {
            Some(w) => (Flavor::OpenMpi, H::Ptr(w), H::Ptr(need("ompi_mpi_byte")?)),
            None => (Flavor::Mpich, H::Int(MPICH_COMM_WORLD), H::Int(MPICH_BYTE)),
        };
        Ok(Api {
            flavor,
            initialized: need("MPI_Initialized")?,
            init: need("MPI_Init")?,
            finalized: need("MPI_Finalized")?,
            finalize: need("MPI_Finalize")?,
            comm_rank: need("MPI_Comm_rank")?,
            comm_size: need("MPI_Comm_size")?,
            allgather: need("MPI_Allgather")?,
            barrier: need("MPI_Barrier")?,
            abort: need("MPI_Abort")?,
            byte,
            world,
        })
    }
}

pub struct Mpi {
    api: Api,
    comm: H,
    my_pe: usize,
    n_pes: usize,
    session: u64,
}

// SAFETY: the raw pointers are addresses of MPI functions and handles, valid for the process;
// MPI calls are made from the thread that runs the collective (init, allocation, finalize).
unsafe impl Send for Mpi {}
// SAFETY: as above; the library serialises its collective calls.
unsafe impl Sync for Mpi {}

impl Mpi {
    fn check(rc: c_int, what: &str) -> Result<()> {
        if rc != 0 {
            return Err(Error::Bootstrap(format!("{what} failed with MPI error {rc}")));
        }
        Ok(())
    }

    fn rank_size(&self) -> Result<(c_int, c_int)> {
        let (mut rank, mut size) = (0, 0);
        let rc = match self.comm {
            // SAFETY: MPI_Comm_rank/size(comm, int*) with this flavor's handle type.
            H::Ptr(c) => unsafe {
                let f: unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int =
                    std::mem::transmute(self.api.comm_rank);
                let g: unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int =
                    std::mem::transmute(self.api.comm_size);
                f(c, &mut rank).max(g(c, &mut size))
            },
            // SAFETY: as above, MPICH handles are ints.
            H::Int(c) => unsafe {
                let f: unsafe extern "C" fn(c_int, *mut c_int) -> c_int =
                    std::mem::transmute(self.api.comm_rank);
                let g: unsafe extern "C" fn(c_int, *mut c_int) -> c_int =
                    std::mem::transmute(self.api.comm_size);
                f(c, &mut rank).max(g(c, &mut size))
            },
        };
        Self::check(rc, "MPI_Comm_rank/MPI_Comm_size")?;
        Ok((rank, size))
    }

    /// Fixed-size allgather of `data` (same length on every rank).
    fn allgather_fixed(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; data.len() * self.n_pes];
        let n = data.len() as c_int;
        let rc = match (self.comm, self.api.byte) {
            // SAFETY: MPI_Allgather(sendbuf, count, type, recvbuf, count, type, comm), Open MPI handles.
            (H::Ptr(c), H::Ptr(b)) => unsafe {
                let f: unsafe extern "C" fn(
                    *const c_void,
                    c_int,
                    *mut c_void,
                    *mut c_void,
                    c_int,
                    *mut c_void,
                    *mut c_void,
                ) -> c_int = std::mem::transmute(self.api.allgather);
                f(data.as_ptr().cast(), n, b, out.as_mut_ptr().cast(), n, b, c)
            },
            // SAFETY: as above, MPICH handles.
            (H::Int(c), H::Int(b)) => unsafe {
                let f: unsafe extern "C" fn(
                    *const c_void,
                    c_int,
                    c_int,
                    *mut c_void,
                    c_int,
                    c_int,
                    c_int,
                ) -> c_int = std::mem::transmute(self.api.allgather);
                f(data.as_ptr().cast(), n, b, out.as_mut_ptr().cast(), n, b, c)
            },
            _ => return Err(Error::Inner("mixed MPI handle kinds".into())),
        };
        Self::check(rc, "MPI_Allgather")?;
        Ok(out)
    }

    /// Sets up the bootstrap over `comm_args` (`MPI_Comm*`, NULL = MPI_COMM_WORLD), initialising
    /// MPI if the program did not. The attributes' my_pe/n_pes must be the rank and size.
    pub fn new(comm_args: *const c_void, my_pe: usize, n_pes: usize) -> Result<Mpi> {
        let api = Api::load()?;
        let mut flag: c_int = 0;
        // SAFETY: MPI_Initialized(int*).
        let rc = unsafe {
            let f: unsafe extern "C" fn(*mut c_int) -> c_int = std::mem::transmute(api.initialized);
            f(&mut flag)
        };
        Self::check(rc, "MPI_Initialized")?;
        if flag == 0 {
            // SAFETY: MPI_Init(NULL, NULL) is allowed by the standard.
            let rc = unsafe {
                let f: unsafe extern "C" fn(*mut c_int, *mut *mut *mut i8) -> c_int =
                    std::mem::transmute(api.init);
                f(std::ptr::null_mut(), std::ptr::null_mut())
            };
            Self::check(rc, "MPI_Init")?;
            finalize_at_exit(&api);
        }
        let comm = if comm_args.is_null() {
            api.world
        } else {
            match api.flavor {
                // SAFETY: comm_args points at an MPI_Comm of this flavor (documented contract).
                Flavor::OpenMpi => H::Ptr(unsafe { *(comm_args as *const *mut c_void) }),
                // SAFETY: as above; MPICH's MPI_Comm is an int.
                Flavor::Mpich => H::Int(unsafe { *(comm_args as *const c_int) }),
            }
        };
        let mut mpi = Mpi {
            api,
            comm,
            my_pe,
            n_pes,
            session: 0,
        };
        let (rank, size) = mpi.rank_size()?;
        if rank as usize != my_pe || size as usize != n_pes {
            return Err(Error::InvalidParam(format!(
                "attributes say PE {my_pe} of {n_pes} but the MPI communicator says rank {rank} of {size}"
            )));
        }
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).map_err(|e| Error::Inner(e.to_string()))?;
        let all = mpi.allgather_fixed(&seed)?;
        mpi.session = u64::from_le_bytes(all[..8].try_into().unwrap_or_default());
        log::info!("PE {my_pe}: MPI bootstrap ({:?})", mpi.api.flavor);
        Ok(mpi)
    }
}

impl Bootstrap for Mpi {
    fn my_pe(&self) -> usize {
        self.my_pe
    }
    fn n_pes(&self) -> usize {
        self.n_pes
    }
    fn session(&self) -> u64 {
        self.session
    }

    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let lens = self.allgather_fixed(&(data.len() as u64).to_le_bytes())?;
        let lens: Vec<usize> = lens
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()) as usize)
            .collect();
        let max = lens.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return Ok(vec![vec![]; self.n_pes]);
        }
        let mut padded = data.to_vec();
        padded.resize(max, 0);
        let all = self.allgather_fixed(&padded)?;
        Ok(all
            .chunks(max)
            .zip(&lens)
            .map(|(c, &l)| c[..l].to_vec())
            .collect())
    }

    fn barrier(&self) -> Result<()> {
        let rc = match self.comm {
            // SAFETY: MPI_Barrier(comm) with this flavor's handle.
            H::Ptr(c) => unsafe {
                let f: unsafe extern "C" fn(*mut c_void) -> c_int = std::mem::transmute(self.api.barrier);
                f(c)
            },
            // SAFETY: as above.
            H::Int(c) => unsafe {
                let f: unsafe extern "C" fn(c_int) -> c_int = std::mem::transmute(self.api.barrier);
                f(c)
            },
        };
        Self::check(rc, "MPI_Barrier")
    }

    fn global_exit(&self, status: i32) {
        let status = crate::util::job_status(status);
        match self.comm {
            // SAFETY: MPI_Abort(comm, errorcode).
            H::Ptr(c) => unsafe {
                let f: unsafe extern "C" fn(*mut c_void, c_int) -> c_int =
                    std::mem::transmute(self.api.abort);
                f(c, status);
            },
            // SAFETY: as above.
            H::Int(c) => unsafe {
                let f: unsafe extern "C" fn(c_int, c_int) -> c_int = std::mem::transmute(self.api.abort);
                f(c, status);
            },
        }
    }

    fn finalize(&self) {
        // MPI cannot be initialised twice in a process, so MPI that the library started is
        // finalized at process exit (see `finalize_at_exit`), which lets init/finalize cycles repeat
    }
}

static AT_EXIT_FINALIZED: std::sync::atomic::AtomicPtr<c_void> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static AT_EXIT_FINALIZE: std::sync::atomic::AtomicPtr<c_void> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// At process exit: `MPI_Finalize`, unless the process ends with a nonzero status. `MPI_Finalize`
/// is collective: with a PE gone (its status nonzero: the job ends as when a PE dies) it waited for
/// ever for the others, which waited for it; without it the MPI launcher ends the job (a rank that
/// exits without finalizing), with the status.
#[cfg(target_env = "gnu")]
extern "C" fn finalize_mpi_on_exit(status: c_int, _: *mut c_void) {
    if status == 0 {
        finalize_mpi_at_exit();
    }
}

extern "C" fn finalize_mpi_at_exit() {
    use std::sync::atomic::Ordering::Acquire;
    let (finalized, finalize) = (AT_EXIT_FINALIZED.load(Acquire), AT_EXIT_FINALIZE.load(Acquire));
    if finalized.is_null() || finalize.is_null() {
        return;
    }
    let mut done: c_int = 0;
    // SAFETY: the pointers are MPI_Finalized(int*) and MPI_Finalize() of the loaded library.
    unsafe {
        let f: unsafe extern "C" fn(*mut c_int) -> c_int = std::mem::transmute(finalized);
        f(&mut done);
        if done == 0 {
            let g: unsafe extern "C" fn() -> c_int = std::mem::transmute(finalize);
            g();
        }
    }
}

/// Registers MPI_Finalize for process exit, once.
fn finalize_at_exit(api: &Api) {
    use std::sync::atomic::Ordering::Release;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        AT_EXIT_FINALIZED.store(api.finalized, Release);
        AT_EXIT_FINALIZE.store(api.finalize, Release);
        // SAFETY: registers a plain extern "C" function (its argument is unused).
        #[cfg(target_env = "gnu")]
        unsafe {
            crate::util::on_exit(finalize_mpi_on_exit, std::ptr::null_mut())
        };
        // SAFETY: registers a plain extern "C" function with no arguments.
        #[cfg(not(target_env = "gnu"))]
        unsafe {
            libc::atexit(finalize_mpi_at_exit)
        };
    });
}

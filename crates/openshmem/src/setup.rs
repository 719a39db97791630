//! Library setup, exit and query routines (OpenSHMEM 1.5 chapter 9.1) and their deprecated names.
//!
//! `shmem_init` reads the job from the launcher's environment (`oshrun`/`aclshmrun`, torchrun,
//! Open MPI, PMI), sizes the heap from `SHMEM_SYMMETRIC_SIZE` (else `ACLSHMEM_LOCAL_MEM_SIZE`, else
//! [`DEFAULT_SYMMETRIC_SIZE`], with pages allocated on first touch) and initialises the core's
//! instance (through the MPI bootstrap when `mpirun` or a PMI launcher started the program without
//! a rendezvous address); started without a launcher it runs as a single PE. When the
//! aclshmem API already initialised the process, it joins that instance. Calls are counted: the
//! instance ends at the `shmem_finalize` matching the first `shmem_init` (as Sandia OpenSHMEM).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::{guard, guard_soft};
use aclshmem_abi::{ACLSHMEMX_INIT_WITH_DEFAULT, ACLSHMEMX_INIT_WITH_MPI, InitAttr};
use aclshmem_core::config;
use aclshmem_core::error::{Error, Result};
use aclshmem_core::runtime;

/// `SHMEM_THREAD_SINGLE` .. `SHMEM_THREAD_MULTIPLE` (values of Sandia OpenSHMEM).
pub const SHMEM_THREAD_SINGLE: c_int = 0;
pub const SHMEM_THREAD_MULTIPLE: c_int = 3;

/// The heap of a program that sets neither `SHMEM_SYMMETRIC_SIZE` nor `ACLSHMEM_LOCAL_MEM_SIZE`:
/// Sandia OpenSHMEM's default (Open MPI's OSHMEM: 256 MiB). Its pages are allocated on first touch
/// unless `ACLSHMEM_SHM_PREALLOCATE=1`, so an unused part costs address space only.
pub const DEFAULT_SYMMETRIC_SIZE: u64 = 512 << 20;

/// Version of the specification this surface implements.
pub const MAJOR: c_int = 1;
pub const MINOR: c_int = 5;
/// `SHMEM_MAX_NAME_LEN`.
pub const MAX_NAME_LEN: usize = 256;
/// `SHMEM_VENDOR_STRING`.
pub const VENDOR: &str = concat!("libaclshmem ", env!("CARGO_PKG_VERSION"), " (OpenSHMEM 1.5)");

/// (shmem_init calls not yet finalized, whether this surface created the instance)
static STATE: Mutex<(u32, bool)> = Mutex::new((0, false));
/// The thread level granted by the first init.
static THREAD_LEVEL: AtomicI32 = AtomicI32::new(SHMEM_THREAD_SINGLE);

/// The job as the launcher describes it: the attributes for the core's init and its bootstrap
/// flags. No launcher variable at all: a job of one PE. A launcher without a rendezvous address
/// (`mpirun` or a PMI launcher started the program directly, not through `oshrun`): the MPI
/// bootstrap, as OSHMEM and Sandia OpenSHMEM run under `mpirun`. Anything else the environment
/// gets wrong (a malformed value, a rank without the number of PEs) fails the init with its
/// message: running each process of a job as a PE of its own would be a silent wrong result.
fn job_attr() -> Result<(u32, InitAttr)> {
    let mut attr = InitAttr::default();
    let mut flags = ACLSHMEMX_INIT_WITH_DEFAULT;
    let private = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| format!("tcp://127.0.0.1:{}", a.port()))
            .map_err(|e| Error::Inner(format!("no free loopback port for a single-PE job: {e}")))
    };
    let ip_port = match aclshmem_core::launched()? {
        None => {
            log::debug!("shmem_init: no launcher environment; running as a single PE");
            attr.my_pe = 0;
            attr.n_pes = 1;
            private()?
        }
        Some(job) => {
            attr.my_pe = job.my_pe;
            attr.n_pes = job.n_pes;
            match job.rendezvous {
                Some(url) => url,
                // a job of one PE meets nobody
                None if job.n_pes == 1 && job.my_pe == 0 => private()?,
                None if job.mpi => {
                    log::debug!(
                        "shmem_init: started by {} without a rendezvous address; MPI bootstrap",
                        job.launcher
                    );
                    flags = ACLSHMEMX_INIT_WITH_MPI;
                    String::new()
                }
                None => {
                    return Err(Error::InvalidParam(format!(
                        "started by {} as PE {} of {} but no rendezvous address is set \
                         (ACLSHMEM_IP_PORT, or MASTER_ADDR and MASTER_PORT)",
                        job.launcher, job.my_pe, job.n_pes
                    )));
                }
            }
        }
    };
    attr.local_mem_size = match config::SHMEM_SYMMETRIC_SIZE.get()? {
        Some(size) => size,
        None => config::ACLSHMEM_LOCAL_MEM_SIZE
            .get()?
            .unwrap_or(DEFAULT_SYMMETRIC_SIZE),
    };
    for (dst, src) in attr.ip_port.iter_mut().zip(ip_port.bytes()) {
        *dst = src as c_char;
    }
    Ok((flags, attr))
}

fn init(requested: c_int) -> Result<()> {
    let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if st.0 > 0 {
        st.0 += 1;
        return Ok(());
    }
    // a malformed value is refused here, naming it, not taken for `abort` at the first error
    config::ACLSHMEM_OSHMEM_ON_ERROR.value()?;
    // SHMEM_DEBUG: debug messages on stderr (as Sandia OpenSHMEM prints them), unless the log's own
    // settings say where (SHMEM_LOG_PATH: the log file there; SHMEM_LOG_TO_STDOUT=1: stdout) or
    // which level (SHMEM_LOG_LEVEL)
    let debug = config::SHMEM_DEBUG.value()? && config::SHMEM_LOG_LEVEL.get()?.is_none();
    if debug {
        if config::SHMEM_LOG_PATH.get()?.is_none() {
            aclshmem_core::logging::prefer_stderr();
        }
        aclshmem_core::logging::set_level(aclshmem_core::logging::DEBUG)?;
    }
    let owned = if runtime::current().is_ok() {
        log::debug!("shmem_init: joining the instance the aclshmem API initialised");
        false
    } else {
        let (flags, mut attr) = job_attr()?;
        log::debug!(
            "shmem_init: PE {} of {}, heap {} bytes",
            attr.my_pe,
            attr.n_pes,
            attr.local_mem_size
        );
        // as SOS and OSHMEM: heap pages on first touch (ACLSHMEM_SHM_PREALLOCATE=1 reserves them)
        aclshmem_core::pages_on_first_touch_by_default();
        runtime::init(flags, &mut attr)?;
        if debug {
            // the core's init sets the level of the aclshmem API (ERROR)
            aclshmem_core::logging::set_level(aclshmem_core::logging::DEBUG)?;
        }
        true
    };
    crate::team::name_teams();
    crate::team::init_shared()?;
    crate::statics::adopt()?;
    THREAD_LEVEL.store(
        requested.clamp(SHMEM_THREAD_SINGLE, SHMEM_THREAD_MULTIPLE),
        Ordering::Relaxed,
    );
    *st = (1, owned);
    drop(st);
    // an aclshmem_finalize from now until shmem_finalize leaves the instance to this surface
    runtime::openshmem_hold(runtime::current_slot().id());
    runtime::at_normal_exit(finalize_at_exit);
    if runtime::current_pe() == Some(0) {
        if config::SHMEM_VERSION.value()? || config::SHMEM_INFO.value()? {
            println!("{VENDOR}: OpenSHMEM {MAJOR}.{MINOR}");
        }
        if config::SHMEM_INFO.value()? {
            println!("{}", config::describe());
        }
    }
    Ok(())
}

/// Initialises the library (collective over all PEs of the job). Later calls only count: the
/// library ends at the matching `shmem_finalize`, or at exit (see [`finalize_at_exit`]). A failure
/// ends the process with a message.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_init() {
    guard("shmem_init", (), || init(SHMEM_THREAD_SINGLE))
}

/// `shmem_init` granting a thread level: every level up to `SHMEM_THREAD_MULTIPLE` is supported
/// (the core is thread-safe), so `*provided = requested`. Returns 0.
///
/// # Safety
/// `provided` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    guard("shmem_init_thread", -1, || {
        init(requested)?;
        if aclshmem_core::args::check(provided, "provided").is_ok() {
            // SAFETY: non-NULL, aligned and writable per this function's contract.
            unsafe { *provided = THREAD_LEVEL.load(Ordering::Relaxed) };
        }
        Ok(0)
    })
}

/// The thread level granted at init.
///
/// # Safety
/// `provided` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_thread(provided: *mut c_int) {
    guard("shmem_query_thread", (), || {
        crate::non_null(provided, "provided")?;
        // SAFETY: non-NULL and writable per this function's contract.
        unsafe { *provided = THREAD_LEVEL.load(Ordering::Relaxed) };
        Ok(())
    })
}

/// Ends the library (collective): a barrier, then the instance is released when this call matches
/// the first `shmem_init` and this surface created it. Without init: no-op.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_finalize() {
    guard("shmem_finalize", (), || {
        let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
        match st.0 {
            0 => Ok(()),
            1 => {
                let owned = st.1;
                *st = (0, false);
                crate::ctx::destroy_all();
                // the aclshmem API finalized the instance while this surface used it: it ends now
                let deferred = runtime::openshmem_release();
                if owned || deferred {
                    runtime::finalize(None)
                } else {
                    aclshmem_core::host::barrier_all()
                }
            }
            _ => {
                st.0 -= 1;
                Ok(())
            }
        }
    })
}

/// Ends every PE of the job with `status` (also the launcher's exit status). Never returns.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_global_exit(status: c_int) {
    runtime::global_exit(status)
}

/// This PE's number; -1 before init.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_my_pe() -> c_int {
    runtime::current().map_or(-1, |i| i.my_pe() as c_int)
}

/// Number of PEs; -1 before init.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_n_pes() -> c_int {
    runtime::current().map_or(-1, |i| i.n_pes() as c_int)
}

/// 1 when `pe` is a PE of the job (every PE is reachable), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    runtime::current().is_ok_and(|i| pe >= 0 && (pe as usize) < i.n_pes()) as c_int
}

/// 1 when `addr` is symmetric (inside the symmetric heap or the program's symmetric data) and
/// `pe` is a PE of the job, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    runtime::current()
        .is_ok_and(|i| pe >= 0 && (pe as usize) < i.n_pes() && i.locate(addr as usize, 1).is_some())
        as c_int
}

/// Address of the symmetric object `dest` in PE `pe`'s copy for ordinary loads and stores, when
/// that copy is mapped into this process (same node); NULL otherwise (or for a bad argument).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    guard_soft("shmem_ptr", std::ptr::null_mut(), || {
        let inst = runtime::current()?;
        Ok(inst
            .peer_ptr(dest as usize, pe)?
            .map_or(std::ptr::null_mut(), |p| p.cast()))
    })
}

/// Writes the version of the specification (1, 5).
///
/// # Safety
/// Non-NULL pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    guard("shmem_info_get_version", (), || {
        crate::non_null(major, "major")?;
        crate::non_null(minor, "minor")?;
        // SAFETY: non-NULL and writable per this function's contract.
        unsafe {
            *major = MAJOR;
            *minor = MINOR;
        }
        Ok(())
    })
}

/// Writes `SHMEM_VENDOR_STRING` (NUL-terminated, at most `SHMEM_MAX_NAME_LEN` bytes).
///
/// # Safety
/// `name` must be NULL or writable for `SHMEM_MAX_NAME_LEN` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_name(name: *mut c_char) {
    guard("shmem_info_get_name", (), || {
        crate::non_null(name, "name")?;
        let text = format!("{VENDOR}\0");
        let n = text.len().min(MAX_NAME_LEN);
        // SAFETY: name is writable for MAX_NAME_LEN bytes; n is within both buffers.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), name, n) };
        Ok(())
    })
}

/// `shmem_pcontrol(level, ...)` (profiling interface): accepted and ignored, as the specification
/// allows (this library has no profiling layer). C declares it variadic; Rust cannot define a
/// variadic function, so this takes `level` only: on the x86-64 and AArch64 Linux calling
/// conventions a variadic call passes `level` where this definition reads it, and the ignored
/// extra arguments are the caller's to clean up.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_pcontrol(level: c_int) {
    log::debug!("shmem_pcontrol({level}) ignored");
}

/// Deprecated (1.2): `shmem_init`; `npes` is ignored. The library is finalized implicitly when
/// the program exits (the specification: no `shmem_finalize` is needed after `start_pes`).
#[unsafe(no_mangle)]
pub extern "C" fn start_pes(npes: c_int) {
    let _ = npes;
    STARTED_BY_START_PES.store(true, Ordering::Relaxed);
    shmem_init();
}

/// Whether `start_pes` initialised the library (its programs need no `shmem_finalize`).
static STARTED_BY_START_PES: AtomicBool = AtomicBool::new(false);

/// The implicit finalize at exit, registered by the first init (`runtime::at_normal_exit`, which
/// runs it before the core's own, `runtime::init`, and never in a forked child): ends every `shmem_init` /
/// `start_pes` not yet finalized, unless the job is ending (a global exit or a lost peer). After
/// `start_pes` the specification asks for it; after `shmem_init` (whose programs must call
/// `shmem_finalize`) Sandia OpenSHMEM does it too, with a warning on PE 0, and so does this
/// library, so that the many programs that simply return from `main` run.
///
/// A program ending with a nonzero status (an error) is not finalized: the PE leaves at once, and
/// the others learn that it died and end the job, as when a PE crashes, with the launcher
/// reporting that status. Otherwise the PE waits for every other PE to finish as well, serving
/// their accesses to its memory meanwhile. Before that it tells them that it left
/// (`sync::depart`): a PE that still waits for it in a barrier or collective (a program that
/// left a PE out of one) then fails with a message naming it, which ends the job, instead of both
/// waiting for ever.
fn finalize_at_exit(status: i32) {
    if runtime::ending() || status != 0 {
        return;
    }
    let (count, owned) = *STATE.lock().unwrap_or_else(|e| e.into_inner());
    if count == 0 {
        return;
    }
    // the finalize below first tells the others that this PE left (an instance the aclshmem API
    // created is finalized after this, by the core's own hook)
    runtime::finalizing_at_exit();
    if owned && !STARTED_BY_START_PES.load(Ordering::Relaxed) && runtime::current_pe() == Some(0) {
        aclshmem_core::logging::write_stderr(
            "aclshmem: warning: the program began to exit without having called shmem_finalize; \
             finalizing now (a shmem_finalize from an exit handler registered before shmem_init, \
             which runs after this, does nothing)\n",
        );
    }
    while STATE.lock().unwrap_or_else(|e| e.into_inner()).0 > 0 {
        shmem_finalize();
    }
}

/// `shmemx_wtime()` (`<shmemx.h>`): seconds of the monotonic clock, as Sandia OpenSHMEM's extension
/// of that name (its benchmarks time themselves with it). Any time, also before `shmem_init`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_wtime() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Deprecated: `shmem_my_pe`.
#[unsafe(no_mangle)]
pub extern "C" fn _my_pe() -> c_int {
    shmem_my_pe()
}

/// Deprecated: `shmem_n_pes`.
#[unsafe(no_mangle)]
pub extern "C" fn _num_pes() -> c_int {
    shmem_n_pes()
}

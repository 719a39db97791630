//! Small helpers shared by the core's modules.

use std::sync::{Mutex, MutexGuard};

/// Makes sure descriptors 0, 1 and 2 are open before the library opens any of its own: a program
/// that closed its standard streams would otherwise have the next socket the library makes take
/// their number, and its own `printf`s would go into that connection (a config store connection
/// took descriptor 1, and the job died of SIGPIPE). A closed one is opened on /dev/null (what a
/// write to it then does: nothing, as a write to a closed stream does).
pub fn occupy_standard_descriptors() {
    for fd in 0..3 {
        // SAFETY: fcntl(F_GETFD) only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
            continue;
        }
        // SAFETY: the path is a valid NUL-terminated string; open takes the lowest free number,
        // which is `fd` (the lower ones are open): anything else is closed again.
        let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if got >= 0 && got != fd {
            // SAFETY: our own descriptor, just opened.
            unsafe { libc::close(got) };
        }
    }
}

/// Locking that survives a poisoned mutex: a panic caught at the C boundary must not make every
/// later call fail, and the data behind the core's mutexes stays consistent between statements.
pub(crate) trait Locked<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Locked<T> for Mutex<T> {
    #[inline]
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends this process with `status` because its job is ending (a global exit, a lost peer):
/// exit handlers that would talk to the other PEs (the implicit finalize of `start_pes`) see
/// [`ending`] and do nothing.
///
/// On the process's main thread this is `exit(status)`, with the exit handlers. On any other
/// thread (the library's own, which notices a lost peer or another PE's global exit, or a program
/// thread) the handlers must not run: the main thread goes on meanwhile, may be using what they
/// tear down, or may be running them itself (its own `exit`: two threads in the handlers at once
/// crash). There, the C and Rust standard streams are flushed and the process ends with
/// `_exit(status)`. A second call, from another thread, waits for the first to end the process.
/// The status a job ends with for `aclshmem_global_exit(status)`: a process's status keeps the low
/// 8 bits (300 ends it with 44), and a nonzero status whose low 8 bits are 0 (256, say), which
/// would read as success, ends it with 1.
pub fn job_status(status: i32) -> i32 {
    match status & 0xff {
        0 if status != 0 => 1,
        low => low,
    }
}

pub fn exit_process(status: i32) -> ! {
    let me = thread_token();
    if EXIT_OWNER
        .compare_exchange(
            0,
            me,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        )
        .is_err()
    {
        loop {
            std::thread::park();
        }
    }
    EXIT_STATUS.store(status, std::sync::atomic::Ordering::SeqCst);
    ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let hooks: Vec<fn(i32)> = BEFORE_EXIT.locked().clone();
    for h in hooks {
        h(status);
    }
    // SAFETY: getpid has no preconditions.
    if me == u64::from(unsafe { libc::getpid() }.unsigned_abs()) {
        std::process::exit(status)
    }
    {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
    }
    // SAFETY: fflush(NULL) flushes every C stream; _exit ends the process without the handlers.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// The [`thread_token`] of the thread in [`exit_process`] (0: none).
static EXIT_OWNER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The calling thread's id (never 0).
fn thread_token() -> u64 {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    u64::from(tid.unsigned_abs()).max(1)
}

/// What [`exit_process`] runs before `exit`: a network engine stops every thread of this process
/// from driving it, since `exit` runs the engine library's destructors while such a thread may
/// be inside it (UCX then aborted with "failed to modify event handler").
static BEFORE_EXIT: Mutex<Vec<fn(i32)>> = Mutex::new(Vec::new());

/// How the whole job is ended (the runtime's global exit, registered at init: [`on_job_end`]).
static JOB_END: std::sync::OnceLock<fn(i32)> = std::sync::OnceLock::new();

/// Registers how [`end_job`] ends the whole job (once; the runtime's global exit, which tells
/// every PE through the bootstrap).
pub fn on_job_end(end: fn(i32)) {
    let _ = JOB_END.set(end);
}

/// Ends the whole job with `status` (every PE exits), for a layer below the runtime that finds
/// the job unable to go on (a peer that stopped answering); this process only when no job end is
/// registered. Never returns.
pub fn end_job(status: i32) -> ! {
    LIBRARY_ENDS_JOB.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(end) = JOB_END.get() {
        end(status);
    }
    exit_process(status)
}

/// Set by [`end_job`]: the job's end comes from the library on this PE, not from the program's
/// `aclshmem_global_exit` (the end's notice says so).
static LIBRARY_ENDS_JOB: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this PE's library (not its program) ended the job ([`end_job`]).
pub fn library_ends_job() -> bool {
    LIBRARY_ENDS_JOB.load(std::sync::atomic::Ordering::SeqCst)
}

/// Registers `hook` with [`exit_process`] (once); it gets the exit status.
pub fn before_exit(hook: fn(i32)) {
    let mut hooks = BEFORE_EXIT.locked();
    if !hooks.iter().any(|&h| std::ptr::fn_addr_eq(h, hook)) {
        hooks.push(hook);
    }
}

static EXIT_STATUS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

/// The status [`exit_process`] was called with (1 before).
pub fn exit_status() -> i32 {
    EXIT_STATUS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether [`exit_process`] was called: the job is ending, no collective may run.
pub fn ending() -> bool {
    ENDING.load(std::sync::atomic::Ordering::SeqCst)
}

/// Hooks run when the process exits normally (`exit`, or a return from `main`), newest first,
/// with the exit status: [`at_normal_exit`].
static NORMAL_EXIT: Mutex<Vec<fn(i32)>> = Mutex::new(Vec::new());
/// The process that registered the exit handler: a child forked from it inherits the handler and
/// the library's state but is no PE, so its exit runs no hook.
static NORMAL_EXIT_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[cfg(target_env = "gnu")]
unsafe extern "C" {
    /// glibc's `on_exit`: like `atexit`, and the handler learns the exit status.
    pub(crate) fn on_exit(
        handler: extern "C" fn(std::ffi::c_int, *mut std::ffi::c_void),
        arg: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

#[cfg(target_env = "gnu")]
extern "C" fn run_normal_exit(status: std::ffi::c_int, _: *mut std::ffi::c_void) {
    run_normal_exit_hooks(status)
}

#[cfg(not(target_env = "gnu"))]
extern "C" fn run_normal_exit() {
    // the status is not known here: taken as a normal end
    run_normal_exit_hooks(0)
}

fn run_normal_exit_hooks(status: i32) {
    if std::process::id() != NORMAL_EXIT_PID.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let hooks: Vec<fn(i32)> = NORMAL_EXIT.locked().clone();
    for h in hooks.iter().rev() {
        h(status);
    }
}

/// Runs `hook(status)` when the process exits through `exit` (a return from `main` included),
/// after the handlers the program registered later and before those it registered earlier;
/// hooks of the library run newest first. Not in a forked child, and not when the job ends from
/// the library's own thread ([`exit_process`]: `_exit`). A hook registered twice runs once.
pub fn at_normal_exit(hook: fn(i32)) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        NORMAL_EXIT_PID.store(std::process::id(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: registers a plain extern "C" function; its argument is unused.
        #[cfg(target_env = "gnu")]
        let rc = unsafe { on_exit(run_normal_exit, std::ptr::null_mut()) };
        // SAFETY: registers a plain extern "C" function without arguments.
        #[cfg(not(target_env = "gnu"))]
        let rc = unsafe { libc::atexit(run_normal_exit) };
        if rc != 0 {
            log::warn!("could not register the library's exit handler");
        }
    });
    let mut hooks = NORMAL_EXIT.locked();
    if !hooks.iter().any(|&h| std::ptr::fn_addr_eq(h, hook)) {
        hooks.push(hook);
    }
}

/// Descriptors the library may need beyond what its parts reserve (the program's own, the
/// heaps, the library's other sockets).
const FILES_SPARE: u64 = 256;
/// The descriptors the live [`FileReservation`]s of this process asked for.
static FILES_RESERVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Descriptors one part of the library needs for as long as it lives (PE 0's config store: two
/// connections per PE; UCX over tcp: up to two sockets per peer), counted while the reservation
/// lives.
#[derive(Debug)]
pub struct FileReservation(u64);

impl Drop for FileReservation {
    fn drop(&mut self) {
        FILES_RESERVED.fetch_sub(self.0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Reserves `n` descriptors for `what`: raises this process's soft open-file limit when it is
/// lower than every live reservation plus a spare 256 (the usual soft limit is 1024, so a job of
/// 500 PEs exhausted PE 0's with the config store's connections alone, and one of a thousand
/// across nodes would fail with `EMFILE` halfway through a collective): up to the hard limit, as
/// Go's runtime does for every program. A hard limit that is itself too low is logged (raise it
/// with `ulimit -Hn`); the job goes on, and fails only if it does open that many.
pub fn reserve_files(n: u64, what: &str) -> FileReservation {
    let want = FILES_RESERVED
        .fetch_add(n, std::sync::atomic::Ordering::Relaxed)
        .saturating_add(n)
        .saturating_add(FILES_SPARE);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= want {
        return FileReservation(n);
    }
    let new = if lim.rlim_max == libc::RLIM_INFINITY {
        want
    } else {
        want.min(lim.rlim_max)
    };
    if new > lim.rlim_cur {
        let raised = libc::rlimit {
            rlim_cur: new,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: a valid rlimit; the soft limit stays within the hard one.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            log::debug!("open-file limit raised from {} to {new} ({what})", lim.rlim_cur);
        }
    }
    if new < want {
        log::warn!(
            "{what} may need {want} open files in all, but the hard limit is {}: \
             connections beyond it will fail (raise it with `ulimit -Hn`)",
            lim.rlim_max
        );
    }
    FileReservation(n)
}

/// Reserves `len` bytes of address space (no memory, `PROT_NONE`) exactly at `at` if nothing is
/// mapped there: `MAP_FIXED_NOREPLACE` fails rather than replace a mapping, and so does an address
/// outside the process's address space. `None` when the range is not free.
pub fn reserve_exactly(at: usize, len: usize) -> Option<usize> {
    if let Some((name, _)) = sanitizer_runtime() {
        // its `mmap` interceptor drops hints in its own ranges but keeps `MAP_FIXED_NOREPLACE`,
        // and then maps page 0 (as root) and aborts: ask for no address at all
        log::debug!("{name} is loaded: no reservation at {at:#x}, the system chooses");
        return None;
    }
    // SAFETY: an anonymous, inaccessible reservation that never replaces an existing mapping.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    if p as usize != at {
        // a kernel older than 4.17 takes the flag for a hint and maps elsewhere
        // SAFETY: the reservation just made, not used by anything.
        unsafe { libc::munmap(p, len) };
        return None;
    }
    Some(at)
}

/// A sanitizer runtime with its own fixed address layout loaded in this process (ThreadSanitizer,
/// MemorySanitizer: their shadow memory covers fixed ranges, such as the heaps' same-address
/// windows), by name and the address of its entry point (to find the object it is linked into).
pub fn sanitizer_runtime() -> Option<(&'static str, usize)> {
    static FOUND: std::sync::OnceLock<Option<(&'static str, usize)>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        [
            ("ThreadSanitizer", c"__tsan_init"),
            ("MemorySanitizer", c"__msan_init"),
        ]
        .into_iter()
        .find_map(|(name, sym)| {
            // SAFETY: a lookup by NUL-terminated name in the global scope; nothing is called.
            let at = unsafe { libc::dlsym(libc::RTLD_DEFAULT, sym.as_ptr()) };
            (!at.is_null()).then_some((name, at as usize))
        })
    })
}

/// Bytes available to this user on the file system holding `dir` (POSIX shared memory's
/// `/dev/shm`, the log directory).
pub fn free_space(dir: impl AsRef<std::path::Path>) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_ref().as_os_str().as_bytes()).ok()?;
    // SAFETY: st is a plain out-parameter; c is a valid path string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

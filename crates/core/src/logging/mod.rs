//! Logging: a `log` facade backend with the original's levels, sinks and callback.
//!
//! * Threshold: 0 debug, 1 info, 2 warn, 3 error, 4 fatal; initial WARN; `SHMEM_LOG_LEVEL` overrides
//!   every level the program sets (spec 8.8).
//! * Sink: an installed extern logger receives *every* message (whatever the level) and nothing is
//!   written elsewhere (messages of the library's own threads through one relay thread: see
//!   [`internal_thread`]); otherwise stdout (`SHMEM_LOG_TO_STDOUT=1`) or a log file created on the first
//!   message in `SHMEM_LOG_PATH` (default `shmem/log` in the home directory; see [`file`]). Formatting and writing of the stdout/file
//!   sink are done by `env_logger`.
//!
//! `unsafe`: local time and the thread id come from libc, and the extern logger is a C callback.

use std::ffi::{CString, c_char, c_int};
use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::config;

mod file;

pub const DEBUG: i32 = 0;
pub const INFO: i32 = 1;
pub const WARN: i32 = 2;
pub const ERROR: i32 = 3;
pub const FATAL: i32 = 4;

static LEVEL: AtomicI32 = AtomicI32::new(WARN);
static EXTERN: OnceLock<unsafe extern "C" fn(c_int, *const c_char)> = OnceLock::new();
static SINK: OnceLock<env_logger::Logger> = OnceLock::new();
/// See [`prefer_stderr`].
static STDERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Target used for FATAL messages (the `log` crate has no fatal level).
pub const FATAL_TARGET: &str = "aclshmem::fatal";

struct Backend;

fn level_of(record: &log::Metadata) -> i32 {
    match record.level() {
        log::Level::Error if record.target() == FATAL_TARGET => FATAL,
        log::Level::Error => ERROR,
        log::Level::Warn => WARN,
        log::Level::Info => INFO,
        log::Level::Debug | log::Level::Trace => DEBUG,
    }
}

fn level_name(level: i32) -> &'static str {
    ["debug", "info", "warn", "error", "fatal"][level.clamp(0, 4) as usize]
}

impl log::Log for Backend {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        EXTERN.get().is_some() || level_of(metadata) >= LEVEL.load(Ordering::Relaxed)
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let file = record
            .file()
            .map(|f| f.rsplit('/').next().unwrap_or(f))
            .unwrap_or("?");
        let text = format!(
            "[SHM_SHMEM {}:{}] {}",
            file,
            record.line().unwrap_or(0),
            record.args()
        );
        if let Some(func) = EXTERN.get() {
            let msg = CString::new(text.replace('\0', " ")).unwrap_or_default();
            let level = level_of(record.metadata());
            if INTERNAL.with(|c| c.get()) {
                relay(*func, level, msg);
                return;
            }
            // SAFETY: the callback was installed by the program with the documented signature; the
            // message pointer stays valid for the duration of the call, as documented.
            unsafe { func(level, msg.as_ptr()) };
            return;
        }
        sink().log(record);
        // no log file could be made (no descriptor left, no usable directory): errors reach
        // stderr all the same
        if level_of(record.metadata()) >= ERROR && errors_on_stderr() {
            write_stderr(&format!("aclshmem: {}\n", record.args()));
        }
    }

    fn flush(&self) {
        if let Some(s) = SINK.get() {
            log::Log::flush(s);
        }
    }
}

thread_local! {
    /// Whether this thread is one of the library's own ([`internal_thread`]).
    static INTERNAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as one of the library's own (the network transport's progress, the
/// drive helper, the config store and its watcher): its messages reach an extern logger through
/// [`relay`], never by a call from this thread. Such a thread may hold a lock that a program
/// thread waits for while the program's logger waits for that program thread (a Python logger
/// takes the interpreter's lock, which the waiting thread holds): both would wait for ever.
pub fn internal_thread() {
    INTERNAL.with(|c| c.set(true));
}

/// Whether the calling thread is one of the library's own ([`internal_thread`]).
pub fn is_internal_thread() -> bool {
    INTERNAL.with(|c| c.get())
}

/// Messages of the library's own threads for the extern logger, delivered in order by one
/// thread of their own that holds no lock of the library. Bounded: when the logger stops taking
/// messages, later ones are dropped (and counted) rather than piling up.
fn relay(func: unsafe extern "C" fn(c_int, *const c_char), level: i32, msg: CString) {
    type Queue = std::sync::mpsc::SyncSender<(i32, CString)>;
    static QUEUE: OnceLock<Option<Queue>> = OnceLock::new();
    static DROPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(i32, CString)>(4096);
        std::thread::Builder::new()
            .name("aclshmem-log".into())
            .spawn(move || {
                for (level, msg) in rx {
                    // SAFETY: as for a direct call (the program's callback, a message valid for
                    // the call).
                    unsafe { func(level, msg.as_ptr()) };
                }
            })
            .ok()
            .map(|_| tx)
    });
    let sent = queue.as_ref().is_some_and(|q| q.try_send((level, msg)).is_ok());
    if !sent {
        let n = DROPPED.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_power_of_two() {
            write_stderr(&format!(
                "aclshmem: {n} message(s) of the library's threads could not reach the extern logger\n"
            ));
        }
    }
}

/// Local time formatted with strftime.
fn timestamp(fmt: &str) -> String {
    let fmt = CString::new(fmt).unwrap_or_default();
    let mut buf = [0u8; 64];
    // SAFETY: time/localtime_r/strftime get valid pointers to locals; strftime bounds its output by
    // the buffer length we pass.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), &tm);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

/// Whether error messages reach stderr by themselves: the log file could not be made.
pub fn errors_on_stderr() -> bool {
    EXTERN.get().is_none() && file::no_file() && !to_terminal()
}

/// Whether the log sink is stdout or stderr rather than files.
fn to_terminal() -> bool {
    matches!(config::SHMEM_LOG_TO_STDOUT.value(), Ok(true)) || STDERR.load(Ordering::Relaxed)
}

fn sink() -> &'static env_logger::Logger {
    SINK.get_or_init(|| {
        let mut b = env_logger::Builder::new();
        b.filter_level(log::LevelFilter::Trace);
        b.format(|buf, record| {
            let lvl = level_name(level_of(record.metadata()));
            let micros = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_micros())
                .unwrap_or(0);
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            let file = record
                .file()
                .map(|f| f.rsplit('/').next().unwrap_or(f))
                .unwrap_or("?");
            writeln!(
                buf,
                "{}.{:06} {} {} pid[{}] [SHM_SHMEM {}:{}] {}",
                timestamp("%Y-%m-%d %H:%M:%S"),
                micros,
                lvl,
                tid,
                std::process::id(),
                file,
                record.line().unwrap_or(0),
                record.args()
            )
        });
        if matches!(config::SHMEM_LOG_TO_STDOUT.value(), Ok(true)) {
            b.target(env_logger::Target::Stdout);
        } else if STDERR.load(Ordering::Relaxed) {
            b.target(env_logger::Target::Stderr);
        } else {
            b.target(env_logger::Target::Pipe(Box::new(file::Pipe(file::Sink::new()))));
        }
        b.build()
    })
}

/// Writes `text` to stderr with one write, so that the lines of PEs sharing a terminal or a pipe do
/// not interleave (`eprintln!` writes its pieces separately).
pub fn write_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Sends the messages that would go to the log file to stderr instead (`SHMEM_LOG_TO_STDOUT=1`
/// still wins): the OpenSHMEM surface's `SHMEM_DEBUG`, which prints to stderr as Sandia
/// OpenSHMEM does. Takes effect only before the first message is written; returns whether it did.
pub fn prefer_stderr() -> bool {
    STDERR.store(true, Ordering::Relaxed);
    SINK.get().is_none()
}

static ONCE: std::sync::Once = std::sync::Once::new();

/// Installs the backend once per process. Cheap after the first call: one load, inlined into every
/// C entry point (the installation itself stays out of line).
#[inline]
pub fn ensure() {
    if !ONCE.is_completed() {
        install();
    }
}

#[cold]
fn install() {
    ONCE.call_once(|| {
        if log::set_boxed_logger(Box::new(Backend)).is_ok() {
            log::set_max_level(log::LevelFilter::Trace);
        }
        if let Some(l) = env_level() {
            LEVEL.store(l, Ordering::Relaxed);
        } else if let Err(e) = config::SHMEM_LOG_LEVEL.get() {
            // the original's rule (other text: the caller's level is used), said once
            log::warn!("{e} (upper case): ignored, the level the program sets is used");
        }
    });
}

/// `SHMEM_LOG_LEVEL` when it holds one of the five level names.
fn env_level() -> Option<i32> {
    match config::SHMEM_LOG_LEVEL.get().ok().flatten()? {
        "DEBUG" => Some(DEBUG),
        "INFO" => Some(INFO),
        "WARN" => Some(WARN),
        "ERROR" => Some(ERROR),
        "FATAL" => Some(FATAL),
        _ => None,
    }
}

/// `aclshmemx_set_log_level` semantics: the environment wins; 0..=4 accepted.
pub fn set_level(level: i32) -> crate::Result<()> {
    ensure();
    let effective = env_level().unwrap_or(level);
    if !(DEBUG..=FATAL).contains(&effective) {
        return Err(crate::Error::InvalidValue(format!(
            "log level {effective} is outside 0..4"
        )));
    }
    LEVEL.store(effective, Ordering::Relaxed);
    Ok(())
}

/// Current threshold.
pub fn level() -> i32 {
    LEVEL.load(Ordering::Relaxed)
}

/// `aclshmemx_set_extern_logger`: the first non-NULL callback wins, later ones are ignored.
pub fn set_extern(func: Option<unsafe extern "C" fn(c_int, *const c_char)>) {
    ensure();
    if let Some(f) = func {
        let _ = EXTERN.set(f);
    }
}

/// Logs `msg` at `level` (0 debug .. 4 fatal, clamped) with `file`:`line` as its origin: a message
/// of the program's own, through this logger (`aclshmemx_dev_log`).
pub fn log_from(level: i32, file: &str, line: u32, msg: &str) {
    ensure();
    let (lvl, target) = match level.clamp(DEBUG, FATAL) {
        DEBUG => (log::Level::Debug, "aclshmem"),
        INFO => (log::Level::Info, "aclshmem"),
        WARN => (log::Level::Warn, "aclshmem"),
        ERROR => (log::Level::Error, "aclshmem"),
        _ => (log::Level::Error, FATAL_TARGET),
    };
    log::logger().log(
        &log::Record::builder()
            .level(lvl)
            .target(target)
            .file(Some(file))
            .line(Some(line))
            .args(format_args!("{msg}"))
            .build(),
    );
}

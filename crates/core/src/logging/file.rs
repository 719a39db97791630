//! The log file sink (spec 10, `SHMEM_LOG_PATH` and "Log file details"): files
//! `aclshmem_<pid>_<YYYYmmddHHMMSS>.log` in `SHMEM_LOG_PATH` (default `shmem/log` under the home
//! directory of the password database, else the temporary directory), created on the first message
//! (a run without messages leaves no file), mode 0640, made read-only (0440) when closed: when the
//! next file starts (a file never grows past 1 GiB) and when the process ends. At most 50 such
//! files stay in the directory (the oldest go first). A directory that is not owned by this user or
//! root, or that others or the group may write to, gets no file: file logging is off. Nothing is
//! written (and no file is started) while the directory's file system has [`MIN_FREE`] or less
//! available; writing resumes when space is back (checked at most every [`RECHECK`]).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config;
use crate::util::Locked;
use crate::util::free_space;

/// A file is closed and the next one started before it would grow past this.
pub const FILE_LIMIT: u64 = 1 << 30;
/// Log files kept in the directory.
pub const KEEP: usize = 50;
/// Messages are dropped while the log directory's file system has this much or less available.
pub const MIN_FREE: u64 = 10 << 30;
/// How long a free-space reading stays valid (a `statvfs` per message would cost a system call).
const RECHECK: std::time::Duration = std::time::Duration::from_millis(100);
/// `SHMEM_LOG_PATH` values this long or longer are ignored (the default directory is used).
const PATH_LIMIT: usize = 4096;

/// Where the files go: `SHMEM_LOG_PATH` when usable, else `shmem/log` in the home directory.
fn directory() -> PathBuf {
    match config::SHMEM_LOG_PATH.get().ok().flatten() {
        Some(p) if !p.contains("..") && p.len() < PATH_LIMIT => PathBuf::from(p),
        _ => home().join("shmem").join("log"),
    }
}

/// This user's home directory from the password database; the temporary directory when unknown.
fn home() -> PathBuf {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: getpwuid_r fills `pw` and strings in `buf` (its length is passed); `found` is set to
    // `&pw` on success. The strings are read before `buf` goes.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(libc::getuid(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut found);
        if rc == 0 && !found.is_null() && !pw.pw_dir.is_null() {
            let dir = std::ffi::CStr::from_ptr(pw.pw_dir).to_string_lossy().into_owned();
            if !dir.is_empty() {
                return PathBuf::from(dir);
            }
        }
    }
    std::env::temp_dir()
}

/// Whether `dir` may receive log files: owned by this user or root, not writable by group or others.
fn safe_directory(dir: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(dir) else {
        return false;
    };
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    meta.is_dir() && (meta.uid() == me || meta.uid() == 0) && meta.mode() & 0o022 == 0
}

/// Makes a closed log file read-only.
fn seal(path: &Path) {
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o440));
}

struct Open {
    file: File,
    path: PathBuf,
    written: u64,
}

enum State {
    /// No message yet.
    Unopened,
    Open(Open),
    /// No usable directory: messages are dropped (as the original does).
    Off,
}

/// The sink: opens its file on the first message, starts a new one at `limit` bytes.
pub struct Sink {
    dir: Option<PathBuf>,
    limit: u64,
    keep: usize,
    min_free: u64,
    state: Mutex<State>,
    /// When free space was last read and whether there was enough.
    space: Mutex<Option<(std::time::Instant, bool)>>,
}

/// The process's last message reached no file (none could be made: no usable directory, no
/// descriptor; or no room on its file system): error messages go to stderr too ([`super`]), so a
/// failure is never silent.
static NO_FILE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the process's log file could not be made.
pub fn no_file() -> bool {
    NO_FILE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The open file of the process's sink, sealed at exit (see [`seal_at_exit`]).
static CURRENT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Makes the current log file read-only: the process is ending and closes it.
pub fn seal_at_exit(_status: i32) {
    if let Some(path) = CURRENT.locked().take() {
        seal(&path);
    }
}

impl Sink {
    /// The sink of `SHMEM_LOG_PATH` (read when the first message comes).
    pub fn new() -> Sink {
        Sink {
            dir: None,
            limit: FILE_LIMIT,
            keep: KEEP,
            min_free: MIN_FREE,
            state: Mutex::new(State::Unopened),
            space: Mutex::new(None),
        }
    }

    /// A sink writing into `dir` with other limits (tests).
    pub fn with_limits(dir: PathBuf, limit: u64, keep: usize, min_free: u64) -> Sink {
        Sink {
            dir: Some(dir),
            limit,
            keep,
            min_free,
            state: Mutex::new(State::Unopened),
            space: Mutex::new(None),
        }
    }

    fn directory(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(directory)
    }

    /// Whether the directory's file system has more than `min_free` available (read at most every
    /// [`RECHECK`]). A directory that does not exist yet is judged by its nearest existing parent.
    fn room(&self) -> bool {
        let mut space = self.space.locked();
        if let Some((at, ok)) = *space
            && at.elapsed() < RECHECK
        {
            return ok;
        }
        let dir = self.directory();
        let free = dir.ancestors().find_map(free_space);
        let ok = free.is_none_or(|f| f > self.min_free);
        *space = Some((std::time::Instant::now(), ok));
        ok
    }

    /// A new file in the directory (after removing the oldest files beyond `keep - 1`).
    fn open(&self) -> Option<Open> {
        let dir = self.directory();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(&dir)
            .ok()?;
        if !safe_directory(&dir) {
            return None;
        }
        self.prune(&dir);
        let stamp = super::timestamp("%Y%m%d%H%M%S");
        let pid = std::process::id();
        // a second file in the same second gets a counter, never the sealed first one again
        for n in 0..1000 {
            let name = match n {
                0 => format!("aclshmem_{pid}_{stamp}.log"),
                n => format!("aclshmem_{pid}_{stamp}_{n}.log"),
            };
            let path = dir.join(name);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o640)
                .open(&path);
            match file {
                Ok(file) => {
                    if self.dir.is_none() {
                        *CURRENT.locked() = Some(path.clone());
                        crate::util::at_normal_exit(seal_at_exit);
                        crate::util::before_exit(seal_at_exit);
                    }
                    return Some(Open {
                        file,
                        path,
                        written: 0,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            }
        }
        None
    }

    /// Writes `buf` to the current file (starting one when needed); `None` when it reached no
    /// file: no usable directory, or no room on its file system.
    fn write_locked(&self, state: &mut State, buf: &[u8]) -> std::io::Result<Option<usize>> {
        if matches!(*state, State::Off) || !self.room() {
            return Ok(None);
        }
        let full = match &*state {
            State::Open(o) => o.written > 0 && o.written + buf.len() as u64 > self.limit,
            State::Unopened => true,
            State::Off => return Ok(None),
        };
        if full {
            if let State::Open(o) = &*state {
                seal(&o.path);
            }
            *state = match self.open() {
                Some(o) => State::Open(o),
                None => State::Off,
            };
        }
        match state {
            State::Open(o) => {
                let n = o.file.write(buf)?;
                o.written += n as u64;
                Ok(Some(n))
            }
            _ => Ok(None),
        }
    }

    /// Removes the oldest log files so that a new one leaves at most `keep`.
    fn prune(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut logs: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("aclshmem_") && name.ends_with(".log")
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if logs.len() < self.keep {
            return;
        }
        logs.sort();
        let excess = logs.len() + 1 - self.keep.max(1);
        for (_, path) in logs.into_iter().take(excess) {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Default for Sink {
    fn default() -> Self {
        Sink::new()
    }
}

impl Write for &Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut state = self.state.locked();
        let written = self.write_locked(&mut state, buf);
        if self.dir.is_none() {
            // errors reach stderr while this process's messages reach no file
            let filed = matches!(written, Ok(Some(_)));
            NO_FILE.store(!filed, std::sync::atomic::Ordering::Relaxed);
        }
        written.map(|n| n.unwrap_or(buf.len()))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut *self.state.locked() {
            State::Open(o) => o.file.flush(),
            _ => Ok(()),
        }
    }
}

/// The sink as `env_logger` takes it (a boxed writer).
pub struct Pipe(pub Sink);

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&self.0).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&self.0).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aclshmem-logfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn logs(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    #[test]
    fn files_roll_over_at_the_limit_and_the_closed_ones_are_read_only() {
        let dir = scratch("roll");
        let sink = Sink::with_limits(dir.clone(), 100, 50, 0);
        for _ in 0..5 {
            (&sink).write_all(&[b'x'; 60]).unwrap();
        }
        let files = logs(&dir);
        assert_eq!(files.len(), 5, "{files:?}");
        let mut sealed = 0;
        for f in &files {
            let meta = std::fs::metadata(f).unwrap();
            assert_eq!(meta.len(), 60);
            if meta.mode() & 0o777 == 0o440 {
                sealed += 1;
            } else {
                assert_eq!(meta.mode() & 0o777, 0o640, "{f:?}");
            }
        }
        assert_eq!(sealed, 4, "every file but the open one is sealed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn at_most_keep_files_stay() {
        let dir = scratch("keep");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        // other processes' files, older
        for i in 0..6 {
            std::fs::write(dir.join(format!("aclshmem_1_2000010100000{i}.log")), "old").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::write(dir.join("unrelated.txt"), "keep me").unwrap();
        let sink = Sink::with_limits(dir.clone(), 10, 4, 0);
        for _ in 0..3 {
            (&sink).write_all(b"0123456789").unwrap();
        }
        let files = logs(&dir);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"unrelated.txt".to_string()), "{names:?}");
        let ours = names
            .iter()
            .filter(|n| n.starts_with(&format!("aclshmem_{}_", std::process::id())));
        assert_eq!(ours.count(), 3, "{names:?}");
        assert_eq!(names.len(), 4 + 1, "at most 4 log files: {names:?}");
        assert!(!names.contains(&"aclshmem_1_20000101000000.log".to_string()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unsafe_directories_get_no_file() {
        for mode in [0o777, 0o770, 0o752] {
            let dir = scratch(&format!("mode{mode:o}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            let sink = Sink::with_limits(dir.clone(), FILE_LIMIT, KEEP, 0);
            (&sink).write_all(b"message\n").unwrap();
            assert!(logs(&dir).is_empty(), "mode {mode:o}: {:?}", logs(&dir));
            let _ = std::fs::remove_dir_all(&dir);
        }
        // a directory of another user (not root)
        let dir = scratch("other");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("chown (the tests run as root)");
        let sink = Sink::with_limits(dir.clone(), FILE_LIMIT, KEEP, 0);
        (&sink).write_all(b"message\n").unwrap();
        assert!(logs(&dir).is_empty(), "{:?}", logs(&dir));
        let _ = std::fs::remove_dir_all(&dir);
        let dir = scratch("mode750");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        let sink = Sink::with_limits(dir.clone(), FILE_LIMIT, KEEP, 0);
        (&sink).write_all(b"message\n").unwrap();
        assert_eq!(logs(&dir).len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn nothing_is_written_while_free_space_is_at_the_limit() {
        let dir = scratch("space");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        let free = free_space(&dir).expect("statvfs of the scratch directory");
        // a limit above what is free: no file, messages dropped
        let full = Sink::with_limits(dir.clone(), FILE_LIMIT, KEEP, free + (1 << 30));
        (&full).write_all(b"dropped\n").unwrap();
        assert!(logs(&dir).is_empty(), "{:?}", logs(&dir));
        // the process's own default: 10 GiB
        assert_eq!(Sink::new().min_free, 10 << 30);
        // space back (a limit below what is free): the next message after the recheck is written
        let sink = Sink::with_limits(dir.clone(), FILE_LIMIT, KEEP, free / 2);
        (&sink).write_all(b"kept\n").unwrap();
        let files = logs(&dir);
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(std::fs::read(&files[0]).unwrap(), b"kept\n");
        // a reading that says no room drops messages until it is older than RECHECK, then the
        // space is read again and writing resumes
        sink.space.locked().replace((std::time::Instant::now(), false));
        (&sink).write_all(b"dropped\n").unwrap();
        assert_eq!(std::fs::read(&files[0]).unwrap(), b"kept\n");
        sink.space
            .locked()
            .replace((std::time::Instant::now() - RECHECK, false));
        (&sink).write_all(b"again\n").unwrap();
        assert_eq!(std::fs::read(&files[0]).unwrap(), b"kept\nagain\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Removal of the POSIX shared-memory objects a job may leave behind.
//!
//! The library names its objects `aclshmem-<user>-<JOB_ID>-…`, so once a job is over the
//! launcher can remove whatever a crashed PE did not unlink.

use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// Where Linux keeps POSIX shared-memory objects.
pub const SHM_DIR: &str = "/dev/shm";

/// Name prefix of every shared-memory object of the job `job_id`.
pub fn shm_prefix(user: &str, job_id: &str) -> String {
    format!("aclshmem-{user}-{job_id}-")
}

/// Name of the effective user, or the numeric uid when it has no passwd entry.
pub fn user_name() -> String {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    passwd_name(uid).unwrap_or_else(|| uid.to_string())
}

fn passwd_name(uid: libc::uid_t) -> Option<String> {
    let mut buf_len = 1024usize;
    loop {
        let mut buf = vec![0 as libc::c_char; buf_len];
        // SAFETY: an all-zero passwd (integers and null pointers) is a valid value.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer refers to a live local of the right type, and `buf_len`
        // is the true length of `buf`; getpwuid_r writes only inside them.
        let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf_len, &mut result) };
        if rc == libc::ERANGE && buf_len < (1 << 20) {
            buf_len *= 4;
            continue;
        }
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        // SAFETY: on success pw_name points to a NUL-terminated string inside `buf`,
        // which is still alive here.
        let name = unsafe { CStr::from_ptr(pwd.pw_name) };
        let name = name.to_str().ok()?;
        return (!name.is_empty()).then(|| name.to_owned());
    }
}

/// Removes every non-directory entry of `dir` whose name starts with `prefix` and
/// returns the paths removed. Errors (missing directory, races) are ignored.
pub fn remove_with_prefix(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let matches = entry.file_name().to_str().is_some_and(|n| n.starts_with(prefix));
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if matches && !is_dir && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// Removes this user's objects of earlier jobs that no process will unlink any more: the PE that
/// created one (its pid is in the name, `aclshmem-<user>-<job>-pe<N>-<pid>-...`) is gone, no
/// process holds the shared `flock` the library keeps on each object until it removes the name
/// (a PE in another PID namespace, whose pid means nothing here, still holds it), and the object
/// is older than `min_age` (a job whose launcher was SIGKILLed while its PEs were in init left
/// them; a live job unlinks its names once every PE has mapped them). Returns the paths removed.
pub fn remove_stale(dir: &Path, user: &str, min_age: std::time::Duration) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let prefix = format!("aclshmem-{user}-");
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('-').collect();
        let Some(pid) = parts
            .get(1)
            .filter(|p| p.starts_with("pe"))
            .and(parts.get(2))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|&p| p > 0)
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= min_age));
        if gone && old && !in_use(&entry.path()) && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// Whether a process holds a lock on the file `path` (the library's owner lock on a heap object).
fn in_use(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    // SAFETY: flock on a descriptor we own; the lock (if taken) goes with `file`.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// Removes the job's shared-memory objects from [`SHM_DIR`] when dropped.
pub struct ShmCleanup {
    prefix: String,
    verbose: bool,
}

impl ShmCleanup {
    pub fn new(job_id: &str, verbose: bool) -> Self {
        ShmCleanup {
            prefix: shm_prefix(&user_name(), job_id),
            verbose,
        }
    }
}

impl Drop for ShmCleanup {
    fn drop(&mut self) {
        for path in remove_with_prefix(Path::new(SHM_DIR), &self.prefix) {
            if self.verbose {
                say!("aclshmrun: removed leftover {}", path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_format() {
        assert_eq!(shm_prefix("alice", "00ff"), "aclshmem-alice-00ff-");
    }

    #[test]
    fn user_name_is_nonempty() {
        let name = user_name();
        assert!(!name.is_empty());
        assert!(!name.contains('/'));
    }

    #[test]
    fn removes_only_matching_entries() {
        let dir = std::env::temp_dir().join(format!("aclshmrun-cleanup-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("aclshmem-u-j1-dir")).unwrap();
        for f in [
            "aclshmem-u-j1-heap0",
            "aclshmem-u-j1-x",
            "aclshmem-u-j2-heap0",
            "other",
        ] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        let mut removed = remove_with_prefix(&dir, "aclshmem-u-j1-");
        removed.sort();
        assert_eq!(
            removed,
            vec![dir.join("aclshmem-u-j1-heap0"), dir.join("aclshmem-u-j1-x")]
        );
        assert!(dir.join("aclshmem-u-j2-heap0").exists());
        assert!(dir.join("other").exists());
        assert!(dir.join("aclshmem-u-j1-dir").exists());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(remove_with_prefix(&dir, "x").is_empty());
    }

    /// Objects of a dead PE older than the limit go; a live PE's, a fresh one, another user's and
    /// other names stay.
    #[test]
    fn stale_objects_of_dead_pes_are_removed() {
        let dir = std::env::temp_dir().join(format!("aclshmrun-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dead = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            let pid = c.id();
            c.wait().unwrap();
            pid
        };
        let me = std::process::id();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
        let make = |name: &str, aged: bool| {
            let f = std::fs::File::create(dir.join(name)).unwrap();
            if aged {
                f.set_modified(old).unwrap();
            }
        };
        make(&format!("aclshmem-u-0123abcd-pe1-{dead}-0-d"), true);
        make(&format!("aclshmem-u-0123abcd-pe0-{me}-0-d"), true);
        // a PE of another PID namespace: its pid is dead here, but it holds the object's lock
        let held = format!("aclshmem-u-89abcdef-pe0-{dead}-0-d");
        make(&held, true);
        let holder = std::fs::File::open(dir.join(&held)).unwrap();
        {
            use std::os::fd::AsRawFd;
            // SAFETY: flock on an open descriptor.
            assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_SH) }, 0);
        }
        make(&format!("aclshmem-u-4567ef01-pe2-{dead}-3-s"), false);
        make(&format!("aclshmem-v-0123abcd-pe1-{dead}-0-d"), true);
        make("aclshmem-u-something-else", true);
        let removed = remove_stale(&dir, "u", std::time::Duration::from_secs(30));
        let names: Vec<String> = removed
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("aclshmem-u-0123abcd-pe1-{dead}-0-d")]);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 5);
        drop(holder);
        let removed = remove_stale(&dir, "u", std::time::Duration::from_secs(30));
        assert_eq!(removed, [dir.join(&held)], "the lock gone, the object is stale");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

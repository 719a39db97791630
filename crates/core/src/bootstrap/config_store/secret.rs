//! The per-job secret of a DEFAULT-mode job started without a launcher token.
//!
//! With `ACLSHMEM_JOB_TOKEN` (set by aclshmrun, or by the user) every PE already knows the secret,
//! and a unique id carries its own. Without either there is no secret an outsider could not know,
//! so PE 0 makes one: 32 random bytes, written (hex) into a file of mode 0600 in a directory of
//! mode 0700 that only the job's user can read — `ACLSHMEM_JOB_SECRET_DIR`, default
//! `$HOME/.aclshmem`, else `$XDG_RUNTIME_DIR/aclshmem` — named after the store's address. The
//! other PEs read it (waiting for it at most `shm_init_timeout`). The file is removed once every PE
//! is connected, and when the store stops.
//!
//! A reader accepts the file only when it is a regular file owned by this user and readable by
//! nobody else, in a directory nobody else may write to: a file planted by someone else is
//! ignored (the PE then waits for PE 0's until its timeout).

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config;
use crate::error::{Error, Result};

/// Random bytes of a secret (hex-encoded: twice as many characters).
const SECRET_BYTES: usize = 32;

/// A fresh random secret, as the text PEs present.
pub fn random() -> Result<Vec<u8>> {
    let mut raw = [0u8; SECRET_BYTES];
    getrandom::fill(&mut raw).map_err(|e| Error::Inner(format!("no random job secret: {e}")))?;
    Ok(raw
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .into_bytes())
}

/// The directory of secret files: ACLSHMEM_JOB_SECRET_DIR, else `$HOME/.aclshmem`, else
/// `$XDG_RUNTIME_DIR/aclshmem`.
pub fn dir() -> Result<PathBuf> {
    if let Some(d) = config::ACLSHMEM_JOB_SECRET_DIR.get()? {
        return Ok(PathBuf::from(d));
    }
    let from = |var: &str, sub: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(|v| PathBuf::from(v).join(sub))
    };
    from("HOME", ".aclshmem")
        .or_else(|| from("XDG_RUNTIME_DIR", "aclshmem"))
        .ok_or_else(|| {
            Error::InvalidParam(
                "no ACLSHMEM_JOB_TOKEN and nowhere to publish a job secret (neither ACLSHMEM_JOB_SECRET_DIR, \
                 HOME nor XDG_RUNTIME_DIR is set)"
                    .into(),
            )
        })
}

/// This node's host name.
fn host_name() -> String {
    let mut host = [0u8; 256];
    // SAFETY: the buffer and its length are passed; gethostname NUL-terminates within it or
    // truncates.
    unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len() - 1) };
    let end = host.iter().position(|&b| b == 0).unwrap_or(host.len());
    String::from_utf8_lossy(&host[..end]).into_owned()
}

/// The file of the job whose store is at `addr`. A loopback address names one node only, so its
/// file names the node too (homes are often shared between nodes). torchrun's run id
/// (`TORCHELASTIC_RUN_ID`, unless empty or `none`) names the job: a PE of another job started on
/// the same address at the same time took this job's secret and was admitted as one of its PEs.
pub fn path_for(dir: &Path, addr: &SocketAddr) -> PathBuf {
    let run = config::TORCHELASTIC_RUN_ID.get().ok().flatten();
    path_of_run(
        dir,
        addr,
        run.as_deref().filter(|r| !r.is_empty() && *r != "none"),
    )
}

/// Longest run id a secret file's name holds as it is (longer ones are cut and hashed).
const MAX_RUN_ID: usize = 96;

fn path_of_run(dir: &Path, addr: &SocketAddr, run: Option<&str>) -> PathBuf {
    let mut name = String::from("job-secret-");
    if addr.ip().is_loopback() {
        name.push_str(&host_name());
        name.push('-');
    }
    name.push_str(&format!("{}-{}", addr.ip(), addr.port()));
    if let Some(run) = run {
        name.push_str("-run-");
        if run.len() > MAX_RUN_ID {
            // a file name holds 255 bytes: a longer run id (torchrun's `--rdzv-id` is free text)
            // is cut, with a hash of all of it, the same on every PE (it failed PE 0's init with
            // "File name too long", and the others waited for the secret)
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in run.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            let cut = (0..=MAX_RUN_ID)
                .rev()
                .find(|&i| run.is_char_boundary(i))
                .unwrap_or(0);
            name.push_str(&format!("{}-{h:016x}", &run[..cut]));
        } else {
            name.push_str(run);
        }
    }
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(name)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Creates `dir` (mode 0700) if needed and checks that nobody else may write to it.
fn private_dir(dir: &Path) -> Result<()> {
    let bad = |why: String| {
        Error::InvalidParam(format!(
            "job secret directory {} {why} (set ACLSHMEM_JOB_SECRET_DIR, or ACLSHMEM_JOB_TOKEN)",
            dir.display()
        ))
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| bad(format!("cannot be created: {e}")))?;
    check_dir(dir).map_err(bad)
}

fn check_dir(dir: &Path) -> std::result::Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("is not usable: {e}"))?;
    if !meta.is_dir() {
        return Err("is not a directory".into());
    }
    if meta.uid() != euid() {
        return Err("belongs to another user".into());
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err("may be written by other users".into());
    }
    Ok(())
}

/// A secret file PE 0 published; removed when dropped (if it still holds this job's secret).
pub struct Published {
    path: PathBuf,
    secret: Vec<u8>,
}

impl Drop for Published {
    fn drop(&mut self) {
        if read(&self.path).ok().as_deref() == Some(self.secret.as_slice()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// PE 0: writes `secret` to `path` (mode 0600, replacing a stale file atomically).
pub fn publish(path: &Path, secret: &[u8]) -> Result<Published> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::InvalidParam(format!("bad job secret path {}", path.display())))?;
    private_dir(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("job-secret"),
        std::process::id()
    ));
    let failed = |e: std::io::Error| {
        Error::Inner(format!(
            "cannot publish the job secret in {}: {e}",
            path.display()
        ))
    };
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(failed)?;
    let written = f.write_all(secret).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(failed(e));
    }
    Ok(Published {
        path: path.to_path_buf(),
        secret: secret.to_vec(),
    })
}

/// Reads a published secret; `Err` says why it is not (yet) usable.
pub fn read(path: &Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    if let Some(dir) = path.parent() {
        check_dir(dir).map_err(|why| format!("directory {} {why}", dir.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let meta = f.metadata().map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() || meta.uid() != euid() || meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a private file of this user (ignored)",
            path.display()
        ));
    }
    let mut text = Vec::new();
    Read::by_ref(&mut f)
        .take(4 * SECRET_BYTES as u64)
        .read_to_end(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() != 2 * SECRET_BYTES || !text.iter().all(u8::is_ascii_hexdigit) {
        return Err(format!("{} holds no job secret (yet)", path.display()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("aclshmem-secret-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Two torchrun jobs on one address: their run ids give them different files (a PE of the
    /// second took the first's secret and was admitted as the first's PE).
    #[test]
    fn run_ids_name_the_file() {
        let dir = Path::new("/d");
        let addr: SocketAddr = "10.0.0.1:29501".parse().unwrap();
        let a = path_of_run(dir, &addr, Some("job-a"));
        let b = path_of_run(dir, &addr, Some("job/b"));
        assert_ne!(a, b);
        assert_eq!(a, dir.join("job-secret-10.0.0.1-29501-run-job-a"));
        assert_eq!(b, dir.join("job-secret-10.0.0.1-29501-run-job_b"));
        assert_eq!(
            path_of_run(dir, &addr, None),
            dir.join("job-secret-10.0.0.1-29501")
        );
        // a run id too long for a file name: cut and hashed, two such ids still apart
        let long_a = "r".repeat(300);
        let long_b = format!("{}s", "r".repeat(299));
        let (pa, pb) = (
            path_of_run(dir, &addr, Some(&long_a)),
            path_of_run(dir, &addr, Some(&long_b)),
        );
        assert_ne!(pa, pb);
        for p in [&pa, &pb] {
            assert!(p.file_name().unwrap().len() < 200, "{p:?}");
        }
        assert_eq!(pa, path_of_run(dir, &addr, Some(&long_a)));
    }

    #[test]
    fn published_secrets_are_private_and_removed() {
        let dir = scratch("publish");
        let addr: SocketAddr = "127.0.0.1:8998".parse().unwrap();
        let path = path_for(&dir, &addr);
        assert!(
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("127.0.0.1-8998")
        );
        let secret = random().unwrap();
        assert_eq!(secret.len(), 64);
        assert_ne!(secret, random().unwrap());
        assert!(read(&path).is_err());
        let published = publish(&path, &secret).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read(&path).unwrap(), secret);
        // a stale file is replaced
        let newer = random().unwrap();
        let again = publish(&path, &newer).unwrap();
        assert_eq!(read(&path).unwrap(), newer);
        // the stale publisher does not remove the newer secret
        drop(published);
        assert_eq!(read(&path).unwrap(), newer);
        drop(again);
        assert!(!path.exists());
        // a file others may read is not taken
        std::fs::write(&path, &newer).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read(&path).unwrap_err().contains("not a private file"));
        // nor one in a directory others may write to
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(read(&path).unwrap_err().contains("written by other users"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Starting a job: one `Command` per PE, tagged output, supervision and cleanup.

use std::ffi::{OsStr, OsString};
use std::io;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cleanup::ShmCleanup;
use crate::cli::Args;
use crate::job::{Job, TOKEN_VAR, Token};
use crate::output::{Dest, Readers};
use crate::supervise::Supervisor;

/// Exit status when PROG cannot be started (as a shell's "command not found").
pub const CANNOT_EXEC_STATUS: i32 = 127;
/// Exit status for a failure of the launcher itself.
pub const LAUNCHER_ERROR_STATUS: i32 = 1;
/// How long tagged output may still be drained after the last PE has ended.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// Runs the job described by `args`; returns the launcher's exit status.
pub fn run(args: &Args) -> i32 {
    let job = match Job::new(args.np, args.addr, args.port, args.mem_size) {
        Ok(job) => job,
        Err(e) => {
            eprintln!("aclshmrun: {e}");
            return LAUNCHER_ERROR_STATUS;
        }
    };
    // Dropped last: removes the job's shared-memory objects on every path out.
    let _cleanup = ShmCleanup::new(&job.job_id, args.verbose);
    let mut sup = match Supervisor::new(args.verbose) {
        Ok(sup) => sup,
        Err(e) => {
            eprintln!("aclshmrun: cannot install signal handlers: {e}");
            return LAUNCHER_ERROR_STATUS;
        }
    };
    if args.verbose {
        eprintln!(
            "aclshmrun: job {}: {} PEs, config store {}",
            job.job_id,
            job.n_pes,
            job.url()
        );
    }
    let mut readers = args.tag_output.then(Readers::new);
    for rank in 0..job.n_pes {
        if let Err(code) = start_pe(&mut sup, readers.as_mut(), &job, args, rank) {
            sup.shutdown();
            return code;
        }
        if let Some(sig) = sup.pending_signal() {
            return sup.stop_on_signal(sig);
        }
    }
    let timeout = (args.timeout > 0).then(|| Duration::from_secs(args.timeout));
    let status = sup.wait(timeout);
    if let Some(readers) = readers {
        readers.finish(OUTPUT_DRAIN);
    }
    status
}

/// Starts PE `rank`; on failure prints why and returns the exit status to use.
fn start_pe(
    sup: &mut Supervisor,
    readers: Option<&mut Readers>,
    job: &Job,
    args: &Args,
    rank: u32,
) -> Result<(), i32> {
    let mut cmd = pe_command(&args.command, job, rank, readers.is_some());
    if args.verbose {
        eprintln!("aclshmrun: PE {rank}: {}", describe(job, rank, &args.command));
    }
    let child = sup.spawn(rank, &mut cmd).map_err(|e| {
        eprintln!(
            "aclshmrun: cannot start PE {rank}: {}: {e}",
            args.command[0].to_string_lossy()
        );
        CANNOT_EXEC_STATUS
    })?;
    let Some(readers) = readers else {
        return Ok(());
    };
    let pipes = (child.stdout.take(), child.stderr.take());
    let (Some(out), Some(err)) = pipes else {
        eprintln!("aclshmrun: PE {rank}: output pipes missing");
        return Err(LAUNCHER_ERROR_STATUS);
    };
    readers
        .spawn(rank, Dest::Stdout, out)
        .and_then(|()| readers.spawn(rank, Dest::Stderr, err))
        .map_err(|e| {
            eprintln!("aclshmrun: cannot start output thread for PE {rank}: {e}");
            LAUNCHER_ERROR_STATUS
        })
}

/// The command of PE `rank`: PROG and its arguments untouched, the job's variables added
/// to the inherited environment. PE 0 reads the launcher's stdin, the others /dev/null.
pub fn pe_command(command: &[OsString], job: &Job, rank: u32, tag_output: bool) -> Command {
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]).envs(job.pe_env(rank));
    cmd.stdin(if rank == 0 {
        Stdio::inherit()
    } else {
        Stdio::null()
    });
    if tag_output {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    die_with_launcher(&mut cmd);
    cmd
}

/// Asks the kernel to SIGTERM the PE if the launcher dies without cleaning up (e.g. it
/// is SIGKILLed), so a dead launcher never leaves PEs behind.
#[cfg(target_os = "linux")]
fn die_with_launcher(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let launcher = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec; it only makes the
    // async-signal-safe system calls prctl and getppid, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(io::Error::last_os_error());
            }
            // the launcher may have died before prctl took effect
            if libc::getppid() != launcher {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_launcher(_cmd: &mut Command) {}

/// `VAR=value … PROG ARGS`, shell-quoted, with the job token hidden.
fn describe(job: &Job, rank: u32, command: &[OsString]) -> String {
    let mut words: Vec<String> = job
        .pe_env(rank)
        .into_iter()
        .map(|(k, v)| {
            if k == TOKEN_VAR {
                format!("{k}=<hidden>")
            } else {
                format!("{k}={}", shell_quote(OsStr::new(&v)))
            }
        })
        .collect();
    if job.token == Token::Inherited {
        words.push(format!("({TOKEN_VAR} inherited)"));
    }
    words.extend(command.iter().map(|a| shell_quote(a)));
    words.join(" ")
}

/// Quotes `arg` for display in a POSIX shell command line.
fn shell_quote(arg: &OsStr) -> String {
    let s = arg.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-[]".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote(OsStr::new("a-b/c.d")), "a-b/c.d");
        assert_eq!(shell_quote(OsStr::new("")), "''");
        assert_eq!(shell_quote(OsStr::new("a b")), "'a b'");
        assert_eq!(shell_quote(OsStr::new("it's")), r"'it'\''s'");
    }

    #[test]
    fn description_hides_the_token() {
        let job = Job {
            n_pes: 2,
            addr: "::1".parse().unwrap(),
            port: 9,
            job_id: "id".into(),
            token: Token::Generated("secret".into()),
            mem_size: None,
        };
        let text = describe(&job, 1, &["prog".into(), "x y".into()]);
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("ACLSHMEM_JOB_TOKEN=<hidden>"), "{text}");
        assert!(text.contains("ACLSHMEM_IP_PORT=tcp6://[::1]:9"), "{text}");
        assert!(text.ends_with("prog 'x y'"), "{text}");
    }
}

//! Starting a job: one `Command` per PE, tagged output, supervision and cleanup.

use std::ffi::{OsStr, OsString};
use std::io;
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How old an object of a dead PE must be before a later job removes it ([`crate::cleanup::remove_stale`]).
const STALE_AGE: Duration = Duration::from_secs(30);

use crate::cleanup::ShmCleanup;
use crate::cli::{Args, Bind};
use crate::job::{Job, TOKEN_VAR, Token};
use crate::output::{Dest, Readers};
use crate::supervise::Supervisor;

/// Exit status when PROG cannot be started (as a shell's "command not found").
pub const CANNOT_EXEC_STATUS: i32 = 127;
/// Exit status for a failure of the launcher itself.
pub const LAUNCHER_ERROR_STATUS: i32 = 1;
/// The launcher's status for a command line it cannot take (clap's too).
pub const USAGE_STATUS: i32 = 2;
/// How long tagged output may still be drained after the last PE has ended.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// Runs the job described by `args`; returns the launcher's exit status.
pub fn run(args: &Args) -> i32 {
    // fewer --hosts slots than PEs: a usage error, as clap reports the others (status 2)
    if let Some(hosts) = &args.hosts
        && hosts.slots() < u64::from(args.np)
    {
        say!(
            "aclshmrun: --hosts gives {} PE slot(s) for {} PEs",
            hosts.slots(),
            args.np
        );
        return USAGE_STATUS;
    }
    let addr = match store_addr(args) {
        Ok(a) => a,
        Err(e) => {
            say!("aclshmrun: {e}");
            return LAUNCHER_ERROR_STATUS;
        }
    };
    let mut job = match Job::new(args.np, addr, args.port, args.mem_size) {
        Ok(job) => job,
        Err(e) => {
            say!("aclshmrun: {e}");
            return LAUNCHER_ERROR_STATUS;
        }
    };
    job.hosts = args.hosts.clone();
    // objects of earlier jobs on this machine whose launcher was killed before their PEs unlinked
    // them (SIGKILL leaves no cleanup)
    for p in crate::cleanup::remove_stale(
        Path::new(crate::cleanup::SHM_DIR),
        &crate::cleanup::user_name(),
        STALE_AGE,
    ) {
        if args.verbose {
            say!("aclshmrun: removed {} (left by an earlier job)", p.display());
        }
    }
    // removes the job's objects on every remote host at the end (registered before the local
    // cleanup, so dropped after it)
    let _remote_cleanup = RemoteCleanup { job: &job, args };
    // Dropped last: removes the job's shared-memory objects on every path out.
    let _cleanup = ShmCleanup::new(&job.job_id, args.verbose);
    let mut sup = match Supervisor::new(args.verbose) {
        Ok(sup) => sup,
        Err(e) => {
            say!("aclshmrun: cannot install signal handlers: {e}");
            return LAUNCHER_ERROR_STATUS;
        }
    };
    if args.verbose {
        say!(
            "aclshmrun: job {}: {} PEs, config store {}",
            job.job_id,
            job.n_pes,
            job.url()
        );
    }
    let cpus = match args.bind_to {
        Bind::Core => bind_plan(&job, args.verbose),
        Bind::None => Vec::new(),
    };
    let mut readers = args.tag_output.then(Readers::new);
    for rank in 0..job.n_pes {
        let cpu = cpus.get(rank as usize).copied().flatten();
        if let Err(code) = start_pe(&mut sup, readers.as_mut(), &job, args, rank, cpu) {
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
    cpu: Option<usize>,
) -> Result<(), i32> {
    let mut cmd = match job.place(rank) {
        (Some(host), _, _) if !job.on_this_machine(host) => {
            remote_command(args, job, rank, host, readers.is_some())
        }
        _ => pe_command(&args.command, job, rank, readers.is_some()),
    };
    if let Some(cpu) = cpu {
        bind_to_cpu(&mut cmd, cpu);
    }
    if args.verbose {
        let bound = cpu.map_or(String::new(), |c| format!(" (bound to CPU {c})"));
        say!(
            "aclshmrun: PE {rank}{bound}: {}",
            describe(job, rank, &args.command)
        );
    }
    let child = sup.spawn(rank, &mut cmd).map_err(|e| {
        say!(
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
        say!("aclshmrun: PE {rank}: output pipes missing");
        return Err(LAUNCHER_ERROR_STATUS);
    };
    readers
        .spawn(rank, Dest::Stdout, out)
        .and_then(|()| readers.spawn(rank, Dest::Stderr, err))
        .map_err(|e| {
            say!("aclshmrun: cannot start output thread for PE {rank}: {e}");
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

/// The config store's address: `--addr`, else with `--hosts` the first host's address (PE 0
/// runs there), else the loopback address. When that is a loopback address (the first host is
/// this machine, `localhost` say) while other hosts are other machines, the address this
/// machine reaches the first of those from is taken instead: they could not reach a loopback
/// store (their PEs failed after the connect timeout, 120 s).
fn store_addr(args: &Args) -> Result<IpAddr, String> {
    if let Some(a) = args.addr {
        return Ok(a);
    }
    let Some(hosts) = &args.hosts else {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    };
    let first = &hosts.0[0].0;
    let addrs = resolve(first)?;
    let addr = addrs
        .iter()
        .find(|a| a.is_ipv4() && !a.is_loopback())
        .or_else(|| addrs.iter().find(|a| !a.is_loopback()))
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("host {first} has no address (give --addr)"))?;
    if !addr.is_loopback() {
        return Ok(addr);
    }
    let Some(remote) = hosts
        .0
        .iter()
        .map(|h| &h.0)
        .find(|h| !crate::cli::is_this_machine(h))
    else {
        return Ok(addr);
    };
    let there = resolve(remote)?;
    let target = there
        .iter()
        .find(|a| a.is_ipv4() && !a.is_loopback())
        .or_else(|| there.iter().find(|a| !a.is_loopback()))
        .ok_or_else(|| format!("host {remote} has no address other machines can use (give --addr)"))?;
    // a UDP socket connected to the remote host names the local address of the route there
    // (connecting sends nothing)
    let unspecified: IpAddr = if target.is_ipv4() {
        Ipv4Addr::UNSPECIFIED.into()
    } else {
        std::net::Ipv6Addr::UNSPECIFIED.into()
    };
    let route = std::net::UdpSocket::bind((unspecified, 0))
        .and_then(|s| s.connect((*target, 9)).map(|()| s))
        .and_then(|s| s.local_addr());
    match route {
        Ok(local) if !local.ip().is_unspecified() => Ok(local.ip()),
        _ => Err(format!(
            "the first host {first} is this machine, whose address the other hosts ({remote}) can \
             reach is unknown: give --addr"
        )),
    }
}

/// The addresses of host `name`.
fn resolve(name: &str) -> Result<Vec<IpAddr>, String> {
    Ok((name, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host {name}: {e} (give --addr)"))?
        .map(|a| a.ip())
        .collect())
}

/// Variables of the launcher's environment a remote PE gets too (a local PE inherits them all).
fn forwarded(name: &str) -> bool {
    ["ACLSHMEM_", "SHMEM_", "UCX_", "RUST_"]
        .iter()
        .any(|p| name.starts_with(p))
        || ["LD_LIBRARY_PATH", "PATH"].contains(&name)
}

/// PE `rank` on host `host` of `--hosts`: `RSH HOST 'cd DIR && exec env VAR=... PROG ARGS'`.
fn remote_command(args: &Args, job: &Job, rank: u32, host: usize, tag_output: bool) -> Command {
    let hosts = job.hosts.as_ref().expect("remote PEs come from --hosts");
    let mut agent = args.rsh.split_whitespace();
    let mut cmd = Command::new(agent.next().unwrap_or("ssh"));
    cmd.args(agent).arg(&hosts.0[host].0);
    let job_env = job.pe_env(rank);
    let mut words: Vec<String> = Vec::new();
    if let Ok(dir) = std::env::current_dir() {
        words.push(format!("cd {} 2>/dev/null;", shell_quote(dir.as_os_str())));
    }
    words.push("exec env".into());
    for (k, v) in std::env::vars_os() {
        let Some(name) = k.to_str() else { continue };
        if forwarded(name) && !job_env.iter().any(|(j, _)| *j == name) {
            words.push(format!("{name}={}", shell_quote(&v)));
        }
    }
    for (k, v) in &job_env {
        words.push(format!("{k}={}", shell_quote(OsStr::new(v))));
    }
    if job.token == Token::Inherited
        && let Ok(t) = std::env::var(TOKEN_VAR)
    {
        words.push(format!("{TOKEN_VAR}={}", shell_quote(OsStr::new(&t))));
    }
    words.extend(args.command.iter().map(|a| shell_quote(a)));
    cmd.arg(words.join(" "));
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

/// At the end of a job with `--hosts`: removes the job's shared-memory objects on every host
/// (through the agent, bounded to 10 s per host).
struct RemoteCleanup<'a> {
    job: &'a Job,
    args: &'a Args,
}

impl Drop for RemoteCleanup<'_> {
    fn drop(&mut self) {
        let Some(hosts) = &self.job.hosts else { return };
        let pattern = format!(
            "{}/{}*",
            crate::cleanup::SHM_DIR,
            crate::cleanup::shm_prefix(&crate::cleanup::user_name(), &self.job.job_id)
        );
        let mut seen = Vec::new();
        for (host, _) in &hosts.0 {
            // this machine's objects go with the local cleanup
            if seen.contains(host) || crate::cli::is_this_machine(host) {
                continue;
            }
            seen.push(host.clone());
            let mut agent = self.args.rsh.split_whitespace();
            let mut cmd = Command::new(agent.next().unwrap_or("ssh"));
            cmd.args(agent)
                .arg(host)
                .arg(format!("rm -f {pattern}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let Ok(mut child) = cmd.spawn() else { continue };
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) {
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// `--bind-to core`: the CPU of each PE (indexed by rank; `None` for PEs started on other hosts),
/// or nothing when this machine's PEs do not fit the CPUs the launcher may run on (then the
/// kernel places them, as without the option, and a note says so).
fn bind_plan(job: &Job, verbose: bool) -> Vec<Option<usize>> {
    let here: Vec<bool> = (0..job.n_pes)
        .map(|rank| match job.place(rank) {
            (Some(host), _, _) => job.on_this_machine(host),
            (None, _, _) => true,
        })
        .collect();
    let allowed = allowed_cpus();
    match assign_cpus(&here, &allowed) {
        Some(plan) => {
            if verbose {
                say!("aclshmrun: --bind-to core: one CPU per PE of this machine, of {allowed:?}");
            }
            plan
        }
        None => {
            say!(
                "aclshmrun: --bind-to core: {} PEs on this machine but {} CPUs to bind them to: not binding",
                here.iter().filter(|&&h| h).count(),
                allowed.len()
            );
            Vec::new()
        }
    }
}

/// The CPUs of the PEs marked in `here` (by rank): the i-th of them gets `allowed[i]`; `None`
/// when they outnumber `allowed` (binding two PEs to one CPU would keep the kernel from moving
/// one to a CPU that has become idle).
fn assign_cpus(here: &[bool], allowed: &[usize]) -> Option<Vec<Option<usize>>> {
    if here.iter().filter(|&&h| h).count() > allowed.len() {
        return None;
    }
    let mut next = allowed.iter().copied();
    Some(here.iter().map(|&h| if h { next.next() } else { None }).collect())
}

/// The CPUs this process may run on (its affinity mask), in order; empty if unknown.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid out-buffer of the size given.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Binds the PE that `cmd` starts to CPU `cpu` (before its exec, so the program and every thread
/// it makes run there).
#[cfg(target_os = "linux")]
fn bind_to_cpu(cmd: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: an all-zero cpu_set_t is a valid empty set; `cpu` comes from the launcher's own
    // mask, so it is below CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: the closure runs in the forked child before exec; it makes one async-signal-safe
    // system call on a set prepared before the fork, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn bind_to_cpu(_cmd: &mut Command, _cpu: usize) {}

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
    fn cpus_of_bound_pes() {
        // the i-th PE of this machine gets the i-th allowed CPU; PEs of other hosts none
        assert_eq!(assign_cpus(&[true, true], &[0, 1]), Some(vec![Some(0), Some(1)]));
        assert_eq!(
            assign_cpus(&[true, false, true], &[2, 5, 7]),
            Some(vec![Some(2), None, Some(5)])
        );
        // more PEs here than CPUs: no binding at all
        assert_eq!(assign_cpus(&[true, true, true], &[0, 1]), None);
        assert_eq!(assign_cpus(&[false, false], &[]), Some(vec![None, None]));
        // the launcher's own mask is known and not empty here
        assert!(!allowed_cpus().is_empty());
    }

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
            hosts: None,
        };
        let text = describe(&job, 1, &["prog".into(), "x y".into()]);
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("ACLSHMEM_JOB_TOKEN=<hidden>"), "{text}");
        assert!(text.contains("ACLSHMEM_IP_PORT=tcp6://[::1]:9"), "{text}");
        assert!(text.ends_with("prog 'x y'"), "{text}");
    }
}

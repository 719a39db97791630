//! Command-line definition of `aclshmrun` and the small parsers it needs.

use std::ffi::{OsStr, OsString};
use std::net::IpAddr;

use aclshmem_config as config;
use clap::Parser;

/// Largest job the launcher accepts.
pub const MAX_PES: u32 = 16384;

const EXAMPLES: &str = "\
Examples:
  aclshmrun -n 4 ./my_shmem_app --iters 100
  aclshmrun -np 8 --tag-output --timeout 60 ./my_shmem_app
  aclshmrun -n 2 --mem-size 1G --verbose python3 train.py

Every PE gets ACLSHMEM_MY_PE, ACLSHMEM_N_PES, ACLSHMEM_IP_PORT, ACLSHMEM_LOCAL_PE,
ACLSHMEM_LOCAL_N_PES, ACLSHMEM_JOB_TOKEN, ACLSHMEM_JOB_ID and the torchrun-style
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
PE 0 reads the launcher's stdin; the other PEs get /dev/null.

Exit status: 0 if every PE exits 0; otherwise the status of the first PE that
fails (128+signal for a PE killed by a signal); 124 on --timeout; 128+signal
when aclshmrun itself receives SIGINT/SIGTERM/SIGHUP; 127 if PROG cannot be
started; 2 for a usage error.";

/// Start N processing elements (PEs) of PROG on this machine and supervise them.
#[derive(Debug, Parser)]
#[command(
    name = "aclshmrun",
    version,
    override_usage = "aclshmrun -n <N> [OPTIONS] <PROG> [ARGS]...",
    after_help = EXAMPLES
)]
pub struct Args {
    /// Number of PEs to start, 1..=16384 (`-np N` is accepted too)
    #[arg(
        short = 'n',
        long = "np",
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PES))
    )]
    pub np: u32,

    /// Kill the whole job after SECS seconds and exit 124 (0 = no limit)
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub timeout: u64,

    /// Prefix every stdout and stderr line of PE i with "[pe i] "
    #[arg(long)]
    pub tag_output: bool,

    /// Port of the bootstrap config store run by PE 0, 1025..=65535 as the library takes it
    /// (MASTER_PORT is one below) [default: a free port]
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1025..))]
    pub port: Option<u16>,

    /// Address of the bootstrap config store (IPv4 or IPv6 literal) [default: 127.0.0.1, or the
    /// first host's address with --hosts]
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    pub addr: Option<IpAddr>,

    /// Run the PEs on these hosts, N PEs each, filled in order (PE 0 on the first host, which
    /// also runs the config store): every PE starts through the --rsh agent
    #[arg(long, value_name = "HOST:N,...", value_parser = parse_hosts)]
    pub hosts: Option<Hosts>,

    /// Remote shell agent for --hosts, started as `CMD HOST 'shell command line'` (as ssh, or
    /// Open MPI's plm_rsh_agent); split on spaces
    #[arg(long, value_name = "CMD", default_value = "ssh")]
    pub rsh: String,

    /// Symmetric heap size per PE (sets ACLSHMEM_LOCAL_MEM_SIZE, and SHMEM_SYMMETRIC_SIZE for
    /// OpenSHMEM programs); bytes or K/M/G/T suffix
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub mem_size: Option<u64>,

    /// Print each PE's command line and the environment aclshmrun sets
    #[arg(short, long)]
    pub verbose: bool,

    /// core: bind the i-th PE started on this machine to the i-th CPU aclshmrun may run on, when
    /// they fit (else no binding, with a note), as Open MPI's --bind-to core; none (default): the
    /// kernel places the PEs. Concurrent jobs with core bind their PEs to the same CPUs: give each
    /// its own set (taskset -c 2,3 aclshmrun --bind-to core ...)
    #[arg(long, value_name = "core|none", default_value = "none")]
    pub bind_to: Bind,

    /// The program to run, followed by its arguments (passed through untouched)
    #[arg(
        value_name = "PROG",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

/// `--bind-to`: whether the launcher binds the PEs it starts to CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bind {
    /// The kernel places the PEs (and moves them).
    None,
    /// One CPU per PE of this machine, when they fit.
    Core,
}

/// Options of `aclshmrun` that take a separate value argument.
const VALUE_OPTIONS: &[&str] = &[
    "-n",
    "--np",
    "--timeout",
    "--port",
    "--addr",
    "--mem-size",
    "--hosts",
    "--rsh",
    "--bind-to",
];

/// `--hosts h1:2,h2:2`: host names and PE counts, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosts(pub Vec<(String, u32)>);

/// Whether host name `name` of `--hosts` is this machine (PEs there start here, as mpirun does,
/// not through the remote agent): `localhost`, a loopback address, or this machine's host name
/// (or its first label).
pub fn is_this_machine(name: &str) -> bool {
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Ok(ip) = name.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return false;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let me = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    let short = |s: &str| s.split('.').next().unwrap_or_default().to_string();
    // `node1` names `node1.example.org` and the other way round; two full names must be equal
    name == me || ((!name.contains('.') || !me.contains('.')) && short(&name) == short(&me))
}

impl Hosts {
    /// Total number of PE slots.
    pub fn slots(&self) -> u64 {
        self.0.iter().map(|(_, n)| u64::from(*n)).sum()
    }

    /// Host index, index among that host's PEs, and that host's PE count, of PE `rank` when
    /// `np` PEs fill the hosts in order (`None` when the hosts have fewer slots).
    pub fn place(&self, rank: u32, np: u32) -> Option<(usize, u32, u32)> {
        let mut first = 0u32;
        for (i, (_, n)) in self.0.iter().enumerate() {
            let here = (*n).min(np.saturating_sub(first));
            if rank < first + here {
                return Some((i, rank - first, here));
            }
            first += here;
        }
        None
    }
}

/// Parses `HOST[:N],HOST[:N],...` (N defaults to 1, at least 1). A host is a name, an IPv4
/// address, or an IPv6 address in brackets (`[fd00::2]:2`, kept without them: ssh and the
/// resolver take it so).
pub fn parse_hosts(s: &str) -> Result<Hosts, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (host, count) = match part.strip_prefix('[').and_then(|p| p.split_once(']')) {
            Some((addr, rest)) => {
                if addr.parse::<std::net::Ipv6Addr>().is_err() {
                    return Err(format!("'{part}': not an IPv6 address in brackets"));
                }
                match rest {
                    "" => (addr, None),
                    _ => match rest.strip_prefix(':') {
                        Some(n) => (addr, Some(n)),
                        None => return Err(format!("'{part}': expected [ADDRESS]:N")),
                    },
                }
            }
            None => match part.rsplit_once(':') {
                Some((h, n)) => (h, Some(n)),
                None => (part, None),
            },
        };
        let n = match count {
            Some(n) => n
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_PES).contains(n))
                .ok_or_else(|| format!("'{part}': the PE count must be 1..={MAX_PES}"))?,
            None => 1,
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        let bracketed = part.starts_with('[');
        if !bracketed && host.contains(':') {
            return Err(format!(
                "'{part}': not a host name (an IPv6 address goes in brackets: [ADDRESS]:N)"
            ));
        }
        if !bracketed && (host.is_empty() || !host.chars().all(plain) || host.starts_with('-')) {
            return Err(format!("'{part}': not a host name"));
        }
        out.push((host.to_string(), n));
    }
    Ok(Hosts(out))
}

/// Rewrites the MPI-style `-np N` / `-np=N` into `--np` so clap can parse it.
///
/// Only the launcher's own options are looked at: everything from PROG on (or after a
/// literal `--`) is passed through unchanged.
pub fn normalize_argv<I>(argv: I) -> Vec<OsString>
where
    I: IntoIterator<Item = OsString>,
{
    let mut it = argv.into_iter();
    let mut out: Vec<OsString> = it.next().into_iter().collect();
    while let Some(arg) = it.next() {
        let text = arg.to_str().unwrap_or("");
        if text == "-np" {
            out.push("--np".into());
            out.extend(it.next());
        } else if let Some(value) = text.strip_prefix("-np=") {
            out.push(format!("--np={value}").into());
        } else if VALUE_OPTIONS.contains(&text) {
            out.push(arg);
            out.extend(it.next());
        } else if text == "--" || !is_option(&arg) {
            out.push(arg);
            break;
        } else {
            out.push(arg);
        }
    }
    out.extend(it);
    out
}

fn is_option(arg: &OsStr) -> bool {
    arg.as_encoded_bytes().first() == Some(&b'-') && arg.len() > 1
}

/// Parses an IP literal; an IPv6 literal may be written with or without brackets.
pub fn parse_addr(s: &str) -> Result<IpAddr, String> {
    let bare = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')).unwrap_or(s);
    bare.parse::<IpAddr>()
        .map_err(|_| format!("'{s}' is not an IPv4 or IPv6 address"))
}

/// Parses a byte count with the grammar the library uses for ACLSHMEM_LOCAL_MEM_SIZE (plain
/// digits, or digits with a K, M, G or T suffix: powers of 1024; `KB`, `KiB` and lower case are
/// accepted too), except that the launcher refuses 0.
pub fn parse_size(s: &str) -> Result<u64, String> {
    match config::parse_size(s) {
        Some(0) => Err("size must be greater than 0".into()),
        Some(bytes) => Ok(bytes),
        None => Err(format!("'{s}' is not {}", config::Kind::Size.expected())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn argv(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn parse(v: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(normalize_argv(argv(v)))
    }

    #[test]
    fn definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn np_is_rewritten_only_before_prog() {
        assert_eq!(
            normalize_argv(argv(&["r", "-np", "4", "prog", "-np", "2"])),
            argv(&["r", "--np", "4", "prog", "-np", "2"])
        );
        assert_eq!(
            normalize_argv(argv(&["r", "--timeout", "5", "-np=3", "p"])),
            argv(&["r", "--timeout", "5", "--np=3", "p"])
        );
        assert_eq!(
            normalize_argv(argv(&["r", "-n", "2", "--", "-np"])),
            argv(&["r", "-n", "2", "--", "-np"])
        );
        // the value of an option is never mistaken for PROG
        assert_eq!(
            normalize_argv(argv(&["r", "--addr", "::1", "-np", "2", "p"])),
            argv(&["r", "--addr", "::1", "--np", "2", "p"])
        );
    }

    #[test]
    fn prog_arguments_pass_through() {
        let a = parse(&["r", "-np", "2", "prog", "--foo", "-n", "9", "--", "x"]).unwrap();
        assert_eq!(a.np, 2);
        assert_eq!(a.command, argv(&["prog", "--foo", "-n", "9", "--", "x"]));
        let a = parse(&["r", "-n4", "--tag-output", "prog"]).unwrap();
        assert_eq!(a.np, 4);
        assert!(a.tag_output);
        let a = parse(&["r", "-n", "1", "--", "-weird-prog", "-v"]).unwrap();
        assert_eq!(a.command, argv(&["-weird-prog", "-v"]));
        assert!(!a.verbose);
    }

    #[test]
    fn invalid_input_is_a_usage_error() {
        for bad in [
            &["r", "prog"][..],
            &["r", "-n", "0", "prog"],
            &["r", "-n", "16385", "prog"],
            &["r", "-n", "x", "prog"],
            &["r", "-n", "2"],
            &["r", "-n", "2", "--bogus", "prog"],
            &["r", "-n", "2", "--mem-size", "3Q", "prog"],
            &["r", "-n", "2", "--addr", "localhost", "prog"],
            &["r", "-n", "2", "--port", "0", "prog"],
            &["r", "-n", "2", "--port", "1024", "prog"],
            &["r", "-n", "2", "--port", "80", "prog"],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
        assert_eq!(parse(&["r", "-n", "16384", "p"]).unwrap().np, MAX_PES);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1 T"), Ok(1 << 40));
        assert!(parse_size("").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("1.5G").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("20000000000G").is_err());
    }

    #[test]
    fn this_machine_by_name_and_address() {
        let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let me = me.trim();
        for local in ["localhost", "LOCALHOST", "127.0.0.1", "127.0.1.1", "::1", me] {
            assert!(is_this_machine(local), "{local}");
        }
        assert_eq!(is_this_machine(&format!("{me}.example.org")), !me.contains('.'));
        for other in ["10.0.0.5", "mn34n1", "", "::2"] {
            assert!(!is_this_machine(other), "{other}");
        }
    }

    #[test]
    fn hosts() {
        let h = parse_hosts("a:2,b.example:3,c").unwrap();
        assert_eq!(h.slots(), 6);
        assert_eq!(h.place(0, 6), Some((0, 0, 2)));
        assert_eq!(h.place(1, 6), Some((0, 1, 2)));
        assert_eq!(h.place(2, 6), Some((1, 0, 3)));
        assert_eq!(h.place(5, 6), Some((2, 0, 1)));
        assert_eq!(h.place(6, 6), None);
        // fewer PEs than slots: the last host used gets what is left
        assert_eq!(h.place(2, 3), Some((1, 0, 1)));
        for bad in [
            "",
            "a:0",
            "a:x",
            "a b:1",
            "-x:1",
            "a,,b",
            "fd00::2:1",
            "[fd00::2]x",
            "[nope]:1",
            "[::1]:0",
        ] {
            assert!(parse_hosts(bad).is_err(), "{bad}");
        }
        // IPv6 addresses in brackets, kept without them
        let h = parse_hosts("[fd00::2]:2,[::1],b:1").unwrap();
        assert_eq!(
            h.0,
            vec![
                ("fd00::2".to_string(), 2),
                ("::1".to_string(), 1),
                ("b".to_string(), 1)
            ]
        );
        assert!(is_this_machine(&h.0[1].0));
        let a = parse(&["r", "-n", "4", "--hosts", "h1:2,h2:2", "--rsh", "my agent", "p"]).unwrap();
        assert_eq!(a.hosts.unwrap().slots(), 4);
        assert_eq!(a.rsh, "my agent");
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("127.0.0.1").unwrap().to_string(), "127.0.0.1");
        assert_eq!(parse_addr("[::1]").unwrap().to_string(), "::1");
        assert_eq!(parse_addr("fe80::2").unwrap().to_string(), "fe80::2");
        assert!(parse_addr("host.example").is_err());
    }
}

//! The one table of every environment variable that libaclshmem reads and its launcher
//! (`aclshmrun`) sets or reads.
//!
//! Code never calls `std::env::var` with a literal: it reads a [`Var`] of this crate, so
//! `ACLSHMEM_INFO=1` can print the effective table ([`describe`]), the README can list them all and
//! the launcher sets exactly the names the library reads. Each variable is declared once, with its
//! name, its default, its documentation and its type. The typed accessors [`Var::get`] (the value
//! when set) and [`Var::value`] (with the default applied) parse the text and report a
//! [`ConfigError`] that names the variable, its value and what was expected.
//!
//! Grammars. A variable set to the empty string counts as unset; surrounding white space is
//! ignored for every type except strings.
//! - string: any UTF-8 text, taken as is;
//! - boolean: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`, in any case;
//! - size: digits, optional spaces, then an optional `K`, `M`, `G` or `T` (binary multiples: 1024,
//!   1024², ...), optionally followed by `B` or `iB`; a lone `B` means bytes. Any case; `0` is a
//!   size; values of 2⁶⁴ bytes or more are rejected. Examples: `4096`, `4k`, `128M`, `1g`, `2GiB`,
//!   `1 T`, `512MB`;
//! - OpenSHMEM size (`SHMEM_SYMMETRIC_SIZE`): a size whose number may have a decimal fraction, as the
//!   OpenSHMEM specification allows (`3.1m` = 3250586 bytes, rounded up to whole bytes);
//! - flag (`SHMEM_INFO`, `SHMEM_VERSION`, `SHMEM_DEBUG`): any value turns it on, as the OpenSHMEM
//!   specification and Sandia OpenSHMEM read them, except the boolean words for off (`0`, `false`,
//!   `no`, `off`);
//! - unsigned integer: digits only, within the range of the variable's type;
//! - enum: exactly one of the words listed in the variable's documentation (case matters);
//! - duration: digits, optional spaces and an optional unit: `ms`, `s` (the default) or `m`, in any
//!   case. Examples: `30`, `500ms`, `10s`, `2m`;
//! - port range: `start:end`, two port numbers 0..=65535 with `end >= start`.
//!
//! The OpenSHMEM variables keep their deprecated `SMA_` names (`SMA_SYMMETRIC_SIZE`, ...): read
//! when the `SHMEM_` one is not set, as the specification says ([`DEPRECATED_NAMES`]).

use std::fmt::{self, Write as _};
use std::time::Duration;

/// What a variable's text must look like; selects the parser and the wording of errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any UTF-8 text.
    String,
    /// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`.
    Bool,
    /// A byte count, see [`parse_size`].
    Size,
    /// A byte count whose number may have a fraction, see [`parse_decimal_size`].
    DecimalSize,
    /// On unless one of the boolean words for off, see [`parse_flag`].
    Flag,
    /// Digits, at most `max`.
    Unsigned { max: u64 },
    /// Exactly one of these words.
    Enum(&'static [&'static str]),
    /// A duration, see [`parse_duration`].
    Duration,
    /// `start:end` ports, see [`parse_port_range`].
    PortRange,
}

impl Kind {
    /// A short name of the type, for the [`describe`] table.
    pub fn label(&self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Bool => "boolean",
            Kind::Size => "size",
            Kind::DecimalSize => "size",
            Kind::Flag => "flag",
            Kind::Unsigned { .. } => "unsigned",
            Kind::Enum(_) => "enum",
            Kind::Duration => "duration",
            Kind::PortRange => "ports",
        }
    }

    /// What a valid value looks like, as the end of the sentence "expected ...".
    pub fn expected(&self) -> String {
        match self {
            Kind::String => "UTF-8 text".into(),
            Kind::Bool => "a boolean: 1, true, yes, on, 0, false, no or off".into(),
            Kind::Size => "a size: digits with an optional K, M, G or T suffix (binary multiples, \
                           optionally followed by B or iB), below 16 EiB, e.g. 4096, 128M, 2GiB"
                .into(),
            Kind::DecimalSize => "a size: a number (a decimal fraction allowed) with an optional K, M, \
                                  G or T suffix (binary multiples, optionally followed by B or iB), \
                                  below 16 EiB, e.g. 4096, 128M, 3.1m"
                .into(),
            Kind::Flag => "any text (0, false, no or off: off)".into(),
            Kind::Unsigned { max } => format!("an unsigned integer from 0 to {max}"),
            Kind::Enum(words) => format!("one of {}", words.join(", ")),
            Kind::Duration => {
                "a duration: seconds, or digits with an ms, s or m suffix, e.g. 30, 500ms, 2m".into()
            }
            Kind::PortRange => "a port range start:end (0 to 65535, end >= start)".into(),
        }
    }
}

/// The type of a variable: its [`Kind`] and the parser that turns its text into a `T`.
pub struct Type<T: 'static> {
    pub kind: Kind,
    parse: fn(&Kind, &str) -> Option<T>,
}

fn as_string(_: &Kind, text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn as_bool(_: &Kind, text: &str) -> Option<bool> {
    parse_bool(text)
}

fn as_size(_: &Kind, text: &str) -> Option<u64> {
    parse_size(text)
}

fn as_decimal_size(_: &Kind, text: &str) -> Option<u64> {
    parse_decimal_size(text)
}

fn as_flag(_: &Kind, text: &str) -> Option<bool> {
    Some(parse_flag(text))
}

fn as_unsigned<T: TryFrom<u64>>(kind: &Kind, text: &str) -> Option<T> {
    match kind {
        Kind::Unsigned { max } => parse_unsigned(text)
            .filter(|v| v <= max)
            .and_then(|v| T::try_from(v).ok()),
        _ => None,
    }
}

fn as_word(kind: &Kind, text: &str) -> Option<&'static str> {
    match kind {
        Kind::Enum(words) => parse_word(text, words),
        _ => None,
    }
}

fn as_duration(_: &Kind, text: &str) -> Option<Duration> {
    parse_duration(text)
}

fn as_port_range(_: &Kind, text: &str) -> Option<(u16, u16)> {
    parse_port_range(text)
}

/// Text, taken as is.
pub const STRING: Type<String> = Type {
    kind: Kind::String,
    parse: as_string,
};
/// A boolean ([`parse_bool`]).
pub const BOOL: Type<bool> = Type {
    kind: Kind::Bool,
    parse: as_bool,
};
/// A byte count ([`parse_size`]).
pub const SIZE: Type<u64> = Type {
    kind: Kind::Size,
    parse: as_size,
};
/// A byte count with an optional fraction ([`parse_decimal_size`]).
pub const DECIMAL_SIZE: Type<u64> = Type {
    kind: Kind::DecimalSize,
    parse: as_decimal_size,
};
/// On unless a word for off ([`parse_flag`]).
pub const FLAG: Type<bool> = Type {
    kind: Kind::Flag,
    parse: as_flag,
};
/// A duration ([`parse_duration`]).
pub const DURATION: Type<Duration> = Type {
    kind: Kind::Duration,
    parse: as_duration,
};
/// A port range `start:end` ([`parse_port_range`]).
pub const PORT_RANGE: Type<(u16, u16)> = Type {
    kind: Kind::PortRange,
    parse: as_port_range,
};

/// An unsigned integer from 0 to `max`, as a `T` (`max` must fit `T`).
pub const fn unsigned<T: TryFrom<u64>>(max: u64) -> Type<T> {
    Type {
        kind: Kind::Unsigned { max },
        parse: as_unsigned::<T>,
    }
}

/// A port number.
pub const U16: Type<u16> = unsigned(u16::MAX as u64);
/// An unsigned 32-bit integer.
pub const U32: Type<u32> = unsigned(u32::MAX as u64);
/// An unsigned 64-bit integer.
pub const U64: Type<u64> = unsigned(u64::MAX);
/// An unsigned integer that fits `usize`.
pub const USIZE: Type<usize> = unsigned(usize::MAX as u64);
/// A PE number or count as the C API holds it: an `int` that is not negative.
pub const C_INT: Type<i32> = unsigned(i32::MAX as u64);

/// Exactly one of `words`; the value is the matching word.
pub const fn one_of(words: &'static [&'static str]) -> Type<&'static str> {
    Type {
        kind: Kind::Enum(words),
        parse: as_word,
    }
}

/// A variable's value is not valid for its type (or it is unset and has no default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The variable.
    pub name: &'static str,
    /// Its text; `None` when it is unset and has no default.
    pub value: Option<String>,
    /// What a valid value looks like.
    pub expected: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{}={v:?}: expected {}", self.name, self.expected),
            None => write!(
                f,
                "{} is not set (no default): expected {}",
                self.name, self.expected
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// One environment variable: its name, its default (as text, empty = none), what it means and
/// its type.
pub struct Var<T: 'static> {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
    pub ty: Type<T>,
}

impl<T> fmt::Debug for Var<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Var")
            .field("name", &self.name)
            .field("default", &self.default)
            .field("kind", &self.ty.kind)
            .finish()
    }
}

/// Deprecated names still read when the variable itself is not set: OpenSHMEM's `SMA_` names
/// ("All environment variables that start with SMA_ are deprecated, but currently supported";
/// the `SHMEM_` value wins when both are set).
pub const DEPRECATED_NAMES: &[(&str, &str)] = &[
    ("SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE"),
    ("SHMEM_INFO", "SMA_INFO"),
    ("SHMEM_VERSION", "SMA_VERSION"),
    ("SHMEM_DEBUG", "SMA_DEBUG"),
];

/// The name under which `name` is set (itself, else its deprecated name) and its value; the
/// empty string counts as unset.
fn lookup(name: &'static str) -> Option<(&'static str, std::ffi::OsString)> {
    let set = |n: &'static str| std::env::var_os(n).filter(|v| !v.is_empty()).map(|v| (n, v));
    set(name).or_else(|| {
        DEPRECATED_NAMES
            .iter()
            .find(|(current, _)| *current == name)
            .and_then(|(_, old)| set(old))
    })
}

impl<T> Var<T> {
    /// True when the variable (or its deprecated name) is set to a non-empty value (valid or not).
    pub fn is_set(&self) -> bool {
        lookup(self.name).is_some()
    }

    /// The text of the variable when set and non-empty (not valid UTF-8: replaced lossily).
    pub fn raw(&self) -> Option<String> {
        lookup(self.name).map(|(_, v)| v.to_string_lossy().into_owned())
    }

    /// Parses `text` as a value of this variable.
    pub fn parse(&self, text: &str) -> Result<T, ConfigError> {
        (self.ty.parse)(&self.ty.kind, text).ok_or_else(|| ConfigError {
            name: self.name,
            value: Some(text.to_owned()),
            expected: self.ty.kind.expected(),
        })
    }

    /// The value when the variable is set and non-empty; `Ok(None)` when it is not.
    pub fn get(&self) -> Result<Option<T>, ConfigError> {
        let Some((name, value)) = lookup(self.name) else {
            return Ok(None);
        };
        match value.into_string() {
            Ok(text) => (self.ty.parse)(&self.ty.kind, &text)
                .map(Some)
                .ok_or_else(|| ConfigError {
                    name,
                    value: Some(text),
                    expected: self.ty.kind.expected(),
                }),
            Err(text) => Err(ConfigError {
                name,
                value: Some(text.to_string_lossy().into_owned()),
                expected: format!("{} (in UTF-8)", self.ty.kind.expected()),
            }),
        }
    }

    /// The value when set, else the documented default; an error when neither exists.
    pub fn value(&self) -> Result<T, ConfigError> {
        match self.get()? {
            Some(v) => Ok(v),
            None if self.default.is_empty() => Err(ConfigError {
                name: self.name,
                value: None,
                expected: self.ty.kind.expected(),
            }),
            None => self.parse(self.default),
        }
    }
}

/// What every variable of the table answers, whatever its type (the entries of [`ALL`]).
pub trait EnvVar {
    fn name(&self) -> &'static str;
    /// The default as text; empty when there is none.
    fn default_text(&self) -> &'static str;
    fn doc(&self) -> &'static str;
    fn kind(&self) -> Kind;
    /// The text when set and non-empty.
    fn raw(&self) -> Option<String>;
    /// Whether `text` is a valid value of this variable.
    fn check(&self, text: &str) -> Result<(), ConfigError>;
}

impl<T> EnvVar for Var<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn default_text(&self) -> &'static str {
        self.default
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn kind(&self) -> Kind {
        self.ty.kind
    }
    fn raw(&self) -> Option<String> {
        Var::raw(self)
    }
    fn check(&self, text: &str) -> Result<(), ConfigError> {
        self.parse(text).map(|_| ())
    }
}

/// The Rust type of a table entry's value, by type keyword.
macro_rules! value_type {
    (string) => { String };
    (bool) => { bool };
    (size) => { u64 };
    (decimal_size) => { u64 };
    (flag) => { bool };
    (duration) => { Duration };
    (port_range) => { (u16, u16) };
    (u16) => { u16 };
    (u32) => { u32 };
    (u64) => { u64 };
    (usize) => { usize };
    (c_int) => { i32 };
    (one_of) => { &'static str };
}

/// The [`Type`] of a table entry, by type keyword.
macro_rules! var_type {
    (string) => { STRING };
    (bool) => { BOOL };
    (size) => { SIZE };
    (decimal_size) => { DECIMAL_SIZE };
    (flag) => { FLAG };
    (duration) => { DURATION };
    (port_range) => { PORT_RANGE };
    (u16) => { U16 };
    (u32) => { U32 };
    (u64) => { U64 };
    (usize) => { USIZE };
    (c_int) => { C_INT };
    (one_of [$($word:literal),+]) => { one_of(&[$($word),+]) };
}

/// `NAME: type = "default", "doc";` declares `pub const NAME: Var<_>` and lists it in [`ALL`].
macro_rules! env_table {
    ($($id:ident : $kind:ident $([$($word:literal),+])? = $default:literal, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            pub const $id: Var<value_type!($kind)> = Var {
                name: stringify!($id),
                default: $default,
                doc: $doc,
                ty: var_type!($kind $([$($word),+])?),
            };
        )*
        /// Every variable, in documentation order.
        pub const ALL: &[&dyn EnvVar] = &[$(&$id),*];
    };
}

env_table! {
    SHMEM_LOG_LEVEL: one_of["DEBUG", "INFO", "WARN", "ERROR", "FATAL"] = "", "DEBUG, INFO, WARN, ERROR or FATAL; overrides every level set by the program (aclshmemx_set_log_level, init).";
    SHMEM_LOG_TO_STDOUT: bool = "0", "1: log lines go to stdout instead of a log file.";
    SHMEM_LOG_PATH: string = "", "Directory of the log files (default $HOME/shmem/log); a file aclshmem_<pid>_<time>.log is created on the first message, made read-only when closed, replaced by a new one at 1 GiB; at most 50 are kept; nothing is written while the file system has 10 GiB or less available.";
    ACLSHMEM_INFO: bool = "0", "1: print the effective environment table at init (PE 0).";
    ACLSHMEM_MY_PE: c_int = "", "Launcher: this process's PE number (read by aclshmemx_set_attr_from_env).";
    ACLSHMEM_N_PES: c_int = "", "Launcher: number of PEs of the job.";
    ACLSHMEM_IP_PORT: string = "", "Launcher: rendezvous URL of the config store, tcp://host:port or tcp6://[addr]:port.";
    ACLSHMEM_LOCAL_PE: c_int = "", "Launcher: index of this PE among the PEs of its node.";
    ACLSHMEM_LOCAL_N_PES: c_int = "", "Launcher: number of PEs on this node.";
    ACLSHMEM_JOB_TOKEN: string = "", "Launcher: the job secret every PE presents to the config store; connections without it are dropped.";
    ACLSHMEM_JOB_SECRET_DIR: string = "", "DEFAULT mode without ACLSHMEM_JOB_TOKEN (no launcher): directory (mode 0700) where PE 0 publishes the job's random secret for the other PEs, in a file of mode 0600 named after the store's address; default $HOME/.aclshmem, else $XDG_RUNTIME_DIR/aclshmem. Every PE must see the same directory (a shared one for a job on several nodes).";
    ACLSHMEM_HEARTBEAT_TIMEOUT: duration = "10s", "Config store (DEFAULT and UNIQUEID mode): a PE whose watch connection is silent this long is declared dead, and a PE that hears nothing from the store this long takes PE 0 for dead (heartbeats every 0.5 s; catches a dead PE whose forked child keeps its sockets open). At least 2 s (a shorter setting is raised to 2 s, with a warning); 0: off (a PE stopped in a debugger then never ends the job).";
    ACLSHMEM_JOB_ID: string = "", "Launcher: job id carried in shared-memory object names (aclshmem-<user>-<job>-...), so the launcher can remove leftovers.";
    ACLSHMEM_LOCAL_MEM_SIZE: size = "128M", "local_mem_size filled by aclshmemx_set_attr_from_env: bytes, or with a K/M/G/T suffix (binary; B or iB may follow).";
    ACLSHMEM_SHM_PREALLOCATE: bool = "", "1 (unset: the default of the aclshmem API): reserve every heap's pages when the heap is created (posix_fallocate), so a /dev/shm too small or filled by others fails that init or HOST_SIDE allocation with ACLSHMEM_SMEM_ERROR instead of a SIGBUS later; costs about 0.05 s per 128 MiB of heap at init and commits the memory up front. 0 (unset: the default when shmem_init creates the instance, as SOS and OSHMEM do): pages are allocated on first touch; a page that cannot be backed then ends the PE with a message naming /dev/shm.";
    ACLSHMEM_HEAP_SAME_ADDRESS: bool = "1", "1 (default): every PE maps each symmetric heap at the same virtual address when that range is free (instance i's device heap at 16 TiB + 2i TiB, its HOST_SIDE heap 1 TiB above; heaps up to 1 TiB, instances 0-31), as OSHMEM's fixed heap base, so a pointer into the heap that one PE stores in symmetric memory names the same object on every PE; where the range is taken the heap goes where the system puts it (logged at INFO when the PEs' addresses differ). 0: always where the system puts it. Remote addresses are translated by offset either way.";
    ACLSHMEM_DIRECT_ACCESS: bool = "1", "0: peers on this node are reached through the transport interface instead of inline loads and stores, so every operation takes the generic path (for testing it).";
    ACLSHMEM_TRANSPORT: one_of["auto", "ucx"] = "auto", "auto: shared memory for peers on this node, UCX for peers on other nodes (loaded only when the job spans nodes); ucx: every other PE through UCX, same-node peers too (for tests and comparisons).";
    ACLSHMEM_UCX_LIB: string = "", "The UCP library to load at run time (default libucp.so.0, from Debian's libucx0 package).";
    ACLSHMEM_UCX_TLS: string = "", "UCX transports for this library's UCX context (as UCX_TLS, e.g. tcp or rc,sm); unset: UCX_TLS or UCX's default. Every other UCX_* variable reaches UCX unchanged.";
    ACLSHMEM_UCX_TIMEOUT: duration = "60s", "A blocking UCX operation (put, get, atomic, quiet) to a PE on another node that has not completed after this long fails with ACLSHMEM_TIMEOUT_ERROR naming the PE, the connection to it is closed and later operations to it fail at once (a lost node normally ends the job sooner, through ACLSHMEM_HEARTBEAT_TIMEOUT); 0: wait for ever.";
    ACLSHMEM_UCX_PUT_AM: one_of["auto", "on", "off"] = "auto", "How puts (and put-with-signal) reach a PE on another node: on: one active message that the target applies and acknowledges (put + quiet, and a blocking put-with-signal, take one round trip; the target's CPU moves the data; above 64 KiB by rendezvous, the data received straight into the target's heap); off: UCX's put (then a flush, which over tcp, where UCX emulates puts with messages, took a second round trip); auto (default): on unless the machine has RDMA devices (/sys/class/infiniband) that the UCX transports in use (ACLSHMEM_UCX_TLS, else UCX_TLS) may include.";
    ACLSHMEM_UCX_PROGRESS_THREAD: bool = "1", "1 (default): a thread per instance sleeps in the UCX worker's event fd and progresses it, so remote puts and atomics land while this PE computes outside the library; 0: UCX progresses only inside library calls.";
    ACLSHMEM_SHM_DIR: string = "/dev/shm", "Mount point of the POSIX shared-memory file system whose free space is checked at init (init fails, naming it, when that space cannot be read).";
    SHMEM_UID_SESSION_ID: string = "", "aclshmemx_get_uniqueid: PE 0's rendezvous address, ipv4:port, [ipv6]:port or hostname:port (bound exactly).";
    SHMEM_UID_SOCK_IFNAME: string = "", "aclshmemx_get_uniqueid when SHMEM_UID_SESSION_ID is unset: <ifname>[:inet4|inet6], interface name prefix; unset: first up non-loopback, non-virtual interface (loopback when none).";
    SHMEM_INSTANCE_PORT_RANGE: port_range = "", "Multi-instance DEFAULT mode: start:end; instance k (ip_port tcp://host:0) listens on port start + k.";
    ACLSHMEM_MPI_LIB: string = "", "ACLSHMEMX_INIT_WITH_MPI when the program does not link MPI: the MPI library to load (default: Open MPI's libmpi.so.40 under mpirun of Open MPI, else MPICH's libmpich.so.12).";
    SHMEM_CYCLE_PROF_PE: usize = "", "PE whose stream-ordered operations are profiled (aclshmemx_get_prof): counts and nanoseconds per operation kind; unset: off.";
    ACLSHMEM_BCAST_ALGO: one_of["auto", "pull", "push"] = "auto", "Broadcast data movement: pull (every member copies from the root; auto) or push (the root writes to every member).";
    ACLSHMEM_COLLECT_ALGO: one_of["auto", "pull", "push"] = "auto", "collect/fcollect data movement: pull (auto) or push.";
    ACLSHMEM_ALLTOALL_ALGO: one_of["auto", "pull", "push"] = "auto", "alltoall data movement: pull (auto) or push.";
    ACLSHMEM_REDUCE_ALGO: one_of["auto", "direct", "scatter"] = "auto", "Reductions: direct (every member reduces everything), scatter (each member reduces one chunk and writes it everywhere), auto (direct up to 16 KiB).";
    ACLSHMEM_COLLECTIVE_TIMEOUT: duration = "", "Barriers, syncs, collectives and team splits fail with ACLSHMEM_TIMEOUT_ERROR, naming the PEs that have not arrived, after waiting this long (seconds, or digits with ms/s/m); unset or 0: they wait for ever, as OpenSHMEM does.";
    ACLSHMEM_STALL_WARNING: duration = "30", "A barrier or collective still waiting after this long logs a warning (also on stderr) naming the PEs it waits for, once per call; 0: never.";
    RANK: c_int = "", "torchrun: global rank (used when ACLSHMEM_MY_PE is unset).";
    WORLD_SIZE: c_int = "", "torchrun: number of ranks.";
    LOCAL_RANK: c_int = "", "torchrun: rank on this node.";
    LOCAL_WORLD_SIZE: c_int = "", "torchrun: ranks on this node.";
    MASTER_ADDR: string = "", "torchrun: host of rank 0; the config store listens on MASTER_PORT + 1 there (MASTER_PORT itself belongs to torch's own store).";
    MASTER_PORT: u16 = "", "torchrun: port of torch's store on MASTER_ADDR.";
    TORCHELASTIC_RUN_ID: string = "", "torchrun: the job's run id (--rdzv-id; a fresh one with --standalone). Without a launcher token the job secret's file is named after it too (unless empty or none), so two jobs started at once on one MASTER_ADDR:MASTER_PORT never take each other's secret.";
    OMPI_COMM_WORLD_RANK: c_int = "", "Open MPI: rank (used when neither launcher nor torchrun variables are set).";
    OMPI_COMM_WORLD_SIZE: c_int = "", "Open MPI: number of ranks.";
    PMI_RANK: c_int = "", "PMI (MPICH/Hydra, Slurm): rank.";
    PMI_SIZE: c_int = "", "PMI: number of ranks.";
    PMIX_RANK: c_int = "", "PMIx: rank (the size comes from OMPI_COMM_WORLD_SIZE or PMI_SIZE).";
    SHMEM_SYMMETRIC_SIZE: decimal_size = "", "OpenSHMEM programs (shmem_init): symmetric heap size per PE, bytes or with a K/M/G/T suffix, the number may have a fraction (3.1m = 3250586 bytes, rounded up); deprecated name SMA_SYMMETRIC_SIZE; unset: ACLSHMEM_LOCAL_MEM_SIZE if that is set, else 512M (Sandia OpenSHMEM's default; its pages are allocated on first touch, see ACLSHMEM_SHM_PREALLOCATE).";
    SHMEM_INFO: flag = "0", "OpenSHMEM programs: set (any value but 0, false, no, off; deprecated name SMA_INFO) prints the library's version and settings (the environment table) at shmem_init on PE 0.";
    SHMEM_VERSION: flag = "0", "OpenSHMEM programs: set (any value but 0, false, no, off; deprecated name SMA_VERSION) prints the library's version at shmem_init on PE 0.";
    SHMEM_DEBUG: flag = "0", "OpenSHMEM programs: set (any value but 0, false, no, off; deprecated name SMA_DEBUG) prints the library's debug messages on stderr, as Sandia OpenSHMEM does (level DEBUG unless SHMEM_LOG_LEVEL says otherwise; SHMEM_LOG_PATH or SHMEM_LOG_TO_STDOUT=1 send them to the log file or stdout instead).";
    ACLSHMEM_OSHMEM_SYMMETRIC_DATA: bool = "1", "OpenSHMEM programs: 1 (default) makes the executable's global and static data symmetric at shmem_init (moved onto shared memory in place, so e.g. static long pSync[...] is a valid remote target); 0: only the symmetric heap is.";
    ACLSHMEM_OSHMEM_ON_ERROR: one_of["abort", "continue"] = "abort", "OpenSHMEM programs: what a shmem_* call does with bad input (NULL, non-symmetric address, PE out of range, call before shmem_init): abort (default: message naming the call and argument, then the job ends with status 1 as shmem_global_exit(1)) or continue (message only; the call does nothing and returns 0/NULL).";
}

/// Renders the table with effective values and types, for `ACLSHMEM_INFO=1`.
pub fn describe() -> String {
    let mut out = String::from("libaclshmem environment:\n");
    for v in ALL {
        let secret = v.name().ends_with("_TOKEN");
        let value = match v.raw() {
            // a secret is never printed (the launcher's --verbose hides it too)
            Some(_) if secret => "<hidden>".to_string(),
            Some(text) if v.check(&text).is_err() => format!("{text} (invalid)"),
            Some(text) => text,
            None => format!("{} (default)", v.default_text()),
        };
        let _ = writeln!(
            out,
            "  {:<26} = {:<24} {:<8} {}",
            v.name(),
            value,
            v.kind().label(),
            v.doc()
        );
    }
    out
}

/// Splits trimmed `text` into its leading digits and the rest with leading spaces removed;
/// `None` when there are no digits.
fn digits_and_unit(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    (!digits.is_empty()).then_some((digits, unit.trim_start()))
}

/// Parses a boolean: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`, in any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a byte size: digits, optional spaces, an optional K, M, G or T (binary multiples)
/// optionally followed by B or iB, or a lone B; any case. `0` is accepted; sizes of 2⁶⁴ bytes or
/// more are not.
pub fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = digits_and_unit(text)?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Parses a size whose number may have a decimal fraction (`3.1m`, `0.5G`, `1.5`): as
/// [`parse_size`], the bytes rounded up to a whole number.
pub fn parse_decimal_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let Some(dot) = t.find('.') else {
        return parse_size(t);
    };
    let (whole, rest) = (&t[..dot], &t[dot + 1..]);
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (frac, unit) = rest.split_at(end);
    // digits on both sides of the point (`.5` and `5.` are not numbers here), at most 18 after it
    if whole.is_empty() || frac.is_empty() || frac.len() > 18 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole_bytes = parse_size(&format!("{whole}{unit}"))?;
    let multiple = parse_size(&format!("1{unit}"))? as u128;
    let scale = 10u128.pow(frac.len() as u32);
    let part = (frac.parse::<u128>().ok()? * multiple).div_ceil(scale);
    whole_bytes.checked_add(u64::try_from(part).ok()?)
}

/// Reads a flag: on for any text except the boolean words for off (`0`, `false`, `no`, `off`).
pub fn parse_flag(text: &str) -> bool {
    parse_bool(text) != Some(false)
}

/// Parses an unsigned integer: digits only (after trimming), below 2⁶⁴.
pub fn parse_unsigned(text: &str) -> Option<u64> {
    match digits_and_unit(text)? {
        (digits, "") => digits.parse().ok(),
        _ => None,
    }
}

/// Parses a duration: digits, optional spaces and an optional unit `ms`, `s` (the default) or `m`;
/// any case.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let (digits, unit) = digits_and_unit(text)?;
    let n: u64 = digits.parse().ok()?;
    match unit.to_ascii_lowercase().as_str() {
        "" | "s" => Some(Duration::from_secs(n)),
        "ms" => Some(Duration::from_millis(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs),
        _ => None,
    }
}

/// Parses `start:end`: two port numbers 0..=65535 with `end >= start`.
pub fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let (start, end) = text.trim().split_once(':')?;
    let port = |t: &str| parse_unsigned(t).and_then(|p| u16::try_from(p).ok());
    let (start, end) = (port(start)?, port(end)?);
    (end >= start).then_some((start, end))
}

/// The word of `words` that `text` (trimmed) is exactly.
pub fn parse_word(text: &str, words: &[&'static str]) -> Option<&'static str> {
    let t = text.trim();
    words.iter().find(|w| **w == t).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans() {
        for on in ["1", "true", "yes", "on", "TRUE", "On", " yes "] {
            assert_eq!(parse_bool(on), Some(true), "{on}");
        }
        for off in ["0", "false", "no", "off", "FALSE", "Off", "0\n"] {
            assert_eq!(parse_bool(off), Some(false), "{off}");
        }
        for bad in ["", "2", "y", "enabled", "10", "truee"] {
            assert_eq!(parse_bool(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes_of_the_library() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("128M"), Some(128 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999999999999T"), None);
    }

    #[test]
    fn sizes_of_the_launcher() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1 T"), Some(1 << 40));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("99999999999999999999"), None);
        assert_eq!(parse_size("20000000000G"), None);
    }

    #[test]
    fn size_spellings() {
        for (text, bytes) in [
            ("7b", 7),
            ("7 B", 7),
            ("3KB", 3 << 10),
            ("3kib", 3 << 10),
            ("3MiB", 3 << 20),
            ("3mb", 3 << 20),
            ("3Gb", 3 << 30),
            ("3 tib", 3 << 40),
            (" 5M ", 5 << 20),
            ("16777215T", 16777215 << 40),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in [
            "3i",
            "3iB",
            "3KiBB",
            "3 K B",
            "K3",
            "3P",
            "16777216T",
            "+3",
            "3,5M",
            "0x10",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn decimal_sizes() {
        // the OpenSHMEM specification's example
        assert_eq!(parse_decimal_size("3.1m"), Some(3250586));
        assert_eq!(parse_decimal_size("0.5G"), Some(1 << 29));
        assert_eq!(parse_decimal_size("1.5"), Some(2));
        assert_eq!(parse_decimal_size("2.25 KiB"), Some(2304));
        assert_eq!(parse_decimal_size("64M"), Some(64 << 20));
        assert_eq!(parse_decimal_size("0.000000001k"), Some(1));
        for bad in [
            ".5m",
            "5.m",
            "1.2.3m",
            "1,5m",
            "-1.5m",
            "1.5x",
            "",
            "16777216.5T",
            "1.1234567890123456789k",
        ] {
            assert_eq!(parse_decimal_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn flags() {
        for on in ["1", "yes", "anything", "verbose", "2"] {
            assert!(parse_flag(on), "{on}");
        }
        for off in ["0", "false", "No", "off"] {
            assert!(!parse_flag(off), "{off}");
        }
    }

    #[test]
    fn deprecated_sma_names_are_read_when_the_shmem_name_is_unset() {
        // (the only test of this crate that touches these variables)
        // SAFETY: the test binary's other tests do not read these variables.
        unsafe {
            std::env::remove_var("SHMEM_DEBUG");
            std::env::set_var("SMA_DEBUG", "1");
            std::env::set_var("SMA_SYMMETRIC_SIZE", "1.5k");
        }
        assert_eq!(SHMEM_DEBUG.value(), Ok(true));
        assert_eq!(SHMEM_SYMMETRIC_SIZE.get(), Ok(Some(1536)));
        // SAFETY: as above.
        unsafe {
            std::env::set_var("SHMEM_DEBUG", "0");
            std::env::set_var("SMA_SYMMETRIC_SIZE", "lots");
        }
        assert_eq!(SHMEM_DEBUG.value(), Ok(false), "the SHMEM_ name wins");
        let err = SHMEM_SYMMETRIC_SIZE.get().unwrap_err();
        assert_eq!(
            err.name, "SMA_SYMMETRIC_SIZE",
            "the error names the variable that is set"
        );
        // SAFETY: as above.
        unsafe {
            std::env::remove_var("SHMEM_DEBUG");
            std::env::remove_var("SMA_DEBUG");
            std::env::remove_var("SMA_SYMMETRIC_SIZE");
        }
    }

    #[test]
    fn unsigned_integers() {
        assert_eq!(parse_unsigned("0"), Some(0));
        assert_eq!(parse_unsigned(" 42 "), Some(42));
        assert_eq!(parse_unsigned("18446744073709551615"), Some(u64::MAX));
        for bad in ["", "-1", "+1", "1.0", "4k", "18446744073709551616", "1 2"] {
            assert_eq!(parse_unsigned(bad), None, "{bad}");
        }
        let pe = Var {
            name: "TEST_PE",
            default: "",
            doc: "",
            ty: C_INT,
        };
        assert_eq!(pe.parse("2147483647"), Ok(i32::MAX));
        assert!(pe.parse("2147483648").is_err());
        assert!(pe.parse("-1").is_err());
        let port = Var {
            name: "TEST_PORT",
            default: "",
            doc: "",
            ty: U16,
        };
        assert_eq!(port.parse("65535"), Ok(65535));
        let err = port.parse("65536").unwrap_err();
        assert_eq!(
            err.to_string(),
            "TEST_PORT=\"65536\": expected an unsigned integer from 0 to 65535"
        );
        let u = Var {
            name: "TEST_U64",
            default: "",
            doc: "",
            ty: U64,
        };
        assert_eq!(u.parse("18446744073709551615"), Ok(u64::MAX));
        let u = Var {
            name: "TEST_U32",
            default: "",
            doc: "",
            ty: U32,
        };
        assert!(u.parse("4294967296").is_err());
        let u = Var {
            name: "TEST_USIZE",
            default: "",
            doc: "",
            ty: USIZE,
        };
        assert_eq!(u.parse("7"), Ok(7usize));
    }

    #[test]
    fn enums() {
        let words = &["auto", "pull", "push"];
        assert_eq!(parse_word("pull", words), Some("pull"));
        assert_eq!(parse_word(" push\n", words), Some("push"));
        assert_eq!(parse_word("PULL", words), None);
        assert_eq!(parse_word("", words), None);
        assert_eq!(parse_word("pul", words), None);
        assert_eq!(ACLSHMEM_REDUCE_ALGO.parse("scatter"), Ok("scatter"));
        let err = ACLSHMEM_REDUCE_ALGO.parse("bogus").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ACLSHMEM_REDUCE_ALGO=\"bogus\": expected one of auto, direct, scatter"
        );
        assert_eq!(SHMEM_LOG_LEVEL.parse("WARN"), Ok("WARN"));
        assert!(SHMEM_LOG_LEVEL.parse("warn").is_err());
    }

    #[test]
    fn durations() {
        for (text, d) in [
            ("30", Duration::from_secs(30)),
            ("0", Duration::ZERO),
            ("10s", Duration::from_secs(10)),
            ("10 S", Duration::from_secs(10)),
            ("500ms", Duration::from_millis(500)),
            ("500 MS", Duration::from_millis(500)),
            ("2m", Duration::from_secs(120)),
            (" 2M ", Duration::from_secs(120)),
        ] {
            assert_eq!(parse_duration(text), Some(d), "{text}");
        }
        for bad in [
            "",
            "s",
            "1.5",
            "-1",
            "5h",
            "5 m s",
            "5min",
            "99999999999999999999",
            "307445734561825861m",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(
            parse_duration("307445734561825860m"),
            Some(Duration::from_secs(307445734561825860 * 60))
        );
    }

    #[test]
    fn port_ranges() {
        assert_eq!(parse_port_range("5000:5010"), Some((5000, 5010)));
        assert_eq!(parse_port_range("0:65535"), Some((0, 65535)));
        assert_eq!(parse_port_range("7:7"), Some((7, 7)));
        for bad in [
            "",
            "5000",
            "5010:5000",
            "1:65536",
            ":5",
            "5:",
            "a:b",
            "1:2:3",
            "-1:5",
        ] {
            assert_eq!(parse_port_range(bad), None, "{bad}");
        }
        let err = SHMEM_INSTANCE_PORT_RANGE.parse("9:1").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("SHMEM_INSTANCE_PORT_RANGE=\"9:1\": expected"),
            "{err}"
        );
    }

    #[test]
    fn strings_are_taken_as_is() {
        assert_eq!(SHMEM_LOG_PATH.parse(" /tmp/x "), Ok(" /tmp/x ".to_string()));
    }

    #[test]
    fn accessors_read_the_environment() {
        // cargo sets these for the test process; nothing in this crate writes the environment
        let name = Var {
            name: "CARGO_PKG_NAME",
            default: "",
            doc: "",
            ty: STRING,
        };
        assert_eq!(name.get(), Ok(Some("aclshmem-config".to_string())));
        assert!(name.is_set());
        assert_eq!(name.raw().as_deref(), Some("aclshmem-config"));
        let word = Var {
            name: "CARGO_PKG_NAME",
            default: "",
            doc: "",
            ty: one_of(&["aclshmem-config"]),
        };
        assert_eq!(word.value(), Ok("aclshmem-config"));
        let wrong = Var {
            name: "CARGO_PKG_NAME",
            default: "on",
            doc: "",
            ty: BOOL,
        };
        let err = wrong.get().unwrap_err();
        assert_eq!(err.name, "CARGO_PKG_NAME");
        assert_eq!(err.value.as_deref(), Some("aclshmem-config"));
        assert_eq!(
            err.to_string(),
            "CARGO_PKG_NAME=\"aclshmem-config\": expected a boolean: 1, true, yes, on, 0, false, no or off"
        );
        // the default never hides an invalid value
        assert!(wrong.value().is_err());
        let major = Var {
            name: "CARGO_PKG_VERSION_MAJOR",
            default: "",
            doc: "",
            ty: U32,
        };
        assert_eq!(major.get(), Ok(Some(0)));
    }

    #[test]
    fn defaults_apply_when_unset() {
        let unset = |default, ty| Var {
            name: "ACLSHMEM_CONFIG_TEST_NEVER_SET",
            default,
            doc: "",
            ty,
        };
        assert!(!unset("", SIZE).is_set());
        assert_eq!(unset("", SIZE).raw(), None);
        assert_eq!(unset("", SIZE).get(), Ok(None));
        assert_eq!(unset("2k", SIZE).get(), Ok(None));
        assert_eq!(unset("2k", SIZE).value(), Ok(2048));
        let err = unset("", SIZE).value().unwrap_err();
        assert_eq!(err.value, None);
        assert!(
            err.to_string()
                .starts_with("ACLSHMEM_CONFIG_TEST_NEVER_SET is not set (no default): expected a size"),
            "{err}"
        );
        let off = Var {
            name: "ACLSHMEM_CONFIG_TEST_NEVER_SET",
            default: "off",
            doc: "",
            ty: BOOL,
        };
        assert_eq!(off.value(), Ok(false));
    }

    #[test]
    fn table_names_are_unique() {
        let mut names: Vec<_> = ALL.iter().map(|v| v.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }

    #[test]
    fn table_defaults_are_valid() {
        for v in ALL {
            if !v.default_text().is_empty() {
                assert_eq!(v.check(v.default_text()), Ok(()), "{}", v.name());
            }
        }
        assert_eq!(
            ACLSHMEM_LOCAL_MEM_SIZE.parse(ACLSHMEM_LOCAL_MEM_SIZE.default),
            Ok(128 << 20)
        );
        assert_eq!(
            ACLSHMEM_SHM_DIR.parse(ACLSHMEM_SHM_DIR.default).as_deref(),
            Ok("/dev/shm")
        );
    }

    #[test]
    fn enum_docs_list_every_word() {
        for v in ALL {
            if let Kind::Enum(words) = v.kind() {
                for w in words {
                    assert!(v.doc().contains(w), "{}: the doc does not mention {w}", v.name());
                }
            }
        }
    }

    #[test]
    fn description_lists_every_variable() {
        let text = describe();
        assert!(text.starts_with("libaclshmem environment:\n"));
        assert_eq!(text.lines().count(), ALL.len() + 1);
        for v in ALL {
            assert!(text.contains(v.name()), "{}", v.name());
        }
    }

    /// The job secret is never printed (`ACLSHMEM_INFO=1` printed it whole).
    #[test]
    fn description_hides_the_job_token() {
        // SAFETY: no other test of this crate reads or writes this variable.
        unsafe { std::env::set_var("ACLSHMEM_JOB_TOKEN", "s3cr3t-t0ken") };
        let text = describe();
        // SAFETY: as above.
        unsafe { std::env::remove_var("ACLSHMEM_JOB_TOKEN") };
        assert!(!text.contains("s3cr3t-t0ken"), "{text}");
        let line = text.lines().find(|l| l.contains("ACLSHMEM_JOB_TOKEN")).unwrap();
        assert!(line.contains("<hidden>"), "{line}");
    }
}

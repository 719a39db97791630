//! `aclshmrun`: start N PEs of a program on this machine and supervise them.
//!
//! `aclshmrun -n N [options] PROG [ARGS...]` (or `-np N`). Every PE gets its rank, the
//! job size, the bootstrap URL and the job's identity through the environment; the first
//! PE to fail ends the job, and the job's POSIX shared-memory objects are removed on every
//! way out. Run `aclshmrun --help` for the options.

/// `eprintln!` that never panics: the launcher's messages go to a stderr that may be a closed
/// pipe (`aclshmrun ... 2>&1 | head`), where `eprintln!` panicked and the job's status became
/// 101. A message that cannot be written is dropped; the exit status still tells.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cleanup;
mod cli;
mod job;
mod launch;
mod output;
mod supervise;
mod tree;

use clap::Parser;

fn main() {
    let args = cli::Args::parse_from(cli::normalize_argv(std::env::args_os()));
    let status = launch::run(&args);
    std::process::exit(status);
}

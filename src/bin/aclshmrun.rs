//! `aclshmrun`: start N PEs of a program on this machine and supervise them.
//!
//! `aclshmrun -n N [options] PROG [ARGS...]` (or `-np N`). Every PE gets its rank, the
//! job size, the bootstrap URL and the job's identity through the environment; the first
//! PE to fail ends the job, and the job's POSIX shared-memory objects are removed on every
//! way out. Run `aclshmrun --help` for the options.

#[path = "aclshmrun/cleanup.rs"]
mod cleanup;
#[path = "aclshmrun/cli.rs"]
mod cli;
#[path = "aclshmrun/job.rs"]
mod job;
#[path = "aclshmrun/launch.rs"]
mod launch;
#[path = "aclshmrun/output.rs"]
mod output;
#[path = "aclshmrun/supervise.rs"]
mod supervise;

use clap::Parser;

fn main() {
    let args = cli::Args::parse_from(cli::normalize_argv(std::env::args_os()));
    let status = launch::run(&args);
    std::process::exit(status);
}

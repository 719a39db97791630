//! `cargo xtask <task>`; tasks:
//!
//! - `codegen`: writes every generated file (see the library's documentation for the list);
//! - `codegen --check`: writes nothing, names each file that `codegen` would change and exits 1.

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask codegen [--check]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["codegen"] => xtask::Mode::Write,
        ["codegen", "--check"] => xtask::Mode::Check,
        _ => return usage(),
    };
    let stale = xtask::codegen(&xtask::root(), mode);
    match mode {
        xtask::Mode::Write => {
            for path in &stale {
                println!("wrote {path}");
            }
            ExitCode::SUCCESS
        }
        xtask::Mode::Check if stale.is_empty() => ExitCode::SUCCESS,
        xtask::Mode::Check => {
            for path in &stale {
                eprintln!("stale: {path}");
            }
            eprintln!("run `cargo xtask codegen` and commit the result");
            ExitCode::FAILURE
        }
    }
}

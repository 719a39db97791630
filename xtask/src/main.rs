//! `cargo xtask <task>`; tasks:
//!
//! - `codegen`: writes every generated file (see the library's documentation for the list);
//! - `codegen --check`: writes nothing, names each file that `codegen` would change and exits 1;
//! - `ucx-bindings [--check]` (built with the `ucx` feature: `cargo ucx-bindings`): the same for
//!   the UCX bindings of the inter-node transport (xtask/src/ucx.rs).

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask codegen [--check] | cargo ucx-bindings [--check]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["codegen"] => xtask::Mode::Write,
        ["codegen", "--check"] => xtask::Mode::Check,
        ["ucx-bindings", rest @ ..] => return ucx_bindings(rest),
        _ => return usage(),
    };
    let stale = xtask::codegen(&xtask::root(), mode);
    report(mode, &stale)
}

#[cfg(feature = "ucx")]
fn ucx_bindings(rest: &[&str]) -> ExitCode {
    let mode = match rest {
        [] => xtask::Mode::Write,
        ["--check"] => xtask::Mode::Check,
        _ => return usage(),
    };
    let stale = xtask::update(&xtask::root(), vec![xtask::ucx::generate()], mode);
    report(mode, &stale)
}

#[cfg(not(feature = "ucx"))]
fn ucx_bindings(_rest: &[&str]) -> ExitCode {
    eprintln!("ucx-bindings needs the ucx feature: run `cargo ucx-bindings [--check]`");
    ExitCode::from(2)
}

fn report(mode: xtask::Mode, stale: &[String]) -> ExitCode {
    match mode {
        xtask::Mode::Write => {
            for path in stale {
                println!("wrote {path}");
            }
            ExitCode::SUCCESS
        }
        xtask::Mode::Check if stale.is_empty() => ExitCode::SUCCESS,
        xtask::Mode::Check => {
            for path in stale {
                eprintln!("stale: {path}");
            }
            eprintln!("run `cargo xtask codegen` (or `cargo ucx-bindings`) and commit the result");
            ExitCode::FAILURE
        }
    }
}

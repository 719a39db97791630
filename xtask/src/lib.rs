//! Code generation of libaclshmem, run as `cargo xtask codegen` (see `main.rs`) and by the drift
//! tests of the root package.
//!
//! From the tables of [`tables`] it writes:
//! - the typed C families `src/ffi/{rma,signal,sync,atomic,coll}_typed.rs` ([`typed`]);
//! - `tests/abi/generated.txt`, the symbols those files export ([`manifest`]);
//! - `cbindgen/typed_aliases_{rma,so}.h`, the typed `shmem_*` alias macros ([`aliases`]);
//!
//! and then `include/shmem.h` with cbindgen ([`header`]), which inlines those fragments. [`fragments`]
//! checks the C written by hand in the fragments against the Rust signatures and the tables
//! (tests/fragments.rs).

pub mod aliases;
pub mod format;
pub mod fragments;
pub mod header;
pub mod manifest;
pub mod tables;
pub mod typed;
#[cfg(feature = "ucx")]
pub mod ucx;

use std::path::{Path, PathBuf};

/// The C name prefix of this library's exports.
pub const PREFIX: &str = "aclshmem";

/// The workspace root (the parent of this crate's directory).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// One generated file: path relative to the workspace root, and its content.
#[derive(Clone, Debug)]
pub struct Output {
    pub path: String,
    pub text: String,
}

/// Every file generated from the tables alone (no cbindgen), C names with `prefix`.
pub fn table_outputs(prefix: &str) -> Vec<Output> {
    let typed = typed::all(prefix);
    let mut out = vec![Output {
        path: manifest::PATH.to_string(),
        text: manifest::text(&typed),
    }];
    out.extend(typed.into_iter().map(|g| Output {
        path: g.path.to_string(),
        text: g.text,
    }));
    out.extend(aliases::fragments(prefix).into_iter().map(|(path, text)| Output {
        path: path.to_string(),
        text,
    }));
    out
}

/// What [`codegen`] does with a file that differs from its fresh content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// write it
    Write,
    /// only report it
    Check,
}

/// Brings every generated file under `root` up to date (or, with [`Mode::Check`], only compares):
/// the table outputs first, then `include/shmem.h` from the sources and fragments as they are then
/// on disk. Returns the paths (relative to `root`) that differed.
pub fn codegen(root: &Path, mode: Mode) -> Vec<String> {
    let mut stale = update(root, table_outputs(PREFIX), mode);
    let header = Output {
        path: header::HEADER.to_string(),
        text: header::generate(root),
    };
    stale.extend(update(root, vec![header], mode));
    stale
}

/// Compares each output with its file under `root`, writes it in [`Mode::Write`], and returns the
/// paths that differed.
pub fn update(root: &Path, outputs: Vec<Output>, mode: Mode) -> Vec<String> {
    let mut stale = Vec::new();
    for output in outputs {
        let path = root.join(&output.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == output.text {
            continue;
        }
        if mode == Mode::Write {
            std::fs::write(&path, &output.text)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
        stale.push(output.path);
    }
    stale
}

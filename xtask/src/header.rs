//! `include/shmem.h`: cbindgen over the crate's `src/ffi/`, with the verbatim C of the fragments in
//! `cbindgen/` as its `header`, `after_includes` and `trailer`.
//!
//! A fragment is a real `.h` file. Its leading `//` lines are notes for the reader and are dropped;
//! each line `#include "NAME"` naming a file of `cbindgen/` is replaced by that fragment (notes
//! dropped too), so generated fragments (the typed `shmem_*` aliases) are spliced into the
//! hand-written ones. `<...>` includes are kept.

use std::path::{Path, PathBuf};

/// Directory of the fragments, relative to the workspace root.
pub const FRAGMENTS: &str = "cbindgen";

/// Path of the generated header, relative to the workspace root.
pub const HEADER: &str = "include/shmem.h";

/// `cbindgen/<name>` without its notes, its `#include "…"` lines replaced by their fragments.
pub fn fragment(root: &Path, name: &str) -> String {
    let path = fragment_path(root, name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fragment {}: {e}", path.display()));
    let mut out = String::new();
    let mut notes = true;
    for line in text.split_inclusive('\n') {
        if notes && line.starts_with("//") {
            continue;
        }
        notes = false;
        match included(line) {
            Some(inner) => out.push_str(&fragment(root, inner)),
            None => out.push_str(line),
        }
    }
    out
}

fn fragment_path(root: &Path, name: &str) -> PathBuf {
    assert!(
        !name.contains('/') && name.ends_with(".h"),
        "fragments include only files of {FRAGMENTS}/: {name}"
    );
    root.join(FRAGMENTS).join(name)
}

/// `NAME` of a line `#include "NAME"`.
fn included(line: &str) -> Option<&str> {
    line.trim_end().strip_prefix("#include \"")?.strip_suffix('"')
}

/// The three texts cbindgen takes from the fragments: (header, after_includes, trailer).
pub fn parts(root: &Path) -> (String, String, String) {
    let mut header = fragment(root, "header.h");
    // cbindgen writes a newline after the header itself
    if header.ends_with('\n') {
        header.pop();
    }
    (
        header,
        fragment(root, "after_includes.h"),
        fragment(root, "trailer.h"),
    )
}

/// `include/shmem.h` as cbindgen generates it now from `root`'s sources, `cbindgen.toml` and the
/// fragments.
pub fn generate(root: &Path) -> String {
    let mut config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let (header, after_includes, trailer) = parts(root);
    config.header = Some(header);
    config.after_includes = Some(after_includes);
    config.trailer = Some(trailer);
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("utf-8 header")
}

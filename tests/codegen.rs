//! The typed C families, the manifest of their exports and the typed `shmem_*` alias fragments are
//! generated from the type tables of the xtask (`xtask/src/tables.rs`) into committed files; this
//! test regenerates them and fails when a committed file is stale (include/shmem.h: tests/header.rs).
//!
//! Regenerate: `cargo xtask codegen`. `ACLSHMEM_BLESS=1 cargo test --test codegen` does the same
//! (every generated file, include/shmem.h included).

#[test]
fn generated_files_are_current() {
    let root = xtask::root();
    if std::env::var_os("ACLSHMEM_BLESS").is_some() {
        xtask::codegen(&root, xtask::Mode::Write);
        return;
    }
    let stale = xtask::update(&root, xtask::table_outputs(xtask::PREFIX), xtask::Mode::Check);
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}: run `cargo xtask codegen` and commit them"
    );
}

/// The generators take the C prefix: with another one no C name of this library is left (Rust
/// paths such as `aclshmem_core::` stay).
#[test]
fn generators_follow_the_prefix() {
    for output in xtask::table_outputs("shmem") {
        let text = output
            .text
            .replace("aclshmem_core", "")
            .replace("ACLSHMEM_BLESS", "");
        assert!(
            !text.contains("aclshmem") && !text.contains("ACLSHMEM"),
            "{} keeps an aclshmem name with the prefix `shmem`",
            output.path
        );
    }
}

//! The C written by hand in the header fragments (cbindgen/) agrees with the Rust sources and the
//! type tables:
//! - each hand-written prototype (the C++ default-argument forms of `aclshmemx_malloc`, `calloc`,
//!   `align`, `free`, `get_heap_base`; the p2p-sync declaration generators instantiated for every
//!   type of `ACLSHMEM_P2P_SYNC_TYPE_FUNC`) has the parameter and return types of the Rust export
//!   of the same name, spelled as cbindgen spells them;
//! - `ACLSHMEM_TYPE_FUNC`, `ACLSHMEM_P2P_SYNC_TYPE_FUNC` and `ACLSHMEM_SIZE_FUNC` list the types and
//!   sizes of xtask/src/tables.rs.

#[test]
fn hand_written_prototypes_match_the_rust_signatures() {
    match xtask::fragments::check_prototypes(&xtask::root()) {
        // 5 heap calls + 14 generator macros x 10 types
        Ok(checked) => assert!(
            checked >= 5 + 14 * 10,
            "only {checked} prototypes found in cbindgen/"
        ),
        Err(errors) => panic!(
            "hand-written prototypes of cbindgen/ differ from src/ffi/:\n  {}",
            errors.join("\n  ")
        ),
    }
}

#[test]
fn family_macros_match_the_tables() {
    if let Err(errors) = xtask::fragments::check_family_macros(&xtask::root()) {
        panic!("{}", errors.join("\n"));
    }
}

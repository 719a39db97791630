//! Build script: compiles the C helper that does `long double` arithmetic for the reductions
//! (Rust has no `long double`; see `csrc/longdouble.c` and `src/longdouble.rs`).
fn main() {
    println!("cargo:rerun-if-changed=csrc/longdouble.c");
    cc::Build::new()
        .file("csrc/longdouble.c")
        .std("c11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("aclshmem_osh_longdouble");
}

//! Build script: gives the C library the SONAME of the real ACL runtime, so programs linked with
//! `-lascendcl` and the shmem library's `dlopen("libascendcl.so")` load this file.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
    println!("cargo:rerun-if-changed=build.rs");
}

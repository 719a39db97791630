//! Build script: gives the C library its SONAME so that `libshmem.so` (the original's name) can be a
//! symlink to `libaclshmem.so` and programs linked against either keep loading the same file.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libaclshmem.so");
    println!("cargo:rerun-if-changed=build.rs");
}

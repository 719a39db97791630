//! The committed include/shmem.h equals what cbindgen generates from src/ffi/, cbindgen.toml and
//! the C fragments of cbindgen/ (xtask/src/header.rs hands them to cbindgen as its `header`,
//! `after_includes` and `trailer`), and it compiles unchanged as C11 and C++14/17 with -Wall -Wextra
//! -Werror -pedantic.
//!
//! Regenerate: `cargo xtask codegen` (everything) or `ACLSHMEM_BLESS=1 cargo test --test header`
//! (the header alone, from the fragments as they are on disk).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate() -> String {
    xtask::header::generate(&root())
}

#[test]
fn committed_header_is_current() {
    let path = root().join("include/shmem.h");
    let fresh = generate();
    if std::env::var_os("ACLSHMEM_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/shmem.h is stale: run `cargo xtask codegen` and commit it"
    );
}

fn compile(compiler: &str, std: &str, src: &Path, ext: &str) {
    let out = std::env::temp_dir().join(format!("aclshmem-header-{}-{std}.o", std::process::id()));
    let status = Command::new(compiler)
        .args([
            &format!("-std={std}"),
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-x",
            ext,
            "-c",
        ])
        .arg(src)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run compiler");
    let _ = std::fs::remove_file(&out);
    assert!(
        status.success(),
        "{compiler} -std={std} failed on {}",
        src.display()
    );
}

/// Also as C99 (older code bases build with `-std=gnu99 -pedantic -Werror`, which refused the
/// layout assert's `_Static_assert`).
#[test]
fn header_compiles_as_c11_and_cxx14() {
    let src = root().join("tests/c/header_compile.c");
    compile("gcc", "c11", &src, "c");
    compile("gcc", "c99", &src, "c");
    compile("gcc", "gnu99", &src, "c");
    compile("g++", "c++14", &src, "c++");
    compile("g++", "c++17", &src, "c++");
    // with the ACL runtime's headers in one translation unit, either order (both declare
    // aclrtStream: a repeated typedef, which C99 refuses)
    let dir = std::env::temp_dir().join(format!("aclshmem-hdr-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, first) in ["shmem.h", "acl/acl.h"].iter().enumerate() {
        let other = if i == 0 { "acl/acl.h" } else { "shmem.h" };
        let both = dir.join(format!("both{i}.c"));
        std::fs::write(
            &both,
            format!(
                "#include <{first}>\n#include <{other}>\nint use_it(aclrtStream s) {{ return s != 0; }}\n"
            ),
        )
        .unwrap();
        for std in ["c99", "gnu99", "c11"] {
            compile("gcc", std, &both, "c");
        }
        compile("clang", "c99", &both, "c");
        compile("g++", "c++14", &both, "c++");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn forwarding_headers_compile() {
    let dir = std::env::temp_dir().join(format!("aclshmem-fwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for h in [
        "host/shmem_host_def.h",
        "host/mem/shmem_host_heap.h",
        "host/init/shmem_host_init.h",
        "host/data_plane/shmem_host_rma.h",
        "host/data_plane/shmem_host_so.h",
        "host/data_plane/shmem_host_p2p_sync.h",
        "host/data_plane/shmem_host_cc.h",
        "host/team/shmem_host_team.h",
        "host/utils/shmem_log.h",
        "host/utils/shmem_host_exception.h",
        "host_device/shmem_common_types.h",
        "host_device/shmem_common_macros.h",
        // the paths of earlier releases (aclshmem_* file names)
        "aclshmem.h",
        "host/aclshmem_host_def.h",
        "host/mem/aclshmem_host_heap.h",
        "host/init/aclshmem_host_init.h",
        "host/data_plane/aclshmem_host_rma.h",
        "host/data_plane/aclshmem_host_sync.h",
        "host/data_plane/aclshmem_host_p2p_sync.h",
        "host/data_plane/aclshmem_host_cc.h",
        "host/team/aclshmem_host_team.h",
        "host/utils/aclshmem_log.h",
        "host_device/aclshmem_common_types.h",
        "host_device/common_types.h",
    ] {
        let src = dir.join("fwd.c");
        std::fs::write(
            &src,
            format!(
                "#include \"{h}\"\n#include \"shmem.h\"\nint use_it(void) {{ return aclshmem_my_pe(); }}\n"
            ),
        )
        .unwrap();
        compile("gcc", "c11", &src, "c");
        compile("g++", "c++14", &src, "c++");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

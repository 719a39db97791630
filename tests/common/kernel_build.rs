//! Building the CPU device mode's test programs (`tests/c/*.cpp`, host code and kernels in one
//! file) with `scripts/aclshmem-cxx`: used by `tests/kernels.rs` and by the kernels run across
//! nodes in `tests/multinode.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::SystemTime;

/// When `p` was last modified (None when it does not exist).
pub fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Whether `tool --version` runs.
pub fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `python3 scripts/aclshmem-cxx` compiling with `cxx` (or the wrapper's default when None)
/// against this tree's headers and libraries.
pub fn wrapper_command(cxx: Option<&str>) -> Command {
    let root = super::repo_root();
    let mut c = Command::new("python3");
    c.arg(root.join("scripts/aclshmem-cxx"))
        .env("ACLSHMEM_INCLUDE_DIR", root.join("include"))
        .env("ACLSHMEM_LIB_DIR", super::profile_dir());
    if let Some(cxx) = cxx {
        c.env("ACLSHMEM_CXX", cxx);
    }
    c
}

/// `name` is the source's stem under tests/c, or `stem:output` to build it under another name.
pub fn build_program(cache: &Mutex<Option<PathBuf>>, name: &str, cxx: &str) -> Option<PathBuf> {
    let (stem, name) = name.split_once(':').unwrap_or((name, name));
    let mut done = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = done.as_ref() {
        return Some(p.clone());
    }
    if !have("python3") || !have(cxx) {
        return None;
    }
    super::ensure_built();
    let root = super::repo_root();
    let lib_dir = super::profile_dir();
    let src = root.join(format!("tests/c/{stem}.cpp"));
    let out_dir = super::target_dir().join("ctests");
    std::fs::create_dir_all(&out_dir).expect("create <target>/ctests");
    let out = out_dir.join(name);
    let mut inputs = vec![
        src.clone(),
        root.join("scripts/aclshmem-cxx"),
        root.join("include/shmem.h"),
        root.join("include/kernel_operator.h"),
        lib_dir.join("libaclshmem.so"),
        lib_dir.join("libascendcl.so"),
    ];
    for dir in ["include/device", "include/device_simt", "include/simt_api"] {
        files_under(&root.join(dir), &mut inputs);
    }
    // the test programs' own headers
    let mut local = Vec::new();
    files_under(&root.join("tests/c"), &mut local);
    inputs.extend(local.into_iter().filter(|p| {
        p.extension().is_some_and(|e| e == "h")
            && p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("kernel_"))
    }));
    let newest = inputs.iter().filter_map(|p| mtime(p)).max();
    if !(mtime(&out).is_some() && mtime(&out) >= newest) {
        let tmp = out_dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let output = wrapper_command(Some(cxx))
            .args(["-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
            .arg(&src)
            .arg("-o")
            .arg(&tmp)
            .output()
            .expect("run aclshmem-cxx");
        if !output.status.success() {
            let _ = std::fs::remove_file(&tmp);
            panic!(
                "compiling {} with aclshmem-cxx ({cxx}) failed:\n{}{}",
                src.display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::fs::rename(&tmp, &out).expect("move the test program into place");
    }
    *done = Some(out.clone());
    Some(out)
}

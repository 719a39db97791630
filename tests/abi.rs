//! ABI contract: error codes, struct layouts (from C and C++), and the exported symbol set.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use aclshmem_core::Error;
use aclshmem_core::error::code;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Directory holding the built libaclshmem.so (the integration test lives in <target>/<profile>/deps).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(
        dir.join("libaclshmem.so").exists(),
        "{} has no libaclshmem.so: run `cargo build` first",
        dir.display()
    );
    dir
}

#[test]
fn error_codes_equal_aclshmem_error_code_t() {
    let pinned = [
        (code::SUCCESS, 0),
        (code::INVALID_PARAM, -1),
        (code::INVALID_VALUE, -2),
        (code::SMEM_ERROR, -3),
        (code::INNER_ERROR, -4),
        (code::NOT_INITED, -5),
        (code::BOOTSTRAP_ERROR, -6),
        (code::TIMEOUT_ERROR, -7),
        (code::MALLOC_FAILED, -8),
        (code::DL_FUNC_FAILED, -9),
        (code::INNER_TIMEOUT, -10),
        (code::UNDER_API_UNLOAD, -11),
        (code::NOT_SUPPORTED, -100),
    ];
    for (ours, spec) in pinned {
        assert_eq!(ours, spec);
    }
    let s = String::new;
    assert_eq!(Error::InvalidParam(s()).code(), -1);
    assert_eq!(Error::InvalidValue(s()).code(), -2);
    assert_eq!(Error::Smem(s()).code(), -3);
    assert_eq!(Error::Inner(s()).code(), -4);
    assert_eq!(Error::NotInited.code(), -5);
    assert_eq!(Error::Bootstrap(s()).code(), -6);
    assert_eq!(Error::Timeout(s()).code(), -7);
    assert_eq!(Error::MallocFailed(s()).code(), -8);
    assert_eq!(Error::NotSupported(s()).code(), -100);
}

#[test]
fn c_and_cxx_layouts_equal_the_spec() {
    let src = root().join("tests/c/abi_layout.c");
    for (cc, std, lang) in [("gcc", "c11", "c"), ("g++", "c++14", "c++")] {
        let out = std::env::temp_dir().join(format!("aclshmem-abi-{}-{std}", std::process::id()));
        let status = Command::new(cc)
            .args([
                &format!("-std={std}"),
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-x",
                lang,
            ])
            .arg(&src)
            .arg("-I")
            .arg(root().join("include"))
            .arg("-x")
            .arg("none")
            .arg("-L")
            .arg(lib_dir())
            .arg("-laclshmem")
            .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
            .arg("-o")
            .arg(&out)
            .status()
            .expect("compiler");
        assert!(status.success(), "{cc} -std={std}: layout assertions failed");
        let run = Command::new(&out).status().expect("run layout probe");
        let _ = std::fs::remove_file(&out);
        assert!(run.success(), "{std}: default initialisers differ from spec 5.3");
    }
}

/// The names of a manifest under tests/abi/ (first word of each line; `#` starts a comment line);
/// a name listed twice fails.
fn list(name: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in std::fs::read_to_string(root().join("tests/abi").join(name))
        .unwrap()
        .lines()
    {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let symbol = line.split_whitespace().next().unwrap().to_string();
        assert!(
            names.insert(symbol.clone()),
            "tests/abi/{name} lists {symbol} twice"
        );
    }
    names
}

#[test]
fn exported_symbols_match_the_manifest() {
    let lib = lib_dir().join("libaclshmem.so");
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .expect("nm");
    assert!(out.status.success(), "nm failed on {}", lib.display());
    let exported: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T"
                && (name.starts_with("aclshmem") || name.starts_with("shmem") || name.starts_with("util_")))
            .then(|| name.to_string())
        })
        .collect();
    let spec = list("host_functions.txt");
    assert_eq!(
        spec.len(),
        350,
        "host_functions.txt must list the 350 functions of spec Appendix A"
    );
    let pending = list("pending.txt");
    let extensions = list("extensions.txt");
    // written by `cargo xtask codegen`: every export of the generated typed families
    let generated = list("generated.txt");
    // the OpenSHMEM surface (crates/openshmem): hand-written and generated exports
    let openshmem: BTreeSet<String> = list("openshmem.txt")
        .into_iter()
        .chain(list("openshmem_generated.txt"))
        .collect();
    // each export has one place: the spec (host_functions.txt, which also names the generated
    // families of the original API), generated.txt (the generated extensions) or extensions.txt
    let twice: Vec<_> = extensions.intersection(&generated).collect();
    assert!(
        twice.is_empty(),
        "listed in extensions.txt and generated.txt (remove them from extensions.txt): {twice:?}"
    );
    let in_spec: Vec<_> = extensions.intersection(&spec).collect();
    assert!(
        in_spec.is_empty(),
        "extensions.txt lists functions of the spec: {in_spec:?}"
    );
    let generated_pending: Vec<_> = generated.intersection(&pending).collect();
    assert!(
        generated_pending.is_empty(),
        "pending.txt lists functions that are generated (remove them): {generated_pending:?}"
    );
    let expected: BTreeSet<String> = spec
        .difference(&pending)
        .cloned()
        .chain(extensions.iter().cloned())
        .chain(generated.iter().cloned())
        .chain(openshmem.iter().cloned())
        .collect();
    let missing: Vec<_> = expected.difference(&exported).collect();
    let unexpected: Vec<_> = exported.difference(&expected).collect();
    assert!(
        missing.is_empty(),
        "listed as implemented but not exported: {missing:?}"
    );
    assert!(
        unexpected.is_empty(),
        "exported but not in the manifest (remove from tests/abi/pending.txt, add to extensions.txt, or run \
         `cargo xtask codegen` for a generated family): {unexpected:?}"
    );
    assert!(
        pending.is_subset(&spec),
        "pending.txt names functions that are not in the spec"
    );
}

#[test]
fn soname_is_libaclshmem() {
    let lib = lib_dir().join("libaclshmem.so");
    let out = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Library soname: [libaclshmem.so]"),
        "SONAME missing:\n{text}"
    );
}

//! Every host call of `include/shmem.h`, of the OpenSHMEM surface's `include/openshmem/shmem.h`
//! (with `ACLSHMEM_OSHMEM_ON_ERROR=continue`, so bad input is reported and skipped instead of ending
//! the job) and of the CPU ACL runtime (`include/acl/`), with bad arguments: a C program generated from the header's prototypes calls each
//! function (init, finalize and global_exit aside) with four argument profiles, before init, on 2
//! PEs after init, and after finalize. Nothing may crash, hang or write outside the program's
//! scratch buffer; a call's error is logged or returned.
//!
//! Profiles (pointer arguments, then PEs, teams, comparisons and sizes):
//! 0. NULL; 0 (PE 0, the world team, ACLSHMEM_CMP_EQ, size 0: many calls are valid no-ops, the
//!    collectives on the world team meet, as every PE makes the same calls);
//! 1. a non-symmetric buffer of the program (zeroed); PE 77, team 9999, comparison/signal op 42,
//!    size 16;
//! 2. the same buffer; PE -1, team -7, the largest value of every integer type, a stream handle
//!    that is not a stream;
//! 3. the same buffer; PE 1, the world team, ACLSHMEM_CMP_EQ and 8 bytes: non-symmetric buffers
//!    to otherwise valid calls;
//! 4. as 3, with every pointer one byte past the buffer's start: valid memory, misaligned for any
//!    type wider than a byte.
//!
//! OpenSHMEM team and context handles are pointers: NULL (`SHMEM_TEAM_INVALID`), the scratch
//! buffer, an address with every bit set, then `SHMEM_TEAM_WORLD` / `SHMEM_CTX_DEFAULT`.
//!
//! Before init and after finalize, 4 threads then sweep profiles 2 and 3 at once (their
//! collectives are refused, so no two threads of a PE make the same collective call together).
//!
//! A crash prints the call it happened in (a signal handler), a hang fails on the time limit and the
//! last call announced on stdout names it. The scratch buffer sits between two guard buffers that
//! must stay untouched, and after init a 1 MiB symmetric canary on every PE must too.

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// Argument profiles (see the head of this file).
const PROFILES: usize = 5;

/// Functions the sweep leaves out: they start or end the library or the process.
const NOT_SWEPT: &[&str] = &[
    "aclshmemx_init_attr",
    "aclshmemx_init_attr_with_buffers",
    "aclshmem_finalize",
    "aclshmemx_finalize",
    "aclshmem_global_exit",
    "shmem_init",
    "shmem_init_thread",
    "start_pes",
    "shmem_finalize",
    "shmem_global_exit",
    "aclInit",
    "aclFinalize",
    "aclFinalizeReference",
    "aclrtResetDevice",
    "aclrtResetDeviceForce",
];

/// One API surface: its header and how a program of it starts and ends the library.
struct Surface {
    /// What the program includes (and its name in messages).
    header: &'static str,
    /// The headers whose prototypes are swept (under include/).
    files: &'static [&'static str],
    /// Each prototype starts a line with this (and may go on over several lines); `None`: one
    /// prototype a line, at column 0.
    prefix: Option<&'static str>,
    /// At least this many prototypes are read (a parser that lost them must not pass).
    min_protos: usize,
    /// Lines the calls' error reports must include (the library's log, on stdout under the tests'
    /// launcher, for the aclshmem surface; stderr for the OpenSHMEM one).
    reports: &'static [&'static str],
    init: &'static str,
    barrier: &'static str,
    finalize: &'static str,
    /// Allocates the symmetric canary (1 MiB) that no call may change on any PE; "NULL": none.
    canary: &'static str,
}

const ACLSHMEM: Surface = Surface {
    header: "shmem.h",
    files: &["shmem.h"],
    prefix: Some("ACLSHMEM_HOST_API "),
    min_protos: 800,
    reports: &[
        "aclshmem_putmem: invalid parameter: pe 77 is outside [0, 2)",
        "aclshmem_int_atomic_fetch: invalid parameter: dest is NULL",
        "is not inside the symmetric heap",
        "aclshmem_team_destroy",
    ],
    init: "aclshmemx_init_attr_t attr;\n    \
           if (aclshmemx_set_attr_from_env(&attr) != 0 || aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) != 0) {\n\
           printf(\"FAIL: init\\n\");\n        return 1;\n    }",
    barrier: "aclshmem_barrier_all();",
    finalize: "if (aclshmem_finalize() != 0) {\n        printf(\"FAIL: finalize\\n\");\n        return 1;\n    }",
    canary: "aclshmem_malloc(CANARY_BYTES)",
};

const OPENSHMEM: Surface = Surface {
    header: "openshmem/shmem.h",
    files: &["openshmem/shmem.h"],
    prefix: None,
    min_protos: 1600,
    reports: &[
        "OpenSHMEM error in shmem_putmem: invalid parameter",
        "OpenSHMEM error in shmem_ctx_destroy: invalid parameter: ctx 0xffffffffffffffff is not a context handle",
        "is not inside the symmetric heap",
        "(continuing: ACLSHMEM_OSHMEM_ON_ERROR=continue)",
    ],
    init: "shmem_init();",
    barrier: "shmem_barrier_all();",
    finalize: "shmem_finalize();",
    canary: "shmem_malloc(CANARY_BYTES)",
};

struct Param {
    ty: String,
    name: String,
    fn_ptr: bool,
}

struct Proto {
    ret: String,
    name: String,
    params: Vec<Param>,
}

fn prototypes(surface: &Surface) -> Vec<Proto> {
    let mut out = Vec::new();
    for file in surface.files {
        let header = std::fs::read_to_string(common::repo_root().join("include").join(file)).unwrap();
        if let Some(prefix) = surface.prefix {
            // `<prefix><ret> <name>(<params>);`, some over two lines (cbindgen's output, ACL's)
            let start = format!("\n{prefix}");
            let mut rest = header.as_str();
            while let Some(at) = rest.find(&start) {
                rest = &rest[at + start.len()..];
                let end = rest.find(");").expect("a prototype ends with );");
                out.extend(parse_proto(&rest[..end]));
                rest = &rest[end..];
            }
        } else {
            for line in header.lines() {
                let line = line.trim_end();
                if line.starts_with(|c: char| c.is_ascii_alphabetic())
                    && line.ends_with(");")
                    && !line.starts_with("typedef")
                    && !line.starts_with("static")
                    && line.contains('(')
                {
                    out.extend(parse_proto(&line[..line.len() - 2]));
                }
            }
        }
    }
    out
}

/// `<ret> <name>(<params>` (the closing parenthesis taken off).
fn parse_proto(text: &str) -> Option<Proto> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let open = text.find('(')?;
    let head = &text[..open];
    let (ret, name) = head.rsplit_once([' ', '*'])?;
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let ret = format!("{}{}", ret, &head[ret.len()..head.len() - name.len()]);
    Some(Proto {
        ret: ret.trim().to_string(),
        name: name.to_string(),
        params: split_params(&text[open + 1..]),
    })
}

fn split_params(args: &str) -> Vec<Param> {
    let args = match args.find("ACLSHMEM_DEFAULT_ARG(") {
        Some(at) => {
            let close = at + args[at..].find(')').unwrap();
            format!("{}{}", &args[..at], &args[close + 1..])
        }
        None => args.to_string(),
    };
    if args.trim() == "void" || args.trim().is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in args.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur);
    parts
        .into_iter()
        .filter(|p| p.trim() != "...")
        .map(|p| {
            let p = p.trim().to_string();
            if p.contains("(*") {
                return Param {
                    ty: p.clone(),
                    name: String::new(),
                    fn_ptr: true,
                };
            }
            let split = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap();
            let ty = p[..=split].trim();
            // a const scalar takes the same values as the scalar
            let ty = if ty.contains('*') {
                ty
            } else {
                ty.trim_start_matches("const ")
            }
            .to_string();
            let fn_ptr = function_pointer_types().contains(&ty);
            Param {
                ty,
                name: p[split + 1..].to_string(),
                fn_ptr,
            }
        })
        .collect()
}

/// The names of every function-pointer typedef (`typedef R (*NAME)(...)`) of the headers under
/// include/: such an argument is always NULL (nothing can check a function's address).
fn function_pointer_types() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names = Vec::new();
        let mut dirs = vec![common::repo_root().join("include")];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "h") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    for part in text.split("typedef").skip(1) {
                        let decl = part.split(';').next().unwrap_or("");
                        if let Some(at) = decl.find("(*") {
                            let name: String = decl[at + 2..]
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            names.push(name);
                        }
                    }
                }
            }
        }
        names
    })
}

/// The C expression for `p` in `profile`.
fn value(p: &Param, profile: usize) -> String {
    let ty = p.ty.as_str();
    if p.fn_ptr {
        return "NULL".into();
    }
    if ty == "shmem_team_t" || ty == "shmem_ctx_t" {
        let valid = if ty == "shmem_team_t" {
            "SHMEM_TEAM_WORLD"
        } else {
            "SHMEM_CTX_DEFAULT"
        };
        return match profile {
            0 => "NULL".into(),
            1 => format!("({ty})(void *)g_junk"),
            2 => format!("({ty})(uintptr_t)-1"),
            _ => valid.into(),
        };
    }
    if ty == "aclrtStream" {
        return if profile == 2 {
            "(aclrtStream)(void *)g_junk".into()
        } else {
            "NULL".into()
        };
    }
    if ty.contains('*') {
        return match profile {
            0 => "NULL".into(),
            // one byte past an aligned address: valid memory, misaligned for any wider type
            4 => format!("({ty})(void *)(g_junk + 1)"),
            _ => format!("({ty})(void *)g_junk"),
        };
    }
    let pe_like = matches!(
        p.name.as_str(),
        "pe" | "PE_root" | "PE_start" | "root" | "src_pe" | "my_pe" | "pe_start"
    );
    let team = ty == "aclshmem_team_t";
    let cmp = matches!(p.name.as_str(), "cmp" | "sig_op");
    let signed = [
        ("int8_t", "INT8_MAX"),
        ("int16_t", "INT16_MAX"),
        ("int32_t", "INT32_MAX"),
        ("int", "INT_MAX"),
        ("char", "CHAR_MAX"),
        ("long", "LONG_MAX"),
        ("long long", "LLONG_MAX"),
        ("int64_t", "INT64_MAX"),
        ("ptrdiff_t", "PTRDIFF_MAX"),
        ("short", "SHRT_MAX"),
        ("signed char", "SCHAR_MAX"),
        ("aclshmem_team_t", "INT_MAX"),
    ];
    let unsigned = [
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "unsigned int",
        "unsigned long",
        "unsigned long long",
        "size_t",
        "unsigned char",
        "unsigned short",
        "bool",
    ];
    let float = matches!(ty, "float" | "double" | "long double");
    let known = float || unsigned.contains(&ty) || signed.iter().any(|(t, _)| *t == ty);
    if !known {
        // enums, structs: the profile's byte pattern
        return format!("*(const {ty} *)(const void *)g_pattern");
    }
    let v: String = match profile {
        0 => "0".into(),
        1 if pe_like => "77".into(),
        1 if team => "9999".into(),
        1 if cmp => "42".into(),
        1 => "16".into(),
        2 if pe_like => "-1".into(),
        2 if team => "-7".into(),
        2 if float => "1e30".into(),
        2 if ty == "bool" => "1".into(),
        2 => match signed.iter().find(|(t, _)| *t == ty) {
            Some((_, max)) => (*max).into(),
            None => "-1".into(),
        },
        3 | 4 if pe_like => "1".into(),
        3 | 4 if team || cmp => "0".into(),
        _ => "8".into(),
    };
    format!("({ty})({v})")
}

/// The generated program: `sweep(profile)` calls every function once with that profile.
fn generate(surface: &Surface) -> String {
    let protos = prototypes(surface);
    assert!(
        protos.len() >= surface.min_protos,
        "only {} prototypes read from {:?}",
        protos.len(),
        surface.files
    );
    let mut c = String::from(
        "/* generated by tests/bad_input.rs: do not edit */\n\
         #include <limits.h>\n#include <signal.h>\n#include <stdint.h>\n#include <stdio.h>\n\
         #include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n#include <pthread.h>\n\
         #define JUNK_BYTES (1 << 16)\n\
         #define CANARY_BYTES ((size_t)1 << 20)\n\
         #define PROFILES 5\n\
         /* malloc'd, not static: the OpenSHMEM surface makes the program's data symmetric */\n\
         static __thread unsigned char *g_block; /* per thread: see sweep_threads */\n\
         #define g_guard_lo g_block\n\
         #define g_junk (g_block + 4096)\n\
         #define g_guard_hi (g_block + 4096 + JUNK_BYTES)\n\
         static __thread unsigned char g_pattern[256] __attribute__((aligned(64)));\n\
         static const char *volatile g_current = \"(none)\";\n\n\
         static void on_signal(int sig)\n{\n    char msg[256];\n\
         int n = snprintf(msg, sizeof msg, \"CRASH in %s: signal %d\\n\", g_current, sig);\n\
         if (write(2, msg, (size_t)n) < 0) {\n    }\n    _exit(90);\n}\n\n\
         static void announce(const char *name)\n{\n    g_current = name;\n\
         printf(\"CALL %s\\n\", name);\n    fflush(stdout);\n}\n\n",
    );
    writeln!(c, "#include \"{}\"\n", surface.header).unwrap();
    for profile in 0..PROFILES {
        writeln!(c, "static void sweep_{profile}(void)\n{{").unwrap();
        for p in protos.iter().filter(|p| !NOT_SWEPT.contains(&p.name.as_str())) {
            let args: Vec<String> = p.params.iter().map(|a| value(a, profile)).collect();
            // the parentheses keep a type-generic macro of the same name out of the call
            let call = format!("({})({})", p.name, args.join(", "));
            let call = if p.ret == "void" {
                call
            } else {
                format!("(void){call}")
            };
            writeln!(
                c,
                "    memset(g_junk, 0, JUNK_BYTES);\n    announce(\"{}\");\n    {call};",
                p.name
            )
            .unwrap();
        }
        c.push_str("}\n\n");
    }
    c.push_str(
        "static void sweep(int profile)\n{\n\
         memset(g_pattern, profile == 1 ? 0xa5 : profile == 2 ? 0xff : 0, sizeof g_pattern);\n\
         switch (profile) {\n    case 0: sweep_0(); break;\n    case 1: sweep_1(); break;\n\
         case 2: sweep_2(); break;\n    case 3: sweep_3(); break;\n    default: sweep_4(); break;\n    }\n\
         for (size_t i = 0; i < 4096; i++) {\n\
         if (g_guard_lo[i] != 0x5a || g_guard_hi[i] != 0x5a) {\n\
         printf(\"FAIL: profile %d: a guard byte next to the scratch buffer changed\\n\", profile);\n\
         exit(1);\n        }\n    }\n\
         printf(\"SWEPT profile %d\\n\", profile);\n    fflush(stdout);\n}\n\n\
         /* this thread's scratch buffer between its guards */\n\
         static int alloc_block(void)\n{\n\
         g_block = aligned_alloc(4096, 4096 + JUNK_BYTES + 4096);\n\
         if (g_block == NULL) {\n        return -1;\n    }\n\
         memset(g_guard_lo, 0x5a, 4096);\n    memset(g_guard_hi, 0x5a, 4096);\n    return 0;\n}\n\n\
         static void *sweeper(void *arg)\n{\n\
         if (alloc_block() != 0) {\n        exit(1);\n    }\n\
         for (int r = 0; r < 2; r++) {\n        sweep((int)(intptr_t)arg);\n    }\n\
         free(g_block);\n    return NULL;\n}\n\n\
         /* 4 threads at once, profiles 1 and 2 (whose collectives are refused: no thread may make a\n\
            collective call another thread of this PE makes at the same time) */\n\
         static void sweep_threads(void)\n{\n    pthread_t t[4];\n\
         for (int i = 0; i < 4; i++) {\n\
         if (pthread_create(&t[i], NULL, sweeper, (void *)(intptr_t)(1 + i % 2)) != 0) {\n\
         printf(\"FAIL: pthread_create\\n\");\n            exit(1);\n        }\n    }\n\
         for (int i = 0; i < 4; i++) {\n        pthread_join(t[i], NULL);\n    }\n\
         printf(\"THREADS swept\\n\");\n    fflush(stdout);\n}\n\n\
         int main(int argc, char **argv)\n{\n\
         signal(SIGSEGV, on_signal);\n    signal(SIGBUS, on_signal);\n    signal(SIGFPE, on_signal);\n\
         signal(SIGILL, on_signal);\n    signal(SIGABRT, on_signal);\n\
         if (alloc_block() != 0) {\n        return 1;\n    }\n\
         if (argc > 1 && strcmp(argv[1], \"before\") == 0) {\n\
         for (int p = 0; p < PROFILES; p++) {\n            sweep(p);\n        }\n\
         sweep_threads();\n\
         printf(\"OK before\\n\");\n        return 0;\n    }\n",
    );
    // after init: a symmetric canary on every PE, checked after each profile (no call, on any PE,
    // may write into another PE's heap either)
    write!(
        c,
        "    {init}\n    unsigned char *canary = (unsigned char *){canary};\n\
         if (canary != NULL) {{\n        memset(canary, 0x3c, CANARY_BYTES);\n    }} else if ({need_canary}) {{\n\
         printf(\"FAIL: the canary was not allocated\\n\");\n        return 1;\n    }}\n    {barrier}\n\
         for (int p = 0; p < PROFILES; p++) {{\n        sweep(p);\n        {barrier}\n\
         for (size_t i = 0; canary != NULL && i < CANARY_BYTES; i++) {{\n\
         if (canary[i] != 0x3c) {{\n\
         printf(\"FAIL: profile %d: byte %zu of the symmetric canary changed\\n\", p, i);\n\
         return 1;\n            }}\n        }}\n        {barrier}\n    }}\n    {finalize}\n\
         sweep(1);\n    sweep(2);\n    sweep_threads();\n    printf(\"OK after\\n\");\n    return 0;\n}}\n",
        init = surface.init,
        barrier = surface.barrier,
        finalize = surface.finalize,
        canary = surface.canary,
        need_canary = u8::from(surface.canary != "NULL"),
    )
    .unwrap();
    c
}

/// Writes and compiles the generated program of `surface` (once per test binary and surface).
fn program(surface: &Surface) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(&str, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = built.iter().find(|(h, _)| *h == surface.header) {
        return p.clone();
    }
    common::ensure_built();
    let dir = common::target_dir().join("ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = format!("bad_input_{}", surface.header.replace(['/', '.'], "_"));
    let src = dir.join(format!("{stem}.c"));
    std::fs::write(&src, generate(surface)).unwrap();
    let out = dir.join(format!("{stem}_{}", std::process::id()));
    let lib = common::profile_dir();
    let root = common::repo_root();
    let output = Command::new("gcc")
        .args([
            "-std=gnu11",
            "-pthread",
            "-O0",
            "-Wall",
            "-Werror",
            "-Wno-deprecated-declarations",
        ])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib.display()))
        .args(["-laclshmem", "-lascendcl"])
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("run gcc");
    assert!(
        output.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    built.push((surface.header, out.clone()));
    out
}

/// The last `CALL` line of `stdout`: the call a hang or crash happened in.
fn last_call(stdout: &str) -> &str {
    stdout
        .lines()
        .rev()
        .find(|l| l.contains("CALL "))
        .unwrap_or("(no call started)")
}

/// The CPU ACL runtime (libascendcl): "init" is aclInit + aclrtSetDevice, its calls report by
/// return code.
const ACL: Surface = Surface {
    header: "acl/acl_shim.h",
    files: &["acl/acl_base_rt.h", "acl/acl_rt.h", "acl/acl_shim.h"],
    prefix: Some("ACL_FUNC_VISIBILITY "),
    min_protos: 75,
    reports: &[],
    init: "if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {\n\
           printf(\"FAIL: init\\n\");\n        return 1;\n    }",
    barrier: "(void)0;",
    canary: "NULL",
    finalize: "if (aclrtResetDevice(0) != ACL_SUCCESS || aclFinalize() != ACL_SUCCESS) {\n\
               printf(\"FAIL: finalize\\n\");\n        return 1;\n    }",
};

/// Every call before init, in one process without a launcher.
fn before_init(surface: &Surface) {
    let prog = program(surface);
    let output = Command::new("timeout")
        .args(["-s", "KILL", "120"])
        .arg(&prog)
        .arg("before")
        .env_remove("ACLSHMEM_MY_PE")
        .env_remove("ACLSHMEM_N_PES")
        .env("ACLSHMEM_OSHMEM_ON_ERROR", "continue")
        .env("SHMEM_LOG_TO_STDOUT", "1")
        .output()
        .expect("run the sweep");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("OK before"),
        "{} before init: {}, last call {}\nstderr (tail): {}",
        surface.header,
        output.status,
        last_call(&stdout),
        stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
}

/// Every call on 2 PEs after init (each PE the same calls), then every call after finalize; the
/// calls' errors are reported.
fn after_init(surface: &Surface) {
    after_init_with(surface, &[]);
}

/// [`after_init`] with extra environment variables.
fn after_init_with(surface: &Surface, extra: &[(&str, &str)]) {
    let prog = program(surface);
    let mut env = vec![
        ("ACLSHMEM_LOCAL_MEM_SIZE", "32M"),
        ("SHMEM_SYMMETRIC_SIZE", "32M"),
        ("ACLSHMEM_OSHMEM_ON_ERROR", "continue"),
    ];
    env.extend_from_slice(extra);
    let run = common::run_pes(
        2,
        &["--tag-output".as_ref(), prog.as_os_str(), "after".as_ref()],
        &env,
        Duration::from_secs(240),
    );
    assert!(
        run.code() == 0 && run.stdout.matches("OK after").count() == 2,
        "{}: exit {}, last call {}\n{}",
        surface.header,
        run.code(),
        last_call(&run.stdout),
        run.stderr.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    // the harness's launcher sends the library's log to stdout (SHMEM_LOG_TO_STDOUT=1)
    let reported = format!("{}{}", run.stdout, run.stderr);
    for want in surface.reports {
        assert!(
            reported.contains(want),
            "{}: no report {want:?} among the calls' errors",
            surface.header
        );
    }
}

#[test]
fn every_call_before_init_survives_bad_input() {
    before_init(&ACLSHMEM);
}

#[test]
fn every_call_after_init_and_finalize_survives_bad_input_2pes() {
    after_init(&ACLSHMEM);
}

/// The same over UCX (forced for the PEs of this node), whose calls check and fail on their own
/// paths.
#[test]
fn every_call_over_ucx_survives_bad_input_2pes() {
    if !common::ucx_installed() {
        common::skip(
            "every_call_over_ucx_survives_bad_input_2pes",
            "UCX is not installed",
        );
        return;
    }
    let ucx = [("ACLSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    after_init_with(&ACLSHMEM, &ucx);
    after_init_with(&OPENSHMEM, &ucx);
}

#[test]
fn every_openshmem_call_before_init_survives_bad_input() {
    before_init(&OPENSHMEM);
}

#[test]
fn every_openshmem_call_after_init_and_finalize_survives_bad_input_2pes() {
    after_init(&OPENSHMEM);
}

#[test]
fn every_acl_runtime_call_before_init_survives_bad_input() {
    before_init(&ACL);
}

#[test]
fn every_acl_runtime_call_after_init_and_finalize_survives_bad_input() {
    after_init(&ACL);
}

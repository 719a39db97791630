//! Checks of the C written by hand in the header fragments (`cbindgen/`) against the Rust sources
//! and the tables:
//! - [`check_prototypes`]: every prototype (`ACLSHMEM_HOST_API <ret> <name>(<params>);`, and the
//!   declaration generator macros `#define M(NAME, TYPE) ACLSHMEM_HOST_API …` instantiated for each
//!   type of `ACLSHMEM_P2P_SYNC_TYPE_FUNC`) has the parameter and return types of the Rust export
//!   of the same name in `src/ffi/`, spelled as cbindgen spells them;
//! - [`check_family_macros`]: `ACLSHMEM_TYPE_FUNC`, `ACLSHMEM_P2P_SYNC_TYPE_FUNC` and
//!   `ACLSHMEM_SIZE_FUNC` list exactly the types and sizes of [`crate::tables`].

use std::collections::BTreeMap;
use std::path::Path;

use crate::header::FRAGMENTS;
use crate::tables::{SIZES, TYPES};
use crate::typed::p2p_sync_types;

/// A C prototype: types spelled as token sequences joined by single spaces (`const int *`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proto {
    pub name: String,
    pub ret: String,
    pub params: Vec<String>,
    /// Where it was written: fragment file (and macro), or Rust file.
    pub origin: String,
}

/// The hand-written fragments (the generated ones hold no prototypes).
pub const HAND_WRITTEN: &[&str] = &["header.h", "after_includes.h", "trailer.h"];

/// Checks every hand-written prototype of the fragments under `root` against the Rust exports of
/// `root/src/ffi/`; returns how many were checked, or one message per mismatch.
pub fn check_prototypes(root: &Path) -> Result<usize, Vec<String>> {
    let exports = rust_exports(&root.join("src/ffi"))?;
    let mut protos = Vec::new();
    for name in HAND_WRITTEN {
        let path = root.join(FRAGMENTS).join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
        protos.extend(prototypes(&format!("{FRAGMENTS}/{name}"), &text)?);
    }
    compare(&protos, &exports).map(|()| protos.len())
}

/// Compares each prototype with the export of its name.
pub fn compare(protos: &[Proto], exports: &Exports) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for c in protos {
        let rust = match exports.get(&c.name) {
            Some(Ok(rust)) => rust,
            Some(Err(e)) => {
                errors.push(format!(
                    "{}: {}: the Rust signature cannot be compared: {e}",
                    c.origin, c.name
                ));
                continue;
            }
            None => {
                errors.push(format!(
                    "{}: declares {}, which no extern \"C\" fn of src/ffi/ defines",
                    c.origin, c.name
                ));
                continue;
            }
        };
        let at = format!("{}: {} (Rust: {})", c.origin, c.name, rust.origin);
        if c.ret != rust.ret {
            errors.push(format!(
                "{at}: returns `{}` in C but `{}` in Rust",
                c.ret, rust.ret
            ));
        }
        if c.params.len() != rust.params.len() {
            errors.push(format!(
                "{at}: {} parameter(s) in C ({}) but {} in Rust ({})",
                c.params.len(),
                c.params.join(", "),
                rust.params.len(),
                rust.params.join(", ")
            ));
            continue;
        }
        for (i, (cp, rp)) in c.params.iter().zip(&rust.params).enumerate() {
            if cp != rp {
                errors.push(format!(
                    "{at}: parameter {} is `{cp}` in C but `{rp}` in Rust",
                    i + 1
                ));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Checks the family generator macros of `after_includes.h` against the tables.
pub fn check_family_macros(root: &Path) -> Result<(), Vec<String>> {
    let path = root.join(FRAGMENTS).join("after_includes.h");
    let text = std::fs::read_to_string(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
    let lines = logical_lines(&strip_comments(&text));
    let types: Vec<String> = TYPES.iter().map(|t| format!("{}, {}", t.name, t.c)).collect();
    let p2p: Vec<String> = p2p_sync_types().map(|t| format!("{}, {}", t.name, t.c)).collect();
    let sizes: Vec<String> = SIZES.iter().map(|b| b.to_string()).collect();
    let mut errors = Vec::new();
    for (name, want, table) in [
        ("ACLSHMEM_TYPE_FUNC", types, "TYPES"),
        ("ACLSHMEM_P2P_SYNC_TYPE_FUNC", p2p, "P2P_SYNC_TYPES"),
        ("ACLSHMEM_SIZE_FUNC", sizes, "SIZES"),
    ] {
        let start = format!("#define {name}(FUNC)");
        let Some(line) = lines.iter().find(|l| l.starts_with(&start)) else {
            errors.push(format!(
                "{FRAGMENTS}/after_includes.h does not define {name}(FUNC)"
            ));
            continue;
        };
        let listed: Vec<String> = line[start.len()..]
            .split(';')
            .map(|item| {
                let item = item.trim();
                let args = item
                    .strip_prefix("FUNC(")
                    .and_then(|a| a.strip_suffix(')'))
                    .unwrap_or(item);
                args.split(',').map(str::trim).collect::<Vec<_>>().join(", ")
            })
            .collect();
        if listed != want {
            errors.push(format!(
                "{FRAGMENTS}/after_includes.h: {name} lists [{}] but xtask/src/tables.rs has {table} [{}]",
                listed.join("; "),
                want.join("; ")
            ));
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

// ---- C side ------------------------------------------------------------------------------------

/// `text` with `/* */` and `//` comments replaced by a space (string literals are not special:
/// the fragments hold none that contain comment markers).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                let end = rest[b + 2..].find("*/").map_or(rest.len(), |e| b + 2 + e + 2);
                // keep the line structure
                out.extend(rest[b..end].chars().filter(|&c| c == '\n'));
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                let end = rest[l..].find('\n').map_or(rest.len(), |e| l + e);
                rest = &rest[end..];
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Lines with backslash continuations joined, trimmed, runs of blanks collapsed.
fn logical_lines(text: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// C tokens: identifiers and numbers, `##`, and single punctuation characters.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !(d.is_ascii_alphanumeric() || d == '_') {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            out.push(text[i..end].to_string());
        } else if c == '#' && chars.peek().is_some_and(|&(_, d)| d == '#') {
            chars.next();
            out.push("##".to_string());
        } else {
            out.push(c.to_string());
        }
    }
    out
}

const API: &str = "ACLSHMEM_HOST_API";

/// The prototypes of one fragment (`origin` names it in messages).
pub fn prototypes(origin: &str, text: &str) -> Result<Vec<Proto>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut code = String::new();
    for line in logical_lines(&strip_comments(text)) {
        if !line.starts_with('#') {
            code.push_str(&line);
            code.push('\n');
            continue;
        }
        // a function-like macro whose body declares: instantiate it
        let toks = tokens(&line);
        if toks.len() < 4 || toks[1] != "define" || toks[3] != "(" || !toks.contains(&API.to_string()) {
            continue;
        }
        let macro_name = &toks[2];
        let close = toks.iter().position(|t| t == ")").unwrap_or(toks.len());
        let params: Vec<&str> = toks[4..close]
            .iter()
            .map(String::as_str)
            .filter(|t| *t != ",")
            .collect();
        if params != ["NAME", "TYPE"] {
            errors.push(format!(
                "{origin}: macro {macro_name}: only (NAME, TYPE) declaration generators are checked"
            ));
            continue;
        }
        let body = &toks[close + 1..];
        for t in p2p_sync_types() {
            let inst: Vec<String> = body
                .iter()
                .flat_map(|tok| match tok.as_str() {
                    "NAME" => vec![t.name.to_string()],
                    "TYPE" => tokens(t.c),
                    _ => vec![tok.clone()],
                })
                .collect();
            let at = format!("{origin} ({macro_name}({}, {}))", t.name, t.c);
            match declarations(&at, &inst) {
                Ok(found) => out.extend(found),
                Err(e) => errors.push(e),
            }
        }
    }
    match declarations(origin, &tokens(&code)) {
        Ok(found) => out.extend(found),
        Err(e) => errors.push(e),
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Every `ACLSHMEM_HOST_API <ret> <name>(<params>)` of a token sequence.
fn declarations(origin: &str, toks: &[String]) -> Result<Vec<Proto>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = toks[i..].iter().position(|t| t == API) {
        let start = i + at + 1;
        let open = toks[start..]
            .iter()
            .position(|t| t == "(")
            .map(|p| start + p)
            .ok_or_else(|| format!("{origin}: {API} without a parameter list"))?;
        // the name: identifiers joined by `##` just before the `(`
        let mut name_start = open - 1;
        while name_start >= start + 2 && toks[name_start - 1] == "##" {
            name_start -= 2;
        }
        if name_start <= start {
            return Err(format!("{origin}: {API} declaration without a return type"));
        }
        let name: String = toks[name_start..open]
            .iter()
            .filter(|t| *t != "##")
            .cloned()
            .collect();
        let ret = toks[start..name_start].join(" ");
        let mut depth = 0;
        let mut close = open;
        for (j, t) in toks.iter().enumerate().skip(open) {
            match t.as_str() {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        close = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        if close == open {
            return Err(format!("{origin}: {name}: unterminated parameter list"));
        }
        let mut params = Vec::new();
        for param in split_params(&toks[open + 1..close]) {
            params.push(param_type(&param).map_err(|e| format!("{origin}: {name}: {e}"))?);
        }
        if params == ["void"] {
            params.clear();
        }
        out.push(Proto {
            name,
            ret,
            params,
            origin: origin.to_string(),
        });
        i = close + 1;
    }
    Ok(out)
}

/// The parameters of a list, split at commas outside parentheses.
fn split_params(toks: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0;
    for t in toks {
        match t.as_str() {
            "(" => depth += 1,
            ")" => depth -= 1,
            "," if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(t.clone());
    }
    if out.len() == 1 && out[0].is_empty() {
        Vec::new()
    } else {
        out
    }
}

/// The type of one parameter: `ACLSHMEM_DEFAULT_ARG(...)` and the parameter name dropped.
fn param_type(param: &[String]) -> Result<String, String> {
    let mut toks: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < param.len() {
        if param[i] == "ACLSHMEM_DEFAULT_ARG" {
            let mut depth = 0;
            i += 1;
            while i < param.len() {
                match param[i].as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        toks.push(&param[i]);
        i += 1;
    }
    match toks.as_slice() {
        [] => Err("empty parameter".to_string()),
        ["void"] => Ok("void".to_string()),
        [.., last] if is_ident(last) && toks.len() > 1 && !is_type_word(last) => {
            Ok(toks[..toks.len() - 1].join(" "))
        }
        _ => Err(format!("parameter `{}` has no name", toks.join(" "))),
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

/// Words that end a type, never a parameter name.
fn is_type_word(t: &str) -> bool {
    matches!(
        t,
        "int" | "char" | "short" | "long" | "float" | "double" | "void" | "unsigned" | "signed" | "const"
    )
}

// ---- Rust side ---------------------------------------------------------------------------------

/// Rust exports by name: the prototype in C spelling, or why the signature has none.
pub type Exports = BTreeMap<String, Result<Proto, String>>;

/// Every `extern "C" fn` of the `.rs` files directly in `dir`, by name, types spelled in C as
/// cbindgen spells them (`usize_is_size_t`).
pub fn rust_exports(dir: &Path) -> Result<Exports, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| vec![format!("{}: {e}", dir.display())])?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    for path in files {
        let origin = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
        let file = syn::parse_file(&text).map_err(|e| vec![format!("{}: {e}", path.display())])?;
        for item in file.items {
            let syn::Item::Fn(f) = item else { continue };
            let is_c = f
                .sig
                .abi
                .as_ref()
                .is_some_and(|abi| abi.name.as_ref().is_some_and(|n| n.value() == "C"));
            if !is_c {
                continue;
            }
            // a signature outside the mapping matters only if a fragment declares it
            out.insert(
                f.sig.ident.to_string(),
                rust_proto(&f.sig, &format!("src/ffi/{origin}")),
            );
        }
    }
    Ok(out)
}

fn rust_proto(sig: &syn::Signature, origin: &str) -> Result<Proto, String> {
    let ret = match &sig.output {
        syn::ReturnType::Default => "void".to_string(),
        syn::ReturnType::Type(_, ty) => c_type(ty)?,
    };
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(p) => params.push(c_type(&p.ty)?),
            syn::FnArg::Receiver(_) => return Err("takes self".to_string()),
        }
    }
    Ok(Proto {
        name: sig.ident.to_string(),
        ret,
        params,
        origin: origin.to_string(),
    })
}

/// The C spelling of a Rust type of an export.
pub fn c_type(ty: &syn::Type) -> Result<String, String> {
    match ty {
        syn::Type::Ptr(p) => {
            let inner = c_type(&p.elem)?;
            Ok(match (&p.mutability, &*p.elem) {
                (syn::PointerMutability::Mut(_), _) => format!("{inner} *"),
                (syn::PointerMutability::Const(_), syn::Type::Ptr(_)) => format!("{inner} const *"),
                (syn::PointerMutability::Const(_), _) => format!("const {inner} *"),
            })
        }
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok("void".to_string()),
        syn::Type::Paren(p) => c_type(&p.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().ok_or("empty path")?;
            if !last.arguments.is_none() {
                return Err(format!("generic type {}", last.ident));
            }
            let name = last.ident.to_string();
            Ok(match name.as_str() {
                "c_void" => "void",
                "c_char" => "char",
                "c_schar" => "signed char",
                "c_uchar" => "unsigned char",
                "c_short" => "short",
                "c_ushort" => "unsigned short",
                "c_int" => "int",
                "c_uint" => "unsigned int",
                "c_long" => "long",
                "c_ulong" => "unsigned long",
                "c_longlong" => "long long",
                "c_ulonglong" => "unsigned long long",
                "c_float" | "f32" => "float",
                "c_double" | "f64" => "double",
                "i8" => "int8_t",
                "i16" => "int16_t",
                "i32" => "int32_t",
                "i64" => "int64_t",
                "u8" => "uint8_t",
                "u16" => "uint16_t",
                "u32" => "uint32_t",
                "u64" => "uint64_t",
                "usize" => "size_t",
                "isize" => "ptrdiff_t",
                "bool" => "bool",
                // a typedef of the header: cbindgen keeps the name
                other => other,
            }
            .to_string())
        }
        _ => Err("a type the prototype check does not map to C".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_rust(src: &str) -> Exports {
        let file = syn::parse_file(src).unwrap();
        file.items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Fn(f) => Some((f.sig.ident.to_string(), rust_proto(&f.sig, "test.rs"))),
                _ => None,
            })
            .collect()
    }

    const RUST: &str = "extern \"C\" fn aclshmemx_calloc(count: usize, size: usize, mem_type: aclshmem_mem_type_t) -> *mut c_void { todo!() }\n\
        extern \"C\" fn aclshmem_float_test_any(ivars: *mut f32, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: f32, res_out: *mut usize) {}";

    #[test]
    fn default_argument_prototype_matches() {
        let c = "/* doc */\nACLSHMEM_HOST_API void *aclshmemx_calloc(size_t count, size_t size,\n    aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));\n";
        let protos = prototypes("t.h", c).unwrap();
        assert_eq!(
            protos,
            [Proto {
                name: "aclshmemx_calloc".into(),
                ret: "void *".into(),
                params: vec!["size_t".into(), "size_t".into(), "aclshmem_mem_type_t".into()],
                origin: "t.h".into(),
            }]
        );
        compare(&protos, &parse_rust(RUST)).unwrap();
    }

    #[test]
    fn generator_macro_is_instantiated_per_type() {
        let c = "#define ACLSHMEM_TEST_ANY(NAME, TYPE) \\\n    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \\\n TYPE cmp_value, size_t *res_out)\n";
        let protos = prototypes("t.h", c).unwrap();
        assert_eq!(protos.len(), p2p_sync_types().count());
        let float = protos
            .iter()
            .find(|p| p.name == "aclshmem_float_test_any")
            .unwrap();
        assert_eq!(
            float.params,
            ["float *", "size_t", "const int *", "int", "float", "size_t *"]
        );
        compare(&protos[..1], &parse_rust(RUST)).unwrap();
    }

    #[test]
    fn mismatch_names_the_function_and_parameter() {
        let c = "ACLSHMEM_HOST_API void *aclshmemx_calloc(size_t count, int size, aclshmem_mem_type_t mem_type);\n\
                 ACLSHMEM_HOST_API int aclshmemx_nowhere(void);\n";
        let errors = compare(&prototypes("t.h", c).unwrap(), &parse_rust(RUST)).unwrap_err();
        assert_eq!(
            errors,
            [
                "t.h: aclshmemx_calloc (Rust: test.rs): parameter 2 is `int` in C but `size_t` in Rust",
                "t.h: declares aclshmemx_nowhere, which no extern \"C\" fn of src/ffi/ defines",
            ]
        );
        let c = "ACLSHMEM_HOST_API void aclshmemx_calloc(size_t count, size_t size);\n";
        let errors = compare(&prototypes("t.h", c).unwrap(), &parse_rust(RUST)).unwrap_err();
        assert_eq!(
            errors,
            [
                "t.h: aclshmemx_calloc (Rust: test.rs): returns `void` in C but `void *` in Rust",
                "t.h: aclshmemx_calloc (Rust: test.rs): 2 parameter(s) in C (size_t, size_t) but 3 in Rust (size_t, size_t, aclshmem_mem_type_t)",
            ]
        );
    }
}

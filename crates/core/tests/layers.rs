//! The core's module graph runs one way (docs/architecture.md): every `crate::<module>` reference
//! in a module's files points at a module of a lower layer or of its own layer, and the graph has
//! no cycle. A module is a top-level file or directory of `src/`; its submodules count as itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layers, lowest first. A new module must be placed here (the test fails for an unknown one).
const LAYERS: &[&[&str]] = &[
    // leaves
    &[
        "config", "util", "wait", "word", "error", "logging", "acl", "block", "args",
    ],
    // transports, heaps, bootstraps
    &["bootstrap", "heap", "transport"],
    // the instance and the records it holds
    &["team_table", "algos", "instance"],
    // teams, collectives, synchronisation
    &["sync", "collectives", "team"],
    // the API the surfaces call
    &["runtime", "stream", "rma", "p2p", "atomic", "host", "kernel"],
];

fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&m))
}

/// `crate::<name>` references in `text` (identifiers after the prefix).
fn references(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `aclshmem_crate::` or similar would not be ours; require a non-identifier before
        if i > 0 && text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue; // the crate root re-exports; it is not a layer
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let deps = g.entry(module.clone()).or_default();
        for r in references(&text) {
            // `crate::Error`, `crate::Result`: re-exports of error at the root
            let r = match r.as_str() {
                "Error" | "Result" => "error".to_string(),
                _ => r,
            };
            if r != module {
                deps.insert(r);
            }
        }
    }
    g
}

#[test]
fn every_module_has_a_layer() {
    for m in graph().keys() {
        assert!(
            layer_of(m).is_some(),
            "module `{m}` is in no layer of tests/layers.rs"
        );
    }
}

#[test]
fn dependencies_point_down() {
    let mut bad = Vec::new();
    for (m, deps) in graph() {
        let lm = layer_of(&m).unwrap_or(usize::MAX);
        for d in deps {
            match layer_of(&d) {
                Some(ld) if ld <= lm => {}
                Some(ld) => bad.push(format!("{m} (layer {lm}) uses {d} (layer {ld})")),
                None => bad.push(format!("{m} uses unknown module {d}")),
            }
        }
    }
    assert!(bad.is_empty(), "upward dependencies:\n{}", bad.join("\n"));
}

#[test]
fn no_cycles() {
    let g = graph();
    // depth-first search with colours: 1 = on the stack, 2 = done
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match colour.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        colour.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, g, colour, path) {
                return Some(c);
            }
        }
        path.pop();
        colour.insert(m.to_string(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    for m in g.keys() {
        if let Some(c) = visit(m, &g, &mut colour, &mut Vec::new()) {
            panic!("module cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn references_are_found() {
    let r = references("use crate::sync;\nlet x = crate::team_table::Team; aclshmem_crate::x");
    assert_eq!(r, BTreeSet::from(["sync".to_string(), "team_table".to_string()]));
}

//! Formatting of generated Rust with `prettyplease` (a library: the output does not depend on the
//! installed rustfmt).
//!
//! A syntax tree has no place for `//` comments, so the generators write them as markers that
//! survive parsing and printing, and [`rust`] turns them back into comments. A marker carries its
//! text hex-encoded in an identifier, which the printer never breaks or changes:
//! - [`comment`], a statement or item: the line `// text`;
//! - [`trailing_comment`], an item: ` // text` at the end of the line before it;
//! - [`inline_comment`], an expression: `expr /* text */`.
//!
//! The printer puts no blank lines between items; [`rust`] adds one after the inner attributes, after
//! the `use` declarations and after each item that ends with a `}` line.

const COMMENT: &str = "__xtask_comment_";
const TRAILING: &str = "__xtask_trailing_comment_";
const INLINE: &str = "__xtask_inline_comment_";

/// A statement or item that becomes the line comment `// text`.
pub fn comment(text: &str) -> String {
    format!("{COMMENT}{}!();", hex(one_line(text)))
}

/// An item that becomes ` // text` at the end of the line before it.
pub fn trailing_comment(text: &str) -> String {
    format!("{TRAILING}{}!();", hex(one_line(text)))
}

/// An expression that becomes `expr /* text */`.
pub fn inline_comment(expr: &str, text: &str) -> String {
    format!(
        "{INLINE}{}",
        hex(&format!("{} /* {} */", one_line(expr), one_line(text)))
    )
}

fn one_line(text: &str) -> &str {
    assert!(
        !text.contains('\n') && !text.contains("*/"),
        "comment text must be one line: {text:?}"
    );
    text
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(hex: &str) -> String {
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex comment marker"))
        .collect();
    String::from_utf8(bytes).expect("utf-8 comment marker")
}

/// `source` (a whole file, comments written with the markers above) pretty-printed, with `head`
/// (`//` lines that precede the inner attributes) in front.
pub fn rust(head: &str, source: &str) -> String {
    let file = syn::parse_file(source).unwrap_or_else(|e| {
        panic!("generated Rust does not parse: {e}\n{source}");
    });
    let printed = prettyplease::unparse(&file);
    let mut lines: Vec<String> = Vec::new();
    for line in printed.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(text) = marker(trimmed, COMMENT) {
            lines.push(format!("{indent}// {text}"));
        } else if let Some(text) = marker(trimmed, TRAILING) {
            let last = lines
                .last_mut()
                .expect("a trailing comment needs a line before it");
            last.push_str(&format!(" // {text}"));
        } else {
            lines.push(inline_comments(line));
        }
    }
    let mut out = String::from(head);
    let mut item_start: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        let next = lines.get(i + 1).map(String::as_str).unwrap_or("");
        if next.is_empty() {
            continue;
        }
        let blank = if line.starts_with("//!") || line.starts_with("#![") {
            !next.starts_with(&line[..3])
        } else if line.starts_with(' ') || line.starts_with("//") || line.starts_with('#') {
            item_start.get_or_insert(line);
            false
        } else {
            let start = *item_start.get_or_insert(line);
            let end = line == "}" || line.ends_with(';');
            if end {
                item_start = None;
            }
            end && !(start.starts_with("use ") && next.starts_with("use "))
        };
        if blank {
            out.push('\n');
        }
    }
    assert!(
        !out.contains("__xtask_"),
        "a comment marker was printed in a form the formatter does not know:\n{out}"
    );
    out
}

/// The text of a line that is exactly `<start><hex>!();`.
fn marker(line: &str, start: &str) -> Option<String> {
    Some(unhex(line.strip_prefix(start)?.strip_suffix("!();")?))
}

/// `line` with every inline comment marker replaced by its text.
fn inline_comments(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(INLINE) {
        out.push_str(&rest[..at]);
        let tail = &rest[at + INLINE.len()..];
        let end = tail.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(tail.len());
        out.push_str(&unhex(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_comments() {
        let source = format!(
            "#![allow(dead_code)]\n{}\n/// Doc.\nfn f() -> i32 {{\n{}\nunsafe {{ g({}) }}\n}}\n",
            trailing_comment("why"),
            comment("SAFETY: none needed."),
            inline_comment("1", "ONE"),
        );
        let out = rust("// head\n", &source);
        assert_eq!(
            out,
            "// head\n#![allow(dead_code)] // why\n\n/// Doc.\nfn f() -> i32 {\n    // SAFETY: none needed.\n    unsafe { g(1 /* ONE */) }\n}\n"
        );
    }

    #[test]
    fn long_comments_stay_on_one_line() {
        let text = "SAFETY: a comment far longer than the printer's margin, which would break a string argument \
                    of a macro call across lines";
        let source = format!(
            "fn f() {{ g(|| {{ h(|| {{\n{}\nunsafe {{ k() }} }}) }}) }}\n",
            comment(text)
        );
        let out = rust("", &source);
        assert!(out.contains(&format!("// {text}\n")), "{out}");
    }
}

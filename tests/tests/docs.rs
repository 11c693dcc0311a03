//! The documents against what they quote. A fenced block is checked by the
//! HTML comment on the line before it:
//!
//! - `<!-- file: PATH -->` (the tutorial): the blocks of one file, joined
//!   by one blank line, are that file of `examples/protocol-crate/`, byte
//!   for byte; every file of the crate appears, and every Rust or TOML
//!   block of the tutorial is such a block (so CI, which builds and tests
//!   the crate, compiles and runs every one);
//! - `<!-- excerpt: PATH -->`: every line of the block but `...` lines (an
//!   elision) is a line of the file at PATH, in order; a snapshot file's
//!   header is skipped;
//! - in the README, every Rust, TOML and text block carries one of these,
//!   so that no sample there can go stale unnoticed.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fenced block: its language, its text (each line ending in a newline),
/// the comment on the line before it, and the line it starts on.
#[derive(Debug)]
struct Block {
    lang: String,
    body: String,
    marker: Option<String>,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let marker = i
            .checked_sub(1)
            .and_then(|p| lines[p].trim().strip_prefix("<!--"))
            .and_then(|m| m.strip_suffix("-->"))
            .map(|m| m.trim().to_string());
        let start = i;
        let mut body = String::new();
        i += 1;
        while i < lines.len() && lines[i] != "```" {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        assert!(i < lines.len(), "a block opened at line {} is never closed", start + 1);
        out.push(Block { lang: lang.trim().to_string(), body, marker, line: start + 1 });
        i += 1;
    }
    out
}

/// The text of a snapshot after its header, or a file's whole text.
fn quoted_text(path: &Path) -> String {
    let text = read(path);
    match text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---\n")) {
        Some((_, body)) if path.extension().is_some_and(|e| e == "snap") => body.to_string(),
        _ => text,
    }
}

/// Checks that every line of `block` but `...` lines is a line of `text`,
/// in order; returns what is wrong.
fn excerpt_of(block: &str, text: &str) -> Result<(), String> {
    let mut lines = text.lines();
    for wanted in block.lines().filter(|l| l.trim() != "...") {
        if !lines.any(|l| l.trim_end() == wanted.trim_end()) {
            return Err(format!("`{wanted}` is not there (or not in this order)"));
        }
    }
    Ok(())
}

/// Checks the `excerpt:` blocks of `doc`; with `all`, also that every
/// Rust, TOML and text block has a marker.
fn check_excerpts(doc: &str, all: bool) -> Vec<String> {
    let path = root().join(doc);
    let mut failures = Vec::new();
    for b in blocks(&read(&path)) {
        let at = format!("{doc}:{}", b.line);
        match b.marker.as_deref().and_then(|m| m.strip_prefix("excerpt:")) {
            Some(file) => {
                if let Err(e) = excerpt_of(&b.body, &quoted_text(&root().join(file.trim()))) {
                    failures.push(format!("{at}: not an excerpt of {}: {e}", file.trim()));
                }
            }
            None if all && ["rust", "toml", "text"].contains(&b.lang.as_str()) => {
                failures.push(format!("{at}: a {} block with no `<!-- excerpt: PATH -->` before it", b.lang))
            }
            None => {}
        }
    }
    failures
}

#[test]
fn the_tutorial_is_the_example_crate_file_for_file() {
    let crate_dir = root().join("examples/protocol-crate");
    let tutorial = read(&root().join("docs/TUTORIAL.md"));
    let mut files: Vec<(String, Vec<String>)> = Vec::new();
    let mut failures = Vec::new();
    for b in blocks(&tutorial) {
        let at = format!("docs/TUTORIAL.md:{}", b.line);
        match b.marker.as_deref() {
            Some(m) if m.starts_with("file:") => {
                let file = m["file:".len()..].trim().to_string();
                match files.iter_mut().find(|(f, _)| *f == file) {
                    Some((_, parts)) => parts.push(b.body),
                    None => files.push((file, vec![b.body])),
                }
            }
            Some(m) if m.starts_with("excerpt:") => {
                let file = root().join(m["excerpt:".len()..].trim());
                if b.body.trim_end() != quoted_text(&file).trim_end() {
                    failures.push(format!("{at}: not the whole of {}", file.display()));
                }
            }
            _ if ["rust", "toml"].contains(&b.lang.as_str()) => {
                failures.push(format!("{at}: a {} block that is no file of the example crate", b.lang))
            }
            _ => {}
        }
    }
    for (file, parts) in &files {
        let real = read(&crate_dir.join(file));
        if parts.join("\n") != real {
            failures.push(format!(
                "docs/TUTORIAL.md: its blocks of {file}, joined by one blank line, are not examples/protocol-crate/{file}"
            ));
        }
    }
    for file in ["Cargo.toml", "build.rs", "src/lib.rs", "tests/models.rs"] {
        if !files.iter().any(|(f, _)| f == file) {
            failures.push(format!("docs/TUTORIAL.md shows nothing of examples/protocol-crate/{file}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readme_quotes_only_what_is_in_the_files_it_names() {
    let failures = check_excerpts("README.md", true);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_guides_excerpts_are_in_the_files_they_name() {
    let mut failures = check_excerpts("docs/MODELS.md", false);
    failures.extend(check_excerpts("docs/CRATE.md", false));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_excerpt_check_fails_on_a_line_that_is_not_there_or_out_of_order() {
    let text = "a\nb\nc\n";
    assert_eq!(excerpt_of("a\n...\nc\n", text), Ok(()));
    assert!(excerpt_of("a\nx\n", text).is_err());
    assert!(excerpt_of("c\na\n", text).is_err());
    let doc = "<!-- excerpt: x -->\n```rust\nfn f() {}\n```\n\n```text\nout\n```\n";
    let b = blocks(doc);
    assert_eq!((b[0].marker.as_deref(), b[0].body.as_str(), b[0].line), (Some("excerpt: x"), "fn f() {}\n", 2));
    assert_eq!((b[1].marker.as_deref(), b[1].lang.as_str()), (None, "text"));
}

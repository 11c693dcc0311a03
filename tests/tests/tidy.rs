//! Style checked by a test, not by memory: every Rust source file of the
//! workspace starts with a `//!` paragraph saying what it owns, has no
//! trailing whitespace, and leaves no `dbg!` behind. (That every planted
//! bug has a model expecting it is the planted-bug gate's first check,
//! `planted.rs`, which reads the declarations themselves.)

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the workspace").to_path_buf()
}

/// Every `.rs` file under the workspace's crates, sorted.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name.to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for krate in ["cmc", "cmc-macros", "cmc-preload", "cmc-runner", "examples", "tests", "bench"] {
        walk(&root().join(krate), &mut out);
    }
    out.sort();
    out
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| p.strip_prefix(root()).unwrap_or(&p).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` module doc: {missing:#?}");
}

#[test]
fn no_trailing_whitespace_and_no_dbg() {
    let mut problems = Vec::new();
    for p in sources() {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let rel = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
        for (i, line) in text.lines().enumerate() {
            if line.ends_with(' ') || line.ends_with('\t') {
                problems.push(format!("{rel}:{}: trailing whitespace", i + 1));
            }
            if line.contains(concat!("dbg", "!(")) {
                problems.push(format!("{rel}:{}: dbg! left behind", i + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

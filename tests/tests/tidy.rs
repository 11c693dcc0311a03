//! Style checked by a test, not by memory: every Rust source file of the
//! workspace starts with a `//!` paragraph saying what it owns, has no
//! trailing whitespace, and leaves no `dbg!` behind; every planted bug of an
//! example core, and of an example C program, has a model expecting it in
//! the models suite.

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

/// The planted-bug convention: a setting `bug_<name>` and sites written
/// `if ctx.settings.bug_<name> != 0 {`. Each bug of an example core must be
/// declared in the models suite as a model named after it.
#[test]
fn every_planted_bug_has_a_model_named_after_it() {
    let models: String = std::fs::read_dir(root().join("tests/models"))
        .expect("tests/models")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    let mut missing = Vec::new();
    let mut found = 0;
    for p in sources().into_iter().filter(|p| p.starts_with(root().join("examples/src"))) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("ctx.settings.bug_") {
            let name: String = rest[at + "ctx.settings.".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[at + 1..];
            found += 1;
            if !models.contains(&format!("fn {name}()")) {
                missing.push(format!("{}: {name}", p.strip_prefix(root()).unwrap_or(&p).display()));
            }
        }
    }
    assert!(found > 0, "no planted-bug sites found: the convention changed?");
    missing.dedup();
    assert!(missing.is_empty(), "planted bugs without a model in tests/models: {missing:#?}");
}

/// The C programs' convention: a site `#if BUG_NAME` in
/// `examples/c/PROGRAM.c`, built as `examples/c/build/PROGRAM-BUG_NAME`.
/// Each must be declared in `tests/models/programs.rs` as a model of that
/// build named after the bug: `#[cmc::model(program =
/// "../examples/c/build/PROGRAM-BUG_NAME", ...)]` on `fn bug_name()`.
#[test]
fn every_planted_c_bug_has_a_program_model_named_after_it() {
    let dir = root().join("examples/c");
    let models = std::fs::read_to_string(root().join("tests/models/programs.rs")).expect("tests/models/programs.rs");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/c")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    let mut missing = Vec::new();
    let mut found = 0;
    for path in sources {
        let program = path.file_stem().expect("a file").to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let Some(bug) = line.trim().strip_prefix("#if ").filter(|b| b.starts_with("BUG_")) else { continue };
            found += 1;
            let build = format!("\"../examples/c/build/{program}-{bug}\"");
            let function = format!("fn {}()", bug.to_lowercase());
            // The first function declared after the build is the model.
            let declared = models
                .find(&build)
                .and_then(|at| models[at..].find("fn ").map(|f| &models[at + f..]))
                .is_some_and(|rest| rest.starts_with(&function));
            if !declared {
                missing.push(format!("examples/c/{program}.c:{}: {bug} (want {function} on program = {build})", i + 1));
            }
        }
    }
    assert!(found > 0, "no `#if BUG_` sites found in examples/c: the convention changed?");
    assert!(missing.is_empty(), "planted C bugs without a model in tests/models/programs.rs: {missing:#?}");
}

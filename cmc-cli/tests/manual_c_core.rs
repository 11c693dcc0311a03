//! The C core that libcmc(3) shows in EXAMPLES runs as the page says: a C
//! core written from the manual builds against `cmc.h` and checks from a
//! model file with `cmc --model-file`.
//!
//! The page marks each file of the example with an mdoc comment line,
//! `.\" manual_c_core: FILE`, followed at once by a `.Bd -literal` block;
//! the block's lines up to its `.Ed`, unescaped, are the file FILE. This
//! test takes `counter.c` and `counter.toml` that way, writes them to a
//! scratch folder, compiles the core into `build/libcounter.so` (the path
//! the model file names) with
//! `cc -std=c11 -Wall -Werror -O2 -fPIC -shared -I <repository root>`,
//! and runs the `cmc` binary on the model file: a pass with the counts the
//! page states, and, with the planted bug the page describes set in a
//! `[settings]` table, a violation of the page's invariant (exit 1).
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The marker comment that names the next literal block's file.
const MARKER: &str = ".\\\" manual_c_core: ";

/// What the page says `cmc --model-file counter.toml` prints, and the
/// counts the JSON report must have. 75 distinct states, 146 generated,
/// depth 8: the same counts as an independent enumeration of the model's
/// worlds (node 0's durable count, the budgets, the forwarded request in
/// flight, the pending persists, the ghost log and the pending resets).
const PASS_LINE: &str = "pass (bfs; 75 distinct states, 146 generated, depth 8)";
const PASS_COUNTS: (u64, u64, u64) = (75, 146, 8);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn page() -> String {
    let path = root().join("docs/man/libcmc.3");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A literal block's text as the reader sees it: mdoc's escapes undone.
/// An escape this test does not know is a failure, not a guess.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let escape = &rest[i..];
        let (text, len) = [("\\e", "\\"), ("\\&", ""), ("\\(aq", "'"), ("\\(dq", "\""), ("\\-", "-")]
            .into_iter()
            .find(|(e, _)| escape.starts_with(e))
            .map(|(e, text)| (text, e.len()))
            .unwrap_or_else(|| panic!("libcmc.3: an mdoc escape this test does not undo in `{line}`"));
        out.push_str(text);
        rest = &escape[len..];
    }
    out.push_str(rest);
    out
}

/// The files the page marks, by name, each the literal block after its
/// marker.
fn marked_files(page: &str) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix(MARKER) else { continue };
        let open = lines.next().unwrap_or_default();
        assert!(open.starts_with(".Bd -literal"), "libcmc.3: `{line}` is followed by `{open}`, not `.Bd -literal`");
        let mut text = String::new();
        for l in lines.by_ref() {
            if l == ".Ed" {
                break;
            }
            assert!(!l.starts_with('.') && !l.starts_with('\''), "libcmc.3, {name}: a control line `{l}` in the block");
            text.push_str(&unescape(l));
            text.push('\n');
        }
        assert!(files.insert(name.trim().to_string(), text).is_none(), "libcmc.3: `{name}` is marked twice");
    }
    files
}

/// A scratch folder of this test's own, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("manual_c_core").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("build")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Writes the page's example into `dir` and builds its core.
fn build_example(dir: &Path) -> String {
    let files = marked_files(&page());
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(names, ["counter.c", "counter.toml"], "libcmc.3's marked files");
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("writing {name}: {e}"));
    }
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-O2", "-fPIC", "-shared", "-I"])
        .arg(root())
        .args(["-o", "build/libcounter.so", "counter.c"])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("running cc: {e} (install gcc: apt-get install gcc libc6-dev)"));
    assert!(out.status.success(), "cc failed on libcmc.3's counter.c:\n{}", text(&out.stderr));
    files["counter.toml"].clone()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `cmc --model-file FILE --json --save CEX`, from `dir`.
fn cmc(dir: &Path, model_file: &str) -> (Output, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(["--model-file", model_file, "--json", "--save", "counterexample.cex.json"])
        .current_dir(dir)
        .output()
        .expect("cmc runs");
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: no JSON report on stdout:\n{}{}", text(&out.stdout), text(&out.stderr)));
    (out, json)
}

fn counts(json: &serde_json::Value) -> (u64, u64, u64) {
    let n = |k: &str| json[k].as_u64().unwrap_or_else(|| panic!("no `{k}` in {json}"));
    (n("distinct_states"), n("generated_states"), n("depth"))
}

#[test]
fn the_manuals_c_core_passes_from_its_model_file_with_the_counts_the_page_states() {
    let dir = scratch("pass");
    build_example(&dir);
    let (out, json) = cmc(&dir, "counter.toml");
    assert_eq!(out.status.code(), Some(0), "{json}\n{}", text(&out.stderr));
    assert_eq!((json["verdict"].as_str(), json["model"]["core"].as_str()), (Some("pass"), Some("counter")));
    assert_eq!(counts(&json), PASS_COUNTS, "{json}");
    assert!(page().contains(PASS_LINE), "libcmc.3 does not say `{PASS_LINE}`");
}

#[test]
fn the_manuals_c_core_with_its_planted_bug_violates_its_invariant() {
    let dir = scratch("bug");
    let model = build_example(&dir);
    // The page's bug: add `[settings] reply_early = 1` to the model file.
    assert!(!model.contains("[settings]"), "counter.toml has a [settings] table already");
    std::fs::write(dir.join("bug.toml"), format!("{model}\n[settings]\nreply_early = 1\n")).expect("writing bug.toml");
    let (out, json) = cmc(&dir, "bug.toml");
    assert_eq!(out.status.code(), Some(1), "{json}\n{}", text(&out.stderr));
    assert_eq!((json["verdict"].as_str(), json["property"].as_str()), (Some("violation"), Some("replies_durable")));
    assert_eq!(json["model"]["settings"]["reply_early"], 1, "{json}");
    // The initial world, then the first request answered before it is on
    // disk: the counterexample of two states the page describes.
    let trace = json["trace"].as_array().unwrap_or_else(|| panic!("no trace in {json}"));
    let actions: Vec<&str> = trace.iter().filter_map(|step| step["action"].as_str()).collect();
    assert_eq!(actions, ["INIT(0)", "CLIENT(0)"], "{json}");
    assert!(dir.join("counterexample.cex.json").is_file(), "the counterexample is saved where --save says");
}

#[test]
fn unescape_undoes_the_mdoc_escapes_a_literal_block_may_hold() {
    assert_eq!(unescape(r"a \e b\&. \(aqx\(aq \(dqy\(dq \-z"), r#"a \ b. 'x' "y" -z"#);
    assert_eq!(unescape("if (c->reply_early) {"), "if (c->reply_early) {");
}

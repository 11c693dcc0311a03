//! The fuzz targets' findings and seeds under `cargo test` (issue 12, item
//! 8): every file in `fuzz/regressions/TARGET/` (a crash a fuzzer found,
//! minimized, kept once fixed) and in `fuzz/seeds/TARGET/` goes through the
//! body of its target, `cmc_cli::fuzzing::TARGET`, and must come back as a
//! value or an error, never a panic. scripts/fuzz.sh does the fuzzing;
//! fuzz/README.md says how a crash becomes a file here.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Once;

use cmc_cli::fuzzing;

type Body = fn(&str) -> fuzzing::Outcome;

const TARGETS: [(&str, Body); 4] = [
    ("model_file", fuzzing::model_file),
    ("cfg", fuzzing::cfg),
    ("counterexample", fuzzing::counterexample),
    ("set", fuzzing::set),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/KIND/TARGET`, sorted (none if the folder is absent).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else { return Vec::new() };
    let mut files: Vec<PathBuf> = dir.map(|e| e.expect("a directory entry").path()).collect();
    files.sort();
    files
}

thread_local! {
    /// The last panic on this thread, as the hook saw it.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records every panic, even one the code under test catches (the engine
/// turns a panic in a core into the verdict `error`): libFuzzer's hook
/// aborts on any panic, caught or not, and so this test fails on any.
fn record_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
            default(info);
        }));
    });
}

/// Runs every input of `kind` through its target; returns how many ran,
/// and fails naming each input that panicked.
fn run_all(kind: &str) -> usize {
    record_panics();
    let mut count = 0;
    let mut panicked = Vec::new();
    for (target, body) in TARGETS {
        for file in inputs(kind, target) {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // libFuzzer gives a `&str` target only the inputs that are UTF-8.
            let Ok(text) = std::str::from_utf8(&bytes) else { continue };
            count += 1;
            PANIC.with(|p| p.borrow_mut().take());
            let _ = std::panic::catch_unwind(|| body(text));
            if let Some(panic) = PANIC.with(|p| p.borrow_mut().take()) {
                // The path from the repository's root, as scripts/fuzz.sh runs.
                let name = file.file_name().unwrap_or_default().to_string_lossy();
                let shown = format!("fuzz/{kind}/{target}/{name}");
                panicked.push(format!(
                    "{shown}: {panic}\n  reproduce: fuzz/target/x86_64-unknown-linux-gnu/release/{target} {shown} \
                     (built by scripts/fuzz.sh)"
                ));
            }
        }
    }
    assert!(panicked.is_empty(), "{} of {count} inputs panicked:\n{}", panicked.len(), panicked.join("\n"));
    count
}

#[test]
fn every_fuzz_regression_is_an_error_or_a_value_not_a_panic() {
    run_all("regressions");
}

#[test]
fn every_fuzz_seed_is_an_error_or_a_value_not_a_panic() {
    // Each target has seeds: the fuzz gate starts from them.
    for (target, _) in TARGETS {
        assert!(!inputs("seeds", target).is_empty(), "fuzz/seeds/{target} is empty");
    }
    assert!(run_all("seeds") >= 40);
}

/// `--set` arguments the command refuses: each an error naming the
/// argument, the key or the limit.
#[test]
fn bad_settings_are_errors_naming_them() {
    for (text, expected) in [
        ("lock-service\nbug_lost_wakeup", "--set bug_lost_wakeup: expected KEY=VALUE"),
        ("lock-service\nbug_lost_wakeup=", "the value is not a number"),
        ("lock-service\nbug_lost_wakeup=-1", "the value is not a number"),
        ("lock-service\nbug_lost_wakeup=18446744073709551616", "the value is not a number"),
        ("lock-service\nbug_lost_wakeup=256", "out of range (at most 255)"),
        ("lock-service\n=1", "unknown setting ``"),
        ("lock-service\nnodes=3", "unknown setting `nodes`"),
        ("lock-service\n", "expected KEY=VALUE"),
        ("no-such-core\nx=1", "unknown core `no-such-core`"),
    ] {
        let err = fuzzing::set(text).err().unwrap_or_else(|| panic!("{text:?}: accepted"));
        assert!(format!("{err:#}").contains(expected), "{text:?}: `{err:#}` does not say `{expected}`");
    }
    fuzzing::set("lock-service\n bug_lost_wakeup = 1 ").unwrap_or_else(|e| panic!("{e:#}"));
}

/// What each fixed finding is now: an error naming what is wrong, as the
/// command prints it (exit code 2).
#[test]
fn fixed_findings_are_errors_naming_what_is_wrong() {
    for (target, file, expected) in [
        // `cmc calibrate` overflowed its stack: the reader recursed into
        // every `{`.
        ("cfg", "sets-nested-50000-deep.cfg", "fuzz.cfg:1: sets nested more than 4 deep (limit set_depth_max = 4)"),
        // `cmc replay` applied an error's action without checking it was
        // enabled, and the engine's `unreachable!` blamed the core.
        (
            "counterexample",
            "error-action-not-enabled.json",
            "step 1: at the end, FLUSH(0) is not enabled in the replayed world",
        ),
        // A misspelt budget read as its default: `imeouts` meant timers
        // that fire whenever armed.
        ("counterexample", "misspelt-budget-key.json", "unknown field `imeouts`"),
    ] {
        let (_, body) = TARGETS.into_iter().find(|(t, _)| *t == target).expect("a target");
        let path = fuzz_dir().join("regressions").join(target).join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let err = body(&text).err().unwrap_or_else(|| panic!("{target}/{file}: accepted"));
        assert!(format!("{err:#}").contains(expected), "{target}/{file}: `{err:#}` does not say `{expected}`");
    }
}

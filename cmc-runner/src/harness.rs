//! The test runner: runs every `#[cmc::model]` of a `harness = false` test
//! target as a libtest test (libtest-mimic), so that `cargo test` and
//! `cargo nextest run` list, filter and run models like ordinary tests.
//!
//! A model passes when its search ends as it expects and its snapshot (the
//! counts for a pass, the counterexample for a violation) is the one under
//! the snapshot folder (`snapshot`: new and changed snapshots are written
//! as `.snap.new` for `cargo insta review`, none under `CI`).
//!
//! Every failure prints the commands that run it again, through this same
//! test target (`cargo test -p PACKAGE --test TARGET -- --exact NAME`, and
//! with `CMC_REPLAY=FILE` to replay its counterexample), so that they work
//! in the user's own crate, not only in this repository. Overrides from the
//! environment (`overrides`) are part of those commands; a model run with
//! overrides is not compared with its snapshot, since the snapshot pins the
//! declared configuration.
//!
//! Program models (`#[cmc::model(program = ...)]`) run with the
//! `cmc-preload` library embedded in `cmc`, or `$CMC_PRELOAD` (a missing
//! preload fails the model, never skips it). They run like the others, on libtest's
//! threads, side by side: each search makes its explorer (which owns the
//! node processes) on its trial's thread and drops it there, and
//! supervisors on different threads do not interfere (`cmc/tests/
//! process_race.rs`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};

use cmc::catalog::{DynError, DynModel};
use cmc::harness::{Attributes, Declared, Expect, MODELS};
use cmc::{CounterexampleFile, Options, ReplayError, Verdict};

use crate::control::RunControl;
use crate::overrides::Overrides;
use crate::snapshot::{self, Outcome, Policy, Snapshot};

/// What `cmc_runner::main!()` knows about the test target at compile time.
pub struct Target<'a> {
    /// The snapshot folder.
    pub snapshots: &'a Path,
    /// The package of the test target (`CARGO_PKG_NAME`), for the
    /// reproduce command.
    pub package: &'a str,
    /// The test target's name (`CARGO_CRATE_NAME`), for the reproduce
    /// command.
    pub name: &'a str,
    /// Where counterexample files go.
    pub save_dir: &'a Path,
}

/// Runs the models of this test target: `cmc_runner::main!()` expands to
/// this.
pub fn main(target: Target<'_>) -> ExitCode {
    let args = Arguments::from_args();
    let overrides = match Overrides::from_env(std::env::vars()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("cmc: {e}");
            return ExitCode::from(101);
        }
    };
    let policy = match Policy::from_env(|k| std::env::var(k).ok()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cmc: {e}");
            return ExitCode::from(101);
        }
    };
    let mut declared: Vec<&'static Declared> = MODELS.iter().collect();
    declared.sort_by_key(|d| d.name());
    if let Some(twin) = declared.windows(2).find(|w| w[0].name() == w[1].name()) {
        eprintln!(
            "cmc: two models are named `{}` ({}:{} and {}:{})",
            twin[0].name(),
            twin[0].file,
            twin[0].line,
            twin[1].file,
            twin[1].line
        );
        return ExitCode::from(101);
    }
    if args.exact
        && let Some(filter) = &args.filter
        && !declared.iter().any(|d| &d.name() == filter)
    {
        // libtest would report "0 passed"; a model that does not exist must
        // not look like one that passed.
        eprintln!("cmc: no model is named `{filter}` in this test target (--exact)");
        return ExitCode::from(101);
    }
    if overrides.explore.is_some() && !(args.exact && args.filter.is_some()) && !args.list {
        eprintln!("cmc: CMC_EXPLORE serves one model in the browser: name it, `-- --exact NAME`");
        return ExitCode::from(101);
    }
    if let Some(file) = &overrides.replay
        && !(args.exact && args.filter.is_some())
        && !args.list
    {
        eprintln!(
            "cmc: CMC_REPLAY={} replays the counterexample of one model: name it, `-- --exact NAME`",
            file.display()
        );
        return ExitCode::from(101);
    }
    if !overrides.is_empty() && !args.list {
        eprintln!("cmc: overrides from the environment: {}", overrides.describe());
    }
    // Only a run of every model can tell which snapshots no model owns.
    let whole = args.filter.is_none() && args.skip.is_empty() && !args.list && !args.ignored;
    let names: Vec<String> = declared.iter().map(|d| d.name()).collect();
    let context = Context {
        snapshots: target.snapshots.to_path_buf(),
        package: target.package.to_string(),
        target: target.name.to_string(),
        save_dir: target.save_dir.to_path_buf(),
        overrides,
        policy,
    };
    let context: &'static Context = Box::leak(Box::new(context));
    let trials = declared
        .into_iter()
        .map(|d| {
            let trial = Trial::test(d.name(), move || run(d, context));
            match d.attributes.ignore {
                Some(_) => trial.with_ignored_flag(true),
                None => trial,
            }
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    if whole {
        let stray = snapshot::unreferenced(&context.snapshots, &names);
        if !stray.is_empty() {
            let list: Vec<String> = stray.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "cmc: {} snapshot{} of no model in this test target (renamed or deleted models?): {}",
                stray.len(),
                if stray.len() == 1 { "" } else { "s" },
                list.join(", ")
            );
        }
    }
    conclusion.exit_code()
}

/// Expands to a `main` that runs the models of this test target. With no
/// argument, snapshots live in `snapshots/` beside the target's
/// `Cargo.toml`; `main!(snapshots = "../snapshots")` puts them elsewhere
/// (relative to that `Cargo.toml`).
#[macro_export]
macro_rules! main {
    () => {
        $crate::main!(snapshots = "snapshots");
    };
    (snapshots = $dir:literal) => {
        fn main() -> ::std::process::ExitCode {
            let root = ::std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let tmp = ::std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
            $crate::harness::main($crate::harness::Target {
                snapshots: &root.join($dir),
                package: env!("CARGO_PKG_NAME"),
                name: env!("CARGO_CRATE_NAME"),
                save_dir: &tmp.join("cmc"),
            })
        }
    };
}

struct Context {
    snapshots: PathBuf,
    package: String,
    target: String,
    save_dir: PathBuf,
    overrides: Overrides,
    policy: Policy,
}

impl Context {
    /// `cargo test` of one model of this target, with the overrides in
    /// force: it works from anywhere in the user's workspace.
    fn test_command(&self, model: &str) -> String {
        let env: Vec<String> = self.overrides.given.iter().map(|(k, v)| format!("{k}={}", shell_word(v))).collect();
        let env = env.join(" ");
        let env = if env.is_empty() { env } else { format!("{env} ") };
        format!("{env}cargo test -p {} --test {} -- --exact {model}", self.package, self.target)
    }
}

/// `s` as one word for `sh`: as it is when it is plain, else in single
/// quotes (a path with a space, a value with a leading blank).
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./:,=@+-".contains(&b));
    if plain { s.to_string() } else { format!("'{}'", s.replace('\'', "'\\''")) }
}

/// Runs one declared model: search, expectation, snapshot.
fn run(d: &Declared, cx: &Context) -> Result<(), Failed> {
    let name = d.name();
    let mut attributes = cx.overrides.apply(&d.attributes);
    // A program model's preload: `CMC_PRELOAD`, or (left `None`) the one
    // embedded in `cmc`, which its configuration finds.
    attributes.preload = cx.overrides.preload.as_deref().map(|p| &*Box::leak(p.to_path_buf().into_boxed_path()));
    let model = (d.build)(&attributes).map_err(|e| format!("{name} ({}:{}): {e}", d.file, d.line))?;
    if let Some(file) = &cx.overrides.replay {
        return replay(d, &*model, &attributes, file);
    }
    if let Some(port) = cx.overrides.explore {
        let served = crate::explore::serve(&*model, &name, port, |address| {
            // Printed at once: libtest shows a test's output only at its end.
            eprintln!("cmc: exploring {name} at http://{address}/ (Ctrl-C to stop)");
        });
        return served.map_err(|e| format!("{name}: CMC_EXPLORE={port}: {e}").into());
    }
    let options = Options {
        search: attributes.search,
        states_max: attributes.states_max,
        det: attributes.det,
        deadlock: attributes.deadlock,
        threads: attributes.threads,
        symmetry: attributes.symmetry,
    };
    let memory_max = cx.overrides.memory_max.unwrap_or_else(crate::control::memory_max_default);
    let mut control = RunControl::quiet(attributes.time_max_s.map(Duration::from_secs)).with_memory_max(memory_max);
    let mut report = model.check(&options, &mut control).map_err(|e| format!("{name}: {e}"))?;
    report.elapsed_s = control.elapsed_s();

    let saved = match report.counterexample() {
        Some(cex) => {
            // A folder per target: two targets may declare models of one name.
            let dir = cx.save_dir.join(&cx.target);
            let path = dir.join(format!("{}.cex.json", name.replace("::", "-")));
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, cex.to_json()))
                .map_err(|e| format!("{name}: writing {}: {e}", path.display()))?;
            let chart = cmc::chart::path_beside(&path);
            std::fs::write(&chart, cmc::chart::html(&name, &report))
                .map_err(|e| format!("{name}: writing {}: {e}", chart.display()))?;
            report.chart = Some(chart.display().to_string());
            Some(path)
        }
        None => None,
    };
    let reproduce = || {
        let test = cx.test_command(&name);
        let mut s = format!("reproduce: {test}\n");
        if let Some(p) = &saved {
            s.push_str(&format!("replay:    CMC_REPLAY={} {test}\n", shell_word(&p.display().to_string())));
        }
        if let Some(chart) = &report.chart {
            s.push_str(&format!("chart:     {chart}\n"));
        }
        s
    };
    let expected = match d.attributes.expect {
        Expect::Pass => report.verdict == Verdict::Pass,
        Expect::Violation(p) => report.verdict == Verdict::Violation && report.property.as_deref() == Some(p),
    };
    if !expected {
        let want = expected_text(d.attributes.expect);
        let header: String = model.header().iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        return Err(format!(
            "{name} ({}:{}) expected {want}, got:\n{header}{}{}",
            d.file,
            d.line,
            report.to_text(),
            reproduce()
        )
        .into());
    }
    if !cx.overrides.is_empty() {
        println!("{name}: {} [overrides: {}; snapshot not compared]", report.summary(), cx.overrides.describe());
        return Ok(());
    }
    let text = snapshot::text(&name, &model.header(), &report);
    let snap = Snapshot { dir: &cx.snapshots, model: &name, source: d.file };
    let path = snap.path();
    let review = "review it with `cargo insta review`, or rename it to .snap";
    match snap.check(&text, cx.policy).map_err(|e| format!("{name}: {e}"))? {
        Outcome::Same => Ok(()),
        Outcome::Accepted(p) => {
            println!("{name}: snapshot written to {} (INSTA_UPDATE=always)", p.display());
            Ok(())
        }
        Outcome::New { written: Some(p) } => {
            Err(format!("{name}: new snapshot written to {} for review: {review}", p.display()).into())
        }
        Outcome::New { written: None } => Err(format!(
            "{name}: no snapshot at {} and none written ({}): run the test where it can write one, and commit it",
            path.display(),
            if cx.policy.ci { "CI is set" } else { "INSTA_UPDATE=no" }
        )
        .into()),
        Outcome::Differs { diff, written } => {
            let what = match &written {
                Some(p) => format!("this run's is written to {}: {review}", p.display()),
                None if cx.policy.ci => "this run's is not written, since CI is set".to_string(),
                None => "this run's is not written (INSTA_UPDATE=no)".to_string(),
            };
            let message =
                format!("{name}: the snapshot differs from {} ({what}):\n{diff}{}", path.display(), reproduce());
            if cx.policy.force_pass {
                eprintln!("{message}(INSTA_FORCE_PASS: not a failure)");
                return Ok(());
            }
            Err(message.into())
        }
    }
}

/// `CMC_REPLAY=FILE`: replays the counterexample in `file` through the
/// declared model (rebuilt with the same overrides), printing the replayed
/// trace, and holds what the trace shows to the model's expectation, as
/// the model's search is held to it ([`confirms`]). A file that does not
/// fit the model (another model's, a step that cannot be taken, a
/// fingerprint that differs) fails whatever the expectation: its trace
/// shows nothing.
fn replay(d: &Declared, model: &dyn DynModel, attributes: &Attributes, file: &Path) -> Result<(), Failed> {
    let name = d.name();
    let shown = file.display();
    let text = std::fs::read_to_string(file).map_err(|e| {
        // Cargo runs a test binary in its crate's folder, not the shell's.
        let at = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        format!("{name}: CMC_REPLAY={shown}: reading {}: {e}", at.display())
    })?;
    let cex = CounterexampleFile::from_json(&text)
        .map_err(|e| format!("{name}: CMC_REPLAY={shown}: not a cmc counterexample file: {e}"))?;
    let identity = model.identity();
    if cex.model != identity {
        let json = |id: &cmc::Identity| serde_json::to_string(id).unwrap_or_else(|e| e.to_string());
        return Err(format!(
            "{name}: CMC_REPLAY={shown} was saved from another model or configuration:\n  file:  {}\n  model: {}",
            json(&cex.model),
            json(&identity)
        )
        .into());
    }
    let (outcome, text) = match model.replay(&cex, attributes.det) {
        Ok(report) => {
            let outcome = match (report.verdict, &report.property, &report.reason) {
                (Verdict::Violation, Some(property), _) => Replayed::Violation(property.clone()),
                (Verdict::Error, _, reason) => Replayed::Error(reason.clone().unwrap_or_default()),
                _ => return Err(format!("{name}: CMC_REPLAY={shown}: internal: a replay ended {report:?}").into()),
            };
            (outcome, report.to_text())
        }
        // The replay names the step where the trace leaves the file; at
        // the last step, that may be the end's check alone, which the
        // model no longer fails: then every step replays.
        Err(DynError::Replay(ReplayError::Diverged { step, message }))
            if step == cex.steps.len() && replays_to_its_end(model, &cex) =>
        {
            (Replayed::Holds(message), String::new())
        }
        Err(e) => return Err(format!("{name}: CMC_REPLAY={shown}: {e}").into()),
    };
    match confirms(d.attributes.expect, &outcome) {
        Ok(()) => {
            match &outcome {
                Replayed::Holds(why) => println!("{name}: replayed {shown}: every step replays and {why}"),
                _ => println!("{name}: replayed {shown}: {text}"),
            }
            Ok(())
        }
        Err(contradiction) => {
            let want = expected_text(d.attributes.expect);
            let trace = if text.is_empty() { String::new() } else { format!(":\n{text}") };
            Err(format!("{name} ({}:{}) expected {want}; CMC_REPLAY={shown} {contradiction}{trace}", d.file, d.line)
                .into())
        }
    }
}

/// What a replayed trace showed.
#[derive(Debug)]
enum Replayed {
    /// A violation of this property at its end.
    Violation(String),
    /// An error, on the way or at its end.
    Error(String),
    /// Every step replays, and its end no longer fails as the file
    /// recorded (why, as the replay said).
    Holds(String),
}

/// The rule of `CMC_REPLAY`: a replayed trace confirms a model expected to
/// pass when it no longer fails, and a model expected to violate `p` when
/// it violates `p`. Anything else contradicts the expectation: `Err` says
/// how.
fn confirms(expect: Expect, replayed: &Replayed) -> Result<(), String> {
    match (expect, replayed) {
        (Expect::Pass, Replayed::Holds(_)) => Ok(()),
        (Expect::Violation(p), Replayed::Violation(q)) if p == q => Ok(()),
        (_, Replayed::Violation(q)) => Err(format!("replayed to a violation of `{q}`")),
        (_, Replayed::Error(e)) => Err(format!("replayed to an error: {e}")),
        (Expect::Violation(_), Replayed::Holds(why)) => Err(format!("no longer fails: every step replays and {why}")),
    }
}

fn expected_text(expect: Expect) -> String {
    match expect {
        Expect::Pass => "pass".to_string(),
        Expect::Violation(p) => format!("a violation of `{p}`"),
    }
}

/// Whether every step of `cex` can be taken again, each reaching the
/// fingerprint the file recorded.
fn replays_to_its_end(model: &dyn DynModel, cex: &CounterexampleFile) -> bool {
    let tokens: Vec<String> = cex.steps.iter().map(|s| s.action.clone()).collect();
    let Ok(mut session) = model.session() else { return false };
    match session.walk(&tokens) {
        Ok(walk) => {
            walk.trace.len() == cex.steps.len()
                && walk.trace.iter().zip(&cex.steps).all(|(step, recorded)| step.fingerprint == recorded.fingerprint)
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{Replayed, confirms};
    use cmc::harness::Expect;

    #[test]
    fn class_8_a_replay_passes_when_its_trace_confirms_the_expectation_and_fails_otherwise() {
        let violation = |p: &str| Replayed::Violation(p.to_string());
        let error = Replayed::Error("step 2: the core panicked".to_string());
        let holds = Replayed::Holds("the replayed trace does not violate always property `safe`".to_string());
        let cases = [
            (Expect::Pass, holds, Ok(())),
            (Expect::Pass, violation("safe"), Err("replayed to a violation of `safe`")),
            (Expect::Pass, error, Err("replayed to an error: step 2: the core panicked")),
            (Expect::Violation("safe"), violation("safe"), Ok(())),
            (Expect::Violation("safe"), violation("live"), Err("replayed to a violation of `live`")),
            (
                Expect::Violation("safe"),
                Replayed::Error("a step failed".to_string()),
                Err("replayed to an error: a step failed"),
            ),
            (
                Expect::Violation("safe"),
                Replayed::Holds("the replayed trace does not violate always property `safe`".to_string()),
                Err(
                    "no longer fails: every step replays and the replayed trace does not violate always property `safe`",
                ),
            ),
        ];
        for (expect, replayed, want) in cases {
            assert_eq!(confirms(expect, &replayed), want.map_err(str::to_string), "{expect:?} {replayed:?}");
        }
    }

    #[test]
    fn a_word_with_a_space_or_a_quote_is_quoted_for_the_shell() {
        assert_eq!(super::shell_word("/tmp/a.cex.json"), "/tmp/a.cex.json");
        assert_eq!(super::shell_word("/home/me/My Projects/a.json"), "'/home/me/My Projects/a.json'");
        assert_eq!(super::shell_word(" 5"), "' 5'");
        assert_eq!(super::shell_word("it's"), "'it'\\''s'");
    }
}

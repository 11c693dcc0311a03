//! The test runner: runs every `#[cmc::model]` of a `harness = false` test
//! target as a libtest test (libtest-mimic), so that `cargo test` and
//! `cargo nextest run` list, filter and run models like ordinary tests.
//!
//! A model passes when its search ends as it expects and its snapshot (the
//! counts for a pass, the counterexample for a violation) matches the one
//! under the snapshot folder; insta writes a `.snap.new` beside a changed
//! one for `cargo insta review`, and nothing under `CI=true`.
//!
//! Budgets, caps and the seed can be overridden from the environment
//! (`CMC_SEED`, `CMC_STATES_MAX`, ...): libtest-mimic accepts no custom
//! flags. A model run with overrides is not compared with its snapshot,
//! since the snapshot pins the declared configuration. `CMC_REPLAY=FILE`
//! replays a saved counterexample through the one model `--exact` names
//! instead of searching it.
//!
//! Program models (`#[cmc::model(program = ...)]`) need `cmc-preload`:
//! `$CMC_PRELOAD`, or built once per test binary by a nested `cargo build -p
//! cmc-preload` into the target's temporary folder (a missing preload fails
//! the model, never skips it). They run like the others, on libtest's
//! threads, side by side: each search makes its explorer (which owns the
//! node processes) on its trial's thread and drops it there, and
//! supervisors on different threads do not interfere (`cmc/tests/
//! process_race.rs`). A program search mostly waits for its nodes, so two
//! at once overlap well; see `prepare_program` for why they are not pinned
//! to a CPU.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::OnceLock;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};

use cmc::catalog::DynModel;
use cmc::harness::{Attributes, Declared, Expect, MODELS};
use cmc::{CounterexampleFile, Options, Report, Search, Verdict};

use crate::control::RunControl;
use crate::repro::check_command;

/// What `cmc_runner::main!()` knows about the test target at compile time.
pub struct Target<'a> {
    /// The snapshot folder.
    pub snapshots: &'a Path,
    /// The test target's name, for the reproduce command.
    pub name: &'a str,
    /// Where counterexample files go.
    pub save_dir: &'a Path,
    /// The target's `CARGO_MANIFEST_DIR`: where the nested cargo that
    /// builds `cmc-preload` runs.
    pub manifest_dir: &'a Path,
    /// The cargo that built the target (`env!("CARGO")`).
    pub cargo: &'a str,
    /// The target's `CARGO_TARGET_TMPDIR`: the preload is built under it.
    pub tmp_dir: &'a Path,
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
    let context = Context {
        snapshots: target.snapshots.to_path_buf(),
        target: target.name.to_string(),
        save_dir: target.save_dir.to_path_buf(),
        manifest_dir: target.manifest_dir.to_path_buf(),
        cargo: target.cargo.to_string(),
        tmp_dir: target.tmp_dir.to_path_buf(),
        overrides,
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
    libtest_mimic::run(&args, trials).exit_code()
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
                name: env!("CARGO_CRATE_NAME"),
                save_dir: &tmp.join("cmc"),
                manifest_dir: root,
                cargo: env!("CARGO"),
                tmp_dir: tmp,
            })
        }
    };
}

struct Context {
    snapshots: PathBuf,
    target: String,
    save_dir: PathBuf,
    manifest_dir: PathBuf,
    cargo: String,
    tmp_dir: PathBuf,
    overrides: Overrides,
}

/// Overrides read from `CMC_*` environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// (variable, value) as given, for the report and the reproduce line.
    pub given: Vec<(String, String)>,
    pub seed: Option<u64>,
    pub walks: Option<u64>,
    pub walk_length: Option<u32>,
    pub depth_max: Option<u32>,
    pub states_max: Option<u64>,
    pub time_max_s: Option<u64>,
    pub nodes: Option<u8>,
    pub drops: Option<u8>,
    pub dups: Option<u8>,
    pub crashes: Option<u8>,
    pub clients: Option<u8>,
    pub timeouts: Option<u8>,
    pub det: Option<bool>,
    /// `CMC_DEADLOCK`: a world with no enabled action is a violation of
    /// `deadlock`. Cores only: a program model ignores it, as it ignores
    /// `CMC_DUPS`.
    pub deadlock: Option<bool>,
    /// `CMC_PRELOAD`: the `cmc-preload` library for program models, instead
    /// of building it. Not an override: the snapshot is still compared.
    pub preload: Option<PathBuf>,
    /// `CMC_REPLAY`: a counterexample file to replay through the one model
    /// run, instead of searching it. Not an override either: it is checked
    /// against the model's identity, overrides included.
    pub replay: Option<PathBuf>,
}

/// The variables [`Overrides::from_env`] reads; any other `CMC_*` variable
/// is an error, so that a typo is not silently ignored.
pub const VARIABLES: &[&str] = &[
    "CMC_SEED",
    "CMC_WALKS",
    "CMC_WALK_LENGTH",
    "CMC_DEPTH_MAX",
    "CMC_STATES_MAX",
    "CMC_TIME_MAX_S",
    "CMC_NODES",
    "CMC_DROPS",
    "CMC_DUPS",
    "CMC_CRASHES",
    "CMC_CLIENTS",
    "CMC_TIMEOUTS",
    "CMC_DET",
    "CMC_DEADLOCK",
    "CMC_PRELOAD",
    "CMC_REPLAY",
];

impl Overrides {
    /// Reads the overrides from `(name, value)` pairs (the environment).
    pub fn from_env(vars: impl Iterator<Item = (String, String)>) -> Result<Overrides, String> {
        let mut o = Overrides::default();
        let mut vars: Vec<(String, String)> = vars.filter(|(k, _)| k.starts_with("CMC_")).collect();
        vars.sort();
        for (name, value) in vars {
            fn num<T: std::str::FromStr>(name: &str, value: &str, max: &str) -> Result<T, String> {
                value.trim().parse().map_err(|_| format!("{name}={value}: expected an integer, at most {max}"))
            }
            fn boolean(name: &str, value: &str) -> Result<bool, String> {
                match value {
                    "1" | "true" => Ok(true),
                    "0" | "false" => Ok(false),
                    _ => Err(format!("{name}={value}: expected 1 or 0")),
                }
            }
            match name.as_str() {
                "CMC_SEED" => o.seed = Some(num(&name, &value, "2^64-1")?),
                "CMC_WALKS" => o.walks = Some(num(&name, &value, "2^64-1")?),
                "CMC_WALK_LENGTH" => o.walk_length = Some(num(&name, &value, "2^32-1")?),
                "CMC_DEPTH_MAX" => o.depth_max = Some(num(&name, &value, "2^32-1")?),
                "CMC_STATES_MAX" => o.states_max = Some(num(&name, &value, "2^64-1")?),
                "CMC_TIME_MAX_S" => o.time_max_s = Some(num(&name, &value, "2^64-1")?),
                "CMC_NODES" => o.nodes = Some(num(&name, &value, "8")?),
                "CMC_DROPS" => o.drops = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_DUPS" => o.dups = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_CRASHES" => o.crashes = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_CLIENTS" => o.clients = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_TIMEOUTS" => o.timeouts = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_PRELOAD" => {
                    o.preload = Some(PathBuf::from(value));
                    continue;
                }
                "CMC_REPLAY" => {
                    o.replay = Some(PathBuf::from(value));
                    continue;
                }
                "CMC_DET" => o.det = Some(boolean(&name, &value)?),
                "CMC_DEADLOCK" => o.deadlock = Some(boolean(&name, &value)?),
                _ => return Err(format!("unknown variable {name} (known: {})", VARIABLES.join(", "))),
            }
            o.given.push((name, value));
        }
        Ok(o)
    }

    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// `NAME=value NAME=value`, as a shell prefix.
    pub fn describe(&self) -> String {
        self.given.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }

    /// The declared attributes with these overrides applied.
    pub fn apply(&self, a: &Attributes) -> Attributes {
        let mut a = *a;
        a.search = match a.search {
            Search::Bfs { depth_max } => Search::Bfs { depth_max: self.depth_max.or(depth_max) },
            Search::Dfs { depth_max } => Search::Dfs { depth_max: self.depth_max.unwrap_or(depth_max) },
            Search::Simulate { walks, walk_length, seed } => Search::Simulate {
                walks: self.walks.unwrap_or(walks),
                walk_length: self.walk_length.unwrap_or(walk_length),
                seed: self.seed.unwrap_or(seed),
            },
        };
        a.states_max = self.states_max.or(a.states_max);
        a.time_max_s = self.time_max_s.or(a.time_max_s);
        a.nodes = self.nodes.or(a.nodes);
        a.drops = self.drops.or(a.drops);
        a.dups = self.dups.or(a.dups);
        a.crashes = self.crashes.or(a.crashes);
        a.clients = self.clients.or(a.clients);
        a.timeouts = self.timeouts.or(a.timeouts);
        a.det = self.det.unwrap_or(a.det);
        if a.program.is_none() {
            a.deadlock = self.deadlock.unwrap_or(a.deadlock);
        }
        a
    }
}

/// Runs one declared model: search, expectation, snapshot.
fn run(d: &Declared, cx: &Context) -> Result<(), Failed> {
    let name = d.name();
    let mut attributes = cx.overrides.apply(&d.attributes);
    if d.attributes.program.is_some() {
        attributes.preload = Some(preload(cx).map_err(|e| format!("{name} ({}:{}): {e}", d.file, d.line))?);
    }
    let model = (d.build)(&attributes).map_err(|e| format!("{name} ({}:{}): {e}", d.file, d.line))?;
    if let Some(file) = &cx.overrides.replay {
        return replay(d, &*model, &attributes, file);
    }
    let options = Options {
        search: attributes.search,
        states_max: attributes.states_max,
        det: attributes.det,
        deadlock: attributes.deadlock,
    };
    let mut control = RunControl::quiet(attributes.time_max_s.map(Duration::from_secs));
    let mut report = model.check(&options, &mut control).map_err(|e| format!("{name}: {e}"))?;
    report.elapsed_s = control.elapsed_s();

    let saved = match report.counterexample() {
        Some(cex) => {
            let path = cx.save_dir.join(format!("{}.cex.json", name.replace("::", "-")));
            std::fs::create_dir_all(&cx.save_dir)
                .and_then(|()| std::fs::write(&path, cex.to_json()))
                .map_err(|e| format!("{name}: writing {}: {e}", path.display()))?;
            Some(path)
        }
        None => None,
    };
    let reproduce = || {
        let mut s = String::new();
        let env = cx.overrides.describe();
        let env = if env.is_empty() { env } else { format!("{env} ") };
        let test = format!("cargo test --test {} -- --exact {name}", cx.target);
        s.push_str(&format!("reproduce: {env}{test}\n"));
        match (&saved, d.attributes.program) {
            // A declared program has no model file for `cmc replay` to
            // rebuild it from: the test target rebuilds it by name.
            (Some(p), Some(_)) => s.push_str(&format!("replay:    {env}CMC_REPLAY={} {test}\n", p.display())),
            (Some(p), None) => s.push_str(&format!("replay:    cmc replay {}\n", p.display())),
            (None, _) => {}
        }
        if d.attributes.program.is_none() {
            s.push_str(&format!("same run:  {}\n", check_command(&report.model, &options)));
        }
        s
    };
    let expected = match d.attributes.expect {
        Expect::Pass => report.verdict == Verdict::Pass,
        Expect::Violation(p) => report.verdict == Verdict::Violation && report.property.as_deref() == Some(p),
    };
    if !expected {
        let want = match d.attributes.expect {
            Expect::Pass => "pass".to_string(),
            Expect::Violation(p) => format!("a violation of `{p}`"),
        };
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
    let text = snapshot_text(&name, &model.header(), &report);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(&cx.snapshots);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_input_file(d.file);
    // No line number: moving a declaration must not change its snapshot.
    settings.set_description(format!("cmc model {name} ({})", d.file));
    let snapshot = name.replace("::", "__");
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(snapshot.as_str(), text));
    }));
    if outcome.is_err() {
        return Err(format!(
            "{name}: the snapshot differs from {}/{snapshot}.snap (diff above; `cargo insta review` accepts it)\n{}",
            cx.snapshots.display(),
            reproduce()
        )
        .into());
    }
    Ok(())
}

/// `CMC_REPLAY=FILE`: replays the counterexample in `file` through the
/// declared model (rebuilt with the same overrides) and requires the
/// violation it records, printing the replayed trace.
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
    let report = model.replay(&cex, attributes.det).map_err(|e| format!("{name}: CMC_REPLAY={shown}: {e}"))?;
    if report.verdict != Verdict::Violation {
        return Err(format!("{name}: CMC_REPLAY={shown} did not replay to its violation:\n{}", report.to_text()).into());
    }
    println!("{name}: replayed {shown}: {}", report.to_text());
    Ok(())
}

/// The `cmc-preload` library for program models, once per test binary:
/// `$CMC_PRELOAD`, or built by a nested `cargo build -p cmc-preload` with its
/// own target folder under the target's `CARGO_TARGET_TMPDIR` (the outer
/// cargo holds the lock of the main one while tests run, and a plain `cargo
/// test -p CRATE` does not build the cdylib). Cargo's own freshness check
/// makes the nested build cheap when nothing changed, and keeps a stale
/// library from being used.
fn preload(cx: &Context) -> Result<&'static Path, String> {
    preload_library(&cx.cargo, &cx.manifest_dir, &cx.tmp_dir, cx.overrides.preload.as_deref())
}

/// The `cmc-preload` library (see [`preload`]), for other test binaries
/// that run program models themselves (the gates): `given` is
/// `$CMC_PRELOAD`; otherwise `cargo` builds it under `tmp_dir`, from the
/// workspace of `manifest_dir`. Once per process.
pub fn preload_library(
    cargo: &str,
    manifest_dir: &Path,
    tmp_dir: &Path,
    given: Option<&Path>,
) -> Result<&'static Path, String> {
    static PRELOAD: OnceLock<Result<&'static Path, String>> = OnceLock::new();
    PRELOAD
        .get_or_init(|| {
            let path = match given {
                Some(p) if !p.is_file() => return Err(format!("CMC_PRELOAD={}: not a file", p.display())),
                Some(p) => p.to_path_buf(),
                None => build_preload(cargo, manifest_dir, tmp_dir)?,
            };
            if !path.is_file() {
                return Err(format!("cmc-preload: the nested build made no {}", path.display()));
            }
            Ok(&*Box::leak(path.into_boxed_path()))
        })
        .clone()
}

fn build_preload(cargo: &str, manifest_dir: &Path, tmp_dir: &Path) -> Result<PathBuf, String> {
    let target_dir = tmp_dir.join("preload-target");
    let out = Command::new(cargo)
        .args(["build", "--quiet", "-p", "cmc-preload", "--target-dir"])
        .arg(&target_dir)
        .current_dir(manifest_dir)
        .output()
        .map_err(|e| format!("cmc-preload: running {cargo} build: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cmc-preload: `cargo build -p cmc-preload --target-dir {}` failed (set CMC_PRELOAD to a built libcmc_preload.so instead):\n{}",
            target_dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(target_dir.join("debug").join("libcmc_preload.so"))
}

/// The snapshot: stable across runs, machines and thread counts (no times,
/// no paths). `header` is the model's own description
/// ([`DynModel::header`]).
pub fn snapshot_text(name: &str, header: &[(&'static str, String)], r: &Report) -> String {
    let mut s = format!("model: {name}\n");
    for (key, value) in header {
        s.push_str(&format!("{key}: {value}\n"));
    }
    s.push_str(&format!("search: {}\n", r.search));
    s.push_str(&format!("verdict: {}\n", r.verdict.name()));
    if let (Some(p), Some(k)) = (&r.property, r.kind) {
        s.push_str(&format!("property: {p} ({k})\n"));
    }
    if let Some(reason) = &r.reason {
        s.push_str(&format!("reason: {reason}\n"));
    }
    if let Some(note) = r.never_checked_note() {
        s.push_str(&format!("{note}\n"));
    }
    s.push_str(&format!(
        "distinct states: {}\ngenerated states: {}\ndepth: {}\n",
        r.distinct_states, r.generated_states, r.depth
    ));
    if !r.trace.is_empty() {
        s.push_str(&format!("counterexample ({} states):\n", r.trace.len()));
        cmc::report::render_trace(&mut s, &r.trace);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Result<Overrides, String> {
        Overrides::from_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn the_preload_and_a_replay_are_not_overrides() {
        let o =
            env(&[("CMC_PRELOAD", "/p/libcmc_preload.so"), ("CMC_REPLAY", "a.cex.json"), ("PATH", "/bin")]).unwrap();
        assert_eq!(o.preload.as_deref(), Some(Path::new("/p/libcmc_preload.so")));
        assert_eq!(o.replay.as_deref(), Some(Path::new("a.cex.json")));
        assert!(o.is_empty(), "the snapshot is still compared: {}", o.describe());
        let o = env(&[("CMC_DROPS", "2"), ("CMC_PRELOAD", "/p")]).unwrap();
        assert_eq!((o.drops, o.describe().as_str()), (Some(2), "CMC_DROPS=2"));
    }

    #[test]
    fn an_unknown_variable_is_an_error_naming_the_known_ones() {
        let e = env(&[("CMC_PRELAOD", "/p")]).unwrap_err();
        assert!(e.starts_with("unknown variable CMC_PRELAOD (known: CMC_SEED,"), "{e}");
        assert!(e.contains("CMC_PRELOAD, CMC_REPLAY"), "{e}");
    }
}

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
//! since the snapshot pins the declared configuration.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};

use cmc::harness::{Attributes, Declared, Expect, MODELS};
use cmc::{Options, Report, Search, Verdict};

use crate::control::RunControl;
use crate::repro::check_command;

/// Runs the models of this test target: `cmc_runner::main!()` expands to
/// this. `snapshots` is the snapshot folder; `target` names the test target
/// (for the reproduce command); `save_dir` is where counterexample files go.
pub fn main(snapshots: &Path, target: &str, save_dir: &Path) -> ExitCode {
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
    if !overrides.is_empty() && !args.list {
        eprintln!("cmc: overrides from the environment: {}", overrides.describe());
    }
    let context = Context {
        snapshots: snapshots.to_path_buf(),
        target: target.to_string(),
        save_dir: save_dir.to_path_buf(),
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
            $crate::harness::main(
                &root.join($dir),
                env!("CARGO_CRATE_NAME"),
                &::std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cmc"),
            )
        }
    };
}

struct Context {
    snapshots: PathBuf,
    target: String,
    save_dir: PathBuf,
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
                "CMC_DET" => {
                    o.det = Some(match value.as_str() {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        _ => return Err(format!("{name}={value}: expected 1 or 0")),
                    })
                }
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
        a
    }
}

/// Runs one declared model: search, expectation, snapshot.
fn run(d: &Declared, cx: &Context) -> Result<(), Failed> {
    let name = d.name();
    let attributes = cx.overrides.apply(&d.attributes);
    let model = (d.build)(&attributes).map_err(|e| format!("{name} ({}:{}): {e}", d.file, d.line))?;
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
        s.push_str(&format!(
            "reproduce: {}{}cargo test --test {} -- --exact {name}\n",
            env,
            if env.is_empty() { "" } else { " " },
            cx.target
        ));
        if let Some(p) = &saved {
            s.push_str(&format!("replay:    cmc replay {}\n", p.display()));
        }
        s.push_str(&format!("same run:  {}\n", check_command(&report.model, &options)));
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
        return Err(format!(
            "{name} ({}:{}) expected {want}, got:\n{}{}",
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
    let text = snapshot_text(&name, &report);
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

/// The snapshot: stable across runs, machines and thread counts (no times,
/// no paths).
pub fn snapshot_text(name: &str, r: &Report) -> String {
    let m = &r.model;
    let settings: Vec<String> = m.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let b = &m.budgets;
    let timeouts = b.timeouts.map_or("unbounded".to_string(), |t| t.to_string());
    let mut s = format!(
        "model: {name}\ncore: {}\nsettings: {}\nenvironment: {} nodes, {}, drops {}, dups {}, crashes {}, clients {}, timeouts {}\nsearch: {}\n",
        m.core,
        if settings.is_empty() { "-".to_string() } else { settings.join(" ") },
        m.nodes,
        m.network.name(),
        b.drops,
        b.dups,
        b.crashes,
        b.clients,
        timeouts,
        r.search,
    );
    s.push_str(&format!("verdict: {}\n", r.verdict.name()));
    if let (Some(p), Some(k)) = (&r.property, r.kind) {
        s.push_str(&format!("property: {p} ({k})\n"));
    }
    if let Some(reason) = &r.reason {
        s.push_str(&format!("reason: {reason}\n"));
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

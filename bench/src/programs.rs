//! `cmc-bench programs`: the process front end's speed on the example C
//! programs (issue 10, item 6), checkpoints against the stateless path in
//! one run.
//!
//! For each program model it writes two model files into a temporary
//! folder, the example's own keys with absolute paths, once as they are
//! (variant A, checkpoints: parked node processes as snapshots) and once
//! with `snapshots_max = 0` (variant B, stateless: every world rebuilt from
//! the templates). It runs them A/B, pair by pair, each run a fresh `cmc
//! --model-file FILE --json` process, and alternates which variant of a pair
//! goes first, because this kind of virtual machine drifts in speed by tens
//! of percent within minutes: the ratio of a pair's two times is steadier
//! than either median. While a run lasts a thread samples the memory of the
//! checker and all its node processes together ([`process_tree`]).
//!
//! The two variants must explore the same worlds: any difference in
//! distinct or generated worlds, depth or verdict, between variants or
//! between runs, is an error. Timings are printed, never asserted.
//!
//! The `cmc` binary (with the preload library embedded) and the C programs
//! are built first (`cargo build --release -p cmc-cli`, `make -C
//! examples/c`), so that the binary measured is the working tree's; with
//! `--no-build` they are only looked for, and a missing one is an error that
//! says what to run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context as _, bail, ensure};
use cmc::{Report, Verdict};

use crate::process_tree::{self, Peak};
use crate::{RUNS_MAX, command_line, group, machine};

/// The bound on one `cmc` run, passed as `--time-max`: a run that reaches it
/// stops incomplete, and the benchmark fails naming this limit.
const RUN_SECONDS_MAX: u64 = 900;

/// Issue 10's aims, read against `register`: distinct worlds per second
/// with checkpoints, and the stateless path's wall time over theirs.
const WORLDS_PER_SECOND_AIM: f64 = 1000.0;
const STATELESS_RATIO_AIM: f64 = 20.0;

/// What `--programs` may name, in the order measured.
pub const PROGRAM_NAMES: &str = "register,election,register-faults";

/// One program model: an example model file and the keys added to it.
struct Program {
    name: &'static str,
    /// The model file, in `examples/c`.
    file: &'static str,
    /// Keys added to it (none may already be there: TOML refuses a
    /// duplicate key, and so the run fails).
    keys: &'static [&'static str],
    outcome: Outcome,
}

/// How a program's search must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The whole space explored, every invariant holding.
    Pass,
    /// Incomplete because `depth_max` was reached.
    DepthMax,
}

const PROGRAMS: [Program; 3] = [
    Program { name: "register", file: "register.toml", keys: &[], outcome: Outcome::Pass },
    Program { name: "election", file: "election.toml", keys: &[], outcome: Outcome::Pass },
    // Three nodes with crashes (register.toml's crashes = 1) and drops.
    Program {
        name: "register-faults",
        file: "register.toml",
        keys: &["drops = 1", "depth_max = 20"],
        outcome: Outcome::DepthMax,
    },
];

/// The two ways of rebuilding a world that are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Checkpoints,
    Stateless,
}

impl Variant {
    const BOTH: [Variant; 2] = [Variant::Checkpoints, Variant::Stateless];

    fn name(self) -> &'static str {
        match self {
            Variant::Checkpoints => "A: checkpoints",
            Variant::Stateless => "B: stateless",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Variant::Checkpoints => &[],
            Variant::Stateless => &["snapshots_max = 0"],
        }
    }
}

/// `cmc-bench programs`'s options.
#[derive(clap::Args)]
pub struct Args {
    /// A/B pairs per program, each run a fresh cmc process (the default
    /// takes about 4 to 5 minutes on a 2-core machine, most of it the
    /// stateless runs).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// One pair per program (`--runs 1`): about 1.5 minutes.
    #[arg(long, conflicts_with = "runs")]
    quick: bool,
    /// Program models to measure, comma-separated, from
    /// register,election,register-faults (register.toml with drops = 1 and
    /// depth_max = 20).
    #[arg(long, value_delimiter = ',', default_value = PROGRAM_NAMES)]
    programs: Vec<String>,
    /// Do not build first: measure the cmc binary and the C programs
    /// already built.
    #[arg(long)]
    no_build: bool,
}

/// What one `cmc` run measured.
struct Run {
    report: Report,
    /// From start to exit of the process, its start-up and teardown of
    /// node processes included.
    wall_s: f64,
    memory: Peak,
}

/// One A/B pair.
struct Pair {
    checkpoints: Run,
    stateless: Run,
}

impl Pair {
    fn get(&self, v: Variant) -> &Run {
        match v {
            Variant::Checkpoints => &self.checkpoints,
            Variant::Stateless => &self.stateless,
        }
    }
}

/// Every pair of one program, in the order run.
struct Measured<'p> {
    program: &'p Program,
    pairs: Vec<Pair>,
}

/// What the table's header says about the run.
struct Header {
    command: String,
    commit: String,
    machine: String,
    load_before: String,
    load_after: String,
}

/// Where the pieces measured are.
struct Tools {
    cmc: PathBuf,
    /// `examples/c`, whose model files name the programs in `build/`.
    examples: PathBuf,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let runs = if args.quick { 1 } else { args.runs };
    ensure!((1..=RUNS_MAX).contains(&runs), "--runs = {runs} (1 to {RUNS_MAX})");
    let programs = select(&args.programs)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("bench/ has no parent folder")?;
    let tools = prepare(root, !args.no_build)?;
    let dir = std::env::temp_dir().join(format!("cmc-bench-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let load_before = load_average();
    let mut measured = Vec::new();
    for program in programs {
        let files = [
            write_model(&dir, &tools.examples, program, Variant::Checkpoints)?,
            write_model(&dir, &tools.examples, program, Variant::Stateless)?,
        ];
        let mut pairs = Vec::with_capacity(runs);
        for run in 1..=runs {
            // Alternate which variant goes first, so that a machine that
            // speeds up or slows down favours neither.
            let order = if run % 2 == 1 { Variant::BOTH } else { [Variant::Stateless, Variant::Checkpoints] };
            let (mut checkpoints, mut stateless) = (None, None);
            for v in order {
                let file = &files[v as usize];
                let r = measure(&tools, file, program.outcome)?;
                eprintln!("cmc-bench: {} run {run} of {runs}, {}: {:.2} s", program.name, v.name(), r.wall_s);
                match v {
                    Variant::Checkpoints => checkpoints = Some(r),
                    Variant::Stateless => stateless = Some(r),
                }
            }
            let (Some(checkpoints), Some(stateless)) = (checkpoints, stateless) else {
                bail!("{}: run {run} measured only one variant", program.name)
            };
            pairs.push(Pair { checkpoints, stateless });
        }
        check_counts(program.name, &pairs)?;
        measured.push(Measured { program, pairs });
    }
    let header = Header {
        command: command_line(),
        commit: commit(root),
        machine: machine(),
        load_before,
        load_after: load_average(),
    };
    print!("{}", render(&header, &measured)?);
    // Left in place when a run fails, so that its reproduce command works.
    std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    Ok(())
}

/// The programs `names` asks for, in the order of [`PROGRAMS`].
fn select(names: &[String]) -> anyhow::Result<Vec<&'static Program>> {
    for n in names {
        ensure!(PROGRAMS.iter().any(|p| p.name == n), "--programs: `{n}` is not one of {PROGRAM_NAMES}");
    }
    Ok(PROGRAMS.iter().filter(|p| names.iter().any(|n| n == p.name)).collect())
}

/// Builds (unless `build` is false) and finds the release `cmc` and the
/// example programs.
fn prepare(root: &Path, build: bool) -> anyhow::Result<Tools> {
    // This executable is TARGET/release/cmc-bench (or TARGET/debug/...);
    // cmc is built into the same target folder.
    let exe = std::env::current_exe().context("finding this executable")?;
    let target = exe.parent().and_then(Path::parent).context("this executable is not in a target folder")?;
    let examples = root.join("examples/c");
    if build {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Process::new(cargo);
        cmd.current_dir(root).args(["build", "--release", "-p", "cmc-cli", "--target-dir"]).arg(target);
        spawn_to_end(&mut cmd)?;
        spawn_to_end(Process::new("make").arg("-C").arg(&examples))?;
    }
    let tools = Tools { cmc: target.join("release/cmc"), examples: examples.clone() };
    let programs = ["register", "register_props.so", "election", "election_props.so"];
    let needed = [tools.cmc.clone()].into_iter().chain(programs.map(|p| examples.join("build").join(p)));
    for path in needed {
        if !path.is_file() {
            bail!(
                "{} not found. Build first: cd {} && cargo build --release -p cmc-cli --target-dir {} \
                 && make -C examples/c (or run without --no-build, which does this)",
                path.display(),
                root.display(),
                target.display()
            );
        }
    }
    Ok(tools)
}

/// Runs a build step, its output on this process's stderr; fails unless it
/// succeeds.
fn spawn_to_end(cmd: &mut Process) -> anyhow::Result<()> {
    let line = format!("{cmd:?}");
    eprintln!("cmc-bench: {line}");
    let status = cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit()).status().with_context(|| line.clone())?;
    ensure!(status.success(), "{line}: {status}");
    Ok(())
}

/// Writes `program`'s model file for `variant` into `dir` and returns its
/// path.
fn write_model(dir: &Path, examples: &Path, program: &Program, variant: Variant) -> anyhow::Result<PathBuf> {
    let source = examples.join(program.file);
    let text = std::fs::read_to_string(&source).with_context(|| format!("reading {}", source.display()))?;
    let keys: Vec<&str> = program.keys.iter().chain(variant.keys()).copied().collect();
    let model = absolute_model(&text, examples, &keys).with_context(|| format!("{}", source.display()))?;
    let suffix = match variant {
        Variant::Checkpoints => "checkpoints",
        Variant::Stateless => "stateless",
    };
    let path = dir.join(format!("{}-{suffix}.toml", program.name));
    std::fs::write(&path, model).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// A model file's text with its `program` and `properties` paths made
/// absolute (they are relative to `folder`, the file's folder) and `keys`
/// appended.
fn absolute_model(text: &str, folder: &Path, keys: &[&str]) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut program_seen = false;
    for line in text.lines() {
        let path_key = ["program", "properties"].into_iter().find_map(|k| {
            let rest = line.strip_prefix(k)?.trim_start().strip_prefix('=')?.trim_start().strip_prefix('"')?;
            Some((k, rest))
        });
        match path_key {
            Some((key, rest)) if !rest.starts_with('/') => {
                program_seen |= key == "program";
                let folder = folder.to_str().context("the examples folder's path is not UTF-8")?;
                ensure!(!folder.contains('"') && !folder.contains('\\'), "the examples folder's path needs quoting");
                writeln!(out, "{key} = \"{folder}/{rest}")?;
            }
            _ => {
                program_seen |= path_key.is_some_and(|(k, _)| k == "program");
                writeln!(out, "{line}")?;
            }
        }
    }
    ensure!(program_seen, "no `program = \"...\"` line");
    for k in keys {
        writeln!(out, "{k}")?;
    }
    Ok(out)
}

/// Runs `cmc --model-file file --json` while sampling its memory, and checks
/// that the search ended as `outcome` says.
fn measure(tools: &Tools, file: &Path, outcome: Outcome) -> anyhow::Result<Run> {
    let mut cmd = Process::new(&tools.cmc);
    cmd.arg("--model-file")
        .arg(file)
        .args(["--json", "--time-max", &RUN_SECONDS_MAX.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let reproduce = format!("{} --model-file {} --json", tools.cmc.display(), file.display());
    let start = Instant::now();
    let child = cmd.spawn().with_context(|| format!("starting {}", tools.cmc.display()))?;
    let pid = child.id();
    let done = AtomicBool::new(false);
    let (output, wall_s, memory) = std::thread::scope(|s| {
        let sampler = s.spawn(|| process_tree::sample_until(pid, &done));
        let output = child.wait_with_output();
        let wall_s = start.elapsed().as_secs_f64();
        done.store(true, Ordering::Release);
        (output, wall_s, sampler.join())
    });
    let output = output.with_context(|| format!("waiting for {reproduce}"))?;
    let memory = memory.map_err(|_| anyhow::anyhow!("the memory sampler panicked"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Report = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{reproduce}: {}, no JSON report; its stderr:\n{stderr}", output.status))?;
    let reason = report.reason.as_deref().unwrap_or("");
    let ended_right = match outcome {
        Outcome::Pass => report.verdict == Verdict::Pass,
        Outcome::DepthMax => report.verdict == Verdict::Incomplete && reason.contains("depth_max"),
    };
    if !ended_right {
        bail!(
            "{reproduce}: expected {outcome:?}, got {:?} ({reason}); the limit on a run is --time-max {RUN_SECONDS_MAX}; stderr:\n{stderr}",
            report.verdict
        );
    }
    for (key, value) in
        [("filters_installed", report.filters_installed), ("execs", report.execs), ("forks", report.forks)]
    {
        ensure!(value.is_some(), "{reproduce}: the report has no `{key}`");
    }
    Ok(Run { report, wall_s, memory })
}

/// Fails unless every run of both variants explored the same worlds.
fn check_counts(name: &str, pairs: &[Pair]) -> anyhow::Result<()> {
    let counts = |r: &Run| (r.report.distinct_states, r.report.generated_states, r.report.depth);
    let first = counts(&pairs[0].checkpoints);
    for (i, pair) in pairs.iter().enumerate() {
        for v in Variant::BOTH {
            let c = counts(pair.get(v));
            ensure!(
                c == first,
                "{name}: {} in run {} found (distinct, generated, depth) = {c:?}, but A: checkpoints in run 1 found {first:?}; \
                 both variants must explore the same worlds",
                v.name(),
                i + 1
            );
        }
    }
    Ok(())
}

/// The middle value of `xs` (the mean of the two middle ones for an even
/// count).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// A count per distinct world, with two significant digits or at least
/// two decimals: `0.00097`, `0.050`, `1.72`.
fn per_world(count: f64, worlds: u64) -> String {
    let x = count / worlds as f64;
    if x <= 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (1 - x.log10().floor() as i32).max(2) as usize;
    format!("{x:.decimals$}")
}

/// A count that is the same in every run as a plain number, else its median
/// and range.
fn count_cell(values: &[u64], worlds: u64) -> String {
    let xs: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    let m = median(&xs);
    let (lo, hi) = min_max(&xs);
    let total = if lo == hi { group(values[0]) } else { format!("{m:.0} ({lo:.0}–{hi:.0})") };
    format!("{total} ({})", per_world(m, worlds))
}

fn render(header: &Header, measured: &[Measured]) -> anyhow::Result<String> {
    let mut s = String::new();
    writeln!(s)?;
    writeln!(s, "command: {}", header.command)?;
    writeln!(s, "commit: {}", header.commit)?;
    writeln!(s, "machine: {}", header.machine)?;
    writeln!(s, "load average (1, 5, 15 min) before: {}; after: {}", header.load_before, header.load_after)?;
    writeln!(s)?;
    writeln!(
        s,
        "| program | variant | distinct | generated | depth | wall s, median (min–max) | search s (cmc's elapsed_s), median | distinct worlds/s | execs (per world) | forks (per world) | filters (per world) | peak Pss MiB, cmc + nodes | processes, max | B/A wall, pair by pair (min, median, max) |"
    )?;
    writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    let mut aims = Vec::new();
    for m in measured {
        let ratios: Vec<f64> = m.pairs.iter().map(|p| p.stateless.wall_s / p.checkpoints.wall_s).collect();
        let (ratio_lo, ratio_hi) = min_max(&ratios);
        let ratio_median = median(&ratios);
        for v in Variant::BOTH {
            let runs: Vec<&Run> = m.pairs.iter().map(|p| p.get(v)).collect();
            let r0 = &runs[0].report;
            let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
            let searches: Vec<f64> = runs.iter().map(|r| r.report.elapsed_s).collect();
            let pss: Vec<f64> = runs.iter().map(|r| r.memory.pss_kib as f64 / 1024.0).collect();
            let field = |f: fn(&Report) -> Option<u64>| -> Vec<u64> {
                runs.iter().map(|r| f(&r.report).unwrap_or(0)).collect()
            };
            let wall = median(&walls);
            let (lo, hi) = min_max(&walls);
            let rate = r0.distinct_states as f64 / wall;
            let ratio = match v {
                Variant::Checkpoints => String::new(),
                Variant::Stateless => format!("{ratio_lo:.1}, {ratio_median:.1}, {ratio_hi:.1}"),
            };
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {wall:.2} ({lo:.2}–{hi:.2}) | {:.2} | {} | {} | {} | {} | {:.1} | {} | {ratio} |",
                m.program.name,
                v.name(),
                group(r0.distinct_states),
                group(r0.generated_states),
                r0.depth,
                median(&searches),
                group(rate.round() as u64),
                count_cell(&field(|r| r.execs), r0.distinct_states),
                count_cell(&field(|r| r.forks), r0.distinct_states),
                count_cell(&field(|r| r.filters_installed), r0.distinct_states),
                median(&pss),
                runs.iter().map(|r| r.memory.processes).max().unwrap_or(0),
            )?;
            if m.program.name == "register" && v == Variant::Checkpoints {
                aims.push((rate, ratio_median));
            }
        }
    }
    writeln!(s)?;
    writeln!(s, "Programs (the examples' model files, paths made absolute; B adds `snapshots_max = 0`):")?;
    for m in measured {
        let added = if m.program.keys.is_empty() {
            "as it is, full BFS".to_string()
        } else {
            format!("with {}", m.program.keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))
        };
        let end = match m.program.outcome {
            Outcome::Pass => "pass",
            Outcome::DepthMax => "incomplete at depth_max",
        };
        writeln!(s, "- {}: `examples/c/{}` {added} ({end})", m.program.name, m.program.file)?;
    }
    writeln!(s)?;
    writeln!(s, "Wall seconds of every run, pair by pair (A, B; odd pairs ran A first, even pairs B first):")?;
    for m in measured {
        let pairs: Vec<String> =
            m.pairs.iter().map(|p| format!("({:.2}, {:.2})", p.checkpoints.wall_s, p.stateless.wall_s)).collect();
        writeln!(s, "- {}: {}", m.program.name, pairs.join(", "))?;
    }
    let all: Vec<&Run> =
        measured.iter().flat_map(|m| m.pairs.iter().flat_map(|p| [&p.checkpoints, &p.stateless])).collect();
    let sampling: f64 = all.iter().map(|r| r.memory.sampling_s).sum();
    let wall: f64 = all.iter().map(|r| r.wall_s).sum();
    let samples: u64 = all.iter().map(|r| r.memory.samples).sum();
    let unreadable: u64 = all.iter().map(|r| r.memory.unreadable).sum();
    writeln!(s)?;
    writeln!(
        s,
        "Memory: the largest sum of Pss over cmc and all its descendants, sampled every {} ms ({samples} samples, \
         {:.1}% of the wall time spent sampling); the median over runs.{}",
        process_tree::SAMPLE_INTERVAL_MS,
        100.0 * sampling / wall,
        if unreadable > 0 { format!(" {unreadable} process reads failed and are not counted.") } else { String::new() },
    )?;
    for (rate, ratio) in aims {
        let met = |ok: bool| if ok { "met" } else { "NOT met" };
        writeln!(s)?;
        writeln!(
            s,
            "register: aim of at least {} distinct worlds/s {}: {}; aim of at least {STATELESS_RATIO_AIM}x the stateless path {}: {ratio:.1}x (median pair)",
            group(WORLDS_PER_SECOND_AIM as u64),
            met(rate >= WORLDS_PER_SECOND_AIM),
            group(rate.round() as u64),
            met(ratio >= STATELESS_RATIO_AIM),
        )?;
    }
    Ok(s)
}

/// `git rev-parse --short HEAD`, marked when the working tree has changes
/// to tracked files.
fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Process::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if changes.trim().is_empty() => hash.trim().to_string(),
            _ => format!("{} with uncommitted changes", hash.trim()),
        },
        None => "unknown (no git)".to_string(),
    }
}

/// The first three fields of `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(", "))
        .unwrap_or_else(|| "?".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_model_anchors_relative_paths_and_appends_keys() {
        let text = "# comment\nprogram = \"build/register\"\nnodes = 3\nproperties = \"build/p.so\"\nargs = [\"program = x\"]\n";
        let out = absolute_model(text, Path::new("/r/examples/c"), &["drops = 1", "snapshots_max = 0"]).unwrap();
        assert_eq!(
            out,
            "# comment\nprogram = \"/r/examples/c/build/register\"\nnodes = 3\nproperties = \"/r/examples/c/build/p.so\"\n\
             args = [\"program = x\"]\ndrops = 1\nsnapshots_max = 0\n"
        );
    }

    #[test]
    fn absolute_model_keeps_absolute_paths_and_needs_a_program() {
        let out = absolute_model("program = \"/bin/p\"\n", Path::new("/x"), &[]).unwrap();
        assert_eq!(out, "program = \"/bin/p\"\n");
        let err = absolute_model("nodes = 3\n", Path::new("/x"), &[]).unwrap_err();
        assert!(err.to_string().contains("program"), "{err}");
    }

    /// A run of election's full BFS that found `distinct` worlds.
    fn run_with(distinct: u64) -> Run {
        let json = format!(
            r#"{{"verdict": "pass", "property": null, "kind": null, "reason": null, "search": "bfs",
                "model": {{"core": "program:election", "settings": {{}}, "nodes": 3, "network": "fifo",
                    "budgets": {{"drops": 0, "dups": 0, "crashes": 1, "clients": 0, "timeouts": 2}}}},
                "distinct_states": {distinct}, "generated_states": 1680, "depth": 14, "elapsed_s": 0.5,
                "filters_installed": 3, "execs": 3, "forks": 1682, "trace": [], "witnesses": []}}"#
        );
        Run { report: serde_json::from_str(&json).unwrap(), wall_s: 0.5, memory: Peak::default() }
    }

    #[test]
    fn check_counts_fails_when_the_variants_explore_different_worlds() {
        let same = [Pair { checkpoints: run_with(1007), stateless: run_with(1007) }];
        check_counts("election", &same).unwrap();
        let differ = [
            Pair { checkpoints: run_with(1007), stateless: run_with(1007) },
            Pair { checkpoints: run_with(1007), stateless: run_with(1006) },
        ];
        let err = check_counts("election", &differ).unwrap_err().to_string();
        assert!(err.contains("B: stateless in run 2"), "{err}");
        assert!(err.contains("(1006, 1680, 14)"), "{err}");
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(min_max(&[2.0, 5.0, 1.0]), (1.0, 5.0));
    }

    #[test]
    fn per_world_keeps_two_significant_digits() {
        assert_eq!(per_world(3.0, 3093), "0.00097");
        assert_eq!(per_world(5319.0, 3093), "1.72");
        assert_eq!(per_world(155.0, 3100), "0.050");
        assert_eq!(per_world(48625.0, 3093), "15.72");
    }

    #[test]
    fn select_keeps_the_table_order_and_refuses_unknown_names() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let got: Vec<&str> = select(&names(&["election", "register"])).unwrap().iter().map(|p| p.name).collect();
        assert_eq!(got, ["register", "election"]);
        assert!(select(&names(&["paxos"])).is_err());
    }
}

//! The `cmc` command line.
//!
//! Exit codes: 0 pass, 1 violation, 2 usage or input error, 3 incomplete,
//! 4 error (a core misbehaved or crossed a limit).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use cmc::catalog::{Entry, Overrides};
use cmc::{CounterexampleFile, Network, Options, Report, Search, Verdict};

use crate::repro::check_command;
use cmc_runner::control::{RunControl, catch_interrupt};

/// Exit code of a usage or input error.
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(name = "cmc", version, about = "A model checker for protocol code", after_help = EXIT_HELP)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Check the program or C core a model file (TOML) names: `cmc --model-file FILE`.
    #[arg(long, value_name = "FILE")]
    model_file: Option<PathBuf>,
    /// With --model-file: print the JSON report on stdout instead of text.
    #[arg(long, requires = "model_file")]
    json: bool,
    /// With --model-file: stop (incomplete) after this many seconds.
    #[arg(long, requires = "model_file")]
    time_max: Option<f64>,
    /// With --model-file: where to save a counterexample (default: target/cmc/NAME.cex.json).
    #[arg(long, requires = "model_file")]
    save: Option<PathBuf>,
    /// With --model-file: stop (incomplete) once this process holds this
    /// much memory: a size such as 4G or 512M, or `none`. Default: nine
    /// tenths of the memory available when the check starts.
    #[arg(long, requires = "model_file", value_parser = memory_max)]
    memory_max: Option<MemoryMax>,
    /// With --model-file: run every start and action twice, from scratch, and compare the worlds (a
    /// non-deterministic program fails).
    #[arg(long, requires = "model_file")]
    det: bool,
    /// With --model-file, a C core's: a distributed search (as for `cmc check`).
    #[command(flatten)]
    distributed: crate::distributed::DistributedArgs,
}

const EXIT_HELP: &str = "Exit codes: 0 pass, 1 violation, 2 usage or input error, 3 incomplete, 4 error (a core misbehaved or crossed a limit).";

#[derive(Subcommand, Debug)]
enum Command {
    /// Check a built-in example core by name.
    Check(Box<CheckArgs>),
    /// Replay a saved counterexample file through the real core.
    Replay(ReplayArgs),
    /// Check Disk Paxos from a TLC configuration file, as `tlc -workers 1 -deadlock -config FILE.cfg MODULE.tla`.
    Calibrate(crate::calibrate::CalibrateArgs),
    /// Walk a model in the browser, one action at a time (a web server on 127.0.0.1).
    Explore(Box<crate::explore::ExploreArgs>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum SearchKind {
    Bfs,
    Dfs,
    Simulate,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// The core to check (see --list).
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// List the built-in cores with their settings.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    model: ModelArgs,
    /// Search strategy.
    #[arg(long, value_enum, default_value = "bfs")]
    search: SearchKind,
    /// Depth bound (required for dfs; optional for bfs). The initial state is depth 1.
    #[arg(long)]
    depth_max: Option<u32>,
    /// Simulation: number of walks.
    #[arg(long, default_value_t = 1000)]
    walks: u64,
    /// Simulation: actions per walk at most.
    #[arg(long, default_value_t = 100)]
    walk_length: u32,
    /// Simulation: seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop (incomplete) rather than store more distinct states.
    #[arg(long)]
    states_max: Option<u64>,
    /// Stop (incomplete) after this many seconds.
    #[arg(long)]
    time_max: Option<f64>,
    /// Stop (incomplete) once this process holds this much memory: a size
    /// such as 4G or 512M, or `none`. Default: nine tenths of the memory
    /// available when the check starts, so that a search stops before the
    /// machine swaps.
    #[arg(long, value_parser = memory_max)]
    memory_max: Option<MemoryMax>,
    /// Run every step twice and compare (a non-deterministic core fails).
    #[arg(long)]
    det: bool,
    /// Report a world with no enabled action as a violation of `deadlock`.
    #[arg(long)]
    deadlock: bool,
    /// Threads for breadth-first search and simulation; 0 (the default) for
    /// one per core.
    /// The result is the same whatever the number. Program models search
    /// on one thread.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Symmetry reduction, as TLC's SYMMETRY: keep one world of each class
    /// of worlds that differ only by a renaming of the core's
    /// interchangeable nodes. Distinct states then count classes; a
    /// counterexample is still a real trace, which replays without it.
    #[arg(long)]
    symmetry: bool,
    /// Print the JSON report on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Where to save a counterexample (default: target/cmc/NAME.cex.json).
    #[arg(long)]
    save: Option<PathBuf>,
    #[command(flatten)]
    distributed: crate::distributed::DistributedArgs,
}

/// How a catalog core's model is set: its settings and environment, as
/// `cmc check` and `cmc explore` take them.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// Set a core setting, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    settings: Vec<String>,
    /// Number of nodes (default: the model's).
    #[arg(long)]
    nodes: Option<u64>,
    /// Network mode (default: the model's).
    #[arg(long)]
    network: Option<Network>,
    /// Drop budget.
    #[arg(long)]
    drops: Option<u64>,
    /// Dup budget (bag mode).
    #[arg(long)]
    dups: Option<u64>,
    /// Crash budget.
    #[arg(long)]
    crashes: Option<u64>,
    /// Client requests per node.
    #[arg(long)]
    clients: Option<u64>,
    /// Timer firings over all nodes (default: unbounded).
    #[arg(long)]
    timeouts: Option<u64>,
}

impl ModelArgs {
    /// The catalog's overrides these arguments give.
    pub fn overrides(&self) -> Result<Overrides> {
        let mut overrides = Overrides { nodes: self.nodes, network: self.network, ..Overrides::default() };
        for kv in &self.settings {
            overrides.settings.push(parse_set(kv)?);
        }
        for (k, v) in [
            ("drops", self.drops),
            ("dups", self.dups),
            ("crashes", self.crashes),
            ("clients", self.clients),
            ("timeouts", self.timeouts),
        ] {
            if let Some(v) = v {
                overrides.budgets.push((k.to_string(), v));
            }
        }
        Ok(overrides)
    }
}

#[derive(Args, Debug)]
struct ReplayArgs {
    /// A counterexample file written by `cmc check`.
    file: PathBuf,
    /// Run every step twice and compare.
    #[arg(long)]
    det: bool,
    /// Print the JSON report on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// The command line's definition: every subcommand and option, as
/// `--help` shows them (the manual page `docs/man/cmc.1` is checked
/// against it).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Runs the command line; returns the exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let result = match (cli.command, cli.model_file) {
        (Some(Command::Check(args)), _) => check(*args),
        (Some(Command::Replay(args)), _) => replay(args),
        (Some(Command::Calibrate(args)), _) => crate::calibrate::run(&args),
        (Some(Command::Explore(args)), _) => crate::explore::run(&args),
        (None, Some(file)) => {
            let memory_max = memory_max_bytes(cli.memory_max);
            let run = crate::program::Run {
                json: cli.json,
                det: cli.det,
                time_max: cli.time_max,
                memory_max,
                save_to: cli.save.as_deref(),
                distributed: &cli.distributed,
            };
            crate::program::run(&file, &run)
        }
        (None, None) if cli.distributed.distributed => {
            eprintln!("cmc: error: --distributed: give a command (check, calibrate) or --model-file FILE");
            return ExitCode::from(EXIT_USAGE);
        }
        (None, None) => {
            eprintln!(
                "cmc: error: give a command (check, replay, calibrate, explore) or --model-file FILE; see cmc --help"
            );
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("cmc: error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The exit code of a verdict.
pub fn exit_code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => 0,
        Verdict::Violation => 1,
        Verdict::Incomplete => 3,
        Verdict::Error => 4,
    }
}

fn find<'a>(catalog: &'a [Entry], name: &str) -> Result<&'a Entry> {
    catalog.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = catalog.iter().map(|e| e.name).collect();
        anyhow!("unknown core `{name}` (known: {})", known.join(", "))
    })
}

fn list(catalog: &[Entry]) {
    for e in catalog {
        println!("{}\n    {}", e.name, e.about);
        for k in e.settings {
            println!("    --set {}={:<6} {} (at most {})", k.name, k.default, k.doc.trim(), k.max);
        }
    }
}

fn check(args: CheckArgs) -> Result<u8> {
    let catalog = cmc_examples::catalog();
    if args.list {
        list(&catalog);
        return Ok(0);
    }
    let name = args.name.as_deref().unwrap_or_default();
    let entry = find(&catalog, name)?;
    let overrides = args.model.overrides()?;
    let search = match args.search {
        SearchKind::Bfs => Search::Bfs { depth_max: args.depth_max },
        SearchKind::Dfs => {
            Search::Dfs { depth_max: args.depth_max.ok_or_else(|| anyhow!("--search dfs needs --depth-max N"))? }
        }
        SearchKind::Simulate => Search::Simulate { walks: args.walks, walk_length: args.walk_length, seed: args.seed },
    };
    let options = Options {
        search,
        states_max: args.states_max,
        det: args.det,
        deadlock: args.deadlock,
        threads: args.threads,
        symmetry: args.symmetry,
    };
    let model = entry.build(&overrides)?;
    let time_max = time_max(args.time_max)?;
    catch_interrupt();
    let memory_max = memory_max_bytes(args.memory_max);
    let mut control = RunControl::new(time_max).with_memory_max(memory_max);
    let mut report = if args.distributed.distributed {
        crate::distributed::check(model, &options, &args.distributed, time_max, memory_max)?
    } else {
        model.check(&options, &mut control)?
    };
    control.finish();
    report.elapsed_s = control.elapsed_s();
    if !args.distributed.reports() {
        eprintln!("process {}: {}; process 0 prints the report", args.distributed.process, report.summary());
        return Ok(exit_code(report.verdict));
    }
    // The report is the one-thread report: one machine reproduces it.
    let rerun = check_command(&report.model, &options);
    let saved = match report.counterexample() {
        Some(cex) => {
            let path = args.save.clone().unwrap_or_else(|| default_save_path(name));
            save(&path, &cex, &mut report, name)?;
            Some(path)
        }
        None => None,
    };
    print_report(&report, args.json);
    if report.verdict != Verdict::Pass {
        eprintln!("reproduce: {rerun}");
        if let Some(path) = saved {
            eprintln!("replay:    cmc replay {}", path.display());
        }
        if let Some(chart) = &report.chart {
            eprintln!("chart:     {chart}");
        }
    }
    Ok(exit_code(report.verdict))
}

fn replay(args: ReplayArgs) -> Result<u8> {
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let file = CounterexampleFile::from_json(&text)
        .with_context(|| format!("{}: not a cmc counterexample file", args.file.display()))?;
    if file.cmc_counterexample != 1 {
        bail!("{}: format version {} (this cmc reads 1)", args.file.display(), file.cmc_counterexample);
    }
    if file.model.model_file.is_some() {
        return crate::program::replay(&args.file, &file, args.det, args.json);
    }
    if file.model.core.starts_with("program:") {
        // A `#[cmc::model(program = ...)]` declaration has no model file to
        // rebuild it from; its test target can replay it.
        bail!(
            "{}: a counterexample of a program declared with #[cmc::model(program = ...)], which has no model \
             file; replay it with its test: CMC_REPLAY={} cargo test --test TARGET -- --exact NAME",
            args.file.display(),
            args.file.display()
        );
    }
    let catalog = cmc_examples::catalog();
    let entry = find(&catalog, &file.model.core).with_context(|| format!("{}", args.file.display()))?;
    let model =
        entry.build(&Overrides::from_identity(&file.model)).with_context(|| format!("{}", args.file.display()))?;
    let control = RunControl::new(None);
    let mut report = model.replay(&file, args.det).with_context(|| format!("{}", args.file.display()))?;
    report.elapsed_s = control.elapsed_s();
    print_report(&report, args.json);
    if !file.reproduced_by(&report) {
        eprintln!("reproduce: cmc replay {}", args.file.display());
    }
    Ok(exit_code(report.verdict))
}

pub(crate) fn print_report(report: &Report, json: bool) {
    use std::io::Write as _;
    let text = if json {
        format!("{}\n", report.to_json())
    } else {
        format!("{}elapsed: {:.3} s\n", report.to_text(), report.elapsed_s)
    };
    // A reader that went away (`cmc ... | head`) does not change the
    // verdict, which the exit code carries: ignore a failed write.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

pub(crate) fn default_save_path(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("cmc").join(format!("{name}.cex.json"))
}

/// Writes the counterexample file of `report` at `path` and its sequence
/// chart beside it, and records the chart's path in the report (for its
/// JSON and the lines printed after it). `title` heads the chart.
pub(crate) fn save(path: &Path, cex: &CounterexampleFile, report: &mut Report, title: &str) -> Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, cex.to_json()).with_context(|| format!("writing {}", path.display()))?;
    let chart = cmc::chart::path_beside(path);
    std::fs::write(&chart, cmc::chart::html(title, report)).with_context(|| format!("writing {}", chart.display()))?;
    report.chart = Some(chart.display().to_string());
    Ok(())
}

/// Reads a `--set KEY=VALUE` argument: the key and the number, each
/// trimmed. Whether the core has the key, and the value fits it, is the
/// catalog's to check ([`Entry::build`]).
pub fn parse_set(kv: &str) -> Result<(String, u64)> {
    let (k, v) = kv.split_once('=').ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))?;
    let v: u64 = v.trim().parse().with_context(|| format!("--set {kv}: the value is not a number"))?;
    Ok((k.trim().to_string(), v))
}

/// Reads a `--time-max SECONDS` argument: a positive, finite number.
pub fn time_max(seconds: Option<f64>) -> anyhow::Result<Option<Duration>> {
    match seconds {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            anyhow::bail!("--time-max {t}: expected a positive number of seconds")
        }
        t => Ok(t.map(Duration::from_secs_f64)),
    }
}

/// `--memory-max`: a size, or no cap at all.
#[derive(Clone, Copy, Debug)]
pub struct MemoryMax(Option<u64>);

/// Reads `--memory-max`.
pub fn memory_max(text: &str) -> Result<MemoryMax, String> {
    if text == "none" {
        return Ok(MemoryMax(None));
    }
    cmc_runner::control::parse_size(text).map(|n| MemoryMax(Some(n)))
}

/// The cap `--memory-max` gives (its default when not given).
pub fn memory_max_bytes(given: Option<MemoryMax>) -> Option<u64> {
    match given {
        Some(MemoryMax(cap)) => cap,
        None => cmc_runner::control::memory_max_default(),
    }
}

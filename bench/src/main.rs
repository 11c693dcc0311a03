//! `cmc-bench`: measures cmc against stateright on the same model, side by
//! side in one run (`cargo run --release -p cmc-bench`).
//!
//! The model is Lamport's `TwoPhase` (two-phase commit): cmc checks its
//! direct-actions core `two-phase-tla` from `cmc-examples`, stateright checks
//! the same specification written for its `Model` trait
//! ([`two_phase_stateright`]), and cmc checks the C port of the same core,
//! `c-two-phase-tla` (`examples/ccores/two_phase_tla.c`, loaded as a shared
//! object, built here first with `make`). All search breadth-first with the
//! same two invariants, on each thread count `--threads` gives (1 and 2 by
//! default).
//! cmc also checks Disk Paxos c13 as `cmc calibrate` does; TLC's times,
//! measured once on this machine, are quoted beside. Runs are interleaved:
//! every configuration once, then again. Every search runs in a fresh child process (this
//! executable, re-invoked with a hidden subcommand), so that each run's peak
//! resident memory (`VmHWM`) is its own. The parent checks that both tools
//! find the same number of distinct states (and, where known, TLC's figures),
//! and prints a Markdown table: distinct and generated states, depth, wall
//! and CPU time of the search, states per second, peak RSS, bytes per
//! distinct state (peak RSS less that of an idle child, divided by the
//! distinct states), and the ratio of cmc's states per second to
//! stateright's. Timings are measured here, never asserted in tests.
//!
//! `cmc-bench programs` measures the process front end instead: the
//! example C programs' searches, checkpoints against the stateless path
//! ([`programs`]).

mod process_tree;
mod programs;
mod two_phase_stateright;

use std::fmt::Write as _;
use std::process::Command as Process;
use std::time::Instant;

use anyhow::{Context as _, bail, ensure};
use clap::{Parser, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};

/// TLC's figures for `TwoPhase` (`tlc -workers 1 -deadlock`), from
/// `calibration/twophase/README.md`: (N, distinct, generated, depth).
const TLC_FIGURES: [(usize, u64, u64, u64); 3] =
    [(3, 288, 1_146, 11), (7, 296_448, 2_744_706, 23), (8, 1_745_408, 18_507_778, 26)];

/// TLC's figures for Disk Paxos c13 (`calibration/expected.tsv`): distinct,
/// generated, depth.
const C13_FIGURES: (u64, u64, u64) = (448_280, 4_537_461, 48);

/// TLC's search times on this machine, as measured for issue 14 (TLC
/// 2.19, `-workers 1`, the search alone, without the JVM's start): quoted,
/// not measured by this program.
const TLC_SECONDS: [(&str, f64); 2] = [("TwoPhase N=8", 38.0), ("Disk Paxos c13", 22.0)];

/// Bound on `--runs`.
const RUNS_MAX: usize = 100;

/// The aims the table is read against (issue 14; `docs/PERFORMANCE.md`).
const SPEEDUP_AIM_N8: f64 = 10.0;
const SPEEDUP_AIM_N7: f64 = 5.0;
const C13_SECONDS_AIM: f64 = 0.22;
const THREADS_AIM: f64 = 1.7;
const BYTES_PER_STATE_AIM: f64 = 32.0;

#[derive(Parser)]
#[command(
    name = "cmc-bench",
    about = "Benchmarks cmc against stateright on TwoPhase and cmc on Disk Paxos c13 (BFS), or the example C programs (`programs`)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Numbers of resource managers (N) to check, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "7,8")]
    rms: Vec<usize>,
    /// Thread counts to run each tool with, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Runs per tool, model and thread count, each in a fresh process,
    /// interleaved (every configuration once, then again); the table shows
    /// the run with the median time, and every run's time is listed below.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Leave out Disk Paxos c13.
    #[arg(long)]
    no_c13: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Runs one search and prints its measurement as JSON (used by the
    /// parent process).
    #[command(hide = true)]
    Child {
        #[arg(long)]
        tool: Tool,
        /// N for TwoPhase; 0 for Disk Paxos c13.
        #[arg(long)]
        rms: usize,
        #[arg(long)]
        threads: usize,
    },
    /// Prints the peak RSS of a process that checks nothing: the baseline.
    #[command(hide = true)]
    Idle,
    /// Times full and depth-bounded BFS of the example C programs
    /// (examples/c), with checkpoints and stateless, A/B in one run.
    Programs(programs::Args),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Tool {
    Cmc,
    /// cmc on the C port of the core.
    CmcC,
    Stateright,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Cmc => "cmc",
            Tool::CmcC => "cmc-c",
            Tool::Stateright => "stateright",
        }
    }
}

/// The C `TwoPhase` core's shared object, which `compare` builds.
const C_CORE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/ccores/build/libtwo_phase_tla.so");

/// What one child process measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Measurement {
    distinct: u64,
    generated: u64,
    depth: u64,
    /// Wall time of the search alone (not of process start-up).
    seconds: f64,
    /// CPU time (user and system, all threads) of the search alone: on a
    /// busy machine it shows how much of the wall time was waiting.
    cpu_seconds: f64,
    /// `VmHWM` of the child at the end of the search.
    peak_rss_kib: u64,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Child { tool, rms, threads }) => {
            let m = match (tool, rms) {
                (Tool::Cmc, 0) => run_c13(threads)?,
                (Tool::Cmc, _) => run_cmc(rms, threads)?,
                (Tool::CmcC, 0) => bail!("the C core is TwoPhase's: give --rms N"),
                (Tool::CmcC, _) => run_cmc_c(rms, threads)?,
                (Tool::Stateright, _) => run_stateright(rms, threads)?,
            };
            println!("{}", serde_json::to_string(&m)?);
            Ok(())
        }
        Some(Command::Idle) => {
            println!("{}", peak_rss_kib()?);
            Ok(())
        }
        Some(Command::Programs(args)) => programs::run(&args),
        None => compare(&cli),
    }
}

/// Checks `two-phase-tla` with cmc's default options (BFS) on `threads` threads.
fn run_cmc(rms: usize, threads: usize) -> anyhow::Result<Measurement> {
    use cmc::Settings as _;
    let mut settings = cmc_examples::two_phase_tla::TwoPhaseTlaSettings::default();
    settings.set("rms", rms as u64)?;
    let model = cmc_examples::two_phase_tla::model(settings);
    measure_cmc(&model, threads, &format!("cmc, N={rms}"))
}

/// Checks the C core `c-two-phase-tla` with cmc's default options (BFS)
/// on `threads` threads, with its C invariants.
fn run_cmc_c(rms: usize, threads: usize) -> anyhow::Result<Measurement> {
    let so = std::path::Path::new(C_CORE);
    let invariants = ["tp_type_ok".to_string(), "tc_consistent".to_string()];
    let mut model = cmc::ccore::CModel::load(so, "cmc_core")?;
    model.set("rms", rms as u64)?;
    let model = model.c_properties_from(cmc::Kind::Always, so, &invariants).map_err(anyhow::Error::msg)?;
    let model = model.into_dyn()?;
    let options = cmc::Options { threads, ..cmc::Options::default() };
    timed(&format!("cmc-c, N={rms}"), || Ok(model.check(&options, &mut cmc::NoControl)?))
}

/// Checks Disk Paxos c13 as `cmc calibrate` does, on `threads` threads.
fn run_c13(threads: usize) -> anyhow::Result<Measurement> {
    use cmc_examples::disk_paxos::cfg::{self, Module};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../calibration/configs/c13.cfg");
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let cal = cfg::read(path, &text, Module::McDiskPaxos)?;
    let names: Vec<&str> = cal.invariants.iter().map(String::as_str).collect();
    let model =
        cmc_examples::disk_paxos::model_with(cal.settings, &names).map_err(|n| anyhow::anyhow!("invariant {n}"))?;
    measure_cmc(&model, threads, "cmc, c13")
}

fn measure_cmc<C: cmc::Core>(model: &cmc::Model<C>, threads: usize, what: &str) -> anyhow::Result<Measurement> {
    let options = cmc::Options { threads, ..cmc::Options::default() };
    timed(what, || Ok(cmc::check(model, &options)?))
}

/// Times `search`, which must pass, and measures it.
fn timed(what: &str, search: impl FnOnce() -> anyhow::Result<cmc::Report>) -> anyhow::Result<Measurement> {
    let (start, cpu_start) = (Instant::now(), cpu_seconds()?);
    let report = search()?;
    let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds()? - cpu_start);
    ensure!(report.verdict == cmc::Verdict::Pass, "{what}: expected pass, got {}", report.summary());
    Ok(Measurement {
        distinct: report.distinct_states,
        generated: report.generated_states,
        depth: report.depth.into(),
        seconds,
        cpu_seconds: cpu,
        peak_rss_kib: peak_rss_kib()?,
    })
}

/// Checks the stateright port breadth-first on `threads` threads.
fn run_stateright(rms: usize, threads: usize) -> anyhow::Result<Measurement> {
    use stateright::{Checker as _, Model as _};
    ensure!((1..=two_phase_stateright::RMS_MAX).contains(&rms), "N={rms} is out of range");
    let model = two_phase_stateright::TwoPhase { rms };
    let (start, cpu_start) = (Instant::now(), cpu_seconds()?);
    let checker = model.checker().threads(threads).spawn_bfs().join();
    let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds()? - cpu_start);
    let discoveries = checker.discoveries();
    ensure!(discoveries.is_empty(), "stateright, N={rms}: invariants failed: {:?}", discoveries.keys());
    ensure!(checker.is_done(), "stateright, N={rms}: the search did not finish");
    Ok(Measurement {
        distinct: checker.unique_state_count() as u64,
        generated: checker.state_count() as u64,
        depth: checker.max_depth() as u64,
        seconds,
        cpu_seconds: cpu,
        peak_rss_kib: peak_rss_kib()?,
    })
}

/// This process's peak resident set size, from `/proc/self/status`.
fn peak_rss_kib() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).context("no VmHWM in /proc/self/status")?;
    let kib = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim();
    kib.parse().with_context(|| format!("VmHWM line `{line}`"))
}

/// Clock ticks per second of `/proc/self/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// User and system CPU time of this process so far, threads that ended
/// included, from `/proc/self/stat` (10 ms resolution).
fn cpu_seconds() -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").context("reading /proc/self/stat")?;
    // Fields after the command name, which is in parentheses: the state is
    // field 3, utime field 14 and stime field 15.
    let rest = stat.rsplit_once(')').context("no `)` in /proc/self/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> anyhow::Result<f64> {
        let f = fields.get(i).with_context(|| format!("/proc/self/stat has no field {}", i + 3))?;
        Ok(f.parse::<u64>().with_context(|| format!("/proc/self/stat field {} `{f}`", i + 3))? as f64)
    };
    Ok((ticks(11)? + ticks(12)?) / TICKS_PER_SECOND)
}

/// Runs this executable with `args` and returns its standard output.
fn run_child(args: &[String]) -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let out = Process::new(&exe)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {}", exe.display(), args.join(" ")))?;
    ensure!(out.status.success(), "child `{}` failed: {}", args.join(" "), out.status);
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

fn measure(tool: Tool, rms: usize, threads: usize) -> anyhow::Result<Measurement> {
    let args = ["child", "--tool", tool.name(), "--rms", &rms.to_string(), "--threads", &threads.to_string()]
        .map(String::from);
    let out = run_child(&args)?;
    serde_json::from_str(&out).with_context(|| format!("child output `{out}`"))
}

/// What a row measures: a model (TwoPhase with N resource managers, or
/// Disk Paxos c13 for N = 0), a tool and a thread count.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Config {
    rms: usize,
    tool: Tool,
    threads: usize,
}

impl Config {
    fn model(&self) -> String {
        if self.rms == 0 { "Disk Paxos c13".to_string() } else { format!("TwoPhase N={}", self.rms) }
    }
}

/// One row of the table: a configuration's measurement (the median-time run).
struct Row {
    config: Config,
    m: Measurement,
    /// Every run's search time, in the order run.
    seconds_all: Vec<f64>,
}

fn compare(cli: &Cli) -> anyhow::Result<()> {
    let runs = cli.runs;
    ensure!((1..=RUNS_MAX).contains(&runs), "--runs = {runs} (1 to {RUNS_MAX})");
    ensure!(cli.threads.iter().all(|&t| t >= 1), "--threads: counts from 1");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/ccores");
    let make =
        Process::new("make").args(["-s", "-C", dir]).status().context("running make (apt-get install make gcc)")?;
    ensure!(make.success(), "make -C {dir} failed: {make}");
    let baseline_kib: u64 = run_child(&["idle".to_string()])?.parse().context("idle child output")?;
    let mut configs = Vec::new();
    for &rms in &cli.rms {
        for tool in [Tool::Cmc, Tool::CmcC, Tool::Stateright] {
            for &threads in &cli.threads {
                configs.push(Config { rms, tool, threads });
            }
        }
    }
    if !cli.no_c13 {
        configs.extend(cli.threads.iter().map(|&threads| Config { rms: 0, tool: Tool::Cmc, threads }));
    }
    // Interleaved: every configuration once per round, so that the
    // machine's drift falls on all of them alike.
    let mut all: Vec<Vec<Measurement>> = vec![Vec::new(); configs.len()];
    for run in 1..=runs {
        for (config, ms) in configs.iter().zip(all.iter_mut()) {
            eprintln!(
                "cmc-bench: {} {} on {} threads, run {run} of {runs}",
                config.tool.name(),
                config.model(),
                config.threads
            );
            ms.push(measure(config.tool, config.rms, config.threads)?);
        }
    }
    let mut rows = Vec::new();
    for (config, mut ms) in configs.into_iter().zip(all) {
        // A search is deterministic: every run must count the same.
        let counts = |m: &Measurement| (m.distinct, m.generated, m.depth);
        if let Some(m) = ms.iter().find(|m| counts(m) != counts(&ms[0])) {
            bail!("{} {}: runs disagree: {:?} and {:?}", config.tool.name(), config.model(), ms[0], m);
        }
        check_counts(&config, &ms[0])?;
        let seconds_all = ms.iter().map(|m| m.seconds).collect();
        ms.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        rows.push(Row { config, m: ms.swap_remove(runs / 2), seconds_all });
    }
    print!("{}", render(&rows, baseline_kib)?);
    Ok(())
}

/// Fails unless a run found TLC's figures (and so both tools the same).
fn check_counts(config: &Config, m: &Measurement) -> anyhow::Result<()> {
    let expected = if config.rms == 0 {
        Some(C13_FIGURES)
    } else {
        TLC_FIGURES.iter().find(|f| f.0 == config.rms).map(|&(_, d, g, depth)| (d, g, depth))
    };
    let Some((distinct, generated, depth)) = expected else { return Ok(()) };
    let what = format!("{} {} on {} threads", config.tool.name(), config.model(), config.threads);
    ensure!(m.distinct == distinct, "{what}: {} distinct states, TLC {distinct}", m.distinct);
    ensure!(m.generated == generated, "{what}: {} generated states, TLC {generated}", m.generated);
    ensure!(m.depth == depth, "{what}: depth {}, TLC {depth}", m.depth);
    Ok(())
}

/// The command line that reproduces this run.
fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut s = "cargo run --release -p cmc-bench".to_string();
    if !args.is_empty() {
        s.push_str(" -- ");
        s.push_str(&args.join(" "));
    }
    s
}

/// The commit measured, `-dirty` when the working tree has changes.
fn commit() -> String {
    Process::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown (no git)".to_string())
}

/// `nproc`, the kernel, the CPU model and the memory of this machine.
fn machine() -> String {
    let nproc = Process::new("nproc")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "?".to_string());
    let field = |file: &str, key: &str| {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|t| {
                t.lines().find(|l| l.starts_with(key)).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| "?".to_string())
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".to_string());
    format!(
        "nproc {nproc}; Linux {kernel}; CPU: {}; memory: {}",
        field("/proc/cpuinfo", "model name"),
        field("/proc/meminfo", "MemTotal")
    )
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn render(rows: &[Row], baseline_kib: u64) -> anyhow::Result<String> {
    let mut s = String::new();
    writeln!(s)?;
    writeln!(s, "command: {}", command_line())?;
    writeln!(s, "commit: {}", commit())?;
    writeln!(s, "machine: {}", machine())?;
    writeln!(s, "baseline (idle child) peak RSS: {:.1} MiB", mib(baseline_kib))?;
    writeln!(s)?;
    writeln!(
        s,
        "| model | tool | threads | distinct | generated | depth | seconds | CPU s | distinct/s | peak RSS MiB | bytes/distinct |"
    )?;
    writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    let bytes_of = |m: &Measurement| (m.peak_rss_kib.saturating_sub(baseline_kib) * 1024) as f64 / m.distinct as f64;
    for row in rows {
        let m = &row.m;
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.3} | {:.2} | {} | {:.1} | {:.1} |",
            row.config.model(),
            row.config.tool.name(),
            row.config.threads,
            group(m.distinct),
            group(m.generated),
            m.depth,
            m.seconds,
            m.cpu_seconds,
            group((m.distinct as f64 / m.seconds) as u64),
            mib(m.peak_rss_kib),
            bytes_of(m),
        )?;
    }
    writeln!(s)?;
    writeln!(s, "Search time of every run, in seconds (the table shows the median):")?;
    for row in rows {
        let times: Vec<String> = row.seconds_all.iter().map(|t| format!("{t:.3}")).collect();
        writeln!(
            s,
            "- {} {} on {} threads: {}",
            row.config.tool.name(),
            row.config.model(),
            row.config.threads,
            times.join(", ")
        )?;
    }
    writeln!(s)?;
    let find = |rms: usize, tool: Tool, threads: usize| {
        rows.iter().find(|r| r.config == Config { rms, tool, threads }).map(|r| &r.m)
    };
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    for (rms, aim) in [(8, SPEEDUP_AIM_N8), (7, SPEEDUP_AIM_N7)] {
        if let (Some(c), Some(sr)) = (find(rms, Tool::Cmc, 1), find(rms, Tool::Stateright, 1)) {
            let ratio = sr.seconds / c.seconds;
            writeln!(s, "TwoPhase N={rms}: cmc >= {aim}x stateright on one thread {}: {ratio:.2}x", met(ratio >= aim))?;
        }
    }
    for &rms in &[7, 8] {
        for threads in [1, 2] {
            if let (Some(rust), Some(c)) = (find(rms, Tool::Cmc, threads), find(rms, Tool::CmcC, threads)) {
                writeln!(
                    s,
                    "TwoPhase N={rms}, {threads} thread(s): the C core takes {:.2}x the Rust core's time",
                    c.seconds / rust.seconds
                )?;
            }
        }
    }
    if let Some(c) = find(0, Tool::Cmc, 1) {
        let tlc = TLC_SECONDS[1].1;
        writeln!(
            s,
            "Disk Paxos c13: cmc <= {C13_SECONDS_AIM} s on one thread (100x TLC's {tlc} s) {}: {:.3} s, {:.0}x TLC",
            met(c.seconds <= C13_SECONDS_AIM),
            c.seconds,
            tlc / c.seconds
        )?;
    }
    if let Some(c) = find(8, Tool::Cmc, 1) {
        writeln!(s, "TwoPhase N=8: cmc is {:.0}x TLC's {} s (quoted)", TLC_SECONDS[0].1 / c.seconds, TLC_SECONDS[0].1)?;
    }
    for rms in [8, 0] {
        if let (Some(one), Some(two)) = (find(rms, Tool::Cmc, 1), find(rms, Tool::Cmc, 2)) {
            let ratio = one.seconds / two.seconds;
            let model = Config { rms, tool: Tool::Cmc, threads: 1 }.model();
            writeln!(
                s,
                "{model}: cmc on 2 threads >= {THREADS_AIM}x one thread {}: {ratio:.2}x",
                met(ratio >= THREADS_AIM)
            )?;
        }
    }
    for rms in [7, 8] {
        for threads in [1, 2] {
            if let Some(c) = find(rms, Tool::Cmc, threads) {
                let bytes = bytes_of(c);
                writeln!(
                    s,
                    "TwoPhase N={rms}, {threads} thread(s): <= {BYTES_PER_STATE_AIM} bytes per distinct state {}: {bytes:.1}",
                    met(bytes <= BYTES_PER_STATE_AIM)
                )?;
            }
        }
    }
    Ok(s)
}

/// `1234567` as `1,234,567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            s.push(',');
        }
        s.push(c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn group_puts_commas_every_three_digits() {
        assert_eq!(group(0), "0");
        assert_eq!(group(288), "288");
        assert_eq!(group(1_146), "1,146");
        assert_eq!(group(18_507_778), "18,507,778");
    }
}

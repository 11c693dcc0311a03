//! `cmc-bench`: measures cmc against stateright on the same model, side by
//! side in one run (`cargo run --release -p cmc-bench`).
//!
//! The model is Lamport's `TwoPhase` (two-phase commit): cmc checks its
//! direct-actions core `two-phase-tla` from `cmc-examples`, stateright checks
//! the same specification written for its `Model` trait
//! ([`two_phase_stateright`]). Both search breadth-first on one thread with
//! the same two invariants. Every search runs in a fresh child process (this
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

/// Bound on `--runs`.
const RUNS_MAX: usize = 100;

/// The aims the table is read against (`docs/PERFORMANCE.md`).
const SPEEDUP_AIM: f64 = 3.0;
const BYTES_PER_STATE_AIM: f64 = 64.0;

#[derive(Parser)]
#[command(
    name = "cmc-bench",
    about = "Benchmarks cmc against stateright on TwoPhase (single-threaded BFS), or on the example C programs (`programs`)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Numbers of resource managers (N) to check, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "7,8")]
    rms: Vec<usize>,
    /// Runs per tool and N, each in a fresh process; the table shows the run
    /// with the median time, and every run's time is listed below it.
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Runs one search and prints its measurement as JSON (used by the
    /// parent process).
    #[command(hide = true)]
    Child {
        #[arg(long)]
        tool: Tool,
        #[arg(long)]
        rms: usize,
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
    Stateright,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Cmc => "cmc",
            Tool::Stateright => "stateright",
        }
    }
}

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
        Some(Command::Child { tool, rms }) => {
            let m = match tool {
                Tool::Cmc => run_cmc(rms)?,
                Tool::Stateright => run_stateright(rms)?,
            };
            println!("{}", serde_json::to_string(&m)?);
            Ok(())
        }
        Some(Command::Idle) => {
            println!("{}", peak_rss_kib()?);
            Ok(())
        }
        Some(Command::Programs(args)) => programs::run(&args),
        None => compare(&cli.rms, cli.runs),
    }
}

/// Checks `two-phase-tla` with cmc's default options (BFS).
fn run_cmc(rms: usize) -> anyhow::Result<Measurement> {
    use cmc::Settings as _;
    let mut settings = cmc_examples::two_phase_tla::TwoPhaseTlaSettings::default();
    settings.set("rms", rms as u64)?;
    let model = cmc_examples::two_phase_tla::model(settings);
    let (start, cpu_start) = (Instant::now(), cpu_seconds()?);
    let report = cmc::check(&model, &cmc::Options::default())?;
    let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds()? - cpu_start);
    ensure!(report.verdict == cmc::Verdict::Pass, "cmc, N={rms}: expected pass, got {}", report.summary());
    Ok(Measurement {
        distinct: report.distinct_states,
        generated: report.generated_states,
        depth: report.depth.into(),
        seconds,
        cpu_seconds: cpu,
        peak_rss_kib: peak_rss_kib()?,
    })
}

/// Checks the stateright port with one thread, breadth-first.
fn run_stateright(rms: usize) -> anyhow::Result<Measurement> {
    use stateright::{Checker as _, Model as _};
    ensure!((1..=two_phase_stateright::RMS_MAX).contains(&rms), "N={rms} is out of range");
    let model = two_phase_stateright::TwoPhase { rms };
    let (start, cpu_start) = (Instant::now(), cpu_seconds()?);
    let checker = model.checker().threads(1).spawn_bfs().join();
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

fn measure(tool: Tool, rms: usize) -> anyhow::Result<Measurement> {
    let args = ["child", "--tool", tool.name(), "--rms", &rms.to_string()].map(String::from);
    let out = run_child(&args)?;
    serde_json::from_str(&out).with_context(|| format!("child output `{out}`"))
}

/// One row of the table: a tool's measurement (the median-time run) for one N.
struct Row {
    rms: usize,
    tool: Tool,
    m: Measurement,
    /// Every run's search time, in the order run.
    seconds_all: Vec<f64>,
}

fn compare(sizes: &[usize], runs: usize) -> anyhow::Result<()> {
    ensure!((1..=RUNS_MAX).contains(&runs), "--runs = {runs} (1 to {RUNS_MAX})");
    let baseline_kib: u64 = run_child(&["idle".to_string()])?.parse().context("idle child output")?;
    let mut rows = Vec::new();
    for &rms in sizes {
        for tool in [Tool::Cmc, Tool::Stateright] {
            let mut all = Vec::with_capacity(runs);
            for run in 1..=runs {
                eprintln!("cmc-bench: {} N={rms}, run {run} of {runs}", tool.name());
                all.push(measure(tool, rms)?);
            }
            // A search is deterministic: every run must count the same.
            let counts = |m: &Measurement| (m.distinct, m.generated, m.depth);
            if let Some(m) = all.iter().find(|m| counts(m) != counts(&all[0])) {
                bail!("{} N={rms}: runs disagree: {:?} and {:?}", tool.name(), all[0], m);
            }
            let seconds_all = all.iter().map(|m| m.seconds).collect();
            all.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
            rows.push(Row { rms, tool, m: all.swap_remove(runs / 2), seconds_all });
        }
        check_counts(rms, &rows[rows.len() - 2..])?;
    }
    print!("{}", render(&rows, baseline_kib)?);
    Ok(())
}

/// Fails unless both tools found the same distinct states, and TLC's
/// figures where they are known.
fn check_counts(rms: usize, pair: &[Row]) -> anyhow::Result<()> {
    let (cmc, sr) = (&pair[0].m, &pair[1].m);
    if cmc.distinct != sr.distinct {
        bail!("N={rms}: cmc found {} distinct states, stateright {}: the models differ", cmc.distinct, sr.distinct);
    }
    if let Some(&(_, distinct, generated, depth)) = TLC_FIGURES.iter().find(|f| f.0 == rms) {
        for row in pair {
            let m = &row.m;
            let tool = row.tool.name();
            ensure!(m.distinct == distinct, "N={rms}: {tool} found {} distinct states, TLC {distinct}", m.distinct);
            ensure!(m.generated == generated, "N={rms}: {tool} generated {} states, TLC {generated}", m.generated);
            ensure!(m.depth == depth, "N={rms}: {tool} reached depth {}, TLC {depth}", m.depth);
        }
    }
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
        "| model | N | tool | distinct | generated | depth | seconds | CPU s | distinct/s | generated/s | peak RSS MiB | bytes/distinct | cmc/stateright states/s |"
    )?;
    writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    let mut verdicts = Vec::new();
    for pair in rows.chunks(2) {
        let speedup = pair[1].m.seconds / pair[0].m.seconds;
        for row in pair {
            let m = &row.m;
            let bytes = (m.peak_rss_kib.saturating_sub(baseline_kib) * 1024) as f64 / m.distinct as f64;
            let ratio = if row.tool == Tool::Cmc { format!("{speedup:.2}x") } else { String::new() };
            writeln!(
                s,
                "| TwoPhase | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {:.1} | {:.1} | {} |",
                row.rms,
                row.tool.name(),
                group(m.distinct),
                group(m.generated),
                m.depth,
                m.seconds,
                m.cpu_seconds,
                group((m.distinct as f64 / m.seconds) as u64),
                group((m.generated as f64 / m.seconds) as u64),
                mib(m.peak_rss_kib),
                bytes,
                ratio,
            )?;
            if row.tool == Tool::Cmc {
                verdicts.push((row.rms, speedup, bytes));
            }
        }
    }
    writeln!(s)?;
    writeln!(s, "Search time of every run, in seconds (the table shows the median):")?;
    for row in rows {
        let times: Vec<String> = row.seconds_all.iter().map(|t| format!("{t:.2}")).collect();
        writeln!(s, "- {} N={}: {}", row.tool.name(), row.rms, times.join(", "))?;
    }
    writeln!(s)?;
    for (rms, speedup, bytes) in verdicts {
        let met = |ok: bool| if ok { "met" } else { "NOT met" };
        writeln!(
            s,
            "N={rms}: speed aim (cmc >= {SPEEDUP_AIM}x stateright) {}: {speedup:.2}x; memory aim (< {BYTES_PER_STATE_AIM} bytes per distinct state) {}: {bytes:.1}",
            met(speedup >= SPEEDUP_AIM),
            met(bytes < BYTES_PER_STATE_AIM),
        )?;
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

//! `cmc calibrate --config FILE.cfg MODULE`: the engine against TLC. It reads
//! the TLC configuration file TLC read (`examples`' `disk_paxos::cfg`),
//! checks the Disk Paxos core with TLC's semantics for `tlc -workers 1
//! -deadlock` (breadth-first, one worker, no deadlock check) and prints what
//! TLC prints: the verdict, the violated invariant with the trace state by
//! state in TLA+ form, the counts and the depth; or the JSON report with
//! `--json`. Exit codes are `cmc check`'s.
//!
//! The trace's states are printed by re-running its actions through the
//! core's own `HInit`/`HNext` code, with the configuration's names for model
//! values; each state is checked against the fingerprint the search
//! recorded for it.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use clap::Args;
use cmc::zerocopy::{FromZeros, IntoBytes};
use cmc::{Action, Context, Control, Options, Report, Search, Verdict};
use cmc_examples::disk_paxos::cfg::{self, Calibration, Module};
use cmc_examples::disk_paxos::{DiskPaxosState, actions, model_with, tla};

use crate::cli::exit_code;
use cmc_runner::control::{RunControl, catch_interrupt};

/// The arguments of `cmc calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The TLC configuration file, as `tlc -config FILE.cfg`.
    #[arg(long, value_name = "FILE.cfg")]
    pub config: PathBuf,
    /// The module TLC runs: MCDiskPaxos, MutOwnValue, MutNoAbort or MutSkipRead (a `.tla` suffix and a path are accepted; the file is not read).
    #[arg(value_name = "MODULE")]
    pub module: String,
    /// Print the JSON report on stdout instead of TLC's lines.
    #[arg(long)]
    pub json: bool,
    /// Stop (incomplete) after this many seconds.
    #[arg(long)]
    pub time_max: Option<f64>,
    /// Stop (incomplete) once this process holds this much memory (as
    /// `cmc check --memory-max`).
    #[arg(long, value_parser = crate::cli::memory_max)]
    pub memory_max: Option<crate::cli::MemoryMax>,
    /// Threads for the search; 0 (the default) for one per core. Every
    /// count and trace is TLC's one-worker figure whatever the number.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Distributed search (`--distributed` and its options).
    #[command(flatten)]
    pub distributed: crate::distributed::DistributedArgs,
}

/// Runs the subcommand; returns the exit code. Unreadable or rejected input
/// is an `Err` (exit code 2).
pub fn run(args: &CalibrateArgs) -> Result<u8> {
    let path = args.config.display().to_string();
    let text = std::fs::read_to_string(&args.config).with_context(|| format!("reading {path}"))?;
    let module = Module::from_arg(&args.module).map_err(|e| anyhow!(e))?;
    let cal = cfg::read(&path, &text, module)?;
    let time_max = crate::cli::time_max(args.time_max)?;
    catch_interrupt();
    let memory_max = crate::cli::memory_max_bytes(args.memory_max);
    let mut control = RunControl::new(time_max).with_memory_max(memory_max);
    let mut report = if args.distributed.distributed {
        let model = Box::new(model(&cal)?);
        crate::distributed::check(model, &options(args.threads), &args.distributed, time_max, memory_max)?
    } else {
        check(&cal, args.threads, &mut control)?
    };
    control.finish();
    report.elapsed_s = control.elapsed_s();
    if !args.distributed.reports() {
        eprintln!("process {}: {}; process 0 prints the report", args.distributed.process, report.summary());
        return Ok(exit_code(report.verdict));
    }
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", tlc_text(&cal, &path, &report)?);
    }
    if report.verdict != Verdict::Pass {
        eprintln!("reproduce: cmc calibrate --config {path} {}", args.module);
    }
    Ok(exit_code(report.verdict))
}

/// TLC's semantics for `tlc -workers 1 -deadlock`, on `threads` threads
/// (which changes no figure).
pub fn options(threads: usize) -> Options {
    Options { search: Search::Bfs { depth_max: None }, threads, ..Options::default() }
}

/// Checks a configuration: the core with its settings and the configuration's
/// invariants in their order.
pub fn check(cal: &Calibration, threads: usize, control: &mut dyn Control) -> Result<Report> {
    Ok(cmc::check_with(&model(cal)?, &options(threads), control)?)
}

/// The core with the configuration's settings and its invariants in their
/// order.
pub fn model(cal: &Calibration) -> Result<cmc::Model<cmc_examples::disk_paxos::DiskPaxos>> {
    let names: Vec<&str> = cal.invariants.iter().map(String::as_str).collect();
    model_with(cal.settings, &names).map_err(|n| anyhow!("unknown invariant `{n}`"))
}

/// The trace's states, re-run through the core, with a description of the
/// disjunct each step took.
pub fn trace_states(cal: &Calibration, report: &Report) -> Result<Vec<(String, DiskPaxosState)>> {
    let ctx = Context { node: 0, nodes: 1, settings: &cal.settings };
    let mut state = DiskPaxosState::new_zeroed();
    let mut out = Vec::with_capacity(report.trace.len());
    for (i, step) in report.trace.iter().enumerate() {
        let action: Action = step.action.parse()?;
        let what = match action {
            Action::Init { variant } => {
                ensure!(
                    actions::initial(&ctx, &mut state, variant),
                    "internal: initial state {variant} does not exist"
                );
                "Initial predicate".to_string()
            }
            Action::Direct { index } => {
                let act = actions::decode(&cal.settings, index)
                    .ok_or_else(|| anyhow!("internal: action index {index} does not exist"))?;
                let what = tla::step_text(&act, &cal.settings, &cal.names, &state);
                ensure!(actions::next(&ctx, &mut state, index), "internal: step {} ({what}) is not enabled", i + 1);
                what
            }
            other => bail!("internal: a calibration trace holds the action {other}"),
        };
        let fingerprint = format!("{:032x}", cmc::world::fingerprint(state.as_bytes()));
        ensure!(
            fingerprint == step.fingerprint,
            "internal: step {} ({what}) replays to fingerprint {fingerprint}, the search recorded {}",
            i + 1,
            step.fingerprint
        );
        out.push((what, state));
    }
    Ok(out)
}

/// The report as TLC prints it.
pub fn tlc_text(cal: &Calibration, config: &str, report: &Report) -> Result<String> {
    let mut s = String::new();
    let file = config.rsplit(['/', '\\']).next().unwrap_or(config);
    let _ = writeln!(s, "cmc calibrate: Disk Paxos, module {}, configuration {config}", cal.module.name());
    let _ = writeln!(s, "(as tlc -workers 1 -deadlock -config {file} {}.tla)", cal.module.name());
    let _ = writeln!(s, "Computing initial states...");
    let initial = cal.settings.initial_states();
    let plural = if initial == 1 { "" } else { "s" };
    let _ = writeln!(s, "Finished computing initial states: {initial} distinct state{plural} generated.");
    match report.verdict {
        Verdict::Pass => {
            let _ = writeln!(s, "Model checking completed. No error has been found.");
        }
        Verdict::Violation => {
            let property = report.property.as_deref().unwrap_or("?");
            let _ = writeln!(s, "Error: Invariant {property} is violated.");
            let _ = writeln!(s, "Error: The behavior up to this point is:");
            for (i, (what, state)) in trace_states(cal, report)?.iter().enumerate() {
                let _ = writeln!(s, "State {}: <{what}>", i + 1);
                s.push_str(&tla::state_text(&cal.settings, &cal.names, state));
                s.push('\n');
            }
        }
        Verdict::Incomplete => {
            let _ = writeln!(s, "Model checking stopped early: {}.", report.reason.as_deref().unwrap_or("?"));
        }
        Verdict::Error => {
            let _ = writeln!(s, "Error: {}", report.reason.as_deref().unwrap_or("?"));
        }
    }
    let queue = if report.verdict == Verdict::Pass { ", 0 states left on queue" } else { "" };
    let _ = writeln!(
        s,
        "{} states generated, {} distinct states found{queue}.",
        report.generated_states, report.distinct_states
    );
    let _ = writeln!(s, "The depth of the complete state graph search is {}.", report.depth);
    let _ = writeln!(s, "Finished in {:.2} s.", report.elapsed_s);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(id: &str, module: Module) -> (Calibration, String) {
        let path = format!("{}/../calibration/configs/{id}.cfg", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("the calibration configurations are in the repository");
        (cfg::read(&path, &text, module).expect("a configuration cmc reads"), path)
    }

    #[test]
    fn a_violation_prints_tlc_lines_and_the_trace_in_tla_form() {
        let (cal, path) = calibration("c14", Module::McDiskPaxos);
        let report = check(&cal, 0, &mut cmc::NoControl).expect("checks");
        assert_eq!(report.verdict, Verdict::Violation);
        let text = tlc_text(&cal, &path, &report).expect("the trace replays");
        assert!(text.contains("Finished computing initial states: 4 distinct states generated.\n"), "{text}");
        assert!(text.contains("Error: Invariant NoDecision is violated.\n"), "{text}");
        assert!(text.contains("State 1: <Initial predicate>\n/\\ phase = <<0, 0>>\n"), "{text}");
        assert!(
            text.contains("State 9: <EndPhase1or2(1)>\n/\\ phase = <<3, 0>>\n/\\ output = <<in1, NotAnInput>>\n"),
            "{text}"
        );
        assert!(text.contains("/\\ chosen = in1\n"), "{text}");
        assert!(text.contains("The depth of the complete state graph search is 9.\n"), "{text}");
        assert_eq!(exit_code(report.verdict), 1);
    }

    #[test]
    fn a_pass_prints_tlc_counts() {
        let (cal, path) = calibration("c01", Module::McDiskPaxos);
        let report = check(&cal, 0, &mut cmc::NoControl).expect("checks");
        let text = tlc_text(&cal, &path, &report).expect("no trace");
        assert!(text.contains("Model checking completed. No error has been found.\n"), "{text}");
        assert!(text.contains("1133 states generated, 237 distinct states found, 0 states left on queue.\n"), "{text}");
        assert!(text.contains("The depth of the complete state graph search is 19.\n"), "{text}");
        assert_eq!(exit_code(report.verdict), 0);
    }

    #[test]
    fn records_print_in_the_field_order_of_the_module_tlc_parsed() {
        // MutOwnValue mentions `bal` before `mbal`; TLC prints its records so.
        let (cal, path) = calibration("c19", Module::MutOwnValue);
        let report = check(&cal, 0, &mut cmc::NoControl).expect("checks");
        let text = tlc_text(&cal, &path, &report).expect("the trace replays");
        assert!(text.contains("[bal |-> 0, mbal |-> 0, inp |-> NotAnInput]"), "{text}");
        assert!(!text.contains("[mbal |->"), "{text}");
    }
}

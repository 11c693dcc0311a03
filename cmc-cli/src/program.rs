//! `cmc --model-file FILE`: checks what a model file declares, a program
//! (the process front end) or a C core (a file with a `core` key), and
//! `cmc replay` of their counterexamples.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use cmc::ccore::model_file as core_file;
use cmc::process::{ProcessExplorer, model_file};
use cmc::{CounterexampleFile, Report, Verdict, explore, replay_with};

use crate::cli::{default_save_path, exit_code, print_report, save};
use crate::distributed::DistributedArgs;
use cmc_runner::control::{RunControl, catch_interrupt};

/// Whether the model file at `path` declares a C core.
fn is_core_file(path: &Path) -> Result<bool> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(core_file::names_core(&text))
}

/// How `cmc --model-file` runs: its other options.
pub struct Run<'a> {
    /// `--json`: the JSON report on stdout.
    pub json: bool,
    /// `--det`: every step twice, compared.
    pub det: bool,
    /// `--time-max`, in seconds.
    pub time_max: Option<f64>,
    /// `--memory-max`, in bytes.
    pub memory_max: Option<u64>,
    /// `--save`: where the counterexample goes.
    pub save_to: Option<&'a Path>,
    /// `--distributed` and its options (C cores only).
    pub distributed: &'a DistributedArgs,
}

/// Runs the model file at `path`; returns the exit code.
pub fn run(path: &Path, run: &Run) -> Result<u8> {
    let Run { json, det, time_max, memory_max, save_to, distributed } = *run;
    let time_max = crate::cli::time_max(time_max)?;
    if is_core_file(path)? {
        let mut m = core_file::read(path)?;
        m.options.det |= det;
        catch_interrupt();
        let mut control = RunControl::new(time_max).with_memory_max(memory_max);
        let mut report = if distributed.distributed {
            crate::distributed::check(m.model, &m.options, distributed, time_max, memory_max)?
        } else {
            m.model.check(&m.options, &mut control)?
        };
        control.finish();
        report.elapsed_s = control.elapsed_s();
        if !distributed.reports() {
            eprintln!("process {}: {}; process 0 prints the report", distributed.process, report.summary());
            return Ok(exit_code(report.verdict));
        }
        return finish(report, path, &m.name, m.options.det, json, save_to);
    }
    if distributed.distributed {
        bail!(
            "{}: --distributed searches cores only: a program's worlds are processes on this machine \
             (docs/DISTRIBUTED.md, \"What it does not do\")",
            path.display()
        );
    }
    let mut m = model_file::read(path)?;
    m.options.det |= det;
    let explorer =
        ProcessExplorer::new(&m.model).with_context(|| format!("{}", path.display()))?.with_det(m.options.det);
    catch_interrupt();
    let mut control = RunControl::new(time_max).with_memory_max(memory_max);
    let mut report = explore(explorer, &m.options, &mut control);
    control.finish();
    report.elapsed_s = control.elapsed_s();
    finish(report, path, &m.model.name, m.options.det, json, save_to)
}

/// Saves the counterexample, prints the report and the commands that run
/// it again; returns the exit code.
fn finish(mut report: Report, path: &Path, name: &str, det: bool, json: bool, save_to: Option<&Path>) -> Result<u8> {
    let saved = match report.counterexample() {
        Some(cex) => {
            let p = save_to.map(Path::to_path_buf).unwrap_or_else(|| default_save_path(name));
            save(&p, &cex, &mut report, name)?;
            Some(p)
        }
        None => None,
    };
    print_report(&report, json);
    if report.verdict != Verdict::Pass {
        let det = if det { " --det" } else { "" };
        eprintln!("reproduce: cmc --model-file {}{det}", path.display());
        if let Some(p) = saved {
            eprintln!("replay:    cmc replay {}", p.display());
        }
        if let Some(chart) = &report.chart {
            eprintln!("chart:     {chart}");
        }
    }
    Ok(exit_code(report.verdict))
}

/// Replays a counterexample of a model file's model, rebuilding the model
/// from the model file the counterexample names.
pub fn replay(file_path: &Path, file: &CounterexampleFile, det: bool, json: bool) -> Result<u8> {
    let Some(model_path) = &file.model.model_file else { bail!("{}: names no model file", file_path.display()) };
    let model_path = Path::new(model_path);
    let control = RunControl::new(None);
    let mut report = if is_core_file(model_path).with_context(|| format!("{}", file_path.display()))? {
        let m = core_file::read(model_path).with_context(|| format!("{}", file_path.display()))?;
        m.model.replay(file, det).with_context(|| format!("{}", file_path.display()))?
    } else {
        let m = model_file::read(model_path).with_context(|| format!("{}", file_path.display()))?;
        let explorer = ProcessExplorer::new(&m.model).with_context(|| model_path.display().to_string())?.with_det(det);
        replay_with(explorer, file, det).with_context(|| format!("{}", file_path.display()))?
    };
    report.elapsed_s = control.elapsed_s();
    print_report(&report, json);
    if !file.reproduced_by(&report) {
        eprintln!("reproduce: cmc replay {}", file_path.display());
    }
    Ok(exit_code(report.verdict))
}

//! `cmc --model-file FILE`: checks a program (the process front end) as a
//! model file declares it, and `cmc replay` of its counterexamples.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use cmc::process::{ProcessExplorer, model_file};
use cmc::{CounterexampleFile, Verdict, explore, replay_with};

use crate::cli::{default_save_path, exit_code, print_report, save};
use cmc_runner::control::{RunControl, catch_interrupt};

/// Runs the model file at `path`; returns the exit code.
pub fn run(
    path: &Path,
    json: bool,
    det: bool,
    time_max: Option<f64>,
    memory_max: Option<u64>,
    save_to: Option<&Path>,
) -> Result<u8> {
    let mut m = model_file::read(path)?;
    m.options.det |= det;
    let time_max = crate::cli::time_max(time_max)?;
    let explorer =
        ProcessExplorer::new(&m.model).with_context(|| format!("{}", path.display()))?.with_det(m.options.det);
    catch_interrupt();
    let mut control = RunControl::new(time_max).with_memory_max(memory_max);
    let mut report = explore(explorer, &m.options, &mut control);
    control.finish();
    report.elapsed_s = control.elapsed_s();
    let saved = match report.counterexample() {
        Some(cex) => {
            let p = save_to.map(Path::to_path_buf).unwrap_or_else(|| default_save_path(&m.model.name));
            save(&p, &cex, &mut report, &m.model.name)?;
            Some(p)
        }
        None => None,
    };
    print_report(&report, json);
    if report.verdict != Verdict::Pass {
        let det = if m.options.det { " --det" } else { "" };
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

/// Replays a counterexample of a program model, rebuilding the model from
/// the model file the counterexample names.
pub fn replay(file_path: &Path, file: &CounterexampleFile, det: bool, json: bool) -> Result<u8> {
    let Some(model_path) = &file.model.model_file else { bail!("{}: names no model file", file_path.display()) };
    let m = model_file::read(Path::new(model_path)).with_context(|| format!("{}", file_path.display()))?;
    let explorer = ProcessExplorer::new(&m.model).with_context(|| model_path.clone())?.with_det(det);
    let control = RunControl::new(None);
    let mut report = replay_with(explorer, file, det).with_context(|| format!("{}", file_path.display()))?;
    report.elapsed_s = control.elapsed_s();
    print_report(&report, json);
    if !file.reproduced_by(&report) {
        eprintln!("reproduce: cmc replay {}", file_path.display());
    }
    Ok(exit_code(report.verdict))
}

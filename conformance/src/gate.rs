//! One schedule through the gate: followed on the checker's engine,
//! driven natively segment by segment, compared after each; and where the
//! schedules come from (a planted bug's counterexample, a seeded walk).

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cmc::process::{Config, ProcessAction, ProcessEngine, ProcessError, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Verdict};

use crate::compare::{self, Divergence};
use crate::follow::{self, Followed};
use crate::native::{Native, NativeError, Observed};

/// What keeps the gate from giving an answer: the checker's error, or
/// the native run's.
#[derive(Debug)]
pub enum GateError {
    /// The checker failed on a schedule (a limit, a program it refuses).
    Model(ProcessError),
    /// The gate could not run the program natively as it must.
    Native(NativeError),
    /// No schedule to follow: the search found no counterexample.
    NoCounterexample(String),
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Model(e) => write!(f, "the checker: {e}"),
            GateError::Native(e) => write!(f, "natively: {e}"),
            GateError::NoCounterexample(why) => write!(f, "no counterexample: {why}"),
        }
    }
}

impl std::error::Error for GateError {}

impl From<ProcessError> for GateError {
    fn from(e: ProcessError) -> GateError {
        GateError::Model(e)
    }
}

impl From<NativeError> for GateError {
    fn from(e: NativeError) -> GateError {
        GateError::Native(e)
    }
}

/// One schedule's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Which schedule: `walk 3`, `counterexample of FILE`.
    pub label: String,
    /// The schedule's own length in actions (a walk's: what it followed).
    pub schedule: usize,
    /// The schedule as followed.
    pub followed: Followed,
    /// The segments compared with Linux (all, unless one diverged).
    pub compared: usize,
    /// The steps in them, START included.
    pub steps_compared: usize,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
    /// For a given schedule: whether the followed schedule passes through
    /// the schedule's last world (a counterexample's violation).
    pub reaches_end: Option<bool>,
    /// What Linux did in each segment compared.
    pub observed: Vec<Observed>,
    /// Each node's stdout and stderr, when it diverged.
    pub logs: Vec<String>,
}

impl Outcome {
    /// One line for a table.
    pub fn line(&self) -> String {
        let f = &self.followed;
        let mut s = format!(
            "{}: {} actions; followed {} steps in {} segments ({} added, {} reordered), {} compared",
            self.label,
            self.schedule,
            f.steps(),
            f.segments.len(),
            f.added,
            f.reordered,
            self.steps_compared
        );
        let externals: Vec<String> = f.segments.iter().skip(1).map(|seg| f.token(seg.first)).collect();
        if !externals.is_empty() {
            s.push_str(&format!(" [{}]", externals.join(" ")));
        }
        if let Some(r) = self.reaches_end {
            s.push_str(if r { "; its last world reached" } else { "; its last world not reached" });
        }
        if !f.left_out.is_empty() {
            let kinds: Vec<String> = f.left_out.iter().map(|(k, n)| format!("{k} x{n}")).collect();
            s.push_str(&format!("; left out as Linux cannot follow them: {}", kinds.join(", ")));
        }
        if let Some(stop) = &f.stopped {
            s.push_str(&format!("; stopped at {stop} ({} actions left)", f.left));
        }
        match &self.divergence {
            Some(d) => s.push_str(&format!("; DIVERGES at {d}")),
            None => s.push_str("; agrees"),
        }
        s
    }
}

/// Drives `followed` natively (in a fresh network namespace of the
/// calling thread) and compares each segment: the number of segments
/// compared and the first divergence.
pub fn run(config: &Config, label: &str, followed: Followed, schedule: usize) -> Result<Outcome, GateError> {
    let scratch = scratch();
    let result = drive(config, &followed, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let (observed, divergence, logs) = result?;
    let compared = observed.len();
    let steps_compared = followed.segments.get(..compared).and_then(|s| s.last()).map_or(0, |s| s.last + 1);
    Ok(Outcome {
        label: label.to_string(),
        schedule,
        followed,
        compared,
        steps_compared,
        divergence,
        reaches_end: None,
        observed,
        logs,
    })
}

type Driven = (Vec<Observed>, Option<Divergence>, Vec<String>);

fn drive(config: &Config, followed: &Followed, scratch: &Path) -> Result<Driven, GateError> {
    if followed.segments.is_empty() {
        return Ok((Vec::new(), None, Vec::new()));
    }
    let mut native = Native::new(config, scratch)?;
    let mut observed = Vec::new();
    for (k, seg) in followed.segments.iter().enumerate() {
        observed.push(native.drive(&seg.drive)?);
        let d = compare::segment(followed, k, &observed[k]).or_else(|| compare::replies(followed, k, &observed));
        if d.is_some() {
            let logs = (0..config.nodes).map(|n| native.log(n)).collect();
            return Ok((observed, d, logs));
        }
    }
    Ok((observed, None, Vec::new()))
}

fn scratch() -> PathBuf {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("cmc-conformance-{}-{run}", std::process::id()))
}

/// The counterexample `model`'s search finds, as the actions after START.
pub fn counterexample(model: &ProgramModel, options: &Options) -> Result<Vec<ProcessAction>, GateError> {
    let explorer = ProcessExplorer::new(model)?;
    let report = cmc::explore(explorer, options, &mut NoControl);
    if report.verdict != Verdict::Violation {
        return Err(GateError::NoCounterexample(format!("{}: {}", model.name, report.summary())));
    }
    let tokens = report.trace.iter().skip(1).map(|s| s.action.as_str());
    tokens.map(|t| t.parse().map_err(|e| GateError::NoCounterexample(format!("{}: {e}", model.name)))).collect()
}

/// Follows `schedule` and drives it natively; notes whether the followed
/// schedule passes through the schedule's own last world.
pub fn schedule(engine: &mut ProcessEngine, label: &str, schedule: &[ProcessAction]) -> Result<Outcome, GateError> {
    let followed = follow::follow(engine, schedule)?;
    let end = engine.replay(schedule)?;
    let mut buf = Vec::new();
    let end = ProcessEngine::fingerprint(&end, &mut buf);
    let on_path: HashSet<_> = followed.worlds.iter().map(|w| ProcessEngine::fingerprint(w, &mut buf)).collect();
    let config = engine.config().clone();
    let mut outcome = run(&config, label, followed, schedule.len())?;
    outcome.reaches_end = Some(on_path.contains(&end));
    Ok(outcome)
}

/// A seeded walk of at most `externals_max` external actions, driven
/// natively.
pub fn walk(engine: &mut ProcessEngine, seed: u64, externals_max: usize) -> Result<Outcome, GateError> {
    let followed = follow::walk(engine, seed, externals_max)?;
    let config = engine.config().clone();
    let actions = followed.actions.len();
    run(&config, &format!("walk {seed}"), followed, actions)
}

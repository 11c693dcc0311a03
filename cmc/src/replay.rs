//! Replay: runs a saved counterexample through the real core, checking the
//! fingerprint after every action and that the same property fails at the
//! end (for a deadlock, that the last world has no enabled action; for an
//! error, that the same error happens again). A file that does not fit the
//! model (an action not enabled, a fingerprint not the recorded one, an end
//! that does not fail) is a [`ReplayError::Diverged`] naming the step; a
//! step that fails on the way is the verdict `error`.

use std::str::FromStr;

use crate::core::Core;
use crate::engine::Engine;
use crate::model::{Model, ModelError};
use crate::property::Kind;
use crate::report::{CounterexampleFile, Report, Verdict};
use crate::search::{Checker, CoreExplorer, DEADLOCK, Explore, Options, Search};

/// Why a counterexample file cannot be replayed against a model.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The model rebuilt from the file cannot be checked.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The file is for another core.
    #[error("the file is for core `{file}`, not `{model}`")]
    WrongCore {
        /// The core the file names.
        file: String,
        /// The model's [`Core::NAME`].
        model: String,
    },
    /// The file's property is not one of the model's (nor a deadlock).
    #[error("the file names property `{0}`, which the model does not have")]
    UnknownProperty(String),
    /// An action token does not parse.
    #[error("step {step}: {message}")]
    BadAction {
        /// The step, from 1.
        step: usize,
        /// What the parser said.
        message: String,
    },
    /// The file has no steps, not even the initial world.
    #[error("the file has no steps")]
    Empty,
    /// The file does not fit the model: the model, its settings or the
    /// code changed since it was saved, or the file was edited or cut.
    #[error("step {step}: {message}")]
    Diverged {
        /// The step, from 1.
        step: usize,
        /// What differs.
        message: String,
    },
}

/// Replays `file` against `model` (which the caller rebuilt from the file's
/// identity). The report's verdict is `violation` when the property fails
/// again at the end, and `error` (naming the step) when anything differs.
pub fn replay<C: Core>(model: &Model<C>, file: &CounterexampleFile, det: bool) -> Result<Report, ReplayError> {
    let name = C::layout(&model.settings).name;
    if file.model.core != name {
        return Err(ReplayError::WrongCore { file: file.model.core.clone(), model: name.to_string() });
    }
    let engine = Engine::new(model, det)?;
    replay_with(CoreExplorer::new(engine), file, det)
}

/// What the end of a replayed trace must violate.
#[derive(Clone, Copy)]
enum Check<A> {
    /// `--deadlock`: the last world has no enabled action.
    Deadlock,
    /// The model's property of this index and kind.
    Property(usize, Kind),
    /// An error: this action's step fails in the last world, or (`None`)
    /// a property's code does.
    Error(Option<A>),
}

/// Replays `file` through any front end.
pub fn replay_with<E: Explore>(explorer: E, file: &CounterexampleFile, det: bool) -> Result<Report, ReplayError>
where
    E::Action: FromStr,
    <E::Action as FromStr>::Err: std::fmt::Display,
{
    let named = explorer.properties().iter().position(|(name, _)| *name == file.property);
    // A deadlock: the file says so, or (a file written before it could) its
    // property is `deadlock` and the model has none of that name.
    let deadlock = file.deadlock || (file.property == DEADLOCK && file.kind == Kind::Always && named.is_none());
    let options = Options { search: Search::Bfs { depth_max: None }, det, deadlock, ..Options::default() };
    let mut checker = Checker::new(explorer, &options);
    let parse = |i: usize, token: &str| {
        token.parse::<E::Action>().map_err(|e| ReplayError::BadAction { step: i + 1, message: e.to_string() })
    };
    let check = match (&file.error, named) {
        (Some(e), _) => Check::Error(e.action.as_deref().map(|a| parse(file.steps.len(), a)).transpose()?),
        _ if deadlock && file.property == DEADLOCK => Check::Deadlock,
        (None, Some(i)) => Check::Property(i, checker.properties[i].1),
        (None, None) => return Err(ReplayError::UnknownProperty(file.property.clone())),
    };
    let mut path = Vec::with_capacity(file.steps.len());
    for (i, st) in file.steps.iter().enumerate() {
        path.push(parse(i, &st.action)?);
    }
    if path.is_empty() {
        return Err(ReplayError::Empty);
    }
    let report = checker.empty_report(format!("replay({})", file.search));
    // The trace is rendered as it is replayed: a front end may capture
    // what it shows of each step (a program's output) on the way.
    checker.explorer.tracing(true);
    let report = replay_steps(&mut checker.explorer, file, &path, check, report);
    checker.explorer.tracing(false);
    let mut report = report?;
    // What the replay cost in processes, as a search's report gives it.
    report.set_process_counts(checker.explorer.process_counts());
    Ok(report)
}

/// Runs `path` (the steps of `file`) and checks its end: `report` with the
/// verdict, or the step where the replay left the file.
fn replay_steps<E: Explore>(
    e: &mut E,
    file: &CounterexampleFile,
    path: &[E::Action],
    check: Check<E::Action>,
    mut report: Report,
) -> Result<Report, ReplayError> {
    let mut world = e.empty_world();
    let mut next = e.empty_world();
    let mut actions = Vec::new();
    let fail = |mut report: Report, reason: String| {
        report.verdict = Verdict::Error;
        report.reason = Some(reason);
        Ok(report)
    };
    let diverged = |step: usize, message: String| Err(ReplayError::Diverged { step, message });
    for (i, (action, st)) in path.iter().zip(&file.steps).enumerate() {
        let step = i + 1;
        let outcome = if i == 0 {
            match (0..e.initial_variants()).find(|&v| e.init_action(v) == *action) {
                Some(variant) => e.initial(variant, &mut next),
                None => return diverged(1, format!("{action} (a trace starts with an initial world)")),
            }
        } else {
            if let Err(err) = e.actions(&world, &mut actions) {
                return fail(report, format!("step {step}: {err}"));
            }
            if !actions.contains(action) {
                return diverged(step, format!("{action} is not enabled in the replayed world"));
            }
            e.apply(&world, action, &mut next)
        };
        match outcome {
            Ok(true) => {}
            Ok(false) => return diverged(step, format!("{action} is not enabled (the core says)")),
            Err(err) => return fail(report, format!("step {step}: {err}")),
        }
        std::mem::swap(&mut world, &mut next);
        report.generated_states += 1;
        let rendered = e.render(action, &world);
        if rendered.fingerprint != st.fingerprint {
            return diverged(
                step,
                format!(
                    "{action} reached fingerprint {} but the file recorded {}",
                    rendered.fingerprint, st.fingerprint
                ),
            );
        }
        report.trace.push(rendered);
    }
    e.tracing(false);
    report.depth = report.trace.len() as u32;
    report.distinct_states = report.trace.len() as u64;
    let last = path.len();
    if let Check::Error(failing) = check {
        let recorded = file.error.as_ref().map(|e| e.message.as_str()).unwrap_or_default();
        let error = match failing {
            // Only an enabled action's step can have failed, and the engine
            // applies no other: a file naming one does not fit.
            Some(action) => match e.actions(&world, &mut actions).map(|()| actions.contains(&action)) {
                Ok(true) => e.apply(&world, &action, &mut next).err(),
                Ok(false) => {
                    return diverged(
                        last,
                        format!(
                            "at the end, {action} is not enabled in the replayed world; the file recorded: {recorded}"
                        ),
                    );
                }
                Err(error) => Some(error),
            },
            None => (0..e.properties().len()).find_map(|i| e.holds(i, &world).err()),
        };
        let Some(error) = error else {
            let what = match failing {
                Some(action) => format!("{action} does not fail"),
                None => "no property fails to evaluate".to_string(),
            };
            return diverged(last, format!("at the end, {what}; the file recorded: {recorded}"));
        };
        report.failed_action = failing.map(|a| a.to_string());
        return fail(report, error);
    }
    let mut stuck = || {
        let mut stuck = e.actions(&world, &mut actions).is_ok();
        for a in &actions {
            if matches!(e.apply(&world, a, &mut next), Ok(true) | Err(_)) {
                stuck = false;
                break;
            }
        }
        stuck
    };
    let fails = |e: &mut E, index: usize| match e.holds(index, &world) {
        Ok(holds) => Ok(!holds),
        Err(error) => Err(error),
    };
    let (fails, kind) = match check {
        Check::Deadlock => (Ok(stuck()), Kind::Always),
        Check::Property(index, Kind::Always) => (fails(e, index), Kind::Always),
        Check::Property(index, Kind::Eventually) => {
            let stuck = stuck();
            (if stuck { fails(e, index) } else { Ok(false) }, Kind::Eventually)
        }
        Check::Property(_, Kind::Sometimes) => (Ok(false), Kind::Sometimes),
        Check::Error(_) => unreachable!("checked above"),
    };
    let fails = match fails {
        Ok(fails) => fails,
        Err(error) => return fail(report, error),
    };
    if !fails {
        let what = match check {
            Check::Deadlock => "end in a deadlock (a world with no enabled action)".to_string(),
            _ => format!("violate {kind} property `{}`", file.property),
        };
        return diverged(last, format!("the replayed trace does not {what}"));
    }
    report.verdict = Verdict::Violation;
    report.property = Some(file.property.clone());
    report.kind = Some(kind);
    Ok(report)
}

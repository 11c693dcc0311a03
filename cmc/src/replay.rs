//! Replay: runs a saved counterexample through the real core, checking the
//! fingerprint after every action and that the same property fails at the
//! end. A replay that does not reproduce is an error naming the step.

use crate::action::Action;
use crate::core::Core;
use crate::engine::Engine;
use crate::model::{Model, ModelError};
use crate::property::{Kind, View};
use crate::report::{CounterexampleFile, Report, Verdict};
use crate::search::{Checker, Options, Search};
use crate::world::World;

/// Why a counterexample file cannot be replayed against a model.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("the file is for core `{file}`, not `{model}`")]
    WrongCore { file: String, model: String },
    #[error("the file names property `{0}`, which the model does not have")]
    UnknownProperty(String),
    #[error("step {step}: {source}")]
    BadAction { step: usize, source: crate::action::BadAction },
    #[error("the file has no steps")]
    Empty,
}

/// Replays `file` against `model` (which the caller rebuilt from the file's
/// identity). The report's verdict is `violation` when the property fails
/// again at the end, and `error` (naming the step) when anything differs.
pub fn replay<C: Core>(model: &Model<C>, file: &CounterexampleFile, det: bool) -> Result<Report, ReplayError> {
    if file.model.core != C::NAME {
        return Err(ReplayError::WrongCore { file: file.model.core.clone(), model: C::NAME.to_string() });
    }
    let property = model
        .properties
        .iter()
        .find(|p| p.name == file.property)
        .ok_or_else(|| ReplayError::UnknownProperty(file.property.clone()))?;
    let mut path = Vec::with_capacity(file.steps.len());
    for (i, st) in file.steps.iter().enumerate() {
        path.push(st.action.parse::<Action>().map_err(|source| ReplayError::BadAction { step: i + 1, source })?);
    }
    if path.is_empty() {
        return Err(ReplayError::Empty);
    }
    let options = Options { search: Search::Bfs { depth_max: None }, states_max: None, det, deadlock: false };
    let engine = Engine::new(model, det)?;
    let mut checker = Checker::new(engine, &options);
    let mut report = checker.empty_report(format!("replay({})", file.search));
    let shape = *checker.engine.shape();
    let mut world = World::empty(&shape);
    let mut next = World::empty(&shape);
    let mut actions = Vec::new();
    let fail = |mut report: Report, reason: String| {
        report.verdict = Verdict::Error;
        report.reason = Some(reason);
        Ok(report)
    };
    for (i, (action, st)) in path.iter().zip(&file.steps).enumerate() {
        let step = i + 1;
        let is_init = matches!(action, Action::Init { .. });
        if is_init != (i == 0) {
            return fail(report, format!("step {step}: {action} (a trace starts with INIT and has it only there)"));
        }
        if !is_init {
            if let Err(e) = checker.engine.actions(&world, &mut actions) {
                return fail(report, format!("step {step}: {e}"));
            }
            if !actions.contains(action) {
                return fail(report, format!("step {step}: {action} is not enabled in the replayed world"));
            }
        }
        match checker.engine.apply(&world, action, &mut next) {
            Ok(true) => {}
            Ok(false) => return fail(report, format!("step {step}: {action} is not enabled (the core says)")),
            Err(e) => return fail(report, format!("step {step}: {e}")),
        }
        std::mem::swap(&mut world, &mut next);
        report.generated_states += 1;
        let rendered = checker.render_step(action, &world);
        if rendered.fingerprint != st.fingerprint {
            return fail(
                report,
                format!(
                    "step {step}: {action} reached fingerprint {} but the file recorded {}",
                    rendered.fingerprint, st.fingerprint
                ),
            );
        }
        report.trace.push(rendered);
    }
    report.depth = report.trace.len() as u32;
    report.distinct_states = report.trace.len() as u64;
    let view = View::<C>::new(&world, &model.settings);
    let fails = match property.kind {
        Kind::Always => !property.holds(&view),
        Kind::Eventually => {
            checker.engine.actions(&world, &mut actions).map_err(|_| ReplayError::Empty).ok();
            let mut stuck = true;
            for a in &actions {
                if matches!(checker.engine.apply(&world, a, &mut next), Ok(true) | Err(_)) {
                    stuck = false;
                    break;
                }
            }
            stuck && !property.holds(&view)
        }
        Kind::Sometimes => false,
    };
    if !fails {
        return fail(
            report,
            format!("the replayed trace does not violate {} property `{}`", property.kind, property.name),
        );
    }
    report.verdict = Verdict::Violation;
    report.property = Some(property.name.clone());
    report.kind = Some(property.kind);
    Ok(report)
}

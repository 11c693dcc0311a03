//! Sessions: a person walks a model's state graph one action at a time, as
//! `cmc explore` serves it. A walk is the path of action tokens taken from
//! an initial world; every request replays it from the start through the
//! real core or program (no world is kept between requests, so the walk is
//! the whole state of a session), and answers with the trace so far, the
//! actions enabled at its end and which properties hold there.
//!
//! The actions offered are the front end's own ([`Explore::actions`], from
//! the world alone), each taken once to see that it is enabled and to label
//! it, as a search would: a session can take exactly the steps a search can.

use std::str::FromStr;

use serde::Serialize;

use crate::property::Kind;
use crate::report::Step;
use crate::search::Explore;

/// An action a walk can take next: its token (what a counterexample file
/// stores, and what [`Session::walk`] takes) and its label for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The action's token.
    pub token: String,
    /// How traces show it.
    pub label: String,
}

/// A property at the end of a walk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyState {
    /// Its name.
    pub name: String,
    /// `always`, `sometimes` or `eventually`.
    pub kind: Kind,
    /// Whether it holds in the walk's last world; `None` before the walk
    /// has a world, and for an `eventually` property while an action is
    /// still enabled (it is checked only where the run has ended).
    pub holds: Option<bool>,
    /// The error its code raised there (a panic), if any.
    pub error: Option<String>,
}

/// Where a walk is: its trace, what can happen next and what holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Walk {
    /// Every step taken, with the world after it.
    pub trace: Vec<Step>,
    /// The actions enabled in the last world (the initial worlds, before
    /// the first step).
    pub enabled: Vec<Choice>,
    /// Every property, in the model's order.
    pub properties: Vec<PropertyState>,
    /// The error met taking an enabled action, if one failed (the core
    /// panicked, a limit was crossed): it is not offered.
    pub errors: Vec<String>,
}

/// A model to walk through, whatever its core or program.
pub trait Session {
    /// Replays `path` (action tokens, the first an initial world's) and
    /// returns where it leads; an error names the first step that cannot
    /// be taken.
    fn walk(&mut self, path: &[String]) -> Result<Walk, String>;
}

/// The session of any front end whose actions read back from their
/// tokens.
pub struct Walker<E: Explore> {
    explorer: E,
}

impl<E: Explore> Walker<E> {
    /// A session over `explorer`.
    pub fn new(explorer: E) -> Walker<E> {
        Walker { explorer }
    }
}

impl<E: Explore> Session for Walker<E>
where
    E::Action: FromStr,
    <E::Action as FromStr>::Err: std::fmt::Display,
{
    fn walk(&mut self, path: &[String]) -> Result<Walk, String> {
        let e = &mut self.explorer;
        e.tracing(true);
        let mut world = e.empty_world();
        let mut next = e.empty_world();
        let mut actions = Vec::new();
        let mut trace = Vec::with_capacity(path.len());
        for (i, token) in path.iter().enumerate() {
            let step = i + 1;
            let action = token.parse::<E::Action>().map_err(|err| format!("step {step}: {err}"))?;
            let taken = if i == 0 {
                match (0..e.initial_variants()).find(|&v| e.init_action(v) == action) {
                    Some(v) => e.initial(v, &mut next),
                    None => return Err(format!("step 1: {token} is not an initial world")),
                }
            } else {
                e.actions(&world, &mut actions).map_err(|err| format!("step {step}: {err}"))?;
                if !actions.contains(&action) {
                    return Err(format!("step {step}: {token} is not enabled"));
                }
                e.apply(&world, &action, &mut next)
            };
            match taken {
                Ok(true) => {}
                Ok(false) => return Err(format!("step {step}: {token} is not enabled")),
                Err(err) => return Err(format!("step {step}: {err}")),
            }
            std::mem::swap(&mut world, &mut next);
            trace.push(e.render(&action, &world));
        }
        let mut enabled = Vec::new();
        let mut errors = Vec::new();
        if path.is_empty() {
            for v in 0..e.initial_variants() {
                let action = e.init_action(v);
                match e.initial(v, &mut next) {
                    Ok(true) => {
                        enabled.push(Choice { token: action.to_string(), label: e.render(&action, &next).label })
                    }
                    Ok(false) => {}
                    Err(err) => errors.push(err),
                }
            }
        } else {
            e.actions(&world, &mut actions)?;
            for action in actions.clone() {
                match e.apply(&world, &action, &mut next) {
                    Ok(true) => {
                        enabled.push(Choice { token: action.to_string(), label: e.render(&action, &next).label })
                    }
                    Ok(false) => {}
                    Err(err) => errors.push(err),
                }
            }
        }
        let properties = e
            .properties()
            .into_iter()
            .enumerate()
            .map(|(i, (name, kind))| {
                // An `eventually` property is checked only where the run
                // has ended, as the searches check it.
                let pending = kind == Kind::Eventually && !enabled.is_empty();
                let (holds, error) = match path.is_empty() || pending {
                    true => (None, None),
                    false => match e.holds(i, &world) {
                        Ok(h) => (Some(h), None),
                        Err(err) => (None, Some(err)),
                    },
                };
                PropertyState { name, kind, holds, error }
            })
            .collect();
        e.tracing(false);
        Ok(Walk { trace, enabled, properties, errors })
    }
}

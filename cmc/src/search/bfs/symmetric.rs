//! Breadth-first search under symmetry: its parent links lead through
//! canonical worlds, each standing for its class of renamed worlds, and
//! an action's position is its position in the canonical world's list. A
//! trace must be a real trace of the model, one that replays without
//! symmetry, so it is rebuilt by walking real worlds beside the canonical
//! ones: from the real world at each depth, the first action (in the real
//! world's own order) whose successor is of the class the search reached
//! next. Such an action exists when the core is symmetric, and the real
//! world at the end is then a renaming of the canonical one, where the
//! property must fail again; either failing is an error naming the
//! symmetry, never a trace that does not show the violation.

use super::super::{Checker, DEADLOCK, End, Explore};
use super::Found;
use super::store::{Parents, chain};
use crate::property::Kind;

/// How a search under symmetry ended, its witnesses and its trace made
/// real (see the module's documentation).
pub(super) fn end<E: Explore>(
    c: &mut Checker<E>,
    parents: &Parents,
    witness_ids: &[Option<u32>],
    found: Found<E::Action>,
) -> End<E::Action> {
    for (i, id) in witness_ids.iter().enumerate() {
        let Some(id) = *id else { continue };
        match real_path_to(c, parents, id) {
            Ok((path, world)) => match c.explorer.holds(i, &world) {
                Ok(true) => c.witnesses[i] = Some(path),
                Ok(false) => {
                    let error = not_symmetric(&c.properties[i].0, "holds in a world", "fails");
                    return End::Error { error, path, failed: None };
                }
                Err(error) => return End::Error { error, path, failed: None },
            },
            Err((error, path)) => return End::Error { error, path, failed: None },
        }
    }
    match found {
        Found::End(end) => end,
        Found::Violation { property, kind, id } => match real_path_to(c, parents, id) {
            Ok((path, world)) => match fails_again(c, &property, kind, &world) {
                Ok(()) => End::Violation { property, kind, path },
                Err(error) => End::Error { error, path, failed: None },
            },
            Err((error, path)) => End::Error { error, path, failed: None },
        },
        Found::Error { error, id, failed } => match real_path_to(c, parents, id) {
            // The failed step's action was the canonical world's: the real
            // world's own failing action is the first of its list that
            // fails.
            Ok((path, world)) => {
                let failed = failed.and_then(|_| first_failing(&mut c.explorer, &world));
                End::Error { error, path, failed }
            }
            Err((error, path)) => End::Error { error, path, failed: None },
        },
    }
}

/// A real trace's actions, and the world at its end.
type Traced<E> = (Vec<<E as Explore>::Action>, <E as Explore>::World);

/// Why a real trace could not be rebuilt, with the path up to there.
type Broken<A> = (String, Vec<A>);

/// The real actions that reach a world of the class of state `id`, and
/// that world. `Err` names the step where the core turned out not to be
/// symmetric, with the path up to it.
fn real_path_to<E: Explore>(c: &mut Checker<E>, parents: &Parents, id: u32) -> Result<Traced<E>, Broken<E::Action>> {
    let chain = chain(parents, id);
    let e = &mut c.explorer;
    let mut path = vec![e.init_action(chain[0])];
    let internal = |what: String, path: &Vec<E::Action>| (format!("internal: {what}"), path.clone());
    let mut real = e.empty_world();
    let mut canonical = e.empty_world();
    let mut next = e.empty_world();
    let (mut actions, mut bytes) = (Vec::new(), Vec::new());
    match e.initial(chain[0], &mut real) {
        Ok(true) => {}
        Ok(false) => return Err(internal(format!("initial world {} is gone", chain[0]), &path)),
        Err(error) => return Err((error, path)),
    }
    e.store(&real, &mut bytes);
    e.load(&bytes, &mut canonical).map_err(|error| internal(error, &path))?;
    for (depth, &position) in (2..).zip(&chain[1..]) {
        // The class the search reached next, through the canonical world.
        e.actions(&canonical, &mut actions).map_err(|error| (error, path.clone()))?;
        let Some(&action) = actions.get(position as usize) else {
            return Err(internal(format!("a recorded action position ({position}) at depth {depth} is gone"), &path));
        };
        if !e.apply(&canonical, &action, &mut next).map_err(|error| (error, path.clone()))? {
            return Err(internal(format!("a recorded action ({action}) at depth {depth} is not enabled"), &path));
        }
        bytes.clear();
        let class = e.store(&next, &mut bytes);
        e.load(&bytes, &mut canonical).map_err(|error| internal(error, &path))?;
        // The real world's first action into that class.
        e.actions(&real, &mut actions).map_err(|error| (error, path.clone()))?;
        let mut taken = None;
        for &a in &actions {
            if e.apply(&real, &a, &mut next).map_err(|error| (error, path.clone()))? {
                bytes.clear();
                if e.store(&next, &mut bytes) == class {
                    taken = Some(a);
                    break;
                }
            }
        }
        let Some(a) = taken else {
            let error = format!(
                "symmetry does not hold: no action of the real world at depth {} reaches a world of the class \
                 the search reached at depth {depth} (through {action} in its canonical world): renaming the \
                 interchangeable nodes does not map the core's behaviours onto each other \
                 (Core::interchangeable, Core::rename_state, Core::rename_payload)",
                depth - 1
            );
            return Err((error, path));
        };
        path.push(a);
        std::mem::swap(&mut real, &mut next);
    }
    Ok((path, real))
}

/// Checks that `property`, which failed in a canonical world, fails in
/// `world`, the real world of its class at the end of the trace.
fn fails_again<E: Explore>(c: &mut Checker<E>, property: &str, kind: Kind, world: &E::World) -> Result<(), String> {
    let terminal = !has_successor(&mut c.explorer, world)?;
    let index = c.properties.iter().position(|(name, _)| name == property);
    let again = match (index, kind) {
        (Some(i), Kind::Always) => !c.explorer.holds(i, world)?,
        (Some(i), Kind::Eventually) => terminal && !c.explorer.holds(i, world)?,
        (None, _) if property == DEADLOCK => terminal,
        _ => return Err(format!("internal: a violation of `{property}` ({kind}) under symmetry")),
    };
    if again { Ok(()) } else { Err(not_symmetric(property, "fails in a world", "holds")) }
}

fn not_symmetric(property: &str, found: &str, real: &str) -> String {
    format!(
        "symmetry does not hold: property `{property}` {found} the search reached under symmetry, and {real} in \
         the real world of its class at the end of the trace: a property must not tell worlds apart that differ \
         only by a renaming of the interchangeable nodes (Core::interchangeable)"
    )
}

/// Whether `world` has an enabled action.
fn has_successor<E: Explore>(e: &mut E, world: &E::World) -> Result<bool, String> {
    let mut actions = Vec::new();
    let mut next = e.empty_world();
    e.actions(world, &mut actions)?;
    for a in &actions {
        if e.apply(world, a, &mut next)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The first action of `world` whose step fails.
fn first_failing<E: Explore>(e: &mut E, world: &E::World) -> Option<E::Action> {
    let mut actions = Vec::new();
    let mut next = e.empty_world();
    e.actions(world, &mut actions).ok()?;
    actions.into_iter().find(|a| e.apply(world, a, &mut next).is_err())
}

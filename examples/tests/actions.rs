//! Which actions each example's default model exercises, found by walking
//! its whole state space through the engine: together the examples must
//! take every kind of action, crashes that tear a run of pending persists
//! included, in both network modes.

use std::collections::{BTreeSet, HashSet};

use cmc::world::Shape;
use cmc::{Action, Core, Engine, Model, Network, World};
use cmc_examples::{lock_service, primary_backup, two_phase};

/// A crash that loses some of the node's pending persists.
const CRASH_LOSING: &str = "CRASH losing pending persists";
/// A crash that keeps some pending persists and loses later ones.
const CRASH_TORN: &str = "CRASH keeping a torn prefix";

/// Every kind of action taken anywhere in `model`'s reachable worlds.
fn exercised<C: Core>(model: &Model<C>) -> BTreeSet<&'static str> {
    let mut engine = Engine::new(model, false).expect("model is valid");
    let shape: Shape = *engine.shape();
    let mut kinds = BTreeSet::new();
    let mut seen = HashSet::new();
    let mut buf = Vec::new();
    let mut world = World::empty(&shape);
    assert!(engine.initial(0, &mut world).expect("initial world builds"));
    seen.insert(engine.fingerprint(&world, &mut buf));
    let mut todo = vec![world];
    let mut actions = Vec::new();
    let mut next = World::empty(&shape);
    while let Some(world) = todo.pop() {
        engine.actions(&world, &mut actions).expect("within limits");
        for action in &actions {
            assert!(engine.apply(&world, action, &mut next).expect("step succeeds"));
            kinds.insert(kind(action));
            if let Action::Crash { node, keep } = *action {
                let pending = world.persists_of(node).count();
                if (keep as usize) < pending {
                    kinds.insert(CRASH_LOSING);
                    if keep > 0 {
                        kinds.insert(CRASH_TORN);
                    }
                }
            }
            if seen.insert(engine.fingerprint(&next, &mut buf)) {
                todo.push(next.clone());
            }
        }
    }
    kinds
}

fn kind(action: &Action) -> &'static str {
    match action {
        Action::Init { .. } => "INIT",
        Action::Deliver { .. } => "DELIVER",
        Action::Drop { .. } => "DROP",
        Action::Dup { .. } => "DUP",
        Action::Fire { .. } => "FIRE",
        Action::Flush { .. } => "FLUSH",
        Action::Wake { .. } => "WAKE",
        Action::Client { .. } => "CLIENT",
        Action::Crash { .. } => "CRASH",
        Action::Reset { .. } => "RESET",
        Action::Direct { .. } => "ACTION",
    }
}

fn two_phase_kinds() -> BTreeSet<&'static str> {
    let m = two_phase::model(Default::default());
    assert_eq!(m.network, Network::Fifo);
    exercised(&m)
}

fn primary_backup_kinds() -> BTreeSet<&'static str> {
    let m = primary_backup::model(Default::default());
    assert_eq!(m.network, Network::Fifo);
    exercised(&m)
}

fn lock_service_kinds() -> BTreeSet<&'static str> {
    let m = lock_service::model(Default::default());
    assert_eq!(m.network, Network::Bag);
    exercised(&m)
}

#[test]
fn two_phase_actions() {
    let want = ["CRASH", CRASH_LOSING, CRASH_TORN, "DELIVER", "FIRE", "FLUSH", "RESET"];
    assert_eq!(two_phase_kinds(), BTreeSet::from(want));
}

#[test]
fn primary_backup_actions() {
    let want = ["CLIENT", "CRASH", CRASH_LOSING, CRASH_TORN, "DELIVER", "DROP", "FLUSH", "RESET"];
    assert_eq!(primary_backup_kinds(), BTreeSet::from(want));
}

#[test]
fn lock_service_actions() {
    let want = ["CLIENT", "DELIVER", "DUP", "FIRE", "WAKE"];
    assert_eq!(lock_service_kinds(), BTreeSet::from(want));
}

/// Every action of the manual's list, from the three examples together.
#[test]
fn examples_cover_every_action() {
    let mut all = two_phase_kinds();
    all.extend(primary_backup_kinds());
    all.extend(lock_service_kinds());
    let want =
        ["CLIENT", "CRASH", CRASH_LOSING, CRASH_TORN, "DELIVER", "DROP", "DUP", "FIRE", "FLUSH", "RESET", "WAKE"];
    assert_eq!(all, BTreeSet::from(want));
}

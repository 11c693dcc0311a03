//! `two-phase`: two-phase commit over messages, coordinator timeout and
//! crash recovery.

use cmc::Model;
use cmc_examples::two_phase::{TwoPhase, TwoPhaseSettings, model};

fn with(f: impl FnOnce(&mut TwoPhaseSettings)) -> TwoPhaseSettings {
    let mut s = TwoPhaseSettings::default();
    f(&mut s);
    s
}

#[cmc::model(core = TwoPhase, nodes = 3, crashes = 1)]
fn correct() -> Model<TwoPhase> {
    model(TwoPhaseSettings::default())
}

#[cmc::model(nodes = 3, crashes = 1)]
fn correct_with_a_no_voter() -> Model<TwoPhase> {
    model(with(|s| s.no_voter = 2))
}

#[cmc::model(nodes = 3, crashes = 2)]
fn correct_with_two_crashes() -> Model<TwoPhase> {
    model(TwoPhaseSettings::default())
}

#[cmc::model(nodes = 3, crashes = 1, expect = violation("commit-needs-all-yes"))]
fn bug_commit_on_timeout() -> Model<TwoPhase> {
    model(with(|s| s.bug_commit_on_timeout = 1))
}

#[cmc::model(nodes = 3, crashes = 1, expect = violation("atomicity"))]
fn bug_no_persist_decision() -> Model<TwoPhase> {
    model(with(|s| s.bug_no_persist_decision = 1))
}

#[cmc::model(nodes = 3, crashes = 1, search = simulate, walks = 200, seed = 1, expect = violation("commit-needs-all-yes"))]
fn bug_commit_on_timeout_by_simulation() -> Model<TwoPhase> {
    model(with(|s| s.bug_commit_on_timeout = 1))
}

/// Four nodes under symmetry (`--symmetry`): one world per class of worlds
/// that differ by a renaming of the three participants, 22,391 classes of
/// the 126,887 worlds.
#[cmc::model(nodes = 4, crashes = 1, symmetry)]
fn four_nodes_by_symmetry() -> Model<TwoPhase> {
    model(TwoPhaseSettings::default())
}

/// The planted bug, found under symmetry: the trace is one of the real
/// model, and replays without it.
#[cmc::model(nodes = 4, crashes = 1, symmetry, expect = violation("atomicity"))]
fn no_persist_decision_by_symmetry() -> Model<TwoPhase> {
    model(with(|s| s.bug_no_persist_decision = 1))
}

//! `two-phase`: the correct protocol passes with pinned counts; each planted
//! bug is caught by BFS, simulation and replay.

mod common;

use cmc::Settings as _;
use cmc_examples::two_phase::{TwoPhaseSettings, model};
use common::{assert_caught, assert_pass, simulate};

fn settings(key: &str) -> TwoPhaseSettings {
    let mut s = TwoPhaseSettings::default();
    s.set(key, 1).expect("a known setting");
    s
}

#[test]
fn correct_passes() {
    assert_pass(&model(TwoPhaseSettings::default()), 3402, 11464, 15);
}

#[test]
fn correct_passes_with_a_no_voter() {
    let mut s = TwoPhaseSettings::default();
    s.set("no_voter", 2).expect("a known setting");
    assert_pass(&model(s), 1996, 6631, 14);
}

#[test]
fn correct_passes_with_two_crashes() {
    assert_pass(&model(TwoPhaseSettings::default()).crashes(2), 11447, 53025, 16);
}

#[test]
fn correct_passes_with_three_participants() {
    assert_pass(&model(TwoPhaseSettings::default()).nodes(4), 126887, 611618, 21);
}

#[test]
fn no_voter_out_of_range_is_rejected() {
    let mut s = TwoPhaseSettings::default();
    s.set("no_voter", 8).expect("fits in a u8");
    let err = cmc::check(&model(s), &cmc::Options::default()).expect_err("no node 8");
    assert!(err.to_string().contains("no_voter"), "{err}");
}

/// Timer fires before any vote; the coordinator commits and flushes.
#[test]
fn bug_commit_on_timeout() {
    let r = assert_caught(&model(settings("bug_commit_on_timeout")), "commit-needs-all-yes", 3, simulate(100, 30, 1));
    let actions: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(actions, ["INIT(0)", "FIRE(0, 0)", "FLUSH(0)"]);
}

/// Commit reaches participant 1 and its disk; the coordinator crashes,
/// finds no decision on disk, presumes abort and participant 2 aborts.
#[test]
fn bug_no_persist_decision() {
    let r = assert_caught(&model(settings("bug_no_persist_decision")), "atomicity", 12, simulate(10_000, 30, 1));
    assert!(r.trace.iter().any(|s| s.action == "CRASH(0, 0)"), "{}", r.to_text());
}

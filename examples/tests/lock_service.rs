//! `lock-service`: the correct protocol passes with pinned counts, in bag
//! mode with duplicates and in FIFO mode; each planted bug is caught by BFS,
//! simulation and replay.

mod common;

use cmc::{Network, Settings as _};
use cmc_examples::lock_service::{LockServiceSettings, model};
use common::{assert_caught, assert_pass, simulate};

fn settings(key: &str) -> LockServiceSettings {
    let mut s = LockServiceSettings::default();
    s.set(key, 1).expect("a known setting");
    s
}

/// Bag network with one duplicate: the protocol is idempotent.
#[test]
fn correct_passes() {
    assert_pass(&model(LockServiceSettings::default()), 718, 1711, 15);
}

#[test]
fn correct_passes_with_two_dups() {
    assert_pass(&model(LockServiceSettings::default()).dups(2), 2425, 7159, 17);
}

#[test]
fn correct_passes_with_two_requests_each() {
    assert_pass(&model(LockServiceSettings::default()).clients(2), 20000, 70393, 27);
}

#[test]
fn correct_passes_fifo() {
    assert_pass(&model(LockServiceSettings::default()).network(Network::Fifo).dups(0), 136, 252, 13);
}

/// Counted by hand: the server's own user alone, two requests, FIFO.
/// A (start) -> CLIENT -> B (holds request 1). B -> CLIENT -> C (holds 1,
/// 2 asked); FIRE -> D (released). C -> FIRE -> E (releases 1, takes 2);
/// D -> CLIENT -> E. E -> FIRE -> F (released). Distinct: 6; generated:
/// 1 + 1 (A) + 2 (B) + 1 (C) + 1 (D) + 1 (E) = 7; depth 5.
#[test]
fn server_user_alone_counts_by_hand() {
    let m = model(LockServiceSettings::default()).nodes(1).network(Network::Fifo).dups(0).clients(2);
    assert_pass(&m, 6, 7, 5);
}

/// A waiter is woken while a newcomer barges in; the buggy server forgets
/// it, and the newcomer's release wakes nobody.
#[test]
fn bug_lost_wakeup() {
    let r = assert_caught(&model(settings("bug_lost_wakeup")), "all-requests-served", 11, simulate(1000, 30, 1));
    assert!(r.trace.iter().any(|s| s.action.starts_with("WAKE(")), "{}", r.to_text());
}

/// A duplicated release frees the lock another user holds.
#[test]
fn bug_unchecked_release() {
    let r = assert_caught(&model(settings("bug_unchecked_release")), "mutual-exclusion", 12, simulate(10_000, 30, 1));
    assert!(r.trace.iter().any(|s| s.action.starts_with("DUP(")), "{}", r.to_text());
}

/// The unchecked release needs a duplicate to show: in FIFO mode, which
/// never duplicates, the buggy server passes with the correct one's counts.
#[test]
fn bug_unchecked_release_needs_a_duplicate() {
    let m = model(settings("bug_unchecked_release")).network(Network::Fifo).dups(0);
    assert_pass(&m, 136, 252, 13);
}

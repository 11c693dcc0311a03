//! `primary-backup`: the correct protocol passes with pinned counts; each
//! planted bug is caught by BFS, simulation and replay.

mod common;

use cmc::Settings as _;
use cmc_examples::primary_backup::{PrimaryBackupSettings, model};
use common::{assert_caught, assert_pass, simulate};

fn settings(key: &str) -> PrimaryBackupSettings {
    let mut s = PrimaryBackupSettings::default();
    s.set(key, 1).expect("a known setting");
    s
}

#[test]
fn correct_passes() {
    assert_pass(&model(PrimaryBackupSettings::default()), 7806, 30624, 20);
}

#[test]
fn correct_passes_with_two_crashes() {
    assert_pass(&model(PrimaryBackupSettings::default()).crashes(2), 15741, 74344, 21);
}

#[test]
fn correct_passes_with_three_writes() {
    assert_pass(&model(PrimaryBackupSettings::default()).clients(3), 103292, 463642, 27);
}

/// Counted by hand: a lone primary, one write, one crash, no drops.
/// A (start) -> CLIENT -> B (write pending on disk) or CRASH(0, 0) -> A'.
/// B -> FLUSH -> C (durable, replied); CRASH(0, 0) -> B0 (lost, never
/// acknowledged); CRASH(0, 1) -> B1 (durable, never acknowledged).
/// C -> CRASH(0, 0) -> C0 (recovered from disk). A' -> CLIENT -> B'.
/// B' -> FLUSH -> C0 again. Distinct: A, A', B, B', B0, B1, C, C0 = 8;
/// generated: 1 + 2 (A) + 3 (B) + 1 (C) + 1 (A') + 1 (B') = 9; depth 4.
#[test]
fn lone_primary_counts_by_hand() {
    let m = model(PrimaryBackupSettings::default()).nodes(1).clients(1).drops(0).crashes(1);
    assert_pass(&m, 8, 9, 4);
}

/// Backup acks after its flush; the primary replies before its own flush
/// and crashes keeping nothing.
#[test]
fn bug_ack_before_flush() {
    let r = assert_caught(
        &model(settings("bug_ack_before_flush")),
        "acknowledged-writes-survive",
        6,
        simulate(3000, 30, 1),
    );
    assert_eq!(r.trace.last().map(|s| s.action.as_str()), Some("CRASH(0, 0)"));
}

/// The primary flushes; the backup acked before its flush and crashes
/// keeping nothing.
#[test]
fn bug_backup_ack_before_flush() {
    let r = assert_caught(
        &model(settings("bug_backup_ack_before_flush")),
        "acknowledged-writes-survive",
        6,
        simulate(1000, 30, 1),
    );
    assert_eq!(r.trace.last().map(|s| s.action.as_str()), Some("CRASH(1, 0)"));
}

/// The backup crashes with both writes in flight to it; the primary ignores
/// the reset and waits for acks forever.
#[test]
fn bug_no_resend_on_reset() {
    let r = assert_caught(&model(settings("bug_no_resend_on_reset")), "writes-complete", 9, simulate(1000, 30, 1));
    assert!(r.trace.iter().any(|s| s.action == "RESET(0, 1)"), "{}", r.to_text());
}

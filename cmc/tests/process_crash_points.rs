//! Issue 27, item 3: a crash may fall between two calls of a node. Each
//! test runs `examples/c/ackfirst.c`, two nodes: node 1 asks node 0 to
//! store a value, node 0 makes it durable and acknowledges it in two
//! writes. With `BUG_ACK_FIRST` node 0 acknowledges first: every whole
//! step of it ends with the value durable, so a crash only at quiescence
//! (the manual's, and the model before this) passes it; a real machine
//! that dies between the acknowledgement and the record loses an
//! acknowledged value.

mod process_support;

use cmc::process::{Config, NO_NODE_KILLED, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Report, Verdict, explore};
use process_support::{config, enabled, program_with, replay_exact};

const ACKED: u8 = 2;

fn ackfirst(bug: bool, crashes: u8) -> Config {
    let mut c = config("ackfirst", 2);
    if bug {
        c.program = program_with("ackfirst", &["-DBUG_ACK_FIRST=1"]);
    }
    c.timeout_byte = false;
    c.budgets.crashes = crashes;
    c
}

/// The invariant: a value node 1 saw acknowledged is in node 0's durable
/// record.
fn search(c: Config) -> Report {
    let model = ProgramModel::new("ackfirst", c).always("acked_values_are_durable", |w| {
        let acked = w.nodes[1].state.get(1) == Some(&ACKED);
        !acked || w.nodes[0].durable.as_deref().is_some_and(|d| d.contains(&7))
    });
    explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
}

fn trace(r: &Report) -> Vec<&str> {
    r.trace.iter().map(|s| s.action.as_str()).collect()
}

/// The classic durability bug is found: node 0 is held after its
/// acknowledgement's first write (a crash point), runs on to the second
/// (RUN: held there too, since node 1 may read the first byte and close
/// before it; RUN again makes it), crashes after it, and node 1 reads the
/// acknowledgement the dead node wrote while node 0 recovers with
/// nothing. Before, the same program passed (as it does with
/// `crash_points = false`, below).
#[test]
fn an_ack_before_the_record_is_a_violation() {
    let _serial = process_support::serial();
    let r = search(ackfirst(true, 1));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some("acked_values_are_durable"), "{}", r.to_text());
    assert_eq!(
        trace(&r),
        [
            "START",
            "ACCEPT(0, 1)",
            "DELIVER(0, 1.0)",
            "RUN(0)",
            "RUN(0)",
            "CRASH(0)",
            "DELIVER(1, 1.0)",
            "DELIVER(1, 1.0)"
        ],
        "{}",
        r.to_text()
    );
}

/// The correct order passes, with a crash at every point: after the
/// record, after the state, after each write and before the exit.
#[test]
fn the_record_before_the_ack_passes() {
    let _serial = process_support::serial();
    let r = search(ackfirst(false, 1));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!((r.distinct_states, r.depth), (70, 14), "{}", r.to_text());
}

/// At a crash point only RUN and the held node's CRASH are enabled: the
/// node is in the middle of its step. Node 0 has read the request and
/// made it durable (its first call with an effect) and is held before its
/// next call.
#[test]
fn a_node_held_at_a_crash_point_runs_on_or_crashes() {
    let _serial = process_support::serial();
    let c = ackfirst(false, 1);
    let w = replay_exact(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    assert_eq!(enabled(&w), ["RUN(0)", "CRASH(0)"]);
    assert_eq!(w.nodes[0].durable.as_deref(), Some(&[7u8][..]));
    assert_eq!(w.nodes[0].state, [0, 0], "the state is not reported yet");
}

/// Two writes in a row with nothing reported between them are two crash
/// points, and each world stands for its own place in the step: node 1
/// gets two messages, never a third (a world that stood for both would
/// share one process and write the first message again). Between them
/// the second write is held, node 1 being free to read the first and
/// close: node 1 may act there, and node 0 may crash.
#[test]
fn two_writes_in_a_row_are_two_crash_points() {
    let _serial = process_support::serial();
    let c = ackfirst(true, 1);
    let first = replay_exact(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    let between = replay_exact(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)"]);
    let second = replay_exact(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)", "RUN(0)"]);
    assert_eq!(enabled(&first), ["RUN(0)", "CRASH(0)"]);
    assert_eq!(enabled(&between), ["DELIVER(1, 1.0)", "RUN(0)", "CRASH(0)", "CRASH(1)"]);
    assert_eq!(enabled(&second), ["RUN(0)", "CRASH(0)"]);
    assert_eq!(first.nodes[0].state, second.nodes[0].state);
    assert_ne!(first.nodes[0].blocked, second.nodes[0].blocked);
    let r = search(ackfirst(false, 1));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert!(r.property.as_deref() != Some(NO_NODE_KILLED));
}

/// The manual's crash, at quiescence only, stays available
/// (`crash_points = false`): it passes the bug, as the model did before.
#[test]
fn crash_points_off_crash_only_between_steps() {
    let _serial = process_support::serial();
    let mut c = ackfirst(true, 1);
    c.crash_points = false;
    let r = search(c);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert!(!r.trace.iter().any(|s| s.action.starts_with("RUN")));
}

/// With no crash budget left there is no crash point: the same worlds
/// with crash points on or off.
#[test]
fn no_crash_points_without_crash_budget() {
    let _serial = process_support::serial();
    let on = search(ackfirst(true, 0));
    let mut off = ackfirst(true, 0);
    off.crash_points = false;
    let off = search(off);
    assert_eq!(on.verdict, Verdict::Pass, "{}", on.to_text());
    assert_eq!((on.distinct_states, on.generated_states), (off.distinct_states, off.generated_states));
}

/// The transition cache changes no count with crash points: whether a
/// crash can still fall decides whether a node stops at them, so the same
/// local state with and without crash budget runs to different worlds
/// (the cache took one for the other: `register-bug-unsynced-store` gave
/// 1,219 worlds where 1,370 are, and a trace that could not be replayed,
/// "DELIVER(2, 0.0) is not enabled").
///
/// A CRASH spends its crash before the new life runs, so with two left
/// the new life stops at crash points and with one it does not: the key
/// says whether budget is left after the action's own.
#[test]
fn the_transition_cache_changes_no_count_with_crash_points() {
    let _serial = process_support::serial();
    for (crashes, depth) in [(1, 10), (2, 8)] {
        cache_changes_no_count(crashes, depth);
    }
}

fn cache_changes_no_count(crashes: u8, depth: u32) {
    let mut c = config("register", 3);
    c.budgets = cmc::process::Budgets { crashes, drops: 0, timeouts: 0, clients: 1 };
    c.request = b"W".to_vec();
    let options = Options { search: cmc::Search::Bfs { depth_max: Some(depth) }, ..Options::default() };
    let run = |c: Config| {
        let model = ProgramModel::new("register", c);
        explore(ProcessExplorer::new(&model).expect("valid"), &options, &mut NoControl)
    };
    let mut no_cache = c.clone();
    no_cache.transitions_max = 0;
    let (cached, fresh) = (run(c), run(no_cache));
    assert_eq!(
        (cached.distinct_states, cached.generated_states),
        (fresh.distinct_states, fresh.generated_states),
        "{crashes} crashes: {}",
        cached.to_text()
    );
}

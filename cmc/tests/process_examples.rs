//! The example programs of `examples/c` under the process front end (issue
//! 4, item 6): each correct build keeps its invariants on every world within
//! its bound, each planted bug (`#if BUG_…`) is reached with the property it
//! breaks on a shortest path, printed as action tokens and replayed from
//! scratch, and each bug needs what its comment says it needs (a crash, a
//! dropped message, two timeouts): with that budget at zero, the same bound
//! holds no violation.
//!
//! The invariants are Rust over the node states decoded from the world. The
//! same invariants are written in C for model files (`examples/c/*_props.c`,
//! built as shared objects); on every world a walk visits, the C predicate
//! must give the Rust verdict.
//!
//! The search is `process_support::walk`, a breadth-first stopgap until the
//! engine's searches drive processes. Every world costs a replay of its
//! path (a few milliseconds), so the bounds are small; the distinct-world
//! counts are pinned, as for any model expected to hold. Each test that runs
//! programs runs `alone` in a child process (see there why).
#![cfg(target_os = "linux")]

mod process_support;

use std::time::Instant;

use cmc::process::{Budgets, Config, Life, ProcessEngine, ProcessWorld};
use process_support::{
    Counterexample, Invariant, Walk, Witness, alone, c_holds, c_predicate, config, program_with, replay, walk,
};

/// Runs the C predicate `property` of `examples/c/{program}_props.c` on
/// `world` and requires the Rust verdict `rust`.
fn agree(program: &str, property: &str, world: &ProcessWorld, rust: Result<(), String>) -> Result<(), String> {
    let c = c_holds(&format!("{program}_props"), property, world);
    assert_eq!(c, rust.is_ok(), "{program}_props.c `{property}` disagrees with Rust ({rust:?}) on {world:#?}");
    rust
}

/// Three nodes of `examples/c/PROGRAM.c`, built with `-DBUG=1` when a bug
/// is named.
fn model(program: &str, bug: Option<&str>, budgets: Budgets, request: &[u8]) -> Config {
    let mut c = config(program, 3);
    if let Some(bug) = bug {
        c.program = program_with(program, &[&format!("-D{bug}=1")]);
    }
    c.budgets = budgets;
    c.request = request.to_vec();
    // Tests run in parallel, one process each: pinned to the CPU each
    // started on, two of them can share one CPU and leave the other idle.
    c.pin_cpu = false;
    // The counts and shortest traces here are the manual's crash, at
    // quiescence only, which stays available; the examples with crash
    // points (the default) are their model files' (`process_models.rs`),
    // and crash points themselves `process_crash_points.rs`.
    c.crash_points = false;
    c
}

fn budgets(crashes: u8, drops: u8, timeouts: u8, clients: u8) -> Budgets {
    Budgets { crashes, drops, timeouts, clients, thread_switches: 0 }
}

fn summary(label: &str, w: &Walk, actions_max: usize, started: Instant) -> String {
    let bound = match (&w.violation, w.bounded) {
        (Some(_), _) => "stopped at the violation",
        (None, true) => "reached",
        (None, false) => "not reached: every world seen",
    };
    format!(
        "{label}: {} distinct worlds, {} generated, deepest {} actions (bound {actions_max}, {bound}), {:.1} s",
        w.distinct,
        w.generated,
        w.actions_deepest,
        started.elapsed().as_secs_f64(),
    )
}

/// How a program's node states read, for counterexamples.
type Show = fn(&[u8]) -> String;

fn print_world(world: &ProcessWorld, show: Show) {
    for (n, node) in world.nodes.iter().enumerate() {
        println!("    node {n}: {} ({:?})", show(&node.state), node.life);
    }
    for (n, r) in &world.replies {
        println!("    reply from node {n}: {r:?}");
    }
}

/// The walk finds no violation within `actions_max` actions, and reaches
/// a world for each witness (the invariants are not vacuous).
fn holds(
    label: &str,
    c: &Config,
    actions_max: usize,
    invariants: &[(&'static str, Invariant)],
    witnesses: &[(&str, Witness)],
) -> Walk {
    let checks: Vec<Witness> = witnesses.iter().map(|(_, w)| *w).collect();
    let started = Instant::now();
    let w = walk(c, actions_max, invariants, &checks);
    println!("{}", summary(label, &w, actions_max, started));
    if let Some(cx) = &w.violation {
        panic!("{label}: {} fails: {}\n  {}", cx.property, cx.reason, cx.tokens().join(" "));
    }
    for ((name, _), found) in witnesses.iter().zip(&w.witnessed) {
        let Some(path) = found else { panic!("{label}: no world within the bound where {name}") };
        let tokens: Vec<String> = path.iter().map(|a| a.to_string()).collect();
        println!("  witness, {name}: {}", tokens.join(" "));
    }
    w
}

/// The walk reaches a world where `property` fails; its shortest path is
/// printed, and replays from scratch to the same world, where the property
/// fails again.
fn violates(
    label: &str,
    c: &Config,
    actions_max: usize,
    invariants: &[(&'static str, Invariant)],
    property: &str,
    show: Show,
) -> Counterexample {
    let started = Instant::now();
    let w = walk(c, actions_max, invariants, &[]);
    println!("{}", summary(label, &w, actions_max, started));
    let Some(cx) = w.violation else { panic!("{label}: no violation within {actions_max} actions") };
    println!("  {} fails: {}", cx.property, cx.reason);
    println!("  counterexample ({} actions): {}", cx.actions.len(), cx.tokens().join(" "));
    print_world(&cx.world, show);
    assert_eq!(cx.property, property, "{label}: the expected property fails");
    let mut buf = Vec::new();
    let again = ProcessEngine::new(c.clone()).expect("valid").replay(&cx.actions).expect("the counterexample replays");
    assert_eq!(
        ProcessEngine::fingerprint(&again, &mut buf),
        ProcessEngine::fingerprint(&cx.world, &mut buf),
        "{label}: the replay reaches the same world"
    );
    let (_, check) = invariants.iter().find(|(n, _)| *n == property).expect("named");
    assert!(check(&again).is_err(), "{label}: {property} fails on the replayed world");
    cx
}

fn has(cx: &Counterexample, token: &str) -> bool {
    cx.tokens().iter().any(|t| t.starts_with(token))
}

// ---------------------------------------------------------------------------
// election.c: leader election with timeouts.

const NONE: u8 = 0xff;
const LEADER: u8 = 2;

/// {phase, term, voted, role, leader, votes, asking}, as election.c reports;
/// a node that is down, a follower of no one in no term (as
/// `election_props.c` reads it).
fn electors(w: &ProcessWorld) -> Result<Vec<[u8; 7]>, String> {
    w.nodes
        .iter()
        .enumerate()
        .map(|(n, node)| match node.life {
            Life::Down => Ok([0, 0, NONE, 0, NONE, 0, 0]),
            _ => node.state.as_slice().try_into().map_err(|_| format!("node {n} reported {:?}", node.state)),
        })
        .collect()
}

fn show_elector(s: &[u8]) -> String {
    let Ok(&[phase, term, voted, role, leader, votes, asking]) = <&[u8; 7]>::try_from(s) else {
        return format!("{s:?}");
    };
    let who = |n: u8| if n == NONE { "-".to_string() } else { n.to_string() };
    let phase = ["?", "idle", "reading", "asking"].get(phase as usize).unwrap_or(&"?");
    let role = ["follower", "candidate", "leader"].get(role as usize).unwrap_or(&"?");
    format!(
        "{phase:<7} term {term} {role:<9} voted {} leader {} votes {votes} asking {}",
        who(voted),
        who(leader),
        who(asking)
    )
}

fn one_leader_per_term(w: &ProcessWorld) -> Result<(), String> {
    let rust = electors(w).and_then(|e| {
        for a in 0..e.len() {
            for b in a + 1..e.len() {
                if e[a][3] == LEADER && e[b][3] == LEADER && e[a][1] == e[b][1] {
                    return Err(format!("nodes {a} and {b} both lead term {}", e[a][1]));
                }
            }
        }
        Ok(())
    });
    agree("election", "one_leader_per_term", w, rust)
}

fn one_belief_per_term(w: &ProcessWorld) -> Result<(), String> {
    let rust = electors(w).and_then(|e| {
        for a in 0..e.len() {
            for b in a + 1..e.len() {
                let (la, lb) = (e[a][4], e[b][4]);
                if e[a][1] == e[b][1] && la != NONE && lb != NONE && la != lb {
                    return Err(format!("in term {}, node {a} follows {la} and node {b} follows {lb}", e[a][1]));
                }
            }
        }
        Ok(())
    });
    agree("election", "one_belief_per_term", w, rust)
}

const ELECTION: &[(&str, Invariant)] =
    &[("one_leader_per_term", one_leader_per_term), ("one_belief_per_term", one_belief_per_term)];

/// Two timeouts, two rounds of ACCEPT, DELIVER (the request) and DELIVER
/// (the answer) make two leaders of a term when a node votes twice (8
/// actions); a voter that forgets its vote in a crash needs the crash too
/// (9).
const ELECTION_ACTIONS_MAX: usize = 9;

fn election(bug: Option<&str>, crashes: u8, timeouts: u8) -> Config {
    model("election", bug, budgets(crashes, 0, timeouts, 0), b"")
}

#[test]
fn election_keeps_one_leader_per_term() {
    alone("election_keeps_one_leader_per_term", || {
        let w = holds(
            "election",
            &election(None, 1, 2),
            ELECTION_ACTIONS_MAX,
            ELECTION,
            &[
                ("a node leads", |w| electors(w).is_ok_and(|e| e.iter().any(|s| s[3] == LEADER))),
                ("a follower learnt its leader", |w| {
                    electors(w).is_ok_and(|e| e.iter().any(|s| s[3] != LEADER && s[4] != NONE))
                }),
            ],
        );
        assert_eq!((w.distinct, w.bounded), (2492, true));
    });
}

#[test]
fn election_a_voter_recovers_its_vote_after_a_crash() {
    alone("election_a_voter_recovers_its_vote_after_a_crash", || {
        // BUG_VOLATILE_VOTE's counterexample up to its crash, on the correct
        // build: node 2 comes back having voted for node 0 in term 1, so it
        // denies node 1.
        let c = election(None, 1, 2);
        let w =
            replay(&c, &["TIMEOUT(0)", "ACCEPT(2, 0)", "DELIVER(2, 0.0)", "DELIVER(0, 0.0)", "CRASH(2)", "RESTART(2)"]);
        let e = electors(&w).expect("decodes");
        assert_eq!((e[2][1], e[2][2]), (1, 0), "term 1, voted for node 0: {}", show_elector(&e[2]));
        let w = replay(
            &c,
            &[
                "TIMEOUT(0)",
                "ACCEPT(2, 0)",
                "DELIVER(2, 0.0)",
                "DELIVER(0, 0.0)",
                "CRASH(2)",
                "RESTART(2)",
                "TIMEOUT(1)",
                "ACCEPT(2, 1)",
                "DELIVER(2, 1.0)",
                "DELIVER(1, 1.0)",
            ],
        );
        let e = electors(&w).expect("decodes");
        let (role, asking) = (e[1][3], e[1][6]);
        assert_eq!((role, asking), (1, 0), "node 1, denied, asks node 0 next: {}", show_elector(&e[1]));
    });
}

#[test]
fn bug_vote_twice() {
    alone("bug_vote_twice", || {
        // No crash budget: the bug needs none.
        let c = election(Some("BUG_VOTE_TWICE"), 0, 2);
        let cx = violates("BUG_VOTE_TWICE", &c, ELECTION_ACTIONS_MAX, ELECTION, "one_leader_per_term", show_elector);
        assert_eq!(cx.actions.len(), 8);
    });
}

#[test]
fn bug_vote_twice_needs_two_timeouts() {
    alone("bug_vote_twice_needs_two_timeouts", || {
        let c = election(Some("BUG_VOTE_TWICE"), 1, 1);
        let w = holds("BUG_VOTE_TWICE, one timeout", &c, ELECTION_ACTIONS_MAX, ELECTION, &[]);
        assert!(!w.bounded, "every world with one timeout was seen");
    });
}

#[test]
fn bug_volatile_vote() {
    alone("bug_volatile_vote", || {
        let c = election(Some("BUG_VOLATILE_VOTE"), 1, 2);
        // One action more than the bound of the others: the crashed voter's
        // RESTART.
        let bound = ELECTION_ACTIONS_MAX + 1;
        let cx = violates("BUG_VOLATILE_VOTE", &c, bound, ELECTION, "one_leader_per_term", show_elector);
        assert_eq!(cx.actions.len(), 10);
        assert!(has(&cx, "CRASH"));
        assert!(has(&cx, "RESTART"));
    });
}

#[test]
fn bug_volatile_vote_needs_a_crash() {
    alone("bug_volatile_vote_needs_a_crash", || {
        let c = election(Some("BUG_VOLATILE_VOTE"), 0, 2);
        holds("BUG_VOLATILE_VOTE, no crash", &c, ELECTION_ACTIONS_MAX, ELECTION, &[]);
    });
}

// ---------------------------------------------------------------------------
// register.c: a replicated register with client writes and durable state.

/// {phase, counter, writer, asking, acks}, as register.c reports.
/// {phase, counter, writer, asking, acks}, as register.c reports; a node
/// that is down holds what its durable record {counter, writer} says, and
/// with none, nothing (as `register_props.c` reads it: left out).
fn registers(w: &ProcessWorld) -> Result<Vec<[u8; 5]>, String> {
    w.nodes
        .iter()
        .enumerate()
        .filter_map(|(n, node)| match (node.life, node.durable.as_deref()) {
            (Life::Down, Some(&[counter, writer])) => Some(Ok([0, counter, writer, 0, 0])),
            (Life::Down, _) => None,
            _ => Some(node.state.as_slice().try_into().map_err(|_| format!("node {n} reported {:?}", node.state))),
        })
        .collect()
}

fn show_register(s: &[u8]) -> String {
    let Ok(&[phase, counter, writer, asking, acks]) = <&[u8; 5]>::try_from(s) else {
        return format!("{s:?}");
    };
    let phase = ["?", "idle", "reading", "asking"].get(phase as usize).unwrap_or(&"?");
    let asking = if asking == NONE { "-".to_string() } else { asking.to_string() };
    format!("{phase:<7} holds ({counter}, {writer}) asking {asking} acks {acks}")
}

/// The acknowledgements {'A', counter, writer} in the ghost log.
fn acks(w: &ProcessWorld) -> impl Iterator<Item = (u8, u8)> + '_ {
    w.replies.iter().filter_map(|(_, r)| match r.as_slice() {
        [b'A', counter, writer] => Some((*counter, *writer)),
        _ => None,
    })
}

fn acked_writes_survive(w: &ProcessWorld) -> Result<(), String> {
    let rust = registers(w).and_then(|r| {
        let majority = w.nodes.len() / 2 + 1;
        for ack in acks(w) {
            let holders = r.iter().filter(|s| (s[1], s[2]) >= ack).count();
            if holders < majority {
                return Err(format!("write {ack:?} was acknowledged, and {holders} node(s) hold it"));
            }
        }
        Ok(())
    });
    agree("register", "acked_writes_survive", w, rust)
}

const REGISTER: &[(&str, Invariant)] = &[("acked_writes_survive", acked_writes_survive)];

/// A write acknowledged, then the replica that stored it crashes: CLIENT,
/// ACCEPT, DELIVER at the coordinator, ACCEPT, DELIVER at the replica,
/// DELIVER of its answer, CRASH.
const REGISTER_ACTIONS_MAX: usize = 7;

fn register(bug: Option<&str>, crashes: u8) -> Config {
    model("register", bug, budgets(crashes, 0, 0, 1), b"W")
}

#[test]
fn register_keeps_acknowledged_writes() {
    alone("register_keeps_acknowledged_writes", || {
        let w = holds(
            "register",
            &register(None, 1),
            REGISTER_ACTIONS_MAX,
            REGISTER,
            &[
                ("a write is acknowledged", |w| acks(w).next().is_some()),
                ("a node crashed after a write was acknowledged", |w| w.crashes == 0 && acks(w).next().is_some()),
            ],
        );
        assert_eq!((w.distinct, w.bounded), (712, true));
    });
}

#[test]
fn register_a_replica_recovers_a_stored_write_after_a_crash() {
    alone("register_a_replica_recovers_a_stored_write_after_a_crash", || {
        // BUG_UNSYNCED_STORE's counterexample on the correct build.
        let w = replay(
            &register(None, 1),
            &[
                "CLIENT(0)",
                "ACCEPT(0, client)",
                "DELIVER(0, c0.0)",
                "ACCEPT(2, 0)",
                "DELIVER(2, 0.0)",
                "DELIVER(0, 0.0)",
                "CRASH(2)",
            ],
        );
        assert_eq!(w.replies, [(0, b"A\x01\x00".to_vec())]);
        let r = registers(&w).expect("decodes");
        assert_eq!((r[2][1], r[2][2]), (1, 0), "node 2 holds the write again: {}", show_register(&r[2]));
    });
}

#[test]
fn bug_unsynced_store() {
    alone("bug_unsynced_store", || {
        let c = register(Some("BUG_UNSYNCED_STORE"), 1);
        let cx =
            violates("BUG_UNSYNCED_STORE", &c, REGISTER_ACTIONS_MAX, REGISTER, "acked_writes_survive", show_register);
        assert_eq!(cx.actions.len(), 7);
        assert!(has(&cx, "CRASH"));
    });
}

#[test]
fn bug_unsynced_store_needs_a_crash() {
    alone("bug_unsynced_store_needs_a_crash", || {
        let c = register(Some("BUG_UNSYNCED_STORE"), 0);
        holds("BUG_UNSYNCED_STORE, no crash", &c, REGISTER_ACTIONS_MAX, REGISTER, &[]);
    });
}

#[test]
fn bug_early_ack() {
    alone("bug_early_ack", || {
        // No crash budget: the bug needs none.
        let c = register(Some("BUG_EARLY_ACK"), 0);
        let cx = violates("BUG_EARLY_ACK", &c, REGISTER_ACTIONS_MAX, REGISTER, "acked_writes_survive", show_register);
        assert_eq!(cx.tokens(), ["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    });
}

// ---------------------------------------------------------------------------
// logship.c: log shipping whose bug needs a dropped message (a reset that
// takes a message a write() had accepted).

/// The log of each node, from {role, phase, subscribed, length, log...}.
fn logs(w: &ProcessWorld) -> Result<Vec<&[u8]>, String> {
    w.nodes
        .iter()
        .enumerate()
        .map(|(n, node)| match node.state.as_slice() {
            [_, _, _, length, log @ ..] if log.len() == *length as usize => Ok(log),
            s => Err(format!("node {n} reported {s:?}")),
        })
        .collect()
}

fn show_log(s: &[u8]) -> String {
    match s {
        [0, phase, subscribed, _, log @ ..] => {
            format!("primary phase {phase} subscribed {subscribed:#05b} log {log:?}")
        }
        [1, phase, _, _, log @ ..] => format!("backup  phase {phase} log {log:?}"),
        _ => format!("{s:?}"),
    }
}

fn backups_are_prefixes(w: &ProcessWorld) -> Result<(), String> {
    let rust = logs(w).and_then(|l| {
        for (n, log) in l.iter().enumerate().skip(1) {
            if !l[0].starts_with(log) {
                return Err(format!("backup {n} holds {log:?}, the primary {:?}", l[0]));
            }
        }
        Ok(())
    });
    agree("logship", "backups_are_prefixes", w, rust)
}

const LOGSHIP: &[(&str, Invariant)] = &[("backups_are_prefixes", backups_are_prefixes)];

/// Every world of the model is within 18 actions (a backup subscribes
/// again after a reset, its subscription held after its close), and the
/// last of them has no action left; the bug is at 10.
const LOGSHIP_ACTIONS_MAX: usize = 19;

fn logship(bug: Option<&str>, drops: u8) -> Config {
    model("logship", bug, budgets(0, drops, 2, 0), b"")
}

#[test]
fn logship_backups_stay_prefixes() {
    alone("logship_backups_stay_prefixes", || {
        let w = holds(
            "logship",
            &logship(None, 1),
            LOGSHIP_ACTIONS_MAX,
            LOGSHIP,
            &[
                ("a backup holds two entries", |w| logs(w).is_ok_and(|l| l[1..].iter().any(|log| log.len() == 2))),
                ("a backup holds an entry after a drop", |w| {
                    w.drops == 0 && logs(w).is_ok_and(|l| l[1..].iter().any(|log| !log.is_empty()))
                }),
            ],
        );
        assert_eq!((w.distinct, w.bounded), (10552, false));
    });
}

#[test]
fn bug_send_delta() {
    alone("bug_send_delta", || {
        let c = logship(Some("BUG_SEND_DELTA"), 1);
        let cx = violates("BUG_SEND_DELTA", &c, LOGSHIP_ACTIONS_MAX, LOGSHIP, "backups_are_prefixes", show_log);
        // The entry is lost with the reset, the backup subscribes again on a
        // new connection (its subscription held after its close: RUN), and
        // the next entry alone reaches it.
        assert_eq!(cx.actions.len(), 10);
        assert!(has(&cx, "DROP"));
    });
}

#[test]
fn bug_send_delta_needs_a_drop() {
    alone("bug_send_delta_needs_a_drop", || {
        let c = logship(Some("BUG_SEND_DELTA"), 0);
        let w = holds("BUG_SEND_DELTA, no drop", &c, LOGSHIP_ACTIONS_MAX, LOGSHIP, &[]);
        assert!(!w.bounded, "every world without a drop was seen");
    });
}

// ---------------------------------------------------------------------------
// The C properties, as a model file's shared object.

#[test]
fn example_properties_compile_as_shared_objects() {
    for (object, functions) in [
        ("election_props", &["one_leader_per_term", "one_belief_per_term"][..]),
        ("register_props", &["acked_writes_survive"]),
        ("logship_props", &["backups_are_prefixes"]),
    ] {
        for f in functions {
            c_predicate(object, f);
        }
    }
}

#[test]
fn a_c_property_fails_where_the_rust_one_fails() {
    alone("a_c_property_fails_where_the_rust_one_fails", || {
        // The walks compare the two on every world; this pins one comparison by
        // hand on each side of the verdict.
        let c = register(Some("BUG_EARLY_ACK"), 0);
        let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
        assert!(!c_holds("register_props", "acked_writes_survive", &w));
        assert!(acked_writes_survive(&w).is_err());
        let w = replay(&c, &[]);
        assert!(c_holds("register_props", "acked_writes_survive", &w));
        assert!(acked_writes_survive(&w).is_ok());
    });
}

//! The conformance gate over the Rust example programs (issue 27, item 6:
//! every example program): `examples/rust/echo.rs` and
//! `examples/rust/lease.rs`, programs of the standard library's `std::net`
//! (blocking sockets, `std::thread::sleep`), and
//! `examples/rust/tokio_lease.rs` and `tokio_mt_lease.rs`, the lease on tokio (issue 28), run natively on Linux along
//! the checker's schedules and compared with the checker's worlds after
//! every segment, as `tests/conformance.rs` runs the C example programs
//! (`cmc_conformance`'s crate doc says how, and which schedules Linux can
//! follow).
//!
//! Cargo builds both as binaries of this crate (`conformance-echo`,
//! `conformance-lease`), as a user's crate builds the program it ships
//! and as `tests/models/lease.rs` checks the lease (its binary of
//! cmc-tests); `cmc/tests/process_front.rs` checks echo. The schedules:
//! the lease's planted bug's counterexample (`--bug-double-grant`, its
//! model `tests/models/lease.rs`' `bug_double_grant`), reproduced on
//! Linux, and seeded walks of each program, the lease's correct and
//! planted-bug builds, with the walks' budgets
//! ([`WALKS`](cmc_conformance::suite::WALKS)). Echo has no planted bug.
//!
//! Each lease client holds the lease for a term, a 5-second sleep, which
//! on Linux ends by itself: every lease walk waits it out in real time,
//! so there are few of them.
//!
//! They need root (`unshare(CLONE_NEWNET)`), so they are ignored by
//! `cargo test`; `.ci/run` runs them: `cargo test --test rust_examples --
//! --ignored`.

#![cfg(target_os = "linux")]

use std::time::Instant;

use cmc::Options;
use cmc::process::{Config, Life, ProcessAction, ProcessWorld, ProgramModel};
use cmc_conformance::gate::Outcome;
use cmc_conformance::suite::{counterexample, reproduced, summarize, walks};

/// `examples/rust/echo.rs`, built by cargo.
const ECHO: &str = env!("CARGO_BIN_EXE_conformance-echo");

/// `examples/rust/lease.rs`, built by cargo.
const LEASE: &str = env!("CARGO_BIN_EXE_conformance-lease");

/// `examples/rust/tokio_lease.rs`, built by cargo.
const TOKIO_LEASE: &str = env!("CARGO_BIN_EXE_conformance-tokio-lease");

/// `examples/rust/tokio_mt_lease.rs` (`tokio_lease.rs` on the multi-thread
/// runtime), built by cargo.
const TOKIO_MT_LEASE: &str = env!("CARGO_BIN_EXE_conformance-tokio-mt-lease");

/// Whether some step of `o` that Linux was compared on took an action
/// whose token starts with `kind`.
fn took(o: &Outcome, kind: &str) -> bool {
    let f = &o.followed;
    let compared = f.segments.get(..o.compared).and_then(|s| s.last()).map_or(0, |s| s.last);
    f.actions[..compared].iter().any(|a| a.to_string().starts_with(kind))
}

/// The checker's last world that Linux was compared on.
fn last_compared(o: &Outcome) -> &ProcessWorld {
    let step = o.followed.segments.get(..o.compared).and_then(|s| s.last()).map_or(0, |s| s.last);
    &o.followed.worlds[step]
}

// ---------------------------------------------------------------------------
// echo: each node echoes the first read of each connection.

/// `process_front.rs`' echo (`a_rust_std_program_runs_as_a_node`) on
/// `nodes` nodes, its clients sending "hi". Written for Linux: no `T`.
fn echo(nodes: u8) -> Config {
    let mut c = Config::new(ECHO, nodes);
    c.request = b"hi".to_vec();
    // The manual's crash, at quiescence only: the gate cannot make a
    // SIGKILL fall between two calls.
    c.crash_points = false;
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn echo_agrees_with_linux() {
    let started = Instant::now();
    // Two nodes, two clients each, two crashes: every client's request
    // echoed, and each crashed node's port listened on again by its
    // restart (std's TcpListener sets SO_REUSEADDR).
    let outcomes = walks(&echo(2), "echo, 2 nodes", 8, 8);
    let t = summarize("echo", &outcomes, &[], started);
    assert_eq!(t.whole, t.schedules, "every walk is followed to its end");
    // What was compared includes the echoes and the crashes.
    let echoed = outcomes.iter().filter(|o| last_compared(o).replies.iter().any(|(_, r)| r == b"hi")).count();
    assert!(echoed >= 4, "{echoed} walks end with an echo compared");
    let restarted = outcomes.iter().filter(|o| took(o, "RESTART")).count();
    assert!(restarted >= 2, "{restarted} walks restart a crashed node");
    let after = outcomes
        .iter()
        .filter(|o| {
            let f = &o.followed;
            let restart = f.actions.iter().position(|a| matches!(a, ProcessAction::Restart { .. }));
            let client = f.actions.iter().rposition(|a| matches!(a, ProcessAction::Client { .. }));
            restart.zip(client).is_some_and(|(r, c)| c > r) && o.compared == f.segments.len()
        })
        .count();
    assert!(after >= 1, "some walk echoes to a client of a restarted node");
}

// ---------------------------------------------------------------------------
// lease: node 0 grants one lease; the other nodes ask for it, hold it for
// a term and release it.

/// Clients holding the lease: those reporting `[1, 1]`.
fn holders(w: &ProcessWorld) -> usize {
    w.nodes.iter().filter(|n| n.state == [1, 1]).count()
}

/// `tests/models/lease.rs`' model of `lease.rs` on `nodes` nodes, with
/// `args`.
fn lease(nodes: u8, args: &[&str]) -> ProgramModel {
    let mut c = Config::new(LEASE, nodes);
    c.args = args.iter().map(|a| a.to_string()).collect();
    ProgramModel::new("lease", c).always("one_holder", |w| holders(w) <= 1)
}

/// The lease as the walks take it: the server written for the manual's
/// `T` (as `tests/models/lease.rs`' `correct` checks it), the manual's
/// crash, and the checker's clients asking for the lease as client 57
/// (`A9`, the byte `'9'`), which the server answers (`G` or `D`) and
/// makes durable as it does a node's.
fn lease_walks(nodes: u8, args: &[&str]) -> Config {
    let mut c = lease(nodes, args).config;
    c.timeout_byte = true;
    c.crash_points = false;
    c.request = b"A9".to_vec();
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn lease_agrees_with_linux() {
    let started = Instant::now();
    // The planted bug's counterexample, as `tests/models/lease.rs`'
    // `bug_double_grant` finds it: the gate starts node 1 first, which is
    // granted the lease and sleeps out its term, then node 2, which is
    // granted it too. Both hold it on Linux.
    let bug = lease(3, &["--bug-double-grant"]);
    let double = counterexample(&bug, &Options::default(), "lease --bug-double-grant");
    reproduced(&double);
    assert_eq!(holders(last_compared(&double)), 2, "both clients hold the lease: {}", double.line());
    let mut outcomes = vec![double];
    // The correct build on three nodes: node 1 holds the lease, node 2 is
    // denied it, node 1's term ends (Linux's own 5 s) and it releases it;
    // then the checker's clients, TIMEOUTs of the server's accept, its
    // crashes and restarts (the holder read back from fd 193).
    let correct = walks(&lease_walks(3, &[]), "lease", 3, 8);
    for o in &correct {
        let w = last_compared(o);
        assert_eq!(w.nodes[1].life, Life::Exited(0), "node 1 held, released and exited: {}", o.line());
        assert_eq!(w.nodes[2].state, [1, 3], "node 2 was denied: {}", o.line());
    }
    outcomes.extend(correct);
    // The planted bug on two nodes (on three, both clients sleep out their
    // terms at once, and on Linux their clocks race): the server grants
    // the checker's clients the lease whoever holds it.
    outcomes.extend(walks(&lease_walks(2, &["--bug-double-grant"]), "lease --bug-double-grant, 2 nodes", 2, 8));
    let t = summarize("lease", &outcomes, &[], started);
    assert_eq!(t.whole, t.schedules, "every schedule is followed to its end");
    // What the walks compared: the checker's clients granted the lease,
    // and the server restarted; a client granted it while it is held by
    // the planted bug alone.
    let grants = |o: &Outcome| last_compared(o).replies.iter().filter(|(_, r)| r == b"G").count();
    let walks = &outcomes[1..];
    assert!(walks.iter().any(|o| grants(o) >= 1), "some walk grants a client the lease");
    assert!(walks.iter().any(|o| took(o, "RESTART")), "some walk restarts the server, which reads its holder back");
    for o in walks {
        let bug = o.label.contains("--bug-double-grant");
        assert!(bug || grants(o) <= 1, "the correct server grants the lease once: {}", o.line());
    }
    let again = walks.iter().filter(|o| o.label.contains("--bug-double-grant") && grants(o) >= 2).count();
    assert!(again >= 1, "the planted bug grants a held lease again, on Linux too");
}

// ---------------------------------------------------------------------------
// tokio_lease: the lease server on tokio's current-thread runtime, node 0
// alone, asked by the checker's clients (`A1`, `A2`).

/// `tests/models/tokio_lease.rs`' model of `tokio_lease.rs`, with `args`
/// and `crashes`.
fn tokio_lease(args: &[&str], crashes: u8) -> ProgramModel {
    tokio_lease_on(TOKIO_LEASE, args, crashes)
}

/// The same model of the build at `program`.
fn tokio_lease_on(program: &str, args: &[&str], crashes: u8) -> ProgramModel {
    let mut c = Config::new(program, 1);
    c.args = args.iter().map(|a| a.to_string()).collect();
    c.budgets.clients = 2;
    c.budgets.crashes = crashes;
    c.requests = vec![b"A1".to_vec(), b"A2".to_vec()];
    ProgramModel::new("tokio_lease", c).always("one_grant", |w| grants(w) <= 1)
}

/// Grants the server answered: the `G`s in the ghost log.
fn grants(w: &ProcessWorld) -> usize {
    w.replies.iter().filter(|(_, r)| r == b"G").count()
}

/// The tokio walks' outcomes, checked: Linux follows every walk to its
/// end, agreeing at every segment (crashes and restarts of the server
/// included), the correct build grants the lease once in each, and the
/// planted bug grants it twice in some, on Linux too. The gate sends a
/// client's request with the node stopped, so Linux's server finds it
/// there when its woken wait returns, the checker's DELIVER before RUN;
/// before, every walk stopped at the server's first connection, where
/// that order was Linux's timing.
fn tokio_walks_agree(what: &str, outcomes: &[Outcome], started: Instant) {
    let t = summarize(what, outcomes, &[], started);
    assert_eq!(t.whole, t.schedules, "every walk is followed to its end");
    assert!(t.segments > t.schedules, "Linux follows the walks past their start (crashes and restarts)");
    let granted = |o: &Outcome| grants(last_compared(o));
    for o in outcomes {
        assert!(o.label.contains("--bug") || granted(o) <= 1, "the correct server grants the lease once: {}", o.line());
    }
    assert!(outcomes.iter().any(|o| took(o, "RESTART")), "some walk restarts the server");
    let again = outcomes.iter().filter(|o| o.label.contains("--bug-double-grant") && granted(o) >= 2).count();
    assert!(again >= 1, "the planted bug grants the lease twice, on Linux too");
}

/// Seeded walks of the current-thread build and its planted bugs
/// ([`tokio_walks_agree`]).
#[test]
#[ignore = "needs root: a private network namespace"]
fn tokio_lease_agrees_with_linux() {
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for (args, crashes) in [(&[][..], 1), (&["--bug-double-grant"][..], 0), (&["--bug-volatile-holder"][..], 1)] {
        let label = format!("tokio_lease {}", args.join(" "));
        outcomes.extend(walks(&tokio_lease(args, crashes).config, &label, 4, 12));
    }
    tokio_walks_agree("tokio_lease", &outcomes, started);
}

/// The same for the multi-thread build (`#[tokio::main]`: the main thread
/// and one worker), threads and all.
#[test]
#[ignore = "needs root: a private network namespace"]
fn tokio_mt_lease_agrees_with_linux() {
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for (args, crashes) in [(&[][..], 1), (&["--bug-double-grant"][..], 0)] {
        let label = format!("tokio_mt_lease {}", args.join(" "));
        outcomes.extend(walks(&tokio_lease_on(TOKIO_MT_LEASE, args, crashes).config, &label, 2, 12));
    }
    tokio_walks_agree("tokio_mt_lease", &outcomes, started);
}

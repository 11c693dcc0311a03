//! The conformance gate (issue 27, item 6): every example program of
//! `examples/c` run natively on Linux, one process per node on real
//! loopback sockets in a private network namespace, along the checker's
//! schedules, and compared with the checker's worlds after every segment
//! (`cmc_conformance`'s crate doc says how, and which schedules Linux can
//! follow). The schedules: each planted bug's counterexample (the model
//! files' `examples/c/*-bug-*.toml`, and evstore's two, whose models
//! `tests/models/programs.rs` declares), and seeded walks of each program,
//! correct and planted-bug builds, drawn among the actions Linux can
//! follow. Then the regression programs of issues 26 and 27 the same way
//! (`local.c`, `tcp.c`, `untimed.c`, `rcvtimeo.c`, `lease_order.c`,
//! `ackfirst.c`, `millis.c`, `startvote.c`, `startwindow.c`, and
//! `escape.c`, `lookalike.c`, `lookalike3.c` in the modes the checker
//! answers from the world), each along its tests' own schedules where
//! Linux can follow them, and seeded walks; and `ready.c`, `listing.c` and
//! `segments.c`, which the gate cannot follow, shown stopped. The Rust example programs (`examples/rust`) are
//! `tests/rust_examples.rs`'s.
//!
//! The walks take larger budgets than the model files (two crashes, four
//! timeouts, two clients per node: [`WALKS`]), which are sized for
//! exhaustive searches: a walk is one path.
//!
//! Each test prints one line per schedule: what was followed, how many
//! steps were compared, where and why following stopped, what a walk left
//! out because Linux could not follow it there, and the divergence if any.
//! A divergence fails the test, naming the step, the node and both sides,
//! unless it is a deviation of the model from Linux known and listed as a
//! [`Finding`](cmc_conformance::suite::Finding) (none today: issue 27's
//! three are fixed; each must still be found while listed, so that the
//! list shrinks). A counterexample that
//! Linux can follow to its end must pass through its violation's world:
//! the bug is then shown on Linux, not only in the model.
//!
//! The teeth: the gate's comparison is tested on doctored checker traces
//! in `src/compare.rs` (no root, in `cargo test`) and here on real runs:
//! register's planted bug, and `examples/c/conformance_probe.c`'s two
//! deviations the model had before issue 27 (a connect to a node that
//! never listens succeeded; close() did not reach the peer): the model and
//! Linux now agree on each, and the same run with the checker's world
//! doctored back to the old, wrong answer is reported at the step where it
//! shows.
//!
//! They need root (`unshare(CLONE_NEWNET)`), so they are ignored by
//! `cargo test`; `.ci/run` runs them: `cargo test --test conformance --
//! --ignored`.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;
use std::time::Instant;

use cmc::process::{Budgets, Config, ProcessAction, ProcessEngine, ProcessWorld, ProgramModel, model_file};
use cmc::{Options, Search};
use cmc_conformance::compare::{self, Divergence};
use cmc_conformance::gate::{self, Outcome};
use cmc_conformance::suite::{WALKS, counterexample, reproduced, stopped_at, summarize, walks};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/c").canonicalize().expect("examples/c")
}

/// `make -C examples/c`: the programs, their bug builds, the probes.
fn build() {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let out = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(examples())
            .output()
            .expect("make runs (apt-get install make gcc)");
        assert!(out.status.success(), "make -C examples/c: {}", String::from_utf8_lossy(&out.stderr));
    });
}

/// A model file with the manual's crash, at quiescence only: the gate
/// cannot make a SIGKILL fall between two calls, so a counterexample that
/// crashes at a crash point is unfollowable past it.
fn model_file(name: &str) -> model_file::ModelFile {
    build();
    let mut f = model_file::read(&examples().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    f.model.config.crash_points = false;
    f
}

fn program(name: &str) -> PathBuf {
    build();
    examples().join("build").join(name)
}

/// A planted bug's model file's counterexample, through the gate.
fn bug_file(name: &str) -> Outcome {
    let f = model_file(name);
    counterexample(&f.model, &f.options, name)
}

// ---------------------------------------------------------------------------
// The example programs.

#[test]
#[ignore = "needs root: a private network namespace"]
fn counter_agrees_with_linux() {
    let started = Instant::now();
    let mut outcomes = Vec::new();
    // One client node, and two (whose connects at the start the gate
    // orders, as it starts the nodes in order); the checker's own clients,
    // timeouts in accept and in a client's read, a crash of the server.
    for nodes in [2, 3] {
        let mut c = Config::new(program("counter"), nodes);
        c.request = b"+".to_vec();
        // Written for the manual's `T`, as its model files are.
        c.timeout_byte = true;
        outcomes.extend(walks(&c, &format!("counter, {nodes} nodes"), 10, 10));
    }
    let t = summarize("counter", &outcomes, &[], started);
    assert_eq!(t.whole, t.schedules, "every walk is followed to its end");
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn register_agrees_with_linux() {
    let started = Instant::now();
    let early = bug_file("register-bug-early-ack.toml");
    let unsynced = bug_file("register-bug-unsynced-store.toml");
    reproduced(&early);
    reproduced(&unsynced);
    let mut outcomes = vec![early, unsynced];
    outcomes.extend(walks(&model_file("register.toml").model.config, "register.toml", 12, 10));
    for bug in ["register-bug-early-ack.toml", "register-bug-unsynced-store.toml"] {
        outcomes.extend(walks(&model_file(bug).model.config, bug, 4, 10));
    }
    summarize("register", &outcomes, &[], started);
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn election_agrees_with_linux() {
    let started = Instant::now();
    let twice = bug_file("election-bug-vote-twice.toml");
    let volatile = bug_file("election-bug-volatile-vote.toml");
    reproduced(&twice);
    reproduced(&volatile);
    let mut outcomes = vec![twice, volatile];
    outcomes.extend(walks(&model_file("election.toml").model.config, "election.toml", 12, 10));
    // Walk 8 of the vote-twice build shows a finding (a crashed
    // candidate's vote request, read on Linux, granted twice).
    outcomes.extend(walks(
        &model_file("election-bug-vote-twice.toml").model.config,
        "election-bug-vote-twice.toml",
        8,
        8,
    ));
    outcomes.extend(walks(
        &model_file("election-bug-volatile-vote.toml").model.config,
        "election-bug-volatile-vote.toml",
        4,
        10,
    ));
    summarize("election", &outcomes, &[], started);
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn logship_agrees_with_linux() {
    let started = Instant::now();
    // The bug needs a lost message: Linux follows its counterexample up to
    // the DROP.
    let delta = bug_file("logship-bug-send-delta.toml");
    stopped_at(&delta, 8, "a DROP");
    let mut outcomes = vec![delta];
    outcomes.extend(walks(&model_file("logship.toml").model.config, "logship.toml", 10, 10));
    let delta = model_file("logship-bug-send-delta.toml").model.config;
    outcomes.extend(walks(&delta, "logship-bug-send-delta.toml", 4, 10));
    summarize("logship", &outcomes, &[], started);
}

/// The value in `value` of evstore's data directory as a crash leaves it.
fn durable_value(w: &ProcessWorld) -> u32 {
    let disk = &w.nodes[0].disk;
    let Some(inode) = disk.names.get(b"value".as_slice()) else { return 0 };
    let text = disk.files.get(inode).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
    text.trim().parse().unwrap_or(0)
}

/// `tests/models/programs.rs`' evstore model, on `build`.
fn evstore(build: &str, budgets: Budgets, stream: bool) -> ProgramModel {
    let mut c = Config::new(program(build), 1);
    c.budgets = budgets;
    c.request = b"+1\n".to_vec();
    c.args = vec!["evstore-data".to_string()];
    c.workdir = Some(examples());
    c.data_dir = Some(examples().join("evstore-data"));
    c.stream = stream;
    // The manual's crash (see `model_file`).
    c.crash_points = false;
    ProgramModel::new(build, c).always("acked_increments_are_durable", |w| {
        let acks = w.replies.iter().filter(|(n, r)| *n == 0 && r == b"ok\n").count() as u32;
        durable_value(w) >= acks
    })
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn evstore_agrees_with_linux() {
    let started = Instant::now();
    let bfs = Options { search: Search::Bfs { depth_max: None }, ..Options::default() };
    // Both bugs need what no process on Linux does: a read of part of a
    // short write on loopback, and a crash that keeps the truncation of a
    // file and loses the write after it (a machine's crash, not a
    // process's). Linux follows each up to there.
    let frames = counterexample(
        &evstore(
            "evstore-BUG_ONE_READ_FRAMES",
            Budgets { crashes: 0, drops: 0, timeouts: 1, clients: 1, ..Default::default() },
            true,
        ),
        &bfs,
        "evstore-BUG_ONE_READ_FRAMES",
    );
    stopped_at(&frames, 4, "a write split or merged by the byte stream");
    let torn = counterexample(
        &evstore(
            "evstore-BUG_TRUNCATE_IN_PLACE",
            Budgets { crashes: 1, drops: 0, timeouts: 1, clients: 2, ..Default::default() },
            false,
        ),
        &bfs,
        "evstore-BUG_TRUNCATE_IN_PLACE",
    );
    // (Its counterexample takes the second client while node 0's accept
    // that does not wait is held, which Linux follows only as far as the
    // commit timer armed before it: a step before the crash that a
    // SIGKILL could not give anyway.)
    stopped_at(&torn, 7, "ends by itself");
    let mut outcomes = vec![frames, torn];
    // Every TIMEOUT of evstore is its timerfd, which Linux fires after a
    // real second: few walks.
    outcomes.extend(walks(&evstore("evstore", WALKS, false).config, "evstore", 3, 8));
    outcomes.extend(walks(
        &evstore("evstore-BUG_TRUNCATE_IN_PLACE", WALKS, false).config,
        "evstore-BUG_TRUNCATE_IN_PLACE",
        2,
        8,
    ));
    summarize("evstore", &outcomes, &[], started);
}

// ---------------------------------------------------------------------------
// Time as Linux keeps it (issue 27, item 4): the timeouts' regression
// programs (`cmc/tests/process_time.rs`), without the manual's `T`.

/// `examples/c/NAME.c` on `nodes` nodes with `timeouts` TIMEOUTs and
/// nothing else, as a program written for Linux.
fn untimed_config(name: &str, nodes: u8, timeouts: u8) -> Config {
    let mut c = Config::new(program(name), nodes);
    c.budgets = Budgets { timeouts, ..Budgets::default() };
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn the_timeouts_programs_agree_with_linux() {
    let started = Instant::now();
    // SO_RCVTIMEO, along process_time.rs' schedule: each TIMEOUT is the
    // receive timeout Linux ends after half a second.
    let rcvtimeo = [
        "TIMEOUT(0)",
        "ACCEPT(0, 0)",
        "TIMEOUT(0)",
        "TIMEOUT(0)",
        "TIMEOUT(0)",
        "TIMEOUT(0)",
        "DELIVER(0, 0.0)",
        "TIMEOUT(0)",
        "DELIVER(0, 0.0)",
    ];
    let rcvtimeo: Vec<ProcessAction> = rcvtimeo.iter().map(|t| t.parse().expect("a token")).collect();
    let mut engine = ProcessEngine::new(untimed_config("rcvtimeo", 1, 6)).expect("a valid model");
    let mut outcomes = vec![gate::schedule(&mut engine, "rcvtimeo", &rcvtimeo).expect("the gate runs")];
    // A program that sets no timeout: nothing times out, on either side.
    outcomes.extend(walks(&untimed_config("untimed", 2, 2), "untimed", 4, 8));
    // The lease under deadline order: the holder's 1-second term ends
    // before the grantor's 5-second wait, as on Linux (each walk waits
    // out both in real time: few walks).
    let mut lease = untimed_config("lease_order", 2, 2);
    lease.timeout_order = cmc::process::TimeoutOrder::Deadline { drift_ms: 0 };
    outcomes.extend(walks(&lease, "lease_order", 2, 6));
    let t = summarize("timeouts", &outcomes, &[], started);
    assert!(t.whole >= 1, "some schedule is followed to its end");
}

// ---------------------------------------------------------------------------
// The regression program of issue 27's crash points
// (`cmc/tests/process_crash_points.rs`): node 0 acknowledges in two
// writes, which Linux may hand node 1 in one read or in two; the gate
// follows them merged, having checked that both ways end in one world.

/// `examples/c/ackfirst.c` (`build`), as `process_crash_points.rs` runs
/// it: crash points on, one crash, Linux's timeouts.
fn ackfirst(build: &str) -> ProgramModel {
    let mut c = Config::new(program(build), 2);
    c.budgets = Budgets { crashes: 1, ..Budgets::default() };
    ProgramModel::new(build, c).always("acked_values_are_durable", |w| {
        let acked = w.nodes[1].state.get(1) == Some(&2);
        !acked || w.nodes[0].durable.as_deref().is_some_and(|d| d.contains(&7))
    })
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn the_crash_points_program_agrees_with_linux() {
    let started = Instant::now();
    // The bug's counterexample crashes node 0 between its acknowledgement
    // and its record. Linux cannot crash it there: node 0 runs on to
    // quiescence (RUN is the kernel's), and the CRASH falls after, so the
    // violation's world is not reached; everything followed agrees.
    // The gate's engines take `stream`: the checker then has the merged
    // read too, and the gate follows the two writes both ways.
    let streamed = |build: &str| {
        let mut c = ackfirst(build).config;
        c.stream = true;
        c
    };
    let name = "ackfirst-BUG_ACK_FIRST";
    let schedule = gate::counterexample(&ackfirst(name), &Options::default()).expect("a counterexample");
    let mut engine = ProcessEngine::new(streamed(name)).expect("a valid model");
    let bug = gate::schedule(&mut engine, &format!("{name}'s counterexample"), &schedule).expect("the gate runs");
    assert_eq!(bug.divergence, None, "{}", bug.line());
    assert_eq!(bug.reaches_end, Some(false), "{}", bug.line());
    let mut outcomes = vec![bug];
    outcomes.extend(walks(&streamed("ackfirst"), "ackfirst", 6, 6));
    outcomes.extend(walks(&streamed(name), name, 4, 6));
    let t = summarize("ackfirst", &outcomes, &[], started);
    assert!(t.whole >= 1, "some walk is followed to its end");
    // The acknowledgement's two writes were followed as one read: the
    // merged delivery is what lets the gate past them.
    let merged = outcomes.iter().filter(|o| o.followed.actions.iter().any(|a| a.to_string().ends_with(", +)"))).count();
    assert!(merged >= 1, "some schedule follows the acknowledgement's two writes as one read");
}

// ---------------------------------------------------------------------------
// The regression programs of issue 27's connections
// (`cmc/tests/process_tcp.rs`).

/// `examples/c/tcp.c` in `mode`, as `process_tcp.rs` runs it, with the
/// manual's crash.
fn tcp_config(mode: &str, budgets: Budgets) -> Config {
    let mut c = Config::new(program("tcp"), 2);
    c.args = vec![mode.to_string()];
    c.budgets = budgets;
    c.timeout_byte = true;
    c.crash_points = false;
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn the_connection_programs_agree_with_linux() {
    let started = Instant::now();
    let none = Budgets::default();
    // Each test of process_tcp.rs, along its own schedule (the DROP's is
    // left out: Linux never loses a byte a write accepted on loopback).
    let schedules: &[(&str, Budgets, &[&str])] = &[
        ("fin", none, &["ACCEPT(0, 1)", "DELIVER(1, 1.0)", "EOF(1, 1.0)"]),
        ("shutwr", none, &["ACCEPT(0, 1)", "DELIVER(1, 1.0)", "EOF(1, 1.0)", "DELIVER(0, 1.0)"]),
        ("shutrd", none, &["ACCEPT(0, 1)"]),
        ("epipe", none, &["ACCEPT(0, 1)", "EOF(1, 1.0)"]),
        ("sigpipe", none, &["ACCEPT(0, 1)", "EOF(1, 1.0)"]),
        ("nosignal", none, &["ACCEPT(0, 1)", "EOF(1, 1.0)"]),
        ("caught", none, &["ACCEPT(0, 1)", "EOF(1, 1.0)"]),
        ("reset", none, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "EOF(1, 1.0)"]),
        ("finrst", none, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)", "EOF(1, 1.0)", "EOF(1, 1.0)"]),
        ("peek", none, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "EOF(1, 1.0)"]),
        ("refused", none, &[]),
        ("late", Budgets { timeouts: 1, ..none }, &["TIMEOUT(1)"]),
        ("bind", none, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]),
        (
            "crash",
            Budgets { crashes: 1, ..none },
            &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "CRASH(0)", "DELIVER(1, 1.0)", "EOF(1, 1.0)"],
        ),
        // The crashed node is down when its peer redials: refused, on both.
        ("redial", Budgets { crashes: 1, ..none }, &["ACCEPT(0, 1)", "CRASH(0)", "EOF(1, 1.0)", "RESTART(0)"]),
    ];
    let mut outcomes = Vec::new();
    for (mode, budgets, tokens) in schedules {
        let schedule: Vec<ProcessAction> = tokens.iter().map(|t| t.parse().expect("a token")).collect();
        let mut engine = ProcessEngine::new(tcp_config(mode, *budgets)).expect("a valid model");
        let o = gate::schedule(&mut engine, &format!("tcp {mode}"), &schedule).expect("the gate runs");
        assert_eq!(o.followed.stopped, None, "tcp {mode}: Linux follows the test's schedule: {}", o.line());
        outcomes.push(o);
    }
    // And seeded walks of each mode, with the walks' budgets.
    for mode in ["fin", "shutwr", "epipe", "reset", "late", "bind", "crash", "midstream", "redial"] {
        outcomes.extend(walks(&tcp_config(mode, none), &format!("tcp {mode}"), 3, 8));
    }
    let t = summarize("tcp", &outcomes, &[], started);
    assert!(t.whole >= schedules.len(), "every test's schedule is followed to its end");
}

// ---------------------------------------------------------------------------
// The regression program of issue 26's objects inside a node
// (`cmc/tests/process_local.rs`): pipes, socketpairs and eventfds, which
// the checker keeps in the world, against the kernel's own.

/// `examples/c/local.c` in `mode` with `args`, on one node, as
/// `process_local.rs` runs it: a client's request `r`, the manual's `T`.
fn local_config(mode: &str, args: &[&str]) -> Config {
    let mut c = Config::new(program("local"), 1);
    c.args = std::iter::once(mode).chain(args.iter().copied()).map(str::to_string).collect();
    c.request = b"r".to_vec();
    c.timeout_byte = true;
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn the_local_objects_program_agrees_with_linux() {
    let started = Instant::now();
    let modes: &[(&str, &[&str])] = &[
        ("eventfd", &[]),
        ("pipe", &[]),
        ("pair", &["stream"]),
        ("pair", &["seqpacket"]),
        ("sigpipe", &["ignore"]),
        ("sigpipe", &["handler"]),
        ("sigpipe", &["default"]),
        ("emfile", &[]),
        ("poll", &[]),
        ("waker", &["poll"]),
        ("waker", &["epoll"]),
        ("memory", &[]),
        ("pingpong", &[]),
    ];
    let mut outcomes = Vec::new();
    for (mode, args) in modes {
        let label = format!("local {mode} {}", args.join(" "));
        outcomes.extend(walks(&local_config(mode, args), label.trim_end(), 3, 6));
    }
    // Epoll over those objects (`cmc/tests/process_edges.rs`): the ready
    // list's order, edge-triggered and one-shot interests, duplicates.
    let edges = ["local", "dup", "order", "wakes"];
    for mode in edges {
        let mut c = Config::new(program("edge"), 1);
        c.args = vec![mode.to_string()];
        outcomes.extend(walks(&c, &format!("edge {mode}"), 1, 0));
    }
    let t = summarize("local", &outcomes, &[], started);
    assert!(t.whole >= modes.len() + edges.len(), "each mode is followed to its end at least once");
}

/// `examples/c/ready.c` (`process_events.rs`'
/// `a_woken_poll_returns_what_arrived_before_it_ran`), the regression
/// program of the woken poll this gate found over `local.c`, is not
/// followed: node 1 writes "a" and "b" at its start, and whether "b" has
/// arrived when node 0 polls after reading "a" (both ready: it aborts) is
/// Linux's timing (9 runs in 10 natively). The gate sees the two writes
/// waiting together at node 0's end, where what one read or one poll
/// finds is Linux's timing, and stops at START, comparing nothing, rather
/// than race Linux; with `stream` too, after the ACCEPT, where one order
/// of the kernel's actions leaves node 0 woken with "a" received and "b"
/// on its way. Following needs no root: it is the checker's side alone.
#[test]
fn the_ready_program_is_not_followed_as_linuxs_timing_decides_it() {
    for how in ["poll", "epoll"] {
        for stream in [false, true] {
            let mut c = Config::new(program("ready"), 2);
            c.args = vec![how.to_string()];
            c.stream = stream;
            let mut engine = ProcessEngine::new(c).expect("a valid model");
            let f = cmc_conformance::follow::walk(&mut engine, 1, 4).expect("the checker runs it");
            let stop = f.stopped.as_ref().unwrap_or_else(|| panic!("{how}, stream {stream}: followed"));
            assert!(f.segments.is_empty(), "{how}, stream {stream}: stopped in START's segment: {stop}");
            assert!(stop.reason.contains("2 messages on their way to node 0's end"), "{how}, stream {stream}: {stop}");
            assert!(stop.reason.contains("one read may get all of them"), "{how}, stream {stream}: {stop}");
        }
    }
}

// ---------------------------------------------------------------------------
// The millisecond clock's regression program (`cmc/tests/process_time.rs`):
// `millis.c`, whose node 0 aborts on what Linux's clocks always give.

/// `examples/c/millis.c` in `mode`, two nodes, as `process_time.rs`' `linux`
/// makes it: `timeouts` TIMEOUTs, no manual `T`, crashes for "cpulife".
fn millis(mode: &str, timeouts: u8) -> ProgramModel {
    let mut c = untimed_config("millis", 2, timeouts);
    c.args = vec![mode.to_string()];
    ProgramModel::new(format!("millis {mode}"), c)
}

/// Each mode's counterexample (node 0 killed), and seeded walks. "cpulife"
/// is left out: whether a new life's CPU time is below what the crashed
/// one recorded is a race of two processes' CPU times natively (4 of 5
/// runs abort), which no schedule fixes. So is "over": START leaves node 0
/// in a 1 ms sleep, which on Linux ends, and node 0 aborts, before the
/// gate finds the nodes quiescent, so START's comparison sees Linux a step
/// ahead (the model's life "live", Linux's "killed by signal 6"): the gate
/// cannot hold a wait that short, though the two agree after its TIMEOUT.
/// "tick" is followed to its START:
/// node 0's poll and node 1's sleep each wait with a deadline, and on
/// Linux their clocks race.
#[test]
#[ignore = "needs root: a private network namespace"]
fn the_clock_program_agrees_with_linux() {
    let started = Instant::now();
    let modes: &[(&str, u8)] = &[
        ("tfd", 3),
        ("tick", 10),
        ("tfdget", 1),
        ("rtt", 1),
        ("cpu", 1),
        ("tfdleft", 1),
        ("tfdabs", 1),
        ("absnow", 1),
        ("selnow", 1),
        ("sent", 1),
    ];
    let mut outcomes = Vec::new();
    for &(mode, timeouts) in modes {
        let model = millis(mode, timeouts);
        let o = counterexample(&model, &Options::default(), &model.name);
        if mode == "tick" {
            // Node 1's 200 ms sleeps and node 0's poll for the time left of
            // its second: two deadlines, after START.
            stopped_after_start(&o, "TIMEOUT(1)", "each wait with a deadline: on Linux their clocks race");
        } else {
            // Node 0 aborts on Linux as in the model, at the same step.
            reproduced(&o);
        }
        outcomes.push(o);
        if mode != "tick" {
            outcomes.extend(walks(&model.config, &model.name, 2, 4));
        }
    }
    let t = summarize("millis", &outcomes, &[], started);
    assert!(t.whole >= modes.len() - 1, "each mode but tick is followed to its end");
}

// ---------------------------------------------------------------------------
// The regression programs of issue 27's crashes in starts
// (`cmc/tests/process_crash_points.rs`): `startvote.c`, `startwindow.c`.

/// `examples/c/NAME.c` in `mode` on two nodes with `crashes` crashes, as
/// `process_crash_points.rs` runs it: crash points on, Linux's timeouts.
fn start_crashes(name: &str, mode: &[&str], crashes: u8) -> ProgramModel {
    let mut c = Config::new(program(name), 2);
    c.args = mode.iter().map(|s| s.to_string()).collect();
    c.budgets = Budgets { crashes, ..Budgets::default() };
    ProgramModel::new(format!("{name} {}", mode[0]), c)
}

/// Asserts that Linux followed START's segment, agreeing, and stopped at
/// the schedule's next action, `action...`, for a reason containing
/// `reason`.
fn stopped_after_start(o: &Outcome, action: &str, reason: &str) {
    assert_eq!(o.divergence, None, "{}", o.line());
    assert_eq!((o.compared, o.followed.segments.len()), (1, 1), "START compared: {}", o.line());
    let stop = o.followed.stopped.as_ref().unwrap_or_else(|| panic!("followed: {}", o.line()));
    assert_eq!(stop.step, o.followed.segments[0].last + 1, "{}", o.line());
    assert!(stop.action.as_ref().is_some_and(|a| a.starts_with(action)), "{}", o.line());
    assert!(stop.reason.contains(reason), "{}", o.line());
}

/// A scratch working directory holding an empty data directory `data`,
/// which a program is given by that relative name: the checker runs it in
/// the working directory, the gate in a scratch copy of its own.
fn with_data_dir(c: &mut Config, name: &str) {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("conformance-{name}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("data")).expect("a data directory");
    let work = work.canonicalize().expect("a directory");
    c.data_dir = Some(work.join("data"));
    c.workdir = Some(work);
}

/// Each bug's counterexample crashes a node in its start, between two of
/// its calls, where a SIGKILL from outside cannot be made to fall: Linux
/// follows START (as it starts the nodes, to quiescence) and stops at the
/// crash. Walks crash the nodes at quiescence, and restart them.
/// `startvote.c` "clock" is not followed: node 2 reports the nanoseconds
/// of a clock it read, the logical clock's in the checker and the
/// machine's natively.
#[test]
#[ignore = "needs root: a private network namespace"]
fn the_start_crash_programs_agree_with_linux() {
    let started = Instant::now();
    let mut outcomes = Vec::new();
    let first = start_crashes("startvote", &["first"], 1);
    let mut disk = start_crashes("startvote", &["disk", "data"], 1);
    with_data_dir(&mut disk.config, "startvote-disk");
    let window = start_crashes("startwindow", &["window"], 1);
    let silent = start_crashes("startwindow", &["silent"], 1);
    for model in [&first, &disk, &window, &silent] {
        let o = counterexample(model, &Options::default(), &model.name);
        stopped_after_start(&o, "CRASH(", "in its start, between two of its calls");
        let stop = o.followed.stopped.as_ref().expect("stopped");
        assert!(stop.action.as_ref().is_some_and(|a| a.contains(", start ")), "{}", o.line());
        outcomes.push(o);
    }
    let durable = start_crashes("startvote", &["durable"], 1);
    for model in [&first, &durable, &disk, &window, &silent] {
        outcomes.extend(walks(&model.config, &model.name, 3, 6));
    }
    let t = summarize("start crashes", &outcomes, &[], started);
    assert!(t.whole >= 5, "each program's walks are followed to their end");
}

// ---------------------------------------------------------------------------
// The directory order's regression programs (`cmc/tests/process_dirs.rs`):
// `listing.c` and `segments.c`, not followed.

/// `examples/c/NAME.c` `data MODE` on `nodes` nodes, as `process_dirs.rs`
/// runs it: a fresh data directory, Linux's timeouts, the hash order.
fn listing_config(name: &str, mode: &str, nodes: u8, crashes: u8) -> Config {
    let mut c = Config::new(program(name), nodes);
    c.args = vec!["data".to_string(), mode.to_string()];
    c.budgets = Budgets { crashes, ..Budgets::default() };
    with_data_dir(&mut c, &format!("{name}-{mode}"));
    c
}

/// Every mode of `listing.c` and `segments.c` lists its data directory in
/// its start, whose names (`.` and `..` too, as ext4 hashes them) fall
/// more than one way: START takes way 0, where Linux's order is its file
/// system's hash, which the checker cannot know (nor this file system's
/// seed, made at `mkfs`). The gate stops at START, comparing nothing,
/// rather than compare the checker's order with the host's; so does a
/// counterexample that begins with the start's choice (segments "last":
/// its first life's listing). Following needs no root.
#[test]
fn the_listing_programs_are_not_followed_as_the_file_systems_hash_decides_them() {
    let mut configs = Vec::new();
    for mode in ["skipdots", "add", "again"] {
        configs.push(listing_config("listing", mode, 1, 0));
    }
    configs.push(listing_config("listing", "listenfirst", 2, 0));
    for mode in ["last", "max"] {
        configs.push(listing_config("segments", mode, 1, 1));
    }
    for c in configs {
        let label = format!("{} {}", c.program.display(), c.args[1]);
        let mut engine = ProcessEngine::new(c.clone()).expect("a valid model");
        let f = cmc_conformance::follow::walk(&mut engine, 1, 4).expect("the checker runs it");
        let stop = f.stopped.as_ref().unwrap_or_else(|| panic!("{label}: followed"));
        assert!(f.segments.is_empty(), "{label}: stopped in START's segment: {stop}");
        assert_eq!(stop.step, 0, "{label}: {stop}");
        assert!(stop.reason.contains("node 0's listing 1 of its data directory in its start"), "{label}: {stop}");
        assert!(stop.reason.contains("START took way 0"), "{label}: {stop}");
    }
    let c = listing_config("segments", "last", 1, 1);
    let schedule = gate::counterexample(&ProgramModel::new("segments last", c.clone()), &Options::default())
        .expect("a counterexample");
    assert!(schedule.iter().any(|a| a.to_string().starts_with("ORDER")), "{schedule:?}");
    let mut engine = ProcessEngine::new(c).expect("a valid model");
    let f = cmc_conformance::follow::follow(&mut engine, &schedule).expect("the checker runs it");
    let stop = f.stopped.as_ref().expect("stopped");
    assert_eq!((stop.step, f.segments.len(), f.left), (0, 0, schedule.len()), "{stop}");
}

// ---------------------------------------------------------------------------
// The regression programs of issue 26 (`cmc/tests/process_escapes.rs`,
// `process_lookalike.rs`, `process_lookalike3.rs`): `escape.c`,
// `lookalike.c`, `lookalike3.c`, in the modes where the checker answers as
// Linux does from the world.
//
// Not followed, as the checker refuses the call by name (an error at
// START, by design): escape's signalfd, inotify, userfaultfd, memfd,
// rlimit-cpu, shared-ro, handoff, handoff-accept, pending,
// preinit-pending, statfs, proc-stat, int80, x32, dumpable, stdin-flags,
// record-flags and datafile's mmap, fstatfs and dup; lookalike's chdirproc,
// raise63 and peek, lookalike3's tsc, cpuid, auxv, getauxv, logpeek and
// thp. Not compared, as they report what the checker makes its own by
// design (a node's machine: virtual pids, the checker's host names and
// times, AT_RANDOM from the node's random stream, no ASLR): escape's host
// and datafile answers (its persona ADDR_NO_RANDOMIZE and pgid 1000),
// lookalike's incarnation, procnlink and procself, and `early.c`, whose
// whole state is its canary, clocks and entropy. Nor stdout-offset and
// stdout-written: a node's stdout is /dev/null in the checker and its log
// file in the gate.

/// `examples/c/NAME.c` with `args` on one node, as the issue 26 tests run
/// it: a request `r` (`e` for dfree), the manual's `T`; `data` among the
/// args names a fresh data directory.
fn escape_config(name: &str, args: &[&str]) -> Config {
    let mut c = Config::new(program(name), 1);
    c.args = args.iter().map(|s| s.to_string()).collect();
    c.request = if args[0] == "dfree" { b"e".to_vec() } else { b"r".to_vec() };
    c.timeout_byte = true;
    if args.contains(&"data") {
        with_data_dir(&mut c, &format!("{name}-{}", args[0]));
    }
    c
}

#[test]
#[ignore = "needs root: a private network namespace"]
fn the_escape_programs_agree_with_linux() {
    let started = Instant::now();
    let modes: &[(&str, &[&str])] = &[
        ("escape", &["pipe"]),
        ("escape", &["offset"]),
        ("escape", &["eventfd"]),
        ("escape", &["socketpair"]),
        ("escape", &["rlimit-own"]),
        ("escape", &["clock-id"]),
        ("escape", &["emfile"]),
        ("escape", &["canary", "data"]),
        ("escape", &["fionread", "data"]),
        ("lookalike", &["dfree"]),
        ("lookalike", &["fdcache"]),
        ("lookalike", &["fresh"]),
        ("lookalike", &["segvnest"]),
        ("lookalike", &["segvmask"]),
        ("lookalike", &["raisepid"]),
        ("lookalike", &["cpu"]),
        ("lookalike", &["edge"]),
        ("lookalike", &["smallalt"]),
        ("lookalike3", &["fdfile", "data"]),
        ("lookalike3", &["fdsocket"]),
        ("lookalike3", &["fdpipe"]),
        ("lookalike3", &["pidlink"]),
        ("lookalike3", &["procfd"]),
        ("lookalike3", &["hugepage"]),
        ("lookalike3", &["pidproc"]),
        ("lookalike3", &["getcpuid"]),
    ];
    let mut outcomes = Vec::new();
    // The tests' counterexamples: the node killed, on Linux as in the model.
    let bugs: &[(&str, &[&str], Budgets)] = &[
        ("escape", &["pipe"], Budgets { clients: 2, timeouts: 1, ..Budgets::default() }),
        ("escape", &["offset"], Budgets { clients: 2, timeouts: 1, ..Budgets::default() }),
        ("lookalike", &["dfree"], Budgets { clients: 1, ..Budgets::default() }),
        ("lookalike", &["fdcache"], Budgets::default()),
        ("lookalike", &["segvnest"], Budgets { clients: 1, ..Budgets::default() }),
    ];
    for (name, args, budgets) in bugs {
        let mut c = escape_config(name, args);
        c.budgets = *budgets;
        let label = format!("{name} {}", args.join(" "));
        let o = counterexample(&ProgramModel::new(&label, c), &Options::default(), &label);
        reproduced(&o);
        outcomes.push(o);
    }
    for (name, args) in modes {
        let label = format!("{name} {}", args.join(" "));
        outcomes.extend(walks(&escape_config(name, args), &label, 2, 4));
    }
    let t = summarize("issue 26", &outcomes, &[], started);
    assert!(t.whole >= modes.len(), "each mode is followed to its end at least once");
}

// ---------------------------------------------------------------------------
// The teeth.

/// `conformance_probe` in `mode`, with one timeout: TIMEOUT(0) makes node
/// 0 dial node 1.
fn probe(mode: &str) -> Config {
    let mut c = Config::new(program("conformance_probe"), 2);
    c.budgets = Budgets { crashes: 0, drops: 0, timeouts: 1, clients: 0, ..Default::default() };
    // Its timer is a TIMEOUT in accept: the manual's `T`.
    c.timeout_byte = true;
    c.args = vec![mode.to_string()];
    c
}

fn probe_outcome(mode: &str) -> (Outcome, ProcessWorld) {
    let c = probe(mode);
    let mut engine = ProcessEngine::new(c).expect("a valid model");
    let timeout: ProcessAction = "TIMEOUT(0)".parse().expect("a token");
    let o = gate::schedule(&mut engine, &format!("conformance_probe {mode}"), &[timeout]).expect("the gate runs");
    println!("{}", o.line());
    let last = o.followed.worlds.last().expect("START at least").clone();
    (o, last)
}

/// The first divergence of `o`'s run with its checker worlds replaced by
/// `followed`'s.
fn first_divergence(o: &Outcome, followed: &cmc_conformance::follow::Followed) -> Option<Divergence> {
    (0..o.observed.len()).find_map(|k| {
        compare::segment(followed, k, &o.observed[k]).or_else(|| compare::replies(followed, k, &o.observed))
    })
}

/// Issue 27: "a connect to a port nobody listens on succeeds" was the
/// model's answer; Linux refuses it. Node 1 never listens; TIMEOUT(0)
/// makes node 0 dial it and report the result ({0, DIALLED, CONNECTED or
/// REFUSED}). The model now refuses it and the gate agrees; the teeth: the
/// same run with the checker's world doctored to the old answer (a
/// connect that never fails) is a divergence at step 1, TIMEOUT(0), node
/// 0, against what Linux did.
#[test]
#[ignore = "needs root: a private network namespace"]
fn a_connect_to_a_node_that_never_listens_is_refused_on_linux() {
    let (o, world) = probe_outcome("refused");
    const REFUSED: &[u8] = &[0, 3, 2];
    assert_eq!(world.nodes[0].state, REFUSED, "the model refuses the connect");
    assert_eq!(o.divergence, None, "the model refuses the connect, as Linux does: {}", o.line());
    let mut f = o.followed.clone();
    f.worlds[1].nodes[0].state = vec![0, 3, 1];
    let d = first_divergence(&o, &f).expect("the doctored connect diverges");
    assert_eq!((d.step, d.action.as_str(), d.node, d.what), (1, "TIMEOUT(0)", Some(0), "state"), "{d}");
    assert_eq!(d.model, "000301 written at this step", "{d}");
    assert_eq!(d.linux, "only [000302] written in this segment", "{d}");
}

/// Issue 27: "close() never reaches the peer" was the model's answer.
/// Node 0 writes "hi" to node 1 and closes; node 1 reads until the end
/// ({1, phase, bytes}: READING 4, END 5). On Linux node 1 reads "hi" and
/// then the end, and so does the model now (the FIN by its own EOF); the
/// teeth: the checker's world doctored to the old answer (node 1 reading on
/// after "hi") is a divergence at the step that brought the FIN, node 1.
#[test]
#[ignore = "needs root: a private network namespace"]
fn a_close_reaches_the_peer_on_linux() {
    let (o, world) = probe_outcome("fin");
    const END: &[u8] = &[1, 5, 2];
    assert_eq!(world.nodes[1].state, END, "the model ends node 1's read");
    assert_eq!(o.divergence, None, "the model ends node 1's read, as Linux does: {}", o.line());
    let ended = o.followed.actions.iter().rposition(|a| a.to_string() == "EOF(1, 0.0)").expect("the FIN") + 1;
    let mut f = o.followed.clone();
    for w in &mut f.worlds[ended..] {
        w.nodes[1].state = vec![1, 4, 2];
    }
    let d = first_divergence(&o, &f).expect("the doctored read diverges");
    assert_eq!((d.step, d.action.as_str(), d.node, d.what), (ended, "EOF(1, 0.0)", Some(1), "state"), "{d}");
    assert_eq!((d.model.as_str(), d.linux.as_str()), ("010402", "010502"), "{d}");
}

/// The model's answers of the two probes above, since issue 27: refused,
/// and the end read after "hi", as Linux answers (they were connected, and
/// waiting after "hi"). The two above check the gate agrees with them.
#[test]
fn the_models_answers_that_the_probe_shows_are_linuxs() {
    for (mode, node, today) in [("refused", 0, [0u8, 3, 2]), ("fin", 1, [1, 5, 2])] {
        let mut engine = ProcessEngine::new(probe(mode)).expect("a valid model");
        let timeout: ProcessAction = "TIMEOUT(0)".parse().expect("a token");
        let mut none = std::collections::VecDeque::new();
        let mut f = cmc_conformance::follow::Follower::start(&mut engine, &mut none).expect("starts");
        f.external(timeout, &mut none).expect("followed");
        assert_eq!(f.world().nodes[node].state, today, "{mode}: the model's answer changed (issue 27?)");
    }
}

/// The control: node 1 listens, node 0's connection stays open and
/// silent; the model and Linux agree.
#[test]
#[ignore = "needs root: a private network namespace"]
fn the_probe_agrees_where_the_model_is_right() {
    let (o, world) = probe_outcome("listening");
    assert_eq!(o.divergence, None, "{}", o.line());
    assert_eq!(world.nodes[0].state, [0, 3, 1], "connected");
    assert_eq!(world.nodes[1].state, [1, 4, 0], "reading, nothing read");
    assert_eq!(o.compared, 2, "START and TIMEOUT(0)'s segment");
}

/// The comparison's teeth on a real run: the register's planted bug
/// followed natively agrees; the same checker trace doctored at one step
/// (a node's state, its durable record, a reply) is a divergence named at
/// that step and node, against what Linux really did.
#[test]
#[ignore = "needs root: a private network namespace"]
fn a_doctored_checker_trace_diverges_at_the_doctored_step() {
    let o = bug_file("register-bug-unsynced-store.toml");
    assert_eq!(o.divergence, None, "{}", o.line());
    let first = |f: &cmc_conformance::follow::Followed| {
        (0..o.observed.len())
            .find_map(|k| compare::segment(f, k, &o.observed[k]).or_else(|| compare::replies(f, k, &o.observed)))
    };
    assert_eq!(first(&o.followed), None);
    // Every step whose world changes a node's state, doctored in turn.
    let mut doctored = 0;
    for step in 1..o.followed.steps() {
        for n in 0..3 {
            let w = &o.followed.worlds[step];
            if w.nodes[n].state == o.followed.worlds[step - 1].nodes[n].state || w.nodes[n].state.is_empty() {
                continue;
            }
            let mut f = o.followed.clone();
            f.worlds[step].nodes[n].state[0] ^= 0x80;
            let d = first(&f).unwrap_or_else(|| panic!("step {step}, node {n} doctored: no divergence"));
            assert_eq!((d.step, d.node, d.what), (step, Some(n as u8), "state"), "step {step}, node {n}: {d}");
            doctored += 1;
        }
    }
    assert!(doctored >= 5, "{doctored} doctored steps");
    // The durable record of the replica that stored the write, and the
    // coordinator's acknowledgement to the client.
    let stored = (1..o.followed.steps()).find(|&s| o.followed.worlds[s].nodes[0].durable.is_some()).expect("stored");
    let mut f = o.followed.clone();
    f.worlds[stored].nodes[0].durable = Some(vec![9, 9]);
    let d = first(&f).expect("a divergence");
    assert_eq!((d.step, d.node, d.what), (stored, Some(0), "durable record"), "{d}");
    let acked = (1..o.followed.steps()).find(|&s| !o.followed.worlds[s].replies.is_empty()).expect("acknowledged");
    let mut f = o.followed.clone();
    for w in &mut f.worlds[acked..] {
        w.replies[0].1 = b"F\x01\x00".to_vec();
    }
    let d = first(&f).expect("a divergence");
    assert_eq!((d.step, d.node, d.what), (acked, Some(0), "replies to clients"), "{d}");
}

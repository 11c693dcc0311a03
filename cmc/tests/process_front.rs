//! The process front end on real programs (`examples/c`): state reports,
//! every action, determinism, and each misbehaviour reported as an error.
#![cfg(target_os = "linux")]

mod process_support;

use std::time::Duration;

use cmc::process::supervisor::{EPOCH_BASE, VIRTUAL_PID_BASE, random_stream};
use cmc::process::{Blocked, Config, Life, ProcessEngine, ProcessError, ProcessExplorer, ProcessWorld, ProgramModel};
use cmc::{NoControl, Options, Search, Verdict, explore};
use process_support::{actions, config, enabled, preload, program, program_with, replay};

// The counter's phases (examples/c/counter.c).
const ACCEPTING: u8 = 1;
const SERVING: u8 = 2;
const SENT: u8 = 3;
const DONE: u8 = 4;

fn counter(crashes: u8, drops: u8, timeouts: u8, clients: u8) -> Config {
    let mut c = config("counter", 2);
    c.budgets = cmc::process::Budgets { crashes, drops, timeouts, clients, thread_switches: 0 };
    c.request = b"+".to_vec();
    c
}

#[test]
fn the_initial_world_holds_each_nodes_reported_state() {
    let _serial = process_support::serial();
    let w = replay(&counter(0, 0, 0, 0), &[]);
    assert_eq!(w.nodes[0].state, [0, ACCEPTING, 0, 0]);
    assert_eq!(w.nodes[1].state, [1, SENT, 0, 0]);
    assert!(matches!(w.nodes[0].blocked, Blocked::Accept { .. }));
    assert!(matches!(w.nodes[1].blocked, Blocked::Read { .. }));
    assert_eq!(w.nodes[0].durable, None, "nothing made durable yet");
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)"], "only the client's connect can go on");
}

#[test]
fn a_request_and_its_reply_end_in_eof() {
    let _serial = process_support::serial();
    let c = counter(0, 0, 0, 0);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [0, SERVING, 1, 0]);
    assert_eq!(w.nodes[0].durable.as_deref(), Some(&[1u8][..]));
    assert_eq!(enabled(&w), ["DELIVER(1, 1.0)"]);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)"]);
    assert_eq!(w.nodes[1].state, [1, DONE, 1, 0], "the client read \"ok\" and the count");
    assert_eq!(w.nodes[1].life, Life::Exited(0));
    assert_eq!(enabled(&w), ["EOF(0, 1.0)"], "the client is gone and the connection drained");
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "EOF(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [0, ACCEPTING, 1, 0]);
    assert!(w.conns.is_empty(), "both ends are done: the connection is gone");
    assert_eq!(enabled(&w), Vec::<String>::new(), "nothing left to do");
}

#[test]
fn a_crashed_node_restarts_and_recovers_its_durable_record() {
    let _serial = process_support::serial();
    let c = counter(1, 0, 0, 0);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "CRASH(0)"]);
    assert_eq!(w.crashes, 0);
    assert_eq!(w.nodes[0].life, Life::Down, "down until its RESTART");
    assert!(w.nodes[0].state.is_empty(), "no state while down");
    // What the server wrote before the crash is in the client's kernel
    // already: it arrives, and the reset after it.
    assert_eq!(enabled(&w), ["DELIVER(1, 1.0)", "RESTART(0)"], "the reply outlives the crash");
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "CRASH(0)", "RESTART(0)"]);
    assert_eq!(w.nodes[0].state, [0, ACCEPTING, 1, 0], "count 1 read back from fd 193");
    assert_eq!(w.nodes[0].life, Life::Live);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "CRASH(0)", "DELIVER(1, 1.0)"]);
    assert_eq!(w.nodes[1].state, [1, DONE, 1, 0], "the client read \"ok\" and the count");
}

#[test]
fn a_client_request_is_answered_into_the_ghost_log() {
    let _serial = process_support::serial();
    let c = counter(0, 0, 0, 1);
    let w = replay(&c, &[]);
    // Node 1, the counter's client, does not listen: a client of it would
    // be refused, and nothing would happen.
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "CLIENT(0)"]);
    let w = replay(&c, &["CLIENT(0)"]);
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "ACCEPT(0, client)"], "two dialers race");
    let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    assert_eq!(w.replies, vec![(0, b"ok\x01".to_vec())]);
    assert_eq!(w.nodes[0].clients_left, 0);
}

#[test]
fn a_timeout_wakes_a_read_with_t_and_an_accept_with_a_timer_connection() {
    let _serial = process_support::serial();
    let c = counter(0, 0, 2, 0);
    let w = replay(&c, &["TIMEOUT(1)"]);
    assert_eq!(w.nodes[1].state, [1, DONE, b'T', 0]);
    assert_eq!(w.clock, 1000);
    let w = replay(&c, &["TIMEOUT(0)"]);
    assert_eq!(w.nodes[0].state, [0, ACCEPTING, 0, 1], "read 'T' from the timer connection, closed it");
    assert_eq!(w.clock, 1000);
    assert_eq!(w.nodes[0].timer_conns, 1);
    assert_eq!(w.timeouts, 1);
}

#[test]
fn a_drop_loses_the_oldest_message() {
    let _serial = process_support::serial();
    let c = counter(0, 1, 0, 0);
    let w = replay(&c, &[]);
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "DROP(1.0, 0)"]);
    // The loss resets the connection, as TCP's would end: the client
    // waiting for its answer reads ECONNRESET (EOF), and the server may
    // still accept it (a reset connection waiting at a listener is still
    // accepted on Linux), then reads ECONNRESET.
    let w = replay(&c, &["DROP(1.0, 0)"]);
    assert_eq!(enabled(&w), ["EOF(1, 1.0)", "ACCEPT(0, 1)"]);
    let w = replay(&c, &["DROP(1.0, 0)", "EOF(1, 1.0)"]);
    assert_eq!(w.nodes[1].state, [1, DONE, b'?', 0], "read -1: ECONNRESET");
    let w = replay(&c, &["DROP(1.0, 0)", "ACCEPT(0, 1)"]);
    assert_eq!(w.nodes[0].state, [0, ACCEPTING, 0, 0], "read ECONNRESET, closed it, accepts again");
}

/// Issue 10, 1d: a node that dials itself holds both ends of one
/// connection, so the node a message travels toward is the same in both
/// directions. DROP named only that node: the two drops got one token, the
/// loss of the message toward the dialling end was never explored, and
/// BFS counted the duplicate as generated.
#[test]
fn a_node_that_dials_itself_can_lose_a_message_in_either_direction() {
    let _serial = process_support::serial();
    let mut c = config("probe", 1);
    c.args = vec!["selfdial".to_string()];
    c.budgets.drops = 1;
    let label = cmc::process::Label { kind: cmc::process::ConnKind::Node, node: 0, k: 0 };
    let queues = |w: &ProcessWorld| {
        let conn = &w.conns[&label];
        (conn.to_target.iter().cloned().collect::<Vec<_>>(), conn.to_dialer.iter().cloned().collect::<Vec<_>>())
    };
    let w = replay(&c, &["ACCEPT(0, 0)"]);
    assert_eq!(queues(&w), (vec![b"d".to_vec()], vec![b"a".to_vec()]), "one message each way");
    assert_eq!(enabled(&w), ["DELIVER(0, 0.0)", "DROP(0.0, 0, target)", "DROP(0.0, 0, dialer)"]);
    // A drop resets the connection: what travelled toward that end is lost,
    // what travels the other way still arrives, then the reset.
    let w = replay(&c, &["ACCEPT(0, 0)", "DROP(0.0, 0, target)"]);
    assert_eq!(queues(&w), (vec![], vec![b"a".to_vec()]), "lost toward the accepted end");
    assert_eq!(enabled(&w), ["EOF(0, 0.0)"], "the accepted end's read ends: ECONNRESET");
    let w = replay(&c, &["ACCEPT(0, 0)", "DROP(0.0, 0, dialer)"]);
    assert_eq!(queues(&w), (vec![b"d".to_vec()], vec![]), "lost toward the dialling end");
    assert_eq!(enabled(&w), ["DELIVER(0, 0.0)"]);

    // Start, ACCEPT, then one world per action of the three (DELIVER, and a
    // drop each way); after DELIVER, the second read's DELIVER (the node
    // exits) or its drop (then its EOF); after the drop toward the accepted
    // end, its EOF, then the "a" still travelling toward the dialling end;
    // after the drop toward the dialling end, DELIVER of "d" (the second
    // read then ends at once, the node exits): 9 distinct worlds, 10
    // generated, 4 deep.
    let model = ProgramModel::new("selfdial", c);
    let options = Options { search: Search::Bfs { depth_max: None }, ..Options::default() };
    let r = explore(ProcessExplorer::new(&model).expect("valid model"), &options, &mut NoControl);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (9, 10, 4), "{}", r.summary());
}

#[test]
fn an_action_that_is_not_enabled_is_an_error() {
    let _serial = process_support::serial();
    let mut e = ProcessEngine::new(counter(0, 0, 0, 0)).expect("valid");
    let err = e.replay(&actions(&["DELIVER(0, 1.0)"])).expect_err("not enabled");
    assert!(matches!(err, ProcessError::NotEnabled { .. }), "{err}");
}

fn encode(w: &ProcessWorld) -> (Vec<u8>, u128) {
    let mut buf = Vec::new();
    let fp = ProcessEngine::fingerprint(w, &mut buf);
    (buf, fp)
}

#[test]
fn the_same_replay_gives_the_same_bytes_and_fingerprints() {
    let _serial = process_support::serial();
    let c = counter(1, 1, 1, 2);
    let tokens = [
        "CLIENT(0)",
        "ACCEPT(0, 1)",
        "DELIVER(0, 1.0)",
        "CRASH(0)",
        "RESTART(0)",
        "CLIENT(0)",
        "ACCEPT(0, client)",
        "DELIVER(0, c0.1)",
        "TIMEOUT(1)",
    ];
    // With the RUNs of the crash points between them.
    let prefix = process_support::run_on(&c, &tokens).1;
    let mut e = ProcessEngine::new(c.clone()).expect("valid");
    let mut first = Vec::new();
    for i in 0..=prefix.len() {
        first.push(encode(&e.replay(&prefix[..i]).expect("replays")));
    }
    let mut again = ProcessEngine::new(c).expect("valid");
    for (i, want) in first.iter().enumerate() {
        let got = encode(&again.replay(&prefix[..i]).expect("replays"));
        assert_eq!(&got, want, "replay of {} actions", i);
    }
    // Extending the running processes gives what a fresh replay gives.
    let mut stepwise = ProcessEngine::new(counter(1, 1, 1, 2)).expect("valid");
    stepwise.initial().expect("starts");
    let all = prefix;
    for i in 0..all.len() {
        let w = stepwise.apply(&all[..i], &all[i]).expect("applies");
        assert_eq!(encode(&w), first[i + 1], "apply of action {i}");
    }
    assert_eq!(stepwise.stats().replays, 1, "applying in order never restarts");
}

#[test]
fn clock_randomness_and_heap_addresses_are_the_same_on_every_run() {
    let _serial = process_support::serial();
    let c = config("probe", 2);
    let a = replay(&c, &[]);
    let b = replay(&c, &[]);
    for n in 0..2 {
        let s = &a.nodes[n].state;
        assert_eq!(s.len(), 64, "node {n} reported its probe");
        assert_eq!(s, &b.nodes[n].state, "node {n} saw the same values twice");
        let word = |i: usize| u64::from_ne_bytes(s[8 * i..8 * i + 8].try_into().unwrap());
        assert_eq!(word(0), EPOCH_BASE as u64, "time() is the logical clock");
        // A nanosecond more for each read of a clock before.
        assert!(word(1) < 1_000, "CLOCK_MONOTONIC starts at 0");
        let real = word(2) - EPOCH_BASE as u64 * 1_000_000_000;
        assert!(real > word(1) && real < 1_000, "timespec_get goes through the patched vDSO, read after");
        assert_eq!(word(3), EPOCH_BASE as u64 * 1_000_000, "gettimeofday");
        // The stream's bytes go, in turn, to the life's AT_RANDOM, the
        // probe's getrandom and /dev/urandom, and glibc's malloc (its
        // tcache key): the probe's 16 are next to each other in it.
        let used = a.nodes[n].random_used;
        let drawn = random_stream(n as u8, 0, used as usize);
        let at = drawn.windows(16).position(|w| w == &s[32..48]);
        assert!(at.is_some(), "getrandom and /dev/urandom draw the node's stream: {:02x?}", &s[32..48]);
        assert_ne!(word(6), 0, "malloc serves memory");
        let pid = u32::from_ne_bytes(s[56..60].try_into().unwrap());
        assert_eq!(pid as i64, VIRTUAL_PID_BASE + n as i64, "getpid() is virtual");
    }
    assert_ne!(a.nodes[0].state[32..], a.nodes[1].state[32..], "each node has its own stream");
}

/// Each life of a node is a process of its own, with a pid of its own, as
/// on Linux: node 0's pid is 1000 in its first life, 1008 after one
/// RESTART, 1016 after two; node 1's stays 1001. Every life had 1000 (the
/// review's `pidlife`, a node that keeps its pid durably and takes a
/// restart's "new incarnation" path where it differs, passed: natively 10
/// of 10 runs abort after `kill -9` and a restart).
#[test]
fn each_life_of_a_node_has_a_pid_of_its_own() {
    let _serial = process_support::serial();
    let mut c = config("probe", 2);
    c.budgets.crashes = 2;
    let pid = |w: &cmc::process::ProcessWorld, n: usize| {
        u32::from_ne_bytes(w.nodes[n].state[56..60].try_into().unwrap()) as i64
    };
    let w = replay(&c, &["CRASH(0)", "RESTART(0)"]);
    assert_eq!((pid(&w, 0), pid(&w, 1)), (VIRTUAL_PID_BASE + 8, VIRTUAL_PID_BASE + 1));
    assert_eq!(w.pid(0), VIRTUAL_PID_BASE + 8);
    let w = replay(&c, &["CRASH(0)", "RESTART(0)", "CRASH(0)", "RESTART(0)"]);
    assert_eq!(pid(&w, 0), VIRTUAL_PID_BASE + 16);
    let once = replay(&c, &["CRASH(0)", "RESTART(0)"]);
    let never = replay(&c, &[]);
    let word = |w: &cmc::process::ProcessWorld, i: usize| w.nodes[0].state[8 * i..8 * i + 8].to_vec();
    assert_eq!(word(&once, 0), word(&never, 0), "time() is the logical clock's");
    let mono = |w: &cmc::process::ProcessWorld| u64::from_ne_bytes(word(w, 1).try_into().unwrap());
    assert!(mono(&once) > mono(&never), "the monotonic clock runs on across its lives");
}

fn probe_error(mode: &str, stall: Duration) -> ProcessError {
    let mut c = config("probe", 1);
    c.args = vec![mode.to_string()];
    c.stall_timeout = stall;
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial().expect_err(mode)
}

/// Issue 11, item 7, and issue 27, item 1: a connect to a port nothing
/// listens on is refused, as Linux refuses it; the probe gives up and
/// exits, so its start failed, which is an error (nothing of it would be
/// checked), never a pass. A dial to another host, a bind to another
/// host's address or to port 0, and a socket the checker does not model,
/// are errors naming node and call.
#[test]
fn a_port_or_socket_the_checker_cannot_answer_is_an_error_not_an_errno() {
    let _serial = process_support::serial();
    let long = Duration::from_secs(10);
    let mut c = config("probe", 1);
    c.args = vec!["nowhere".to_string()];
    let r = explore(
        ProcessExplorer::new(&ProgramModel::new("nowhere", c)).expect("valid"),
        &Options::default(),
        &mut NoControl,
    );
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    let reason = r.reason.unwrap_or_default();
    assert!(
        reason.contains("node 0: exited with status 5 before the search's first action"),
        "refused, it gave up: {reason}"
    );
    let err = probe_error("elsewhere", long);
    assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call, .. } if call == "connect"), "{err}");
    assert!(err.to_string().contains("10.0.0.1:20000"), "{err}");
    // A bind to another host's address, or to a port the kernel would
    // choose: natively EADDRNOTAVAIL on this machine, and a port of
    // Linux's choosing; the model answers neither.
    for (mode, what) in [("bindelsewhere", "to 10.0.0.1"), ("bindzero", "to port 0 at 127.0.0.1")] {
        let err = probe_error(mode, long);
        assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call, .. } if call == "bind"), "{mode}: {err}");
        assert!(err.to_string().contains(what), "{mode}: {err}");
    }
    for (mode, what) in [("udp", "SOCK_DGRAM"), ("inet6", "AF_INET6")] {
        let err = probe_error(mode, long);
        assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call, .. } if call == "socket"), "{mode}: {err}");
        assert!(err.to_string().contains(what), "{mode}: {err}");
    }
}

/// Issue 11, item 7: a search that would check nothing is an error, not a
/// pass: a node that exits with a non-zero status before the first action
/// (its start failed), or every node exited at START. A node that exits 0
/// while another runs on is a node that finished.
#[test]
fn a_search_with_nothing_to_check_is_an_error_not_a_pass() {
    let _serial = process_support::serial();
    let search = |nodes: u8, args: &[&str]| {
        let mut c = config("probe", nodes);
        c.args = args.iter().map(|a| a.to_string()).collect();
        let model = ProgramModel::new("probe", c);
        explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
    };
    let r = search(2, &["exit", "3"]);
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    let reason = r.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("node 0: exited with status 3 before the search's first action"), "{reason}");
    let r = search(1, &["exit", "0"]);
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.reason.as_deref().unwrap_or_default().contains("every node exited at START"), "{}", r.to_text());
    // Node 0 exits 0, node 1 waits in accept: a world to check.
    let r = search(2, &["exit", "0"]);
    assert_eq!((r.verdict, r.distinct_states), (Verdict::Pass, 1), "{}", r.to_text());
}

/// Every blocking call is notified (default-deny), so a node can stall only
/// by never waiting: a loop without calls, or one on calls the checker
/// answers at once. Issue 26, class 5: a node spinning on a non-blocking
/// `accept`'s EAGAIN hung the search until a time cap (every answer reset
/// the stall timeout).
#[test]
fn a_node_that_never_waits_is_an_error_naming_it() {
    let _serial = process_support::serial();
    // One second, not ten, to keep the suite fast; long enough that a
    // loaded machine does not catch the node still starting up.
    for mode in ["busy", "spin-accept"] {
        let err = probe_error(mode, Duration::from_secs(1));
        let ProcessError::Stall { node, seconds, .. } = &err else { panic!("{mode}: {err}") };
        assert_eq!(*node, 0, "{err}");
        assert!(*seconds >= 1.0, "{err}");
        assert!(err.to_string().starts_with("node 0: ran for"), "{err}");
    }
    let err = probe_error("busy", Duration::from_secs(1));
    assert!(matches!(&err, ProcessError::Stall { call, .. } if call.contains("busy loop")), "{err}");
}

/// `sigsuspend` waits for a signal, and none comes to a node from outside:
/// it waits as `pause` does, a quiescent node no action wakes.
#[test]
fn sigsuspend_waits_as_pause_does() {
    let _serial = process_support::serial();
    let w = replay(
        &{
            let mut c = config("probe", 1);
            c.args = vec!["stall".to_string()];
            c
        },
        &[],
    );
    assert_eq!(w.nodes[0].blocked, Blocked::Pause);
    assert!(enabled(&w).is_empty());
}

/// Issue 11, item 2: a sleeping node is quiescent and TIMEOUT wakes it;
/// the clock reaches the first millisecond after the end of the sleep (3
/// s end at 3,001 ms, 1 ms at 2 ms later, and an absolute end a few
/// nanoseconds past 5,003 ms, from a clock read, at 5,004); a sleep
/// that is empty or has ended returns at once; `pause` waits for a signal,
/// which nothing sends. They were errors ("sleeping ... not modelled").
#[test]
fn a_sleeping_node_is_woken_by_timeout_at_the_end_of_its_sleep() {
    let _serial = process_support::serial();
    let mut c = config("probe", 1);
    c.args = vec!["sleeper".to_string()];
    c.budgets.timeouts = 5;
    let mut w = replay(&c, &[]);
    let mut seen = Vec::new();
    loop {
        seen.push((w.nodes[0].state.clone(), w.nodes[0].blocked, w.clock));
        if enabled(&w).is_empty() {
            break;
        }
        assert_eq!(enabled(&w), ["TIMEOUT(0)"]);
        let path = vec!["TIMEOUT(0)"; seen.len()];
        w = replay(&c, &path);
    }
    assert_eq!(
        seen,
        [
            (vec![0, 0], Blocked::Sleep { until: 3001 }, 0),
            (vec![1, 3], Blocked::Sleep { until: 3003 }, 3001),
            (vec![2, 3], Blocked::Sleep { until: 5004 }, 3003),
            (vec![4, 5], Blocked::Pause, 5004),
        ]
    );
    assert_eq!(w.timeouts, 2, "two TIMEOUTs left, and nothing to spend them on");
}

#[test]
fn the_stall_timeout_is_ten_seconds_by_default() {
    let _serial = process_support::serial();
    assert_eq!(Config::new("x", 1).stall_timeout, Duration::from_secs(10));
}

#[test]
fn misbehaving_programs_are_errors_naming_node_and_call() {
    let _serial = process_support::serial();
    let long = Duration::from_secs(10);
    let err = probe_error("fork", long);
    assert!(matches!(&err, ProcessError::Forbidden { node: 0, call, .. } if call.starts_with("clone")), "{err}");
    // A thread is modelled (issue 28): the probe starts one, joins it and
    // exits with 0.
    let mut c = config("probe", 1);
    c.args = vec!["thread".to_string()];
    let w = ProcessEngine::new(c).expect("valid").initial().expect("a thread is modelled");
    assert_eq!(w.nodes[0].life, cmc::process::Life::Exited(0));
    let err = probe_error("exec", long);
    assert!(matches!(&err, ProcessError::Forbidden { node: 0, what: "exec", .. }), "{err}");
    for (mode, call) in [("ipc", "msgsnd"), ("peek", "process_vm_readv")] {
        let err = probe_error(mode, long);
        assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call: c, .. } if c == call), "{mode}: {err}");
    }
    let err = probe_error("bigstate", long);
    assert!(matches!(&err, ProcessError::Limit { node: 0, limit: "state_bytes_max", max: 64, .. }), "{err}");
}

#[test]
fn a_node_started_without_the_preload_is_an_error() {
    let _serial = process_support::serial();
    let mut c = config("probe", 2);
    c.preload = None;
    let err = ProcessEngine::new(c).expect("valid").initial().expect_err("no preload");
    assert!(matches!(err, ProcessError::MissingPreload { .. }), "{err}");
    assert!(err.to_string().contains("without cmc-preload"), "{err}");
}

/// Issue 10, item 4: a stop is answered while the supervisor waits for a
/// template's hello, not after the stall timeout. A program started
/// without the preload that spins before any call never says hello: the
/// wait would end after ten seconds in a stall error.
#[test]
fn a_stop_is_answered_while_a_template_starts() {
    let _serial = process_support::serial();
    let mut c = config("probe", 1);
    c.preload = None;
    c.args = vec!["spin".to_string()];
    let mut engine = ProcessEngine::new(c).expect("valid");
    engine.watch(Some(cmc::Stop::new(|| Some("asked to stop".to_string()))));
    let err = engine.initial().expect_err("stopped");
    assert!(matches!(&err, ProcessError::Stopped { reason } if reason == "asked to stop"), "{err}");
}

/// Issue 11, item 6: with ASLR off a position-independent executable
/// (the default of Debian's gcc and of rustc) loads at one address, and
/// its stack, break, mappings and libc are where they were: the same on
/// every run (each in a fresh engine, so a fresh exec), and for every
/// node. So PIE targets are accepted, as `-no-pie` ones are.
#[test]
fn a_position_independent_program_has_the_same_addresses_on_every_run() {
    let _serial = process_support::serial();
    for (build, flags) in [("no-pie", &[][..]), ("pie", &["-pie", "-fPIE"][..])] {
        let mut c = Config::new(program_with("probe", flags), 2);
        c.preload = Some(preload());
        c.args = vec!["addresses".to_string()];
        let a = replay(&c, &[]);
        let b = replay(&c, &[]);
        let words = |s: &[u8]| s.chunks_exact(8).map(|w| u64::from_ne_bytes(w.try_into().unwrap())).collect::<Vec<_>>();
        let text = words(&a.nodes[0].state)[0];
        println!("{build}: text {text:#x}, stack, brk, mmap, printf {:x?}", &words(&a.nodes[0].state)[1..]);
        assert_eq!(a.nodes[0].state.len(), 40, "{build}: reported");
        assert_eq!(a.nodes[0].state, b.nodes[0].state, "{build}: two runs");
        assert_eq!(a.nodes[0].state, a.nodes[1].state, "{build}: two nodes");
        match build {
            "pie" => assert_eq!(text >> 32, 0x5555, "{build}: the kernel's base for PIE without ASLR"),
            _ => assert!(text < 0x1000_0000, "{build}: linked at its fixed address"),
        }
    }
    let mut shared = Config::new(process_support::shared_object("register_props"), 1);
    shared.preload = Some(preload());
    let err = ProcessEngine::new(shared).err().expect("a shared library is no program");
    assert!(matches!(&err, ProcessError::Program { reason, .. } if reason.contains("interpreter")), "{err}");
    let err = ProcessEngine::new(Config::new(program("probe"), 9)).err().expect("9 nodes");
    assert!(matches!(&err, ProcessError::Config { key: "nodes", .. }), "{err}");
}

#[test]
fn concurrent_starts_give_one_world_whatever_the_arrival_order() {
    let _serial = process_support::serial();
    // Two clients start at once and race to connect to the server: the
    // world must not depend on which notification arrived first.
    let c = config("counter", 3);
    let mut e = ProcessEngine::new(c).expect("valid");
    let first = encode(&e.initial().expect("starts"));
    let after = actions(&["ACCEPT(0, 2)", "DELIVER(0, 2.0)"]);
    let first_after = encode(&e.replay(&after).expect("replays"));
    for _ in 0..15 {
        assert_eq!(encode(&e.initial().expect("starts")), first);
        assert_eq!(encode(&e.replay(&after).expect("replays")), first_after);
    }
    let w = e.initial().expect("starts");
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "ACCEPT(0, 2)"]);
}

/// The error of `probe 0 files CALL`, run in `dir`.
fn files_error(dir: &std::path::Path, call: &str) -> ProcessError {
    let mut c = config("probe", 1);
    c.args = vec!["files".to_string(), call.to_string()];
    c.workdir = Some(dir.to_path_buf());
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial().expect_err(call)
}

#[test]
fn a_call_that_would_change_the_file_system_is_an_error_naming_node_call_and_path() {
    let _serial = process_support::serial();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workdirs").join("files");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/f"), b"f").unwrap();
    let listing = |d: &std::path::Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let sub = dir.join("sub");
    let (f, new) = (sub.join("f"), sub.join("new"));
    let show = |p: &std::path::Path| p.display().to_string();
    let mut wrong = Vec::new();
    for (call, syscall, path) in [
        ("creat", "creat", show(&new)),
        ("tmpfile", "openat", show(&sub)),
        ("append", "openat", show(&f)),
        ("rdwr", "openat", show(&f)),
        ("trunc", "openat", show(&f)),
        ("openat-dirfd", "openat", show(&dir.join("new"))),
        ("openat2", "openat2", show(&new)),
        ("unlink", "unlink", show(&f)),
        ("rename", "rename", show(&f)),
        ("mkdir", "mkdir", show(&sub.join("d"))),
        ("rmdir", "rmdir", show(&sub)),
        ("link", "link", show(&new)),
        ("symlink", "symlink", show(&new)),
        ("mknod", "mknodat", show(&new)),
        ("chmod", "chmod", show(&f)),
        ("fchmod", "fchmod", show(&f)),
        ("chown", "chown", show(&f)),
        ("utimes", "utimensat", show(&f)),
        ("futimens", "utimensat", show(&f)),
        ("truncate", "truncate", show(&f)),
        ("ftruncate", "ftruncate", show(&f)),
        ("setxattr", "setxattr", show(&f)),
        ("fallocate", "fallocate", show(&f)),
        ("chattr", "ioctl 0x40086602", show(&f)),
        ("mount", "mount", show(&f)),
    ] {
        let err = files_error(&dir, call);
        let ProcessError::File { node, call: got, path: shown, detail } = &err else {
            wrong.push(format!("{call}: {err}"));
            continue;
        };
        if (*node, got.as_str(), shown.as_str()) != (0, syscall, path.as_str()) {
            wrong.push(format!("{call}: {err}"));
            continue;
        }
        assert!(err.to_string().starts_with(&format!("node 0: {syscall} of {path}: ")), "{call}: {err}");
        let machine = call == "mount";
        assert!(detail.contains(if machine { "the machine's" } else { "read-only" }), "{call}: {detail}");
        assert_eq!((listing(&dir), listing(&sub)), (vec!["sub".to_string()], vec!["f".to_string()]), "{call}");
        assert_eq!(std::fs::read(&f).unwrap(), b"f", "{call}: the file is as it was");
    }
    assert!(wrong.is_empty(), "not the expected call and path:\n{}", wrong.join("\n"));
    for (call, syscall) in
        [("lock", "fcntl"), ("flock", "flock"), ("sethostname", "sethostname"), ("settimeofday", "clock_settime")]
    {
        let err = files_error(&dir, call);
        assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call: got, .. } if got == syscall), "{call}: {err}");
    }
}

/// The state `probe 0 MODE ARGS...` reports at START, in `dir`.
fn probe_state(dir: Option<&std::path::Path>, args: &[&str]) -> Result<Vec<u8>, ProcessError> {
    probe_world(dir, args).map(|w| w.nodes[0].state.clone())
}

fn probe_world(dir: Option<&std::path::Path>, args: &[&str]) -> Result<ProcessWorld, ProcessError> {
    let mut c = config("probe", 1);
    c.args = args.iter().map(|a| a.to_string()).collect();
    c.workdir = dir.map(|d| d.to_path_buf());
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial()
}

/// Issue 10, 1e. A random device opened by any other spelling of its path
/// than the three the checker compared (`/dev/./urandom`, `//dev/random`,
/// a symbolic link, `urandom` relative to `/dev`, or by `openat2`) read
/// real entropy. Now the checker identifies the file it opens by its
/// device numbers, and every spelling reads the node's own stream.
#[test]
fn real_entropy_reaches_a_node_through_any_spelling_of_a_random_device() {
    let _serial = process_support::serial();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workdirs").join("random");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", dir.join("link")).unwrap();
    let mut real = Vec::new();
    for spelling in [
        &["/dev/urandom"][..],
        &["/dev/./urandom"],
        &["//dev/random"],
        &["/dev/../dev/urandom"],
        &["urandom", "/dev"],
        &["link"],
        &["2:/dev/urandom"],
        &["2:random", "/dev"],
    ] {
        let mut args = vec!["random"];
        args.extend_from_slice(spelling);
        let w = probe_world(Some(&dir), &args).unwrap_or_else(|e| panic!("{spelling:?}: {e}"));
        // The probe's 8 bytes are the last the node drew from its stream.
        let stream = random_stream(0, w.nodes[0].random_used - 8, 8);
        if w.nodes[0].state != stream {
            real.push(format!("{spelling:?} read {:02x?}, not the stream's {stream:02x?}", w.nodes[0].state));
        }
    }
    assert!(real.is_empty(), "not the node's stream:\n{}", real.join("\n"));
}

/// Issue 10, 1e. `/proc/sys/kernel/random/uuid`, `boot_id` and
/// `/proc/uptime` opened for real: entropy and time outside the world.
/// Each is now an error naming the node, the call and the path.
#[test]
fn real_entropy_and_time_reach_a_node_through_proc_files() {
    let _serial = process_support::serial();
    for path in
        ["/proc/sys/kernel/random/uuid", "/proc/sys/kernel/random/boot_id", "/proc/uptime", "/proc/self/../uptime"]
    {
        let err = probe_state(None, &["read", path]).map(|s| format!("{s:02x?}"));
        let text = match &err {
            Err(e) => e.to_string(),
            Ok(state) => panic!("{path} opened (state {state})"),
        };
        let shown = path.replace("/proc/self/..", "/proc");
        assert!(text.starts_with(&format!("node 0: openat of {shown}: ")), "{path}: {text}");
        assert!(text.contains("would reach the node"), "{path}: {text}");
    }
}

/// Whether this CPU lets a process make `cpuid` fault (`cpuid_fault` in
/// /proc/cpuinfo), so that the preload can hide RDRAND and RDSEED.
fn cpuid_faulting() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines().find(|l| l.starts_with("flags")).is_some_and(|l| l.split_whitespace().any(|f| f == "cpuid_fault"))
}

/// Issue 10, 1e. `times`, `sysinfo`, `adjtimex`, `getrusage`, the
/// processor number and the time stamp counter read the machine's real
/// figures. Each now answers from the logical clock or a fixed value, the
/// same in every life; and where the CPU supports CPUID faulting, `cpuid`
/// shows neither RDRAND nor RDSEED.
#[test]
fn real_time_reaches_a_node_through_times_sysinfo_adjtimex_and_the_time_stamp_counter() {
    let _serial = process_support::serial();
    let s = probe_state(None, &["clocks"]).unwrap_or_else(|e| panic!("{e}"));
    let u64_at = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap());
    assert_eq!(s.len(), 60, "{s:02x?}");
    assert_eq!(u64_at(0), 0, "times() is the logical clock in ticks");
    assert_eq!(u32_at(8), 0, "times(): no CPU time");
    assert_eq!(u32_at(12), 0, "sysinfo: up for the logical clock");
    assert_eq!(u64_at(16), 4 << 30, "sysinfo: 4 GiB");
    assert_eq!(u64_at(24), EPOCH_BASE as u64, "adjtimex: the logical time");
    assert_eq!(u32_at(32), 0, "getrusage: no user time");
    assert_eq!(s[36], 5, "adjtimex: TIME_ERROR, an unsynchronised clock");
    assert_eq!(s[37], 1, "sysinfo: one process");
    // The processor the checker pins the node to, chosen by a hash of the
    // program's path and arguments among those the checker may use: the
    // same on every run of one model (a clone elsewhere may get another).
    let again = probe_state(None, &["clocks"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s[39], again[39], "sched_getcpu: the same processor on every run");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!((s[39] as usize) < cpus, "sched_getcpu: one of the {cpus} processors, not {}", s[39]);
    // A nanosecond more for each read of a clock before.
    assert!(u64_at(40) < 1_000, "rdtsc: the monotonic logical clock in nanoseconds");
    assert_eq!(u64_at(48), u64_at(40) + 1, "rdtscp: the same, read after");
    assert_eq!(u32_at(56), s[39] as u32, "rdtscp: the processor getcpu names, of NUMA node 0");
    // On a processor other than 0 (an argument the probe ignores moves
    // the node to another, where the checker may use two): `rdtscp` said
    // 0 wherever the node ran, before.
    if cpus >= 2 {
        let other = (0..16)
            .map(|i| probe_state(None, &["clocks", &format!("elsewhere{i}")]).unwrap_or_else(|e| panic!("{e}")))
            .find(|t| t[39] != 0)
            .expect("some argument pins the node to a processor other than 0");
        assert_eq!(u32::from_le_bytes(other[56..60].try_into().unwrap()), other[39] as u32, "rdtscp elsewhere");
    }
    if cpuid_faulting() {
        assert_eq!(s[38], 0, "cpuid hides RDRAND and RDSEED");
    }
    let again = probe_state(None, &["clocks"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, s, "another life reads the same");
}

/// Issue 10, 1e. `prctl(PR_SET_TSC, PR_TSC_ENABLE)` undid the preload's
/// trap of `rdtsc`, and the node read the real counter; lifting CPUID
/// faulting, setting the clock's adjustment and replacing the preload's
/// SIGSEGV handler behind its back are alike. Each is now an error naming
/// the node and the call.
#[test]
fn real_time_reaches_a_node_that_undoes_the_rdtsc_trap() {
    let _serial = process_support::serial();
    for (undo, call) in
        [("tsc", "prctl"), ("cpuid", "arch_prctl"), ("adjtime", "clock_adjtime"), ("segv-raw", "rt_sigaction")]
    {
        let text = match probe_state(None, &["undo", undo]) {
            Err(e) => e.to_string(),
            Ok(state) => panic!("{undo}: not refused (state {state:02x?})"),
        };
        assert!(text.starts_with(&format!("node 0: {call} is not modelled: ")), "{undo}: {text}");
    }
}

#[test]
fn getauxval_at_random_is_fixed_per_node_in_every_exec() {
    let _serial = process_support::serial();
    let c = config("probe", 2);
    let mut c = c;
    c.args = vec!["auxv".to_string()];
    // Two engines: two execs of each node's template.
    let a = replay(&c, &[]);
    let b = replay(&c, &[]);
    for n in 0..2 {
        assert_eq!(a.nodes[n].state.len(), 16, "node {n}");
        assert_eq!(a.nodes[n].state, b.nodes[n].state, "node {n}: the same bytes in another exec");
    }
    assert_ne!(a.nodes[0].state, a.nodes[1].state, "each node its own");
}

#[test]
fn a_programs_own_sigsegv_handler_sees_its_faults_and_not_the_preloads() {
    let _serial = process_support::serial();
    let state = probe_state(None, &["segv"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state, [1], "the handler saw the NULL dereference, after a cpuid it did not see");
    let mut c = config("probe", 1);
    c.args = vec!["segv-default".to_string()];
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].life, Life::Signaled(nix::libc::SIGSEGV), "no handler: killed by the fault");
}

#[test]
fn a_rust_std_program_runs_as_a_node() {
    let _serial = process_support::serial();
    let mut c = Config::new(process_support::rust_program("echo"), 1);
    c.preload = Some(preload());
    c.budgets.clients = 1;
    c.request = b"hi".to_vec();
    let w = ProcessEngine::new(c.clone()).expect("valid").replay(&actions(&[])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.nodes[0].state, [1, 0], "std started, reported and listens");
    assert!(matches!(w.nodes[0].blocked, Blocked::Accept { .. }), "{:?}", w.nodes[0].blocked);
    let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    assert_eq!(w.replies, vec![(0, b"hi".to_vec())], "echoed to the client");
}

/// `argv` (issue 28, item 3): a server started as its users start it,
/// `--id {node} --port {port}`, in place of `PROGRAM i ARGS...`; its
/// clients reach it at the port it was given. Without `argv`, node i
/// runs `PROGRAM i ARGS...` as before; with `args` beside it, an error
/// naming the key.
#[test]
fn argv_starts_a_node_as_its_users_start_it() {
    let _serial = process_support::serial();
    let mut c = config("argv", 2);
    c.timeout_byte = false;
    c.budgets.clients = 1;
    c.argv = Some(["--id", "{node}", "--port", "{port}"].map(String::from).to_vec());
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].state, b"--id 0 --port 20000");
    assert_eq!(w.nodes[1].state, b"--id 1 --port 20001");
    let w = replay(&c, &["CLIENT(1)", "ACCEPT(1, client)"]);
    assert_eq!(w.replies, vec![(1, b"hi".to_vec())], "node 1's client reached it at port 20001");
    let mut plain = config("argv", 2);
    plain.args = vec!["x".into()];
    assert_eq!(replay(&plain, &[]).nodes[1].state, b"1 x");
    c.args = vec!["x".into()];
    let e = ProcessEngine::new(c).err().expect("args beside argv");
    assert!(matches!(&e, ProcessError::Config { key: "argv", .. }), "{e}");
}

/// A program the start stub cannot load (here a copy without its execute
/// bits) is an error, and the error says why, in the stub's words (it
/// writes them to the life's stderr before the preload's hello, which the
/// checker discards): a CI run once failed with only "could not open,
/// read or execute", which did not say which.
#[test]
fn a_program_the_stub_cannot_load_is_an_error_saying_why() {
    use std::os::unix::fs::PermissionsExt;
    let _serial = process_support::serial();
    let copy = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-not-executable");
    std::fs::copy(program("probe"), &copy).expect("copy the probe");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut c = config("probe", 1);
    c.program = copy.clone();
    let r = explore(
        ProcessExplorer::new(&ProgramModel::new("unloadable", c)).expect("valid"),
        &Options::default(),
        &mut NoControl,
    );
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    let reason = r.reason.unwrap_or_default();
    assert!(reason.contains("could not open, read or execute"), "{reason}");
    assert!(reason.contains("(it said: ") && reason.contains("not executable"), "{reason}");
}

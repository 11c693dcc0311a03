//! Issue 27, Deliver 4: time as Linux keeps it. A read, `recv` or
//! `accept` times out only if the program asked for it (`SO_RCVTIMEO`,
//! answered with EAGAIN as Linux answers); the manual's `T` convention is
//! an option (`timeout_byte`), which the example programs select; and a
//! model may ask for deadline order (`timeout_order`), under which a
//! 1-second sleep ends before a 5-second one.
//!
//! Each test failed on the code before this change: an untimed program
//! got a `T` it never asked for (a violation of its properties), a receive
//! timeout was refused as not modelled, and sleepers woke in any order
//! only (the lease a violation whatever the model said).

#![cfg(target_os = "linux")]

mod process_support;

use cmc::process::{Blocked, Budgets, Config, ProcessExplorer, ProgramModel, TimeoutOrder, model_file};
use cmc::{NoControl, Options, Report, Verdict, explore};
use process_support::{config, enabled, replay};

/// `examples/c/NAME.c` on `nodes` nodes with `timeouts` TIMEOUTs, as a
/// program written for Linux: without the manual's `T`.
fn linux(name: &str, nodes: u8, timeouts: u8) -> Config {
    let mut c = config(name, nodes);
    c.timeout_byte = false;
    c.budgets = Budgets { timeouts, ..Budgets::default() };
    c.pin_cpu = false;
    c
}

fn search(model: &ProgramModel) -> Report {
    explore(ProcessExplorer::new(model).expect("a valid model"), &Options::default(), &mut NoControl)
}

/// `untimed`'s properties: the server parses every request it reads, the
/// client never fails, and eventually it has its answer.
fn untimed(c: Config) -> ProgramModel {
    let phase = |w: &cmc::process::ProcessWorld, n: usize| w.nodes[n].state.get(1).copied();
    ProgramModel::new("untimed", c)
        .always("server_reads_only_requests", |w| w.nodes[0].state.get(2).is_none_or(|&unparsed| unparsed == 0))
        .always("client_never_fails", move |w| phase(w, 1) != Some(2))
        .eventually("client_is_answered", move |w| phase(w, 1) == Some(1))
}

/// A program that never sets a timeout (`examples/c/untimed.c`: blocking
/// accept, read and write, as `std::net` without `set_read_timeout`) never
/// sees one, whatever the timeout budget: no TIMEOUT is enabled while it
/// waits in `accept` or `read`, and the whole space passes its safety and
/// liveness properties. Before, a TIMEOUT gave the client's read a `T`
/// (it failed) and the server's accept a connection carrying one (a
/// request it could not parse): counterexamples no Linux run can produce.
/// The manual's convention is still there for programs written for it, as
/// an option, and then the same program fails as before.
#[test]
fn a_program_that_sets_no_timeout_never_sees_one() {
    let _serial = process_support::serial();
    let c = linux("untimed", 2, 2);
    let w = replay(&c, &[]);
    assert!(matches!(w.nodes[0].blocked, Blocked::Accept { until: None, .. }), "{:?}", w.nodes[0].blocked);
    assert!(matches!(w.nodes[1].blocked, Blocked::Read { until: None, .. }), "{:?}", w.nodes[1].blocked);
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)"], "no TIMEOUT: neither wait asked for one");

    let r = search(&untimed(c.clone()));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert!(r.never_checked.is_empty(), "the eventually property was checked: {:?}", r.never_checked);

    let mut manual = c;
    manual.timeout_byte = true;
    let r = search(&untimed(manual));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.trace[1].action, "TIMEOUT(0)", "the server's accept got a `T`\n{}", r.to_text());
}

/// What `rcvtimeo 0` reported run natively (Linux 6.18, x86-64, in a
/// private network namespace): one byte per answer, a count or 256 -
/// errno. EINVAL (234) for a short option and EDOM (223) for microseconds
/// out of range; the half-second timeout read back (0 s, 125 steps of 4
/// ms); accept EAGAIN (245); the accepted connection inherits it; read,
/// recv, readv and recvmsg EAGAIN; MSG_WAITALL returns the 2 bytes of 4 it
/// has; a byte sent is read (1); SO_SNDTIMEO set, read back (2 s) and a
/// write returns at once (1); SO_RCVTIMEO_NEW reads back as SO_RCVTIMEO;
/// zero is none; a negative timeout reads back as 0 and makes a read
/// EAGAIN at once; so does O_NONBLOCK beside a timeout.
const NATIVE_RCVTIMEO: [u8; 34] = [
    234, 223, 0, 0, 125, 245, 1, 0, 125, 245, 245, 245, 245, 2, 2, 1, 1, 0, 2, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 245, 0,
    0, 245,
];

/// The actions that take `rcvtimeo` through its program: the accept's
/// timeout, its connection to itself, the four reads' timeouts, the two
/// bytes its MSG_WAITALL receive gets before its timeout, the byte read at
/// once.
const RCVTIMEO_ACTIONS: [&str; 9] = [
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

/// `SO_RCVTIMEO` is how a program asks for a timeout in a read, `recv` or
/// `accept`: the call then waits with a deadline, TIMEOUT ends it with
/// EAGAIN (a `MSG_WAITALL` receive with what it has), and the clock moves
/// to the deadline. Every answer is Linux's, measured natively
/// ([`NATIVE_RCVTIMEO`]), with and without the manual's convention. Before
/// this change the `setsockopt` was refused as not modelled.
#[test]
fn so_rcvtimeo_gives_eagain_after_a_timeout() {
    let _serial = process_support::serial();
    let c = linux("rcvtimeo", 1, 6);
    let w = replay(&c, &[]);
    assert!(matches!(w.nodes[0].blocked, Blocked::Accept { until: Some(504), .. }), "{:?}", w.nodes[0].blocked);
    assert_eq!(enabled(&w), ["TIMEOUT(0)"]);
    let w = replay(&c, &RCVTIMEO_ACTIONS[..2]);
    assert!(matches!(w.nodes[0].blocked, Blocked::Read { until: Some(1008), .. }), "{:?}", w.nodes[0].blocked);
    assert_eq!(w.clock, 504, "the accept's timeout ended at its deadline");

    let w = replay(&c, &RCVTIMEO_ACTIONS);
    assert_eq!(w.nodes[0].state, NATIVE_RCVTIMEO);
    assert_eq!(w.clock, 3024, "six timeouts of half a second, each a jiffy late");
    assert!(matches!(w.nodes[0].blocked, Blocked::Accept { until: None, .. }), "parked, its timeout cleared");
    assert_eq!(enabled(&w), Vec::<String>::new(), "no TIMEOUT for a wait without a timeout");

    let mut manual = c.clone();
    manual.timeout_byte = true;
    assert_eq!(replay(&manual, &RCVTIMEO_ACTIONS).nodes[0].state, NATIVE_RCVTIMEO, "the same under the `T` convention");

    // Without a timeout budget, the accept waits: its deadline is never
    // reached.
    let mut none = c;
    none.budgets.timeouts = 0;
    assert_eq!(enabled(&replay(&none, &[])), Vec::<String>::new());
}

/// `lease_order`'s property: the grantor (node 0) and the holder (node 1)
/// never hold the lease at once.
fn lease(order: TimeoutOrder) -> ProgramModel {
    let mut c = linux("lease_order", 2, 2);
    c.timeout_order = order;
    ProgramModel::new("lease_order", c)
        .always("one_holder", |w| !(w.nodes[0].state == [0, 2] && w.nodes[1].state == [1, 1]))
}

/// A correct lease (`examples/c/lease_order.c`): the holder's term of 1 s
/// ends before the grantor's wait of 5 s. Under deadline order (within a
/// drift of less than the margin) the whole space passes; under any
/// order, the default, the 5-second sleep may end first and the grantor
/// holds the lease beside the holder. Before this change sleepers woke in
/// any order only, so the lease could never pass.
#[test]
fn a_lease_that_relies_on_deadline_order_passes_under_it_and_is_a_violation_under_any_order() {
    let _serial = process_support::serial();
    let r = search(&lease(TimeoutOrder::Any));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some("one_holder"));
    assert_eq!(
        r.trace.last().map(|s| s.action.as_str()),
        Some("TIMEOUT(0)"),
        "the 5-second sleep first\n{}",
        r.to_text()
    );

    for drift_s in [0, 3] {
        let r = search(&lease(TimeoutOrder::Deadline { drift_ms: drift_s * 1000 }));
        assert_eq!(r.verdict, Verdict::Pass, "drift {drift_s} s\n{}", r.to_text());
    }
    // A drift as large as the margin lets the grantor's wait end first.
    let r = search(&lease(TimeoutOrder::Deadline { drift_ms: 4000 }));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
}

/// Under deadline order the clock moves to each wait's deadline in turn:
/// the holder's term ends at second 1, the grantor's wait at second 5.
#[test]
fn deadline_order_moves_the_clock_to_each_deadline_in_turn() {
    let _serial = process_support::serial();
    let c = lease(TimeoutOrder::Deadline { drift_ms: 0 }).config;
    let granted = ["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)"];
    let w = replay(&c, &granted);
    assert_eq!(
        (w.nodes[0].blocked, w.nodes[1].blocked),
        (Blocked::Sleep { until: 5001 }, Blocked::Sleep { until: 1001 })
    );
    assert_eq!(enabled(&w), ["TIMEOUT(1)"], "only the earliest deadline");
    let w = replay(&c, &[&granted[..], &["TIMEOUT(1)"]].concat());
    assert_eq!((w.clock, w.nodes[1].state.as_slice()), (1001, &[1, 2][..]), "the holder's term ended");
    assert_eq!(enabled(&w), ["TIMEOUT(0)"]);
    let w = replay(&c, &[&granted[..], &["TIMEOUT(1)", "TIMEOUT(0)"]].concat());
    assert_eq!((w.clock, w.nodes[0].state.as_slice()), (5001, &[0, 2][..]), "then the grantor's wait");
}

/// The example programs are written for the manual's `T` convention, and
/// their model files select it, so that their counts stay as they were;
/// a model file without the key has Linux's timeouts, in any order.
#[test]
fn the_example_model_files_select_the_t_convention() {
    let dir = process_support::repo().join("examples/c");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/c") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("readable");
            let parsed = model_file::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
            assert!(parsed.timeout_byte, "{} does not select `timeout_byte`", path.display());
            assert_eq!(parsed.timeout_order, TimeoutOrder::Any, "{}", path.display());
            files += 1;
        }
    }
    assert!(files >= 8, "{files} model files in {}", dir.display());
    let parsed = model_file::parse("program = \"p\"\nnodes = 1\ntimeouts = 2\n", std::path::Path::new("m.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!parsed.timeout_byte);
    assert_eq!(parsed.timeout_order, TimeoutOrder::Any);
}

/// Linux's `select`, `pselect6` and `ppoll` write back into their timeout
/// what they did not wait of it (`poll_select_finish`), and a loop that
/// selects with one `struct timeval` until none is left is the common way
/// to wait for a deadline. Node 0 of `probe.c` "selectleft" selects with
/// 2.5 s; node 1 sleeps a second and writes a vote, which wakes the select
/// a second in: 1.5 s are left. The next select's time is up at the
/// deadline, and the loop ends. Before, the timeout was never written: the
/// loop selected for ever, and a program's decision after it was never
/// reached (the review's `selloop` probe passed, where 10 of 10 native
/// runs reach it).
#[test]
fn select_writes_back_the_time_it_did_not_wait() {
    let _serial = process_support::serial();
    let mut c = linux("probe", 2, 2);
    c.args = vec!["selectleft".to_string()];
    let w = replay(&c, &["ACCEPT(0, 1)", "TIMEOUT(1)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 4], "a vote, 1.499 s left (the sleep took 1.001 s)");
    assert!(matches!(w.nodes[0].blocked, Blocked::Poll { until: Some(2501) }), "{:?}", w.nodes[0].blocked);
    let w = replay(&c, &["ACCEPT(0, 1)", "TIMEOUT(1)", "DELIVER(0, 1.0)", "TIMEOUT(0)"]);
    assert_eq!(w.nodes[0].state, [1, 0, 0], "none left");
    assert_eq!(w.nodes[0].blocked, Blocked::Pause, "the loop has ended");
}

/// The logical clock has milliseconds: a wait of less than a second ends
/// when it asked, not at the next second. Node 1 of `millis.c` "tick"
/// writes a byte every 200 ms; node 0 counts those that arrive in its first
/// second, polling for the time left, and aborts at three (natively about
/// five arrive: 10 of 10 runs abort). Node 0 of "tfd" reads a periodic
/// 250 ms timerfd after a one-second sleep, and aborts at more than one
/// expiration (natively four). Both passed while the clock had whole
/// seconds (each 200 ms sleep, and each interval, took a second; the
/// review's `tick` and `tfd`).
#[test]
fn waits_of_less_than_a_second_end_when_they_asked() {
    let _serial = process_support::serial();
    let mut tfd = linux("millis", 2, 3);
    tfd.args = vec!["tfd".to_string()];
    let w = replay(&tfd, &[]);
    assert_eq!(w.nodes[0].blocked, Blocked::Sleep { until: 1001 });
    let w = replay(&tfd, &["TIMEOUT(0)"]);
    assert_eq!((w.clock, w.nodes[0].state.as_slice()), (1001, &[0, 2, 4][..]), "four expirations");
    let mut tick = linux("millis", 2, 10);
    tick.args = vec!["tick".to_string()];
    let w = replay(&tick, &["ACCEPT(0, 1)"]);
    assert_eq!(w.nodes[1].blocked, Blocked::Sleep { until: 201 });
    for (c, trace_max) in [(tfd, 2), (tick, 12)] {
        let r = search(&ProgramModel::new("millis", c));
        assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
        assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED));
        assert!(r.trace.len() <= trace_max, "{}", r.to_text());
    }
}

/// Time passes between two reads of a clock, as on Linux: each read adds a
/// nanosecond to what the node's clocks say after it, and its CPU-time
/// clocks count them. Node 0 of `millis.c` "rtt" reads CLOCK_MONOTONIC
/// twice and aborts if time passed; "cpu" reads its CPU time around a busy
/// loop (natively 10 of 10 runs of each abort). Both passed while a clock
/// stood still between TIMEOUTs and CPU time read 0 (the review's `misc`
/// probes). And a wait ends late, never early: "over" reads the clock
/// around a 1 ms sleep and aborts if more passed (natively 10 of 10, by the
/// timer slack); it passed while a wait ended exactly on time (the
/// review's `over`). And a timerfd reads back what was set: "tfdget"
/// aborts where a 1.5 ms setting reads back as no more than 1.5 ms
/// (natively 10 of 10); it read 2 ms, rounded up (the review's `tfdval`).
#[test]
fn time_passes_between_two_reads_of_a_clock_and_a_wait_ends_late() {
    let _serial = process_support::serial();
    for mode in ["rtt", "cpu", "over", "tfdget"] {
        let mut c = linux("millis", 2, 1);
        c.args = vec![mode.to_string()];
        let r = search(&ProgramModel::new("millis", c));
        assert_eq!(r.verdict, Verdict::Violation, "{mode}: {}", r.to_text());
        assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{mode}");
    }
}

/// What a node's clocks say is what it may have read: a timer set and read
/// back at once has less left ("tfdleft"); a timer set, absolute, to the
/// time just read has expired ("tfdabs"), and a sleep until it returns at
/// once ("absnow"); a select answered at once writes back less than it
/// asked ("selnow"); a new life's CPU time starts from none ("cpulife",
/// after a crash); a time another node read and sent has passed ("sent":
/// each node counted its own reads, the review's `clk`). Each of
/// `millis.c`'s node 0 aborts on what Linux gives
/// (natively 10 of 10 runs of each, 4 of 5 of "cpulife"); each passed (the
/// review of 0b000d2: the timers and sleeps compared with the logical
/// clock, not with what the node's clocks said, and CPU time ran over
/// lives).
#[test]
fn a_nodes_clocks_say_what_it_may_have_read() {
    let _serial = process_support::serial();
    for mode in ["tfdleft", "tfdabs", "absnow", "selnow", "cpulife", "sent"] {
        let mut c = linux("millis", 2, 1);
        c.args = vec![mode.to_string()];
        c.budgets.crashes = u8::from(mode == "cpulife");
        let r = search(&ProgramModel::new("millis", c));
        assert_eq!(r.verdict, Verdict::Violation, "{mode}: {}", r.to_text());
        assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{mode}");
    }
}

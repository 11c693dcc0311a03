//! Programs as people write them (issue 11): event loops over `poll`,
//! non-blocking sockets, `MSG_PEEK` and `MSG_DONTWAIT`, `FIONREAD`, and
//! poll timeouts, each answered from the world as the kernel would.

#![cfg(target_os = "linux")]

mod process_support;

use cmc::process::{Blocked, Label, Life, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Verdict, explore};
use process_support::{config, enabled, replay};

/// The ways node 0's event loop may wait.
const WAYS: [&str; 3] = ["poll", "select", "epoll"];

fn evloop(how: &str) -> cmc::process::Config {
    let mut c = config("probe", 2);
    c.args = vec!["evloop".to_string(), how.to_string()];
    c.budgets.timeouts = 1;
    c
}

/// Node 0 polls its non-blocking listening socket; node 1's non-blocking
/// connect is in progress and writable at once, it sends "hi", finds a
/// non-blocking read empty, and polls. ACCEPT puts the connection in node
/// 0's accept queue and ends its poll; DELIVER puts "hi" in the receive
/// buffer (peeked, counted by FIONREAD, then read) and the answer in node
/// 1's; node 1 exits, and EOF tells node 0's poll, which reads 0 and
/// closes. A TIMEOUT ends the poll's 2-second wait with nothing ready.
/// The same with `select` and with epoll in node 0.
#[test]
fn an_event_loop_over_non_blocking_sockets_runs_as_on_the_kernel() {
    let _serial = process_support::serial();
    for how in WAYS {
        event_loop_steps(how);
    }
}

fn event_loop_steps(how: &str) {
    let c = evloop(how);
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(2) }, "{how}");
    assert_eq!(w.nodes[1].blocked, Blocked::Poll { until: None });
    let conn: Label = "1.0".parse().unwrap();
    assert_eq!(w.conns[&conn].to_target, [b"hi".to_vec()], "sent without blocking");
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "TIMEOUT(0)"]);

    let w = replay(&c, &["ACCEPT(0, 1)"]);
    assert_eq!(w.nodes[0].state, [1, 0, 0, 0, 0], "accepted until EAGAIN");
    assert!(w.nodes[0].accept_queue.is_empty());
    assert_eq!(enabled(&w), ["DELIVER(0, 1.0)", "TIMEOUT(0)"]);

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 0, 0, 2], "{how}: peeked 2 bytes, read them, answered");
    assert_eq!(w.conns[&conn].to_dialer, [b"ok".to_vec()]);
    assert!(w.conns[&conn].at_target.is_empty(), "read");

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)"]);
    assert_eq!(w.nodes[1].life, Life::Exited(0), "exit 0: every check of the client held");
    assert_eq!(w.nodes[1].state, [1, 2, 1], "read 2 bytes; F_GETFL said O_NONBLOCK");
    assert_eq!(enabled(&w), ["EOF(0, 1.0)", "TIMEOUT(0)"]);

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "EOF(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 1, 0, 2], "read 0 and closed");
    assert!(w.conns.is_empty(), "both ends done");
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(2) });

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "EOF(0, 1.0)", "TIMEOUT(0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 1, 1, 2], "the poll timed out");
    assert_eq!(w.clock, 2, "at the end of the poll's timeout");
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(4) });
    assert!(enabled(&w).is_empty(), "no timeout left");
}

/// The whole space of the event loop is searched, and passes.
#[test]
fn a_search_of_the_event_loop_passes() {
    let _serial = process_support::serial();
    let mut counts = Vec::new();
    for how in WAYS {
        let model = ProgramModel::new("evloop", evloop(how));
        let r = explore(ProcessExplorer::new(&model).unwrap(), &Options::default(), &mut NoControl);
        assert_eq!(r.verdict, Verdict::Pass, "{how}: {}", r.to_text());
        counts.push((r.distinct_states, r.generated_states));
    }
    // One program, three ways to wait, the same state space.
    assert!(counts.iter().all(|c| *c == counts[0]), "{counts:?}");
    assert!(counts[0].0 >= 6, "{counts:?}");
}

/// Issue 11, item 2: a timerfd is the world's. A blocking read of an armed
/// timer waits for TIMEOUT, which moves the clock to its expiry; a poll
/// without a timeout of an armed timer is ended by TIMEOUT the same way; a
/// non-blocking read of a timer not expired is EAGAIN, and one set in the
/// past has expired; a periodic timer read late counts every interval
/// passed; a disarmed timer's read waits for ever (no TIMEOUT ends it).
#[test]
fn timerfds_expire_when_timeout_moves_the_clock_to_them() {
    let _serial = process_support::serial();
    let mut c = config("probe", 1);
    c.args = vec!["ticker".to_string()];
    c.budgets.timeouts = 6;
    let mut path = Vec::new();
    let mut seen = Vec::new();
    loop {
        let w = replay(&c, &path);
        seen.push((w.nodes[0].state.clone(), w.nodes[0].blocked, w.clock));
        if enabled(&w).is_empty() {
            assert_eq!(w.timeouts, 1, "one TIMEOUT left, and nothing it could end");
            break;
        }
        assert_eq!(enabled(&w), ["TIMEOUT(0)"], "{seen:?}");
        path.push("TIMEOUT(0)");
    }
    let timer = |w: &(Vec<u8>, Blocked, u32)| w.1;
    assert!(matches!(timer(&seen[0]), Blocked::Timer { .. }), "{seen:?}");
    assert!(matches!(timer(&seen[1]), Blocked::Poll { until: None }), "{seen:?}");
    let states: Vec<(Vec<u8>, u32)> = seen.iter().map(|(s, _, clock)| (s.clone(), *clock)).collect();
    assert_eq!(
        states,
        [
            (vec![0, 0, 0], 0),
            (vec![1, 3, 1], 3),
            (vec![2, 5, 1], 5),
            (vec![3, 1, 1], 6),
            (vec![4, 16, 5], 16),
            (vec![5, 1, 0], 17),
        ],
        "after the 10-second sleep the periodic timer counted 5 expirations (7, 9, 11, 13, 15)"
    );
    assert_eq!(seen[5].1, Blocked::Pause);
}

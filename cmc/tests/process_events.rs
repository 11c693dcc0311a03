//! Programs as people write them (issue 11): event loops over `poll`,
//! non-blocking sockets, `MSG_PEEK` and `MSG_DONTWAIT`, `FIONREAD`, and
//! poll timeouts, each answered from the world as the kernel would.

#![cfg(target_os = "linux")]

mod process_support;

use cmc::process::{Blocked, CrashStates, Label, Life, ProcessExplorer, ProgramModel};
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
    // Node 1's poll for its connect, its receive and its read that do not
    // wait are each held while node 0 may accept and answer first: RUN
    // lets each go on (nothing there).
    let w = replay(&c, &[]);
    assert!(matches!(w.nodes[1].blocked, Blocked::Woken { .. }), "{how}: {:?}", w.nodes[1].blocked);
    assert_eq!(enabled(&w), ["ACCEPT(0, 1)", "RUN(1)", "TIMEOUT(0)"], "{how}");
    let w = replay(&c, &["RUN(1)"]);
    assert!(matches!(w.nodes[1].blocked, Blocked::ReadNow { .. }), "{how}: {:?}", w.nodes[1].blocked);
    let replay = |c: &cmc::process::Config, tail: &[&str]| replay(c, &[&["RUN(1)"; 3][..], tail].concat());
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(2001) }, "{how}");
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

    // Node 1's poll, woken by "ok", is held while node 0 may still send.
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)"]);
    assert_eq!(enabled(&w), ["RUN(1)", "TIMEOUT(0)"]);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "RUN(1)"]);
    assert_eq!(w.nodes[1].life, Life::Exited(0), "exit 0: every check of the client held");
    assert_eq!(w.nodes[1].state, [1, 2, 1], "read 2 bytes; F_GETFL said O_NONBLOCK");
    assert_eq!(enabled(&w), ["EOF(0, 1.0)", "TIMEOUT(0)"]);

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "RUN(1)", "EOF(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 1, 0, 2], "read 0 and closed");
    assert!(w.conns.is_empty(), "both ends done");
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(2001) });

    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)", "RUN(1)", "EOF(0, 1.0)", "TIMEOUT(0)"]);
    assert_eq!(w.nodes[0].state, [1, 1, 1, 1, 2], "the poll timed out");
    assert_eq!(w.clock, 2001, "at the first millisecond after the poll's timeout");
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(4002) });
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
    // One program, three ways to wait: select's state space is larger than
    // poll's, since it writes back the time it did not wait, so a wait
    // woken with more or less of its timeout left leaves the process with
    // other memory; epoll's too, since its ready list keeps the order of
    // the wake-ups (a descriptor reported and back on the tail keeps its
    // place until a wait finds it not ready). They were poll's before.
    assert!(counts[1].0 > counts[0].0, "{counts:?}");
    assert!(counts[2].0 > counts[0].0, "{counts:?}");
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
    let timer = |w: &(Vec<u8>, Blocked, u64)| w.1;
    assert!(matches!(timer(&seen[0]), Blocked::Timer { .. }), "{seen:?}");
    assert!(matches!(timer(&seen[1]), Blocked::Poll { until: None }), "{seen:?}");
    let states: Vec<(Vec<u8>, u64)> = seen.iter().map(|(s, _, clock)| (s.clone(), *clock)).collect();
    assert_eq!(
        states,
        [
            (vec![0, 0, 0], 0),
            (vec![1, 3, 1], 3001),
            (vec![2, 5, 1], 5001),
            (vec![3, 1, 1], 6002),
            (vec![4, 16, 5], 16_003),
            (vec![5, 1, 0], 17_004),
        ],
        "after the 10-second sleep the periodic timer counted 5 expirations (7, 9, 11, 13, 15)"
    );
    assert_eq!(seen[5].1, Blocked::Pause);
}

/// Issue 11, item 4: under `stream = true` a read may get the first bytes
/// of a write, or two writes merged, and a framing bug shows: node 0
/// takes each read as one 4-byte request. One write per read (the
/// default) never shows it.
#[test]
fn a_byte_stream_splits_and_merges_writes_and_finds_a_framing_bug() {
    let _serial = process_support::serial();
    let model = |stream: bool| {
        let mut c = config("probe", 2);
        c.args = vec!["framing".to_string()];
        c.stream = stream;
        ProgramModel::new("framing", c).always("whole_requests", |w| w.nodes[0].state.get(1).is_none_or(|&k| k == 0))
    };
    let run = |stream: bool| {
        let m = model(stream);
        explore(ProcessExplorer::new(&m).unwrap(), &Options::default(), &mut NoControl)
    };
    let messages = run(false);
    assert_eq!(messages.verdict, Verdict::Pass, "{}", messages.to_text());
    let stream = run(true);
    assert_eq!(stream.verdict, Verdict::Violation, "{}", stream.to_text());
    let last = stream.trace.last().unwrap();
    assert_eq!(last.action, "DELIVER(0, 1.0, 1)", "the shortest: a request's first byte alone\n{}", stream.to_text());
    // Every way a read may cut the stream, and none twice for one write.
    let c = model(true).config;
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)"]);
    assert_eq!(
        enabled(&w),
        ["DELIVER(0, 1.0)", "DELIVER(0, 1.0, 1)", "DELIVER(0, 1.0, 2)", "DELIVER(0, 1.0, 3)", "DELIVER(0, 1.0, +)"]
    );
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0, 3)"]);
    assert_eq!(w.nodes[0].state, [1, 3]);
    assert_eq!(enabled(&w), ["DELIVER(0, 1.0)", "DELIVER(0, 1.0, +)"], "the rest of a split is not split again");
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0, +)"]);
    assert_eq!(w.nodes[0].state, [1, 8], "two writes, one read");
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0, 3)", "DELIVER(0, 1.0, +)"]);
    assert_eq!(w.nodes[0].state, [2, 5], "the rest of one and the whole next");
}

/// Issue 11, item 4: `recv` with `MSG_WAITALL` waits for its whole length,
/// over several writes and however a byte stream cuts them, keeping what
/// it has so far in the world.
#[test]
fn msg_waitall_waits_for_its_whole_length() {
    let _serial = process_support::serial();
    for stream in [false, true] {
        let mut c = config("probe", 2);
        c.args = vec!["framing".to_string(), "waitall".to_string()];
        c.stream = stream;
        let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
        assert_eq!(w.nodes[0].waitall, b"ping", "stream {stream}: one write of two received");
        assert!(matches!(w.nodes[0].blocked, Blocked::Read { .. }));
        let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(0, 1.0)"]);
        assert_eq!(
            (w.nodes[0].state.clone(), w.nodes[0].waitall.len()),
            (vec![2, 0], 0),
            "stream {stream}: all 8 bytes"
        );
        let model = ProgramModel::new("waitall", c)
            .always("whole_requests", |w| w.nodes[0].state.get(1).is_none_or(|&k| k == 0));
        let r = explore(ProcessExplorer::new(&model).unwrap(), &Options::default(), &mut NoControl);
        assert_eq!(r.verdict, Verdict::Pass, "stream {stream}: {}", r.to_text());
    }
}

/// A wait with a deadline the clock has passed already (another node's
/// TIMEOUT moved it) ends with no budget and no time: only its waking is
/// left. And `poll` or `select` of no descriptor is a sleep.
#[test]
fn an_overdue_wait_wakes_without_budget_and_an_empty_poll_is_a_sleep() {
    let _serial = process_support::serial();
    let mut c = config("probe", 3);
    c.args = vec!["naps".to_string()];
    c.budgets.timeouts = 1;
    let w = replay(&c, &[]);
    let waits: Vec<Blocked> = w.nodes.iter().map(|n| n.blocked).collect();
    assert_eq!(
        waits,
        [Blocked::Sleep { until: 5001 }, Blocked::Poll { until: Some(10_001) }, Blocked::Poll { until: Some(15_001) }]
    );
    assert_eq!(enabled(&w), ["TIMEOUT(0)", "TIMEOUT(1)", "TIMEOUT(2)"]);
    let w = replay(&c, &["TIMEOUT(2)"]);
    assert_eq!((w.clock, w.timeouts, w.nodes[2].state.clone()), (15_001, 0, vec![1, 15]));
    assert_eq!(enabled(&w), ["TIMEOUT(0)", "TIMEOUT(1)"], "both overdue, no budget left");
    let w = replay(&c, &["TIMEOUT(2)", "TIMEOUT(0)", "TIMEOUT(1)"]);
    assert_eq!(w.clock, 15_001, "waking an overdue wait takes no time");
    assert!(w.nodes.iter().all(|n| n.state == [1, 15] && n.blocked == Blocked::Pause), "{w:?}");
    assert!(enabled(&w).is_empty());
}

/// A read shorter than the message leaves the rest received, read at once
/// by the next read; it is no longer in flight, where a DROP could lose it.
#[test]
fn the_rest_of_a_short_read_is_received_not_in_flight() {
    let _serial = process_support::serial();
    let mut c = config("probe", 2);
    c.args = vec!["framing".to_string(), "small".to_string()];
    c.budgets.drops = 1;
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [2, 2], "two reads of two bytes, no action between");
    let conn: Label = "1.0".parse().unwrap();
    assert_eq!(w.conns[&conn].to_target, [b"pong".to_vec()]);
    assert!(w.conns[&conn].at_target.is_empty());
}

/// A poll for the peer's hang-up only, of a peer that wrote "x" and
/// exited (a FIN after its message): while the message travels the poll
/// waits (the FIN is behind it, and EOF is not enabled); the message
/// arrives and the poll goes on waiting (the FIN comes apart from it, as on
/// Linux); EOF brings the FIN, and the poll returns POLLRDHUP, with the
/// message unread. What arrived is still read before the end.
#[test]
fn a_poll_for_the_hang_up_only_sees_the_fin_behind_a_message() {
    let _serial = process_support::serial();
    let mut c = config("probe", 2);
    c.args = vec!["rdhup".to_string()];
    let w = replay(&c, &["ACCEPT(0, 1)"]);
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: None }, "waiting while the message travels");
    assert_eq!(enabled(&w), ["DELIVER(0, 1.0)"]);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: None }, "the message is no hang-up");
    assert_eq!(enabled(&w), ["EOF(0, 1.0)"]);
    let w = replay(&c, &["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "EOF(0, 1.0)"]);
    let rdhup = (nix::libc::POLLRDHUP >> 8) as u8;
    assert_eq!(w.nodes[0].state, [rdhup, 1, 0], "POLLRDHUP; the message, then the end");
}

/// Issue 11, item 5: the data directory's files are the world's. What
/// `fsync` of a file or of the directory made durable survives a crash,
/// and of the rest a crash keeps each prefix in turn (CRASH(0, j)); a
/// write to a file opened `O_SYNC` is durable at once, its name only when
/// the directory is synced; a rename is one change. This is the manual's
/// model, `crash_states = "prefix"`; ext4's, the default, keeps these and
/// more (`process_crash_states.rs`): here, the name changes without the
/// write to the log, which ext4 may write back after them.
#[test]
fn a_crash_keeps_what_was_synced_and_each_prefix_of_the_rest() {
    let _serial = process_support::serial();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("data-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut c = config("probe", 1);
    c.args = vec!["store".to_string(), dir.to_string_lossy().into_owned()];
    c.data_dir = Some(dir.clone());
    c.budgets.crashes = 1;
    let ext4 = c.clone();
    c.crash_states = CrashStates::Prefix;
    let w = replay(&ext4, &[]);
    // The log's unsynced write is its size, then its bytes; then tmp's
    // name and the rename.
    assert_eq!(w.nodes[0].disk.pending.len(), 4, "{:?}", w.nodes[0].disk);
    // The crashes after the start (those in it are listed after them).
    let after_start: Vec<String> = enabled(&w).into_iter().filter(|a| !a.contains("start")).collect();
    assert_eq!(
        after_start,
        [
            "CRASH(0, 0)",
            "CRASH(0, 1)",
            "CRASH(0, 2)",
            "CRASH(0, 3)",
            "CRASH(0, 4)",
            "CRASH(0, {2})",
            "CRASH(0, {0, 2})",
            "CRASH(0, {2, 3})",
            "CRASH(0, {0, 2, 3})",
        ]
    );
    let after = |crash: &str| replay(&ext4, &[crash, "RESTART(0)"]).nodes[0].state.clone();
    assert_eq!(after("CRASH(0, {2, 3})"), [2, b'a', b'b', 0, 0, 0, 1, 4], "the rename, not the log's write");
    assert_eq!(after("CRASH(0, {0, 2, 3})"), [4, b'a', b'b', 0, 0, 0, 1, 4], "and its size: zeros");
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].life, Life::Live, "every check of the program held: {w:?}");
    // It sees every change: the log "abcd", cur and not tmp; ., .., log, cur.
    assert_eq!(w.nodes[0].state, [4, b'a', b'b', b'c', b'd', 0, 1, 4]);
    assert_eq!(w.nodes[0].disk.pending.len(), 3, "the unsynced write, tmp's name, the rename: {:?}", w.nodes[0].disk);
    let after_start: Vec<String> = enabled(&w).into_iter().filter(|a| !a.contains("start")).collect();
    assert_eq!(after_start, ["CRASH(0, 0)", "CRASH(0, 1)", "CRASH(0, 2)", "CRASH(0, 3)"]);
    let after = |j: u8| replay(&c, &[&format!("CRASH(0, {j})"), "RESTART(0)"]).nodes[0].state.clone();
    assert_eq!(after(0), [2, b'a', b'b', 0, 0, 0, 0, 3], "only what was synced");
    assert_eq!(after(1), [4, b'a', b'b', b'c', b'd', 0, 0, 3], "and the second write");
    assert_eq!(after(2), [4, b'a', b'b', b'c', b'd', 1, 0, 4], "and tmp's name (its O_SYNC write was durable)");
    assert_eq!(after(3), [4, b'a', b'b', b'c', b'd', 0, 1, 4], "and the rename, whole");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "the real directory is never written");
}

/// Issue 11, item 8: `examples/c/evstore.c`'s two planted bugs are found
/// only as the issue asks: its framing bug only with `stream = true` (one
/// whole write per read never cuts a line), its in-place overwrite only
/// by a crash that keeps part of the changes pending (CRASH(0, 1) of two),
/// never by one keeping all or none.
#[test]
fn the_event_loop_examples_bugs_need_a_byte_stream_and_a_torn_write() {
    let _serial = process_support::serial();
    let examples = process_support::repo().join("examples/c");
    let model = |bug: &str, stream: bool, crashes: u8, clients: u8, crash_points: bool| {
        let mut c = cmc::process::Config::new(process_support::program_with("evstore", &[bug]), 1);
        c.preload = Some(process_support::preload());
        c.args = vec!["evstore-data".to_string()];
        c.workdir = Some(examples.clone());
        c.data_dir = Some(examples.join("evstore-data"));
        c.request = b"+1\n".to_vec();
        c.stream = stream;
        c.budgets = cmc::process::Budgets { crashes, drops: 0, timeouts: 1, clients, thread_switches: 0 };
        c.crash_points = crash_points;
        ProgramModel::new("evstore", c).always("acked_increments_are_durable", |w| {
            let disk = &w.nodes[0].disk;
            let value = disk.names.get(b"value".as_slice()).and_then(|i| disk.files.get(i));
            let value: u32 = value.map(|v| String::from_utf8_lossy(v).trim().parse().unwrap_or(0)).unwrap_or(0);
            value as usize >= w.replies.iter().filter(|(_, r)| r == b"ok\n").count()
        })
    };
    let run = |m: &ProgramModel| explore(ProcessExplorer::new(m).unwrap(), &Options::default(), &mut NoControl);
    let framing = "-DBUG_ONE_READ_FRAMES=1";
    assert_eq!(run(&model(framing, false, 0, 1, true)).verdict, Verdict::Pass, "whole writes");
    let r = run(&model(framing, true, 0, 1, true));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let torn = "-DBUG_TRUNCATE_IN_PLACE=1";
    // With the manual's crash, at quiescence only: the shortest
    // counterexample crashes after a whole step.
    let r = run(&model(torn, false, 1, 2, false));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let crash = &r.trace.last().unwrap().action;
    assert_eq!(crash, "CRASH(0, 1)", "a prefix of two pending changes\n{}", r.to_text());
    let before = &r.trace[r.trace.len() - 2].world;
    // Value 2 applied and written over the file, 1 committed.
    assert!(before.nodes[0].state.starts_with("state 0201"), "{before:?}");
    // With crash points (the default) the crash may fall inside a step,
    // and still keeps part of the pending changes.
    let r = run(&model(torn, false, 1, 2, true));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let crash = &r.trace.last().unwrap().action;
    assert_eq!(crash, "CRASH(0, 1)", "a prefix of two pending changes\n{}", r.to_text());
}

/// The data directory as programs use it: a file nothing reaches any more
/// is forgotten, so its number is the next file's (equal directories are
/// equal bytes); `openat` and `fstatat` from the directory's descriptor
/// name its files; a pwrite to an O_APPEND file appends (as Linux); a
/// write past the end leaves a hole; rewinddir lists again.
#[test]
fn files_come_and_go_in_the_data_directory_as_on_the_kernel() {
    let _serial = process_support::serial();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("churn-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut c = config("probe", 1);
    c.args = vec!["churn".to_string(), dir.to_string_lossy().into_owned()];
    c.data_dir = Some(dir.clone());
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].life, Life::Live, "every check of the program held: {w:?}");
    // inode 0 again (st_ino 2); "y"; 1 byte; "12"; 11 bytes; ., .., b, c twice.
    assert_eq!(w.nodes[0].state, [2, b'y', 1, 2, 11, 4, 4]);
    assert_eq!(w.nodes[0].disk.current().0.len(), 2, "a's bytes are gone: {:?}", w.nodes[0].disk);
    // A link or a directory in the real directory is refused.
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let err = cmc::process::ProcessEngine::new(c).unwrap().initial().expect_err("a directory inside");
    std::fs::remove_dir(dir.join("sub")).unwrap();
    assert!(err.to_string().contains("a link or a directory"), "{err}");
}

/// A poll's ready set is what arrived before the woken process ran
/// (found by the conformance gate). `examples/c/ready.c`: node 1 writes
/// "a" then "b" to node 0, whose event loop wakes its eventfd on each byte
/// and aborts if a poll returns the connection and the eventfd at once;
/// on Linux it does, in most runs (9 of 10 natively). A wait with
/// something ready while more it watches is on its way is held
/// (`Blocked::Woken`): RUN returns it with what is ready, DELIVER first
/// adds to it. So "b" may arrive before node 0 runs, at either of its
/// polls, and the one after "a" then finds both ready: node 0 dies of its
/// abort. (Node 1's write of "b" is held itself, node 0 being free to read
/// "a" and close first: RUN(1) makes it.) Before, a poll returned as soon as one thing was ready, and the
/// search passed. With poll and with epoll.
#[test]
fn a_woken_poll_returns_what_arrived_before_it_ran() {
    let _serial = process_support::serial();
    for how in ["poll", "epoll"] {
        let mut c = config("ready", 2);
        c.args = vec![how.to_string()];
        let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)"]);
        assert_eq!(w.nodes[0].state, [0, 0, 0], "{how}: not run yet");
        assert!(matches!(w.nodes[0].blocked, Blocked::Woken { .. }), "{how}: 'a' ready, 'b' on its way");
        assert_eq!(enabled(&w), ["DELIVER(0, 1.0)", "RUN(0)"], "{how}");
        let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)"]);
        assert_eq!(w.nodes[0].state, [0, 1, 0], "{how}: read 'a', woke the eventfd");
        assert!(matches!(w.nodes[0].blocked, Blocked::Woken { .. }), "{how}: the eventfd ready, 'b' on its way");
        let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)", "RUN(0)"]);
        assert_eq!(w.nodes[0].state, [0, 1, 1], "{how}: the eventfd alone");
        assert!(matches!(w.nodes[0].blocked, Blocked::Poll { until: None }), "{how}: nothing ready, nothing coming");
        let both = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)", "DELIVER(0, 1.0)"]);
        assert_eq!(both.nodes[0].life, Life::Signaled(nix::libc::SIGABRT), "{how}: both at once");
        let model = ProgramModel::new("ready", c);
        let r = explore(ProcessExplorer::new(&model).unwrap(), &Options::default(), &mut NoControl);
        assert_eq!(r.verdict, Verdict::Violation, "{how}: {}", r.to_text());
        assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{how}");
        let trace: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(trace, ["START", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(1)", "DELIVER(0, 1.0)"], "{how}");
    }
    // One event at a time (maxevents 1) with both ready: the kernel
    // returns the head of the ready list, and never both, so the program
    // never aborts. Here the connection, back on the list's tail since it
    // reported 'a', is ahead of the eventfd written after that, though
    // its descriptor is the higher; 'b' comes first. It was an error (the
    // order of the list was not kept).
    let mut c = config("ready", 2);
    c.args = vec!["epoll1".to_string()];
    let w = replay(&c, &["RUN(1)", "ACCEPT(0, 1)", "DELIVER(0, 1.0)", "RUN(0)", "DELIVER(0, 1.0)"]);
    assert_eq!(w.nodes[0].state, [0, 2, 1], "'b' first, then the eventfd's two writes in one read");
    assert!(matches!(w.nodes[0].blocked, Blocked::Poll { until: None }), "{:?}", w.nodes[0].blocked);
    let model = ProgramModel::new("ready", c);
    let r = explore(ProcessExplorer::new(&model).unwrap(), &Options::default(), &mut NoControl);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

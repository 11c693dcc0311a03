//! Issue 28, Deliver 2: a node's threads (`pthread_create`, glibc's
//! `clone3`), run one at a time and switched where the running one waits
//! on a futex, waits for the world, yields or ends
//! (`cmc/src/process/calls/threads.rs`, `process/threads.rs`). Each test
//! runs a mode of `examples/c/threads.c`. Before, every `clone3` was an
//! error ("a thread or a child process in a target is not supported"), so
//! each test failed on the code before it.

#![cfg(target_os = "linux")]

mod process_support;

use cmc::process::{Config, ProcessExplorer, ProcessWorld, ProgramModel};
use cmc::{NoControl, Options, Report, Verdict, explore};
use process_support::{config, replay};

/// `threads NODE MODE ARGS...` on one node.
fn threads(args: &[&str]) -> Config {
    let mut c = config("threads", 1);
    c.args = args.iter().map(|a| a.to_string()).collect();
    c
}

fn check(model: &ProgramModel, det: bool) -> Report {
    let explorer = ProcessExplorer::new(model).expect("valid").with_det(det);
    explore(explorer, &Options::default(), &mut NoControl)
}

/// Three workers made with `pthread_create` take a mutex, count, signal a
/// condition variable and end; the main thread waits on the condition
/// variable, joins them (`CLONE_CHILD_CLEARTID`'s word, woken at each
/// end) and checks their thread ids (`gettid`: apart from each other and
/// from its own, which is its pid) and their thread-local values. It
/// reports [3, 3] only when every check held; a failed one ends it with a
/// status of 2 or more, which `no_node_exited` reports.
#[test]
fn threads_made_with_pthread_create_run_one_at_a_time() {
    let _serial = process_support::serial();
    for (snapshots_max, det) in [(0, false), (2048, false), (2048, true)] {
        let mut c = threads(&["basic"]);
        c.budgets.clients = 1;
        c.snapshots_max = snapshots_max;
        let model = ProgramModel::new("basic", c).always("checked", |w: &ProcessWorld| w.nodes[0].state == [3, 3]);
        let r = check(&model, det);
        assert_eq!(r.verdict, Verdict::Pass, "snapshots_max {snapshots_max}, det {det}: {}", r.to_text());
        assert_eq!((r.distinct_states, r.depth), (3, 3), "{}", r.to_text());
    }
}

/// A lease server whose main thread accepts and reads requests and hands
/// each to a worker thread through a queue under a mutex and a condition
/// variable; the worker grants the lease once. Correct, it passes; with
/// its bug (it grants every asker) two clients get "G", a violation found
/// with its shortest trace, at every `snapshots_max` and under `--det`.
#[test]
fn a_threaded_server_is_checked_and_its_bug_found() {
    let _serial = process_support::serial();
    let run = |bug: bool, snapshots_max: usize, det: bool| {
        let mut c = threads(if bug { &["lease", "bug"] } else { &["lease"] });
        c.budgets.clients = 2;
        c.request = b"A".to_vec();
        c.snapshots_max = snapshots_max;
        let grants = |w: &ProcessWorld| w.replies.iter().filter(|(_, r)| r == b"G").count();
        let model = ProgramModel::new("lease", c).always("one_grant", move |w| grants(w) <= 1);
        check(&model, det)
    };
    for (snapshots_max, det) in [(0, false), (2048, false), (2048, true)] {
        let ok = run(false, snapshots_max, det);
        assert_eq!(ok.verdict, Verdict::Pass, "{}", ok.to_text());
        assert_eq!((ok.distinct_states, ok.depth), (9, 7), "{}", ok.to_text());
        let bug = run(true, snapshots_max, det);
        assert_eq!(bug.verdict, Verdict::Violation, "{}", bug.to_text());
        assert!(bug.to_text().contains("one_grant"), "{}", bug.to_text());
    }
}

/// Two threads that wait at once for what the world brings (`threads.c`
/// "two": the main thread in an accept, a second in a read of a
/// connection it dialled to its own node): the slot holds the main
/// thread's accept, and the reader's EOF names its thread. It was an error
/// before ("wait at once for what the world brings").
#[test]
fn two_threads_may_wait_for_the_world_at_once() {
    let _serial = process_support::serial();
    let model =
        ProgramModel::new("two", threads(&["two"])).always("not_ended", |w: &ProcessWorld| w.nodes[0].state != [1]);
    let r = check(&model, false);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let text = r.to_text();
    assert!(text.contains("ACCEPT(0, 0)") && text.contains("EOF(0, 0.0, thread 1)"), "{text}");
}

/// A thread per connection (`threads.c` "perconn"): each connection's
/// thread reads its requests while the main thread waits in `accept`, so
/// three threads wait for the world at once, and every order of the
/// deliveries to them is explored (a DELIVER names the thread it answers
/// where it is not the slot's). The lease goes to whichever request comes
/// first, so "the first client holds it" is violated, with the second's
/// request delivered first; the correct server passes "one grant" and the
/// buggy one does not, at every `snapshots_max` and under `--det`. With a
/// receive timeout per connection, each thread's TIMEOUT names it, and a
/// read made again (another thread changed the node) keeps the deadline
/// its call began with.
#[test]
fn a_server_with_a_thread_per_connection_is_checked() {
    let _serial = process_support::serial();
    let run = |args: &[&str], timeouts: u8, snapshots_max: usize, det: bool, first: bool| {
        let mut c = threads(args);
        c.budgets.clients = 2;
        c.budgets.timeouts = timeouts;
        c.requests = vec![b"A1".to_vec(), b"A2".to_vec()];
        c.snapshots_max = snapshots_max;
        let grants = |w: &ProcessWorld| w.replies.iter().filter(|(_, r)| r == b"G").count();
        let mut model = ProgramModel::new("perconn", c).always("one_grant", move |w| grants(w) <= 1);
        if first {
            model = model.always("first_client_holds", |w: &ProcessWorld| w.nodes[0].state.first() != Some(&b'2'));
        }
        check(&model, det)
    };
    for (snapshots_max, det) in [(0, false), (2048, false), (2048, true)] {
        let ok = run(&["perconn"], 0, snapshots_max, det, false);
        assert_eq!(ok.verdict, Verdict::Pass, "{}", ok.to_text());
        assert_eq!((ok.distinct_states, ok.depth), (12, 7), "{}", ok.to_text());
        let bug = run(&["perconn", "bug"], 0, snapshots_max, det, false);
        assert_eq!(bug.verdict, Verdict::Violation, "{}", bug.to_text());
    }
    let order = run(&["perconn"], 0, 2048, false, true);
    assert_eq!(order.verdict, Verdict::Violation, "{}", order.to_text());
    assert!(order.to_text().contains("DELIVER(0, c0.1, thread 2)"), "{}", order.to_text());
    let timed = run(&["perconn", "timed"], 2, 2048, false, false);
    assert_eq!(timed.verdict, Verdict::Pass, "{}", timed.to_text());
    // One timeout: the first thread's ends both reads, which began at
    // one time (the second thread's read, made again when the first
    // closed its connection, keeps its deadline, as Linux's does).
    let mut c = threads(&["perconn", "timed"]);
    c.budgets.clients = 2;
    c.budgets.timeouts = 1;
    let model = ProgramModel::new("timed", c).always("one_ends", |w: &ProcessWorld| w.nodes[0].state.get(2) < Some(&2));
    let both = check(&model, false);
    assert_eq!(both.verdict, Verdict::Violation, "{}", both.to_text());
    assert!(both.to_text().contains("TIMEOUT(0, thread 2)"), "{}", both.to_text());
}

/// A thread per connection whose threads check the lease and take it in
/// two critical sections, with a report between (`threads.c` "perconn
/// split"): on Linux the second connection's thread may run between the
/// first's check and take (its request arrived while the first ran), and
/// both are granted. The world answers a waiting thread only once its
/// node's other threads wait, so with no switch that never happens and
/// the search passes; with one, the node is held before the running
/// thread's calls while the world may answer another (`Blocked::Choice`),
/// and the second thread's DELIVER there, spending the switch, finds the
/// double grant.
#[test]
fn the_world_may_answer_a_waiting_thread_between_two_calls_of_another() {
    let _serial = process_support::serial();
    let run = |switches: u8| {
        let mut c = threads(&["perconn", "split"]);
        c.budgets.clients = 2;
        c.budgets.thread_switches = switches;
        c.requests = vec![b"A1".to_vec(), b"A2".to_vec()];
        let grants = |w: &ProcessWorld| w.replies.iter().filter(|(_, r)| r == b"G").count();
        check(&ProgramModel::new("split", c).always("one_grant", move |w| grants(w) <= 1), false)
    };
    let fixed = run(0);
    assert_eq!(fixed.verdict, Verdict::Pass, "{}", fixed.to_text());
    let switched = run(1);
    assert_eq!(switched.verdict, Verdict::Violation, "{}", switched.to_text());
    let text = switched.to_text();
    let at_choice = text.lines().position(|l| l.contains("thread 1 held where its next thread is a choice"));
    let answered = text.lines().position(|l| l.contains("DELIVER(0, c0.1, thread 2)"));
    assert!(at_choice.is_some_and(|c| answered.is_some_and(|a| a > c)), "{text}");
}

/// A wake another thread's action gave is seen before that thread's next
/// call (`threads.c` "pollrace", two nodes: a worker polls a connection
/// the main thread reads, and then receives without waiting, aborting on
/// EAGAIN). On Linux the data wakes both, and the main thread's read may
/// take it first (10 of 40 native runs abort). With no switch the worker
/// runs on (a pass, the fixed order); with one, the main thread's read,
/// made ready by the DELIVER to the worker's poll, may run before the
/// worker's receive: a violation. A review found it passed with any
/// number of switches (the read was made ready only where the worker
/// waited next).
#[test]
fn a_thread_woken_by_what_another_was_given_may_run_before_its_next_call() {
    let _serial = process_support::serial();
    let run = |switches: u8| {
        let mut c = config("threads", 2);
        c.args = vec!["pollrace".to_string()];
        c.budgets.thread_switches = switches;
        check(&ProgramModel::new("pollrace", c), false)
    };
    let fixed = run(0);
    assert_eq!(fixed.verdict, Verdict::Pass, "{}", fixed.to_text());
    let switched = run(1);
    assert_eq!(switched.verdict, Verdict::Violation, "{}", switched.to_text());
    let text = switched.to_text();
    assert!(text.contains("killed by signal 6") && text.contains("SWITCH(0, 0)"), "{text}");
}

/// Two reviews' probes of waits another thread's change ends, each a
/// wrong answer before its fix (`threads.c`; native runs in brackets):
/// - "selleft": a select made again writes back the time left of the
///   timeout it began with (it wrote back the whole 5 s: a violation) [the
///   worker finds about 4 s left, 0 aborts];
/// - "tfdarm": a read of a timerfd not armed, which another thread arms,
///   is made again and returns at a TIMEOUT (it waited for ever: a pass)
///   [every run aborts];
/// - "pipeunder": a pipe end closed under another thread's read is an
///   error, as for a connection (the read was made again in the pipe that
///   took its number: a violation) [the read waits on];
/// - "shuttimeo" (two nodes, one switch, deadline order): a read with a
///   receive timeout, shut down by another thread, ends with 0, and is not
///   timed out after the shutdown (TIMEOUT answered it at a choice after
///   the shutdown: a violation) [0 aborts].
#[test]
fn a_wait_another_thread_ends_is_made_again_as_linux_wakes_it() {
    let _serial = process_support::serial();
    let deadline = cmc::process::TimeoutOrder::Deadline { drift_ms: 0 };
    let run = |mode: &str, nodes: u8, switches: u8| {
        let mut c = config("threads", nodes);
        c.args = vec![mode.to_string()];
        c.budgets.timeouts = 2;
        c.budgets.thread_switches = switches;
        c.timeout_order = deadline;
        check(&ProgramModel::new(mode, c), false)
    };
    let r = run("selleft", 1, 0);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    let r = run("tfdarm", 1, 0);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    let r = run("pipeunder", 1, 0);
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.to_text().contains("closed while thread 1 waits on it"), "{}", r.to_text());
    for switches in [0, 1] {
        let r = run("shuttimeo", 2, switches);
        assert_eq!(r.verdict, Verdict::Pass, "switches {switches}: {}", r.to_text());
    }
    // A fifth review's, each a pass before (every native run aborts; 7 of
    // 8 for "stale"): a pipe read by `preadv2`, an eventfd write waiting
    // for room, an epoll wait on a timerfd added under it, each woken by
    // the main thread (they waited for ever); and with one switch, a poll
    // whose readiness came and went (the main thread wrote a byte and read
    // it back) times out between two of the main thread's calls (a stale
    // mark hid its TIMEOUT there).
    for mode in ["preadv2", "evfull", "epaddtfd"] {
        let r = run(mode, 1, 0);
        assert_eq!(r.verdict, Verdict::Violation, "{mode}: {}", r.to_text());
        assert!(r.to_text().contains("killed by signal 6"), "{mode}: {}", r.to_text());
    }
    let r = run("stale", 1, 1);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("TIMEOUT(0, thread 1)"), "{}", r.to_text());
    // A sixth review's: a vectored eventfd write whose later buffer waits
    // (made again, it counted the first twice, and the search never ended)
    // and a socketpair's MSG_WAITALL receive that waits with part of it
    // there (it took nothing; Linux takes what is there): errors with
    // threads. A poll counted as ending whenever any epoll instance of its
    // node had a ready interest, and a wait that may end held the clock
    // back under deadline order while its own TIMEOUT was left out: each
    // hid a timeout between two of the main thread's calls (a pass; every
    // native run aborts).
    for (mode, call) in [("evwritev", "writev"), ("waitallpair", "recvfrom")] {
        let r = run(mode, 1, 1);
        assert_eq!(r.verdict, Verdict::Error, "{mode}: {}", r.to_text());
        assert!(r.to_text().contains(&format!("{call} is not modelled")), "{mode}: {}", r.to_text());
    }
    for mode in ["epother", "dlmark"] {
        let r = run(mode, 1, 1);
        assert_eq!(r.verdict, Verdict::Violation, "{mode}: {}", r.to_text());
    }
    // A tokio probe's (a runtime of two workers): a descriptor deleted
    // from an epoll instance and closed while another thread waits in it
    // (an error before: the wait's descriptors were taken as the interests
    // it began with; Linux's wait goes on, and the worker gets B alone);
    // and a wait through a duplicate of the instance, never marked as one
    // that may end (its instance was looked up by the duplicate's number):
    // with one switch the worker runs before the main thread's next call,
    // as in every native run, which aborts.
    let r = run("epclose", 1, 0);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    let r = run("epdup", 1, 1);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    // A review's: an epoll wait's deadline and what the world may answer
    // it with were the interests it began with, not its instance's: a
    // timer armed and added under the wait never ended it between two of
    // the main thread's calls (a pass; every native run aborts), and a
    // timer deleted and closed, its number taken by a timer never added,
    // ended it with nothing to report (a violation; no native run aborts).
    let r = run("eptmadd", 1, 1);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    let r = run("eptfreuse", 1, 1);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

/// A review's probes of waits made again and of a thread's `exit`, each a
/// wrong answer before its fix (`threads.c`, two nodes):
/// - "retimeo set": a read that began with no receive timeout, made again
///   after the main thread set one, waits for ever, as on Linux (it took
///   the new timeout: a TIMEOUT failed it, a violation no run gives);
/// - "retimeo clear": one that began with a second's timeout keeps it
///   after the main thread cleared it, and fails (under deadline order it
///   lost it and passed, where every native run exits 7);
/// - "closeunder": a descriptor closed while another thread reads it, and
///   its number taken by a pipe: an error at the close (the read was made
///   again on the pipe, and got what was written there);
/// - "exitwhile accept" and "cond": a thread's `exit(7)`, while the main
///   thread waits, ends the node with 7 on every run (its thread's end
///   was sometimes taken for that thread's alone: verdicts changed from
///   one run to the next).
#[test]
fn a_wait_made_again_keeps_its_timeout_and_a_threads_exit_ends_the_node() {
    let _serial = process_support::serial();
    let run = |args: &[&str]| {
        let mut c = config("threads", 2);
        c.args = args.iter().map(|a| a.to_string()).collect();
        c.budgets.timeouts = 3;
        c.timeout_order = cmc::process::TimeoutOrder::Deadline { drift_ms: 0 };
        let exited = |w: &ProcessWorld| w.nodes.iter().any(|n| matches!(n.life, cmc::process::Life::Exited(7)));
        check(&ProgramModel::new(args[0], c).always("not_exited", move |w| !exited(w)), false)
    };
    let set = run(&["retimeo", "set"]);
    assert_eq!(set.verdict, Verdict::Pass, "{}", set.to_text());
    let clear = run(&["retimeo", "clear"]);
    assert_eq!(clear.verdict, Verdict::Violation, "{}", clear.to_text());
    assert!(clear.to_text().contains("exited 7"), "{}", clear.to_text());
    // A descriptor closed under another thread's wait, its number taken
    // by a pipe: an error (the read was made again on the pipe).
    let mut c = config("threads", 2);
    c.args = vec!["closeunder".to_string()];
    c.budgets.timeouts = 3;
    let r = check(&ProgramModel::new("closeunder", c), false);
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.to_text().contains("descriptor 5 closed while thread 1 waits on it"), "{}", r.to_text());
    for how in ["accept", "cond"] {
        for _ in 0..5 {
            let r = run(&["exitwhile", how]);
            assert_eq!(r.verdict, Verdict::Violation, "{how}: {}", r.to_text());
            assert!(r.to_text().contains("exited 7"), "{how}: {}", r.to_text());
        }
    }
}

/// A timed futex wait (`threads.c` "timedwait": `pthread_cond_timedwait`,
/// an absolute timeout on the real-time clock, or the monotonic one; and
/// "futexsolo", a relative one in a process of one thread) is a wait for
/// time: TIMEOUT ends it with ETIMEDOUT (naming a thread out of the slot),
/// the clock at its end; with no timeout budget it waits on. It was an
/// error ("a futex wait with a timeout is not modelled"). The calls the
/// kernel refuses are refused as it refuses them.
#[test]
fn a_timed_futex_wait_ends_at_a_timeout() {
    let _serial = process_support::serial();
    for mode in [&["timedwait"][..], &["timedwait", "mono"], &["futexsolo"]] {
        let run = |timeouts: u8| {
            let mut c = threads(mode);
            c.budgets.timeouts = timeouts;
            let model = ProgramModel::new("timedwait", c).always("waits", |w: &ProcessWorld| w.nodes[0].state != [1]);
            check(&model, false)
        };
        let none = run(0);
        assert_eq!((none.verdict, none.distinct_states), (Verdict::Pass, 1), "{mode:?}: {}", none.to_text());
        let one = run(1);
        assert_eq!(one.verdict, Verdict::Violation, "{mode:?}: {}", one.to_text());
        let text = one.to_text();
        let timeout = if mode[0] == "futexsolo" { "TIMEOUT(0)" } else { "TIMEOUT(0, thread 1)" };
        assert!(text.contains(timeout) && text.contains("futex { until: 1001 ms }"), "{text}");
    }
    // The kernel's errors, in its order ("futexerrs", each checked against
    // a native run: a review found ENOSYS, EINVAL and EINVAL answered as a
    // wait, 0 and EAGAIN).
    assert_eq!(replay(&threads(&["futexerrs"]), &[]).nodes[0].state, [5]);
}

/// Two workers race for a mutex after a client's connection is accepted
/// (`threads.c` "race"): in the fixed order worker 1 is first, so a
/// property that says so passes; with a thread switch the search also
/// runs worker 2 first where both may run (`SWITCH(0, 2)`), as Linux may,
/// and finds the violation, with a shortest trace. The docs say so: a
/// pass covers one order of a node's threads unless `thread_switches`
/// lets the search choose.
#[test]
fn a_bug_that_needs_another_order_of_threads_is_found_with_a_thread_switch() {
    let _serial = process_support::serial();
    let run = |switches: u8| {
        let mut c = threads(&["race"]);
        c.budgets.clients = 1;
        c.budgets.thread_switches = switches;
        let model = ProgramModel::new("race", c).always("first_is_1", |w: &ProcessWorld| w.nodes[0].state != [2]);
        check(&model, false)
    };
    let fixed = run(0);
    assert_eq!((fixed.verdict, fixed.distinct_states), (Verdict::Pass, 3), "{}", fixed.to_text());
    let switched = run(1);
    assert_eq!(switched.verdict, Verdict::Violation, "{}", switched.to_text());
    let text = switched.to_text();
    assert!(text.contains("SWITCH(0, 2)") && text.contains("held where its next thread is a choice"), "{text}");
}

/// A snapshot of a process with threads (`threads.c` "regs"): the worker
/// waits in a raw `read` with known values in its registers (rbx, r12 to
/// r15, xmm8, xmm9, xmm15), rounding downward, and checks them, its
/// thread-local value and its errno's place after the request came; the
/// request is answered in a fork of the parked process, where the worker
/// was made again from its captured frame. The served world is reached
/// (a property that says it is not is violated there) with snapshots and
/// without, under `--det` too; a register lost in the fork aborts the node
/// first (`no_node_exited`). Before snapshots of threads, every world was
/// rebuilt from the templates, and this held trivially.
#[test]
fn a_snapshot_of_a_process_with_threads_keeps_each_threads_registers() {
    let _serial = process_support::serial();
    for (snapshots_max, det) in [(0, false), (2048, false), (2048, true)] {
        let mut c = threads(&["regs"]);
        c.budgets.clients = 1;
        c.snapshots_max = snapshots_max;
        c.request = b"A".to_vec();
        let model = ProgramModel::new("regs", c).always("not_served", |w: &ProcessWorld| w.nodes[0].state != [1]);
        let r = check(&model, det);
        let text = r.to_text();
        assert_eq!(r.verdict, Verdict::Violation, "snapshots_max {snapshots_max}, det {det}: {text}");
        assert!(text.contains("not_served") && !text.contains("no_node_exited"), "{text}");
    }
}

/// A worker blocks SIGPIPE, gets EPIPE (the signal pending for it), reads
/// the request and unblocks SIGPIPE (`threads.c` "pipelater"): on Linux
/// the pending signal kills the node then (3 of 3 native runs). A fork
/// has no pending signal, so a process with one is not snapshotted, and
/// the search rebuilds its worlds from the templates: the node is killed
/// with snapshots on as with none. Snapshotted, the request was answered
/// in a fork without the signal, and the search passed.
#[test]
fn a_signal_pending_in_a_thread_keeps_its_process_from_being_snapshotted() {
    let _serial = process_support::serial();
    for snapshots_max in [0, 2048] {
        let mut c = threads(&["pipelater"]);
        c.budgets.clients = 1;
        c.request = b"A".to_vec();
        c.snapshots_max = snapshots_max;
        let r = check(&ProgramModel::new("pipelater", c), false);
        let text = r.to_text();
        assert_eq!(r.verdict, Verdict::Violation, "snapshots_max {snapshots_max}: {text}");
        assert!(text.contains("no_node_killed_by_a_signal"), "{text}");
    }
}

/// A review of snapshots of processes with threads found, each the same
/// verdict and counts as with no snapshots now:
/// - "fenew" with a switch: the node held where a worker is made and not
///   yet run, made again in a fork from the handler, which runs with the
///   kernel's fresh floating-point environment: the worker's rounding was
///   not its creator's, a violation no native run shows (and an error,
///   the counterexample not rebuilding); such a thread blocks every
///   signal (glibc starts it so), and the process is not snapshotted;
/// - "smallstack": the capture's signal frame on a worker's 16 KiB stack
///   with 10,000 bytes of it taken ran into its guard page, and the node
///   died (an error, ESRCH); a thread with too little room below its stack
///   pointer keeps its process from being snapshotted;
/// - "stackmerge" (a second review): that room was measured to the start
///   of the stack's mapping, where two stacks without guard pages are one
///   mapping: the frame wrote over the top of the other thread's stack
///   (its thread-local storage), and the node aborted in every fork (an
///   error); it is measured to the lowest address the thread's `clone3`
///   gave it;
/// - "two" with switches, a timeout and two clients: 46 and 86 worlds
///   with snapshots, 45 and 83 without. What a waiting thread last saw of
///   its node's insides (made again when they change) was history the
///   world did not hold: it is now the world's insides at each step that
///   begins between actions, and part of a hold's trail; and the
///   transition cache keyed whether switches were left, where a run reads
///   how many (the world's answer to a waiting thread at a choice spends
///   one): now the number.
#[test]
fn snapshots_of_a_process_with_threads_agree_with_none() {
    let _serial = process_support::serial();
    // Arguments, clients, switches, timeouts, and the counts (distinct and
    // generated worlds).
    type Case = (&'static [&'static str], u8, u8, u8, (u64, u64));
    let cases: [Case; 5] = [
        (&["fenew"], 1, 1, 0, (5, 5)),
        (&["smallstack"], 1, 0, 0, (4, 4)),
        (&["stackmerge"], 1, 0, 0, (4, 4)),
        (&["two"], 2, 1, 1, (45, 78)),
        (&["two"], 2, 2, 1, (83, 147)),
    ];
    for (args, clients, switches, timeouts, counts) in cases {
        for snapshots_max in [0, 2048] {
            let mut c = threads(args);
            c.budgets.clients = clients;
            c.budgets.thread_switches = switches;
            c.budgets.timeouts = timeouts;
            c.requests = vec![b"A1".to_vec(), b"B2".to_vec()];
            // As a model file has it (the review's).
            c.timeout_byte = false;
            c.snapshots_max = snapshots_max;
            let r = check(&ProgramModel::new(args[0], c), false);
            let what = format!("{args:?}, {switches} switches, snapshots_max {snapshots_max}: {}", r.to_text());
            assert_eq!(r.verdict, Verdict::Pass, "{what}");
            assert_eq!((r.distinct_states, r.generated_states), counts, "{what}");
        }
    }
}

/// A second review: with a crash, a peer's CRASH reset the connection a
/// worker of node 0 polls (`threads.c` "pollrace", two nodes), and where
/// node 0's process was there (no snapshots: every node's process runs
/// from the templates) the CRASH scheduled node 0's threads, the worker's
/// wait made again, where a checkpoint's world, without node 0's process,
/// did not: 45 worlds against 44. An action schedules the threads of its
/// own node only; what another node's crash does to a wait is for that
/// node's actions to answer.
#[test]
fn an_action_schedules_no_other_nodes_threads() {
    let _serial = process_support::serial();
    for snapshots_max in [0, 2048] {
        let mut c = config("threads", 2);
        c.args = vec!["pollrace".to_string()];
        c.budgets.thread_switches = 1;
        c.budgets.timeouts = 1;
        c.budgets.crashes = 1;
        c.timeout_byte = false;
        c.snapshots_max = snapshots_max;
        let r = check(&ProgramModel::new("pollrace", c), false);
        let got = (r.verdict, r.distinct_states, r.generated_states);
        assert_eq!(got, (Verdict::Violation, 44, 60), "snapshots_max {snapshots_max}: {}", r.to_text());
    }
}

/// A switch may come before any call of the running thread while another
/// may run, not only where it waits (`threads.c` "preempt": the worker's
/// 'B' before the main thread's 'A', as Linux may run them): a pass with
/// no switch, a violation with one. A review found it missed with
/// switches only at waits.
#[test]
fn a_thread_switch_may_come_before_any_call() {
    let _serial = process_support::serial();
    let run = |switches: u8| {
        let mut c = threads(&["preempt"]);
        c.budgets.clients = 1;
        c.budgets.thread_switches = switches;
        let model = ProgramModel::new("preempt", c).always("a_first", |w: &ProcessWorld| w.nodes[0].state != b"B");
        check(&model, false)
    };
    assert_eq!(run(0).verdict, Verdict::Pass);
    let switched = run(1);
    assert_eq!(switched.verdict, Verdict::Violation, "{}", switched.to_text());
    assert!(switched.to_text().contains("SWITCH(0, 1)"), "{}", switched.to_text());
}

/// A review's probes, each a wrong answer before its fix:
/// - "shutread": a thread shuts a connection for reading while the main
///   thread waits in a read of it; Linux ends the read with 0 (and the
///   program aborts): a violation (it passed, the read waiting for the
///   request);
/// - "sigpipe": a worker that blocks SIGPIPE gets EPIPE and goes on (it
///   was killed: the main thread's mask was read, the process signalled);
/// - "abort": a worker's `abort` (SIGABRT to its own thread id) kills the
///   node (it was an error: "a signal to another process"); "abortwait",
///   the same after a request while the main thread waits in `pause`, on
///   every run (a third review: the node was sometimes taken for a live
///   one, waiting: passes, errors and violations from run to run);
/// - "robust": a worker ends holding a robust mutex, which Linux marks by
///   the real thread id: an error (it passed: the mutex stayed locked);
/// - "mainexit": the main thread ends with `pthread_exit` while a worker
///   serves (it stalled for 10 s: the kernel does not wake the pidfd of
///   a main thread that ends first);
/// - "killblock": a worker that blocks SIGUSR1 sends it to the process,
///   which Linux gives to the main thread (the process dies): an error (it
///   passed: the signal stayed pending on the worker);
/// - "waitall" (two nodes): a worker's `MSG_WAITALL` receive, made again
///   after another thread's change, goes on from what it had ("AB"), as
///   on Linux (it started again and got "CDEF": a violation no run gives).
#[test]
fn what_threads_do_to_each_other_is_as_linux_does_it() {
    let _serial = process_support::serial();
    let run = |mode: &str| {
        let mut c = threads(&[mode]);
        c.budgets.clients = 1;
        check(&ProgramModel::new(mode, c), false)
    };
    let r = run("shutread");
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    let r = run("sigpipe");
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!(replay(&threads(&["sigpipe"]), &[]).nodes[0].state, [1], "EPIPE, and the node goes on");
    let r = run("abort");
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    for _ in 0..5 {
        let mut c = threads(&["abortwait"]);
        c.budgets.clients = 1;
        c.request = b"A".to_vec();
        let r = check(&ProgramModel::new("abortwait", c), false);
        assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
        assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    }
    let r = run("robust");
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.to_text().contains("robust mutex"), "{}", r.to_text());
    let r = run("killblock");
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.to_text().contains("caught or blocked by the sending thread"), "{}", r.to_text());
    let mut c = config("threads", 2);
    c.args = vec!["waitall".to_string()];
    let r = check(&ProgramModel::new("waitall", c), false);
    assert_eq!(r.verdict, Verdict::Pass, "the worker's MSG_WAITALL gets \"ABCD\": {}", r.to_text());
    let r = run("mainexit");
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!(replay(&threads(&["mainexit"]), &[]).nodes[0].state, [5], "the worker serves");
}

/// A review of `Supervisor::follow_epoll_waits` (`examples/c/epchange.c`),
/// each agreeing with Linux now and not before:
/// - "hup01": an interest that asks for nothing still reports a hang-up
///   (the kernel adds `EPOLLERR | EPOLLHUP` to every interest it adds or
///   changes): the wait returns once the peer's FIN reaches an end shut
///   for writing, and the program aborts, as every native run does (it
///   waited for ever: a pass);
/// - "tfout": a timerfd watched for writing (never ready) gave the wait a
///   deadline, and TIMEOUT ended an endless epoll wait with 0 (a
///   violation; natively the worker gets the eventfd alone);
/// - "selfexit": an instance that comes to watch both ends of a node's
///   connection to itself under a thread's wait is an error naming it, as
///   a wait on both ends is (a DELIVER was offered for the wrong end, an
///   internal error).
#[test]
fn an_epoll_wait_follows_its_instance_as_linux_does() {
    let _serial = process_support::serial();
    let run = |mode: &str, nodes: u8, switches: u8| {
        let mut c = config("epchange", nodes);
        c.args = vec![mode.to_string()];
        c.budgets.timeouts = 2;
        c.budgets.thread_switches = switches;
        c.timeout_order = cmc::process::TimeoutOrder::Deadline { drift_ms: 0 };
        check(&ProgramModel::new(mode, c), false)
    };
    let r = run("hup01", 2, 0);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
    for (mode, switches) in [("tfout", 1), ("tfout1", 0)] {
        let r = run(mode, 1, switches);
        assert_eq!(r.verdict, Verdict::Pass, "{mode}: {}", r.to_text());
    }
    let r = run("selfexit", 1, 1);
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    assert!(r.to_text().contains("watches both ends of a connection to itself"), "{}", r.to_text());
}

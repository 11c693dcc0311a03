//! Issue 26, Deliver 1: pipes, socketpairs and eventfds inside one node
//! are the world's (`cmc/src/process/calls/local.rs`). Each test runs a
//! mode of `examples/c/local.c`, whose report is one byte per answer of
//! the kernel (a count, or 256 - errno), and holds the checker to what the
//! same program reported natively: every `NATIVE_*` constant below was
//! measured by running `local 0 MODE ARGS` outside cmc, on Linux 6.18,
//! x86-64. Before this change every one of these calls was refused (class
//! 1, default-deny: a kernel object a node made would be shared by a
//! snapshot's forks), so each test failed on the code before it.

#![cfg(target_os = "linux")]

mod process_support;

use cmc::process::world::{Local, PairEnd};
use cmc::process::{Blocked, Config, Life, ProcessEngine, ProcessError, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Verdict, explore};
use nix::libc;
use process_support::{config, enabled, replay};

/// `local NODE MODE ARGS` on one node.
fn local(mode: &str, args: &[&str]) -> Config {
    let mut c = config("local", 1);
    c.args = std::iter::once(mode).chain(args.iter().copied()).map(str::to_string).collect();
    c
}

fn start_error(c: Config) -> ProcessError {
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial().expect_err("an error while starting")
}

/// `eventfd`: `EINVAL` for reads and writes of other than 8 bytes and for
/// the value `u64::MAX`, the counter's maximum `u64::MAX - 1` (then
/// `EAGAIN`, and a write of 0 still succeeds), `FIONREAD` is `ENOTTY`,
/// `EFD_SEMAPHORE` reads 1 at a time, `readv` gathers 8 bytes across
/// buffers while `writev` writes each buffer by itself (two of 8 add
/// twice; two of 4 are `EINVAL`), poll's `POLLIN` (1) and `POLLOUT` (4),
/// `F_GETFL` `O_RDWR | O_NONBLOCK`, `fstat` an anonymous inode of mode
/// 0600, `lseek` 0, `pread` `ESPIPE`, level-triggered epoll (ready on
/// every wait until read), eventfd2's bad flags `EINVAL`, `send`
/// `ENOTSOCK`.
#[test]
fn an_eventfd_answers_as_linux_does() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 eventfd`.
    const NATIVE_EVENTFD: [u8; 36] = [
        234, 8, 3, 245, 234, 234, 8, 1, 245, 8, 231, 8, 1, 4, 1, 1, 245, 8, 5, 16, 234, 2, 2, 8, 1, 6, 0, 227, 0, 1, 1,
        7, 1, 0, 234, 168,
    ];
    let w = replay(&local("eventfd", &[]), &[]);
    assert_eq!(w.nodes[0].state, NATIVE_EVENTFD);
    // fds 4 and 5 the eventfds, 6 the epoll instance, 7 the listener.
    assert_eq!(w.nodes[0].blocked, Blocked::Accept { fd: 7, until: None }, "parked after its report");
    assert_eq!(
        w.nodes[0].locals,
        [Local::Event { count: 0, semaphore: false }, Local::Event { count: 0, semaphore: true }],
        "both counters read to 0, numbered by their descriptors"
    );
}

/// A non-blocking pipe: its read end below its write end, `F_GETFL`
/// `O_RDONLY | O_NONBLOCK` and `O_WRONLY`, `F_GETPIPE_SZ` 64 KiB, poll
/// (nothing at the read end, `POLLOUT | POLLWRNORM` at the write end),
/// `EAGAIN` empty, `FIONREAD` at both ends, reads of at most what is
/// buffered, writes and reads of 0, `EBADF` at the wrong end, `ESPIPE`,
/// `fstat` a FIFO of mode 0600 whose ends are one inode, 4096 bytes
/// written and read whole; once the writer is closed, what is left and
/// then EOF, with `POLLHUP`; `O_CLOEXEC`, bad flags, `send`, `pread`,
/// `fsync`.
#[test]
fn a_pipe_answers_as_linux_does() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 pipe`.
    const NATIVE_PIPE: [u8; 34] = [
        1, 8, 0, 1, 16, 0, 4, 1, 245, 100, 100, 100, 65, 30, 70, 0, 0, 247, 247, 227, 1, 1, 16, 16, 81, 3, 2, 0, 16, 1,
        234, 168, 227, 234,
    ];
    let w = replay(&local("pipe", &[]), &[]);
    assert_eq!(w.nodes[0].state, NATIVE_PIPE);
    // The first pipe's read end and the second pipe, both drained.
    assert_eq!(w.nodes[0].locals, [Local::Pipe { bytes: Vec::new() }, Local::Pipe { bytes: Vec::new() }]);
}

/// Socketpairs of both types: writable at once (`POLLOUT | POLLWRNORM |
/// POLLWRBAND`), a write of nothing sends nothing on a stream and an
/// empty message on a seqpacket pair, `FIONREAD`, `MSG_PEEK` across a
/// stream's writes but within one message, a short read of a message
/// losing its rest, `MSG_TRUNC` (a message's whole length), recvmsg's
/// `MSG_TRUNC` flag, `MSG_WAITALL` (across writes on a stream only, and
/// what there is when non-blocking), an unnamed `AF_UNIX` address of 2
/// bytes, `SO_TYPE`, `SO_DOMAIN`, `SO_PEERCRED` of the node itself,
/// `fstat` a socket, `ESPIPE`, `listen` `EINVAL`; `SHUT_WR` gives the peer
/// EOF (`POLLRDHUP`) and the writer `EPIPE` while the other way stays
/// open; closing an end with data unread at it leaves the other hung up
/// with `ECONNRESET` pending (`POLLERR`, then `SO_ERROR` 104 takes it),
/// reading EOF and writing `EPIPE`; `shutdown` of a bad `how`, `EINVAL`.
#[test]
fn socketpairs_answer_as_linux_does() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 pair stream` and `local 0 pair seqpacket`.
    const NATIVE_STREAM: [u8; 50] = [
        1, 4, 3, 0, 4, 0, 69, 3, 3, 1, 97, 3, 98, 3, 245, 245, 2, 2, 2, 0, 2, 4, 245, 2, 0, 2, 1, 85, 0, 2, 1, 1, 1, 1,
        227, 234, 0, 69, 35, 0, 224, 2, 2, 93, 35, 104, 85, 0, 224, 234,
    ];
    const NATIVE_SEQPACKET: [u8; 50] = [
        1, 4, 3, 0, 4, 0, 69, 3, 2, 1, 97, 2, 99, 2, 0, 245, 4, 245, 2, 32, 245, 2, 2, 2, 0, 2, 1, 85, 0, 2, 5, 1, 1,
        1, 227, 234, 0, 69, 35, 0, 224, 2, 2, 93, 35, 104, 85, 0, 224, 234,
    ];
    for (ty, native) in [("stream", NATIVE_STREAM), ("seqpacket", NATIVE_SEQPACKET)] {
        let w = replay(&local("pair", &[ty]), &[]);
        assert_eq!(w.nodes[0].state, native, "{ty}");
        let Local::Pair { seqpacket, ends } = &w.nodes[0].locals[0] else { panic!("{ty}: {:?}", w.nodes[0].locals) };
        assert_eq!(*seqpacket, ty == "seqpacket");
        assert_eq!(
            ends[1],
            PairEnd { queue: Default::default(), shutdown: PairEnd::RCV | PairEnd::SEND, reset: false }
        );
    }
}

/// A write to a pipe without a reader, or to a socketpair shut for
/// writing, fails with `EPIPE`; a pipe and a stream raise SIGPIPE in the
/// writer (not for a write of nothing to a pipe, nor with `MSG_NOSIGNAL`),
/// a seqpacket pair never does. Ignored, the signal does nothing; caught,
/// the handler runs once per raise; left to its default, it kills the node
/// (a violation of `no_node_killed_by_a_signal`, as a real run dies of
/// it); blocked, it would stay pending where a snapshot's forks would not
/// have it, and is refused by name. The write end's poll is `POLLOUT |
/// POLLWRNORM | POLLERR` (268).
#[test]
fn epipe_and_sigpipe_are_linuxs() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 sigpipe ignore` and `local 0 sigpipe
    // handler`; `local 0 sigpipe default` reported [12, 1] and died of
    // SIGPIPE (exit status 141 in the shell).
    const NATIVE_IGNORE: [u8; 14] = [12, 1, 224, 0, 0, 0, 224, 0, 224, 0, 224, 0, 224, 0];
    const NATIVE_HANDLER: [u8; 14] = [12, 1, 224, 1, 0, 1, 224, 2, 224, 2, 224, 3, 224, 3];
    assert_eq!(replay(&local("sigpipe", &["ignore"]), &[]).nodes[0].state, NATIVE_IGNORE);
    assert_eq!(replay(&local("sigpipe", &["handler"]), &[]).nodes[0].state, NATIVE_HANDLER);
    let w = replay(&local("sigpipe", &["default"]), &[]);
    assert_eq!(w.nodes[0].life, Life::Signaled(libc::SIGPIPE));
    assert_eq!(w.nodes[0].state, [12, 1]);
    let err = start_error(local("sigpipe", &["blocked"]));
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, call, detail } if call == "write" && detail.contains("SIGPIPE is blocked")),
        "{err}"
    );
    // A search finds the death, as a real run meets it.
    let model = ProgramModel::new("local-sigpipe", local("sigpipe", &["default"]));
    let r = explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

/// With one descriptor free, `pipe` and `socketpair` fail with `EMFILE`
/// and write nothing; `eventfd` takes the one; with none free it fails
/// too; a bad address is `EFAULT`; and the lowest free descriptor is the
/// same afterwards: nothing was left behind.
#[test]
fn emfile_and_efault_leave_nothing_behind() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 emfile`.
    const NATIVE_EMFILE: [u8; 10] = [232, 1, 232, 1, 1, 232, 1, 242, 242, 1];
    let w = replay(&local("emfile", &[]), &[]);
    assert_eq!(w.nodes[0].state, NATIVE_EMFILE);
    assert!(w.nodes[0].locals.is_empty());
}

/// A read that nothing can end (an empty pipe or socketpair whose writer
/// is the node's own, an eventfd at 0) or an eventfd write past the
/// maximum waits for ever in a node of one thread, as natively (each hung
/// until `timeout 1` killed it): no action ends it.
#[test]
fn a_wait_nothing_can_end_lasts_for_ever() {
    let _serial = process_support::serial();
    for what in ["pipe", "eventfd", "full", "pair"] {
        let mut c = local("block", &[what]);
        c.budgets.timeouts = 1;
        let w = replay(&c, &[]);
        assert_eq!(w.nodes[0].state, [1], "{what}");
        assert_eq!(w.nodes[0].blocked, Blocked::Pause, "{what}");
        assert!(enabled(&w).is_empty(), "{what}: {:?}", enabled(&w));
    }
}

/// `poll` and `select` over a pipe and an eventfd are the poll machinery's:
/// nothing ready, a 1-second poll waits until TIMEOUT ends it with 0; then
/// the eventfd is ready at once, and so is the pipe once written.
#[test]
fn polls_over_pipes_and_eventfds_wait_as_on_the_kernel() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 poll`.
    const NATIVE_POLL: [u8; 6] = [0, 1, 1, 1, 2, 1];
    let mut c = local("poll", &[]);
    c.budgets.timeouts = 1;
    let w = replay(&c, &[]);
    assert_eq!(w.nodes[0].blocked, Blocked::Poll { until: Some(1001) });
    assert_eq!(enabled(&w), ["TIMEOUT(0)"]);
    let w = replay(&c, &["TIMEOUT(0)"]);
    assert_eq!(w.nodes[0].state, NATIVE_POLL);
}

/// An eventfd as an event loop's waker, beside a client connection, with
/// poll and with epoll: the request's DELIVER ends the wait, the loop
/// reads the byte and writes the eventfd, and its next wait finds the
/// eventfd ready at once, in the same step, with no action: (bytes read,
/// wakes, counters summed) is (1, 1, 1), as natively after the first
/// request.
#[test]
fn an_eventfd_wakes_an_event_loop_beside_a_connection() {
    let _serial = process_support::serial();
    // Measured natively (`local 7 waker HOW 3>/dev/null`, a client sending
    // "r" and later "ab"): reports [0, 0, 0], [1, 0, 0], [1, 1, 1], [3, 1, 1],
    // [3, 2, 3].
    const NATIVE_AFTER_R: [u8; 3] = [1, 1, 1];
    for how in ["poll", "epoll"] {
        let mut c = local("waker", &[how]);
        c.budgets.clients = 1;
        c.request = b"r".to_vec();
        let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)"]);
        assert_eq!(w.nodes[0].state, [0, 0, 0], "{how}");
        assert!(matches!(w.nodes[0].blocked, Blocked::Poll { until: None }), "{how}");
        let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
        assert_eq!(w.nodes[0].state, NATIVE_AFTER_R, "{how}");
        assert_eq!(w.nodes[0].locals, [Local::Event { count: 0, semaphore: false }], "{how}");
        assert!(matches!(w.nodes[0].blocked, Blocked::Poll { until: None }), "{how}: waits again");
    }
}

/// What a pipe holds is the world's: the node keeps the bytes it read from
/// connections (a request's 'r', a TIMEOUT's 'T') in a pipe and reports
/// only their count, so the worlds after 'r' and after 'T' differ only in
/// the pipe, and are two states; with both, it aborts if the 'T' came
/// first. A real run meets that order whenever its timeout fires before
/// the request arrives. Shared by a snapshot's forks (before: refused),
/// the pipe would have made the two one state and hidden the abort.
#[test]
fn what_a_pipe_holds_across_actions_is_the_worlds() {
    let _serial = process_support::serial();
    let mut c = local("memory", &[]);
    c.budgets.clients = 1;
    c.budgets.timeouts = 1;
    c.request = b"r".to_vec();
    let request = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    let timeout = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "TIMEOUT(0)"]);
    assert_eq!(request.nodes[0].state, [1]);
    assert_eq!(timeout.nodes[0].state, [1], "the same report");
    assert_eq!(request.nodes[0].locals, [Local::Pipe { bytes: b"r".to_vec() }]);
    assert_eq!(timeout.nodes[0].locals, [Local::Pipe { bytes: b"T".to_vec() }]);
    let mut buf = Vec::new();
    assert_ne!(request.fingerprint(&mut buf), timeout.fingerprint(&mut buf), "two states");
    let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "TIMEOUT(0)", "DELIVER(0, c0.0)"]);
    assert_eq!(w.nodes[0].life, Life::Signaled(libc::SIGABRT));
    let model = ProgramModel::new("local-memory", c);
    let r = explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

/// A round of ping-pong over a seqpacket socketpair per byte of a
/// client's request: each a ping one way and its answer back, within the
/// action that delivered the byte.
#[test]
fn a_socketpair_plays_ping_pong() {
    let _serial = process_support::serial();
    // Measured natively (`local 7 pingpong 3>/dev/null`, a client sending
    // "r" and then "s"): reports [0, 0], [1, 115], [2, 116].
    const NATIVE_LAST: [u8; 2] = [2, 116];
    let mut c = local("pingpong", &[]);
    c.budgets.clients = 1;
    c.request = b"rs".to_vec();
    assert_eq!(replay(&c, &[]).nodes[0].state, [0, 0]);
    let w = replay(&c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    assert_eq!(w.nodes[0].state, NATIVE_LAST);
    let Local::Pair { ends, .. } = &w.nodes[0].locals[0] else { panic!("{:?}", w.nodes[0].locals) };
    assert!(ends.iter().all(|e| e.queue.is_empty()), "every message read");
}

/// The limits on objects inside a node are errors naming them, reached
/// without one: 16 objects, 4096 bytes in a pipe, 64 writes buffered
/// toward a socketpair end. Natively all three succeed past them (the
/// kernel's pipe holds 64 KiB and its socket 278 small writes): a limit of
/// the world's size, never an answer the kernel would not give.
#[test]
fn limits_on_objects_inside_a_node_are_errors_naming_them() {
    let _serial = process_support::serial();
    for (what, reached, crossed, name) in [
        ("objects", "16", "17", "local_objects_per_node_max"),
        ("bytes", "4096", "4097", "local_bytes_max"),
        ("messages", "64", "65", "local_messages_max"),
    ] {
        assert_eq!(replay(&local("limit", &[what, reached]), &[]).nodes[0].state, [1], "{what}");
        let err = start_error(local("limit", &[what, crossed]));
        assert!(matches!(&err, ProcessError::Limit { node: 0, limit, .. } if *limit == name), "{what}: {err}");
    }
}

/// A duplicate of an end (`dup`, `F_DUPFD_CLOEXEC`, as tokio's signal
/// driver makes of its socketpair's) is the same end: what the peer
/// writes is read through it, the end stays open while a duplicate does
/// (the peer's write succeeds after the first close, fails with EPIPE
/// after the last), `O_NONBLOCK` set through one is the other's, and an
/// edge-triggered interest in a duplicate reports the peer's write. Each
/// answer as natively (`local 0 dup`). Before, a duplicate was refused.
#[test]
fn a_duplicate_of_a_local_end_is_the_same_end() {
    let _serial = process_support::serial();
    // Measured natively: `local 0 dup`.
    const NATIVE_DUP: [u8; 22] = [2, 1, 1, 120, 0, 1, 1, 0, 0, 0, 1, 245, 0, 1, 1, 1, 0, 0, 0, 0, 224, 5];
    let w = replay(&local("dup", &[]), &[]);
    assert_eq!(w.nodes[0].state, NATIVE_DUP);
    // Closing a watched end while a duplicate is open: Linux keeps the
    // interest under the number closed (natively `local 0 dupwatch`
    // reports 1 event), which the world does not; an error by name.
    let err = start_error(local("dupwatch", &[]));
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, call, detail }
            if call == "close" && detail.contains("a duplicate of it is open")),
        "{err}"
    );
}

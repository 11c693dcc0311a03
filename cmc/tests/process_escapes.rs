//! Issue 26, "a pass you can trust, part 1: nothing reaches a node from
//! outside the world": one test per class of the issue, each on a program
//! of `examples/c/escape.c` that is honest about its state, and each
//! failing on the code before the fix (a pass, an answer no kernel gives,
//! or a checker error where Linux answers).
//!
//! Each class has a program that only the new rule catches, not `--det`
//! (issue 26, Deliver 8): its test says what `--det` gave before, measured
//! with the `cmc` of 186d565 (the commit before the issue's work; `cargo
//! build -p cmc-cli` in a worktree of it) on this commit's `escape`, built
//! as these tests build it, through a model file `program = "escape"`,
//! `nodes = 1`, the `args` named and the other keys named, run as `cmc
//! --model-file FILE --det`. Class 8 (the engine) has none: its BFS/DFS
//! disagreement is the pipe's below, which that `--det` caught, and its
//! other two defects are not a program's (more than 65,535 initial worlds
//! were an error there, and a replay's exit status is the runner's). Their
//! tests are named after the class: `tests/tests/initial_states.rs`'
//! `class_8_*` and `cmc-runner`'s `class_8_a_replay_passes_*`.

mod process_support;

use std::time::Duration;

use cmc::process::supervisor::{EPOCH_BASE, VIRTUAL_PID_BASE};
use cmc::process::{Config, ProcessEngine, ProcessError, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Search, Verdict, explore};
use nix::libc;
use process_support::{config, replay};

/// `escape NODE MODE ARGS` on one node.
fn escape(mode: &str, args: &[&str]) -> Config {
    let mut c = config("escape", 1);
    c.args = std::iter::once(mode).chain(args.iter().copied()).map(str::to_string).collect();
    c.stall_timeout = Duration::from_secs(10);
    c
}

fn start_error(c: Config) -> ProcessError {
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial().expect_err("an error while starting")
}

/// The error of `escape MODE`, which must refuse `call` for node 0 with a
/// reason containing `why`.
fn assert_refused(mode: &str, call: &str, why: &str) {
    let err = start_error(escape(mode, &[]));
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, call: named, detail } if named == call && detail.contains(why)),
        "{mode}: {err}"
    );
}

/// Class 1, default-allow: calls that make a kernel object outside the
/// world ran unexamined, and a snapshot's forks shared the object. Every
/// call is now in one group of the table, and these are refused by name;
/// an eventfd and a socketpair are the world's (`process_local.rs`).
/// Passed under `--det` before: `args = ["signalfd"]` passed at 186d565
/// (1 distinct state), and so did inotify, userfaultfd, rlimit-cpu and
/// shared-ro.
#[test]
fn class_1_default_allow_kernel_objects_a_node_makes_are_refused_by_name() {
    let _serial = process_support::serial();
    let object = "kernel object outside the world";
    for (mode, call) in [("signalfd", "signalfd4"), ("inotify", "inotify_init1"), ("userfaultfd", "userfaultfd")] {
        assert_refused(mode, call, object);
    }
    for mode in ["eventfd", "socketpair"] {
        assert_eq!(replay(&escape(mode, &[]), &[]).nodes[0].state, [1], "{mode}: made, in the world");
    }
    assert_refused("memfd", "memfd_create", "outside the world");
    assert_refused("rlimit-cpu", "prlimit64", "RLIMIT_CPU");
    // Its own limits by its own (virtual) pid are the real process's: the
    // virtual pid reached the kernel, which found no such process (the
    // review of e8091fa).
    assert_eq!(replay(&escape("rlimit-own", &[]), &[]).nodes[0].state, [1, 1, 1, 1]);
    assert_refused("shared-ro", "mmap", "shared mapping");
    // The one call the filter passes on one descriptor: a node's own
    // descriptor of that number would have reached the kernel (a
    // socketpair end there was the kernel's: ENOTSOCK, and a pass).
    assert_refused("handoff", "socketpair", "descriptor 1021 is the checker's");
    // Also where an action hands it out: an error at the ACCEPT, before the
    // node runs on with it.
    let mut c = escape("handoff-accept", &[]);
    c.budgets.clients = 1;
    let err = ProcessEngine::new(c.clone())
        .expect("valid")
        .replay(&process_support::actions(&["CLIENT(0)", "ACCEPT(0, client)"]))
        .expect_err("an error");
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, call, detail } if call == "accept" && detail.contains("1021")),
        "{err}"
    );
}

/// Class 1: a pipe made in `main` is a counter that a real run of the
/// program always finds at 2 on its second read, and aborts. Every fork
/// of a snapshot wrote into the same pipe, so BFS never saw the abort and
/// passed, while DFS found it. `--det` caught this one: at 186d565, with
/// `args = ["pipe"]`, `clients = 2`, `timeouts = 1`, `request = "r"`, BFS
/// passed (43 distinct states, depth 7), DFS to depth 8 was a violation
/// (depth 6), and BFS with `--det` an error ("TIMEOUT(0) gave two different
/// worlds on two runs", depth 3), since its second run makes its own pipe.
/// The pipe was then refused (an error); it is now the world's, and the
/// abort a real run reaches is a violation.
#[test]
fn class_1_default_allow_a_pipe_shared_by_forks_is_no_longer_a_pass() {
    let _serial = process_support::serial();
    let mut c = escape("pipe", &[]);
    c.budgets.clients = 2;
    c.budgets.timeouts = 1;
    c.request = b"r".to_vec();
    let model = ProgramModel::new("escape-pipe", c);
    // BFS and DFS agree (class 8: on the shared pipe they gave different
    // verdicts, and nothing said so).
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 8 }] {
        let options = Options { search, ..Options::default() };
        let r = explore(ProcessExplorer::new(&model).expect("valid"), &options, &mut NoControl);
        assert_eq!(r.verdict, Verdict::Violation, "{search:?}: {}", r.to_text());
        assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{search:?}: {}", r.to_text());
    }
}

/// Class 1: an open file description is shared by a snapshot's forks, so
/// one fork's reads moved a sibling's offset: BFS never saw the abort a
/// real run reaches on its second read, and passed. The offset is now the
/// world's, and the abort is a violation. (`--det` caught it, as the
/// pipe's: at 186d565 `args = ["offset"]` with the pipe's keys was an
/// error at depth 3.)
#[test]
fn class_1_default_allow_a_file_offset_shared_by_forks_is_the_worlds() {
    let _serial = process_support::serial();
    let mut c = escape("offset", &[]);
    c.budgets.clients = 2;
    c.budgets.timeouts = 1;
    c.request = b"r".to_vec();
    let model = ProgramModel::new("escape-offset", c);
    let r = explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl);
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

/// `examples/c/early.c`, linked with `examples/c/early_lib.c` as a
/// shared library.
fn early() -> Config {
    let lib = process_support::shared_object("early_lib");
    let dir = lib.parent().expect("a directory").to_str().expect("a UTF-8 path").to_string();
    let lib = lib.to_str().expect("a UTF-8 path").to_string();
    let rpath = format!("-Wl,-rpath,{dir}");
    let mut c = Config::new(process_support::program_with("early", &["-Wl,--no-as-needed", &lib, &rpath]), 2);
    c.preload = Some(process_support::preload());
    c.budgets.timeouts = 1;
    c.budgets.crashes = 1;
    // A TIMEOUT moves the clock through a read with no timeout: the
    // manual's `T`, as the example programs have it.
    c.timeout_byte = true;
    c
}

/// Class 2, the template ran program code before it parked: an IFUNC
/// resolver, a `.preinit_array` function and a library's constructor read
/// real time, the CPU's RDRAND bit and real entropy, once, in a template
/// every life was forked from; ld.so took the canary and pointer guard
/// from the kernel's `AT_RANDOM` before the preload fixed it. Now the
/// template is the start stub, which runs none of the program's code: each
/// life runs all of it, under the checker, at the world's clock, with
/// `AT_RANDOM` the next 16 bytes of the node's random stream. The program
/// only this catches, not `--det`, is the next test's.
#[test]
fn class_2_code_before_main_runs_in_each_life_under_the_checker() {
    let _serial = process_support::serial();
    let c = early();
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap());
    let stream = cmc::process::supervisor::random_stream;
    let start = replay(&c, &[]);
    for n in 0..2u8 {
        let s = &start.nodes[n as usize].state;
        assert_eq!(s.len(), 50, "node {n}: {s:?}");
        let random = stream(n, 0, 16);
        let mut canary = random[..8].to_vec();
        canary[0] = 0;
        assert_eq!(&s[0..8], &canary[..], "node {n}: the canary, from AT_RANDOM, the stream's first 16 bytes");
        assert_eq!(&s[8..16], &random[8..16], "node {n}: the pointer guard, from AT_RANDOM");
        assert_eq!(word(s, 16), 0, "node {n}: .preinit_array's monotonic clock is the logical clock");
        // Each read of a clock adds a nanosecond to what the node's clocks
        // say after it (`ProcessWorld::clock_reads`).
        assert!(word(s, 24) < 1_000, "node {n}: .preinit_array's rdtsc is the logical clock in ns");
        assert!(word(s, 32) < word(s, 24), "node {n}: the IFUNC resolver's rdtsc, read before");
        assert_eq!(s[41], stream(n, 16, 1)[0], "node {n}: the library's urandom, after AT_RANDOM's");
        assert_eq!(word(s, 42) as i64, EPOCH_BASE, "node {n}: the library's real-time clock");
    }
    assert_eq!(replay(&c, &[]), start, "the same on every run");
    // A life after a crash at logical second 1 (a `T`) runs it all again, then.
    let w = replay(&c, &["TIMEOUT(0)", "CRASH(0)", "RESTART(0)"]);
    let s = &w.nodes[0].state;
    assert_eq!(w.clock, 1000);
    assert_eq!(word(s, 16), 1, "the restarted life's .preinit_array reads the world's clock");
    let first = word(&start.nodes[0].state, 24);
    assert!((1_000_000_000 + first..1_000_001_000).contains(&word(s, 24)), "and its rdtsc, after the first life's");
    assert_eq!(word(s, 42) as i64, EPOCH_BASE + 1, "and its library's constructor");
    // The stream runs on across the crash: the new life's AT_RANDOM is
    // bytes 17 to 32, and so are its canary and pointer guard.
    let mut canary = stream(0, 17, 8);
    canary[0] = 0;
    assert_eq!(&s[0..8], &canary[..], "the restarted life's own canary");
    assert_eq!(s[41], stream(0, 33, 1)[0], "and the library's urandom after it");
    // `--det`'s second run execs templates of its own (a filter each), so
    // that nothing a template holds is shared by the two runs.
    let model = ProgramModel::new("early", c);
    let explorer = ProcessExplorer::new(&model).expect("valid").with_det(true);
    let r = explore(explorer, &Options::default(), &mut NoControl);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!((r.filters_installed, r.execs), (Some(4), Some(4)), "two templates per node: {}", r.to_text());
}

/// Class 2: a life after a crash that finds a canary saved by an earlier
/// life other than its own aborts, as the second life of a real run
/// always does (each exec has its own `AT_RANDOM`). Every life was forked
/// from one template in which ld.so had set the canary, so none aborted,
/// and `--det`'s second run forked the same template. Passed under
/// `--det` before: `args = ["canary", DIR]`, `crashes = 1`, `data_dir =
/// DIR` passed at 186d565 (3 distinct states, depth 2). Each life's canary
/// is its own now, from the node's random stream, and the abort a
/// violation.
#[test]
fn class_2_a_restarted_life_has_a_canary_of_its_own() {
    let _serial = process_support::serial();
    let dir = std::env::temp_dir().join(format!("cmc-escape-canary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a data directory");
    let mut c = escape("canary", &[dir.to_str().expect("a UTF-8 path")]);
    c.data_dir = Some(dir.clone());
    c.budgets.crashes = 1;
    let model = ProgramModel::new("escape-canary", c);
    let r = explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

/// Class 3, process state a fork does not copy: a blocked signal raised
/// by the node stayed pending in its process, and every fork of its
/// snapshot lost it, so the node never died of it. Now refused by name.
/// `--det` caught a signal raised in `main` (at 186d565, `args =
/// ["pending"]`, `clients = 1`, `request = "r"`: an error, the second run
/// died of it), but not one made pending by a `.preinit_array` function,
/// in the template every life of both runs was forked from: passed under
/// `--det` before, `args = ["preinit-pending"]`, `clients = 1`, `request =
/// "r"` passed at 186d565 (4 distinct states, depth 4), where a real run
/// dies of SIGPIPE at the request.
#[test]
fn class_3_a_signal_left_pending_is_refused_by_name() {
    let _serial = process_support::serial();
    assert_refused("pending", "tgkill", "blocked");
    assert_refused("preinit-pending", "write", "SIGPIPE is blocked");
}

/// Class 4, the host: what a node reads of the machine is fixed: the host
/// name, its process group and session (virtual, as its pid), one CPU, a
/// file's modification time; another process's `/proc` entry does not
/// exist for it. The real values differed from one run of cmc to the next
/// (the checker's process group, a file's mtime) or between machines.
/// Passed under `--det` before: `args = ["statfs"]` passed at 186d565 (1
/// distinct state; both runs read the same free blocks), and so did
/// "host", whose values are now fixed; "proc-stat" was a `--det` error
/// (the real pids differed).
#[test]
fn class_4_what_a_node_reads_of_the_host_is_fixed() {
    let _serial = process_support::serial();
    let w = replay(&escape("host", &[]), &[]);
    let s = &w.nodes[0].state;
    assert_eq!(&s[0..4], b"\x03cmc", "uname's node name");
    let word = |at: usize| i32::from_ne_bytes(s[at..at + 4].try_into().unwrap()) as i64;
    assert_eq!(word(4), VIRTUAL_PID_BASE, "getpgrp");
    assert_eq!(word(8), VIRTUAL_PID_BASE, "getsid");
    assert_eq!(s[12], 1, "one CPU in the affinity mask");
    assert_eq!(word(13) as i32, EPOCH_BASE as i32, "a host file's mtime");
    assert_eq!((s[17], s[18]), (0, libc::ENOENT as u8), "/proc/1 does not exist for a node");
    assert_eq!(replay(&escape("host", &[]), &[]).nodes[0].state, *s, "the same on every run");
    assert_refused("statfs", "statfs", "free blocks");
    let err = start_error(escape("proc-stat", &[]));
    assert!(
        matches!(&err, ProcessError::File { node: 0, path, .. } if path.ends_with("/stat") && path.starts_with("/proc/")),
        "{err}"
    );
}

/// Class 5, right answers or errors: FIONREAD, SEEK_DATA and SEEK_HOLE on
/// a data-directory file answer as on Linux (FIONREAD answered 0); an
/// unknown clock id is EINVAL (it succeeded); `int 0x80` and the x32 ABI
/// are refused by name (they killed the node, a violation of
/// `no_node_killed_by_a_signal`); a node at its descriptor limit gets
/// EMFILE (a checker error); making the node non-dumpable is refused (as a
/// non-root user it hid the report). Passed under `--det` before: `args =
/// ["datafile", DIR, "mmap"]`, `data_dir = DIR` passed at 186d565 (1
/// distinct state), and so did "fstatfs" and "dumpable" (as root); "int80"
/// and "x32" were violations there.
#[test]
fn class_5_calls_answer_as_linux_does_or_are_refused_by_name() {
    let _serial = process_support::serial();
    let dir = std::env::temp_dir().join(format!("cmc-escape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a data directory");
    let mut c = escape("fionread", &[dir.to_str().expect("a UTF-8 path")]);
    c.data_dir = Some(dir.clone());
    let w = replay(&c, &[]);
    std::fs::remove_dir_all(&dir).ok();
    // "hello" at offset 2: 3 bytes left; data from 1, the hole at the end,
    // and past the end ENXIO.
    assert_eq!(w.nodes[0].state, [3, 1, 5, libc::ENXIO as u8]);
    // The other calls on a data-directory file, as Linux answers them or
    // refused by name (they answered what Linux would not, or ran on the
    // node's placeholder): fchdir ENOTDIR, readahead and sync_file_range
    // 0 (measured natively); a mapping, fstatfs and a duplicate refused.
    let datafile = |call: &str| {
        let mut c = escape("datafile", &[dir.to_str().expect("a UTF-8 path"), call]);
        c.data_dir = Some(dir.clone());
        c
    };
    std::fs::create_dir_all(&dir).expect("a data directory");
    let w = replay(&datafile("answers"), &[]);
    // And the process as the node's: personality is ADDR_NO_RANDOMIZE
    // (0x40000: no node runs with ASLR), getpgid the virtual 1000, and the
    // thread's name (PR_SET_NAME, passed through: the process's own) reads
    // back.
    assert_eq!(w.nodes[0].state, [libc::ENOTDIR as u8, 0, 0, 4, 0, 0, b'x']);
    for (call, named, why) in [("mmap", "mmap", "mapping"), ("fstatfs", "fstatfs", ""), ("dup", "dup", "duplicating")] {
        let err = start_error(datafile(call));
        assert!(
            matches!(&err, ProcessError::Unmodelled { node: 0, call: c, detail } if c == named && detail.contains(why)),
            "{call}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    let w = replay(&escape("clock-id", &[]), &[]);
    assert_eq!(w.nodes[0].state, [libc::EINVAL as u8, libc::EINVAL as u8]);
    let err = start_error(escape("int80", &[]));
    assert!(matches!(&err, ProcessError::Unmodelled { node: 0, call, .. } if call.contains("int 0x80")), "{err}");
    // The x32 ABI's getpid (39 with the x32 bit) is refused by name too;
    // Linux without x32 answers ENOSYS, and the filter killed the node.
    let err = start_error(escape("x32", &[]));
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, call, detail } if call == "x32 system call 39" && detail.contains("x86-64")),
        "{err}"
    );
    // Descriptors 0 to 3 are taken (and 193, above the limit): four
    // sockets, then EMFILE.
    let w = replay(&escape("emfile", &[]), &[]);
    assert_eq!(w.nodes[0].state, [libc::EMFILE as u8, 4]);
    assert_refused("dumpable", "prctl", "PR_SET_DUMPABLE");
}

/// Class 6, what the checker hands out is shared: every node's stdin and
/// fd 3 were one `/dev/null` description, so a status flag node 1 set was
/// node 0's too. Each node's, and each life's, descriptors are its own now,
/// and a change of their status flags is refused (their duplicates would
/// share it). Passed under `--det` before: `args = ["stdin-flags"]` passed
/// at 186d565 (1 distinct state), and so did "record-flags".
#[test]
fn class_6_stdin_and_the_records_are_each_nodes_own_and_their_flags_the_worlds() {
    let _serial = process_support::serial();
    for (mode, call) in [("stdin-flags", "fcntl"), ("record-flags", "fcntl")] {
        let err = start_error(escape(mode, &[]));
        assert!(
            matches!(&err, ProcessError::Unmodelled { node: 0, call: named, detail } if named == call && detail.contains("fd ")),
            "{mode}: {err}"
        );
    }
}

/// Class 7, observing changes the verdict: with `log_dir`, every process of
/// a node wrote through the one log description, so a node that looked at
/// its stdout's offset saw what its siblings printed. Stdout is `/dev/null`
/// to the node now (offset 0), and the checker writes the log. `--det`
/// caught "stdout-offset" (at 186d565, with `clients = 2`, `request =
/// "r"` and a `log_dir`, an error: its two runs found different offsets),
/// but not "stdout-written", which aborts when its offset is 0, as a real
/// run with stdout on /dev/null does: passed under `--det` before, with
/// `clients = 1`, `request = "r"` and a `log_dir` it passed at 186d565 (4
/// distinct states, depth 4; without the `log_dir`, a violation).
#[test]
fn class_7_a_log_directory_changes_nothing_a_node_sees() {
    let _serial = process_support::serial();
    let dir = std::env::temp_dir().join(format!("cmc-escape-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a log directory");
    let search = |log: bool| {
        let mut c = escape("stdout-offset", &[]);
        c.budgets.clients = 2;
        c.request = b"r".to_vec();
        c.log_dir = log.then(|| dir.clone());
        let model = ProgramModel::new("escape-stdout", c);
        explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
    };
    let (with, without) = (search(true), search(false));
    let log = std::fs::read_to_string(dir.join("node0.log")).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(with.verdict, Verdict::Pass, "{}", with.to_text());
    assert_eq!(
        (with.distinct_states, with.generated_states),
        (without.distinct_states, without.generated_states),
        "the log changes no count"
    );
    assert!(log.contains("read 1\n"), "the checker keeps the log: {log:?}");
    let w = replay(&escape("stdout-offset", &[]), &[]);
    assert_eq!(w.nodes[0].state, [0, 0]);
    // The node that aborts on an offset of 0 aborts with the log as
    // without it.
    std::fs::create_dir_all(&dir).expect("a log directory");
    let mut c = escape("stdout-written", &[]);
    c.budgets.clients = 1;
    c.request = b"r".to_vec();
    c.log_dir = Some(dir.clone());
    let model = ProgramModel::new("escape-stdout-written", c);
    let r = explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

//! Issue 26, the second round: what an adversarial review of the first
//! fixes found, each on a mode of `examples/c/lookalike.c` and each failing
//! on the code it reviewed (ebdf036). The expected values were measured
//! natively: the program run on Linux, in a private network namespace,
//! fd 3 on a file, one client sending the request.

mod process_support;

use cmc::process::{Config, ProcessEngine, ProcessError, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Report, Verdict, explore};
use nix::libc;
use process_support::{config, replay};

fn lookalike(mode: &str) -> Config {
    let mut c = config("lookalike", 1);
    c.args = vec![mode.to_string()];
    c
}

fn search(c: Config) -> Report {
    let model = ProgramModel::new("lookalike", c);
    explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
}

fn start_error(c: Config) -> ProcessError {
    ProcessEngine::new(c).expect("valid").initial().expect_err("an error while starting")
}

fn assert_killed(r: &Report) {
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(cmc::process::NO_NODE_KILLED), "{}", r.to_text());
}

/// Class 1: the preload's allocator served every node, and ignored a
/// double free that glibc's aborts on (natively: "free(): double free
/// detected in tcache 2", status 134). glibc's own allocator serves nodes
/// now, deterministic with the vDSO gone and `getrandom` the node's.
#[test]
fn a_double_free_aborts_as_glibc_aborts() {
    let _serial = process_support::serial();
    let mut c = lookalike("dfree");
    c.budgets.clients = 1;
    c.request = b"e".to_vec();
    assert_killed(&search(c));
}

/// Class 1: a path's resolution was kept by its spelling, so `//dev/fd/N`
/// (which `/dev/fd` rules out, spelt otherwise) kept naming the file the
/// descriptor had named before. Natively the second reopen reads
/// /etc/passwd and the node aborts (134); whether a resolution is kept is
/// now the walk's to say.
#[test]
fn a_descriptor_reopened_by_any_spelling_is_the_file_it_names_now() {
    let _serial = process_support::serial();
    assert_killed(&search(lookalike("fdcache")));
}

/// Class 2: every life read the same `AT_RANDOM`, so a program that takes
/// an incarnation from it never saw a new one after a crash (natively: a
/// SIGKILL and a restart with the durable record, then 134). Each life's
/// are the next 16 bytes of the node's stream now.
#[test]
fn each_life_has_its_own_at_random() {
    let _serial = process_support::serial();
    let mut c = lookalike("incarnation");
    c.budgets.crashes = 1;
    assert_killed(&search(c));
}

/// Class 2: a life started with the checker's state: its seccomp filter
/// (`PR_GET_SECCOMP` 2), `no_new_privs` (1), `rdtsc` trap (`PR_GET_TSC` 2),
/// the stub's alternate stack, and the signals ignored by whoever started
/// the checker (a background shell ignores SIGQUIT). Natively, a program
/// exec'd outside any sandbox reads 0, 0, 1 (PR_TSC_ENABLE), no
/// alternate stack, SIGQUIT at its default.
#[test]
fn a_life_starts_as_a_fresh_exec_outside_any_sandbox() {
    let _serial = process_support::serial();
    // As a background shell starts its jobs.
    unsafe { libc::signal(libc::SIGQUIT, libc::SIG_IGN) };
    let w = replay(&lookalike("fresh"), &[]);
    unsafe { libc::signal(libc::SIGQUIT, libc::SIG_DFL) };
    assert_eq!(w.nodes[0].state, [0, 0, 1, 1, 1, 0]);
}

/// Class 3: the program's SIGSEGV handler ran with SIGSEGV unblocked, so a
/// second fault in it ran it again (natively the kernel kills it, 139).
#[test]
fn a_fault_in_the_programs_own_sigsegv_handler_kills_it() {
    let _serial = process_support::serial();
    let mut c = lookalike("segvnest");
    c.budgets.clients = 1;
    c.request = b"r".to_vec();
    assert_killed(&search(c));
}

/// Class 3: the program's SIGSEGV handler ran with nothing blocked; the
/// kernel blocks its `sa_mask` (here SIGUSR1) and SIGSEGV while it runs
/// (natively: both blocked).
#[test]
fn the_programs_sigsegv_handler_runs_with_its_mask() {
    let _serial = process_support::serial();
    let w = replay(&lookalike("segvmask"), &[]);
    assert_eq!(w.nodes[0].state[..2], [1, 1], "SIGUSR1 and SIGSEGV blocked in the handler");
}

/// Class 3: a signal a node sent itself named the checker's real pid as
/// its sender; natively `si_pid` is the node's own pid.
#[test]
fn a_signal_a_node_sends_itself_names_it_as_the_sender() {
    let _serial = process_support::serial();
    let w = replay(&lookalike("raisepid"), &[]);
    assert_eq!(w.nodes[0].state, [1, 0]);
}

/// Class 4: `getcpu` said processor 0 whatever the node ran on, while
/// `rdpid` (which no call answers) read the real one; natively they agree.
#[test]
fn getcpu_and_rdpid_name_the_same_processor() {
    let _serial = process_support::serial();
    // The processor a node is pinned to is chosen by the program and its
    // arguments: eight spellings, so that with two processors or more some
    // node runs on one other than 0 (where getcpu's old answer was right).
    let mut cpus = Vec::new();
    for pad in 0..8 {
        let mut c = lookalike("cpu");
        c.args.push(format!("pad{pad}"));
        let w = replay(&c, &[]);
        let s = w.nodes[0].state.clone();
        assert!(s[1] == 0xff || s[0] == s[1], "pad{pad}: getcpu {} against rdpid {}", s[0], s[1]);
        assert_eq!(replay(&c, &[]).nodes[0].state, s, "pad{pad}: the same on every run");
        cpus.push(s[0]);
    }
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(allowed < 2 || cpus.iter().any(|&c| c != 0), "no node ran on a processor but 0: {cpus:?}");
}

/// Class 4: `stat("/proc")`'s link count counts every process of the
/// machine, so it differed between runs as other processes came and went.
#[test]
fn the_link_count_of_proc_does_not_count_the_machines_processes() {
    let _serial = process_support::serial();
    let before = replay(&lookalike("procnlink"), &[]).nodes[0].state.clone();
    let mut sleepers: Vec<_> =
        (0..5).map(|_| std::process::Command::new("sleep").arg("30").spawn().expect("sleep")).collect();
    let during = replay(&lookalike("procnlink"), &[]).nodes[0].state.clone();
    for s in &mut sleepers {
        let _ = s.kill();
        let _ = s.wait();
    }
    assert_ne!(before[0], 0, "stat(\"/proc\") failed");
    assert_eq!(before, during, "five more processes on the machine changed what a node read");
}

/// Class 6/7: a node's own log, named by a path relative to the checker's
/// working directory as `log_dir` was, is refused like any other spelling
/// of it (only absolute spellings were).
#[test]
fn a_nodes_log_is_refused_by_any_spelling() {
    let _serial = process_support::serial();
    let abs = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lookalike-logs");
    std::fs::create_dir_all(&abs).unwrap();
    // The same directory relative to the working directory: up to the root,
    // then down.
    let depth = std::env::current_dir().unwrap().components().count() - 1;
    let dir = std::path::PathBuf::from("../".repeat(depth)).join(abs.strip_prefix("/").unwrap());
    let mut c = lookalike("peek");
    c.args.push(dir.join("node0.log").display().to_string());
    c.log_dir = Some(dir);
    let err = start_error(c);
    assert!(matches!(&err, ProcessError::File { node: 0, detail, .. } if detail.contains("log_dir")), "{err}");
}

/// Class 4: `readlink("/proc/self")`, and a working directory in `/proc`,
/// named the node's real pid (different on every run). The link reads as
/// the pid the node knows now, `getpid()`'s (1000 for node 0: four bytes,
/// as a kernel gives a process its own); the working directory is refused
/// by name.
#[test]
fn the_real_pid_is_not_readable_through_proc_self() {
    let _serial = process_support::serial();
    assert_eq!(replay(&lookalike("procself"), &[]).nodes[0].state, [4, 0]);
    let err = start_error(lookalike("chdirproc"));
    assert!(matches!(&err, ProcessError::File { node: 0, path, .. } if path.starts_with("/proc")), "{err}");
}

/// Class 5: answers no kernel gives. Natively: getrandom with an unknown
/// flag EINVAL, stat(NULL) EFAULT, openat of a descriptor it does not have
/// EBADF, fcntl of an unknown command EINVAL (the checker answered 4,
/// ENOENT, ENOENT, and stopped with an error).
#[test]
fn edge_cases_answer_as_linux_does() {
    let _serial = process_support::serial();
    let w = replay(&lookalike("edge"), &[]);
    let errnos = [libc::EINVAL, libc::EFAULT, libc::EBADF, libc::EINVAL].map(|e| e as u8);
    assert_eq!(w.nodes[0].state[..4], errnos);
}

/// Class 5: raising signal 63, the checker's, was refused as "a thread or
/// a child process"; it is refused by name now.
#[test]
fn raising_the_checkers_signal_is_refused_by_name() {
    let _serial = process_support::serial();
    let err = start_error(lookalike("raise63"));
    assert!(matches!(&err, ProcessError::Unmodelled { node: 0, detail, .. } if detail.contains("signal 63")), "{err}");
}

/// Class 5: with an alternate signal stack of MINSIGSTKSZ, the snapshot
/// handler's frame did not fit, and the fork failed ("ESRCH"); natively the
/// program serves for ever. The handler runs on the stack the process is on
/// now.
#[test]
fn a_small_alternate_stack_does_not_stop_snapshots() {
    let _serial = process_support::serial();
    let mut c = lookalike("smallalt");
    c.budgets.clients = 2;
    c.request = b"r".to_vec();
    let r = search(c);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

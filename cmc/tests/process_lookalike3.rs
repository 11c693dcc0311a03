//! Issue 26, the third round: what a review of the second round's fixes
//! found, each on a mode of `examples/c/lookalike3.c` and each failing on
//! the code it reviewed (6e5451e). The expected values were measured
//! natively: the program run on Linux, in a private network namespace,
//! fd 3 on a file, one client sending one byte.

mod process_support;

use std::path::PathBuf;

use cmc::process::{Config, ProcessEngine, ProcessError};
use nix::libc;
use process_support::{config, replay};

fn lookalike3(mode: &[&str]) -> Config {
    let mut c = config("lookalike3", 1);
    c.args = mode.iter().map(|s| s.to_string()).collect();
    c
}

fn start_error(c: Config) -> ProcessError {
    ProcessEngine::new(c).expect("valid").initial().expect_err("an error while starting")
}

/// A directory of this test binary's own, made afresh.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("lookalike3-{name}"));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("a directory");
    dir
}

/// Item 1: a data-directory file reopened through `/proc/self/fd/N` or
/// `/dev/fd/N` opened its placeholder, `/dev/null`, and read nothing;
/// natively both read the file ("hello").
#[test]
fn a_data_file_reopened_through_its_descriptor_link_reads_the_file() {
    let _serial = process_support::serial();
    let dir = fresh_dir("fdfile");
    let mut c = lookalike3(&["fdfile", dir.to_str().expect("a UTF-8 path")]);
    c.data_dir = Some(dir);
    assert_eq!(replay(&c, &[]).nodes[0].state, [1, 1, 0]);
}

/// Item 1: a listening socket reopened through `/proc/self/fd/N` opened
/// the placeholder; natively the open fails with ENXIO, and the link reads
/// `socket:[...]`.
#[test]
fn a_socket_reopened_through_its_descriptor_link_fails_with_enxio() {
    let _serial = process_support::serial();
    let w = replay(&lookalike3(&["fdsocket"]), &[]);
    assert_eq!(w.nodes[0].state, [libc::ENXIO as u8, 1, 0]);
}

/// Item 1: a pipe's read end reopened through `/proc/self/fd/N` opened
/// the placeholder and read nothing; natively it is a new end of the same
/// pipe, reading what was written ("hi"), its link reads `pipe:[...]`, and
/// an eventfd cannot be reopened so (ENXIO).
#[test]
fn a_pipe_reopened_through_its_descriptor_link_is_the_same_pipe() {
    let _serial = process_support::serial();
    let w = replay(&lookalike3(&["fdpipe"]), &[]);
    assert_eq!(w.nodes[0].state, [1, 1, libc::ENXIO as u8, 0]);
}

/// Item 2: the link of a descriptor opened on `/proc/self` read
/// `/proc/<real pid>`; natively it names `getpid()`'s.
#[test]
fn the_link_of_a_descriptor_on_proc_self_names_the_nodes_pid() {
    let _serial = process_support::serial();
    assert_eq!(replay(&lookalike3(&["pidlink"]), &[]).nodes[0].state, [1, 0]);
}

/// Item 2: a file of `/proc` held open was kept in the world with the
/// inode procfs made for it, which differs between lives and runs: two
/// runs of the same model gave two different worlds.
#[test]
fn a_proc_file_held_open_is_the_same_world_on_every_run() {
    let _serial = process_support::serial();
    let c = lookalike3(&["procfd"]);
    let bytes = || {
        let mut out = Vec::new();
        replay(&c, &[]).encode(&mut out);
        out
    };
    let first = bytes();
    assert_eq!(first, bytes(), "two runs of one model gave two worlds");
}

/// Item 3: only an open of the checker's own log was refused; `stat`
/// (whose size grows as the node prints), `access` and `readlink` of it
/// ran. Each is refused by name now.
#[test]
fn a_nodes_log_is_refused_to_stat_access_and_readlink() {
    let _serial = process_support::serial();
    let logs = fresh_dir("logs");
    for call in ["stat", "access", "readlink"] {
        let log = logs.join("node0.log");
        let mut c = lookalike3(&["logpeek", log.to_str().expect("a UTF-8 path"), call]);
        c.log_dir = Some(logs.clone());
        let err = start_error(c);
        assert!(
            matches!(&err, ProcessError::File { node: 0, detail, .. } if detail.contains("log_dir")),
            "{call}: {err}"
        );
    }
}

/// Item 4: everything under `/sys/kernel/mm/transparent_hugepage/` was
/// readable, its counters too (which every process of the machine moves,
/// and a node's own `MADV_HUGEPAGE` faults bumped). The settings are
/// allowed file by file now; the counters are refused, and the settings
/// still read after a huge page is advised and faulted.
#[test]
fn counters_of_transparent_huge_pages_are_refused_and_their_settings_are_not() {
    let _serial = process_support::serial();
    let thp = "/sys/kernel/mm/transparent_hugepage";
    let counters = [format!("{thp}/hugepages-2048kB/stats/anon_fault_alloc"), format!("{thp}/khugepaged/full_scans")];
    let present: Vec<&String> = counters.iter().filter(|p| std::path::Path::new(p).exists()).collect();
    assert!(!present.is_empty(), "this machine has no counter of transparent huge pages to read");
    for counter in present {
        let err = start_error(lookalike3(&["thp", counter]));
        assert!(matches!(&err, ProcessError::File { node: 0, path, .. } if path == counter), "{counter}: {err}");
    }
    let w = replay(&lookalike3(&["thp", &format!("{thp}/enabled")]), &[]);
    assert_eq!(w.nodes[0].state, [1, 0], "the setting 'enabled' reads");
    let w = replay(&lookalike3(&["hugepage"]), &[]);
    assert_eq!(w.nodes[0].state, [1, 1, 0], "MADV_HUGEPAGE succeeds, and 'enabled' reads after it");
}

/// Item 5: `/proc/<getpid()>` did not exist for a node (its pid is
/// virtual); natively it is the process itself, here its arguments.
#[test]
fn a_nodes_own_proc_entry_by_its_pid_is_itself() {
    let _serial = process_support::serial();
    let w = replay(&lookalike3(&["pidproc", "strict"]), &[]);
    assert_eq!(w.nodes[0].state, [1, b's', 0]);
}

/// Item 6: a program's own `PR_SET_TSC, PR_TSC_SIGSEGV` and
/// `ARCH_SET_CPUID, 0` ran, and the preload's emulation answered the
/// instruction the program had asked to fault (natively: SIGSEGV, 139).
/// Refused by name.
#[test]
fn a_programs_own_rdtsc_and_cpuid_traps_are_refused_by_name() {
    let _serial = process_support::serial();
    for (mode, name) in [("tsc", "PR_SET_TSC"), ("cpuid", "ARCH_SET_CPUID")] {
        let err = start_error(lookalike3(&[mode]));
        assert!(
            matches!(&err, ProcessError::Unmodelled { node: 0, detail, .. } if detail.contains(name) && detail.contains("program's own")),
            "{mode}: {err}"
        );
    }
}

/// Item 6: `ARCH_GET_CPUID` read the preload's CPUID faulting (0); a
/// program exec'd outside any sandbox reads 1.
#[test]
fn arch_get_cpuid_reads_as_outside_any_sandbox() {
    let _serial = process_support::serial();
    assert_eq!(replay(&lookalike3(&["getcpuid"]), &[]).nodes[0].state, [1, 0]);
}

/// Item 7: `/proc/self/auxv` gave the start stub's auxiliary vector, not
/// the program's (its AT_ENTRY the stub's: the node aborted, which no
/// real run does); `PR_GET_AUXV` would give the same. Both are refused
/// by name.
#[test]
fn the_auxiliary_vector_from_the_kernel_is_refused_by_name() {
    let _serial = process_support::serial();
    let err = start_error(lookalike3(&["auxv"]));
    assert!(
        matches!(&err, ProcessError::File { node: 0, path, detail, .. } if path.ends_with("/auxv") && detail.contains("auxiliary vector")),
        "{err}"
    );
    let err = start_error(lookalike3(&["getauxv"]));
    assert!(
        matches!(&err, ProcessError::Unmodelled { node: 0, detail, .. } if detail.contains("auxiliary vector")),
        "{err}"
    );
}

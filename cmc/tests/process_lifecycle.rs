//! No node process outlives the checker: not when the engine is dropped,
//! not when the checker panics, not when it aborts or is killed (DESIGN 6.3).
#![cfg(target_os = "linux")]

mod process_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cmc::process::ProcessEngine;
use process_support::config;

/// Set in the environment of the helper process this file starts.
const HELPER: &str = "CMC_PROCESS_LIFECYCLE_HELPER";

/// Whether process `pid` is gone (or a zombie nobody needs to kill).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

fn assert_all_gone(pids: &[i32], how: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pids.iter().all(|&p| gone(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&p| !gone(p)).collect();
    assert!(left.is_empty(), "node processes {left:?} outlived a checker that {how}");
}

/// Starts `nodes` probes: each waits in accept() and, should the checker
/// vanish without killing it, lingers for ever (examples/c/probe.c), so
/// only the death signal can end it. Then a CLIENT and an ACCEPT at node 0
/// fork a snapshot of it: the pids are every node's template, its first
/// life (parked as a snapshot) and node 0's second.
fn start(nodes: u8) -> (ProcessEngine, Vec<i32>) {
    let mut c = config("probe", nodes);
    c.budgets.clients = 1;
    let mut e = ProcessEngine::new(c).expect("valid");
    e.initial().expect("starts");
    let client = cmc::process::ProcessAction::Client { node: 0 };
    e.apply(&[], &client).expect("a client dials node 0");
    e.apply(&[client], &cmc::process::ProcessAction::Accept { node: 0, from: None, thread: None })
        .expect("node 0 accepts");
    let pids = e.processes();
    assert_eq!(pids.len(), 2 * nodes as usize + 1, "templates, lives and a fork: {pids:?}");
    (e, pids)
}

#[test]
fn no_node_outlives_a_dropped_engine() {
    let _serial = process_support::serial();
    let (e, pids) = start(3);
    assert!(pids.iter().all(|&p| !gone(p)));
    drop(e);
    assert_all_gone(&pids, "dropped its engine");
}

#[test]
fn no_node_outlives_a_panicking_checker() {
    let _serial = process_support::serial();
    let (tx, rx) = std::sync::mpsc::channel();
    let joined = std::thread::spawn(move || {
        let (_e, pids) = start(3);
        tx.send(pids).expect("test waits");
        panic!("the checker panics with nodes running");
    })
    .join();
    assert!(joined.is_err(), "the thread panicked");
    assert_all_gone(&rx.recv().expect("pids"), "panicked");
}

/// Starts this test binary as a helper checker that runs nodes, prints
/// their pids, then dies as `how` says; returns the pids.
fn helper_dies(how: &str) -> Vec<i32> {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "helper_checker_process", "--nocapture", "--test-threads=1"])
        .env(HELPER, how)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("helper starts");
    let mut pids = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.expect("helper output");
        // libtest may print "test NAME ... " on the same line first.
        if let Some((_, list)) = line.split_once("pids ") {
            pids = list.split(' ').map(|p| p.parse().expect("pid")).collect();
            if how == "sigkill" {
                child.kill().expect("kill the helper");
            }
            break;
        }
    }
    let _ = child.wait();
    assert!(!pids.is_empty(), "the helper reported its nodes");
    pids
}

#[test]
fn no_node_outlives_an_aborted_checker() {
    let _serial = process_support::serial();
    let pids = helper_dies("abort");
    assert_all_gone(&pids, "aborted");
}

#[test]
fn no_node_outlives_a_killed_checker() {
    let _serial = process_support::serial();
    let pids = helper_dies("sigkill");
    assert_all_gone(&pids, "was killed with SIGKILL");
}

/// Not a test of its own: the checker process the two tests above start.
/// Without the environment variable it does nothing.
#[test]
fn helper_checker_process() {
    let _serial = process_support::serial();
    let Ok(how) = std::env::var(HELPER) else { return };
    let (_e, pids) = start(3);
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    println!("pids {}", list.join(" "));
    match how.as_str() {
        // No unwinding, no destructors: only the kernel's death signal.
        "abort" => std::process::abort(),
        _ => std::thread::sleep(Duration::from_secs(30)),
    }
}

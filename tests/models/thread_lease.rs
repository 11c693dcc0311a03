//! `examples/rust/thread_lease.rs`: a lease server on `std::thread`, one
//! thread per connection. Its main thread waits in `accept` while each
//! session's thread waits in a read of its connection, so several threads
//! of the node wait for the world at once, and each action names the
//! thread it answers (`DELIVER(0, c0.1, thread 2)`; docs/SEMANTICS.md,
//! "Threads"). The models are small (one node, two clients, no crash):
//! they were made while a process with threads had no checkpoints.
//!
//! Both ordering bugs are Linux's too: run natively in a private network
//! namespace, two clients connected first and then asking at once (40
//! runs each, on this two-processor machine), `--bug-racy-session` granted
//! both clients in 29 runs, `--bug-split-check` in 1, the correct server
//! in none.

use cmc::process::{NodeState, ProcessWorld, ProgramModel};

/// Grants the server answered: the `G`s in the ghost log.
fn grants(w: &ProcessWorld) -> usize {
    w.replies.iter().filter(|(_, r)| r == b"G").count()
}

/// Two clients ask for the lease (`A1`, `A2`); at most one is granted it.
fn model() -> ProgramModel {
    ProgramModel::default().requests(["A1", "A2"]).node_state(NodeState::Inputs).always("one_grant", |w| grants(w) <= 1)
}

/// Two clients, with a thread switch: the one grant, in every order of
/// the deliveries to the two sessions' threads and with any one switch
/// of the node's threads.
#[cmc::model(program = env!("CARGO_BIN_EXE_thread_lease"), nodes = 1, clients = 2, thread_switches = 1)]
fn correct() -> ProgramModel {
    model()
}

/// The server grants the lease whoever holds it: both clients get it, in
/// the fixed order of threads.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_thread_lease"),
    nodes = 1,
    clients = 2,
    expect = violation("one_grant")
)]
fn bug_double_grant() -> ProgramModel {
    model().args(["--bug-double-grant"])
}

/// A session's thread numbers itself from the count of sessions, which the
/// main thread moves on after it logs: where the second session's thread
/// runs before that log (a switch before the main thread's `write` to
/// stderr, as Linux may run them), both sessions are number 1, and the
/// second is granted the lease the first holds.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_thread_lease"),
    nodes = 1,
    clients = 2,
    thread_switches = 1,
    expect = violation("one_grant")
)]
fn bug_racy_session() -> ProgramModel {
    model().args(["--bug-racy-session"])
}

/// The same bug without a thread switch: in the fixed order (the main
/// thread runs on until it waits in `accept`, and only then the new
/// thread) every session has a number of its own, so the search passes.
/// A pass covers the orders of a node's threads that its switches allow.
#[cmc::model(program = env!("CARGO_BIN_EXE_thread_lease"), nodes = 1, clients = 2)]
fn racy_session_missed_without_a_switch() -> ProgramModel {
    model().args(["--bug-racy-session"])
}

/// A session's thread checks that the lease is free and takes it under two
/// locks, with a log line between: the second session's request,
/// delivered to its thread between the first's check and take (the
/// switch: the world answers a waiting thread before the running one's
/// next call), is granted too.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_thread_lease"),
    nodes = 1,
    clients = 2,
    thread_switches = 1,
    expect = violation("one_grant")
)]
fn bug_split_check() -> ProgramModel {
    model().args(["--bug-split-check"])
}

/// The same bug without a thread switch: the second session's thread gets
/// its request only once the first waits again, so the search passes.
#[cmc::model(program = env!("CARGO_BIN_EXE_thread_lease"), nodes = 1, clients = 2)]
fn split_check_missed_without_a_switch() -> ProgramModel {
    model().args(["--bug-split-check"])
}

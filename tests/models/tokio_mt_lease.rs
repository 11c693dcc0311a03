//! `examples/rust/tokio_mt_lease.rs`: the lease service of `tokio_lease.rs`
//! on tokio's multi-thread runtime (`#[tokio::main]`, as most services are
//! written). Its node runs on one processor, so the runtime starts one
//! worker thread beside the main thread, which runs `main`'s future and
//! parks on a futex between its wakes. The threads run one at a time,
//! switching where the running one waits (docs/SEMANTICS.md, "Threads").
//! These models are smaller than `tokio_lease.rs`'s (no crash in the
//! correct one, no TIMEOUT): they were made while a process with threads
//! had no checkpoints and every world was rebuilt from the templates.

use cmc::process::{NodeState, ProcessWorld, ProgramModel};

/// Grants the server answered: the `G`s in the ghost log.
fn grants(w: &ProcessWorld) -> usize {
    w.replies.iter().filter(|(_, r)| r == b"G").count()
}

/// Two clients ask for the lease (`A1`, `A2`); at most one is granted it.
fn model() -> ProgramModel {
    ProgramModel::default().requests(["A1", "A2"]).node_state(NodeState::Inputs).always("one_grant", |w| grants(w) <= 1)
}

/// Two clients: the one grant, in every order of the two threads' steps
/// the runtime makes (356 worlds, against the current-thread runtime's
/// 178).
#[cmc::model(program = env!("CARGO_BIN_EXE_tokio_mt_lease"), nodes = 1, clients = 2)]
fn correct() -> ProgramModel {
    model()
}

/// The server grants the lease whoever holds it: both clients get it.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_tokio_mt_lease"),
    nodes = 1,
    clients = 2,
    expect = violation("one_grant")
)]
fn bug_double_grant() -> ProgramModel {
    model().args(["--bug-double-grant"])
}

/// The server keeps the holder in memory only: after a crash it grants the
/// lease again. The crash falls only where every thread waits (the
/// manual's crash at quiescence, `crash_points(false)`), which is enough
/// for this bug and keeps the search small.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_tokio_mt_lease"),
    nodes = 1,
    clients = 2,
    crashes = 1,
    expect = violation("one_grant")
)]
fn bug_volatile_holder() -> ProgramModel {
    model().args(["--bug-volatile-holder"]).crash_points(false)
}

//! `examples/rust/tokio_lease.rs`, the lease service written on tokio's
//! current-thread runtime, as nodes: the unmodified tokio binary (mio's
//! edge-triggered epoll, its eventfd waker, a task per connection, its
//! timers) checked from `cargo test` as `lease.rs` is. The crate has the
//! program as a `[[bin]]`, and the models name
//! `env!("CARGO_BIN_EXE_tokio_lease")`.
//!
//! The server is node 0 alone; the askers are the checker's clients,
//! the k-th sending the k-th of `requests`, and what the server answers
//! them is the ghost log. The planted bugs are command-line switches,
//! given as the models' `args`; the planted-bug gate finds their sites
//! (`bug_NAME` in the program) and requires the models named after them.
//!
//! Each request has a TIMEOUT to spend: tokio keeps each timer's deadline
//! in its own memory (its wheel) and tells the kernel only the earliest,
//! as its epoll wait's timeout, so what the server reports is not all its
//! future depends on. The models keep each node's inputs in the world
//! (`node_state = "inputs"`, `NodeState::Inputs`): two paths that set its
//! timers at different times are two worlds (docs/SEMANTICS.md, "Timers a
//! program keeps").

use cmc::process::{NodeState, ProcessWorld, ProgramModel};

/// Grants the server answered: the `G`s in the ghost log.
fn grants(w: &ProcessWorld) -> usize {
    w.replies.iter().filter(|(_, r)| r == b"G").count()
}

fn show(state: &[u8], _durable: Option<&[u8]>) -> String {
    match state {
        [0, 0] => "server  free".to_string(),
        [0, holder] => format!("server  held by {}", *holder as char),
        _ => format!("{state:02x?}"),
    }
}

/// Two clients ask for the lease (`A1`, `A2`); at most one is granted it.
fn model() -> ProgramModel {
    ProgramModel::default()
        .show(show)
        .requests(["A1", "A2"])
        .node_state(NodeState::Inputs)
        .always("one_grant", |w| grants(w) <= 1)
}

/// Two clients, a crash of the server anywhere (between any two of its
/// calls that have an effect) and a request's timeout: the whole space
/// passes, since the server makes the holder durable before it answers.
#[cmc::model(program = env!("CARGO_BIN_EXE_tokio_lease"), nodes = 1, clients = 2, crashes = 1, timeouts = 1)]
fn correct() -> ProgramModel {
    model()
}

/// The server grants the lease whoever holds it: both clients get it.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_tokio_lease"),
    nodes = 1,
    clients = 2,
    timeouts = 1,
    expect = violation("one_grant")
)]
fn bug_double_grant() -> ProgramModel {
    model().args(["--bug-double-grant"])
}

/// The server keeps the holder in memory only: after a crash it grants the
/// lease again.
#[cmc::model(
    program = env!("CARGO_BIN_EXE_tokio_lease"),
    nodes = 1,
    clients = 2,
    crashes = 1,
    timeouts = 1,
    expect = violation("one_grant")
)]
fn bug_volatile_holder() -> ProgramModel {
    model().args(["--bug-volatile-holder"])
}

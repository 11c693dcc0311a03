//! `examples/rust/lease.rs`, a Rust `std::net` program, as nodes: what a
//! protocol crate does to check the binary it ships. The crate (here the
//! workspace's `tests` package) has the program as a `[[bin]]`, and its
//! `harness = false` test target declares models naming the binary cargo
//! built for it, `env!("CARGO_BIN_EXE_lease")`: `cargo test` builds it
//! first, position-independent as cargo builds every binary.
//!
//! The planted bug is a command-line switch (`--bug-double-grant`), given
//! as the model's `args`; the planted-bug gate finds its site
//! (`bug_double_grant` in the program) and requires the model named
//! after it.

use cmc::process::{ProcessWorld, ProgramModel};

/// Clients holding the lease: those reporting `[1, 1]`.
fn holders(w: &ProcessWorld) -> usize {
    w.nodes.iter().filter(|n| n.state == [1, 1]).count()
}

fn show(state: &[u8], _durable: Option<&[u8]>) -> String {
    match state {
        [0, 0] => "server  free".to_string(),
        [0, holder] => format!("server  held by {holder}"),
        [1, phase] => {
            let phase = ["asking", "holding", "released", "denied"].get(*phase as usize).unwrap_or(&"?");
            format!("client  {phase}")
        }
        _ => format!("{state:02x?}"),
    }
}

fn model() -> ProgramModel {
    ProgramModel::default().show(show).always("one_holder", |w| holders(w) <= 1)
}

/// One server, two clients, a crash anywhere, and each lease's term may
/// end: the whole space passes. The server is written for the manual's
/// `T` (it reads on past one), and is checked under it.
#[cmc::model(program = env!("CARGO_BIN_EXE_lease"), nodes = 3, crashes = 1, timeouts = 2, timeout_byte)]
fn correct() -> ProgramModel {
    // With crash points (a crash between two calls, issue 27) and a crashed
    // node down until its RESTART: 6,438 worlds, where the manual's crash
    // at quiescence only gives 3,816.
    model()
}

/// The server grants the lease whoever holds it: both clients hold it.
#[cmc::model(program = env!("CARGO_BIN_EXE_lease"), nodes = 3, expect = violation("one_holder"))]
fn bug_double_grant() -> ProgramModel {
    model().args(["--bug-double-grant"])
}

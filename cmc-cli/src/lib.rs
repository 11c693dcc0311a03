//! The `cmc` command: checks the example cores by name, model files
//! (programs as nodes) and TLC configurations of Disk Paxos, and replays
//! their counterexamples. Glue over `cmc`, `cmc-runner` and the example
//! cores; the binary calls [`cli::main`].

#![warn(missing_docs)]

pub mod calibrate;
pub mod cli;
pub mod distributed;
pub mod explore;
// Public for the fuzz targets (`fuzz/`) and the test that replays their
// findings, not for users: hidden from the documentation.
#[doc(hidden)]
pub mod fuzzing;
pub mod program;
pub mod repro;

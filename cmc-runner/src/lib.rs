//! The runner: runs models for the `cmc` command, owning what the engine
//! does not: arguments, files, the clock, the terminal and signals.

pub mod calibrate;
pub mod cli;
pub mod control;
pub mod harness;
pub mod program;
pub mod repro;

//! The test runner for models: a `harness = false` test target whose
//! `main` is [`main!`] runs every `#[cmc::model]` it declares as a libtest
//! test, so that `cargo test` and `cargo nextest run` list, filter and run
//! them. It owns what the engine does not: the environment's overrides,
//! files, snapshots, the clock and signals.

#![warn(missing_docs)]

pub mod control;
pub mod explore;
pub mod harness;
pub mod overrides;
pub mod snapshot;

//! The example cores as models: each correct configuration pinned with its
//! counts, each planted bug an expected violation named after the bug, with
//! its counterexample snapshot under `snapshots/`. Run with `cargo test`;
//! review a changed snapshot with `cargo insta review`.

mod disk_paxos;
mod lock_service;
mod primary_backup;
mod two_phase;
mod two_phase_tla;

cmc_runner::main!(snapshots = "../snapshots");

//! The example cores as models: each correct configuration pinned with its
//! counts, each planted bug an expected violation named after the bug, with
//! its counterexample snapshot under `snapshots/`. Run with `cargo test`;
//! review a changed snapshot with `cargo insta review`. The example C
//! programs are declared the same way in `programs`, the example Rust
//! program in `lease`, and the example C cores in `ccores` (Linux only).

#[cfg(target_os = "linux")]
mod ccores;
mod disk_paxos;
#[cfg(target_os = "linux")]
mod lease;
mod lock_service;
mod primary_backup;
#[cfg(target_os = "linux")]
mod programs;
#[cfg(target_os = "linux")]
mod thread_lease;
#[cfg(target_os = "linux")]
mod tokio_lease;
#[cfg(target_os = "linux")]
mod tokio_mt_lease;
mod two_phase;
mod two_phase_tla;

cmc_runner::main!(snapshots = "../snapshots");

//! The conformance gate (issue 27, item 6): the process front end's model
//! against Linux itself. Linux is the oracle: a model that answers what no
//! kernel answers is a defect, however it looks.
//!
//! A schedule of the checker's actions (a planted bug's counterexample, a
//! seeded walk) is followed on the checker's engine as Linux can follow it
//! ([`follow`]: the kernel's own actions taken eagerly, as Linux takes
//! them; a schedule that leaves the kernel a choice the checker does not
//! see stops there, with the reason, and is counted); the same program
//! runs natively, one process per node on real loopback sockets in a
//! private network namespace, with no seccomp and no preload ([`native`]),
//! driven one external action at a time to quiescence; and after each
//! segment every node's records, life, latest state and durable record,
//! and what it wrote to clients, are compared with the checker's worlds
//! ([`compare`]). [`gate`] puts these together for one schedule, and
//! [`suite`] does what a gate test does with many.
//!
//! The crate is the only part of the workspace besides the process front
//! end that starts node processes, and the only one that runs a program
//! natively; it needs root for the namespace (`unshare(CLONE_NEWNET)`),
//! so its gate tests are ignored by `cargo test` and run by `.ci/run`
//! with `--ignored`.

#![cfg(target_os = "linux")]
#![warn(missing_docs)]

pub mod compare;
pub mod follow;
pub mod gate;
mod inspect;
pub mod native;
mod netns;
pub mod suite;

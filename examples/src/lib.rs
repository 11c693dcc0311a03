//! Example protocol cores, each with planted bugs selected through settings.

#![warn(missing_docs)]

pub mod disk_paxos;
pub mod lock_service;
pub mod primary_backup;
pub mod two_phase;
pub mod two_phase_tla;

use cmc::catalog::Entry;

/// Every example core, by name, for `cmc check NAME` and `cmc replay`.
pub fn catalog() -> Vec<Entry> {
    vec![
        Entry::new(
            "TwoPhase from the TLA+ examples (Lamport's two-phase commit) as a direct-actions core; TLC's counts",
            two_phase_tla::model,
        ),
        Entry::new(
            "Disk Paxos (HDiskSynod, TLA+ examples) as a direct-actions core; calibrated against TLC",
            disk_paxos::model,
        ),
        Entry::new(
            "two-phase commit over messages: coordinator timeout, durable votes and decision, crash recovery",
            two_phase::model,
        ),
        Entry::new(
            "primary-backup replicated register: replies only once durable everywhere; drops, resets, torn crashes",
            primary_backup::model,
        ),
        Entry::new(
            "lock server with a wait queue and wakes; idempotent under duplicates (bag network, one dup)",
            lock_service::model,
        ),
    ]
}

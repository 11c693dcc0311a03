//! Example protocol cores, each with planted bugs selected through settings.

pub mod two_phase_tla;

use cmc::catalog::Entry;

/// Every example core, by name, for `cmc check NAME` and `cmc replay`.
pub fn catalog() -> Vec<Entry> {
    vec![Entry::new(
        "TwoPhase from the TLA+ examples (Lamport's two-phase commit) as a direct-actions core; TLC's counts",
        two_phase_tla::model,
    )]
}

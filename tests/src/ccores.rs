//! The C cores this package links (`build.rs`): the example cores'
//! static libraries and the probe core `c/abi_probe.c`.

use cmc::ccore::{CPredicate, CmcCore, CmcWorld};

unsafe extern "C" {
    /// `examples/ccores/two_phase.c`: two-phase commit over messages.
    pub static two_phase_core: CmcCore;
    /// `examples/ccores/two_phase_tla.c`: Lamport's `TwoPhase`, direct actions.
    pub static two_phase_tla_core: CmcCore;
    /// `c/abi_probe.c`: misbehaves as its setting `misbehave` says.
    pub static abi_probe_core: CmcCore;
    /// `c/abi_probe.c`: `abi = 99`.
    pub static abi_probe_bad_abi: CmcCore;
    /// `c/abi_probe.c`: `durable_size` over `state_size`.
    pub static abi_probe_durable_over_state: CmcCore;
    /// `c/abi_probe.c`: no `step`.
    pub static abi_probe_no_step: CmcCore;
    /// `c/abi_probe.c`: `state_size` over `CMC_CORE_STATE_MAX`.
    pub static abi_probe_state_too_large: CmcCore;
    /// `c/abi_probe.c`: settings `a` and `b` overlap.
    pub static abi_probe_overlapping_settings: CmcCore;

    fn atomicity(world: *const CmcWorld) -> i32;
    fn commit_needs_all_yes(world: *const CmcWorld) -> i32;
    fn all_decided(world: *const CmcWorld) -> i32;
    fn commit_reachable(world: *const CmcWorld) -> i32;
    fn tp_type_ok(world: *const CmcWorld) -> i32;
    fn tc_consistent(world: *const CmcWorld) -> i32;
    fn replies_durable(world: *const CmcWorld) -> i32;
    fn at_most_one_reply(world: *const CmcWorld) -> i32;
}

/// A linked core, by reference.
pub fn core(c: &'static CmcCore) -> &'static CmcCore {
    c
}

/// The C two-phase core's properties, as its model file names them.
pub const TWO_PHASE_ALWAYS: [(&str, CPredicate); 2] =
    [("atomicity", atomicity), ("commit_needs_all_yes", commit_needs_all_yes)];
/// `all_decided`: every participant decides (eventually).
pub const TWO_PHASE_EVENTUALLY: (&str, CPredicate) = ("all_decided", all_decided);
/// `commit_reachable`: some node commits (sometimes).
pub const TWO_PHASE_SOMETIMES: (&str, CPredicate) = ("commit_reachable", commit_reachable);
/// The TLA core's invariants.
pub const TWO_PHASE_TLA_ALWAYS: [(&str, CPredicate); 2] =
    [("tp_type_ok", tp_type_ok), ("tc_consistent", tc_consistent)];
/// The probe's properties: `replies_durable` holds of the correct probe,
/// `at_most_one_reply` fails with two clients.
pub const PROBE_ALWAYS: [(&str, CPredicate); 2] =
    [("replies_durable", replies_durable), ("at_most_one_reply", at_most_one_reply)];

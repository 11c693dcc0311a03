//! Disk Paxos (Gafni and Lamport, "Disk Paxos", Distributed Computing 16(1),
//! 2003) as the direct-actions core `disk-paxos`: `HDiskSynod`'s `HInit` and
//! `HNext` from the TLA+ examples collection, with `MCDiskPaxos`'s constant
//! operators `Ballot(_)` and `IsMajority(_)`. This is the core cmc is
//! calibrated with against TLC (`cmc calibrate`, `docs/CALIBRATION.md`).
//!
//! The world is the specification's one state ([`DiskPaxosState`]); the
//! actions are `Next`'s disjuncts with their witnesses, one index each, in
//! the order TLC enumerates them ([`actions`]); `HNext` then updates the
//! history variables `chosen` and `allInput` on every successor. There are
//! |Inputs|^N initial states, one per `Init { variant }`.
//!
//! The configuration's constants are settings: `procs` (N), `disks`
//! (`Disk = 1..disks`), `inputs` (|Inputs|; model values are numbered
//! 1..inputs in TLC's order, their names' order, and `NotAnInput` is 0), `k`
//! (K), `ballot_layout` and `quorum_kind`. [`cfg`](mod@cfg) reads them from
//! a TLC configuration file.
//!
//! Planted bugs, the three mutant modules of the calibration set, each
//! replacing one action: `bug_own_value` (`MutOwnValue`: phase 1 proposes
//! the process's own input), `bug_no_abort` (`MutNoAbort`: reading a block
//! with a larger `mbal` records it instead of starting a new ballot) and
//! `bug_skip_read` (`MutSkipRead`: a phase ends once a majority of disks is
//! written, without reading the other processes' blocks there).
//!
//! Properties: every invariant of the calibration configurations, by its
//! TLA+ name ([`invariants`]); [`model`] checks the paper's `HInv1` to
//! `HInv6` with `Agreement`, `Validity` and `OutputIsChosen`, and
//! [`model_with`] any list of them in the given order, as TLC checks a
//! configuration's `INVARIANTS`.

pub mod actions;
pub mod cfg;
pub mod invariants;
pub mod spec;
pub mod state;
pub mod tla;

use cmc::{Context, Core, DirectActions, Effects, Event, Model};

pub use actions::{Act, decode, encode};
pub use spec::{DISKS_MAX, INPUTS_MAX, PROCS_MAX};
pub use state::{Block, DiskPaxosState, NOT_AN_INPUT};

cmc::settings! {
    /// Settings of `disk-paxos`: the constants of a TLC configuration of
    /// `MCDiskPaxos`, and the planted bugs. The defaults are calibration
    /// configuration c02 (N = 2, two inputs, one disk, K = 1, block ballots,
    /// majority quorums).
    pub struct DiskPaxosSettings {
        /// N: processes are 1..N (1 to 4).
        procs: u8 = 2,
        /// |Disk|: the disks are 1..disks (1 to 4).
        disks: u8 = 1,
        /// |Inputs|: model values 1..inputs in TLC's order (1 to 8).
        inputs: u8 = 2,
        /// K: ballots per process (layouts block, interleaved; asym: process 1's).
        k: u8 = 1,
        /// BallotLayout: 0 "block", 1 "interleaved", 2 "asym".
        ballot_layout: u8 = 0,
        /// QuorumKind: 0 "majority", 1 "disk1", 2 "procN", 3 "any".
        quorum_kind: u8 = 0,
        /// How many inputs' names sort before NotAnInput's name (TLC orders model values by name).
        not_an_input_rank: u8 = 0,
        /// Planted bug (MutOwnValue): phase 1 proposes the process's own input.
        bug_own_value: u8 = 0,
        /// Planted bug (MutNoAbort): reading a block with a larger mbal never aborts the ballot.
        bug_no_abort: u8 = 0,
        /// Planted bug (MutSkipRead): a phase ends once a majority is written, without reading.
        bug_skip_read: u8 = 0,
    }
}

/// The Disk Paxos core.
pub struct DiskPaxos;

impl Core for DiskPaxos {
    const NAME: &'static str = "disk-paxos";
    type State = DiskPaxosState;
    type Settings = DiskPaxosSettings;
    const DURABLE: usize = 0;

    fn validate(settings: &Self::Settings) -> Result<(), String> {
        settings.check()
    }

    fn direct_actions(settings: &Self::Settings) -> Option<DirectActions> {
        Some(DirectActions { actions: actions::count(settings), initial_states: settings.initial_states() })
    }

    fn action_label(settings: &Self::Settings, index: u16) -> String {
        match decode(settings, index) {
            Some(act) => tla::label(&act, settings),
            None => format!("Action({index})"),
        }
    }

    // `#[inline(always)]` makes the engine's search loop, generic over the
    // core but compiled in another crate, inline the step.
    #[inline(always)]
    fn step(ctx: &Context<'_, Self::Settings>, state: &mut DiskPaxosState, event: Event<'_>, out: &mut Effects) {
        let enabled = match event {
            Event::Init { variant } => actions::initial(ctx, state, variant),
            Event::Action { index } => actions::next(ctx, state, index),
            _ => false,
        };
        if !enabled {
            out.not_enabled();
        }
    }
}

/// The invariants [`model`] checks: the paper's, with `Agreement`,
/// `Validity` and `OutputIsChosen` (configuration c01's list).
pub const MODEL_INVARIANTS: [&str; 9] =
    ["HInv1", "HInv2", "HInv3", "HInv4", "HInv5", "HInv6", "Agreement", "Validity", "OutputIsChosen"];

/// The catalog's model: [`MODEL_INVARIANTS`], in that order.
pub fn model(settings: DiskPaxosSettings) -> Model<DiskPaxos> {
    match model_with(settings, &MODEL_INVARIANTS) {
        Ok(m) => m,
        Err(name) => unreachable!("MODEL_INVARIANTS names an unknown invariant `{name}`"),
    }
}

/// A model checking the named invariants in the given order (the first that
/// fails in a state is the one reported, as with TLC). `Err` names an
/// invariant this core does not have.
pub fn model_with(settings: DiskPaxosSettings, names: &[&str]) -> Result<Model<DiskPaxos>, String> {
    let mut m = Model::<DiskPaxos>::new(settings);
    for &name in names {
        let holds = invariants::by_name(name).ok_or_else(|| name.to_string())?;
        m = m.always(name, move |w| holds(w.settings(), &w.state(0)));
    }
    Ok(m)
}

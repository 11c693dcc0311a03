//! `TwoPhase` from the TLA+ examples (Lamport's two-phase commit,
//! `TwoPhase.tla`), as a direct-actions core named `two-phase-tla`.
//!
//! The world is the specification's one state; the actions are `TPNext`'s
//! disjuncts in TLC's order: `TMCommit`, `TMAbort`, then for each resource
//! manager `rm`: `TMRcvPrepared(rm)`, `RMPrepare(rm)`, `RMChooseToAbort(rm)`,
//! `RMRcvCommitMsg(rm)`, `RMRcvAbortMsg(rm)`. `msgs` only grows, and
//! `RMRcvCommitMsg`/`RMRcvAbortMsg` stay enabled (and count as generated)
//! after they have taken effect, as in TLC. TLC's figures (one worker,
//! `-deadlock`): N=3: 288 distinct, 1,146 generated, depth 11; N=7: 296,448,
//! 2,744,706, 23; N=8: 1,745,408, 18,507,778, 26.

use cmc::{Context, Core, DirectActions, Effects, Event, Model};
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

/// Resource managers the state has room for.
pub const RMS_MAX: usize = 8;

cmc::settings! {
    /// Settings of `two-phase-tla`.
    pub struct TwoPhaseTlaSettings {
        /// Number of resource managers, N (1 to 8).
        rms: u8 = 3,
    }
}

/// `rmState[rm]`.
pub mod rm {
    /// `"working"`.
    pub const WORKING: u8 = 0;
    /// `"prepared"`.
    pub const PREPARED: u8 = 1;
    /// `"committed"`.
    pub const COMMITTED: u8 = 2;
    /// `"aborted"`.
    pub const ABORTED: u8 = 3;
}

/// `tmState`.
pub mod tm {
    /// `"init"`.
    pub const INIT: u8 = 0;
    /// `"committed"`.
    pub const COMMITTED: u8 = 1;
    /// `"aborted"`.
    pub const ABORTED: u8 = 2;
}

/// The specification's variables. Sets of resource managers are bitmaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TwoPhaseState {
    /// `rmState`, one of [`rm`]'s values per resource manager.
    pub rm_state: [u8; RMS_MAX],
    /// `tmState`, one of [`tm`]'s values.
    pub tm_state: u8,
    /// `tmPrepared`, by bit r.
    pub tm_prepared: u8,
    /// `[type |-> "Prepared", rm |-> r] \in msgs`, by bit r.
    pub msgs_prepared: u8,
    /// `[type |-> "Commit"] \in msgs`.
    pub msgs_commit: u8,
    /// `[type |-> "Abort"] \in msgs`.
    pub msgs_abort: u8,
}

/// The core `two-phase-tla`.
pub struct TwoPhaseTla;

const PER_RM: u16 = 5;
const NAMES: [&str; 5] = ["TMRcvPrepared", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"];

impl Core for TwoPhaseTla {
    const NAME: &'static str = "two-phase-tla";
    type State = TwoPhaseState;
    type Settings = TwoPhaseTlaSettings;
    const DURABLE: usize = 0;

    fn validate(settings: &Self::Settings) -> Result<(), String> {
        if settings.rms == 0 || settings.rms as usize > RMS_MAX {
            return Err(format!("setting `rms` = {} (1 to {RMS_MAX})", settings.rms));
        }
        Ok(())
    }

    fn direct_actions(settings: &Self::Settings) -> Option<DirectActions> {
        Some(DirectActions { actions: 2 + PER_RM * settings.rms as u16, initial_states: 1 })
    }

    fn action_label(_settings: &Self::Settings, index: u16) -> String {
        match index {
            0 => "TMCommit".to_string(),
            1 => "TMAbort".to_string(),
            i => format!("{}(r{})", NAMES[((i - 2) % PER_RM) as usize], (i - 2) / PER_RM + 1),
        }
    }

    // `#[inline(always)]` makes the engine's search loop, which is generic
    // over the core but compiled in another crate, inline the step: worth
    // about a quarter of the run time of this small core. `#[inline]` alone
    // no longer did once that loop grew.
    #[inline(always)]
    fn step(ctx: &Context<'_, Self::Settings>, s: &mut TwoPhaseState, event: Event<'_>, out: &mut Effects) {
        let all = ((1u16 << ctx.settings.rms) - 1) as u8;
        let index = match event {
            // TPInit: every rm working, tm init, nothing prepared or sent.
            Event::Init { .. } => {
                *s = TwoPhaseState::new_zeroed();
                return;
            }
            Event::Action { index } => index,
            _ => return out.not_enabled(),
        };
        let enabled = match index {
            0 => {
                let ok = s.tm_state == tm::INIT && s.tm_prepared == all;
                if ok {
                    s.tm_state = tm::COMMITTED;
                    s.msgs_commit = 1;
                }
                ok
            }
            1 => {
                let ok = s.tm_state == tm::INIT;
                if ok {
                    s.tm_state = tm::ABORTED;
                    s.msgs_abort = 1;
                }
                ok
            }
            i => {
                let r = ((i - 2) / PER_RM) as usize;
                let bit = 1u8 << r;
                match (i - 2) % PER_RM {
                    0 => {
                        let ok = s.tm_state == tm::INIT && s.msgs_prepared & bit != 0;
                        if ok {
                            s.tm_prepared |= bit;
                        }
                        ok
                    }
                    1 => {
                        let ok = s.rm_state[r] == rm::WORKING;
                        if ok {
                            s.rm_state[r] = rm::PREPARED;
                            s.msgs_prepared |= bit;
                        }
                        ok
                    }
                    2 => {
                        let ok = s.rm_state[r] == rm::WORKING;
                        if ok {
                            s.rm_state[r] = rm::ABORTED;
                        }
                        ok
                    }
                    3 => {
                        let ok = s.msgs_commit != 0;
                        if ok {
                            s.rm_state[r] = rm::COMMITTED;
                        }
                        ok
                    }
                    _ => {
                        let ok = s.msgs_abort != 0;
                        if ok {
                            s.rm_state[r] = rm::ABORTED;
                        }
                        ok
                    }
                }
            }
        };
        if !enabled {
            out.not_enabled();
        }
    }
}

/// The model TLC checked: `TPTypeOK`, plus `TCConsistent` from `TCommit`
/// (no resource manager commits while another aborts).
pub fn model(settings: TwoPhaseTlaSettings) -> Model<TwoPhaseTla> {
    Model::<TwoPhaseTla>::new(settings)
        .always("TPTypeOK", |w| {
            let s = w.state(0);
            let n = w.settings().rms as usize;
            let all = ((1u16 << n) - 1) as u8;
            s.rm_state[..n].iter().all(|&x| x <= rm::ABORTED)
                && s.rm_state[n..].iter().all(|&x| x == 0)
                && s.tm_state <= tm::ABORTED
                && s.tm_prepared & !all == 0
                && s.msgs_prepared & !all == 0
        })
        .always("TCConsistent", |w| {
            let s = w.state(0);
            let n = w.settings().rms as usize;
            let committed = s.rm_state[..n].contains(&rm::COMMITTED);
            let aborted = s.rm_state[..n].contains(&rm::ABORTED);
            !(committed && aborted)
        })
}

//! `TwoPhase` (Lamport's two-phase commit, `TwoPhase.tla`) written for
//! stateright's [`Model`] trait, so that the benchmark checks the same state
//! space in both tools.
//!
//! The state holds the specification's four variables in plain data: an
//! array of enums for `rmState`, an enum for `tmState`, and bitsets (bit r
//! for resource manager r) for `tmPrepared` and the `Prepared` messages in
//! `msgs`, with a flag each for the `Commit` and `Abort` messages. The state
//! is `Copy`, 13 bytes, and owns no heap memory. Actions follow `TPNext` in
//! TLC's order. As in TLC, `msgs` only grows, and `RMRcvCommitMsg(rm)` and
//! `RMRcvAbortMsg(rm)` stay enabled once their message exists, even when
//! they no longer change anything: `next_state` then returns the same state,
//! which stateright counts as generated and then finds already seen. So
//! `unique_state_count()` equals TLC's distinct states and `state_count()`
//! TLC's generated states.

use stateright::{Model, Property};

/// Resource managers the state has room for (cmc's `two-phase-tla` has the
/// same bound).
pub const RMS_MAX: usize = 8;

/// `rmState[rm]`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum RmState {
    Working,
    Prepared,
    Committed,
    Aborted,
}

/// `tmState`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum TmState {
    Init,
    Committed,
    Aborted,
}

/// `msgs`: the set of messages sent so far.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct Msgs {
    /// `[type |-> "Prepared", rm |-> r] \in msgs`, by bit r.
    pub prepared: u8,
    /// `[type |-> "Commit"] \in msgs`.
    pub commit: bool,
    /// `[type |-> "Abort"] \in msgs`.
    pub abort: bool,
}

/// One state of the specification. Resource managers at and beyond the
/// model's `rms` stay `Working` and never act.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct TwoPhaseState {
    pub rm_state: [RmState; RMS_MAX],
    pub tm_state: TmState,
    /// `tmPrepared`, by bit r.
    pub tm_prepared: u8,
    pub msgs: Msgs,
}

/// `TPNext`'s disjuncts, with the resource manager they are about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwoPhaseAction {
    TmCommit,
    TmAbort,
    TmRcvPrepared(u8),
    RmPrepare(u8),
    RmChooseToAbort(u8),
    RmRcvCommitMsg(u8),
    RmRcvAbortMsg(u8),
}

/// The model: `RM = {r1, ..., r<rms>}`.
pub struct TwoPhase {
    /// Number of resource managers, N (1 to [`RMS_MAX`]).
    pub rms: usize,
}

impl TwoPhase {
    /// The set `RM` as a bitset.
    fn all(&self) -> u8 {
        ((1u16 << self.rms) - 1) as u8
    }
}

impl Model for TwoPhase {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;

    /// `TPInit`.
    fn init_states(&self) -> Vec<TwoPhaseState> {
        assert!((1..=RMS_MAX).contains(&self.rms), "rms = {} (1 to {RMS_MAX})", self.rms);
        vec![TwoPhaseState {
            rm_state: [RmState::Working; RMS_MAX],
            tm_state: TmState::Init,
            tm_prepared: 0,
            msgs: Msgs { prepared: 0, commit: false, abort: false },
        }]
    }

    /// The enabled actions: each action's guard is evaluated here, so that
    /// `next_state` only applies its effect.
    fn actions(&self, s: &TwoPhaseState, actions: &mut Vec<TwoPhaseAction>) {
        if s.tm_state == TmState::Init && s.tm_prepared == self.all() {
            actions.push(TwoPhaseAction::TmCommit);
        }
        if s.tm_state == TmState::Init {
            actions.push(TwoPhaseAction::TmAbort);
        }
        for r in 0..self.rms {
            let rm = r as u8;
            if s.tm_state == TmState::Init && s.msgs.prepared & (1 << r) != 0 {
                actions.push(TwoPhaseAction::TmRcvPrepared(rm));
            }
            if s.rm_state[r] == RmState::Working {
                actions.push(TwoPhaseAction::RmPrepare(rm));
                actions.push(TwoPhaseAction::RmChooseToAbort(rm));
            }
            if s.msgs.commit {
                actions.push(TwoPhaseAction::RmRcvCommitMsg(rm));
            }
            if s.msgs.abort {
                actions.push(TwoPhaseAction::RmRcvAbortMsg(rm));
            }
        }
    }

    fn next_state(&self, s: &TwoPhaseState, action: TwoPhaseAction) -> Option<TwoPhaseState> {
        let mut next = *s;
        match action {
            TwoPhaseAction::TmCommit => {
                next.tm_state = TmState::Committed;
                next.msgs.commit = true;
            }
            TwoPhaseAction::TmAbort => {
                next.tm_state = TmState::Aborted;
                next.msgs.abort = true;
            }
            TwoPhaseAction::TmRcvPrepared(rm) => next.tm_prepared |= 1 << rm,
            TwoPhaseAction::RmPrepare(rm) => {
                next.rm_state[rm as usize] = RmState::Prepared;
                next.msgs.prepared |= 1 << rm;
            }
            TwoPhaseAction::RmChooseToAbort(rm) => next.rm_state[rm as usize] = RmState::Aborted,
            TwoPhaseAction::RmRcvCommitMsg(rm) => next.rm_state[rm as usize] = RmState::Committed,
            TwoPhaseAction::RmRcvAbortMsg(rm) => next.rm_state[rm as usize] = RmState::Aborted,
        }
        // Also when nothing changed (a message received twice): TLC counts
        // that step as generated, and so should stateright.
        Some(next)
    }

    /// The same invariants as cmc's `two-phase-tla` model: `TPTypeOK` (what
    /// the types do not already ensure) and `TCConsistent` from `TCommit`.
    /// Stateright's BFS also needs at least one property to run at all: with
    /// none, it stops after the initial state.
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("TPTypeOK", |m: &TwoPhase, s: &TwoPhaseState| {
                let all = m.all();
                s.rm_state[m.rms..].iter().all(|&x| x == RmState::Working)
                    && s.tm_prepared & !all == 0
                    && s.msgs.prepared & !all == 0
            }),
            Property::always("TCConsistent", |m: &TwoPhase, s: &TwoPhaseState| {
                let states = &s.rm_state[..m.rms];
                !(states.contains(&RmState::Committed) && states.contains(&RmState::Aborted))
            }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stateright::Checker;

    /// TLC's figures for N=3 (`../shared/calibration/twophase/README.md`):
    /// 288 distinct, 1,146 generated, depth 11.
    #[test]
    fn n3_matches_tlc() {
        let checker = TwoPhase { rms: 3 }.checker().threads(1).spawn_bfs().join();
        checker.assert_properties();
        assert_eq!(checker.unique_state_count(), 288);
        assert_eq!(checker.state_count(), 1_146);
        assert_eq!(checker.max_depth(), 11);
    }

    /// `TCConsistent` has teeth: a model whose resource managers may commit
    /// on their own violates it.
    #[test]
    fn tc_consistent_fails_on_a_committed_and_an_aborted_rm() {
        let m = TwoPhase { rms: 2 };
        let mut s = m.init_states()[0];
        s.rm_state[0] = RmState::Committed;
        s.rm_state[1] = RmState::Aborted;
        let p = m.property("TCConsistent");
        assert!(!(p.condition)(&m, &s));
    }
}

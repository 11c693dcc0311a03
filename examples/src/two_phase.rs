//! Two-phase commit over messages, as the core `two-phase`.
//!
//! Node 0 is the coordinator, nodes 1.. are participants; one transaction
//! starts at `Init`, when the coordinator sends `Prepare` to every
//! participant and arms its timeout. A participant votes yes (or no, if it is
//! the setting `no_voter`), makes its vote durable and only then sends it; a
//! participant that votes no aborts at once. The coordinator decides commit
//! when every participant voted yes, abort on a no vote or when its timer
//! fires first, persists the decision and sends `Commit`/`Abort` only once
//! it is durable. A participant persists the decision it receives. After a
//! crash the coordinator recovers its decision from its durable bytes and
//! sends it again, or, with none on disk, presumes abort; when a participant
//! crashed (a `Reset` from it) the coordinator sends it again whatever it is
//! missing: the `Prepare` or the decision.
//!
//! Properties: `atomicity` (no node has committed while another aborted),
//! `commit-needs-all-yes` (a durable commit anywhere means every participant
//! has a durable yes vote), `all-decided` (eventually: every participant
//! reaches a durable decision) and, when every participant votes yes,
//! `commit-reachable` (sometimes: the protocol can commit at all).
//!
//! Planted bugs: `bug_commit_on_timeout` (the coordinator commits instead of
//! aborting when its timer fires; BFS finds a commit with votes missing) and
//! `bug_no_persist_decision` (the coordinator sends its decision without
//! persisting it, so after a crash it presumes abort while a participant has
//! already committed).
//!
//! Symmetry: the participants that vote yes are interchangeable
//! (`--symmetry`); the coordinator's bitmap of yes votes is the only place
//! a node's number is kept.
//!
//! Actions exercised (FIFO network): DELIVER, FIRE, FLUSH, CRASH(n, j) with
//! torn prefixes (a participant may have its vote and an abort pending at
//! once) and RESET.

use std::fmt;

use cmc::{Context, Core, Effects, Event, Model, NodeId, NodeSet, Renaming, limits};
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

cmc::settings! {
    /// Settings of `two-phase`.
    pub struct TwoPhaseSettings {
        /// The participant that votes no (0: every participant votes yes).
        no_voter: u8 = 0,
        /// Planted bug: the coordinator commits, instead of aborting, when
        /// its timeout fires.
        bug_commit_on_timeout: u8 = 0,
        /// Planted bug: the coordinator sends its decision without making it
        /// durable, so a crash forgets it.
        bug_no_persist_decision: u8 = 0,
    }
}

/// A participant's vote.
pub mod vote {
    /// Not voted yet.
    pub const NONE: u8 = 0;
    /// Yes: ready to commit.
    pub const YES: u8 = 1;
    /// No: the transaction must abort.
    pub const NO: u8 = 2;
}

/// A node's decision.
pub mod decision {
    /// Undecided.
    pub const NONE: u8 = 0;
    /// Committed.
    pub const COMMIT: u8 = 1;
    /// Aborted.
    pub const ABORT: u8 = 2;
}

/// The coordinator's phase (volatile; zero after a crash until `Restart`).
pub mod phase {
    /// Participant, or a coordinator not yet started.
    pub const NONE: u8 = 0;
    /// Prepares sent, collecting votes, timer armed.
    pub const WAITING: u8 = 1;
    /// Decision queued for disk, not yet durable.
    pub const DECIDING: u8 = 2;
    /// Decision durable and sent.
    pub const DONE: u8 = 3;
}

/// Message tags. `Vote` carries the vote, `Decision` the decision.
pub mod msg {
    /// `Prepare`, coordinator to participant: asks for its vote.
    pub const PREPARE: u8 = 1;
    /// `Vote(v)`, participant to coordinator: its vote, one of [`vote`](super::vote)'s.
    pub const VOTE: u8 = 2;
    /// `Decision(d)`, coordinator to participant: the outcome, one of
    /// [`decision`](super::decision)'s.
    pub const DECISION: u8 = 3;
}

/// The coordinator's timeout timer.
pub const TIMEOUT: u8 = 0;

/// One node's state. The first two bytes are durable: a persist record is
/// the whole durable image `[vote, decision]`.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TwoPhaseState {
    /// Durable. Participant: its vote on disk.
    pub vote: u8,
    /// Durable. The decision on disk.
    pub decision: u8,
    /// Coordinator: see [`phase`].
    pub phase: u8,
    /// Coordinator: participants whose yes vote arrived, by bit.
    pub votes: u8,
    /// Participant: the vote it has written (durable or pending).
    pub want_vote: u8,
    /// The decision it has taken (durable, pending, or only sent under
    /// `bug_no_persist_decision`).
    pub want_decision: u8,
}

impl TwoPhaseState {
    const DURABLE: usize = 2;
}

fn vote_name(v: u8) -> &'static str {
    match v {
        vote::NONE => "-",
        vote::YES => "yes",
        vote::NO => "no",
        _ => "?",
    }
}

fn decision_name(d: u8) -> &'static str {
    match d {
        decision::NONE => "-",
        decision::COMMIT => "commit",
        decision::ABORT => "abort",
        _ => "?",
    }
}

impl fmt::Debug for TwoPhaseState {
    /// `disk(..)` is durable. A coordinator (the only node with a phase)
    /// shows its phase, the yes votes it has and its decision; a participant
    /// shows what it is writing when that differs from its disk.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let phase = match self.phase {
            phase::NONE => None,
            phase::WAITING => Some("waiting"),
            phase::DECIDING => Some("deciding"),
            phase::DONE => Some("done"),
            _ => Some("?"),
        };
        if let Some(p) = phase {
            return write!(
                f,
                "disk(decision {}) {p}, yes votes from {:?}, decided {}",
                decision_name(self.decision),
                bits(self.votes),
                decision_name(self.want_decision)
            );
        }
        write!(f, "disk(vote {}, decision {})", vote_name(self.vote), decision_name(self.decision))?;
        if (self.want_vote, self.want_decision) != (self.vote, self.decision) {
            write!(f, " writing(vote {}, decision {})", vote_name(self.want_vote), decision_name(self.want_decision))?;
        }
        Ok(())
    }
}

fn bits(v: u8) -> Vec<u8> {
    (0..8).filter(|i| v & (1 << i) != 0).collect()
}

/// The core `two-phase`.
pub struct TwoPhase;

impl Core for TwoPhase {
    const NAME: &'static str = "two-phase";
    type State = TwoPhaseState;
    type Settings = TwoPhaseSettings;
    const DURABLE: usize = TwoPhaseState::DURABLE;

    fn validate(settings: &Self::Settings) -> Result<(), String> {
        if settings.no_voter as usize >= limits::NODES_MAX {
            return Err(format!(
                "setting `no_voter` = {} (a participant, 1 to {}, or 0)",
                settings.no_voter,
                limits::NODES_MAX - 1
            ));
        }
        Ok(())
    }

    fn step(ctx: &Context<'_, Self::Settings>, s: &mut TwoPhaseState, event: Event<'_>, out: &mut Effects) {
        if ctx.node == 0 {
            coordinator(ctx, s, event, out);
        } else {
            participant(ctx, s, event, out);
        }
    }

    fn apply_persist(_ctx: &Context<'_, Self::Settings>, s: &mut TwoPhaseState, record: &[u8]) {
        if let [v, d] = *record {
            s.vote = v;
            s.decision = d;
        }
    }

    /// The participants that vote yes are alike; the coordinator and a no
    /// voter are not.
    fn interchangeable(settings: &Self::Settings, nodes: u8) -> NodeSet {
        NodeSet::range(1..nodes).without(settings.no_voter)
    }

    /// Only the coordinator's yes votes name nodes; messages and records
    /// do not.
    fn rename_state(_settings: &Self::Settings, renaming: &Renaming, s: &mut TwoPhaseState) {
        s.votes = renaming.bits(s.votes);
    }
}

/// Every participant's bit.
fn participants(ctx: &Context<'_, TwoPhaseSettings>) -> u8 {
    (((1u16 << ctx.nodes) - 1) as u8) & !1
}

fn send_all(ctx: &Context<'_, TwoPhaseSettings>, out: &mut Effects, bytes: &[u8]) {
    for p in 1..ctx.nodes {
        out.send(p, bytes);
    }
}

/// Takes decision `d`: durable first, sent once `Flushed` says it is.
fn decide(ctx: &Context<'_, TwoPhaseSettings>, s: &mut TwoPhaseState, d: u8, out: &mut Effects) {
    s.want_decision = d;
    out.cancel(TIMEOUT);
    if ctx.settings.bug_no_persist_decision != 0 {
        // Sent before it is on disk, and never put there.
        s.phase = phase::DONE;
        send_all(ctx, out, &[msg::DECISION, d]);
        return;
    }
    s.phase = phase::DECIDING;
    out.persist(&[vote::NONE, d]);
}

fn coordinator(ctx: &Context<'_, TwoPhaseSettings>, s: &mut TwoPhaseState, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Init { .. } => {
            *s = TwoPhaseState::new_zeroed();
            s.phase = phase::WAITING;
            send_all(ctx, out, &[msg::PREPARE]);
            out.arm(TIMEOUT);
        }
        Event::Deliver { from, msg: [msg::VOTE, v] } => match s.phase {
            phase::WAITING if *v == vote::YES => {
                s.votes |= 1 << from;
                if s.votes == participants(ctx) {
                    decide(ctx, s, decision::COMMIT, out);
                }
            }
            phase::WAITING => decide(ctx, s, decision::ABORT, out),
            // Late or repeated vote: the participant is missing the decision.
            phase::DONE => out.send(from, &[msg::DECISION, s.want_decision]),
            _ => {}
        },
        Event::Fire { timer: TIMEOUT } if s.phase == phase::WAITING => {
            let mut d = decision::ABORT;
            if ctx.settings.bug_commit_on_timeout != 0 {
                d = decision::COMMIT;
            }
            decide(ctx, s, d, out);
        }
        Event::Flushed if s.phase == phase::DECIDING => {
            s.phase = phase::DONE;
            send_all(ctx, out, &[msg::DECISION, s.want_decision]);
        }
        Event::Restart => {
            // Volatile bytes are zero; the disk says whether we decided.
            if s.decision != decision::NONE {
                s.want_decision = s.decision;
                s.phase = phase::DONE;
                send_all(ctx, out, &[msg::DECISION, s.decision]);
            } else {
                // Presumed abort: the votes died with the crash.
                decide(ctx, s, decision::ABORT, out);
            }
        }
        Event::Reset { peer } => match s.phase {
            // The participant crashed: send again what it may have lost.
            phase::WAITING if s.votes & (1 << peer) == 0 => out.send(peer, &[msg::PREPARE]),
            phase::DONE => out.send(peer, &[msg::DECISION, s.want_decision]),
            _ => {}
        },
        _ => {}
    }
}

fn participant(ctx: &Context<'_, TwoPhaseSettings>, s: &mut TwoPhaseState, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Init { .. } => *s = TwoPhaseState::new_zeroed(),
        Event::Deliver { msg: [msg::PREPARE], .. } => {
            if s.want_vote == vote::NONE && s.want_decision == decision::NONE {
                s.want_vote = if ctx.node == ctx.settings.no_voter { vote::NO } else { vote::YES };
                if s.want_vote == vote::NO {
                    s.want_decision = decision::ABORT;
                }
                out.persist(&[s.want_vote, s.want_decision]);
            } else {
                // A repeated prepare (the coordinator saw us crash).
                send_vote(s, out);
            }
        }
        // The first decision is final; a repeated one changes nothing.
        Event::Deliver { msg: [msg::DECISION, d], .. } if s.want_decision == decision::NONE => {
            s.want_decision = *d;
            out.persist(&[s.want_vote, *d]);
        }
        Event::Flushed => send_vote(s, out),
        Event::Restart => {
            s.want_vote = s.vote;
            s.want_decision = s.decision;
        }
        _ => {}
    }
}

/// Sends the vote, but only once everything written so far is on disk, and
/// only if it still matters: a yes voter that has decided has nothing to say.
fn send_vote(s: &TwoPhaseState, out: &mut Effects) {
    let on_disk = s.vote == s.want_vote && s.decision == s.want_decision;
    let undecided_yes = s.vote == vote::YES && s.decision == decision::NONE;
    if on_disk && (undecided_yes || s.vote == vote::NO) {
        out.send(0, &[msg::VOTE, s.vote]);
    }
}

/// Three nodes (a coordinator and two participants), FIFO, one crash, the
/// timer free to fire whenever armed.
pub fn model(settings: TwoPhaseSettings) -> Model<TwoPhase> {
    let all_yes = settings.no_voter == 0;
    let m = Model::<TwoPhase>::new(settings)
        .nodes(3)
        .crashes(1)
        .always("atomicity", |w| {
            let committed = w.states().any(|s| s.decision == decision::COMMIT);
            let aborted = w.states().any(|s| s.decision == decision::ABORT);
            !(committed && aborted)
        })
        .always("commit-needs-all-yes", |w| {
            let committed = w.states().any(|s| s.decision == decision::COMMIT);
            !committed || (1..w.nodes()).all(|p: NodeId| w.state(p).vote == vote::YES)
        })
        .eventually("all-decided", |w| (1..w.nodes()).all(|p| w.state(p).decision != decision::NONE));
    if all_yes { m.sometimes("commit-reachable", |w| w.states().any(|s| s.decision == decision::COMMIT)) } else { m }
}

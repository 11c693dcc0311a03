//! `HInit` and `HNext`: the initial states and the actions, one index per
//! `Next` disjunct and choice of witnesses, so that an index gives at most
//! one successor.
//!
//! TLC treats `HNext` (a conjunction) as one action and enumerates its
//! successors by evaluating `Next` in order: `\E p \in Proc` ascending, then
//! `Next`'s disjuncts in the text's order, each `\E` over its set in TLC's
//! order (integers ascending, model values by name). The indices follow that
//! order exactly, so that successors are generated in TLC's order. For each
//! process `p`:
//!
//! 1. `StartBallot(p)`, one index per `b \in Ballot(p)`;
//! 2. for each disk `d`: `Phase0Read(p, d)`, `Phase1or2Write(p, d)`, then
//!    for each `q \in Proc \ {p}` one index per `b \in Ballot(p)` of
//!    `Phase1or2Read(p, d, q)`: the first also stands for its `THEN` branch
//!    (which has no witness), each one for its `ELSE` branch, `StartBallot(p)`
//!    with that `b`;
//! 3. `EndPhase1or2(p)` (its two branches exclude each other);
//! 4. `Fail(p)`, one index per `ip \in Inputs`;
//! 5. `EndPhase0(p)`, one index per `b \in Ballot(p)`.
//!
//! A successor that equals its state still counts as generated, as in TLC:
//! `Phase0Read` of a block already read, say, is enabled and changes
//! nothing.
//!
//! `HInit`'s initial states are `input \in [Proc -> Inputs]` in TLC's order
//! for a function set: the last process's input varies fastest.
//!
//! This module is the step's code: it allocates nothing, reads no clock and
//! keeps nothing between calls.

use cmc::Context;
use zerocopy::FromZeros;

use super::DiskPaxosSettings;
use super::state::{Block, Dims, DiskPaxosState, INIT_DB, NOT_AN_INPUT};

/// One disjunct of `Next` with its witnesses. Processes and disks are
/// 0-based; `j` is a ballot's position in `Ballot(p)`, `ip` an input
/// (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// `StartBallot(p)`: `p` starts phase 1 with ballot `ballot(p, j)`.
    StartBallot {
        /// The process.
        p: usize,
        /// The ballot's position in `Ballot(p)`.
        j: usize,
    },
    /// `Phase0Read(p, d)`: `p`, recovering, reads its own block on disk
    /// `d`.
    Phase0Read {
        /// The process.
        p: usize,
        /// The disk.
        d: usize,
    },
    /// `Phase1or2Write(p, d)`: `p` writes its block to disk `d`.
    Phase1or2Write {
        /// The process.
        p: usize,
        /// The disk.
        d: usize,
    },
    /// `Phase1or2Read(p, d, q)`: `p` reads `q`'s block on disk `d`; `j`
    /// 0 also stands for the `THEN` branch, and each `j` for the `ELSE`
    /// branch's `StartBallot(p)` with ballot `ballot(p, j)`.
    Phase1or2Read {
        /// The reading process.
        p: usize,
        /// The disk.
        d: usize,
        /// The process whose block is read.
        q: usize,
        /// The `ELSE` branch's ballot's position in `Ballot(p)`.
        j: usize,
    },
    /// `EndPhase1or2(p)`: `p` ends its phase, having written and read a
    /// majority of disks.
    EndPhase1or2 {
        /// The process.
        p: usize,
    },
    /// `Fail(p)`: `p` fails and restarts in phase 0 with input `ip`.
    Fail {
        /// The process.
        p: usize,
        /// Its new input, 1-based.
        ip: u8,
    },
    /// `EndPhase0(p)`: `p` ends recovery and starts phase 1 with ballot
    /// `ballot(p, j)`.
    EndPhase0 {
        /// The process.
        p: usize,
        /// The ballot's position in `Ballot(p)`.
        j: usize,
    },
}

/// Indices of process `p`'s disjuncts.
#[inline]
fn per_proc(set: &DiskPaxosSettings, p: usize) -> usize {
    let k = set.ballot_count(p);
    k + set.d() * per_disk(set, p) + 1 + set.i() + k
}

/// Indices of one disk within process `p`'s disjuncts.
#[inline]
fn per_disk(set: &DiskPaxosSettings, p: usize) -> usize {
    2 + (set.n() - 1) * set.ballot_count(p)
}

/// The number of action indices.
pub fn count(set: &DiskPaxosSettings) -> u16 {
    (0..set.n()).map(|p| per_proc(set, p)).sum::<usize>() as u16
}

/// The disjunct and witnesses of action `index`.
///
/// Subtractions, not divisions: `next` decodes every index in every state,
/// every count here is small (at most four processes, four disks and three
/// other processes), and a division costs more than the few compares that
/// replace it.
#[inline(always)]
pub fn decode(set: &DiskPaxosSettings, index: u16) -> Option<Act> {
    let mut i = index as usize;
    let mut p = 0;
    while i >= per_proc(set, p) {
        i -= per_proc(set, p);
        p += 1;
        if p >= set.n() {
            return None;
        }
    }
    let k = set.ballot_count(p);
    if i < k {
        return Some(Act::StartBallot { p, j: i });
    }
    i -= k;
    let per_d = per_disk(set, p);
    for d in 0..set.d() {
        if i >= per_d {
            i -= per_d;
            continue;
        }
        return Some(match i {
            0 => Act::Phase0Read { p, d },
            1 => Act::Phase1or2Write { p, d },
            r => {
                let (mut other, mut j) = (0, r - 2);
                while j >= k {
                    j -= k;
                    other += 1;
                }
                // The `other`-th element of Proc \ {p}.
                let q = if other < p { other } else { other + 1 };
                Act::Phase1or2Read { p, d, q, j }
            }
        });
    }
    if i == 0 {
        return Some(Act::EndPhase1or2 { p });
    }
    i -= 1;
    if i < set.i() {
        return Some(Act::Fail { p, ip: i as u8 + 1 });
    }
    Some(Act::EndPhase0 { p, j: i - set.i() })
}

/// The index of a disjunct with its witnesses; `None` if there is no such
/// choice in this configuration.
pub fn encode(set: &DiskPaxosSettings, act: Act) -> Option<u16> {
    (0..count(set)).find(|&i| decode(set, i) == Some(act))
}

/// `HInit`, initial state number `variant`. False when there is none.
#[inline]
pub fn initial(ctx: &Context<'_, DiskPaxosSettings>, s: &mut DiskPaxosState, variant: u32) -> bool {
    let set = ctx.settings;
    if variant >= set.initial_states() {
        return false;
    }
    // Everything zero: outputs and `chosen` NotAnInput, `disk` and `dblock`
    // InitDB, phases 0, the sets empty.
    *s = DiskPaxosState::new_zeroed();
    s.dims = Dims::of(set);
    let mut v = variant;
    for p in (0..set.n()).rev() {
        s.input[p] = (v % set.inputs as u32) as u8 + 1;
        v /= set.inputs as u32;
    }
    // allInput = {input[p] : p \in Proc}.
    for p in 0..set.n() {
        s.all_input |= 1 << (s.input[p] - 1);
    }
    true
}

/// `HNext` for action `index`: takes the disjunct if it is enabled (true)
/// and updates the history variables; leaves `s` unchanged otherwise
/// (false).
///
/// Inlined into the engine's loop over the indices, where what `decode`
/// derives from the settings alone can be computed once for them all.
#[inline(always)]
pub fn next(ctx: &Context<'_, DiskPaxosSettings>, s: &mut DiskPaxosState, index: u16) -> bool {
    let set = ctx.settings;
    let Some(act) = decode(set, index) else { return false };
    let enabled = match act {
        Act::StartBallot { p, j } => start_ballot(set, s, p, j),
        Act::Phase0Read { p, d } => phase0_read(set, s, p, d),
        Act::Phase1or2Write { p, d } => phase1or2_write(s, p, d),
        Act::Phase1or2Read { p, d, q, j } => phase1or2_read(ctx, s, p, d, q, j),
        Act::EndPhase1or2 { p } => end_phase1or2(ctx, s, p),
        Act::Fail { p, ip } => fail(s, p, ip),
        Act::EndPhase0 { p, j } => end_phase0(set, s, p, j),
    };
    if enabled {
        history(set, s);
    }
    enabled
}

/// `HNext`'s last two conjuncts, on the successor.
#[inline]
fn history(set: &DiskPaxosSettings, s: &mut DiskPaxosState) {
    // chosen' = IF chosen # NotAnInput \/ no output THEN chosen
    //           ELSE output'[CHOOSE p \in Proc : hasOutput(p)], the least p.
    if s.chosen == NOT_AN_INPUT
        && let Some(p) = (0..set.n()).find(|&p| s.output[p] != NOT_AN_INPUT)
    {
        s.chosen = s.output[p];
    }
    for p in 0..set.n() {
        s.all_input |= 1 << (s.input[p] - 1);
    }
}

/// `InitializePhase(p)`.
#[inline]
fn initialize_phase(s: &mut DiskPaxosState, p: usize) {
    s.disks_written[p] = 0;
    for d in s.blocks_read[p].iter_mut() {
        d.set(0);
    }
}

/// Adds `[block |-> b, proc |-> q]` to `blocksRead[p][d]`.
#[inline]
fn record_read(set: &DiskPaxosSettings, s: &mut DiskPaxosState, p: usize, d: usize, q: usize, b: Block) {
    // Every block of q is built from q's ballots, so it is in the universe;
    // see `spec::record_bit`.
    let Some(bit) = set.record_bit(q, b) else {
        panic!("disk-paxos: a block of process {} outside its ballots", q + 1)
    };
    let read = &mut s.blocks_read[p][d];
    read.set(read.get() | 1 << bit);
}

/// `StartBallot(p)` with `b = ballot(p, j)`.
#[inline]
fn start_ballot(set: &DiskPaxosSettings, s: &mut DiskPaxosState, p: usize, j: usize) -> bool {
    let b = set.ballot(p, j);
    if !matches!(s.phase[p], 1 | 2) || b <= s.dblock[p].mbal {
        return false;
    }
    s.phase[p] = 1;
    s.dblock[p].mbal = b;
    initialize_phase(s, p);
    true
}

/// `Phase0Read(p, d)`.
#[inline]
fn phase0_read(set: &DiskPaxosSettings, s: &mut DiskPaxosState, p: usize, d: usize) -> bool {
    if s.phase[p] != 0 {
        return false;
    }
    let b = s.disk[d][p];
    record_read(set, s, p, d, p, b);
    true
}

/// `Phase1or2Write(p, d)`.
#[inline]
fn phase1or2_write(s: &mut DiskPaxosState, p: usize, d: usize) -> bool {
    if !matches!(s.phase[p], 1 | 2) {
        return false;
    }
    s.disk[d][p] = s.dblock[p];
    s.disks_written[p] |= 1 << d;
    true
}

/// `Phase1or2Read(p, d, q)`: the `THEN` branch for `j = 0`, the `ELSE`
/// branch's `StartBallot(p)` with `b = ballot(p, j)`.
#[inline]
fn phase1or2_read(
    ctx: &Context<'_, DiskPaxosSettings>,
    s: &mut DiskPaxosState,
    p: usize,
    d: usize,
    q: usize,
    j: usize,
) -> bool {
    let set = ctx.settings;
    if s.disks_written[p] & (1 << d) == 0 {
        return false;
    }
    let b = s.disk[d][q];
    if ctx.settings.bug_no_abort != 0 {
        // MutNoAbort: the block is recorded as read whatever its mbal.
        if j != 0 {
            return false;
        }
        record_read(set, s, p, d, q, b);
        return true;
    }
    if b.mbal < s.dblock[p].mbal {
        if j != 0 {
            return false;
        }
        record_read(set, s, p, d, q, b);
        return true;
    }
    start_ballot(set, s, p, j)
}

/// `{d \in disksWritten[p] : \A q \in Proc \ {p} : hasRead(p, d, q)}`.
#[inline]
fn written_and_read(set: &DiskPaxosSettings, s: &DiskPaxosState, p: usize) -> u8 {
    let mut out = 0;
    for d in 0..set.d() {
        if s.disks_written[p] & (1 << d) != 0 && (0..set.n()).all(|q| q == p || s.has_read(set, p, d, q)) {
            out |= 1 << d;
        }
    }
    out
}

/// Whether `a` comes before `b` in TLC's `CHOOSE` over blocks of maximal
/// `bal`: TLC takes the first such block in its order of records, which
/// compares the fields in the order their names were first parsed (`mbal`,
/// `bal`, `inp` in `MCDiskPaxos` and `MutNoAbort`; `bal`, `mbal`, `inp` in
/// `MutOwnValue` and `MutSkipRead`, as TLC's traces show). Among blocks of
/// equal `bal` both orders compare `mbal`, then `inp`.
#[inline]
fn chosen_before(set: &DiskPaxosSettings, a: Block, b: Block) -> bool {
    if a.bal != b.bal {
        return a.bal > b.bal;
    }
    if a.mbal != b.mbal {
        return a.mbal < b.mbal;
    }
    set.value_order(a.inp) < set.value_order(b.inp)
}

/// The value `EndPhase1or2(p)` proposes in phase 1: `maxBlk.inp` over the
/// blocks seen (those read and `dblock[p]`) that carry an input, or
/// `input[p]` if none does.
#[inline]
fn proposal(set: &DiskPaxosSettings, s: &DiskPaxosState, p: usize) -> u8 {
    let mut best: Option<Block> = None;
    let mut consider = |b: Block| {
        if b.inp != NOT_AN_INPUT && best.is_none_or(|m| chosen_before(set, b, m)) {
            best = Some(b);
        }
    };
    consider(s.dblock[p]);
    for d in 0..set.d() {
        s.all_read(set, p, d, |_, b| {
            consider(b);
            true
        });
    }
    best.map_or(s.input[p], |b| b.inp)
}

/// `EndPhase1or2(p)`.
#[inline]
fn end_phase1or2(ctx: &Context<'_, DiskPaxosSettings>, s: &mut DiskPaxosState, p: usize) -> bool {
    let set = ctx.settings;
    if !matches!(s.phase[p], 1 | 2) {
        // Neither branch: phase[p] = 1 or phase[p] = 2.
        return false;
    }
    let mut quorum = written_and_read(set, s, p);
    if ctx.settings.bug_skip_read != 0 {
        // MutSkipRead: the disks written are enough.
        quorum = s.disks_written[p];
    }
    if !set.is_majority(quorum) {
        return false;
    }
    if s.phase[p] == 1 {
        // Both EXCEPT clauses read the old dblock[p].
        let mut inp = proposal(set, s, p);
        if ctx.settings.bug_own_value != 0 {
            // MutOwnValue: the process proposes its own input.
            inp = s.input[p];
        }
        s.dblock[p].bal = s.dblock[p].mbal;
        s.dblock[p].inp = inp;
    } else {
        s.output[p] = s.dblock[p].inp;
    }
    s.phase[p] += 1;
    initialize_phase(s, p);
    true
}

/// `Fail(p)` with `input'[p] = ip`.
#[inline]
fn fail(s: &mut DiskPaxosState, p: usize, ip: u8) -> bool {
    s.input[p] = ip;
    s.phase[p] = 0;
    s.dblock[p] = INIT_DB;
    s.output[p] = NOT_AN_INPUT;
    initialize_phase(s, p);
    true
}

/// `EndPhase0(p)` with `b = ballot(p, j)`.
#[inline]
fn end_phase0(set: &DiskPaxosSettings, s: &mut DiskPaxosState, p: usize, j: usize) -> bool {
    if s.phase[p] != 0 {
        return false;
    }
    let mut own = 0u8;
    for d in 0..set.d() {
        if s.has_read(set, p, d, p) {
            own |= 1 << d;
        }
    }
    if !set.is_majority(own) {
        return false;
    }
    // A quorum is never empty (IsMajority({}) is false for every kind), so
    // allBlocksRead(p) has a block and the CHOOSE has a value.
    let b = set.ballot(p, j);
    let mut mbal_max = 0;
    let mut best: Option<Block> = None;
    for d in 0..set.d() {
        s.all_read(set, p, d, |_, r| {
            mbal_max = mbal_max.max(r.mbal);
            if best.is_none_or(|m| chosen_before(set, r, m)) {
                best = Some(r);
            }
            true
        });
    }
    // \A r \in allBlocksRead(p) : b > r.mbal
    let Some(r) = best else { return false };
    if b <= mbal_max {
        return false;
    }
    s.dblock[p] = Block { mbal: b, ..r };
    initialize_phase(s, p);
    s.phase[p] = 1;
    true
}

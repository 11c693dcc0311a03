//! The invariants of the calibration configurations, by their TLA+ names:
//! `HDiskSynod`'s `HInv1` to `HInv6` (the paper's), and `MCDiskPaxos`'s
//! `Agreement`, `Validity`, `OutputIsChosen` and the three deliberately
//! too-strong ones, `NoDecision`, `OwnInputOnly` and `NotAllDecided`.
//!
//! Each is a transcription of its TLA+ text over the state's encoding;
//! comments quote the conjunct being checked. `MajoritySet` is enumerated as
//! every subset of `Disk` (at most 16).

use super::DiskPaxosSettings;
use super::state::{Block, DiskPaxosState, INIT_DB, NOT_AN_INPUT};

/// An invariant: a state predicate.
pub type Invariant = fn(&DiskPaxosSettings, &DiskPaxosState) -> bool;

/// Every invariant, by name.
pub const ALL: [(&str, Invariant); 12] = [
    ("HInv1", hinv1),
    ("HInv2", hinv2),
    ("HInv3", hinv3),
    ("HInv4", hinv4),
    ("HInv5", hinv5),
    ("HInv6", hinv6),
    ("Agreement", agreement),
    ("Validity", validity),
    ("OutputIsChosen", output_is_chosen),
    ("NoDecision", no_decision),
    ("OwnInputOnly", own_input_only),
    ("NotAllDecided", not_all_decided),
];

/// The invariant named `name`.
pub fn by_name(name: &str) -> Option<Invariant> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// `\A D \in MajoritySet : f(D)`.
fn all_majorities(set: &DiskPaxosSettings, mut f: impl FnMut(u8) -> bool) -> bool {
    (0..=set.disk_mask()).filter(|&m| m & !set.disk_mask() == 0 && set.is_majority(m)).all(&mut f)
}

/// `\E D \in MajoritySet : f(D)`.
fn some_majority(set: &DiskPaxosSettings, mut f: impl FnMut(u8) -> bool) -> bool {
    (0..=set.disk_mask()).filter(|&m| m & !set.disk_mask() == 0 && set.is_majority(m)).any(&mut f)
}

/// The disks of bitmask `m`.
fn disks(m: u8) -> impl Iterator<Item = usize> {
    (0..8).filter(move |d| m & (1 << d) != 0)
}

/// `\A bk \in blocksOf(p) : f(bk)`, where `blocksOf(p)` is `dblock[p]`,
/// `disk[d][p]` for every disk, and every block of `p` read by anyone.
fn all_blocks_of(set: &DiskPaxosSettings, s: &DiskPaxosState, p: usize, mut f: impl FnMut(Block) -> bool) -> bool {
    f(s.dblock[p])
        && (0..set.d()).all(|d| f(s.disk[d][p]))
        && (0..set.n()).all(|q| (0..set.d()).all(|d| s.all_read(set, q, d, |r, b| r != p || f(b))))
}

/// `\A bk \in allBlocks : f(bk)`.
fn all_blocks(set: &DiskPaxosSettings, s: &DiskPaxosState, mut f: impl FnMut(Block) -> bool) -> bool {
    (0..set.n()).all(|p| all_blocks_of(set, s, p, &mut f))
}

/// `x \in Ballot(p) \cup {0}`.
fn ballot_or_zero(set: &DiskPaxosSettings, p: usize, b: u8) -> bool {
    set.ballot_rank(p, b).is_some()
}

/// `x \in Ballot(p)`.
fn ballot_of(set: &DiskPaxosSettings, p: usize, b: u8) -> bool {
    b != 0 && ballot_or_zero(set, p, b)
}

/// `[block |-> b, proc |-> q] \in blocksRead[p][d]`.
fn read_contains(set: &DiskPaxosSettings, s: &DiskPaxosState, p: usize, d: usize, q: usize, b: Block) -> bool {
    set.record_bit(q, b).is_some_and(|bit| s.blocks_read[p][d].get() & (1 << bit) != 0)
}

/// `HInv1`: the type invariant.
pub fn hinv1(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    let (n, nd, ni) = (set.n(), set.d(), set.i());
    let value = |v: u8| (v as usize) <= ni;
    let input = |v: u8| v != NOT_AN_INPUT && value(v);
    let disk_block = |b: Block| set.is_ballot_or_zero(b.mbal) && set.is_ballot_or_zero(b.bal) && value(b.inp);
    // The bitsets range over records whose blocks are DiskBlocks and whose
    // procs are in Proc: every bit below the universe's size.
    let universe = set.universe_bits();
    let records = if universe >= 64 { u64::MAX } else { (1u64 << universe) - 1 };
    (0..n).all(|p| {
        input(s.input[p])
            && value(s.output[p])
            && s.phase[p] <= 3
            && disk_block(s.dblock[p])
            && s.disks_written[p] & !set.disk_mask() == 0
            && (0..nd).all(|d| s.blocks_read[p][d].get() & !records == 0)
    }) && (0..nd).all(|d| (0..n).all(|p| disk_block(s.disk[d][p])))
        && s.all_input & !set.input_mask() == 0
        && value(s.chosen)
}

/// `HInv2`.
pub fn hinv2(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    let (n, nd) = (set.n(), set.d());
    let in_all_input_or_nai = |v: u8| v == NOT_AN_INPUT || s.in_all_input(v);
    // \A p \in Proc : \A bk \in blocksOf(p) : ...
    let blocks = (0..n).all(|p| {
        all_blocks_of(set, s, p, |bk| {
            ballot_or_zero(set, p, bk.mbal)
                && ballot_or_zero(set, p, bk.bal)
                && ((bk.bal == 0) == (bk.inp == NOT_AN_INPUT))
                && bk.mbal >= bk.bal
                && in_all_input_or_nai(bk.inp)
        })
    });
    // \A p \in Proc, d \in Disk : ...
    let per_disk = (0..n).all(|p| {
        (0..nd).all(|d| {
            let written = s.disks_written[p] & (1 << d) != 0;
            let busy = matches!(s.phase[p], 1 | 2);
            (!written || (busy && s.disk[d][p] == s.dblock[p]))
                && (!busy || ((s.blocks_read[p][d].get() == 0 || written) && !s.has_read(set, p, d, p)))
        })
    });
    // \A p \in Proc : ...
    let per_proc = (0..n).all(|p| {
        let db = s.dblock[p];
        let phase0 = s.phase[p] != 0
            || (db == INIT_DB
                && s.disks_written[p] == 0
                && (0..nd).all(|d| s.all_read(set, p, d, |q, b| q == p && b == s.disk[d][p])));
        let started = s.phase[p] == 0
            || (ballot_of(set, p, db.mbal)
                && ballot_or_zero(set, p, db.bal)
                && (0..nd).all(|d| s.all_read(set, p, d, |_, b| b.mbal < db.mbal)));
        let accepted = !matches!(s.phase[p], 2 | 3) || db.bal == db.mbal;
        let output = s.output[p] == if s.phase[p] == 3 { db.inp } else { NOT_AN_INPUT };
        phase0 && started && accepted && output
    });
    let chosen = in_all_input_or_nai(s.chosen);
    let inputs =
        (0..n).all(|p| s.in_all_input(s.input[p]) && (s.chosen != NOT_AN_INPUT || s.output[p] == NOT_AN_INPUT));
    blocks && per_disk && per_proc && chosen && inputs
}

/// `HInv3`.
pub fn hinv3(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    let n = set.n();
    (0..n).all(|p| {
        (0..n).all(|q| {
            (0..set.d()).all(|d| {
                let premise = matches!(s.phase[p], 1 | 2)
                    && matches!(s.phase[q], 1 | 2)
                    && s.has_read(set, p, d, q)
                    && s.has_read(set, q, d, p);
                !premise || read_contains(set, s, p, d, q, s.dblock[q]) || read_contains(set, s, q, d, p, s.dblock[p])
            })
        })
    })
}

/// `HInv4`.
pub fn hinv4(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    (0..set.n()).all(|p| {
        let db = s.dblock[p];
        let started = s.phase[p] == 0
            || (all_blocks_of(set, s, p, |bk| db.mbal >= bk.bal)
                && all_majorities(set, |m| {
                    disks(m).any(|d| db.mbal >= s.disk[d][p].mbal && db.bal >= s.disk[d][p].bal)
                }));
        let phase1 = s.phase[p] != 1 || all_blocks_of(set, s, p, |bk| db.mbal > bk.bal);
        let accepted =
            !matches!(s.phase[p], 2 | 3) || some_majority(set, |m| disks(m).all(|d| s.disk[d][p].mbal == db.bal));
        let written =
            all_blocks_of(set, s, p, |bk| some_majority(set, |m| disks(m).all(|d| s.disk[d][p].mbal >= bk.bal)));
        started && phase1 && accepted && written
    })
}

/// `maxBalInp(b, v) == \A bk \in allBlocks : (bk.bal >= b) => (bk.inp = v)`.
fn max_bal_inp(set: &DiskPaxosSettings, s: &DiskPaxosState, b: u8, v: u8) -> bool {
    all_blocks(set, s, |bk| bk.bal < b || bk.inp == v)
}

/// `HInv5`.
pub fn hinv5(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    (0..set.n()).all(|p| {
        let db = s.dblock[p];
        s.phase[p] != 2
            || max_bal_inp(set, s, db.bal, db.inp)
            || some_majority(set, |m| {
                (0..set.n()).any(|q| disks(m).all(|d| s.disk[d][q].mbal > db.bal && !s.has_read(set, p, d, q)))
            })
    })
}

/// `valueChosen(v)`.
fn value_chosen(set: &DiskPaxosSettings, s: &DiskPaxosState, v: u8) -> bool {
    let n = set.n();
    // \E b \in UNION {Ballot(p) : p \in Proc} : ...
    (0..n).flat_map(|o| (0..set.ballot_count(o)).map(move |j| (o, j))).any(|(o, j)| {
        let b = set.ballot(o, j);
        max_bal_inp(set, s, b, v)
            && (0..n).any(|p| {
                some_majority(set, |m| {
                    disks(m).all(|d| {
                        s.disk[d][p].bal >= b
                            && (0..n).all(|q| {
                                let premise = s.phase[q] == 1 && s.dblock[q].mbal >= b && s.has_read(set, q, d, p);
                                !premise || !s.all_read(set, q, d, |_, r| r.bal < b)
                            })
                    })
                })
            })
    })
}

/// `HInv6`.
pub fn hinv6(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    (s.chosen == NOT_AN_INPUT || value_chosen(set, s, s.chosen)) && output_is_chosen(set, s)
}

/// `Agreement`: no two processes hold different outputs.
pub fn agreement(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    let outputs = || s.output[..set.n()].iter().copied().filter(|&o| o != NOT_AN_INPUT);
    outputs().all(|o| outputs().all(|x| x == o))
}

/// `Validity`: every output is in `allInput`.
pub fn validity(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    s.output[..set.n()].iter().all(|&o| o == NOT_AN_INPUT || s.in_all_input(o))
}

/// `OutputIsChosen`: every output is `chosen`.
pub fn output_is_chosen(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    s.output[..set.n()].iter().all(|&o| o == NOT_AN_INPUT || o == s.chosen)
}

/// `NoDecision` (too strong on purpose): no process ever decides.
pub fn no_decision(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    s.output[..set.n()].iter().all(|&o| o == NOT_AN_INPUT)
}

/// `OwnInputOnly` (too strong on purpose): a process outputs only its own
/// current input.
pub fn own_input_only(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    (0..set.n()).all(|p| s.output[p] == NOT_AN_INPUT || s.output[p] == s.input[p])
}

/// `NotAllDecided` (too strong on purpose): some process has not decided.
pub fn not_all_decided(set: &DiskPaxosSettings, s: &DiskPaxosState) -> bool {
    s.output[..set.n()].contains(&NOT_AN_INPUT)
}

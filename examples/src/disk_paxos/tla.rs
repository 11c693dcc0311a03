//! States and actions in TLA+ form, as TLC prints them, so that a cmc trace
//! reads next to TLC's: the variables in TLC's order, functions on `1..n` as
//! tuples `<<a, b>>`, records `[mbal |-> 1, bal |-> 0, inp |-> in1]`, sets
//! in TLC's order of values, model values by name.
//!
//! Printing only: nothing here runs in a step.

use super::DiskPaxosSettings;
use super::actions::Act;
use super::state::{Block, DiskPaxosState};

/// The names of the model values, and the order in which TLC prints a
/// record's fields (the order of its normalized records: the field names'
/// order of first appearance in the parsed modules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The inputs' names, in TLC's order (by name).
    pub inputs: Vec<String>,
    /// `NotAnInput`'s name.
    pub not_an_input: String,
    /// Fields print as `[bal, mbal, inp]` (modules `MutOwnValue` and
    /// `MutSkipRead`) rather than `[mbal, bal, inp]`.
    pub bal_first: bool,
}

impl Names {
    /// `in1`, `in2`, ... and `NotAnInput`, as in every calibration
    /// configuration.
    pub fn numbered(set: &DiskPaxosSettings) -> Names {
        Names {
            inputs: (1..=set.inputs).map(|v| format!("in{v}")).collect(),
            not_an_input: "NotAnInput".to_string(),
            bal_first: false,
        }
    }

    /// The name of value `v` (0 is `NotAnInput`).
    pub fn value(&self, v: u8) -> &str {
        match v {
            0 => &self.not_an_input,
            v => self.inputs.get(v as usize - 1).map_or("?", String::as_str),
        }
    }
}

fn tuple(items: impl IntoIterator<Item = String>) -> String {
    format!("<<{}>>", items.into_iter().collect::<Vec<_>>().join(", "))
}

fn set_of(items: impl IntoIterator<Item = String>) -> String {
    format!("{{{}}}", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// A `DiskBlock` record.
pub fn block(names: &Names, b: Block) -> String {
    let inp = names.value(b.inp);
    if names.bal_first {
        format!("[bal |-> {}, mbal |-> {}, inp |-> {inp}]", b.bal, b.mbal)
    } else {
        format!("[mbal |-> {}, bal |-> {}, inp |-> {inp}]", b.mbal, b.bal)
    }
}

/// TLC's order of blocks: field by field, in the order they print.
fn block_key(set: &DiskPaxosSettings, names: &Names, b: Block) -> (u8, u8, u16) {
    if names.bal_first { (b.bal, b.mbal, set.value_order(b.inp)) } else { (b.mbal, b.bal, set.value_order(b.inp)) }
}

/// `blocksRead[p][d]`: its records sorted as TLC sorts them (by `block`,
/// then `proc`).
fn records(set: &DiskPaxosSettings, names: &Names, s: &DiskPaxosState, p: usize, d: usize) -> String {
    let mut rs = Vec::new();
    s.all_read(set, p, d, |q, b| {
        rs.push((q, b));
        true
    });
    rs.sort_by_key(|&(q, b)| (block_key(set, names, b), q));
    set_of(rs.into_iter().map(|(q, b)| format!("[block |-> {}, proc |-> {}]", block(names, b), q + 1)))
}

/// The variables and their values, in the order TLC prints them.
pub fn variables(set: &DiskPaxosSettings, names: &Names, s: &DiskPaxosState) -> Vec<(&'static str, String)> {
    let (n, nd) = (set.n(), set.d());
    let procs = || 0..n;
    let inputs = |mask: u8| (1..=set.inputs).filter(move |v| mask & (1 << (v - 1)) != 0);
    vec![
        ("phase", tuple(procs().map(|p| s.phase[p].to_string()))),
        ("output", tuple(procs().map(|p| names.value(s.output[p]).to_string()))),
        ("dblock", tuple(procs().map(|p| block(names, s.dblock[p])))),
        ("disk", tuple((0..nd).map(|d| tuple(procs().map(|p| block(names, s.disk[d][p])))))),
        ("blocksRead", tuple(procs().map(|p| tuple((0..nd).map(|d| records(set, names, s, p, d)))))),
        ("input", tuple(procs().map(|p| names.value(s.input[p]).to_string()))),
        ("chosen", names.value(s.chosen).to_string()),
        (
            "disksWritten",
            tuple(
                procs().map(|p| {
                    set_of((0..nd).filter(|d| s.disks_written[p] & (1 << d) != 0).map(|d| (d + 1).to_string()))
                }),
            ),
        ),
        ("allInput", set_of(inputs(s.all_input).map(|v| names.value(v).to_string()))),
    ]
}

/// The state as TLC prints it: one `/\ var = value` line per variable.
pub fn state_text(set: &DiskPaxosSettings, names: &Names, s: &DiskPaxosState) -> String {
    variables(set, names, s).into_iter().map(|(var, value)| format!("/\\ {var} = {value}\n")).collect()
}

/// A label for an action index, without a state: the disjunct, its
/// arguments and its witness (`b`, `ip`).
pub fn label(act: &Act, set: &DiskPaxosSettings) -> String {
    label_named(act, set, &Names::numbered(set))
}

/// [`label`] with the configuration's names.
pub fn label_named(act: &Act, set: &DiskPaxosSettings, names: &Names) -> String {
    match *act {
        Act::StartBallot { p, j } => format!("StartBallot({}) with b = {}", p + 1, set.ballot(p, j)),
        Act::Phase0Read { p, d } => format!("Phase0Read({}, {})", p + 1, d + 1),
        Act::Phase1or2Write { p, d } => format!("Phase1or2Write({}, {})", p + 1, d + 1),
        Act::Phase1or2Read { p, d, q, j } if set.bug_no_abort != 0 => {
            // MutNoAbort's MPhase1or2Read has no ELSE branch: one index.
            let unused = if j == 0 { String::new() } else { format!(" (b = {}: never enabled)", set.ballot(p, j)) };
            format!("Phase1or2Read({}, {}, {}){unused}", p + 1, d + 1, q + 1)
        }
        Act::Phase1or2Read { p, d, q, j } => {
            let then = if j == 0 { "THEN, or " } else { "" };
            format!(
                "Phase1or2Read({}, {}, {}) ({then}ELSE StartBallot({}) with b = {})",
                p + 1,
                d + 1,
                q + 1,
                p + 1,
                set.ballot(p, j)
            )
        }
        Act::EndPhase1or2 { p } => format!("EndPhase1or2({})", p + 1),
        Act::Fail { p, ip } => format!("Fail({}) with ip = {}", p + 1, names.value(ip)),
        Act::EndPhase0 { p, j } => format!("EndPhase0({}) with b = {}", p + 1, set.ballot(p, j)),
    }
}

/// The disjunct that action `act` took from state `before`: as
/// [`label_named`], with `Phase1or2Read`'s branch decided.
pub fn step_text(act: &Act, set: &DiskPaxosSettings, names: &Names, before: &DiskPaxosState) -> String {
    match *act {
        Act::Phase1or2Read { p, d, q, j } => {
            let head = format!("Phase1or2Read({}, {}, {})", p + 1, d + 1, q + 1);
            let then = set.bug_no_abort != 0 || before.disk[d][q].mbal < before.dblock[p].mbal;
            if then { head } else { format!("{head}, ELSE: StartBallot({}) with b = {}", p + 1, set.ballot(p, j)) }
        }
        _ => label_named(act, set, names),
    }
}

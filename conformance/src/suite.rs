//! What a gate test does with many schedules of one example program: the
//! seeded walks with the walks' budgets, a planted bug's counterexample
//! through the gate, and the summary that prints one line per schedule and
//! fails the test on a divergence (`tests/conformance.rs` for the C
//! example programs, `tests/rust_examples.rs` for the Rust ones).
//!
//! The helpers panic, as test helpers do: a failure names the schedule,
//! and the divergence's step, node and both sides.

use std::collections::BTreeMap;
use std::time::Instant;

use cmc::Options;
use cmc::process::{Budgets, Config, ProcessEngine, ProgramModel};

use crate::compare::Divergence;
use crate::gate::{self, Outcome};

/// A deviation of the model from Linux that the gate finds today on an
/// example program. A divergence it matches is reported as the finding
/// and does not fail its test; a divergence no finding matches does. A
/// finding no schedule shows any more fails its test too, so that the list
/// is cut when the model is fixed. Issue 27's three (a connect to a node
/// that did not listen succeeded, a close did not reach the peer, a crash
/// deleted what the node had written) are fixed, and the list is empty.
pub struct Finding {
    /// What the model does that Linux does not, in a sentence.
    pub name: &'static str,
    /// Whether a divergence of a schedule is this finding.
    pub matches: fn(&Outcome, &Divergence) -> bool,
}

/// What one example's schedules came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Schedules run.
    pub schedules: usize,
    /// Followed to their end.
    pub whole: usize,
    /// Followed in part: stopped after at least START's segment.
    pub part: usize,
    /// Not followed at all: stopped in START's segment.
    pub none: usize,
    /// Steps compared with Linux, START included, over all schedules.
    pub steps: usize,
    /// Segments compared with Linux, over all schedules.
    pub segments: usize,
}

/// Prints each outcome and the totals; fails on a divergence that none of
/// `findings` matches, and on a finding that no divergence matches.
pub fn summarize(example: &str, outcomes: &[Outcome], findings: &[Finding], started: Instant) -> Totals {
    let mut t = Totals::default();
    let mut found = vec![0usize; findings.len()];
    for o in outcomes {
        println!("{example}: {}", o.line());
        t.schedules += 1;
        t.steps += o.steps_compared;
        t.segments += o.compared;
        match (&o.followed.stopped, o.followed.segments.is_empty()) {
            (None, _) => t.whole += 1,
            (Some(_), false) => t.part += 1,
            (Some(_), true) => t.none += 1,
        }
        let Some(d) = &o.divergence else { continue };
        match findings.iter().position(|f| (f.matches)(o, d)) {
            Some(i) => {
                println!("{example}:   the finding: {}", findings[i].name);
                found[i] += 1;
            }
            None => {
                for (n, log) in o.logs.iter().enumerate() {
                    println!("{example}: {}: node {n}'s output natively:\n{log}", o.label);
                }
                panic!("{example}: {}: the model and Linux diverge at {d}", o.label);
            }
        }
    }
    println!(
        "{example}: {} schedules ({} followed to their end, {} in part, {} not at all), {} segments and {} steps \
         compared with Linux, {:.1} s",
        t.schedules,
        t.whole,
        t.part,
        t.none,
        t.segments,
        t.steps,
        started.elapsed().as_secs_f64()
    );
    let mut left_out = BTreeMap::new();
    for o in outcomes {
        for (k, n) in &o.followed.left_out {
            *left_out.entry(*k).or_insert(0) += n;
        }
    }
    if !left_out.is_empty() {
        println!(
            "{example}: left out of the walks' draws, as Linux cannot follow them where they were enabled: {left_out:?}"
        );
    }
    for (f, n) in findings.iter().zip(&found) {
        println!("{example}: {n} schedule(s) diverge by the finding: {}", f.name);
        assert!(*n > 0, "{example}: no schedule shows the finding any more (issue 27 fixed it?): {}", f.name);
    }
    t
}

/// The budgets the walks take: larger than the model files', which are
/// sized for exhaustive searches, since a walk is one path.
pub const WALKS: Budgets = Budgets { crashes: 2, drops: 0, timeouts: 4, clients: 2, thread_switches: 0 };

/// `walks` seeded walks (seeds 1 to `walks`) of at most `externals`
/// external actions each, of `config` with the walks' budgets.
pub fn walks(config: &Config, label: &str, walks: u64, externals: usize) -> Vec<Outcome> {
    let mut config = config.clone();
    config.budgets = WALKS;
    let mut engine = ProcessEngine::new(config).expect("a valid model");
    (1..=walks)
        .map(|seed| {
            let mut o = gate::walk(&mut engine, seed, externals).unwrap_or_else(|e| panic!("{label} walk {seed}: {e}"));
            o.label = format!("{label}, walk {seed}");
            o
        })
        .collect()
}

/// The counterexample of `model`'s search, through the gate.
pub fn counterexample(model: &ProgramModel, options: &Options, label: &str) -> Outcome {
    let schedule = gate::counterexample(model, options).unwrap_or_else(|e| panic!("{label}: {e}"));
    let mut engine = ProcessEngine::new(model.config.clone()).expect("a valid model");
    gate::schedule(&mut engine, &format!("{label}'s counterexample"), &schedule)
        .unwrap_or_else(|e| panic!("{label}: {e}"))
}

/// Asserts that Linux followed a counterexample to its end, agreeing at
/// every step, and passed through its violation: the bug shown on Linux.
pub fn reproduced(o: &Outcome) {
    assert_eq!(o.divergence, None, "{}", o.line());
    assert_eq!(o.followed.stopped, None, "{}", o.line());
    assert_eq!(o.reaches_end, Some(true), "{}", o.line());
}

/// Asserts that Linux could not follow a counterexample to its end: it
/// stopped at `step` for a reason containing `reason`, after agreeing on
/// everything before.
pub fn stopped_at(o: &Outcome, step: usize, reason: &str) {
    assert_eq!(o.divergence, None, "{}", o.line());
    let stop = o.followed.stopped.as_ref().unwrap_or_else(|| panic!("{}", o.line()));
    assert_eq!(stop.step, step, "{}", o.line());
    assert!(stop.reason.contains(reason), "{}", o.line());
}

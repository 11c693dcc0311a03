//! Reports: the outcome of a search as a value, printable as text for people
//! and as JSON (DESIGN section 4) for machines, and the counterexample file
//! that `cmc replay` reads.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::Identity;
use crate::property::Kind;

/// The outcome of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The search was complete and every property held.
    Pass,
    /// A property failed; `property` names it and `trace` shows how.
    Violation,
    /// The search stopped before covering the state space (a bound, a cap,
    /// an interruption, or a simulation, which is never a pass).
    Incomplete,
    /// A core misbehaved or a limit was crossed; `reason` says which.
    Error,
}

impl Verdict {
    /// The verdict's name, as reports and JSON spell it: `pass`,
    /// `violation`, `incomplete` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Violation => "violation",
            Verdict::Incomplete => "incomplete",
            Verdict::Error => "error",
        }
    }
}

/// One step of a trace: the action and the world after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The action token (`DELIVER(0->1, 02)`, `CRASH(1, 0)`, ...), as
    /// counterexample files store it.
    pub action: String,
    /// A label for people: the token, or a direct action's name.
    pub label: String,
    /// The world's 128-bit fingerprint, in hex.
    pub fingerprint: String,
    /// The world after the action.
    pub world: WorldText,
}

/// A world, decoded for people: node states through their `Debug`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldText {
    /// Every node, in node order.
    pub nodes: Vec<NodeText>,
    /// Messages in flight: `from->to: hex`.
    pub network: Vec<String>,
    /// The same messages, in the same order, with who sent them to whom:
    /// what a picture of the trace needs (`chart`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<MessageText>,
    /// The ghost log: `node: hex`.
    pub replies: Vec<String>,
    /// Drops left on this path.
    pub drops_left: u8,
    /// Dups left on this path.
    pub dups_left: u8,
    /// Crashes left on this path.
    pub crashes_left: u8,
    /// Timeouts left on this path; `None` when the model has no timeout
    /// budget.
    pub timeouts_left: Option<u8>,
}

/// A message in flight, for pictures of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageText {
    /// The sender: a node, or `None` for a program's client.
    pub from: Option<u8>,
    /// The receiver: a node, or `None` for a program's client (a reply on
    /// its connection).
    pub to: Option<u8>,
    /// The channel it travels on, in order within it (FIFO) or not (a
    /// core's bag): `0->1` for a core, a connection and its direction for
    /// a program (`0.0 ->2`, `c1.0 <-1`).
    pub channel: String,
    /// The message as traces show it.
    pub text: String,
}

/// One node of a decoded world.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeText {
    /// The node's state: a core's through its `Debug`, a program's as its
    /// front end shows it.
    pub state: String,
    /// What a program node wrote to its stdout and stderr during this
    /// step, captured when the trace is rendered (empty for cores).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// Armed timers, ascending.
    pub timers: Vec<u8>,
    /// Pending wakes, by waiter, ascending.
    pub wakes: Vec<u8>,
    /// Peers whose connection reset the node has yet to be told of,
    /// ascending.
    pub resets: Vec<u8>,
    /// Client requests the node has yet to receive.
    pub clients_left: u8,
    /// Pending persist records, oldest first, as the core shows them
    /// ([`Core::show_payload`](crate::Core::show_payload)) or in hex.
    pub pending_persists: Vec<String>,
}

/// A reachability property's witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// The `sometimes` property.
    pub property: String,
    /// A shortest trace (BFS) to a world where it holds.
    pub trace: Vec<Step>,
}

/// What a program search cost in processes, for its report. Every life
/// and snapshot of a node is forked from its template, the one process
/// that execs the program and installs a seccomp filter, so both counts
/// stay at the node count whatever the search's length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessCounts {
    /// Seccomp filters installed: one per node's template.
    pub filters_installed: u64,
    /// Programs exec'd: one template per node.
    pub execs: u64,
    /// Node processes forked from parked ones: lives and snapshots.
    pub forks: u64,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// How the search ended.
    pub verdict: Verdict,
    /// The failed property, for a violation.
    pub property: Option<String>,
    /// The failed property's kind, for a violation.
    pub kind: Option<Kind>,
    /// Why the search is incomplete, or what the error is.
    pub reason: Option<String>,
    /// The `eventually` properties no world was checked against: a search
    /// that passed (or stopped incomplete) without reaching a world with no
    /// enabled action, which is where they are checked. Empty otherwise.
    #[serde(default)]
    pub never_checked: Vec<String>,
    /// The search and its parameters, e.g. `bfs` or `dfs(depth_max=12)`.
    pub search: String,
    /// Whether a world with no enabled action was a violation of
    /// `deadlock` (`--deadlock`).
    #[serde(default)]
    pub deadlock: bool,
    /// The model searched.
    pub model: Identity,
    /// Distinct worlds found (fingerprints stored).
    pub distinct_states: u64,
    /// Successors computed, seen before or not.
    pub generated_states: u64,
    /// The depth reached, counting the initial state as 1.
    pub depth: u32,
    /// Filled in by the caller, which owns the clock.
    pub elapsed_s: f64,
    /// Seccomp filters a program search installed: one per node's
    /// template. `null` for a core's search, which starts no process (and
    /// so for [`ProcessCounts`]' other two fields).
    #[serde(default)]
    pub filters_installed: Option<u64>,
    /// Programs a program search exec'd: one template per node.
    #[serde(default)]
    pub execs: Option<u64>,
    /// Node processes a program search forked from parked ones: the
    /// lives it started and the forks of snapshots it took.
    #[serde(default)]
    pub forks: Option<u64>,
    /// For a violation or an error: the shortest (BFS) trace to it.
    pub trace: Vec<Step>,
    /// For an error in a step: the action whose step failed, taken in the
    /// trace's last world (`None` for an error in no step, such as a
    /// property's code failing, where the trace ends in the world it was
    /// checked in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_action: Option<String>,
    /// Where the trace's sequence chart was written (`chart::html`), when
    /// the caller wrote one: a file's business, not the search's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<String>,
    /// For each `sometimes` property that held: a world where it did.
    pub witnesses: Vec<Witness>,
}

impl Report {
    /// Records what the search cost in processes (`None`: a core's search,
    /// which starts none).
    pub fn set_process_counts(&mut self, counts: Option<ProcessCounts>) {
        self.filters_installed = counts.map(|c| c.filters_installed);
        self.execs = counts.map(|c| c.execs);
        self.forks = counts.map(|c| c.forks);
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The one-line summary: verdict, property, counts.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "{}", self.verdict.name());
        if let (Some(p), Some(k)) = (&self.property, self.kind) {
            let _ = write!(s, " of {k} property `{p}`");
        }
        if let Some(r) = &self.reason {
            let _ = write!(s, ": {r}");
        }
        let _ = write!(
            s,
            " ({}; {}, {} generated, depth {})",
            self.search,
            states(self.distinct_states, "distinct state"),
            count(self.generated_states),
            self.depth
        );
        if let Some(note) = self.never_checked_note() {
            let _ = write!(s, "; {note}");
        }
        s
    }

    /// `never checked: eventually property `p` (...)`, when
    /// [`Report::never_checked`] names any.
    pub fn never_checked_note(&self) -> Option<String> {
        let names: Vec<String> = self.never_checked.iter().map(|p| format!("`{p}`")).collect();
        let what = match names.len() {
            0 => return None,
            1 => "eventually property",
            _ => "eventually properties",
        };
        Some(format!("never checked: {what} {} (no world without an enabled action was reached)", names.join(", ")))
    }

    /// The report for people: the summary, then the trace action by action
    /// with every node's state.
    pub fn to_text(&self) -> String {
        let mut s = self.summary();
        s.push('\n');
        if !self.trace.is_empty() {
            let what = if self.verdict == Verdict::Error { "trace to the error" } else { "counterexample" };
            let _ = writeln!(s, "{what} ({}):", states(self.trace.len() as u64, "state"));
            render_trace(&mut s, &self.trace);
            if let Some(action) = &self.failed_action {
                let _ = writeln!(s, "{:>4}. {action}: failed (above)", self.trace.len() + 1);
            }
        }
        s
    }

    /// The counterexample file for `cmc replay`, for a violation or an
    /// error with a trace.
    pub fn counterexample(&self) -> Option<CounterexampleFile> {
        if self.trace.is_empty() {
            return None;
        }
        let (property, kind, error) = match self.verdict {
            Verdict::Violation => (self.property.clone()?, self.kind?, None),
            Verdict::Error => (
                String::new(),
                Kind::Always,
                Some(FileError { message: self.reason.clone()?, action: self.failed_action.clone() }),
            ),
            Verdict::Pass | Verdict::Incomplete => return None,
        };
        Some(CounterexampleFile {
            cmc_counterexample: 1,
            model: self.model.clone(),
            property,
            kind,
            error,
            search: self.search.clone(),
            deadlock: self.deadlock,
            steps: self
                .trace
                .iter()
                .map(|st| FileStep {
                    action: st.action.clone(),
                    fingerprint: st.fingerprint.clone(),
                    output: if st.world.nodes.iter().all(|n| n.output.is_empty()) {
                        Vec::new()
                    } else {
                        st.world.nodes.iter().map(|n| n.output.clone()).collect()
                    },
                })
                .collect(),
        })
    }
}

/// `n` with thousands separators, as the text output writes counts:
/// `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            s.push(',');
        }
        s.push(c);
    }
    s
}

/// `n` things, in words: `1 state`, `14,004 states`.
pub fn states(n: u64, thing: &str) -> String {
    format!("{} {thing}{}", count(n), if n == 1 { "" } else { "s" })
}

/// Renders a trace, one numbered step per action, each world's nodes below.
pub fn render_trace(s: &mut String, trace: &[Step]) {
    for (i, st) in trace.iter().enumerate() {
        let _ = writeln!(s, "{:>4}. {}", i + 1, st.label);
        let w = &st.world;
        for (n, node) in w.nodes.iter().enumerate() {
            let _ = write!(s, "        node {n}: {}", node.state);
            let mut extra = Vec::new();
            if !node.timers.is_empty() {
                extra.push(format!("timers {:?}", node.timers));
            }
            if !node.wakes.is_empty() {
                extra.push(format!("wakes {:?}", node.wakes));
            }
            if !node.resets.is_empty() {
                extra.push(format!("resets {:?}", node.resets));
            }
            if !node.pending_persists.is_empty() {
                extra.push(format!("pending persists [{}]", node.pending_persists.join(", ")));
            }
            if !extra.is_empty() {
                let _ = write!(s, "  ({})", extra.join("; "));
            }
            s.push('\n');
            render_output(s, &node.output);
        }
        if !w.network.is_empty() {
            let _ = writeln!(s, "        network: {}", w.network.join(", "));
        }
        if !w.replies.is_empty() {
            let _ = writeln!(s, "        replies: {}", w.replies.join(", "));
        }
    }
}

/// Lines of a node's output shown per step in text; the JSON report and
/// the counterexample file keep all of it.
pub const OUTPUT_LINES_SHOWN: usize = 5;

/// The last [`OUTPUT_LINES_SHOWN`] lines of a node's output in a step,
/// each under its node, and how many earlier ones are left out.
fn render_output(s: &mut String, output: &str) {
    let lines: Vec<&str> = output.lines().collect();
    let skip = lines.len().saturating_sub(OUTPUT_LINES_SHOWN);
    if skip > 0 {
        let _ = writeln!(s, "          | ({skip} earlier lines in the JSON report and the counterexample file)");
    }
    for line in &lines[skip..] {
        let _ = writeln!(s, "          | {line}");
    }
}

/// One step of a counterexample file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileStep {
    /// The action token, as [`Action`](crate::Action)'s `FromStr` reads it
    /// (a program's as its front end does).
    pub action: String,
    /// The 128-bit fingerprint of the world after the action, in hex,
    /// which a replay must meet.
    pub fingerprint: String,
    /// Each program node's output during this step (empty when no node
    /// wrote any), for people: replay does not read it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
}

/// What `cmc replay FILE` reads: the model's identity, the failed property
/// and the actions with the fingerprint after each.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterexampleFile {
    /// Format version, 1.
    pub cmc_counterexample: u32,
    /// The model: enough to rebuild it from the catalog or its model file.
    pub model: Identity,
    /// The failed property; empty for an error.
    pub property: String,
    /// The failed property's kind ([`Kind::Always`] for an error).
    pub kind: Kind,
    /// The search that found it.
    pub search: String,
    /// The search checked deadlock (`--deadlock`): a world with no enabled
    /// action is a violation of the property `deadlock`. Written only when
    /// true, so that files without it read as before; a file of format 1
    /// written before this field existed, whose property is `deadlock` and
    /// not one of the model's, is read as a deadlock too (see `replay`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deadlock: bool,
    /// For an error rather than a violation (`property` is then empty):
    /// what failed, which a replay must meet again at the end of `steps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FileError>,
    /// The trace: the initial world's action first, then every action
    /// with the fingerprint after it.
    pub steps: Vec<FileStep>,
}

/// The error a counterexample file of an error records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileError {
    /// The error, as the search reported it.
    pub message: String,
    /// The action whose step failed, taken in the last step's world;
    /// `None` when a property's code failed in that world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

impl CounterexampleFile {
    /// The file's contents: pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Reads a file's contents. Unknown fields are errors, so a file of a
    /// later format is refused rather than misread.
    pub fn from_json(text: &str) -> Result<CounterexampleFile, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Whether a replay's report reproduces what this file records: the
    /// violation, or the same error.
    pub fn reproduced_by(&self, replayed: &Report) -> bool {
        match &self.error {
            None => replayed.verdict == Verdict::Violation,
            Some(e) => replayed.verdict == Verdict::Error && replayed.reason.as_deref() == Some(e.message.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_have_thousands_separators_and_one_is_singular() {
        let cases = [(0, "0"), (7, "7"), (999, "999"), (1000, "1,000"), (14004, "14,004"), (1234567, "1,234,567")];
        for (n, text) in cases {
            assert_eq!(super::count(n), text);
        }
        assert_eq!(super::states(1, "state"), "1 state");
        assert_eq!(super::states(1000, "distinct state"), "1,000 distinct states");
    }
}

//! The determinism gate (manual, GATES; DESIGN 9): every example model is
//! checked with `--det` (every step run twice from copies of the same
//! world, outputs compared), and every search of it is run twice and its
//! reports compared byte for byte: the JSON report, the text a person
//! reads (counts, trace) and the counterexample file. A core's
//! breadth-first search and simulation are run on 2 and 3 threads too, and
//! must give the same bytes as on one. The elapsed time is
//! the one field allowed to differ between two runs. A run with `--det`
//! must report the same, but for the processes a program search counts
//! (`filters_installed`, `execs`, `forks`): it forks every step's
//! processes a second time by design.
//!
//! The models are the suite's own declarations (`tests/models`), included
//! here, so a model added there is gated without being listed again.
//! `scripts/determinism_gate.sh` runs this test alone.

mod gates;

#[cfg(target_os = "linux")]
#[path = "../models/ccores.rs"]
mod ccores;
#[path = "../models/disk_paxos.rs"]
mod disk_paxos;
#[cfg(target_os = "linux")]
#[path = "../models/lease.rs"]
mod lease;
#[path = "../models/lock_service.rs"]
mod lock_service;
#[path = "../models/primary_backup.rs"]
mod primary_backup;
#[cfg(target_os = "linux")]
#[path = "../models/programs.rs"]
mod programs;
#[cfg(target_os = "linux")]
#[path = "../models/thread_lease.rs"]
mod thread_lease;
#[cfg(target_os = "linux")]
#[path = "../models/tokio_lease.rs"]
mod tokio_lease;
#[cfg(target_os = "linux")]
#[path = "../models/tokio_mt_lease.rs"]
mod tokio_mt_lease;
#[path = "../models/two_phase.rs"]
mod two_phase;
#[path = "../models/two_phase_tla.rs"]
mod two_phase_tla;

use cmc::harness::{Attributes, Declared, MODELS, prepare};
use cmc::{Context, Core, Effects, Event, Model, NoControl, NoSettings, Options, Report, Search, Verdict};
use cmc_tests::Nondet;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Everything a run prints or saves, but its elapsed time.
fn bytes(mut r: Report) -> (String, String, Option<String>) {
    r.elapsed_s = 0.0;
    let cex = r.counterexample().map(|c| c.to_json());
    (r.to_json(), r.to_text(), cex)
}

/// The searches each model is run with: its declared one, and a seeded
/// simulation (shorter for programs, each of whose steps is a replay of
/// processes).
fn searches(d: &Declared) -> Vec<Search> {
    let mut s = vec![d.attributes.search];
    if !matches!(d.attributes.search, Search::Simulate { .. }) {
        s.push(match d.attributes.program {
            Some(_) => Search::Simulate { walks: 20, walk_length: 20, seed: 7 },
            None => Search::Simulate { walks: 200, walk_length: 50, seed: 7 },
        });
    }
    s
}

fn options(d: &Declared, search: Search, det: bool) -> Options {
    Options {
        search,
        states_max: d.attributes.states_max,
        det,
        deadlock: d.attributes.deadlock,
        threads: 1,
        symmetry: d.attributes.symmetry,
    }
}

/// The gate over `declared`: what failed, one entry per model and search.
fn gate(declared: &[&Declared]) -> Vec<String> {
    let mut failures = Vec::new();
    for d in declared {
        let name = d.name();
        let model = match (d.build)(&d.attributes) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        for search in searches(d) {
            let started = std::time::Instant::now();
            let run = |det| model.check(&options(d, search, det), &mut NoControl).expect("a valid model");
            let (first, second, det) = (run(false), run(false), run(true));
            let what = format!("{name} ({})", search.describe());
            if det.verdict == Verdict::Error {
                failures.push(format!("{what}: --det: {}", det.reason.as_deref().unwrap_or_default()));
                continue;
            }
            let (a, b) = (bytes(first.clone()), bytes(second));
            if a != b {
                failures.push(format!("{what}: two runs differ:\n{}\n---\n{}", a.1, b.1));
            }
            // --det changes how often each step runs, never what is found.
            let (mut first, mut det) = (first, det);
            first.set_process_counts(None);
            det.set_process_counts(None);
            let (a, c) = (bytes(first.clone()), bytes(det));
            if a != c {
                failures.push(format!("{what}: --det changes the report:\n{}\n---\n{}", a.1, c.1));
            }
            // Breadth-first search and simulation on several threads give
            // the one-thread report (programs search on one thread).
            if !matches!(search, Search::Dfs { .. }) && d.attributes.program.is_none() {
                for threads in [2, 3] {
                    let options = Options { threads, ..options(d, search, false) };
                    let r = model.check(&options, &mut NoControl).expect("a valid model");
                    let t = bytes(r);
                    if a != t {
                        failures.push(format!("{what}: {threads} threads change the report:\n{}\n---\n{}", a.1, t.1));
                    }
                }
            }
            println!("{what}: {:.1} s", started.elapsed().as_secs_f64());
        }
    }
    failures
}

/// Which of the gate's tests a model is in: the cores, or one of two
/// halves of the programs, so that the harness runs them side by side on
/// two processors. The programs take most of the gate's time: about 170 s
/// for the first half (`lease::correct` about 100 s of it, `tokio_lease`
/// 50 s) and 160 s for the second (`logship` 90 s; the threaded models,
/// snapshotted now, about 35 s), measured on this machine with `cargo test
/// -p cmc-tests --test determinism -- --nocapture`, which prints each
/// search's time. The harness starts tests in the order of their names,
/// two at once: the cores' test is named to come after the halves, so
/// that it runs after the shorter one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    Cores,
    /// `lease`, `tokio_lease` and the register's C programs.
    ProgramsA,
    /// The other programs (a new program model lands here).
    ProgramsB,
}

fn part(d: &Declared) -> Part {
    let name = d.name();
    let first = ["lease::", "tokio_lease::", "programs::register::"];
    match d.attributes.program {
        None => Part::Cores,
        Some(_) if first.iter().any(|m| name.starts_with(m)) => Part::ProgramsA,
        Some(_) => Part::ProgramsB,
    }
}

/// The models of one part, by name.
fn declared(of: Part) -> Vec<&'static Declared> {
    let mut declared: Vec<&Declared> = MODELS.iter().filter(|d| part(d) == of).collect();
    declared.sort_by_key(|d| d.name());
    declared
}

/// The gate over the models of `of`, at least `at_least` of them (so that
/// a part the suite did not include fails).
fn gate_part(of: Part, at_least: usize) {
    let declared = declared(of);
    assert!(declared.len() >= at_least, "the models suite was not included: {} models in {of:?}", declared.len());
    let failures = gate(&declared);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_rust_and_c_core_model_gives_the_same_bytes_twice_and_passes_det() {
    gate_part(Part::Cores, 20);
}

#[test]
#[cfg(target_os = "linux")]
fn every_program_model_gives_the_same_bytes_twice_and_passes_det_first_half() {
    gate_part(Part::ProgramsA, 5);
}

#[test]
#[cfg(target_os = "linux")]
fn every_program_model_gives_the_same_bytes_twice_and_passes_det_second_half() {
    gate_part(Part::ProgramsB, 10);
}

/// Teeth: a core that reads a global counter in its step.
#[test]
fn the_gate_rejects_a_nondeterministic_core() {
    static NONDET: Declared = Declared {
        module: "determinism",
        function: "nondet",
        file: file!(),
        line: line!(),
        attributes: Attributes::DEFAULT,
        build: |a| prepare(Model::<Nondet>::new(NoSettings), a),
    };
    let failures = gate(&[&NONDET]);
    assert!(!failures.is_empty(), "the gate passed a core that reads a global");
    assert!(failures[0].contains("--det: ") && failures[0].contains("non-deterministic"), "{failures:#?}");
}

/// A core whose steps are pure (so `--det` passes it) but whose states
/// print differently each time: the byte-for-byte comparison must catch it.
struct ChattyRender;

static RENDERED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct ChattyState {
    x: u8,
}

impl std::fmt::Debug for ChattyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = RENDERED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        write!(f, "x {} (printed {n} times before)", self.x)
    }
}

impl Core for ChattyRender {
    const NAME: &'static str = "test-chatty-render";
    type State = ChattyState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ChattyState, event: Event<'_>, _: &mut Effects) {
        if let Event::Init { .. } = event {
            s.x = 1;
        }
    }
}

/// Teeth: a report that differs between two runs of a deterministic core.
#[test]
fn the_gate_rejects_a_report_that_differs_between_runs() {
    static CHATTY: Declared = Declared {
        module: "determinism",
        function: "chatty",
        file: file!(),
        line: line!(),
        attributes: Attributes { expect: cmc::harness::Expect::Violation("never"), ..Attributes::DEFAULT },
        build: |a| prepare(Model::<ChattyRender>::new(NoSettings).nodes(1).always("never", |_| false), a),
    };
    let failures = gate(&[&CHATTY]);
    assert!(!failures.is_empty(), "the gate passed reports that differ");
    assert!(failures[0].contains("two runs differ"), "{failures:#?}");
}

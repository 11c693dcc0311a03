//! The calibration bar (issue 5): cmc against TLC on the 22 Disk Paxos
//! configurations in `calibration/`. Each configuration file is read as
//! `cmc calibrate` reads it, searched breadth-first with TLC's semantics,
//! and compared with TLC's figures in `calibration/expected.tsv`, exactly:
//! for a configuration that holds, the verdict and the distinct states,
//! generated states and depth; for one that is violated, the verdict, the
//! violated invariant and the trace length (which is the depth). Each is
//! searched on one thread and on two, which must give the same report,
//! byte for byte (issue 14). The table of both is printed on every run. Also: the bar has teeth (one witness
//! fewer changes the generated count), and the configuration reader names
//! the file and line of what it rejects.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use cmc::zerocopy::FromZeros;
use cmc::{Context, Core, DirectActions, Effects, Event, Model, Options, Report, Search, Verdict, check};
use cmc_cli::calibrate::trace_states;
use cmc_examples::disk_paxos::cfg::{self, Calibration, Module};
use cmc_examples::disk_paxos::{
    Act, Block, DiskPaxos, DiskPaxosSettings, DiskPaxosState, actions, decode, invariants, model_with, tla,
};

fn calibration_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the workspace").join("calibration")
}

/// One row of `expected.tsv`: TLC's figures for a configuration.
#[derive(Clone, Debug)]
struct Expected {
    id: String,
    module: String,
    /// `holds` or `violated`.
    verdict: String,
    violated: Option<String>,
    generated: u64,
    distinct: u64,
    depth: u32,
    trace_states: usize,
}

fn expected() -> Vec<Expected> {
    let path = calibration_dir().join("expected.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    assert_eq!(
        header, "id\tmodule\tverdict\tviolated\tgenerated\tdistinct\tdepth\ttrace_states",
        "expected.tsv's columns"
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 8, "expected.tsv: {l}");
            let num = |s: &str| s.parse::<u64>().unwrap_or_else(|e| panic!("expected.tsv: {s}: {e} in {l}"));
            Expected {
                id: f[0].to_string(),
                module: f[1].to_string(),
                verdict: f[2].to_string(),
                violated: (f[3] != "-").then(|| f[3].to_string()),
                generated: num(f[4]),
                distinct: num(f[5]),
                depth: num(f[6]) as u32,
                trace_states: num(f[7]) as usize,
            }
        })
        .collect()
}

/// Reads configuration `id` as `cmc calibrate --config calibration/configs/ID.cfg MODULE` does.
fn read_config(id: &str, module: &str) -> Calibration {
    let path = calibration_dir().join("configs").join(format!("{id}.cfg"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The file's own comment names the module TLC ran it with.
    assert!(text.contains(&format!("-config {id}.cfg {module}.tla")), "{id}.cfg does not name module {module}");
    let module = Module::from_arg(module).expect("a known module");
    cfg::read(&path.display().to_string(), &text, module).unwrap_or_else(|e| panic!("{e}"))
}

fn bfs() -> Options {
    Options { search: Search::Bfs { depth_max: None }, ..Options::default() }
}

/// What the bar compares, as (figure, TLC's, cmc's) for every figure that
/// differs; empty when the configuration matches.
fn mismatches(e: &Expected, r: &Report) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let mut cmp = |what: &'static str, tlc: String, cmc: String| {
        if tlc != cmc {
            out.push((what, tlc, cmc));
        }
    };
    match e.verdict.as_str() {
        "holds" => {
            cmp("verdict", "pass".to_string(), r.verdict.name().to_string());
            cmp("distinct", e.distinct.to_string(), r.distinct_states.to_string());
            cmp("generated", e.generated.to_string(), r.generated_states.to_string());
            cmp("depth", e.depth.to_string(), r.depth.to_string());
        }
        "violated" => {
            cmp("verdict", "violation".to_string(), r.verdict.name().to_string());
            cmp("invariant", format!("{:?}", e.violated), format!("{:?}", r.property));
            cmp("trace length", e.trace_states.to_string(), r.trace.len().to_string());
            cmp("depth", e.depth.to_string(), r.depth.to_string());
        }
        other => panic!("expected.tsv: verdict `{other}` for {}", e.id),
    }
    out
}

struct Outcome {
    expected: Expected,
    /// The one-thread report.
    report: Report,
    /// Whether two threads gave another report.
    two_threads_differ: bool,
    seconds: f64,
}

/// A report as bytes, without the time it took.
fn report_bytes(r: &Report) -> String {
    Report { elapsed_s: 0.0, ..r.clone() }.to_json()
}

fn run(e: &Expected) -> Outcome {
    let cal = read_config(&e.id, &e.module);
    let names: Vec<&str> = cal.invariants.iter().map(String::as_str).collect();
    let model = model_with(cal.settings, &names).expect("the reader accepts known invariants only");
    let start = Instant::now();
    let report = check(&model, &Options { threads: 1, ..bfs() }).expect("a valid model");
    let seconds = start.elapsed().as_secs_f64();
    let two = check(&model, &Options { threads: 2, ..bfs() }).expect("a valid model");
    let two_threads_differ = report_bytes(&two) != report_bytes(&report);
    Outcome { expected: e.clone(), report, two_threads_differ, seconds }
}

fn table(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    s.push_str("calibration: cmc against TLC (tlc -workers 1 -deadlock), Disk Paxos, calibration/configs/\n");
    s.push_str(&format!(
        "{:<4} {:<12} | {:<24} {:>9} {:>9} {:>5} | {:<24} {:>9} {:>9} {:>5} {:>6} | {}\n",
        "cfg",
        "module",
        "TLC verdict",
        "distinct",
        "generated",
        "depth",
        "cmc verdict",
        "distinct",
        "generated",
        "depth",
        "s",
        "bar"
    ));
    for o in outcomes {
        let (e, r) = (&o.expected, &o.report);
        let tlc = match &e.violated {
            Some(inv) => format!("violated {inv}"),
            None => "holds".to_string(),
        };
        let cmc = match (&r.verdict, &r.property) {
            (Verdict::Violation, Some(p)) => format!("violated {p}"),
            (Verdict::Pass, _) => "holds".to_string(),
            (v, _) => v.name().to_string(),
        };
        let bad = mismatches(e, r);
        let mut verdict = if bad.is_empty() { "match".to_string() } else { format!("MISMATCH: {}", describe(&bad)) };
        if o.two_threads_differ {
            verdict.push_str(", TWO THREADS DIFFER");
        }
        // For violations, the counts at the moment the search stopped are
        // not part of the bar; the trace length is.
        let note = if e.violated.is_some() {
            format!(" (trace {} states; counts at the stop, not in the bar)", r.trace.len())
        } else {
            String::new()
        };
        s.push_str(&format!(
            "{:<4} {:<12} | {:<24} {:>9} {:>9} {:>5} | {:<24} {:>9} {:>9} {:>5} {:>6.2} | {verdict}{note}\n",
            e.id,
            e.module,
            tlc,
            e.distinct,
            e.generated,
            e.depth,
            cmc,
            r.distinct_states,
            r.generated_states,
            r.depth,
            o.seconds
        ));
    }
    s
}

fn describe(bad: &[(&str, String, String)]) -> String {
    bad.iter().map(|(w, t, c)| format!("{w} TLC {t} cmc {c}")).collect::<Vec<_>>().join("; ")
}

#[test]
fn all_22_configurations_match_tlc() {
    let rows = expected();
    assert_eq!(rows.len(), 22, "expected.tsv has 22 configurations");
    // Two workers take configurations from a shared counter; the table is
    // printed in the file's order.
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(e) = rows.get(i) else { break };
                    let o = run(e);
                    done.lock().expect("no worker panicked").push((i, o));
                }
            });
        }
    });
    let mut outcomes = done.into_inner().expect("no worker panicked");
    outcomes.sort_by_key(|(i, _)| *i);
    let outcomes: Vec<Outcome> = outcomes.into_iter().map(|(_, o)| o).collect();
    let text = table(&outcomes);
    // Written to the process's stdout directly, past libtest's capture: the
    // table is this test's output on every run, passing or not.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "\n{text}all 22 configurations on 1 thread (s: its time), then on 2, the same report: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let _ = out.flush();
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| {
            let bad = mismatches(&o.expected, &o.report);
            let threads = if o.two_threads_differ { "; two threads give another report" } else { "" };
            (!bad.is_empty() || o.two_threads_differ).then(|| format!("{}: {}{threads}", o.expected.id, describe(&bad)))
        })
        .collect();
    assert!(failed.is_empty(), "configurations that do not match TLC:\n{}\n{text}", failed.join("\n"));
}

/// TLC's counterexample for configuration `id`: each state's `/\ var =
/// value` lines, whitespace removed (TLC breaks long values over lines).
fn tlc_trace(id: &str) -> Vec<String> {
    let path = calibration_dir().join("tlc-output").join(format!("{id}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut states: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("State ") {
            states.push(String::new());
        } else if let Some(state) = states.last_mut()
            && (line.starts_with("/\\") || line.starts_with("   "))
        {
            state.push_str(line);
        }
    }
    states.into_iter().map(|s| s.split_whitespace().collect()).collect()
}

#[test]
fn every_counterexample_is_tlcs_trace_and_the_search_stops_where_tlc_stops() {
    for e in expected().into_iter().filter(|e| e.violated.is_some()) {
        let o = run(&e);
        let cal = read_config(&e.id, &e.module);
        let states = trace_states(&cal, &o.report).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        let cmc: Vec<String> = states
            .iter()
            .map(|(_, s)| tla::state_text(&cal.settings, &cal.names, s).split_whitespace().collect())
            .collect();
        let tlc = tlc_trace(&e.id);
        assert_eq!(cmc.len(), tlc.len(), "{}: trace lengths", e.id);
        for (i, (c, t)) in cmc.iter().zip(&tlc).enumerate() {
            assert_eq!(c, t, "{}: state {} differs from TLC's", e.id, i + 1);
        }
        // Successors are generated in TLC's order and counted as TLC
        // counts them, so the search stops at the same successor as TLC's,
        // with the same counts.
        assert_eq!(o.report.distinct_states, e.distinct, "{}: distinct states at the stop", e.id);
        assert_eq!(o.report.generated_states, e.generated, "{}: generated states at the stop", e.id);
    }
}

/// The Disk Paxos core with one action index never enabled: one witness of
/// one disjunct dropped from the enumeration.
struct DropOne<const INDEX: u16>;

impl<const INDEX: u16> Core for DropOne<INDEX> {
    const NAME: &'static str = "disk-paxos-minus-one-witness";
    type State = DiskPaxosState;
    type Settings = DiskPaxosSettings;
    const DURABLE: usize = 0;

    fn validate(settings: &DiskPaxosSettings) -> Result<(), String> {
        DiskPaxos::validate(settings)
    }
    fn direct_actions(settings: &DiskPaxosSettings) -> Option<DirectActions> {
        DiskPaxos::direct_actions(settings)
    }
    fn step(ctx: &Context<'_, DiskPaxosSettings>, state: &mut DiskPaxosState, event: Event<'_>, out: &mut Effects) {
        if event == (Event::Action { index: INDEX }) {
            out.not_enabled();
            return;
        }
        DiskPaxos::step(ctx, state, event, out);
    }
}

fn row(id: &str) -> Expected {
    expected().into_iter().find(|e| e.id == id).unwrap_or_else(|| panic!("{id} in expected.tsv"))
}

#[test]
fn one_witness_fewer_fails_the_bar_on_the_generated_count() {
    // c05 (K = 3): Phase1or2Read(1, 1, 2)'s ELSE branch with the third
    // ballot. Its successor is always StartBallot(1)'s with the same ballot,
    // so no state is lost: only the generated count can see it.
    const ELSE_B3: u16 = 7;
    let e = row("c05");
    let cal = read_config(&e.id, &e.module);
    assert_eq!(decode(&cal.settings, ELSE_B3), Some(Act::Phase1or2Read { p: 0, d: 0, q: 1, j: 2 }));
    let full = check(&Model::<DiskPaxos>::new(cal.settings), &bfs()).expect("a valid model");
    assert!(mismatches(&e, &full).is_empty(), "the full core matches c05: {:?}", mismatches(&e, &full));
    let dropped = check(&Model::<DropOne<ELSE_B3>>::new(cal.settings), &bfs()).expect("a valid model");
    let bad = mismatches(&e, &dropped);
    assert_eq!(dropped.distinct_states, e.distinct, "the dropped witness only duplicates states");
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].0, "generated");
    assert!(dropped.generated_states < e.generated);

    // c02: Fail(2) with ip = in2, a witness of `\E ip \in Inputs`.
    const FAIL_2_IN2: u16 = 14;
    let e = row("c02");
    let cal = read_config(&e.id, &e.module);
    assert_eq!(decode(&cal.settings, FAIL_2_IN2), Some(Act::Fail { p: 1, ip: 2 }));
    let dropped = check(&Model::<DropOne<FAIL_2_IN2>>::new(cal.settings), &bfs()).expect("a valid model");
    let bad = mismatches(&e, &dropped);
    assert!(bad.iter().any(|(what, _, _)| *what == "generated"), "{bad:?}");
}

fn reject(text: &str) -> String {
    match cfg::read("x.cfg", text, Module::McDiskPaxos) {
        Ok(c) => panic!("accepted: {c:?}"),
        Err(e) => e.to_string(),
    }
}

const C01: &str = "CONSTANTS\n  N = 2\n  Inputs = {in1}\n  NotAnInput = NotAnInput\n  Disk = {1}\n  K = 1\n  \
                   BallotLayout = \"block\"\n  QuorumKind = \"majority\"\n  Ballot <- BallotImpl\n  \
                   IsMajority <- IsMajorityImpl\nINIT HInit\nNEXT HNext\nINVARIANTS HInv1 Agreement\n";

#[test]
fn the_configuration_reader_names_the_file_and_line_of_what_it_rejects() {
    let ok = cfg::read("x.cfg", C01, Module::McDiskPaxos).expect("c01's text");
    assert_eq!(ok.invariants, ["HInv1", "Agreement"]);
    assert_eq!(ok.settings.procs, 2);
    assert_eq!(
        reject(&C01.replace("INVARIANTS HInv1", "SYMMETRY Perms\nINVARIANTS HInv1")),
        "x.cfg:13: SYMMETRY is not supported by cmc calibrate (CONSTANTS, INIT, NEXT and INVARIANTS are)"
    );
    assert_eq!(
        reject(&C01.replace("K = 1", "K = 1\n  Q = 3")),
        "x.cfg:7: unknown constant `Q` (module MCDiskPaxos declares N, Inputs, NotAnInput, Disk, K, BallotLayout, QuorumKind, Ballot, IsMajority)"
    );
    assert_eq!(
        reject(&C01.replace("Agreement", "Agreemnt")),
        "x.cfg:13: unknown invariant `Agreemnt` (known: HInv1, HInv2, HInv3, HInv4, HInv5, HInv6, Agreement, Validity, OutputIsChosen, NoDecision, OwnInputOnly, NotAllDecided)"
    );
    assert_eq!(reject(&C01.replace("  K = 1\n", "")), "x.cfg: constant `K` is not assigned");
    assert_eq!(
        reject(&C01.replace("\"block\"", "\"spiral\"")),
        "x.cfg:7: BallotLayout = \"spiral\" is none of \"block\", \"interleaved\", \"asym\""
    );
    assert_eq!(reject(&C01.replace("N = 2", "N = 9")), "x.cfg:2: N = 9: cmc's Disk Paxos core takes N from 1 to 4");
    assert_eq!(
        reject(&C01.replace("Disk = {1}", "Disk = {2, 5}")),
        "x.cfg:5: cmc's Disk Paxos core takes Disk = {1, ..., n} with n from 1 to 4"
    );
    assert_eq!(
        reject(&C01.replace("NEXT HNext", "NEXT MHNext")),
        "x.cfg:12: NEXT MHNext: module MCDiskPaxos has no MHNext (the mutant modules do)"
    );
    assert_eq!(
        reject(&C01.replace("Ballot <- BallotImpl", "Ballot <- MyBallots")),
        "x.cfg:9: cmc ports `Ballot <- BallotImpl` only (MCDiskPaxos's implementation)"
    );
    assert_eq!(reject(&C01.replace("N = 2", "N = 2 (* open")), "x.cfg:2: a `(*` comment is never closed");
    assert_eq!(reject(&C01.replace("Disk = {1}", "Disk = <<1>>")), "x.cfg:5: unexpected character `<`");
    assert_eq!(
        reject(&C01.replace("QuorumKind = \"majority\"", "QuorumKind = \"procN\"").replace("N = 2", "N = 3")),
        "x.cfg:8: IsMajority(Disk) is false (DiskSynod's ASSUME fails)"
    );
}

/// Changes a state so that an invariant fails.
type Breaker = fn(&mut DiskPaxosState, &DiskPaxosSettings);

/// Record bit of `[block |-> b, proc |-> q]` in a blocksRead set.
fn read_bit(set: &DiskPaxosSettings, q: usize, b: Block) -> u64 {
    1 << set.record_bit(q, b).expect("a block of q")
}

#[test]
fn every_invariant_holds_initially_and_fails_where_its_text_says_it_does() {
    // Only some of the invariants fail in the calibration set (HInv4, HInv5,
    // Agreement and the three canaries); each one is shown here to fail on a
    // state its TLA+ text rejects, so that none is true by accident.
    let set = DiskPaxosSettings::default();
    let ctx = Context { node: 0, nodes: 1, settings: &set };
    let mut init = DiskPaxosState::new_zeroed();
    assert!(actions::initial(&ctx, &mut init, 0), "input = <<in1, in1>>");
    for (name, holds) in invariants::ALL {
        assert!(holds(&set, &init), "{name} fails in the initial state");
    }
    let cases: [(&str, Breaker); 12] = [
        ("HInv1", |s, _| s.phase[0] = 4),
        ("HInv2", |s, _| s.output[0] = 1),
        ("HInv3", |s, set| {
            s.phase = [1, 1, 0, 0];
            s.dblock[0].mbal = 1;
            s.dblock[1].mbal = 2;
            s.blocks_read[0][0].set(read_bit(set, 1, Block::default()));
            s.blocks_read[1][0].set(read_bit(set, 0, Block::default()));
        }),
        ("HInv4", |s, _| {
            s.phase[0] = 1;
            s.dblock[0] = Block { mbal: 1, bal: 1, inp: 1 };
        }),
        ("HInv5", |s, set| {
            s.phase[0] = 2;
            s.dblock[0] = Block { mbal: 1, bal: 1, inp: 1 };
            s.disk[0][1] = Block { mbal: 2, bal: 2, inp: 2 };
            s.blocks_read[0][0].set(read_bit(set, 1, Block::default()));
        }),
        ("HInv6", |s, _| s.chosen = 1),
        ("Agreement", |s, _| s.output = [1, 2, 0, 0]),
        ("Validity", |s, _| s.output[0] = 2),
        ("OutputIsChosen", |s, _| s.output[0] = 1),
        ("NoDecision", |s, _| s.output[0] = 1),
        ("OwnInputOnly", |s, _| s.output[0] = 2),
        ("NotAllDecided", |s, _| s.output = [1, 1, 0, 0]),
    ];
    for (name, break_it) in cases {
        let holds = invariants::by_name(name).expect("a known invariant");
        let mut s = init;
        break_it(&mut s, &set);
        assert!(!holds(&set, &s), "{name} holds in a state its text rejects: {s:?}");
    }
}

//! The searches: hand-counted state spaces, DFS against BFS by depth,
//! simulation reproducible from its seed, replay round trips, properties of
//! each kind, and a bug that needs reordering (bag finds it, FIFO cannot).

use cmc::{
    Action, Control, CoreExplorer, CounterexampleFile, Engine, Explore, Fingerprint, Kind, Model, NoSettings, Options,
    Progress, Report, Search, Verdict, World, check, check_with, replay,
};
use cmc_tests::{Counter, Echo, EchoSettings, Ticker, echo};

fn run<C: cmc::Core>(model: &Model<C>, search: Search) -> Report {
    check(model, &Options { search, ..Options::default() }).expect("valid model")
}

fn bfs<C: cmc::Core>(model: &Model<C>) -> Report {
    run(model, Search::Bfs { depth_max: None })
}

/// (verdict, distinct, generated, depth)
fn counts(r: &Report) -> (Verdict, u64, u64, u32) {
    (r.verdict, r.distinct_states, r.generated_states, r.depth)
}

fn labels(r: &Report) -> Vec<&str> {
    r.trace.iter().map(|s| s.label.as_str()).collect()
}

#[test]
fn hand_counted_line_of_four() {
    // n = 0, 1, 2, 3: one initial world and three firings.
    let model = Model::<Counter>::new(NoSettings);
    assert_eq!(counts(&bfs(&model)), (Verdict::Pass, 4, 4, 4));
}

#[test]
fn hand_counted_fifo_channel() {
    // Two messages on one FIFO channel: only one order.
    let model = Model::<Echo>::new(EchoSettings { count: 2, reply: 0 }).nodes(2);
    assert_eq!(counts(&bfs(&model)), (Verdict::Pass, 3, 3, 3));
}

#[test]
fn hand_counted_bag() {
    // {1,2}; deliver 1 or 2; then the other: 1 + 2 + 2 worlds, 5 generated.
    let model = Model::<Echo>::new(EchoSettings { count: 2, reply: 0 }).nodes(2).network(cmc::Network::Bag);
    assert_eq!(counts(&bfs(&model)), (Verdict::Pass, 5, 5, 3));
}

#[test]
fn hand_counted_fifo_with_one_drop() {
    // W0 [1,2]: DELIVER -> W1, DROP -> W2 (both ends owe a reset).
    // W1 [2]: DELIVER -> W3 (done), DROP -> W4 (resets owed).
    // W2, W4: each end's RESET in either order: W5, W6 -> W9 and W7, W8 -> W10.
    // Distinct 11; generated 1 + 2+2+2+2 + 1+1+1+1 = 13; depth 5.
    let model = Model::<Echo>::new(EchoSettings { count: 2, reply: 0 }).nodes(2).drops(1);
    assert_eq!(counts(&bfs(&model)), (Verdict::Pass, 11, 13, 5));
}

#[test]
fn a_reordering_bug_is_found_in_bag_mode_and_not_in_fifo_mode() {
    let fifo = bfs(&echo(2));
    assert_eq!(fifo.verdict, Verdict::Pass, "{}", fifo.to_text());
    let bag = bfs(&echo(2).network(cmc::Network::Bag));
    assert_eq!(bag.verdict, Verdict::Violation);
    assert_eq!(bag.property.as_deref(), Some("in-order"));
    assert_eq!(labels(&bag), ["INIT(0)", "DELIVER(0->1, 02)", "DELIVER(0->1, 01)"], "shortest trace");
}

#[test]
fn an_invariant_failing_in_the_initial_world_has_a_trace_of_one() {
    let model = Model::<Counter>::new(NoSettings).always("never", |_| false);
    let r = bfs(&model);
    assert_eq!(counts(&r), (Verdict::Violation, 1, 1, 1));
    assert_eq!(labels(&r), ["INIT(0)"]);
}

#[test]
fn dfs_with_bound_d_reaches_what_bfs_reaches_within_d() {
    let two_phase = cmc_examples::two_phase_tla::model(Default::default());
    let drops = Model::<Echo>::new(EchoSettings { count: 3, reply: 1 }).nodes(2).drops(2);
    let bag =
        Model::<Echo>::new(EchoSettings { count: 3, reply: 1 }).nodes(2).network(cmc::Network::Bag).drops(1).dups(2);
    for d in 1..=13 {
        for (name, b, f) in [
            (
                "two-phase-tla",
                run(&two_phase, Search::Bfs { depth_max: Some(d) }),
                run(&two_phase, Search::Dfs { depth_max: d }),
            ),
            ("echo drops", run(&drops, Search::Bfs { depth_max: Some(d) }), run(&drops, Search::Dfs { depth_max: d })),
            ("echo bag", run(&bag, Search::Bfs { depth_max: Some(d) }), run(&bag, Search::Dfs { depth_max: d })),
        ] {
            assert_eq!(b.distinct_states, f.distinct_states, "{name}, depth {d}");
            assert_eq!(b.verdict, f.verdict, "{name}, depth {d}: both complete or both cut");
            assert_eq!(b.depth, f.depth, "{name}, depth {d}");
        }
    }
    // Deep enough, both are complete and equal the unbounded BFS.
    let full = bfs(&two_phase);
    let dfs = run(&two_phase, Search::Dfs { depth_max: 11 });
    assert_eq!((dfs.verdict, dfs.distinct_states), (Verdict::Pass, full.distinct_states));
    let cut = run(&two_phase, Search::Dfs { depth_max: 10 });
    assert_eq!(cut.verdict, Verdict::Incomplete, "the bound hid worlds: never a pass");
}

fn without_time(r: &Report) -> String {
    let mut r = r.clone();
    r.elapsed_s = 0.0;
    r.to_json()
}

#[test]
fn simulation_is_reproducible_from_its_seed_and_never_a_pass() {
    let model = echo(3).network(cmc::Network::Bag);
    let sim = |seed| run(&model, Search::Simulate { walks: 50, walk_length: 10, seed });
    let a = sim(7);
    assert_eq!(a.verdict, Verdict::Violation);
    assert_eq!(without_time(&a), without_time(&sim(7)), "same seed, same bytes");
    let traces: std::collections::BTreeSet<Vec<String>> =
        (0..20).map(|s| labels(&sim(s)).iter().map(|l| l.to_string()).collect()).collect();
    assert!(traces.len() > 1, "different seeds take different walks");
    let fifo = run(&echo(3), Search::Simulate { walks: 20, walk_length: 10, seed: 1 });
    assert_eq!(fifo.verdict, Verdict::Incomplete, "no violation: still not a pass");
    assert!(fifo.reason.unwrap().contains("no violation found in 20 walks"));
}

#[test]
fn replay_round_trips_and_rejects_a_tampered_file() {
    let model = echo(2).network(cmc::Network::Bag);
    let found = bfs(&model);
    let file = CounterexampleFile::from_json(&found.counterexample().expect("a violation").to_json()).unwrap();
    let again = replay(&model, &file, true).unwrap();
    assert_eq!(again.verdict, Verdict::Violation, "{}", again.summary());
    assert_eq!(again.property.as_deref(), Some("in-order"));
    assert_eq!(again.trace, found.trace, "same actions, same worlds");

    // A file that does not fit the model is a replay error naming the step.
    let mut bad_fp = file.clone();
    bad_fp.steps[1].fingerprint = "0".repeat(32);
    let e = replay(&model, &bad_fp, false).unwrap_err();
    assert!(e.to_string().starts_with("step 2: DELIVER(0->1, 02) reached fingerprint"), "{e}");

    let mut bad_action = file.clone();
    bad_action.steps[2].action = "DELIVER(0->1, 03)".to_string();
    let e = replay(&model, &bad_action, false).unwrap_err();
    assert!(e.to_string().contains("step 3: DELIVER(0->1, 03) is not enabled"), "{e}");

    let mut short = file.clone();
    short.steps.pop();
    let e = replay(&model, &short, false).unwrap_err();
    assert!(e.to_string().contains("does not violate"), "a prefix does not violate the property: {e}");
}

#[test]
fn sometimes_gives_a_witness_or_a_violation() {
    let model = Model::<Counter>::new(NoSettings).sometimes("reaches-3", |w| w.state(0).n == 3);
    let r = bfs(&model);
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!(r.witnesses.len(), 1);
    assert_eq!(r.witnesses[0].trace.len(), 4, "shortest witness");
    let model = Model::<Counter>::new(NoSettings).sometimes("reaches-4", |w| w.state(0).n == 4);
    let r = bfs(&model);
    assert_eq!(
        (r.verdict, r.kind, r.property.as_deref()),
        (Verdict::Violation, Some(Kind::Sometimes), Some("reaches-4"))
    );
}

#[test]
fn eventually_is_checked_on_worlds_with_no_enabled_action() {
    let holds = Model::<Counter>::new(NoSettings).eventually("ends-at-3", |w| w.state(0).n == 3);
    assert_eq!(bfs(&holds).verdict, Verdict::Pass);
    let fails = Model::<Counter>::new(NoSettings).eventually("ends-at-2", |w| w.state(0).n == 2);
    for search in [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 10 },
        Search::Simulate { walks: 1, walk_length: 10, seed: 0 },
    ] {
        let r = run(&fails, search);
        assert_eq!((r.verdict, r.kind), (Verdict::Violation, Some(Kind::Eventually)), "{search:?}");
        assert_eq!(r.trace.len(), 4, "{search:?}");
    }
}

#[test]
fn an_eventually_property_no_world_was_checked_against_is_reported_as_never_checked() {
    // The timer re-arms forever: no world is without an enabled action, so
    // `stops` (false wherever it is checked) is checked nowhere.
    let model = Model::<Ticker>::new(NoSettings).eventually("stops", |_| false).always("any", |_| true);
    for search in [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 10 },
        Search::Simulate { walks: 3, walk_length: 5, seed: 0 },
    ] {
        let r = run(&model, search);
        let verdict = if matches!(search, Search::Simulate { .. }) { Verdict::Incomplete } else { Verdict::Pass };
        assert_eq!(r.verdict, verdict, "{search:?}");
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["never_checked"], serde_json::json!(["stops"]), "{search:?}: {}", r.to_json());
        let note = "never checked: eventually property `stops` (no world without an enabled action was reached)";
        assert!(r.summary().contains(note), "{search:?}: {}", r.summary());
        assert!(r.to_text().starts_with(&r.summary()), "{search:?}");
    }
    // Checked on the last world of the counter: no note.
    let checked = Model::<Counter>::new(NoSettings).eventually("ends-at-3", |w| w.state(0).n == 3);
    let r = bfs(&checked);
    assert_eq!(r.verdict, Verdict::Pass);
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["never_checked"], serde_json::json!([]));
    assert!(!r.summary().contains("never checked"), "{}", r.summary());
}

#[test]
fn a_cores_json_report_has_null_process_counts() {
    // The keys a program search fills are there, as `null`: one schema for
    // every report, and no process was started.
    let r = bfs(&Model::<Counter>::new(NoSettings));
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    for key in ["filters_installed", "execs", "forks"] {
        assert_eq!(json.get(key), Some(&serde_json::Value::Null), "{key}: {}", r.to_json());
    }
}

#[test]
fn deadlock_is_reported_only_when_asked() {
    let model = Model::<Counter>::new(NoSettings);
    assert_eq!(bfs(&model).verdict, Verdict::Pass);
    let r = check(&model, &Options { deadlock: true, ..Options::default() }).unwrap();
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("deadlock")));
}

#[test]
fn a_deadlock_counterexample_records_deadlock_and_replays() {
    let model = Model::<Counter>::new(NoSettings);
    let found = check(&model, &Options { deadlock: true, ..Options::default() }).unwrap();
    assert_eq!((found.verdict, found.property.as_deref()), (Verdict::Violation, Some("deadlock")));
    let json = found.counterexample().expect("a violation").to_json();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["deadlock"], true, "the file records --deadlock: {json}");
    let file = CounterexampleFile::from_json(&json).unwrap();
    for det in [false, true] {
        let again = replay(&model, &file, det).expect("a deadlock file replays");
        assert_eq!((again.verdict, again.property.as_deref()), (Verdict::Violation, Some("deadlock")), "{det}");
        assert_eq!(again.trace, found.trace, "same actions, same worlds");
    }

    // A prefix ends where an action is still enabled: no deadlock.
    let mut short = file.clone();
    short.steps.pop();
    let e = replay(&model, &short, false).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "step {}: the replayed trace does not end in a deadlock (a world with no enabled action)",
            file.steps.len() - 1
        )
    );

    // A file written before the field existed still replays.
    let mut old = value.clone();
    old.as_object_mut().unwrap().remove("deadlock");
    let old = CounterexampleFile::from_json(&old.to_string()).expect("an old file reads");
    assert_eq!(replay(&model, &old, false).unwrap().verdict, Verdict::Violation);

    // Without --deadlock the file says nothing about it, as before.
    let other = bfs(&echo(2).network(cmc::Network::Bag)).counterexample().unwrap().to_json();
    assert!(!other.contains("deadlock"), "{other}");
}

#[test]
fn a_property_named_deadlock_is_rejected_with_deadlock_checking() {
    let model = Model::<Counter>::new(NoSettings).always("deadlock", |_| true);
    assert_eq!(bfs(&model).verdict, Verdict::Pass, "without --deadlock it is any name");
    let err = check(&model, &Options { deadlock: true, ..Options::default() }).unwrap_err();
    assert!(err.to_string().starts_with("a property is named `deadlock`"), "{err}");
}

#[test]
fn a_model_declared_with_deadlock_can_expect_a_deadlock_violation() {
    use cmc::harness::{Attributes, Expect, prepare};
    let declared = Attributes { deadlock: true, expect: Expect::Violation("deadlock"), ..Attributes::DEFAULT };
    let model = prepare(Model::<Counter>::new(NoSettings), &declared).expect("deadlock may be expected");
    let options = Options { deadlock: true, ..Options::default() };
    let r = model.check(&options, &mut cmc::NoControl).unwrap();
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("deadlock")));
    // Without `deadlock` there is no such property to expect.
    let undeclared = Attributes { deadlock: false, ..declared };
    let err = prepare(Model::<Counter>::new(NoSettings), &undeclared).err().expect("no property `deadlock`");
    assert!(err.to_string().contains("expects a violation of `deadlock`, but has no such property"), "{err}");
}

#[test]
fn cmc_deadlock_sets_deadlock_from_the_environment() {
    use cmc_runner::overrides::Overrides;
    let env = |v: &str| Overrides::from_env([("CMC_DEADLOCK".to_string(), v.to_string())].into_iter());
    let on = env("1").expect("CMC_DEADLOCK is known");
    assert_eq!(on.describe(), "CMC_DEADLOCK=1");
    assert!(on.apply(&cmc::harness::Attributes::DEFAULT).deadlock);
    let declared = cmc::harness::Attributes { deadlock: true, ..cmc::harness::Attributes::DEFAULT };
    assert!(!env("0").unwrap().apply(&declared).deadlock);
    assert_eq!(env("yes").unwrap_err(), "CMC_DEADLOCK=yes: expected 1 or 0");
}

struct StopAfter(u64);

impl Control for StopAfter {
    fn poll(&mut self, p: &Progress) -> Option<String> {
        (p.generated_states >= self.0).then(|| "stopped by the test".to_string())
    }
}

#[test]
fn a_control_can_stop_a_search_as_incomplete() {
    let model = cmc_examples::two_phase_tla::model(cmc_examples::two_phase_tla::TwoPhaseTlaSettings { rms: 5 });
    let r = check_with(&model, &Options::default(), &mut StopAfter(1)).unwrap();
    assert_eq!(r.verdict, Verdict::Incomplete);
    assert_eq!(r.reason.as_deref(), Some("stopped by the test"));
}

#[test]
fn reports_are_identical_across_runs() {
    let model =
        Model::<Echo>::new(EchoSettings { count: 3, reply: 1 }).nodes(2).network(cmc::Network::Bag).drops(1).dups(1);
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 8 }] {
        assert_eq!(without_time(&run(&model, search)), without_time(&run(&model, search)));
    }
}

/// The in-process front end with another poll interval.
struct PollEvery<'m, C: cmc::Core> {
    inner: CoreExplorer<'m, C>,
    every: Option<u64>,
}

impl<C: cmc::Core> Explore for PollEvery<'_, C> {
    type World = World;
    type Action = Action;
    fn empty_world(&self) -> World {
        self.inner.empty_world()
    }
    fn initial_variants(&self) -> u32 {
        self.inner.initial_variants()
    }
    fn init_action(&self, variant: u32) -> Action {
        self.inner.init_action(variant)
    }
    fn initial(&mut self, variant: u32, out: &mut World) -> Result<bool, String> {
        self.inner.initial(variant, out)
    }
    fn actions(&mut self, world: &World, out: &mut Vec<Action>) -> Result<(), String> {
        self.inner.actions(world, out)
    }
    fn apply(&mut self, world: &World, action: &Action, out: &mut World) -> Result<bool, String> {
        self.inner.apply(world, action, out)
    }
    fn store(&mut self, world: &World, out: &mut Vec<u8>) -> Fingerprint {
        self.inner.store(world, out)
    }
    fn load(&mut self, stored: &[u8], out: &mut World) -> Result<(), String> {
        self.inner.load(stored, out)
    }
    fn poll_every(&self) -> u64 {
        self.every.unwrap_or_else(|| self.inner.poll_every())
    }
    fn properties(&self) -> Vec<(String, Kind)> {
        self.inner.properties()
    }
    fn holds(&self, index: usize, world: &World) -> Result<bool, String> {
        self.inner.holds(index, world)
    }
    fn render(&mut self, action: &Action, world: &World) -> cmc::report::Step {
        self.inner.render(action, world)
    }
    fn identity(&self) -> cmc::Identity {
        self.inner.identity()
    }
}

/// Records the generated count at every poll; stops at poll `stop_at`.
struct Polls {
    at: Vec<u64>,
    stop_at: Option<usize>,
}

impl Control for Polls {
    fn poll(&mut self, p: &Progress) -> Option<String> {
        self.at.push(p.generated_states);
        (Some(self.at.len()) == self.stop_at).then(|| "stopped by the test".to_string())
    }
}

#[test]
fn a_front_end_sets_how_often_every_search_polls_its_control() {
    let model =
        Model::<Echo>::new(EchoSettings { count: 3, reply: 1 }).nodes(2).network(cmc::Network::Bag).drops(1).dups(1);
    let search_with = |search, every, stop_at| {
        let explorer = PollEvery { inner: CoreExplorer::new(Engine::new(&model, false).unwrap()), every };
        let mut polls = Polls { at: Vec::new(), stop_at };
        let r = cmc::search::explore(explorer, &Options { search, ..Options::default() }, &mut polls);
        (r, polls.at)
    };
    for search in [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 20 },
        Search::Simulate { walks: 5, walk_length: 6, seed: 3 },
    ] {
        // By default, every 16,384 generated states: this model has fewer.
        let (r, polls) = search_with(search, None, None);
        assert!(r.generated_states < 1 << 14, "{search:?}: {}", r.summary());
        assert_eq!(polls, [] as [u64; 0], "{search:?}");
        // Every generated state: BFS and DFS poll after each one (but the
        // first initial one), simulation after each action it takes.
        let (r, polls) = search_with(search, Some(1), None);
        assert!(polls.windows(2).all(|w| w[0] < w[1]), "{search:?}: {polls:?}");
        match search {
            Search::Simulate { walks, .. } => assert!(polls.len() as u64 >= walks, "{search:?}: {polls:?}"),
            _ => assert!(polls.len() as u64 >= r.generated_states - 1, "{search:?}: {polls:?} of {}", r.summary()),
        }
        // And a stop at the first poll stops at once.
        let (r, polls) = search_with(search, Some(1), Some(1));
        assert_eq!((r.verdict, r.reason.as_deref()), (Verdict::Incomplete, Some("stopped by the test")));
        assert_eq!(r.generated_states, polls[0], "{search:?}");
        match search {
            Search::Simulate { .. } => assert!(r.distinct_states <= 2, "one action taken: {}", r.summary()),
            _ => assert!(r.generated_states <= 2, "{search:?}: {}", r.summary()),
        }
    }
}

//! Symmetry reduction (issue 14, item 4): a search under symmetry stores
//! one world per class of worlds that differ only by a renaming of the
//! core's interchangeable nodes. The model is the message-passing
//! `two-phase` with a coordinator and three participants, whose yes voters
//! are interchangeable.
//!
//! The reduced count is checked against the classes counted here, by this
//! file's own renaming of every world of the full state space; a planted
//! bug is still found at the shortest depth, with a trace of the real
//! model that replays without symmetry; a property that tells renamed
//! worlds apart is an error, not a wrong verdict.

use std::collections::{BTreeSet, HashSet, VecDeque};

use cmc::{
    CoreExplorer, Engine, Explore, Kind, Model, ModelError, NoControl, Options, Report, Search, Verdict, World, check,
    check_with, replay,
};
use cmc_examples::two_phase::{TwoPhase, TwoPhaseSettings, TwoPhaseState, decision, model, vote};
use zerocopy::{FromBytes, IntoBytes};

fn two_phase(nodes: u8, settings: TwoPhaseSettings) -> Model<TwoPhase> {
    model(settings).nodes(nodes)
}

fn symmetric(search: Search) -> Options {
    Options { search, symmetry: true, threads: 1, ..Options::default() }
}

fn bfs() -> Search {
    Search::Bfs { depth_max: None }
}

/// Every world the full model reaches, found by a search of this file's
/// own over the explorer's steps.
fn every_world(model: &Model<TwoPhase>) -> Vec<World> {
    let mut e = CoreExplorer::new(Engine::new(model, false).expect("a valid model"));
    let mut start = e.empty_world();
    assert!(e.initial(0, &mut start).expect("the initial world"));
    let (mut seen, mut queue, mut worlds) = (HashSet::new(), VecDeque::from([start]), Vec::new());
    let (mut actions, mut bytes) = (Vec::new(), Vec::new());
    while let Some(w) = queue.pop_front() {
        bytes.clear();
        e.store(&w, &mut bytes);
        if !seen.insert(bytes.clone()) {
            continue;
        }
        e.actions(&w, &mut actions).expect("actions");
        for a in &actions {
            let mut next = e.empty_world();
            if e.apply(&w, a, &mut next).expect("a step") {
                queue.push_back(next);
            }
        }
        worlds.push(w);
    }
    worlds
}

/// One world renamed by `to` (node `n` becomes `to[n]`), written out as
/// plain data: the budgets left, states and environments in node order,
/// channels sorted by (from, to) in arrival order, persists per node, the
/// ghost log.
type Written = (
    (u8, u8, u8, u8),
    Vec<Vec<u8>>,
    Vec<(u8, u16, u8, u8)>,
    Vec<(u8, u8, Vec<u8>)>,
    Vec<Vec<Vec<u8>>>,
    Vec<(u8, Vec<u8>)>,
);

fn written(w: &World, to: &[u8]) -> Written {
    let nodes = w.nodes() as usize;
    let size = size_of::<TwoPhaseState>();
    let bits = |b: u8| (0..nodes).filter(|&n| b & (1 << n) != 0).fold(0u8, |out, n| out | 1 << to[n]);
    let (mut states, mut env, mut persists) = (vec![vec![]; nodes], vec![(0, 0, 0, 0); nodes], vec![vec![]; nodes]);
    for n in 0..nodes {
        let mut s = TwoPhaseState::read_from_bytes(w.state_bytes(n as u8, size)).expect("a state");
        s.votes = bits(s.votes);
        states[to[n] as usize] = s.as_bytes().to_vec();
        let e = w.env(n as u8);
        env[to[n] as usize] = (e.clients_left, e.timers, e.wakes, bits(e.resets));
        persists[to[n] as usize] = w.persists_of(n as u8).map(<[u8]>::to_vec).collect();
    }
    let mut messages: Vec<_> =
        w.messages().iter().map(|m| (to[m.from as usize], to[m.to as usize], m.payload.as_slice().to_vec())).collect();
    messages.sort_by_key(|m| (m.0, m.1));
    let replies = w.replies().map(|(n, b)| (to[n as usize], b.to_vec())).collect();
    (w.budgets_left(), states, env, messages, persists, replies)
}

/// Every permutation of `1..nodes`, node 0 staying.
fn renamings(nodes: u8) -> Vec<Vec<u8>> {
    fn extend(prefix: &mut Vec<u8>, left: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if left.is_empty() {
            out.push(prefix.clone());
        }
        for i in 0..left.len() {
            let n = left.remove(i);
            prefix.push(n);
            extend(prefix, left, out);
            prefix.pop();
            left.insert(i, n);
        }
    }
    let mut out = Vec::new();
    extend(&mut vec![0], &mut (1..nodes).collect(), &mut out);
    out
}

/// The classes of the full state space: worlds with the same least
/// written form under every renaming are one class.
fn classes(model: &Model<TwoPhase>, nodes: u8) -> (usize, usize) {
    let worlds = every_world(model);
    let all = renamings(nodes);
    let classes: BTreeSet<Written> =
        worlds.iter().map(|w| all.iter().map(|to| written(w, to)).min().expect("a renaming")).collect();
    (worlds.len(), classes.len())
}

#[test]
fn the_reduced_count_is_the_number_of_classes() {
    for crashes in [0, 1] {
        let model = two_phase(4, TwoPhaseSettings::default()).crashes(crashes);
        let (worlds, classes) = classes(&model, 4);
        let full = check(&model, &Options { threads: 1, ..Options::default() }).expect("a valid model");
        let reduced = check(&model, &symmetric(bfs())).expect("a valid model");
        assert_eq!(full.distinct_states, worlds as u64, "this file's search finds what BFS finds");
        assert_eq!(reduced.distinct_states, classes as u64, "crashes = {crashes}: one world per class");
        assert!(classes < worlds, "crashes = {crashes}: symmetry reduces ({classes} of {worlds})");
        assert_eq!((full.verdict, reduced.verdict), (Verdict::Pass, Verdict::Pass));
        assert_eq!(reduced.depth, full.depth, "a class is reached first at the depth its worlds are");
        assert_eq!(reduced.search, "bfs with symmetry");
        eprintln!("crashes = {crashes}: {worlds} worlds, {classes} classes");
    }
}

#[test]
fn depth_first_search_under_symmetry_reaches_every_class() {
    let model = two_phase(4, TwoPhaseSettings::default()).crashes(1);
    let reduced = check(&model, &symmetric(bfs())).unwrap();
    let dfs = check(&model, &symmetric(Search::Dfs { depth_max: reduced.depth + 1 })).unwrap();
    assert_eq!(dfs.verdict, Verdict::Pass, "{}", dfs.summary());
    assert_eq!(dfs.distinct_states, reduced.distinct_states);
}

#[test]
fn threads_give_the_same_report_under_symmetry() {
    let settings = TwoPhaseSettings { bug_no_persist_decision: 1, ..TwoPhaseSettings::default() };
    for model in [two_phase(4, TwoPhaseSettings::default()).crashes(1), two_phase(4, settings).crashes(1)] {
        let mut one = check(&model, &symmetric(bfs())).unwrap();
        let mut two = check(&model, &Options { threads: 2, ..symmetric(bfs()) }).unwrap();
        (one.elapsed_s, two.elapsed_s) = (0.0, 0.0);
        assert_eq!(one.to_json(), two.to_json());
    }
}

/// Checks `model` with and without symmetry: the same violation, at the
/// same depth, with a trace of the real model that replays without
/// symmetry. Returns the report under symmetry.
fn found_under_symmetry(model: &Model<TwoPhase>, property: &str) -> Report {
    let full = check(model, &Options { threads: 1, ..Options::default() }).unwrap();
    let reduced = check(model, &symmetric(bfs())).unwrap();
    for r in [&full, &reduced] {
        assert_eq!(r.verdict, Verdict::Violation, "{}", r.summary());
        assert_eq!(r.property.as_deref(), Some(property));
    }
    assert_eq!(reduced.trace.len(), full.trace.len(), "the shortest trace, found under symmetry too");
    assert!(reduced.distinct_states < full.distinct_states);
    let file = reduced.counterexample().expect("a counterexample");
    let again = replay(model, &file, true).expect("the trace replays without symmetry");
    assert_eq!(again.verdict, Verdict::Violation);
    assert_eq!(again.property.as_deref(), Some(property));
    assert_eq!(again.trace, reduced.trace, "the same real worlds");
    reduced
}

#[test]
fn a_planted_bug_is_found_under_symmetry_and_replays_without_it() {
    let settings = TwoPhaseSettings { bug_commit_on_timeout: 1, ..TwoPhaseSettings::default() };
    found_under_symmetry(&two_phase(4, settings), "commit-needs-all-yes");
    let settings = TwoPhaseSettings { bug_no_persist_decision: 1, ..TwoPhaseSettings::default() };
    found_under_symmetry(&two_phase(4, settings).crashes(1), "atomicity");
}

#[test]
fn eventually_holds_or_fails_under_symmetry_as_without() {
    // A no voter (node 1) is not interchangeable; nodes 2 and 3 are.
    let settings = TwoPhaseSettings { no_voter: 1, ..TwoPhaseSettings::default() };
    let model = two_phase(4, settings)
        .eventually("all-committed", |w| (1..w.nodes()).all(|p| w.state(p).decision == decision::COMMIT));
    let r = found_under_symmetry(&model, "all-committed");
    assert_eq!(r.kind, Some(Kind::Eventually));

    // The model's own `all-decided` holds with and without symmetry.
    let model = two_phase(4, TwoPhaseSettings::default()).crashes(1);
    let r = check(&model, &symmetric(bfs())).unwrap();
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.summary());
    assert!(r.never_checked.is_empty(), "terminal worlds were checked");
}

#[test]
fn a_property_that_tells_renamed_worlds_apart_is_an_error() {
    // Node 2 votes yes only after node 1: true of no renaming in general.
    let model = two_phase(4, TwoPhaseSettings::default())
        .always("one-before-two", |w| w.state(1).vote != vote::NONE || w.state(2).vote == vote::NONE);
    let full = check(&model, &Options { threads: 1, ..Options::default() }).unwrap();
    assert_eq!(full.verdict, Verdict::Violation, "the property fails without symmetry");
    let r = check(&model, &symmetric(bfs())).unwrap();
    assert_eq!(r.verdict, Verdict::Error, "{}", r.summary());
    let reason = r.reason.unwrap_or_default();
    assert!(reason.starts_with("symmetry does not hold: property `one-before-two`"), "{reason}");
}

#[test]
fn symmetry_needs_interchangeable_nodes() {
    // A no voter among two participants leaves one yes voter.
    let settings = TwoPhaseSettings { no_voter: 1, ..TwoPhaseSettings::default() };
    let e = check(&two_phase(3, settings), &symmetric(bfs())).unwrap_err();
    assert!(matches!(e, ModelError::NoSymmetry { core: "two-phase", count: 1, nodes: 3 }), "{e}");
    let e = check_with(&cmc_tests::echo(3), &symmetric(bfs()), &mut NoControl).unwrap_err();
    assert!(e.to_string().contains("core `test-echo` declares 0 interchangeable nodes"), "{e}");
}

#[test]
fn a_deadlock_found_under_symmetry_is_a_real_world_without_actions() {
    let model = two_phase(4, TwoPhaseSettings::default());
    let deadlock = |symmetry| Options { deadlock: true, symmetry, threads: 1, ..Options::default() };
    let full = check(&model, &deadlock(false)).unwrap();
    let reduced = check(&model, &deadlock(true)).unwrap();
    for r in [&full, &reduced] {
        assert_eq!(r.verdict, Verdict::Violation, "{}", r.summary());
        assert_eq!(r.property.as_deref(), Some("deadlock"));
    }
    assert_eq!(reduced.trace.len(), full.trace.len());
    let again = replay(&model, &reduced.counterexample().unwrap(), false).unwrap();
    assert_eq!((again.verdict, again.trace), (Verdict::Violation, reduced.trace));
}

/// Two-phase with a renaming that forgets the coordinator's bitmap of yes
/// votes: a core whose declared symmetry does not hold.
struct ForgetfulTwoPhase;

impl cmc::Core for ForgetfulTwoPhase {
    const NAME: &'static str = "test-forgetful-two-phase";
    type State = TwoPhaseState;
    type Settings = TwoPhaseSettings;
    const DURABLE: usize = TwoPhase::DURABLE;
    fn step(
        ctx: &cmc::Context<'_, TwoPhaseSettings>,
        s: &mut TwoPhaseState,
        e: cmc::Event<'_>,
        out: &mut cmc::Effects,
    ) {
        TwoPhase::step(ctx, s, e, out)
    }
    fn apply_persist(ctx: &cmc::Context<'_, TwoPhaseSettings>, s: &mut TwoPhaseState, record: &[u8]) {
        TwoPhase::apply_persist(ctx, s, record)
    }
    fn interchangeable(settings: &TwoPhaseSettings, nodes: u8) -> cmc::NodeSet {
        TwoPhase::interchangeable(settings, nodes)
    }
}

#[test]
fn det_checks_that_swapping_two_nodes_changes_nothing() {
    let det = Options { det: true, ..symmetric(bfs()) };
    let r = check(&two_phase(4, TwoPhaseSettings::default()).crashes(1), &det).unwrap();
    assert_eq!((r.verdict, r.distinct_states), (Verdict::Pass, 22391), "{}", r.summary());

    // A renaming that misses a node number: without --det, a wrong count
    // and a pass (734 classes are right); with it, an error.
    let model = Model::<ForgetfulTwoPhase>::new(TwoPhaseSettings::default()).nodes(4);
    let wrong = check(&model, &symmetric(bfs())).unwrap();
    assert_eq!(wrong.verdict, Verdict::Pass);
    assert_ne!(wrong.distinct_states, 734);
    let r = check(&model, &det).unwrap();
    assert_eq!(r.verdict, Verdict::Error, "{}", r.summary());
    let reason = r.reason.unwrap_or_default();
    assert!(reason.starts_with("symmetry does not hold: swapping nodes "), "{reason}");
    assert!(reason.contains("in a world changes the classes of its successors"), "{reason}");

    // A property that tells renamed worlds apart, before any violation.
    let model = two_phase(4, TwoPhaseSettings::default())
        .always("one-before-two", |w| w.state(1).vote != vote::NONE || w.state(2).vote == vote::NONE);
    let r = check(&model, &det).unwrap();
    let reason = r.reason.unwrap_or_default();
    assert!(reason.contains("changes whether always property `one-before-two` holds"), "{reason}");
}

/// Nodes that count their client requests, and fail on one past `LIMIT`:
/// all alike.
struct Count<const LIMIT: u8>;

impl<const LIMIT: u8> cmc::Core for Count<LIMIT> {
    const NAME: &'static str = "test-count";
    type State = u8;
    type Settings = cmc::NoSettings;
    const DURABLE: usize = 0;
    fn step(_: &cmc::Context<'_, cmc::NoSettings>, count: &mut u8, e: cmc::Event<'_>, _: &mut cmc::Effects) {
        if let cmc::Event::Client { .. } = e {
            assert!(*count < LIMIT, "a client past the limit");
            *count += 1;
        }
    }
    fn interchangeable(_: &cmc::NoSettings, nodes: u8) -> cmc::NodeSet {
        cmc::NodeSet::range(0..nodes)
    }
}

#[test]
fn a_step_that_fails_under_symmetry_is_reported_in_the_real_world() {
    // The search meets the failure in the canonical world, where node 2
    // has had its client ([0, 0, 1] encodes least); the real trace gives
    // node 0 the first client, and the failing action is node 0's.
    let model = Model::<Count<1>>::new(cmc::NoSettings).nodes(3).clients(2);
    let r = check(&model, &symmetric(bfs())).unwrap();
    assert_eq!(r.verdict, Verdict::Error, "{}", r.summary());
    assert!(r.reason.as_deref().unwrap_or_default().contains("a client past the limit"), "{:?}", r.reason);
    let actions: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(actions, ["INIT(0)", "CLIENT(0)"]);
    assert_eq!(r.failed_action.as_deref(), Some("CLIENT(0)"));
    let again = replay(&model, &r.counterexample().expect("an error's file"), false).expect("it replays");
    assert_eq!(again.verdict, Verdict::Error);
}

#[test]
fn five_and_more_interchangeable_nodes_count_one_world_per_multiset() {
    // n nodes each counting 0 to c clients: (c + 1)^n worlds, and a class
    // per multiset of counts, C(n + c, c). From 5 nodes on, canonical
    // worlds are found with twins (nodes whose swap changes nothing).
    for (nodes, clients, classes) in [(3, 2, 10), (5, 2, 21), (6, 2, 28), (7, 1, 8)] {
        let model = Model::<Count<{ u8::MAX }>>::new(cmc::NoSettings).nodes(nodes).clients(clients);
        let full = check(&model, &Options { threads: 1, ..Options::default() }).unwrap();
        assert_eq!(full.distinct_states, u64::from(clients + 1).pow(u32::from(nodes)));
        let r = check(&model, &symmetric(bfs())).unwrap();
        assert_eq!(r.distinct_states, classes, "{nodes} nodes, {clients} clients each");
    }
}

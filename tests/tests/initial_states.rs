//! Any number of initial worlds, counted as TLC counts them (issue 26,
//! item 7): every initial world is generated, each distinct one is
//! distinct, and a trace that starts at any of them is right and replays.
//! A TLA+ port with 524,288 initial states ended with "action position
//! 65536 is beyond the search's limit of 65535" once BFS kept parent links
//! in six bytes; here `ManyRoots` has 2^17 initial worlds, so every search
//! crosses 65,536 of them: BFS on one thread, on two, distributed over two
//! workers, DFS and simulation. The only limit is memory, a cap like any
//! other: `incomplete`, polled among the initial worlds too. The tests
//! of that defect are named after its class (issue 26, class 8, the
//! engine; the replay's exit status is `cmc-runner`'s
//! `class_8_a_replay_passes_...`, and BFS and DFS agreeing on the shared
//! pipe is `process_escapes.rs`' class 1 pipe test).

use std::sync::Arc;

use cmc::{Control, Model, NoControl, Options, Progress, Report, Search, Verdict, check, check_with, replay};
use cmc_tests::{ManyRoots, many_roots};

/// More initial worlds than a 16-bit action position names.
const ROOTS: u32 = 1 << 17;

/// The report without its time, as JSON.
fn json(mut r: Report) -> String {
    r.elapsed_s = 0.0;
    r.to_json()
}

fn options(threads: usize) -> Options {
    Options { threads, ..Options::default() }
}

/// BFS on one thread, then on two threads and distributed over two
/// workers, which must give the one-thread report byte for byte. Returns it.
fn bfs_everywhere(model: Model<ManyRoots>) -> Report {
    let one = check(&model, &options(1)).expect("a valid model");
    let two = check(&model, &options(2)).expect("a valid model");
    assert_eq!(json(two), json(one.clone()), "two threads differ from one");
    let model: Arc<dyn cmc::catalog::DynModel> = Arc::new(model);
    let no_control: cmc_distributed::MakeControl = Arc::new(|| Box::new(NoControl));
    let distributed = cmc_distributed::check(model, &options(1), &cmc_distributed::Cluster::local(2), no_control)
        .expect("the distributed search runs");
    assert_eq!(json(distributed), json(one.clone()), "two distributed workers differ from one thread");
    one
}

fn tokens(r: &Report) -> Vec<&str> {
    r.trace.iter().map(|s| s.action.as_str()).collect()
}

#[test]
fn class_8_more_initial_worlds_than_a_position_names_are_all_counted_as_tlc_counts_them() {
    let r = bfs_everywhere(many_roots(ROOTS));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.summary());
    // Each initial world is distinct and generated; each has one marked
    // successor (new) and that one a successor seen before.
    let n = u64::from(ROOTS);
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (2 * n, 3 * n, 2));
}

#[test]
fn dfs_and_simulation_take_every_initial_world_too() {
    let model = many_roots(ROOTS);
    let r = check(&model, &Options { search: Search::Dfs { depth_max: 3 }, ..options(1) }).unwrap();
    let n = u64::from(ROOTS);
    // (Its depth is 3: from the first root it reaches the second's marked
    // world through the first's.)
    assert_eq!((r.verdict, r.distinct_states), (Verdict::Pass, 2 * n), "{}", r.summary());
    // A walk may start at any initial world: one past 65,535 is reached.
    let model = model.always("below-65536", |w| w.state(0).x < 65_536);
    let walk = Search::Simulate { walks: 20, walk_length: 2, seed: 1 };
    let r = check(&model, &Options { search: walk, ..options(1) }).unwrap();
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.summary());
    let start: u32 = tokens(&r)[0].trim_start_matches("INIT(").trim_end_matches(')').parse().unwrap();
    assert!(start >= 65_536, "{:?}", tokens(&r));
}

/// A world past initial world 65,535 violates: BFS's trace starts at that
/// initial world, the counts stop there, and the counterexample replays.
#[test]
fn class_8_a_violation_reached_from_an_initial_world_past_65535_has_its_trace_and_replays() {
    const BAD: u32 = 100_000;
    let model = || many_roots(ROOTS).always("not-marked-at-bad", |w| !(w.state(0).x == BAD && w.state(0).marked == 1));
    let r = bfs_everywhere(model());
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("not-marked-at-bad")));
    assert_eq!(tokens(&r), ["INIT(100000)", "ACTION(0)"]);
    assert_eq!(r.trace[1].world.nodes[0].state, "ManyRootsState { x: 100000, marked: 1 }");
    // Every initial world, then the marked worlds up to the bad one.
    let seen = u64::from(ROOTS) + u64::from(BAD) + 1;
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (seen, seen, 2));
    let file = r.counterexample().expect("a violation saves a counterexample");
    let replayed = replay(&model(), &file, false).expect("the counterexample fits the model");
    assert!(file.reproduced_by(&replayed), "{}", replayed.to_text());

    // DFS finds it too, through the same initial world.
    let r = check(&model(), &Options { search: Search::Dfs { depth_max: 3 }, ..options(1) }).unwrap();
    assert_eq!((r.verdict, tokens(&r)), (Verdict::Violation, vec!["INIT(100000)", "ACTION(0)"]));
}

#[test]
fn an_initial_world_past_65535_that_violates_is_a_one_step_trace() {
    let model = || many_roots(ROOTS).always("not-70000", |w| w.state(0).x != 70_000);
    let r = bfs_everywhere(model());
    assert_eq!((r.verdict, tokens(&r)), (Verdict::Violation, vec!["INIT(70000)"]));
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (70_001, 70_001, 1));
    let file = r.counterexample().expect("a violation saves a counterexample");
    assert!(file.reproduced_by(&replay(&model(), &file, false).unwrap()));
}

/// Stops at its first poll, as a memory or time cap would.
struct StopAtFirstPoll;

impl Control for StopAtFirstPoll {
    fn poll(&mut self, _: &Progress) -> Option<String> {
        Some("memory_max = 1 reached".to_string())
    }
}

#[test]
fn a_cap_stops_a_search_among_its_initial_worlds_incomplete() {
    // BFS polls every 16,384 variants tried, before the next: the worlds
    // counted are all checked.
    for threads in [1, 2] {
        let r = check_with(&many_roots(ROOTS), &options(threads), &mut StopAtFirstPoll).unwrap();
        assert_eq!(r.verdict, Verdict::Incomplete, "{}", r.summary());
        assert_eq!(r.reason.as_deref(), Some("memory_max = 1 reached"));
        assert_eq!((r.distinct_states, r.generated_states, r.depth), (16_384, 16_384, 1), "{threads} threads");
    }
}

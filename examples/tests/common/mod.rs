//! Checks shared by the example tests: a correct model passes with pinned
//! counts (and again, the same, with every step run twice), and a planted bug
//! is caught, with the expected property, by breadth-first search, by
//! simulation and by replaying the saved counterexample through the catalog.

use cmc::catalog::Overrides;
use cmc::{Core, CounterexampleFile, Model, Options, Report, Search, Verdict, check};

/// BFS passes with exactly these counts, with and without `--det`.
pub fn assert_pass<C: Core>(model: &Model<C>, distinct: u64, generated: u64, depth: u32) {
    let r = check(model, &Options::default()).expect("model is valid");
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (distinct, generated, depth), "{}", r.summary());
    let det = check(model, &Options { det: true, ..Options::default() }).expect("model is valid");
    assert_eq!(det.summary(), r.summary(), "--det changes the outcome");
}

/// A seeded simulation, to be caught by as well.
pub fn simulate(walks: u64, walk_length: u32, seed: u64) -> Search {
    Search::Simulate { walks, walk_length, seed }
}

/// The planted bug in `model` is caught: BFS finds `property` violated with
/// a shortest trace of `trace_len` states, the simulation `sim` finds the
/// same property violated, and the BFS counterexample, saved as a file and
/// read back, replays through the catalog model to the same violation.
/// Returns the BFS report.
pub fn assert_caught<C: Core>(model: &Model<C>, property: &str, trace_len: usize, sim: Search) -> Report {
    let bfs = check(model, &Options::default()).expect("model is valid");
    println!("{}", bfs.to_text());
    assert_eq!(bfs.verdict, Verdict::Violation, "{}", bfs.summary());
    assert_eq!(bfs.property.as_deref(), Some(property), "{}", bfs.summary());
    assert_eq!(bfs.trace.len(), trace_len, "{}", bfs.to_text());

    let walks = check(model, &Options { search: sim, ..Options::default() }).expect("model is valid");
    assert_eq!(walks.verdict, Verdict::Violation, "{}", walks.summary());
    assert_eq!(walks.property.as_deref(), Some(property), "{}", walks.summary());

    let json = bfs.counterexample().expect("a violation has a counterexample").to_json();
    let file = CounterexampleFile::from_json(&json).expect("a counterexample file reads back");
    assert_eq!(file.model.core, C::NAME);
    let entry = cmc_examples::catalog()
        .into_iter()
        .find(|e| e.name == file.model.core)
        .unwrap_or_else(|| panic!("core `{}` is not in the catalog", file.model.core));
    let rebuilt = entry.build(&Overrides::from_identity(&file.model)).expect("the catalog rebuilds the model");
    assert_eq!(rebuilt.identity(), model.identity());
    for det in [false, true] {
        let replay = rebuilt.replay(&file, det).expect("the file replays");
        assert_eq!(replay.verdict, Verdict::Violation, "{}", replay.to_text());
        assert_eq!(replay.property.as_deref(), Some(property));
        assert_eq!(replay.trace.len(), trace_len);
    }
    bfs
}

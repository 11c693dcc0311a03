//! Breadth-first search and simulation on several threads give the
//! one-thread report, byte for byte (issue 14, item 2): counts, verdict,
//! the trace (the shortest, and the same one), witnesses, and where a stop
//! leaves the counts. The model is TwoPhase with N = 7 resource managers (296,448
//! states, levels of up to tens of thousands of worlds), so the parallel
//! search splits levels into many chunks and batches, and what ends the
//! search falls in the middle of one.

use cmc::{Model, NoControl, Options, Report, Search, Settings as _, Verdict, check};
use cmc_examples::two_phase_tla::{TwoPhaseTla, TwoPhaseTlaSettings, model, rm};

fn two_phase(rms: u64) -> Model<TwoPhaseTla> {
    let mut settings = TwoPhaseTlaSettings::default();
    settings.set("rms", rms).expect("rms is a setting");
    model(settings)
}

/// The report, without its elapsed time, and the counterexample file.
fn bytes(mut r: Report) -> (String, Option<String>) {
    r.elapsed_s = 0.0;
    let cex = r.counterexample().map(|c| c.to_json());
    (r.to_json(), cex)
}

/// Checks `model` on 1, 2, 3 and 4 threads; every report must be the
/// one-thread report. Returns it.
fn same_on_every_thread_count<C: cmc::Core>(model: &Model<C>, options: Options) -> Report {
    let one = check(model, &Options { threads: 1, ..options }).expect("a valid model");
    for threads in [2, 3, 4] {
        let r = check(model, &Options { threads, ..options }).expect("a valid model");
        assert_eq!(bytes(r), bytes(one.clone()), "{threads} threads differ from one");
    }
    one
}

fn committed(w: &cmc::View<'_, TwoPhaseTla>) -> usize {
    let n = w.settings().rms as usize;
    w.state(0).rm_state[..n].iter().filter(|&&s| s == rm::COMMITTED).count()
}

#[test]
fn a_pass_counts_tlcs_figures_on_every_thread_count() {
    let r = same_on_every_thread_count(&two_phase(7), Options::default());
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (296_448, 2_744_706, 23));
}

#[test]
fn a_violation_deep_in_a_large_level_has_one_shortest_trace() {
    // Four of seven committed first happens deep, in a level of thousands.
    let m = two_phase(7).always("FewCommitted", |w| committed(w) < 4);
    let r = same_on_every_thread_count(&m, Options::default());
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.property.as_deref(), Some("FewCommitted"));
    assert!(r.distinct_states > 1_000, "the violation is past the first levels: {}", r.distinct_states);
}

#[test]
fn witnesses_are_the_first_in_bfs_order() {
    let m = two_phase(7)
        .sometimes("ThreeCommitted", |w| committed(w) == 3)
        .sometimes("AllCommitted", |w| committed(w) == 7)
        .eventually("Decided", |w| w.state(0).tm_state != 0);
    let r = same_on_every_thread_count(&m, Options::default());
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.summary());
    assert_eq!(r.witnesses.len(), 2);
}

#[test]
fn a_states_max_stop_in_the_middle_of_a_level_counts_as_one_thread() {
    for states_max in [100, 1_000, 123_457] {
        let r =
            same_on_every_thread_count(&two_phase(7), Options { states_max: Some(states_max), ..Options::default() });
        assert_eq!(r.verdict, Verdict::Incomplete);
        assert_eq!(r.distinct_states, states_max);
    }
}

#[test]
fn a_depth_bound_cuts_on_every_thread_count() {
    let r = same_on_every_thread_count(
        &two_phase(7),
        Options { search: Search::Bfs { depth_max: Some(12) }, ..Options::default() },
    );
    assert_eq!(r.verdict, Verdict::Incomplete);
    assert_eq!(r.depth, 12);
}

#[test]
fn a_panicking_property_is_the_same_error_on_every_thread_count() {
    let m = two_phase(7).always("Panics", |w| {
        assert!(committed(w) < 5, "five committed");
        true
    });
    let r = same_on_every_thread_count(&m, Options::default());
    assert_eq!(r.verdict, Verdict::Error);
    assert!(r.reason.as_deref().unwrap_or_default().contains("five committed"), "{}", r.summary());
}

/// The message-passing two-phase commit with four nodes (126,887 states),
/// whose runs end: worlds with no successor, where `eventually` properties
/// and deadlock are checked.
fn message_passing() -> Model<cmc_examples::two_phase::TwoPhase> {
    cmc_examples::two_phase::model(Default::default()).nodes(4)
}

#[test]
fn a_world_with_no_successor_fails_eventually_and_deadlock_in_order() {
    let r = same_on_every_thread_count(&message_passing(), Options::default());
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.summary());
    assert!(r.never_checked.is_empty(), "worlds with no successor were checked");
    let commit = cmc_examples::two_phase::decision::COMMIT;
    let m = message_passing().eventually("Committed", move |w| w.state(0).decision == commit);
    let r = same_on_every_thread_count(&m, Options::default());
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("Committed")));
    let r = same_on_every_thread_count(&message_passing(), Options { deadlock: true, ..Options::default() });
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("deadlock")));
}

#[test]
fn no_control_is_the_default_and_threads_zero_means_every_core() {
    assert_eq!(Options::default().threads, 0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(Options::default().threads_used(), cores);
    let r = cmc::check_with(&two_phase(3), &Options::default(), &mut NoControl).expect("valid");
    assert_eq!((r.distinct_states, r.generated_states), (288, 1_146));
}

#[test]
fn a_simulation_finds_the_same_walk_on_every_thread_count() {
    let sim = |seed| Options { search: Search::Simulate { walks: 300, walk_length: 40, seed }, ..Options::default() };
    // Deep enough that most walks miss it: the first walk that finds it,
    // in walk order, is the one reported.
    let m = two_phase(7).always("FewCommitted", |w| committed(w) < 6).sometimes("TwoCommitted", |w| committed(w) == 2);
    for seed in [1, 2, 3] {
        let r = same_on_every_thread_count(&m, sim(seed));
        assert!(matches!(r.verdict, Verdict::Violation | Verdict::Incomplete), "{}", r.summary());
    }
    let r = same_on_every_thread_count(&message_passing(), sim(5));
    assert_eq!(r.verdict, Verdict::Incomplete, "{}", r.summary());
}

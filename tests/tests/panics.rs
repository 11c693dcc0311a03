//! A panic in a core's `step` or `apply_persist`, or in a property, is the
//! verdict `error` with the trace that led to it, as TLC reports an error in
//! evaluating a specification: in every search, with a counterexample file
//! that replays to the same error. And a counterexample file that does not
//! fit the model (edited, cut) is a replay error naming the step.

use cmc::{
    Context, Core, CounterexampleFile, Effects, Event, Model, Options, ReplayError, Report, Search, Verdict, check,
    replay,
};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

cmc::settings! {
    /// Where `Panicky` panics.
    pub struct PanickySettings {
        /// 0: nowhere; 1: node 1's step on a delivery; 2: node 1's
        /// apply_persist; 3: the property `fine` once node 1 got a message;
        /// 4: node 0's step on Init.
        panic_at: u8 = 0,
    }
}

mod at {
    pub const STEP: u8 = 1;
    pub const PERSIST: u8 = 2;
    pub const PROPERTY: u8 = 3;
    pub const INIT: u8 = 4;
}

/// Node 0 sends `[7]` to node 1, which persists it.
struct Panicky;

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct PanickyState {
    disk: u8,
    got: u8,
}

impl Core for Panicky {
    const NAME: &'static str = "test-panicky";
    type State = PanickyState;
    type Settings = PanickySettings;
    const DURABLE: usize = 1;

    fn step(ctx: &Context<'_, PanickySettings>, s: &mut PanickyState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } if ctx.node == 0 => {
                if ctx.settings.panic_at == at::INIT {
                    panic!("no start today");
                }
                out.send(1, &[7]);
            }
            Event::Deliver { msg: &[m], .. } => {
                if ctx.settings.panic_at == at::STEP {
                    panic!("cannot take message {m}");
                }
                s.got = m;
                out.persist(&[m]);
            }
            _ => {}
        }
    }

    fn apply_persist(ctx: &Context<'_, PanickySettings>, s: &mut PanickyState, record: &[u8]) {
        if ctx.settings.panic_at == at::PERSIST {
            let index = record.len() + 4;
            // An out-of-bounds index, as a real bug would have it.
            s.disk = record[index];
        }
        s.disk = record[0];
    }
}

fn model(panic_at: u8) -> Model<Panicky> {
    Model::<Panicky>::new(PanickySettings { panic_at }).nodes(2).always("fine", move |w| {
        if panic_at == at::PROPERTY && w.state(1).got != 0 {
            panic!("the property cannot read this world");
        }
        true
    })
}

fn searches() -> [Search; 3] {
    [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 10 },
        Search::Simulate { walks: 5, walk_length: 10, seed: 1 },
    ]
}

fn run(panic_at: u8, search: Search) -> Report {
    check(&model(panic_at), &Options { search, ..Options::default() }).expect("valid model")
}

/// (where, the error's text, the failed action, the trace's length).
const CASES: &[(u8, &str, Option<&str>, usize)] = &[
    (
        at::STEP,
        "core `test-panicky` panicked in DELIVER(0->1, 07): cannot take message 7",
        Some("DELIVER(0->1, 07)"),
        1,
    ),
    (at::PERSIST, "core `test-panicky` panicked in FLUSH(1): index out of bounds", Some("FLUSH(1)"), 2),
    (at::PROPERTY, "always property `fine` panicked: the property cannot read this world", None, 2),
    (at::INIT, "core `test-panicky` panicked in INIT(0): no start today", Some("INIT(0)"), 0),
];

#[test]
fn a_panic_is_an_error_with_the_trace_to_it_in_every_search() {
    assert_eq!(run(0, Search::Bfs { depth_max: None }).verdict, Verdict::Pass);
    for search in searches() {
        for &(panic_at, text, failed, length) in CASES {
            let r = run(panic_at, search);
            let what = format!("panic_at {panic_at}, {search:?}: {}", r.to_text());
            assert_eq!(r.verdict, Verdict::Error, "{what}");
            assert!(r.reason.as_deref().unwrap_or_default().starts_with(text), "{what}");
            assert_eq!(r.trace.len(), length, "{what}");
            // The trace's last world is the one the failed step was taken in.
            assert_eq!(r.failed_action.as_deref(), failed, "{what}");
            if let Some(failed) = failed.filter(|_| length > 0) {
                assert!(r.to_text().contains(&format!("{:>4}. {failed}: failed", length + 1)), "{what}");
            }
        }
    }
}

#[test]
fn the_counterexample_of_a_panic_replays_to_the_same_error() {
    for &(panic_at, _, _, length) in CASES.iter().filter(|c| c.3 > 0) {
        let r = run(panic_at, Search::Bfs { depth_max: None });
        let file = r.counterexample().expect("an error with a trace saves a counterexample");
        let file = CounterexampleFile::from_json(&file.to_json()).expect("it reads back");
        assert_eq!(file.steps.len(), length);
        let error = file.error.as_ref().expect("the file records the error");
        assert_eq!(Some(error.message.as_str()), r.reason.as_deref());
        let replayed = replay(&model(panic_at), &file, false).expect("the file fits the model");
        assert!(file.reproduced_by(&replayed), "panic_at {panic_at}: {}", replayed.to_text());
        assert_eq!(replayed.failed_action, r.failed_action);
        // The same trace, with the panic gone, does not reproduce it.
        let fixed = replay(&model(0), &file, false);
        assert!(
            matches!(fixed, Err(ReplayError::Diverged { step, .. }) if step == length),
            "panic_at {panic_at}: {fixed:?}"
        );
    }
}

/// A violation's counterexample, for the tests of files that do not fit.
fn violation() -> (Model<Panicky>, CounterexampleFile) {
    let m = Model::<Panicky>::new(PanickySettings::default()).nodes(2).always("never-gets", |w| w.state(1).got == 0);
    let r = check(&m, &Options::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Violation);
    (m, r.counterexample().unwrap())
}

#[test]
fn an_edited_or_cut_counterexample_does_not_fit_and_says_where() {
    let (m, file) = violation();
    assert_eq!(file.steps.len(), 2);
    assert_eq!(replay(&m, &file, false).unwrap().verdict, Verdict::Violation);

    let mut edited = file.clone();
    edited.steps[1].fingerprint = "0".repeat(32);
    let e = replay(&m, &edited, false).unwrap_err();
    let recorded = format!("but the file recorded {}", "0".repeat(32));
    assert!(matches!(&e, ReplayError::Diverged { step: 2, message } if message.contains(&recorded)), "{e}");
    assert!(e.to_string().starts_with("step 2: DELIVER(0->1, 07) reached fingerprint "), "{e}");

    let mut cut = file.clone();
    cut.steps.pop();
    let e = replay(&m, &cut, false).unwrap_err();
    assert_eq!(e.to_string(), "step 1: the replayed trace does not violate always property `never-gets`");

    let mut wrong = file;
    wrong.steps[1].action = "DELIVER(1->0, 07)".to_string();
    let e = replay(&m, &wrong, false).unwrap_err();
    assert_eq!(e.to_string(), "step 2: DELIVER(1->0, 07) is not enabled in the replayed world");
}

/// A misspelt key anywhere in a counterexample file is an error, not a
/// default: `imeouts` would otherwise read as "timers fire whenever armed".
#[test]
fn a_misspelt_key_anywhere_in_a_counterexample_file_is_an_error() {
    let (_, file) = violation();
    let json: serde_json::Value = serde_json::from_str(&file.to_json()).unwrap();
    for (path, key) in
        [(vec!["model"], "nodez"), (vec!["model", "budgets"], "imeouts"), (vec!["steps", "0"], "fingerprnt")]
    {
        let mut bad = json.clone();
        let mut at = &mut bad;
        for p in &path {
            at = match p.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*p],
            };
        }
        at.as_object_mut().unwrap().insert(key.to_string(), serde_json::json!(1));
        let e = CounterexampleFile::from_json(&bad.to_string()).unwrap_err();
        assert!(e.to_string().contains(&format!("unknown field `{key}`")), "{path:?}: {e}");
    }
}

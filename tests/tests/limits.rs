//! Limits are errors (DESIGN 3.6): for each limit, a model that stays on it
//! runs, and one that crosses it by one gets an error naming the limit.
//! Also the engine's durability and determinism checks.

use cmc::{
    Action, Context, Core, Effects, Engine, Event, Model, ModelError, NoSettings, Options, Report, Search,
    SettingError, SettingKey, Settings, Verdict, World, check,
};
use cmc_tests::{Cheater, CheaterSettings, Nondet, NondetPersist, spam, spammer, variants};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

fn bfs<C: Core>(model: &Model<C>) -> Report {
    check(model, &Options::default()).expect("valid model")
}

/// Asserts an error verdict whose reason names `limit`.
fn assert_error(report: &Report, limit: &str) {
    assert_eq!(report.verdict, Verdict::Error, "{}", report.summary());
    let reason = report.reason.as_deref().unwrap_or_default();
    assert!(reason.contains(limit), "reason `{reason}` does not name `{limit}`");
}

#[test]
fn nodes_max_is_8() {
    assert!(spammer(0, 0, 8).validate().is_ok());
    let err = spammer(0, 0, 9).validate().unwrap_err();
    assert_eq!(err, ModelError::Nodes { nodes: 9 });
    assert!(err.to_string().contains("nodes_max = 8"), "{err}");
    assert!(spammer(0, 0, 0).validate().is_err());
}

#[test]
fn payload_bytes_max_is_32_for_messages_and_persists() {
    assert_eq!(bfs(&spammer(spam::MESSAGE_BYTES, 32, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::MESSAGE_BYTES, 33, 2)), "payload_bytes_max = 32");
    assert_eq!(bfs(&spammer(spam::PERSIST_BYTES, 32, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::PERSIST_BYTES, 33, 2)), "payload_bytes_max = 32");
}

#[test]
fn effects_per_step_is_16() {
    assert_eq!(bfs(&spammer(spam::EFFECTS, 16, 2)).verdict, Verdict::Pass);
    let r = bfs(&spammer(spam::EFFECTS, 17, 2));
    assert_error(&r, "effects_per_step");
    assert!(r.reason.unwrap().contains("core `test-spammer`, node 0, event Init(0)"), "names core, node, event");
}

#[test]
fn timers_max_is_16_and_waiters_max_is_8() {
    assert_eq!(bfs(&spammer(spam::TIMER, 15, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::TIMER, 16, 2)), "timers_max = 16");
    assert_eq!(bfs(&spammer(spam::WAITER, 7, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::WAITER, 8, 2)), "waiters_max = 8");
}

#[test]
fn messages_per_channel_max_is_255() {
    assert_eq!(bfs(&spammer(spam::CHANNEL, 255, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::CHANNEL, 256, 2)), "messages_per_channel_max");
}

#[test]
fn pending_persists_max_is_255() {
    assert_eq!(bfs(&spammer(spam::PERSISTS, 255, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::PERSISTS, 256, 2)), "pending_persists_max");
}

#[test]
fn replies_max_is_255() {
    assert_eq!(bfs(&spammer(spam::REPLIES, 255, 2)).verdict, Verdict::Pass);
    assert_error(&bfs(&spammer(spam::REPLIES, 256, 2)), "replies_max");
}

/// Fires node 0's timer until it has sent everything, then counts actions.
fn actions_after_spreading(model: &Model<cmc_tests::Spammer>) -> Result<usize, cmc::action::TooManyActions> {
    let mut e = Engine::new(model, false).unwrap();
    let mut w = World::empty(e.shape());
    let mut next = World::empty(e.shape());
    assert!(e.initial(0, &mut w).unwrap());
    while w.env(0).timers != 0 {
        assert!(e.apply(&w, &Action::Fire { node: 0, timer: 0 }, &mut next).unwrap());
        std::mem::swap(&mut w, &mut next);
    }
    let mut actions = Vec::new();
    e.actions(&w, &mut actions)?;
    Ok(actions.len())
}

#[test]
fn actions_per_state_is_2048() {
    // Bag mode: each distinct message gives a DELIVER, a DROP while drop
    // budget is left, and a DUP while dup budget is left. 1024 messages with
    // drops make 2048 actions; 683 messages with drops and dups make 2049.
    let exact = spammer(spam::SPREAD, 1024, 8).network(cmc::Network::Bag).drops(1);
    assert_eq!(actions_after_spreading(&exact), Ok(2048));
    let over = spammer(spam::SPREAD, 683, 8).network(cmc::Network::Bag).drops(1).dups(1);
    let err = actions_after_spreading(&over).unwrap_err();
    assert_eq!(err.count, 2049);
    assert!(err.to_string().contains("actions_per_state = 2048"), "{err}");
}

#[test]
fn budget_max_is_255() {
    let mut b = cmc::Budgets::default();
    for key in cmc::Budgets::KEYS {
        assert!(b.set(key, 255).is_ok(), "{key}");
        let err = b.set(key, 256).unwrap_err();
        assert!(err.to_string().contains(&format!("budget `{key}` = 256 (limit budget_max = 255)")), "{err}");
    }
    assert!(b.set("drop", 1).is_err(), "unknown budget keys are errors");
}

/// Settings of 257 bytes, written by hand (the `settings!` macro rejects
/// them at compile time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Big<const N: usize>([u8; N]);

impl<const N: usize> Default for Big<N> {
    fn default() -> Self {
        Big([0; N])
    }
}

impl<const N: usize> Settings for Big<N> {
    const KEYS: &'static [SettingKey] = &[];
    fn set(&mut self, key: &str, _: u64) -> Result<(), SettingError> {
        Err(SettingError::Unknown { key: key.to_string(), known: String::new() })
    }
    fn get(&self, _: &str) -> Option<u64> {
        None
    }
}

struct BigCore<const N: usize>;

impl<const N: usize> Core for BigCore<N> {
    const NAME: &'static str = "test-big-settings";
    type State = [u8; 1];
    type Settings = Big<N>;
    const DURABLE: usize = 0;
    fn step(_: &Context<'_, Big<N>>, _: &mut [u8; 1], _: Event<'_>, _: &mut Effects) {}
}

#[test]
fn settings_bytes_max_is_256() {
    assert!(Model::<BigCore<256>>::new(Big::default()).validate().is_ok());
    let err = Model::<BigCore<257>>::new(Big::default()).validate().unwrap_err();
    assert!(err.to_string().contains("257 bytes (limit settings_bytes_max = 256)"), "{err}");
}

/// A core whose `DURABLE` is `D` bytes of a 2-byte state.
struct Durable<const D: usize>;

impl<const D: usize> Core for Durable<D> {
    const NAME: &'static str = "test-durable";
    type State = [u8; 2];
    type Settings = NoSettings;
    const DURABLE: usize = D;
    fn step(_: &Context<'_, NoSettings>, _: &mut [u8; 2], event: Event<'_>, out: &mut Effects) {
        if let Event::Init { .. } = event {
            out.persist(&[1]);
        }
    }
}

#[test]
fn a_durable_larger_than_the_state_is_a_model_error_naming_core_durable_and_state_size() {
    let whole = Model::<Durable<2>>::new(NoSettings).crashes(1);
    assert!(whole.validate().is_ok());
    assert_eq!(bfs(&whole).verdict, Verdict::Pass, "the whole state may be durable");
    let over = Model::<Durable<3>>::new(NoSettings).crashes(1);
    let err = over.validate().expect_err("DURABLE = 3 of a 2-byte state");
    assert_eq!(
        err.to_string(),
        "core `test-durable` declares DURABLE = 3, but its state is 2 bytes (DURABLE is at most the state's size)"
    );
    let err = check(&over, &Options::default()).expect_err("no search starts");
    assert!(err.to_string().contains("DURABLE = 3"), "{err}");
}

struct ManyActions<const N: u16>;

impl<const N: u16> Core for ManyActions<N> {
    const NAME: &'static str = "test-many-actions";
    type State = [u8; 1];
    type Settings = NoSettings;
    const DURABLE: usize = 0;
    fn step(_: &Context<'_, NoSettings>, _: &mut [u8; 1], event: Event<'_>, out: &mut Effects) {
        if let Event::Action { .. } = event {
            out.not_enabled();
        }
    }
    fn direct_actions(_: &NoSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: N, initial_states: 1 })
    }
}

#[test]
fn direct_actions_max_is_2048() {
    assert_eq!(bfs(&Model::<ManyActions<2048>>::new(NoSettings)).verdict, Verdict::Pass);
    let err = Model::<ManyActions<2049>>::new(NoSettings).validate().unwrap_err();
    assert!(err.to_string().contains("2049 direct actions (limit actions_per_state = 2048)"), "{err}");
}

#[test]
fn a_step_that_changes_durable_bytes_is_an_error_naming_core_node_event() {
    let model = Model::<Cheater>::new(CheaterSettings { mode: 0 }).nodes(2);
    let r = bfs(&model);
    assert_error(&r, "core `test-cheater`, node 1, event Init(0): step changed durable bytes");
}

#[test]
fn apply_persist_that_changes_volatile_bytes_is_an_error() {
    let model = Model::<Cheater>::new(CheaterSettings { mode: 1 }).nodes(1);
    let r = bfs(&model);
    assert_error(&r, "apply_persist changed volatile bytes");
    assert_eq!(r.trace.len(), 1, "the trace leads to the world the failing FLUSH was taken from");
}

#[test]
fn det_catches_a_nondeterministic_core() {
    let model = Model::<Nondet>::new(NoSettings);
    let plain = check(&model, &Options { det: false, ..Options::default() }).unwrap();
    assert_ne!(plain.verdict, Verdict::Error, "without --det the search cannot see it");
    let det = check(&model, &Options { det: true, ..Options::default() }).unwrap();
    assert_error(&det, "non-deterministic");
}

#[test]
fn det_runs_apply_persist_twice_and_catches_a_nondeterministic_one() {
    // `step` is deterministic; only `apply_persist` (on FLUSH and on a
    // crash that keeps the record) reads a global.
    for model in [Model::<NondetPersist>::new(NoSettings), Model::<NondetPersist>::new(NoSettings).crashes(1)] {
        let plain = check(&model, &Options { det: false, ..Options::default() }).unwrap();
        assert_ne!(plain.verdict, Verdict::Error, "without --det the search cannot see it");
        let det = check(&model, &Options { det: true, ..Options::default() }).unwrap();
        assert_error(&det, "core `test-nondet-persist`, node 0, event apply_persist: non-deterministic");
    }
}

#[test]
fn states_max_makes_the_search_incomplete() {
    let model = cmc_examples::two_phase_tla::model(Default::default());
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 50 }] {
        let r = check(&model, &Options { search, states_max: Some(100), ..Options::default() }).unwrap();
        assert_eq!(r.verdict, Verdict::Incomplete, "{search:?}");
        assert_eq!(r.distinct_states, 100);
        assert!(r.reason.unwrap().contains("states_max = 100"));
        let r = check(&model, &Options { search, states_max: Some(288), ..Options::default() }).unwrap();
        assert_eq!(r.verdict, Verdict::Pass, "exactly the state space fits: {search:?}");
    }
}

#[test]
fn bfs_counts_initial_worlds_against_states_max() {
    // Ten initial worlds and nothing else: a cap of 3 stores 3 of them.
    let model = variants(10);
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 5 }] {
        let r = check(&model, &Options { search, states_max: Some(3), ..Options::default() }).unwrap();
        assert_eq!((r.verdict, r.distinct_states, r.depth), (Verdict::Incomplete, 3, 1), "{search:?}: {}", r.summary());
        assert_eq!(r.reason.as_deref(), Some("states_max = 3 reached"), "{search:?}");
        let r = check(&model, &Options { search, states_max: Some(10), ..Options::default() }).unwrap();
        assert_eq!((r.verdict, r.distinct_states), (Verdict::Pass, 10), "exactly the state space fits: {search:?}");
    }
}

#[test]
fn states_max_0_and_depth_max_0_are_incomplete_in_bfs_and_dfs_never_a_pass() {
    // One world with no successor: any search that explores it is complete.
    let model = variants(1);
    assert_eq!(check(&model, &Options::default()).unwrap().verdict, Verdict::Pass);
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 5 }] {
        let r = check(&model, &Options { search, states_max: Some(0), ..Options::default() }).unwrap();
        assert_eq!((r.verdict, r.distinct_states), (Verdict::Incomplete, 0), "{search:?}: {}", r.summary());
        assert_eq!(r.reason.as_deref(), Some("states_max = 0 reached"), "{search:?}");
    }
    for search in [Search::Bfs { depth_max: Some(0) }, Search::Dfs { depth_max: 0 }] {
        let r = check(&model, &Options { search, ..Options::default() }).unwrap();
        assert_eq!((r.verdict, r.distinct_states), (Verdict::Incomplete, 0), "{search:?}: {}", r.summary());
        assert_eq!(r.reason.as_deref(), Some("depth_max = 0 explores nothing (the initial state is depth 1)"));
    }
}

/// A direct-actions core that (wrongly) emits an effect from action 1.
struct DirectWithEffect;

impl Core for DirectWithEffect {
    const NAME: &'static str = "test-direct-effect";
    type State = [u8; 1];
    type Settings = NoSettings;
    const DURABLE: usize = 0;
    fn step(_: &Context<'_, NoSettings>, s: &mut [u8; 1], event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => {}
            Event::Action { index: 0 } if s[0] == 0 => s[0] = 1,
            Event::Action { index: 1 } if s[0] == 1 => out.arm(0),
            _ => out.not_enabled(),
        }
    }
    fn direct_actions(_: &NoSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: 2, initial_states: 1 })
    }
}

#[test]
fn a_direct_actions_core_has_no_effects_and_no_budgets() {
    for det in [false, true] {
        let r = check(&Model::<DirectWithEffect>::new(NoSettings), &Options { det, ..Options::default() }).unwrap();
        assert_error(&r, "node 0, event Action(1): an effect from a direct-actions core");
        assert_eq!(r.trace.len(), 2, "the trace leads to the world the failing action was taken from");
    }
    let err = Model::<DirectWithEffect>::new(NoSettings).crashes(1).validate().unwrap_err();
    assert!(err.to_string().contains("no budgets (its world is one state), but crashes is set"), "{err}");
}

/// A direct-actions core whose action 0 changes its state and then says
/// it is not enabled; action 1 is enabled and changes nothing.
struct DirectChangeThenNotEnabled;

impl Core for DirectChangeThenNotEnabled {
    const NAME: &'static str = "test-direct-change-not-enabled";
    type State = [u8; 1];
    type Settings = NoSettings;
    const DURABLE: usize = 0;
    fn step(_: &Context<'_, NoSettings>, s: &mut [u8; 1], event: Event<'_>, out: &mut Effects) {
        if let Event::Action { index: 0 } = event {
            s[0] = 1;
            out.not_enabled();
        }
    }
    fn direct_actions(_: &NoSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: 2, initial_states: 1 })
    }
}

#[test]
fn a_direct_action_that_changes_its_state_then_not_enabled_is_an_error_under_det() {
    // The fast loop steps action 1 from the bytes action 0 left, so only a
    // step taken one at a time sees it: `--det`, and simulation.
    let model = Model::<DirectChangeThenNotEnabled>::new(NoSettings);
    let r = check(&model, &Options { det: true, ..Options::default() }).unwrap();
    assert_error(
        &r,
        "core `test-direct-change-not-enabled`, node 0, event Action(0): not_enabled() after changing the state",
    );
    let walk = Search::Simulate { walks: 1, walk_length: 1, seed: 1 };
    let r = check(&model, &Options { search: walk, ..Options::default() }).unwrap();
    assert_error(&r, "event Action(0): not_enabled() after changing the state");
}

/// A direct-actions core whose action 0 emits an effect and then says it
/// is not enabled; with `INITS` = 2, `Init` of variant 1 does the same.
struct DirectEffectThenNotEnabled<const INITS: u32>;

impl<const INITS: u32> Core for DirectEffectThenNotEnabled<INITS> {
    const NAME: &'static str = "test-direct-effect-not-enabled";
    type State = [u8; 1];
    type Settings = NoSettings;
    const DURABLE: usize = 0;
    fn step(_: &Context<'_, NoSettings>, _: &mut [u8; 1], event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { variant: 0 } => {}
            Event::Init { .. } | Event::Action { index: 0 } => {
                out.reply(&[1]);
                out.not_enabled();
            }
            _ => out.not_enabled(),
        }
    }
    fn direct_actions(_: &NoSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: 2, initial_states: INITS })
    }
}

#[test]
fn a_direct_action_that_emits_an_effect_then_not_enabled_is_an_error_naming_core_and_action() {
    for det in [false, true] {
        let options = Options { det, ..Options::default() };
        let r = check(&Model::<DirectEffectThenNotEnabled<1>>::new(NoSettings), &options).unwrap();
        assert_error(
            &r,
            "core `test-direct-effect-not-enabled`, node 0, event Action(0): an effect, then not_enabled()",
        );
        assert_eq!(r.trace.len(), 1, "the trace leads to the world the failing action was taken from");
        let r = check(&Model::<DirectEffectThenNotEnabled<2>>::new(NoSettings), &options).unwrap();
        assert_error(&r, "core `test-direct-effect-not-enabled`, node 0, event Init(1): an effect, then not_enabled()");
    }
}

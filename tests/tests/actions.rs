//! One test per action rule of the manual and DESIGN 3.5, each driving the
//! engine by hand: which actions a world enables (computed from the world
//! alone) and what taking one does.

use cmc::{Action, Core, Engine, Model, Network, World};
use cmc_tests::{Disk, Echo, TimerWake, echo};
use zerocopy::FromBytes;

/// The initial world of `model` and an engine for it.
fn start<C: Core>(model: &Model<C>) -> (Engine<'_, C>, World) {
    let mut engine = Engine::new(model, true).expect("valid model");
    let mut world = World::empty(engine.shape());
    assert!(engine.initial(0, &mut world).expect("init"));
    (engine, world)
}

/// The tokens of the actions enabled in `world`.
fn actions<C: Core>(engine: &Engine<'_, C>, world: &World) -> Vec<String> {
    let mut out = Vec::new();
    engine.actions(world, &mut out).expect("within limits");
    out.iter().map(|a| a.to_string()).collect()
}

/// Takes the enabled action whose token is `token`.
fn take<C: Core>(engine: &mut Engine<'_, C>, world: &World, token: &str) -> World {
    let enabled = actions(engine, world);
    assert!(enabled.iter().any(|a| a == token), "{token} not enabled; enabled: {enabled:?}");
    let action: Action = token.parse().expect("token parses");
    let mut next = World::empty(engine.shape());
    assert!(engine.apply(world, &action, &mut next).expect("step ok"));
    next
}

fn state<C: Core>(world: &World, node: u8) -> C::State {
    C::State::read_from_bytes(world.state_bytes(node, std::mem::size_of::<C::State>())).unwrap()
}

#[test]
fn fifo_delivers_only_the_head_of_a_channel() {
    let model = echo(2);
    let (mut e, w) = start(&model);
    assert_eq!(actions(&e, &w), ["DELIVER(0->1, 01)"]);
    let w = take(&mut e, &w, "DELIVER(0->1, 01)");
    assert_eq!(state::<Echo>(&w, 1).got[..1], [1]);
    assert_eq!(actions(&e, &w), ["DELIVER(0->1, 02)"]);
}

#[test]
fn bag_delivers_any_distinct_message() {
    let model = echo(2).network(Network::Bag);
    let (mut e, w) = start(&model);
    assert_eq!(actions(&e, &w), ["DELIVER(0->1, 01)", "DELIVER(0->1, 02)"]);
    let w = take(&mut e, &w, "DELIVER(0->1, 02)");
    assert_eq!(state::<Echo>(&w, 1).got[..1], [2]);
    assert_eq!(w.messages().len(), 1);
}

#[test]
fn fifo_drop_loses_the_head_and_resets_the_connection_both_ways() {
    let mut model = echo(2).drops(1);
    model.settings.reply = 1;
    let (mut e, w) = start(&model);
    assert_eq!(actions(&e, &w), ["DELIVER(0->1, 01)", "DELIVER(1->0, 80)", "DROP(0->1, 01)", "DROP(1->0, 80)"]);
    let w = take(&mut e, &w, "DROP(0->1, 01)");
    assert!(w.messages().is_empty(), "both directions between 0 and 1 are emptied");
    assert_eq!(w.env(0).resets, 1 << 1);
    assert_eq!(w.env(1).resets, 1 << 0);
    assert_eq!(w.budgets_left().0, 0, "drop budget spent");
    assert_eq!(actions(&e, &w), ["RESET(0, 1)", "RESET(1, 0)"], "no DROP without budget");
    let w = take(&mut e, &w, "RESET(1, 0)");
    assert_eq!(state::<Echo>(&w, 1).resets, 1 << 0, "step got Reset{{peer: 0}}");
    assert_eq!(w.env(1).resets, 0, "reset cleared");
    assert_eq!(actions(&e, &w), ["RESET(0, 1)"]);
}

#[test]
fn bag_drop_removes_one_copy_and_dup_adds_one() {
    let model = echo(1).network(Network::Bag).drops(1).dups(1);
    let (mut e, w) = start(&model);
    assert_eq!(actions(&e, &w), ["DELIVER(0->1, 01)", "DROP(0->1, 01)", "DUP(0->1, 01)"]);
    let w2 = take(&mut e, &w, "DUP(0->1, 01)");
    assert_eq!(w2.messages().len(), 2);
    assert_eq!(w2.budgets_left().1, 0);
    assert_eq!(actions(&e, &w2), ["DELIVER(0->1, 01)", "DROP(0->1, 01)"], "copies are one distinct message");
    let w3 = take(&mut e, &w2, "DROP(0->1, 01)");
    assert_eq!(w3.messages().len(), 1, "a bag drop removes one copy");
    assert_eq!(w3.env(0).resets | w3.env(1).resets, 0, "a bag drop resets nothing");
}

#[test]
fn dup_is_never_enabled_in_fifo_mode() {
    let model = echo(1).dups(1);
    assert!(Engine::new(&model, false).is_err(), "a dup budget with FIFO is rejected");
    let model = echo(1);
    let (e, w) = start(&model);
    assert!(actions(&e, &w).iter().all(|a| !a.starts_with("DUP")));
}

#[test]
fn arming_twice_is_one_timer_and_cancel_disarms() {
    let model = Model::<TimerWake>::new(cmc::NoSettings);
    let (mut e, w) = start(&model);
    assert_eq!(w.env(0).timers, 1 << 3);
    assert_eq!(actions(&e, &w), ["FIRE(0, 3)", "WAKE(0, 2)"]);
    let w = take(&mut e, &w, "FIRE(0, 3)");
    assert_eq!(w.env(0).timers, 0, "a fired timer is disarmed");
    assert_eq!(state::<TimerWake>(&w, 0).fired, [1 << 3, 0]);
}

#[test]
fn a_wake_pending_twice_stays_one_wake() {
    let model = Model::<TimerWake>::new(cmc::NoSettings);
    let (mut e, w) = start(&model);
    assert_eq!(w.env(0).wakes, 1 << 2);
    let w = take(&mut e, &w, "WAKE(0, 2)");
    assert_eq!(w.env(0).wakes, 0);
    assert_eq!(state::<TimerWake>(&w, 0).woken, 1 << 2);
    assert_eq!(actions(&e, &w), ["FIRE(0, 3)"], "exactly one wake was pending");
}

#[test]
fn timeouts_budget_bounds_firings() {
    let model = Model::<TimerWake>::new(cmc::NoSettings).timeouts(0);
    let (e, w) = start(&model);
    assert_eq!(actions(&e, &w), ["WAKE(0, 2)"], "no FIRE without timeout budget");
}

#[test]
fn flush_applies_the_oldest_persist_then_steps_flushed() {
    let model = Model::<Disk>::new(cmc::NoSettings).nodes(2);
    let (mut e, w) = start(&model);
    assert_eq!(w.persists_of(0).collect::<Vec<_>>(), [[1], [2], [3]]);
    let w = take(&mut e, &w, "FLUSH(0)");
    let s = state::<Disk>(&w, 0);
    assert_eq!((s.log_len, s.log[0], s.flushed), (1, 1, 1));
    assert_eq!(w.persists_of(0).collect::<Vec<_>>(), [[2], [3]]);
}

#[test]
fn crash_keeps_exactly_j_persists_and_clears_the_rest() {
    let model = Model::<Disk>::new(cmc::NoSettings).nodes(2).crashes(1);
    let (mut e, w) = start(&model);
    let enabled = actions(&e, &w);
    for j in 0..=3 {
        assert!(enabled.contains(&format!("CRASH(0, {j})")), "CRASH(0, {j}) in {enabled:?}");
    }
    assert!(!enabled.contains(&"CRASH(0, 4)".to_string()));
    assert!(enabled.contains(&"CRASH(1, 0)".to_string()) && !enabled.contains(&"CRASH(1, 1)".to_string()));
    for j in 0..=3u8 {
        let c = take(&mut e, &w, &format!("CRASH(0, {j})"));
        let s = state::<Disk>(&c, 0);
        assert_eq!(s.log_len, j, "CRASH(0, {j}) keeps exactly {j} persists");
        assert_eq!(&s.log[..j as usize], &[1, 2, 3][..j as usize], "the oldest ones, in order");
        assert_eq!(s.flushed, 0, "volatile bytes are zeroed (Flushed was not delivered)");
        assert_eq!(s.restarts, 1, "step got Restart");
        assert_eq!(c.persists_of(0).count(), 0, "remaining persists are lost");
        assert_eq!(c.env(0).timers, 0, "timers cleared");
        assert!(c.messages().is_empty(), "every channel to and from node 0 is emptied");
        assert_eq!(c.env(1).resets, 1 << 0, "the peer has a reset pending");
        assert_eq!(c.budgets_left().2, 0, "crash budget spent");
    }
}

#[test]
fn client_requests_count_down_and_replies_go_to_the_ghost_log() {
    let model = Model::<Disk>::new(cmc::NoSettings).nodes(2).clients(2);
    let (mut e, w) = start(&model);
    assert!(actions(&e, &w).contains(&"CLIENT(1)".to_string()));
    let w = take(&mut e, &w, "CLIENT(1)");
    let w = take(&mut e, &w, "CLIENT(1)");
    assert_eq!(w.env(1).clients_left, 0);
    assert!(!actions(&e, &w).contains(&"CLIENT(1)".to_string()), "budget spent");
    let log: Vec<(u8, Vec<u8>)> = w.replies().map(|(n, b)| (n, b.to_vec())).collect();
    assert_eq!(log, [(1, vec![1, 0]), (1, vec![1, 1])], "indices 0 and 1, with the node's id");
}

#[test]
fn actions_are_listed_in_the_documented_order() {
    let model = Model::<Disk>::new(cmc::NoSettings).nodes(2).drops(1).clients(1).crashes(1);
    let (e, w) = start(&model);
    assert_eq!(
        actions(&e, &w),
        [
            "DELIVER(0->1, 09)",
            "DELIVER(1->0, 08)",
            "DROP(0->1, 09)",
            "DROP(1->0, 08)",
            "FIRE(0, 0)",
            "FLUSH(0)",
            "CLIENT(0)",
            "CLIENT(1)",
            "CRASH(0, 0)",
            "CRASH(0, 1)",
            "CRASH(0, 2)",
            "CRASH(0, 3)",
            "CRASH(1, 0)",
        ]
    );
}

#[test]
fn action_tokens_round_trip() {
    for t in [
        "INIT(0)",
        "DELIVER(0->1, 0a0b)",
        "DROP(2->1, -)",
        "DUP(1->0, ff)",
        "FIRE(1, 15)",
        "FLUSH(3)",
        "WAKE(0, 7)",
        "CLIENT(2)",
        "CRASH(1, 2)",
        "RESET(0, 1)",
        "ACTION(2047)",
    ] {
        let a: Action = t.parse().unwrap();
        assert_eq!(a.to_string(), t);
    }
    assert!("DELIVER(0-1, 00)".parse::<Action>().is_err());
    assert!("FIRE(0)".parse::<Action>().is_err());
}

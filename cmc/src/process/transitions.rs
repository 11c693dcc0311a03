//! The transition cache: what an action did to the world, kept so that the
//! same action on the same node state, in the same surroundings, needs no
//! process at all.
//!
//! An action answers one node's process (or, for CRASH, starts a new life
//! of it) and that process runs to quiescence. What it can read of the
//! world is its own node part, the clock, the other nodes' lives and the
//! connections it has an end of ([`ProcessWorld::encode_local`]), whether
//! crash budget is left (which decides whether it stops at crash points),
//! the thread switches left (with any left after the action's own, a node
//! with threads stops where its next thread is a choice, and then whether
//! drops and timeouts are left decides whether the world may answer a
//! waiting thread first), plus two totals checked against limits; and what
//! it changes is the same node
//! part, those connections, the clock, the budgets the action spends and
//! the ghost log, which it only appends to. A node's process at
//! quiescence is determined by its node part, the premise the snapshot
//! store is built on (a node's reported state is complete), so the same
//! action on the same local encoding changes the world the same way. The
//! cache keeps that change per (action, local encoding) and the engine
//! applies it to a world instead of forking a process, when the node
//! state it leads to has a snapshot kept (or the node exited), so that the
//! new world's checkpoint is whole.
//!
//! Each change is recorded from a real run and checked before it is kept:
//! applying it to the world it was recorded from must give exactly the
//! world the run made, so a run that changed another node's part or a
//! connection its node has no end of, or did more to the ghost log than
//! append, is not kept. The two
//! limit totals are checked again when the change is applied elsewhere
//! (messages in flight at their peak during the run, replies at the end);
//! where a limit would be crossed the cache answers nothing, and the run
//! that follows reports the limit. The cache changes no count and no
//! verdict: only which processes are forked.
//!
//! It is bounded by `transitions_max` entries in two generations: when the
//! younger fills half of it, it becomes the older and the older is
//! forgotten; a hit in the older moves the entry to the younger.

use std::collections::HashMap;
use std::mem;

use super::action::ProcessAction;
use super::limits;
use super::world::{Conn, Label, NodeWorld, ProcessWorld};

/// Default of `transitions_max`: each entry is its key (a node part and
/// the node's connections, a few hundred bytes) and the change (as much
/// again), so 65,536 take some tens of MiB at most.
pub const TRANSITIONS_MAX_DEFAULT: usize = 65_536;

/// What one action did to the part of the world its node can reach.
struct Transition {
    /// The node's part afterwards.
    node: NodeWorld,
    /// Every connection with an end at the node, afterwards.
    conns: Vec<(Label, Conn)>,
    /// Replies appended to the ghost log.
    replies: Vec<(u8, Vec<u8>)>,
    clock: super::world::Millis,
    clock_reads: u32,
    /// Budgets spent: crashes, drops, timeouts, thread switches.
    spent: [u8; 4],
    /// The most messages in flight when the run checked the limit, less
    /// those in flight before it; `None` if it never checked.
    in_flight_peak: Option<isize>,
}

impl Transition {
    /// The world `from` with this change made, or `None` where it would
    /// cross a limit or spend a budget not left.
    fn apply(&self, from: &ProcessWorld, n: u8) -> Option<ProcessWorld> {
        if from.replies.len() + self.replies.len() > limits::REPLIES_MAX {
            return None;
        }
        if let Some(peak) = self.in_flight_peak
            && from.in_flight() as isize + peak >= limits::MESSAGES_IN_FLIGHT_MAX as isize
        {
            return None;
        }
        let mut w = from.clone();
        // Any action is after the start.
        w.start_choices.clear();
        w.crashes = w.crashes.checked_sub(self.spent[0])?;
        w.drops = w.drops.checked_sub(self.spent[1])?;
        w.timeouts = w.timeouts.checked_sub(self.spent[2])?;
        if self.spent[3] > 0 {
            w.thread_switches = Some(w.thread_switches?.checked_sub(self.spent[3])?);
        }
        w.clock = self.clock;
        w.clock_reads = self.clock_reads;
        w.nodes[n as usize] = self.node.clone();
        w.conns.retain(|l, c| !ProcessWorld::involves(n, l, c));
        w.conns.extend(self.conns.iter().cloned());
        w.replies.extend(self.replies.iter().cloned());
        // What the change did to the other nodes' epoll ready lists, as
        // `Supervisor::apply` reads it after the action.
        w.sync_ready_lists();
        Some(w)
    }
}

/// Changes made by actions, by action and local encoding.
pub struct Transitions {
    young: HashMap<Vec<u8>, Transition>,
    old: HashMap<Vec<u8>, Transition>,
    transitions_max: usize,
    key: Vec<u8>,
}

impl Transitions {
    /// An empty cache of at most `transitions_max` changes (0: it keeps
    /// none); once half of them are new since the last turn, the older
    /// half goes, except those used again.
    pub fn new(transitions_max: usize) -> Transitions {
        Transitions { young: HashMap::new(), old: HashMap::new(), transitions_max, key: Vec::new() }
    }

    /// Whether changes are kept at all (`transitions_max` > 0).
    pub fn enabled(&self) -> bool {
        self.transitions_max > 0
    }

    fn make_key(&mut self, from: &ProcessWorld, n: u8, action: &ProcessAction) {
        from.encode_local(n, &mut self.key);
        // Whether crash budget is left once the action has spent its own
        // (a CRASH spends one before the new life runs): with it, a node
        // stops at crash points (`Config::crash_points`), so the same
        // local state runs to another world.
        let spent = matches!(action, ProcessAction::Crash { .. }) as u8;
        self.key.push((from.crashes > spent) as u8);
        // The thread switches left: with any left once the action has
        // spent its own (a SWITCH, or the world's answer to a waiting
        // thread at a choice, spends one), a node with threads is held
        // where its next thread is a choice, and where the world may
        // answer a waiting one first, which reads whether drops and
        // timeouts are left.
        let switches = from.thread_switches.unwrap_or(0);
        self.key.push(switches);
        if switches > 0 {
            self.key.extend([(from.drops > 0) as u8, (from.timeouts > 0) as u8]);
        }
        let token = action.to_string();
        self.key.extend_from_slice(token.as_bytes());
        // The token's length last, so the key says where the token starts.
        self.key.extend_from_slice(&(token.len() as u32).to_le_bytes());
    }

    /// The world `action` makes of `from`, if a change recorded for node
    /// `n` in the same local state applies.
    pub fn lookup(&mut self, from: &ProcessWorld, n: u8, action: &ProcessAction) -> Option<ProcessWorld> {
        if !self.enabled() {
            return None;
        }
        self.make_key(from, n, action);
        if let Some(t) = self.young.get(&self.key) {
            return t.apply(from, n);
        }
        let (key, t) = self.old.remove_entry(&self.key)?;
        let world = t.apply(from, n);
        self.insert(key, t);
        world
    }

    /// Keeps what `action` did to node `n`'s surroundings, going from
    /// `before` to `after` in a real run in which the messages in flight
    /// were at most `in_flight_peak` when checked against their limit.
    /// Keeps nothing if the change reached beyond them.
    pub fn record(
        &mut self,
        before: &ProcessWorld,
        after: &ProcessWorld,
        n: u8,
        action: &ProcessAction,
        in_flight_peak: Option<usize>,
    ) {
        if !self.enabled() {
            return;
        }
        let Some(t) = change(before, after, n, in_flight_peak) else { return };
        // Asserted in pairs: the change, applied to the world it was
        // recorded from, must give the world the run made. This is what
        // keeps out a run that changed another node's part or a connection
        // it has no end of, or rewrote the ghost log.
        if t.apply(before, n).as_ref() != Some(after) {
            return;
        }
        self.make_key(before, n, action);
        let key = self.key.clone();
        self.insert(key, t);
    }

    fn insert(&mut self, key: Vec<u8>, t: Transition) {
        if self.young.len() >= (self.transitions_max / 2).max(1) {
            self.old = mem::take(&mut self.young);
            if self.transitions_max == 1 {
                self.old.clear();
            }
        }
        self.young.insert(key, t);
    }
}

/// The change from `before` to `after` as a [`Transition`] of node `n`,
/// as if nothing outside `n`'s surroundings changed (`record` checks that
/// it did not); `None` if the ghost log shrank or a budget grew.
fn change(before: &ProcessWorld, after: &ProcessWorld, n: u8, in_flight_peak: Option<usize>) -> Option<Transition> {
    let spent = [
        before.crashes.checked_sub(after.crashes)?,
        before.drops.checked_sub(after.drops)?,
        before.timeouts.checked_sub(after.timeouts)?,
        before.thread_switches.unwrap_or(0).checked_sub(after.thread_switches.unwrap_or(0))?,
    ];
    Some(Transition {
        node: after.nodes[n as usize].clone(),
        conns: after
            .conns
            .iter()
            .filter(|(l, c)| ProcessWorld::involves(n, l, c))
            .map(|(l, c)| (*l, c.clone()))
            .collect(),
        replies: after.replies.get(before.replies.len()..)?.to_vec(),
        clock: after.clock,
        clock_reads: after.clock_reads,
        spent,
        in_flight_peak: in_flight_peak.map(|p| p as isize - before.in_flight() as isize),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Budgets;
    use crate::process::world::{ConnKind, End, Life};

    fn label(node: u8, k: u8) -> Label {
        Label { kind: ConnKind::Node, node, k }
    }

    fn conn(target: u8, to_target: &[&[u8]]) -> Conn {
        let mut c = Conn::new(target, End::Open, End::Open);
        c.to_target = to_target.iter().map(|m| m.to_vec()).collect();
        c
    }

    /// Three nodes: node 0 has dialled node 1 (connection 0.0, one message
    /// on it), node 1 has dialled node 2 (1.0, `elsewhere` on it).
    fn world(elsewhere: &[&[u8]]) -> ProcessWorld {
        let mut w =
            ProcessWorld::new(3, &Budgets { crashes: 1, drops: 1, timeouts: 1, clients: 0, ..Default::default() });
        w.conns.insert(label(0, 0), conn(1, &[b"a"]));
        w.conns.insert(label(1, 0), conn(2, elsewhere));
        w
    }

    /// Node 1 took the message on 0.0, wrote a state and an answer back,
    /// and a TIMEOUT's second passed.
    fn after_node_1(before: &ProcessWorld) -> ProcessWorld {
        let mut w = before.clone();
        w.timeouts -= 1;
        w.clock += 1;
        w.nodes[1].state = b"got a".to_vec();
        let c = w.conns.get_mut(&label(0, 0)).unwrap();
        c.to_target.clear();
        c.to_dialer.push_back(b"ok".to_vec());
        w.replies.push((1, b"r".to_vec()));
        w
    }

    const ACTION: ProcessAction = ProcessAction::Timeout { node: 1, thread: None };

    #[test]
    fn a_change_applies_in_another_world_with_the_same_surroundings() {
        let mut cache = Transitions::new(16);
        let before = world(&[]);
        cache.record(&before, &after_node_1(&before), 1, &ACTION, Some(1));
        // Node 2's connection from node 1 is node 1's too: a different
        // queue there is a different key.
        assert_eq!(cache.lookup(&world(&[b"x"]), 1, &ACTION), None);
        // Node 0 and the connection it has no end of may differ.
        let mut elsewhere = before.clone();
        elsewhere.nodes[2].state = b"other".to_vec();
        elsewhere.replies.push((2, b"earlier".to_vec()));
        let got = cache.lookup(&elsewhere, 1, &ACTION);
        assert_eq!(got, Some(after_node_1(&elsewhere)));
        // Another action, another node, another clock or another life
        // elsewhere: another key.
        assert_eq!(cache.lookup(&before, 1, &ProcessAction::Crash { node: 1, keep: None }), None);
        assert_eq!(cache.lookup(&before, 0, &ProcessAction::Timeout { node: 0, thread: None }), None);
        let mut later = before.clone();
        later.clock = 7;
        assert_eq!(cache.lookup(&later, 1, &ACTION), None);
        let mut gone = before.clone();
        gone.nodes[2].life = Life::Exited(0);
        assert_eq!(cache.lookup(&gone, 1, &ACTION), None);
    }

    #[test]
    fn a_change_beyond_the_node_is_not_kept() {
        let mut cache = Transitions::new(16);
        let before = world(&[]);
        let mut after = after_node_1(&before);
        after.nodes[2].dials = 1;
        cache.record(&before, &after, 1, &ACTION, None);
        assert_eq!(cache.lookup(&before, 1, &ACTION), None, "another node's part changed");
        let mut after = after_node_1(&before);
        after.conns.insert(label(2, 0), conn(0, &[]));
        cache.record(&before, &after, 1, &ACTION, None);
        assert_eq!(cache.lookup(&before, 1, &ACTION), None, "a connection between nodes 2 and 0 appeared");
        let mut after = after_node_1(&before);
        after.replies.insert(0, (0, b"rewritten".to_vec()));
        let mut logged = before.clone();
        logged.replies.push((0, b"r0".to_vec()));
        cache.record(&logged, &after, 1, &ACTION, None);
        assert_eq!(cache.lookup(&logged, 1, &ACTION), None, "the ghost log was not only appended to");
    }

    /// A run that checked the in-flight limit with k messages in flight
    /// would cross it where others have put 128 - k more elsewhere: the
    /// cache answers nothing there, so the run is made and reports it.
    #[test]
    fn a_change_that_would_cross_a_limit_elsewhere_answers_nothing() {
        let mut cache = Transitions::new(16);
        let before = world(&[]);
        // One message in flight when the run checked the limit, as before.
        cache.record(&before, &after_node_1(&before), 1, &ACTION, Some(1));
        let mut crowded = before.clone();
        crowded.nodes[0].dials = 1;
        crowded.conns.insert(label(0, 1), conn(2, &[]));
        let fill = |w: &mut ProcessWorld, k: usize| {
            w.conns.get_mut(&label(0, 1)).unwrap().to_target = vec![b"m".to_vec(); k].into();
        };
        fill(&mut crowded, limits::MESSAGES_IN_FLIGHT_MAX - 2);
        assert!(cache.lookup(&crowded, 1, &ACTION).is_some(), "one below the limit when checked");
        fill(&mut crowded, limits::MESSAGES_IN_FLIGHT_MAX - 1);
        assert_eq!(cache.lookup(&crowded, 1, &ACTION), None, "at the limit when checked");
        let mut replied = before.clone();
        replied.replies = vec![(2, b"r".to_vec()); limits::REPLIES_MAX - 1];
        assert!(cache.lookup(&replied, 1, &ACTION).is_some(), "the last reply fits");
        replied.replies.push((2, b"r".to_vec()));
        assert_eq!(cache.lookup(&replied, 1, &ACTION), None, "one reply too many");
    }

    /// A run reads whether thread switches are left (a node with threads
    /// is held where its next thread is a choice only then), and a SWITCH
    /// spends one: a change recorded with a switch left does not answer
    /// where none is, and a SWITCH's change spends one where it applies.
    #[test]
    fn thread_switches_left_are_part_of_the_key_and_a_switch_spends_one() {
        let mut cache = Transitions::new(16);
        let mut before = world(&[]);
        before.thread_switches = Some(1);
        cache.record(&before, &after_node_1(&before), 1, &ACTION, None);
        let mut none_left = before.clone();
        none_left.thread_switches = Some(0);
        assert_eq!(cache.lookup(&none_left, 1, &ACTION), None, "recorded with a switch left");
        let switch = ProcessAction::Switch { node: 1, thread: 1 };
        let mut after = before.clone();
        after.thread_switches = Some(0);
        after.nodes[1].state = b"switched".to_vec();
        cache.record(&before, &after, 1, &switch, None);
        assert_eq!(cache.lookup(&before, 1, &switch), Some(after.clone()), "the SWITCH spent its switch");
        let mut two_left = before.clone();
        two_left.thread_switches = Some(2);
        assert_eq!(cache.lookup(&two_left, 1, &switch), None, "a switch left after it: another key");
        // The world's answer to a waiting thread at a choice spends one
        // too: recorded with one left, it does not answer with two.
        let answer = ProcessAction::Timeout { node: 1, thread: Some(2) };
        cache.record(&before, &after, 1, &answer, None);
        assert_eq!(cache.lookup(&two_left, 1, &answer), None, "recorded where it spent the last switch");
    }

    #[test]
    fn the_cache_keeps_at_most_its_bound() {
        let mut cache = Transitions::new(4);
        let mut worlds = Vec::new();
        for clock in 0..6 {
            let mut before = world(&[]);
            before.clock = clock;
            cache.record(&before, &after_node_1(&before), 1, &ACTION, None);
            worlds.push(before);
            assert!(cache.young.len() + cache.old.len() <= 4);
        }
        // The oldest are forgotten, the newest kept.
        assert_eq!(cache.lookup(&worlds[0], 1, &ACTION), None);
        assert!(cache.lookup(&worlds[5], 1, &ACTION).is_some());
        let mut off = Transitions::new(0);
        off.record(&worlds[0], &after_node_1(&worlds[0]), 1, &ACTION, None);
        assert_eq!(off.lookup(&worlds[0], 1, &ACTION), None);
    }
}

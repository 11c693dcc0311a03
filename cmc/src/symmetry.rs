//! Symmetry reduction over node numbers (TLC's `SYMMETRY`, Stateright's
//! symmetry): a core that treats some of its nodes alike declares them
//! ([`Core::interchangeable`]) and says where node numbers hide in its
//! state and payloads ([`Core::rename_state`], [`Core::rename_payload`]).
//! Two worlds that differ only by a renaming of those nodes then have the
//! same futures, up to the same renaming, and a search under
//! [`Options::symmetry`](crate::Options::symmetry) keeps one of them: the
//! *canonical* world, whose encoding is the least of all its renamings.
//!
//! This module renames worlds and picks the canonical one. It does not
//! search: `search::explore` stores canonical worlds, and BFS turns a path
//! through canonical worlds back into a real trace (`search::bfs::store`).
//!
//! The engine renames what it owns: the order of node states and their
//! environments, the pending-reset bitmaps over peers, the network's
//! channels, pending persists and the nodes in the ghost log. Timer and
//! waiter numbers are not renamed: a core that numbers a timer or a waiter
//! after a node cannot declare that node interchangeable.

use crate::action::Action;
use crate::core::{Core, NodeId, Payload, PayloadKind, limits};
use crate::engine::Engine;
use crate::network::{Msg, Network};
use crate::property::View;
use crate::world::{Fingerprint, Shape, World, fingerprint};

/// A set of nodes, one bit per node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeSet(u8);

impl NodeSet {
    /// No node.
    pub const EMPTY: NodeSet = NodeSet(0);

    /// The nodes of `range`, say `1..nodes` for every node but node 0.
    pub fn range(range: std::ops::Range<NodeId>) -> NodeSet {
        NodeSet(range.filter(|&n| (n as usize) < limits::NODES_MAX).fold(0, |bits, n| bits | 1 << n))
    }

    /// The nodes whose bits are set in `bits`, bit `n` for node `n`.
    pub fn from_bits(bits: u8) -> NodeSet {
        NodeSet(bits)
    }

    /// This set without node `n`.
    pub fn without(self, n: NodeId) -> NodeSet {
        if (n as usize) < limits::NODES_MAX { NodeSet(self.0 & !(1 << n)) } else { self }
    }

    /// Whether node `n` is in the set.
    pub fn contains(self, n: NodeId) -> bool {
        (n as usize) < limits::NODES_MAX && self.0 & (1 << n) != 0
    }

    /// The nodes in the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = NodeId> {
        (0..limits::NODES_MAX as NodeId).filter(move |&n| self.contains(n))
    }

    /// How many nodes the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A renaming of node numbers: a permutation of the interchangeable nodes
/// that leaves every other node where it is. Node `n` becomes
/// [`Renaming::node`]`(n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renaming {
    to: [NodeId; limits::NODES_MAX],
}

impl Renaming {
    /// The renaming that changes nothing.
    pub const IDENTITY: Renaming = Renaming { to: [0, 1, 2, 3, 4, 5, 6, 7] };

    /// What node `n` is called after the renaming. Numbers that are not
    /// nodes (`n >= NODES_MAX`, say a "nobody" marker) stay as they are.
    pub fn node(&self, n: NodeId) -> NodeId {
        self.to.get(n as usize).copied().unwrap_or(n)
    }

    /// A bitmap over nodes (bit `n` for node `n`), renamed.
    pub fn bits(&self, bits: u8) -> u8 {
        (0..limits::NODES_MAX as NodeId).filter(|&n| bits & (1 << n) != 0).fold(0, |out, n| out | 1 << self.node(n))
    }
}

/// The renamings of a symmetric model: every permutation of its
/// interchangeable nodes but the identity, and how to pick the canonical
/// world with them.
#[derive(Clone, Debug)]
pub(crate) struct Symmetry {
    renamings: Vec<Renaming>,
    /// The swaps of two neighbouring interchangeable nodes, which together
    /// make every renaming: what `--det` checks a world against.
    swaps: Vec<(NodeId, NodeId, Renaming)>,
    /// The swaps of any two interchangeable nodes, `u < v`.
    pairs: Vec<(NodeId, NodeId, Renaming)>,
    /// For each renaming, the node that becomes node `j`, by `j`.
    sources: Vec<[NodeId; limits::NODES_MAX]>,
    /// Working space: a renamed world and its encoding.
    renamed: Option<World>,
    encoded: Vec<u8>,
}

impl Symmetry {
    /// The permutations of `set` (of at least two nodes), in lexicographic
    /// order of the images, the identity left out.
    pub(crate) fn new(set: NodeSet) -> Symmetry {
        let nodes: Vec<NodeId> = set.iter().collect();
        let mut renamings = Vec::new();
        let mut order = nodes.clone();
        loop {
            let mut r = Renaming::IDENTITY;
            for (from, to) in nodes.iter().zip(&order) {
                r.to[*from as usize] = *to;
            }
            if r != Renaming::IDENTITY {
                renamings.push(r);
            }
            if !next_permutation(&mut order) {
                break;
            }
        }
        let sources = renamings
            .iter()
            .map(|r| {
                let mut from = Renaming::IDENTITY.to;
                for n in 0..limits::NODES_MAX as NodeId {
                    from[r.node(n) as usize] = n;
                }
                from
            })
            .collect();
        let swaps = nodes
            .windows(2)
            .map(|pair| {
                let mut r = Renaming::IDENTITY;
                (r.to[pair[0] as usize], r.to[pair[1] as usize]) = (pair[1], pair[0]);
                (pair[0], pair[1], r)
            })
            .collect();
        let mut pairs = Vec::new();
        for (i, &u) in nodes.iter().enumerate() {
            for &v in &nodes[i + 1..] {
                let mut r = Renaming::IDENTITY;
                (r.to[u as usize], r.to[v as usize]) = (v, u);
                pairs.push((u, v, r));
            }
        }
        Symmetry { renamings, swaps, pairs, sources, renamed: None, encoded: Vec::new() }
    }

    /// How many worlds each world stands for at most: the permutations,
    /// the identity included.
    #[cfg(test)]
    pub(crate) fn group_size(&self) -> usize {
        self.renamings.len() + 1
    }

    /// Appends the canonical encoding of `world` (the least encoding over
    /// all its renamings, itself included) to `out`, and returns its
    /// fingerprint.
    ///
    /// Two shortcuts keep it exact. *Twins*, two nodes whose swap leaves
    /// the world as it is, make renamings that differ by swapping them give
    /// the same world, so only those that keep twins in order are tried
    /// (worlds with many nodes alike have many twins); looked for from 5
    /// interchangeable nodes. And the encoding
    /// starts with the node states, so a renaming whose states already
    /// encode above the least so far is dropped before the rest of its
    /// world is renamed: most are.
    pub(crate) fn canonical_append<C: Core>(
        &mut self,
        settings: &C::Settings,
        shape: &Shape,
        world: &World,
        out: &mut Vec<u8>,
    ) -> Fingerprint {
        let from = out.len();
        world.encode_append(shape, out);
        let renamed = self.renamed.get_or_insert_with(|| World::empty(shape));
        let size = shape.state_size;
        let states = shape.nodes as usize * size;
        // Twins, found while `out` holds the world's own encoding: first
        // by their states alone, then by the whole world swapped.
        let mut twins = [(0, 0); limits::NODES_MAX * (limits::NODES_MAX - 1) / 2];
        let mut twin_count = 0;
        // Looking for twins costs about a renaming a pair; it pays from 5
        // interchangeable nodes (119 renamings, 10 pairs), not at 4 (23 and
        // 6: 1.13x the time on two-phase with 5 nodes and a crash).
        let pairs = if self.renamings.len() > 4 * self.pairs.len() { &self.pairs[..] } else { &[] };
        for (u, v, r) in pairs {
            let state = |n: NodeId| &world.states[n as usize * size..(n as usize + 1) * size];
            self.encoded.clear();
            self.encoded.extend_from_slice(state(*u));
            rename_state::<C>(settings, r, &mut self.encoded);
            if self.encoded != state(*v) {
                continue;
            }
            rename::<C>(settings, shape, world, r, renamed);
            self.encoded.clear();
            renamed.encode_append(shape, &mut self.encoded);
            if self.encoded.as_slice() == &out[from..] {
                twins[twin_count] = (*u, *v);
                twin_count += 1;
            }
        }
        let twins = &twins[..twin_count];
        'renamings: for (r, sources) in self.renamings.iter().zip(&self.sources) {
            if twins.iter().any(|&(u, v)| r.node(u) > r.node(v)) {
                continue;
            }
            self.encoded.clear();
            // Node by node, until the states so far are above the least
            // (dropped) or below it (kept on).
            let mut below = false;
            for &n in &sources[..shape.nodes as usize] {
                let at = n as usize * size;
                let start = self.encoded.len();
                self.encoded.extend_from_slice(&world.states[at..at + size]);
                rename_state::<C>(settings, r, &mut self.encoded[start..]);
                if !below {
                    match self.encoded[start..].cmp(&out[from + start..from + start + size]) {
                        std::cmp::Ordering::Greater => continue 'renamings,
                        std::cmp::Ordering::Less => below = true,
                        std::cmp::Ordering::Equal => {}
                    }
                }
            }
            debug_assert_eq!(self.encoded.len(), states);
            rename::<C>(settings, shape, world, r, renamed);
            self.encoded.clear();
            renamed.encode_append(shape, &mut self.encoded);
            if self.encoded.as_slice() < &out[from..] {
                out.truncate(from);
                out.extend_from_slice(&self.encoded);
            }
        }
        fingerprint(&out[from..])
    }
}

/// `--det` under symmetry: checks that `world`, whose successors' classes
/// are `classes`, and `world` with two neighbouring interchangeable nodes
/// swapped have the same classes of successors and the same value of every
/// property. Swaps make every renaming, so a core whose steps or renaming
/// tell renamed worlds apart, or a property that does, fails here where
/// its world is expanded, not only where a violation's trace is rebuilt.
pub(crate) fn check_swaps<C: Core>(
    symmetry: &mut Symmetry,
    e: &mut Engine<'_, C>,
    world: &World,
    classes: &mut Vec<Fingerprint>,
) -> Result<(), String> {
    let model = e.model;
    let shape = e.shape;
    let mut swapped = World::empty(&shape);
    let mut next = World::empty(&shape);
    let (mut actions, mut bytes, mut others) = (Vec::<Action>::new(), Vec::new(), Vec::new());
    classes.sort_unstable();
    for i in 0..symmetry.swaps.len() {
        let (a, b, r) = symmetry.swaps[i];
        let broken = |what: String| {
            format!(
                "symmetry does not hold: swapping nodes {a} and {b} in a world changes {what} (Core::interchangeable, \
                 Core::rename_state, Core::rename_payload; checked under --det)"
            )
        };
        rename::<C>(&model.settings, &shape, world, &r, &mut swapped);
        e.actions(&swapped, &mut actions).map_err(|err| err.to_string())?;
        others.clear();
        for action in &actions {
            if e.apply(&swapped, action, &mut next).map_err(|err| err.to_string())? {
                bytes.clear();
                others.push(symmetry.canonical_append::<C>(&model.settings, &shape, &next, &mut bytes));
            }
        }
        others.sort_unstable();
        if others != *classes {
            return Err(broken(format!(
                "the classes of its successors ({} successors, {} after the swap)",
                classes.len(),
                others.len()
            )));
        }
        for property in &model.properties {
            let holds = |w: &World| crate::search::unwind(|| property.holds(&View::<C>::new(w, &model.settings)));
            if let (Ok(before), Ok(after)) = (holds(world), holds(&swapped))
                && before != after
            {
                return Err(broken(format!("whether {} property `{}` holds", property.kind, property.name)));
            }
        }
    }
    Ok(())
}

/// Writes into `out` the world `world` with its nodes renamed by `r`: node
/// `n`'s state, environment, channels, persists and replies become node
/// `r.node(n)`'s, with the node numbers inside them renamed by the core.
pub(crate) fn rename<C: Core>(settings: &C::Settings, shape: &Shape, world: &World, r: &Renaming, out: &mut World) {
    let size = shape.state_size;
    out.states.resize(world.states.len(), 0);
    out.env.clone_from(&world.env);
    for n in 0..shape.nodes {
        let to = r.node(n) as usize;
        let at = n as usize * size;
        let bytes = &mut out.states[to * size..to * size + size];
        bytes.copy_from_slice(&world.states[at..at + size]);
        rename_state::<C>(settings, r, bytes);
        let mut env = world.env[n as usize];
        env.resets = r.bits(env.resets);
        out.env[to] = env;
    }
    (out.drops, out.dups, out.crashes, out.timeouts) = (world.drops, world.dups, world.crashes, world.timeouts);
    out.net.clear();
    out.net.extend(world.net.iter().map(|m| Msg {
        from: r.node(m.from),
        to: r.node(m.to),
        payload: renamed::<C>(settings, r, PayloadKind::Message { from: m.from, to: m.to }, &m.payload),
    }));
    match shape.network {
        // Channels in (from, to) order, each in arrival order: the sort is
        // stable.
        Network::Fifo => out.net.sort_by_key(|m| (m.from, m.to)),
        Network::Bag => out.net.sort(),
    }
    out.persists.clear();
    out.persists.extend(
        world
            .persists
            .iter()
            .map(|(n, p)| (r.node(*n), renamed::<C>(settings, r, PayloadKind::Persist { node: *n }, p))),
    );
    // Grouped by node, oldest first within a node: stable.
    out.persists.sort_by_key(|(n, _)| *n);
    out.replies.clear();
    out.replies.extend(
        world.replies.iter().map(|(n, p)| (r.node(*n), renamed::<C>(settings, r, PayloadKind::Reply { node: *n }, p))),
    );
}

fn rename_state<C: Core>(settings: &C::Settings, r: &Renaming, bytes: &mut [u8]) {
    use zerocopy::{FromBytes, FromZeros, IntoBytes};
    let mut state = match C::State::read_from_bytes(bytes) {
        Ok(state) => state,
        // `bytes` is the core's `state_size`, which a C core's state type
        // (a size class) may exceed: the rest stays zero.
        Err(_) => {
            let mut state = C::State::new_zeroed();
            state.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
            state
        }
    };
    C::rename_state(settings, r, &mut state);
    bytes.copy_from_slice(&state.as_bytes()[..bytes.len()]);
}

fn renamed<C: Core>(settings: &C::Settings, r: &Renaming, kind: PayloadKind, p: &Payload) -> Payload {
    let mut p = *p;
    C::rename_payload(settings, r, kind, p.as_mut_slice());
    p
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(v: &mut [NodeId]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap_or(i);
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_of_a_set_leave_the_other_nodes_alone() {
        let s = Symmetry::new(NodeSet::range(1..4));
        assert_eq!(s.group_size(), 6);
        for r in &s.renamings {
            assert_eq!(r.node(0), 0);
            assert_eq!(r.node(4), 4);
            let mut images: Vec<NodeId> = (1..4).map(|n| r.node(n)).collect();
            images.sort();
            assert_eq!(images, [1, 2, 3]);
        }
        let mut distinct = s.renamings.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 5);
        assert_eq!(Symmetry::new(NodeSet::range(0..5)).group_size(), 120);
    }

    #[test]
    fn bits_follow_their_nodes() {
        let mut r = Renaming::IDENTITY;
        r.to[1] = 3;
        r.to[3] = 1;
        assert_eq!(r.bits(0b0000_0010), 0b0000_1000);
        assert_eq!(r.bits(0b0000_1011), 0b0000_1011);
        assert_eq!(r.bits(0b0000_0110), 0b0000_1100);
        assert_eq!(r.node(200), 200);
    }

    #[test]
    fn node_sets() {
        let s = NodeSet::range(1..5).without(2);
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 3, 4]);
        assert_eq!(s.len(), 3);
        assert!(!s.contains(2));
        assert!(NodeSet::EMPTY.is_empty());
        assert_eq!(NodeSet::range(6..12).len(), 2);
    }
}

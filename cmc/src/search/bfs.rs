//! Breadth-first search with TLC's semantics (one worker): distinct states
//! are unique worlds, initial ones included; generated states are the
//! initial states plus one per successor computed, duplicates included;
//! depth counts the initial state as 1; invariants are checked on every
//! distinct world when it is first found, so the first violation has a
//! shortest trace.
//!
//! Memory per distinct state: its fingerprint in the seen set (16 bytes plus
//! the table's slack) and its parent link (8 bytes). Worlds themselves are
//! kept only for the current and the next level; a trace is rebuilt by
//! re-running the parent links' actions through the core.

use super::{Checker, Control, End, FpSet, POLL_EVERY, Path, step_error};
use crate::action::Action;
use crate::core::Core;
use crate::world::{World, fingerprint};

/// How a distinct state was first reached.
#[derive(Clone, Copy)]
struct Parent {
    /// Index of the parent state, or `ROOT`.
    parent: u32,
    /// The action's position in the parent's action list, or the initial
    /// variant for a root.
    position: u32,
}

const ROOT: u32 = u32::MAX;

/// One BFS level: worlds as encoded bytes, with their state ids.
#[derive(Default)]
struct Level {
    bytes: Vec<u8>,
    /// (state id, end offset in `bytes`).
    entries: Vec<(u32, usize)>,
}

impl Level {
    fn push(&mut self, id: u32, world: &[u8]) {
        self.bytes.extend_from_slice(world);
        self.entries.push((id, self.bytes.len()));
    }
    fn clear(&mut self) {
        self.bytes.clear();
        self.entries.clear();
    }
}

struct Bfs<'a, 'm, C: Core> {
    c: &'a mut Checker<'m, C>,
    seen: FpSet,
    parents: Vec<Parent>,
    /// Ids of the first witness of each `sometimes` property.
    witness_ids: Vec<Option<u32>>,
    witnessed: Vec<usize>,
}

pub(crate) fn run<C: Core>(c: &mut Checker<'_, C>, depth_max: Option<u32>, control: &mut dyn Control) -> End {
    let witness_ids = vec![None; c.engine.model.properties.len()];
    let mut bfs = Bfs { c, seen: FpSet::default(), parents: Vec::new(), witness_ids, witnessed: Vec::new() };
    let found = bfs.search(depth_max, control);
    let Bfs { c, parents, witness_ids, .. } = bfs;
    for (i, id) in witness_ids.iter().enumerate() {
        if let Some(id) = id {
            c.witnesses[i] = Some(path_to(c, &parents, *id));
        }
    }
    match found {
        Found::End(e) => e,
        Found::Violation { property, kind, id } => End::Violation { property, kind, path: path_to(c, &parents, id) },
        Found::Error { error, id } => End::Error { error, path: path_to(c, &parents, id) },
    }
}

/// How the level loop ended; violations carry a state id, turned into a
/// path once the search's tables are no longer borrowed.
enum Found {
    End(End),
    Violation { property: String, kind: crate::property::Kind, id: u32 },
    Error { error: String, id: u32 },
}

/// Rebuilds the actions that reach state `id`, by following parent links to
/// a root and re-running each action list.
fn path_to<C: Core>(c: &mut Checker<'_, C>, parents: &[Parent], id: u32) -> Path {
    let mut chain = Vec::new();
    let mut at = id;
    loop {
        let p = parents[at as usize];
        chain.push(p.position);
        if p.parent == ROOT {
            break;
        }
        at = p.parent;
    }
    chain.reverse();
    let mut path = vec![Action::Init { variant: chain[0] }];
    let shape = c.engine.shape;
    let mut world = World::empty(&shape);
    let mut next = World::empty(&shape);
    let mut actions = Vec::new();
    if c.engine.initial(chain[0], &mut world).is_err() {
        return path;
    }
    for &position in &chain[1..] {
        if c.engine.actions(&world, &mut actions).is_err() {
            return path;
        }
        let action = actions[position as usize];
        path.push(action);
        if !matches!(c.engine.apply(&world, &action, &mut next), Ok(true)) {
            return path;
        }
        std::mem::swap(&mut world, &mut next);
    }
    path
}

impl<C: Core> Bfs<'_, '_, C> {
    /// Records a world reached for the first time (`bytes` is its encoding,
    /// `world` it decoded); checks its invariants.
    fn discover(&mut self, world: &World, fp: u128, parent: Parent) -> Result<Option<u32>, Found> {
        if !self.seen.insert(fp) {
            return Ok(None);
        }
        let id = self.parents.len() as u32;
        self.parents.push(parent);
        self.c.distinct += 1;
        let mut witnessed = std::mem::take(&mut self.witnessed);
        let failed = self.c.check_new(world, &mut witnessed);
        for &i in &witnessed {
            self.witness_ids[i] = Some(id);
        }
        self.witnessed = witnessed;
        if let Some(i) = failed {
            let (property, kind) = self.c.property(i);
            return Err(Found::Violation { property, kind, id });
        }
        Ok(Some(id))
    }

    fn search(&mut self, depth_max: Option<u32>, control: &mut dyn Control) -> Found {
        let shape = self.c.engine.shape;
        let states_max = self.c.options.states_max;
        let mut world = World::empty(&shape);
        let mut scratch = World::empty(&shape);
        let mut current = Level::default();
        let mut next = Level::default();
        let mut actions = Vec::new();
        // The successors of the world being expanded: their encodings, and
        // (fingerprint, action position, end offset) for each.
        let mut succ_bytes: Vec<u8> = Vec::new();
        let mut succ: Vec<(u128, u32, usize)> = Vec::new();

        for variant in 0..self.c.engine.initial_variants() {
            match self.c.engine.initial(variant, &mut world) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => return Found::End(step_error(e, Vec::new())),
            }
            self.c.generated += 1;
            let fp = self.c.engine.fingerprint(&world, &mut self.c.buf);
            match self.discover(&world, fp, Parent { parent: ROOT, position: variant }) {
                Ok(Some(id)) => current.push(id, &self.c.buf),
                Ok(None) => {}
                Err(found) => {
                    self.c.depth = 1;
                    return found;
                }
            }
        }
        if current.entries.is_empty() {
            return Found::End(End::Complete);
        }
        self.c.depth = 1;
        let mut next_poll = POLL_EVERY;

        loop {
            let last_level = depth_max.is_some_and(|d| self.c.depth >= d);
            let mut cut = false;
            let mut start = 0;
            for k in 0..current.entries.len() {
                let (id, end) = current.entries[k];
                let bytes = &current.bytes[start..end];
                start = end;
                if let Err(e) = world.decode_into(&shape, bytes) {
                    return Found::Error { error: format!("internal: stored world {id} does not decode: {e}"), id };
                }
                if let Err(e) = self.c.engine.actions(&world, &mut actions) {
                    return Found::Error { error: e.to_string(), id };
                }
                // Compute every successor first, then look them all up: the
                // prefetches let the table's cache misses overlap.
                succ_bytes.clear();
                succ.clear();
                for (position, action) in actions.iter().enumerate() {
                    let from = succ_bytes.len();
                    match self.c.engine.apply_encoded(&world, bytes, action, &mut scratch, &mut succ_bytes) {
                        Ok(true) => {}
                        Ok(false) => continue,
                        Err(e) => return Found::Error { error: e.to_string(), id },
                    }
                    let fp = fingerprint(&succ_bytes[from..]);
                    succ.push((fp, position as u32, succ_bytes.len()));
                }
                self.c.generated += succ.len() as u64;
                for &(fp, _, _) in &succ {
                    self.seen.prefetch(fp);
                }
                let mut from = 0;
                for &(fp, position, to) in &succ {
                    let encoded = &succ_bytes[from..to];
                    from = to;
                    if last_level {
                        // Beyond the bound: note whether the bound hid a
                        // world, but do not store it.
                        cut |= !self.seen.contains(fp);
                        continue;
                    }
                    if states_max.is_some_and(|m| self.c.distinct >= m) {
                        if !self.seen.contains(fp) {
                            let m = states_max.unwrap_or_default();
                            return Found::End(End::Incomplete(format!("states_max = {m} reached")));
                        }
                        continue;
                    }
                    if self.seen.contains(fp) {
                        continue;
                    }
                    if let Err(e) = scratch.decode_into(&shape, encoded) {
                        return Found::Error { error: format!("internal: a successor does not decode: {e}"), id };
                    }
                    let parent = Parent { parent: id, position };
                    if next.entries.is_empty() {
                        self.c.depth += 1;
                    }
                    match self.discover(&scratch, fp, parent) {
                        Ok(Some(new_id)) => next.push(new_id, encoded),
                        Ok(None) => {}
                        Err(found) => return found,
                    }
                }
                if succ.is_empty()
                    && let Some((property, kind)) = self.c.check_terminal(&world)
                {
                    return Found::Violation { property, kind, id };
                }
                if self.c.generated >= next_poll {
                    next_poll = self.c.generated + POLL_EVERY;
                    if let Some(reason) = control.poll(&self.c.progress()) {
                        return Found::End(End::Incomplete(reason));
                    }
                }
            }
            if last_level {
                return Found::End(if cut {
                    End::Incomplete(format!("depth_max = {} reached with worlds left to explore", self.c.depth))
                } else {
                    End::Complete
                });
            }
            if next.entries.is_empty() {
                return Found::End(End::Complete);
            }
            std::mem::swap(&mut current, &mut next);
            next.clear();
        }
    }
}

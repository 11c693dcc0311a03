//! Breadth-first search with TLC's semantics (one worker): distinct states
//! are unique worlds, initial ones included; generated states are the
//! initial states plus one per successor computed, duplicates included;
//! depth counts the initial state as 1; invariants are checked on every
//! distinct world when it is first found, so the first violation has a
//! shortest trace.
//!
//! Memory per distinct state: its fingerprint in the seen set (16 bytes plus
//! the table's slack) and its parent link (6 bytes; 4 for an initial world,
//! its variant). Worlds themselves are kept only for the current and the
//! next level; a trace is rebuilt by re-running the parent links' actions
//! ([`store`]).

pub(crate) mod distributed;
mod parallel;
mod store;
mod symmetric;

use super::{Checker, Control, End, Explore, FpSet};
use crate::world::Fingerprint;
use store::{IDS_MAX, Level, Link, POSITION_MAX, Parents, path_to};

/// One expanded world: its successors, computed but not yet looked up.
struct Expansion<W, A> {
    id: u32,
    /// The expanded world's fingerprint: a successor equal to it (a
    /// self-loop, common in specifications whose actions stay enabled after
    /// taking effect) is known to be seen without a lookup.
    fp: Fingerprint,
    world: W,
    /// Working space for building successors, and for decoding new ones.
    scratch: W,
    /// The successors' encodings, back to back.
    bytes: Vec<u8>,
    /// (fingerprint, action position, end offset in `bytes`) per successor.
    succ: Vec<(u128, u32, usize)>,
    /// A step or limit error met while expanding, and the action whose step
    /// failed when known; reported when this expansion's turn comes, so
    /// that earlier worlds are looked up first.
    error: Option<(String, Option<A>)>,
}

impl<W, A> Expansion<W, A> {
    fn new<E: Explore<World = W, Action = A>>(e: &E) -> Self {
        Expansion {
            id: 0,
            fp: 0,
            world: e.empty_world(),
            scratch: e.empty_world(),
            bytes: Vec::new(),
            succ: Vec::new(),
            error: None,
        }
    }
}

struct Bfs<'a, E: Explore> {
    c: &'a mut Checker<E>,
    seen: FpSet,
    parents: Parents,
    /// Ids of the first witness of each `sometimes` property.
    witness_ids: Vec<Option<u32>>,
    witnessed: Vec<usize>,
}

pub(crate) fn run<E: Explore>(c: &mut Checker<E>, depth_max: Option<u32>, control: &mut dyn Control) -> End<E::Action> {
    let mut one = OneThread::new(&c.explorer);
    run_with(c, depth_max, control, &mut one)
}

/// Breadth-first search on up to `threads` threads ([`parallel`]): the
/// same counts, verdict and trace as [`run`].
pub(crate) fn run_threads<E>(
    c: &mut Checker<E>,
    depth_max: Option<u32>,
    control: &mut dyn Control,
    threads: usize,
) -> End<E::Action>
where
    E: Explore + Send,
    E::World: Send,
    E::Action: Send + Sync,
{
    let Some(mut levels) = parallel::Threads::new(&c.explorer, threads) else {
        return run(c, depth_max, control);
    };
    run_with(c, depth_max, control, &mut levels)
}

fn run_with<E: Explore>(
    c: &mut Checker<E>,
    depth_max: Option<u32>,
    control: &mut dyn Control,
    levels: &mut dyn Levels<E>,
) -> End<E::Action> {
    let witness_ids = vec![None; c.properties.len()];
    let mut bfs = Bfs { c, seen: FpSet::default(), parents: Parents::default(), witness_ids, witnessed: Vec::new() };
    let found = bfs.search(depth_max, control, levels);
    let Bfs { c, parents, witness_ids, .. } = bfs;
    if c.explorer.symmetric() {
        return symmetric::end(c, &parents, &witness_ids, found);
    }
    for (i, id) in witness_ids.iter().enumerate() {
        if let Some(id) = id {
            c.witnesses[i] = Some(path_to(c, &parents, *id));
        }
    }
    match found {
        Found::End(e) => e,
        Found::Violation { property, kind, id } => End::Violation { property, kind, path: path_to(c, &parents, id) },
        Found::Error { error, id, failed } => End::Error { error, path: path_to(c, &parents, id), failed },
    }
}

/// Expands one level's worlds into the next level: [`OneThread`], or
/// [`parallel::Threads`]. Either way the lookups, and so the ids,
/// violations and counts, are in BFS order: successors in the order of
/// the worlds expanded, then of their actions.
trait Levels<E: Explore> {
    fn expand_level(&mut self, bfs: &mut Bfs<'_, E>, level: &mut LevelRun<'_>) -> Result<(), Found<E::Action>>;
}

/// One level's expansion: the worlds, where new ones go, and what the
/// search tracks across it.
struct LevelRun<'l> {
    current: &'l Level,
    next: &'l mut Level,
    /// The depth bound is reached: successors are looked up, not stored.
    last_level: bool,
    /// Set when the bound hid a world not seen before.
    cut: bool,
    control: &'l mut dyn Control,
    next_poll: u64,
}

/// The one-thread expansion: a software pipeline that computes (and
/// prefetches) the successors of world k, then looks up those of world
/// k - 1, whose buckets had the whole expansion of world k to arrive.
struct OneThread<W, A> {
    first: Expansion<W, A>,
    second: Expansion<W, A>,
    actions: Vec<A>,
}

impl<W, A> OneThread<W, A> {
    fn new<E: Explore<World = W, Action = A>>(e: &E) -> Self {
        OneThread { first: Expansion::new(e), second: Expansion::new(e), actions: Vec::new() }
    }

    /// Expands worlds `range` of the level.
    fn expand_range<E: Explore<World = W, Action = A>>(
        &mut self,
        bfs: &mut Bfs<'_, E>,
        run: &mut LevelRun<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<(), Found<A>> {
        let level = bfs.c.depth;
        let OneThread { first, second, actions } = self;
        for k in range.clone() {
            bfs.c.level = Some((level, (run.current.len() - k) as u64));
            let (id, bytes) = run.current.get(k);
            let (now, before) = if k % 2 == 0 { (&mut *first, &mut *second) } else { (&mut *second, &mut *first) };
            bfs.expand(id, bytes, now, actions);
            for &(fp, _, _) in &now.succ {
                if fp != now.fp {
                    bfs.seen.prefetch(fp);
                }
            }
            if k > range.start {
                bfs.absorb(before, run)?;
            }
        }
        if let Some(k) = range.end.checked_sub(1)
            && k >= range.start
        {
            let last = if k % 2 == 0 { first } else { second };
            bfs.absorb(last, run)?;
        }
        Ok(())
    }
}

impl<E: Explore> Levels<E> for OneThread<E::World, E::Action> {
    fn expand_level(&mut self, bfs: &mut Bfs<'_, E>, run: &mut LevelRun<'_>) -> Result<(), Found<E::Action>> {
        let len = run.current.len();
        self.expand_range(bfs, run, 0..len)
    }
}

/// How the level loop ended; violations carry a state id, turned into a
/// path once the search's tables are no longer borrowed.
enum Found<A> {
    End(End<A>),
    Violation { property: String, kind: crate::property::Kind, id: u32 },
    Error { error: String, id: u32, failed: Option<A> },
}

impl<E: Explore> Bfs<'_, E> {
    /// Records a world reached for the first time (`bytes` is its encoding,
    /// `world` it decoded); checks its invariants.
    fn discover(&mut self, world: &E::World, fp: Fingerprint, link: Link) -> Result<Option<u32>, Found<E::Action>> {
        if !self.seen.insert(fp) {
            return Ok(None);
        }
        let id = self.record(link)?;
        self.check(world, id)?;
        Ok(Some(id))
    }

    /// Gives the next distinct state its id and parent link.
    fn record(&mut self, link: Link) -> Result<u32, Found<E::Action>> {
        if let Link::Step { parent, position } = link
            && position > POSITION_MAX
        {
            // Not a bound users meet: cores list at most
            // `actions_per_state` actions, programs fewer.
            let error = format!("action position {position} is beyond the search's limit of {POSITION_MAX}");
            return Err(Found::Error { error, id: parent, failed: None });
        }
        let id = self.parents.len();
        if id >= IDS_MAX {
            return Err(Found::End(End::Incomplete(format!("ids_max = {IDS_MAX} reached"))));
        }
        self.parents.push(link);
        self.c.distinct += 1;
        Ok(id as u32)
    }

    /// Checks the properties of new state `id`, and notes the `sometimes`
    /// properties it is the first witness of.
    fn check(&mut self, world: &E::World, id: u32) -> Result<(), Found<E::Action>> {
        let mut witnessed = std::mem::take(&mut self.witnessed);
        let failed =
            self.c.check_new(world, &mut witnessed).map_err(|error| Found::Error { error, id, failed: None })?;
        for &i in &witnessed {
            self.witness_ids[i] = Some(id);
        }
        self.witnessed = witnessed;
        if let Some(i) = failed {
            let (property, kind) = self.c.property(i);
            return Err(Found::Violation { property, kind, id });
        }
        Ok(())
    }

    /// Computes every successor of world `id` (stored as `bytes`) into
    /// `exp`, with their fingerprints.
    fn expand(
        &mut self,
        id: u32,
        bytes: &[u8],
        exp: &mut Expansion<E::World, E::Action>,
        actions: &mut Vec<E::Action>,
    ) {
        exp.id = id;
        exp.bytes.clear();
        exp.succ.clear();
        exp.error = None;
        let e = &mut self.c.explorer;
        if let Err(err) = e.load(bytes, &mut exp.world) {
            exp.error = Some((format!("internal: stored world {id} does not load: {err}"), None));
            return;
        }
        exp.fp = e.fingerprint_stored(&exp.world, bytes, &mut exp.bytes);
        exp.bytes.clear();
        if let Err(err) = e.expand(&exp.world, bytes, exp.fp, &mut exp.scratch, actions, &mut exp.bytes, &mut exp.succ)
        {
            exp.error = Some((err, e.failed_action()));
        }
        // Its successors are made: BFS never loads this world again.
        e.retire(bytes);
    }

    /// Looks up the successors of one expansion, in order: stores and checks
    /// the new ones, checks a world without successors as terminal.
    fn absorb(
        &mut self,
        exp: &mut Expansion<E::World, E::Action>,
        run: &mut LevelRun<'_>,
    ) -> Result<(), Found<E::Action>> {
        let LevelRun { next, last_level, cut, control, next_poll, .. } = run;
        let last_level = *last_level;
        let id = exp.id;
        if let Some((error, failed)) = exp.error.take() {
            return Err(Found::Error { error, id, failed });
        }
        let states_max = self.c.options.states_max;
        let poll_every = self.c.explorer.poll_every();
        let mut from = 0;
        for &(fp, position, to) in &exp.succ {
            let encoded = &exp.bytes[from..to];
            from = to;
            // Counted as looked up, as TLC counts a successor when it makes
            // it: a search that stops at a violation has generated exactly
            // the successors up to the violating one, TLC's figure.
            self.c.generated += 1;
            if fp == exp.fp {
                // A self-loop: the expanded world is stored already.
                self.c.explorer.retire(encoded);
            } else if last_level {
                // Beyond the bound: note whether the bound hid a world, but
                // do not store it.
                *cut |= !self.seen.contains(fp);
                self.c.explorer.retire(encoded);
            } else if self.seen.contains(fp) {
                self.c.explorer.retire(encoded);
            } else {
                if let Some(m) = states_max
                    && self.c.distinct >= m
                {
                    return Err(Found::End(End::Incomplete(format!("states_max = {m} reached"))));
                }
                if let Err(e) = self.c.explorer.load(encoded, &mut exp.scratch) {
                    let error = format!("internal: a successor does not load: {e}");
                    return Err(Found::Error { error, id, failed: None });
                }
                if next.len() == 0 {
                    self.c.depth += 1;
                }
                if let Some(new_id) = self.discover(&exp.scratch, fp, Link::Step { parent: id, position })? {
                    next.push(new_id, encoded);
                }
            }
            // Polled once this successor is looked up, so that a stop
            // leaves no generated state unchecked.
            if self.c.generated >= *next_poll {
                *next_poll = self.c.generated + poll_every;
                if let Some(reason) = control.poll(&self.c.progress()) {
                    return Err(Found::End(End::Incomplete(reason)));
                }
            }
        }
        if exp.succ.is_empty()
            && let Some((property, kind)) =
                self.c.check_terminal(&exp.world).map_err(|error| Found::Error { error, id, failed: None })?
        {
            return Err(Found::Violation { property, kind, id });
        }
        Ok(())
    }

    fn search(
        &mut self,
        depth_max: Option<u32>,
        control: &mut dyn Control,
        levels: &mut dyn Levels<E>,
    ) -> Found<E::Action> {
        let mut world = self.c.explorer.empty_world();
        let mut stored = Vec::new();
        let mut current = Level::default();
        let mut next = Level::default();

        let poll_every = self.c.explorer.poll_every().max(1);
        for variant in 0..self.c.explorer.initial_variants() {
            // A core may declare millions of initial worlds (or of
            // variants it skips): a cap stops the search among them too,
            // before the next variant, so that every world counted is
            // checked.
            if variant > 0
                && u64::from(variant) % poll_every == 0
                && let Some(reason) = control.poll(&self.c.progress())
            {
                self.c.depth = u32::from(self.c.distinct > 0);
                return Found::End(End::Incomplete(reason));
            }
            match self.c.explorer.initial(variant, &mut world) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(error) => {
                    return Found::End(End::Error {
                        error,
                        path: Vec::new(),
                        failed: Some(self.c.explorer.init_action(variant)),
                    });
                }
            }
            self.c.generated += 1;
            stored.clear();
            let fp = self.c.explorer.store(&world, &mut stored);
            // The cap counts initial worlds too, as it does in DFS.
            if let Some(m) = self.c.options.states_max
                && self.c.distinct >= m
                && !self.seen.contains(fp)
            {
                self.c.depth = u32::from(self.c.distinct > 0);
                return Found::End(End::Incomplete(format!("states_max = {m} reached")));
            }
            match self.discover(&world, fp, Link::Root { variant }) {
                Ok(Some(id)) => current.push(id, &stored),
                Ok(None) => {}
                Err(found) => {
                    self.c.depth = 1;
                    return found;
                }
            }
        }
        if current.len() == 0 {
            return Found::End(End::Complete);
        }
        self.c.depth = 1;
        let mut next_poll = poll_every;

        loop {
            let last_level = depth_max.is_some_and(|d| self.c.depth >= d);
            let mut run = LevelRun {
                current: &current,
                next: &mut next,
                last_level,
                cut: false,
                control: &mut *control,
                next_poll,
            };
            if let Err(found) = levels.expand_level(self, &mut run) {
                return found;
            }
            let cut = run.cut;
            next_poll = run.next_poll;
            if last_level {
                return Found::End(if cut {
                    End::Incomplete(format!("depth_max = {} reached with worlds left to explore", self.c.depth))
                } else {
                    End::Complete
                });
            }
            if next.len() == 0 {
                return Found::End(End::Complete);
            }
            std::mem::swap(&mut current, &mut next);
            next.clear();
        }
    }
}

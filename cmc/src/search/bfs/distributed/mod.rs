//! Breadth-first search spread over workers that share nothing but
//! messages: threads, processes, hosts. The engine does no I/O: a worker
//! talks to the others only through [`Exchange`], one bulk-synchronous
//! round at a time, and the `cmc-distributed` crate carries the rounds over
//! timely dataflow.
//!
//! Every worker owns the fingerprints that hash to it, and the worlds of
//! the current level it owns. A level takes three rounds, and a fourth when
//! the search stops in it or a `sometimes` property is first witnessed:
//!
//! 1. *Candidates*: each worker expands its worlds in id order and sends
//!    every successor to its owner with its place in BFS order, the key
//!    (parent id, successor index). The owner keeps, per fingerprint it has
//!    not seen, the least key: the first discovery in one-thread BFS order,
//!    whatever order the messages arrive in. It checks the new worlds'
//!    properties.
//! 2. *Ranks*: each new world's key goes to the worker that ranks the
//!    parent ids of its range (the level's parent ids are dense, and split
//!    into equal slices); every worker broadcasts how many new worlds fall
//!    in each range, and the earliest event (violation, error, terminal
//!    failure) it saw.
//! 3. *Ids*: a ranking worker sorts its keys and gives them consecutive
//!    ids from its range's offset: exactly the ids one thread gives, so
//!    parent links, counts and traces are one thread's. It keeps the parent
//!    links of its id block, and sends each id to the world's owner.
//! 4. *Stop*: the earliest event in BFS order ends the search, with
//!    one thread's counts at that point (every worker broadcasts how many
//!    successors and new worlds came before it on its side).
//!
//! A trace is walked back one round per step, the holder of each link
//! broadcasting it, and every worker replays it from the initial world.
//! So every worker ends with the same report, the one-thread report.

mod event;
mod trace;
mod wire;
mod worlds;

use super::store::POSITION_MAX;

use crate::core::Core;
use crate::engine::Engine;
use crate::model::{Model, ModelError};
use crate::property::Kind;
use crate::report::Report;
use crate::search::{
    Checker, Control, CoreExplorer, DEADLOCK, End, Explore, FpSet, Options, Progress, Search, terminal,
};
use crate::world::Fingerprint;
use event::{
    Event, Key, SUB_ERROR, SUB_TERMINAL, What, earliest, read_opt_event, read_opt_key, write_opt_event, write_opt_key,
};
use wire::{In, Out};
use worlds::{Block, Fresh, Worlds, owner, range_of};

/// One worker's link to the others: a bulk-synchronous exchange of bytes.
/// Every worker calls [`Exchange::exchange`] the same number of times; a
/// call returns once every worker has sent its round and this one has
/// received all that was sent to it.
pub trait Exchange {
    /// This worker's index, from 0.
    fn index(&self) -> usize;
    /// How many workers there are, over every process.
    fn peers(&self) -> usize;
    /// Sends `out[w]` to worker `w` (`out` has one buffer per worker, this
    /// one's own included) and returns what every worker sent this one in
    /// this round, by sender. An error when a worker is gone or the
    /// transport failed: the search then ends with that error.
    fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, String>;
}

/// Why a distributed search could not run, or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum DistributedError {
    /// A core's model that cannot be checked as declared.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// What distributed search does not do.
    #[error("a distributed search {0}")]
    Unsupported(String),
    /// The workers could not complete a round: a peer is gone, or sent
    /// what this one does not read.
    #[error("distributed search failed: {0}")]
    Peers(String),
}

/// Checks `model` with `options` as one worker of a distributed search
/// over `peers`. Every worker of the search calls this with the same model
/// and options, and each returns the same report: the one a one-thread
/// search gives (counts, verdict, trace), except `elapsed_s`. `control` is
/// polled once per level by each worker; the first worker that asks to
/// stop stops every worker at the end of that level.
pub fn check_distributed<C: Core>(
    model: &Model<C>,
    options: &Options,
    peers: &mut dyn Exchange,
    control: &mut dyn Control,
) -> Result<Report, DistributedError> {
    supported(options)?;
    if options.deadlock && model.properties.iter().any(|p| p.name == DEADLOCK) {
        return Err(ModelError::DeadlockPropertyName.into());
    }
    let engine = Engine::new(model, options.det)?;
    explore_distributed(CoreExplorer::new(engine), options, peers, control)
}

/// What distributed search does not do, as an error.
pub fn supported(options: &Options) -> Result<(), DistributedError> {
    if !matches!(options.search, Search::Bfs { .. }) {
        return Err(DistributedError::Unsupported(
            "is breadth-first; depth-first search and simulation run on one machine".to_string(),
        ));
    }
    if options.symmetry {
        return Err(DistributedError::Unsupported("does not reduce by symmetry (yet): drop --symmetry".to_string()));
    }
    Ok(())
}

/// [`check_distributed`] over any state graph whose worlds are bytes any
/// worker can load (cores: a program's worlds are processes on one
/// machine).
pub fn explore_distributed<E: Explore>(
    explorer: E,
    options: &Options,
    peers: &mut dyn Exchange,
    control: &mut dyn Control,
) -> Result<Report, DistributedError> {
    supported(options)?;
    let Search::Bfs { depth_max } = options.search else { unreachable!("checked by supported()") };
    let mut c = Checker::new(explorer, options);
    let end = if depth_max == Some(0) {
        End::Incomplete("depth_max = 0 explores nothing (the initial state is depth 1)".to_string())
    } else {
        let mut run = Run::new(&mut c, peers);
        run.search(depth_max, control).map_err(DistributedError::Peers)?
    };
    Ok(c.finish(end))
}

// Record tags, checked on arrival.
const CANDIDATE: u8 = 1;
const PROBE: u8 = 2;
const EXPANDED: u8 = 3;
const RANK: u8 = 4;
const CHECKED: u8 = 5;
const ID: u8 = 6;
const CAP: u8 = 7;
const BEFORE: u8 = 8;
pub(super) const LINK: u8 = 9;
const HELLO: u8 = 10;

/// One worker's distributed search.
struct Run<'a, E: Explore> {
    pub(super) c: &'a mut Checker<E>,
    pub(super) x: &'a mut dyn Exchange,
    pub(super) me: usize,
    pub(super) peers: usize,
    pub(super) seen: FpSet,
    /// The worlds this worker owns in the level being expanded, by id.
    pub(super) frontier: Worlds,
    /// The initial variant of each initial world, by id: every worker
    /// finds the initial worlds itself.
    pub(super) roots: Vec<u32>,
    /// The links of the id blocks this worker ranked, in id order.
    pub(super) links: Vec<Block>,
    /// Every block of every level past the first: (first id, count,
    /// worker holding its links), in id order; every worker has it.
    pub(super) blocks: Vec<(u64, u64, u32)>,
    /// The first witness of each `sometimes` property, by id.
    pub(super) witness_ids: Vec<Option<u64>>,
}

/// What one level's four rounds agreed, for the counts at a stop.
struct Level {
    base: u64,
    generated_before: u64,
    depth_before: u32,
}

impl<'a, E: Explore> Run<'a, E> {
    fn new(c: &'a mut Checker<E>, x: &'a mut dyn Exchange) -> Self {
        let (me, peers) = (x.index(), x.peers());
        let witness_ids = vec![None; c.properties.len()];
        Run {
            c,
            x,
            me,
            peers,
            seen: FpSet::default(),
            frontier: Worlds::default(),
            roots: Vec::new(),
            links: Vec::new(),
            blocks: Vec::new(),
            witness_ids,
        }
    }

    pub(super) fn outs(&self) -> Vec<Out> {
        (0..self.peers).map(|_| Out::default()).collect()
    }

    /// One round: sends the buffers, returns what came, by sender.
    pub(super) fn round(&mut self, out: Vec<Out>) -> Result<Vec<Vec<u8>>, String> {
        let got = self.x.exchange(out.into_iter().map(|o| o.0).collect())?;
        if got.len() != self.peers {
            return Err(format!("internal: a round returned {} buffers for {} workers", got.len(), self.peers));
        }
        Ok(got)
    }

    pub(super) fn broadcast(out: &mut [Out], write: impl Fn(&mut Out)) {
        for o in out {
            write(o);
        }
    }

    /// The initial worlds, which every worker makes and checks itself, as
    /// one thread does; each keeps those it owns. `Some` when the search
    /// ends there.
    fn initial_level(&mut self) -> Option<End<E::Action>> {
        let mut world = self.c.explorer.empty_world();
        let mut stored = Vec::new();
        let mut seen = FpSet::default();
        let mut witnessed = Vec::new();
        for variant in 0..self.c.explorer.initial_variants() {
            match self.c.explorer.initial(variant, &mut world) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(error) => {
                    let failed = Some(self.c.explorer.init_action(variant));
                    return Some(End::Error { error, path: Vec::new(), failed });
                }
            }
            self.c.generated += 1;
            stored.clear();
            let fp = self.c.explorer.store(&world, &mut stored);
            if let Some(m) = self.c.options.states_max
                && self.c.distinct >= m
                && !seen.contains(fp)
            {
                self.c.depth = u32::from(self.c.distinct > 0);
                return Some(End::Incomplete(format!("states_max = {m} reached")));
            }
            if !seen.insert(fp) {
                continue;
            }
            if variant > POSITION_MAX {
                // As one thread: parent links keep positions in 16 bits.
                self.c.depth = 1;
                let error = format!("action position {variant} is beyond the search's limit of {POSITION_MAX}");
                return Some(End::Error { error, path: Vec::new(), failed: None });
            }
            let id = self.roots.len() as u64;
            self.roots.push(variant);
            self.c.distinct += 1;
            self.c.depth = 1;
            let checked = self.c.check_new(&world, &mut witnessed);
            if checked.is_ok() {
                for &i in &witnessed {
                    self.witness_ids[i] = Some(id);
                }
            }
            let path = vec![self.c.explorer.init_action(variant)];
            match checked {
                Err(error) => return Some(End::Error { error, path, failed: None }),
                Ok(Some(i)) => {
                    let (property, kind) = self.c.property(i);
                    return Some(End::Violation { property, kind, path });
                }
                Ok(None) => {}
            }
            if owner(fp, self.peers) == self.me {
                self.seen.insert(fp);
                self.frontier.push(id, &stored);
            }
        }
        if self.roots.is_empty() {
            return Some(End::Complete);
        }
        None
    }

    /// Every worker broadcasts one report in rounds 1, 2 and 4: a round
    /// that lacks one ended without that worker (it stopped or failed).
    fn complete(&self, reports: usize, round: u32) -> Result<(), String> {
        if reports == self.peers {
            return Ok(());
        }
        Err(format!(
            "round {round} of a level came with {reports} of the {} workers' reports: a worker ended early",
            self.peers
        ))
    }

    /// The first round: every worker says what it checks (the model, its
    /// properties in order, the options that change the search), and a
    /// worker that checks something else is an error, before any count.
    fn hello(&mut self) -> Result<(), String> {
        let o = &self.c.options;
        let what = format!(
            "{:?} {:?} {:?} {:?} {} {} {}",
            self.c.explorer.identity(),
            self.c.properties,
            o.search,
            o.states_max,
            o.det,
            o.deadlock,
            o.symmetry
        );
        let digest = xxhash_rust::xxh3::xxh3_64(what.as_bytes());
        let mut out = self.outs();
        Self::broadcast(&mut out, |o| {
            o.u8(HELLO);
            o.u64(digest);
        });
        let got = self.round(out)?;
        for (w, buf) in got.iter().enumerate() {
            let mut r = In::new(buf);
            if r.u8()? != HELLO || r.u64()? != digest || !r.done() {
                return Err(format!(
                    "worker {w} checks another model than worker {} (its settings, properties or options differ)",
                    self.me
                ));
            }
        }
        Ok(())
    }

    fn search(&mut self, depth_max: Option<u32>, control: &mut dyn Control) -> Result<End<E::Action>, String> {
        self.hello()?;
        if let Some(end) = self.initial_level() {
            return self.finish(end, None);
        }
        let (mut lo, mut hi) = (0u64, self.c.distinct);
        let nprops = self.c.properties.len();
        let mut world = self.c.explorer.empty_world();
        let mut scratch = self.c.explorer.empty_world();
        let mut actions = Vec::new();
        let mut bytes = Vec::new();
        let mut fp_buf = Vec::new();
        let mut succ = Vec::new();
        loop {
            let last_level = depth_max.is_some_and(|d| self.c.depth >= d);
            let level = Level { base: self.c.distinct, generated_before: self.c.generated, depth_before: self.c.depth };
            let progress = Progress {
                distinct_states: self.c.distinct,
                generated_states: self.c.generated,
                depth: self.c.depth,
                level: Some((self.c.depth, self.frontier.len() as u64)),
            };
            let mut poll = control.poll(&progress);
            let poll_every = self.c.explorer.poll_every();
            let mut next_poll = poll_every;

            // Round 1: expand; candidates to their owners.
            let mut out = self.outs();
            let mut successors: Vec<u32> = Vec::with_capacity(self.frontier.len());
            let mut local: Option<Event> = None;
            let mut generated = 0u64;
            let mut terminal_at: Option<u64> = None;
            // Candidates for other workers already sent in this level: a
            // repeat came later in BFS order than the first.
            let mut sent = FpSet::default();
            // The new worlds this worker owns, offered as they come: its own
            // candidates at once, the others' after the round.
            let mut fresh = Fresh::default();
            let mut cut = false;
            for k in 0..self.frontier.len() {
                if poll.is_some() {
                    // The level is abandoned: the search stops where it began.
                    break;
                }
                if generated >= next_poll {
                    next_poll = generated + poll_every;
                    let progress = Progress { generated_states: self.c.generated + generated, ..progress };
                    poll = control.poll(&progress);
                }
                let (id, stored) = self.frontier.get(k);
                let e = &mut self.c.explorer;
                if let Err(err) = e.load(stored, &mut world) {
                    return Err(format!("internal: stored world {id} does not load: {err}"));
                }
                let fp = e.fingerprint_stored(&world, stored, &mut fp_buf);
                bytes.clear();
                succ.clear();
                if let Err(error) = e.expand(&world, stored, fp, &mut scratch, &mut actions, &mut bytes, &mut succ) {
                    local = Some(Event { key: Key { parent: id, sub: SUB_ERROR }, what: What::ExpandError(error) });
                    break;
                }
                successors.push(succ.len() as u32);
                generated += succ.len() as u64;
                if succ.is_empty() {
                    terminal_at.get_or_insert(id);
                    let key = Key { parent: id, sub: SUB_TERMINAL };
                    match terminal(e, &self.c.properties, self.c.options.deadlock, &world) {
                        Ok(None) => {}
                        Ok(Some((name, kind))) => {
                            local = Some(Event { key, what: What::Terminal(name, kind) });
                            break;
                        }
                        Err(error) => {
                            local = Some(Event { key, what: What::TerminalError(error) });
                            break;
                        }
                    }
                }
                // The lookups of this world's successors miss the cache
                // together rather than one after another.
                for &(sfp, _, _) in &succ {
                    if owner(sfp, self.peers) == self.me {
                        self.seen.prefetch(sfp);
                    }
                }
                let mut from = 0;
                for (j, &(sfp, position, end)) in succ.iter().enumerate() {
                    let encoded = &bytes[from..end];
                    from = end;
                    // A self-loop is seen already.
                    if sfp == fp {
                        continue;
                    }
                    let to = owner(sfp, self.peers);
                    if to == self.me {
                        // Worlds are expanded in id order: the first way to a
                        // world found here has the least key found here
                        // (another worker's may be less, after the round).
                        if last_level {
                            cut |= !self.seen.contains(sfp);
                        } else if !self.seen.contains(sfp) {
                            self.seen.insert(sfp);
                            fresh.add(sfp, Key { parent: id, sub: j as u32 + 1 }, position, encoded);
                        }
                        continue;
                    }
                    if !sent.insert(sfp) {
                        continue;
                    }
                    let o = &mut out[to];
                    if last_level {
                        o.u8(PROBE);
                        o.u128(sfp);
                    } else {
                        o.u8(CANDIDATE);
                        o.u128(sfp);
                        o.u64(id);
                        o.u32(j as u32 + 1);
                        o.u32(position);
                        o.bytes(encoded);
                    }
                }
            }
            drop(sent);
            Self::broadcast(&mut out, |o| {
                o.u8(EXPANDED);
                o.u64(generated);
                match &poll {
                    None => o.u8(0),
                    Some(r) => {
                        o.u8(1);
                        o.str(r);
                    }
                }
                write_opt_event(o, &local);
                o.opt_u64(terminal_at);
            });
            let got = self.round(out)?;
            let mut reports = 0usize;
            let mut generated_level = 0u64;
            let mut stop_reason: Option<String> = None;
            let mut event: Option<Event> = None;
            let mut terminal_first: Option<u64> = None;
            for buf in &got {
                let mut r = In::new(buf);
                while !r.done() {
                    match r.u8()? {
                        CANDIDATE => {
                            let fp = r.u128()?;
                            let key = Key { parent: r.u64()?, sub: r.u32()? };
                            let position = r.u32()?;
                            let world = r.bytes()?;
                            if !fresh.improve(fp, key, position) && !self.seen.contains(fp) {
                                fresh.add(fp, key, position, world);
                            }
                        }
                        PROBE => cut |= !self.seen.contains(r.u128()?),
                        EXPANDED => {
                            reports += 1;
                            generated_level += r.u64()?;
                            let reason = match r.u8()? {
                                0 => None,
                                _ => Some(r.str()?),
                            };
                            if stop_reason.is_none() {
                                stop_reason = reason;
                            }
                            event = earliest(event, read_opt_event(&mut r)?);
                            if let Some(p) = r.opt_u64()? {
                                terminal_first = Some(terminal_first.map_or(p, |q| q.min(p)));
                            }
                        }
                        t => return Err(format!("internal: record {t} in round 1 of a level")),
                    }
                }
            }
            self.complete(reports, 1)?;
            if let Some(reason) = stop_reason {
                return self.finish(End::Incomplete(reason), None);
            }

            // The owner checks its new worlds.
            let mut checked: Option<Event> = None;
            let mut witnessed: Vec<usize> = Vec::new();
            let mut first_witness: Vec<Option<Key>> = vec![None; nprops];
            for k in 0..fresh.len() {
                let (_, stored) = fresh.worlds.get(k);
                if let Err(err) = self.c.explorer.load(stored, &mut world) {
                    return Err(format!("internal: a successor does not load: {err}"));
                }
                let key = fresh.keys[k];
                let mut found = None;
                witnessed.clear();
                for i in 0..nprops {
                    let holds = match self.c.properties[i].1 {
                        Kind::Always => self.c.explorer.holds(i, &world),
                        Kind::Sometimes if self.c.unwitnessed[i] => self.c.explorer.holds(i, &world),
                        _ => continue,
                    };
                    match (self.c.properties[i].1, holds) {
                        (_, Err(error)) => found = Some(What::PropertyError(i as u32, error)),
                        (Kind::Always, Ok(false)) => found = Some(What::Violation(i as u32)),
                        (Kind::Sometimes, Ok(true)) => witnessed.push(i),
                        _ => {}
                    }
                    if found.is_some() {
                        break;
                    }
                }
                // One thread records no witness of a world whose property
                // code failed: the error ends the search first.
                if !matches!(found, Some(What::PropertyError(..))) {
                    for &i in &witnessed {
                        first_witness[i] = Some(first_witness[i].map_or(key, |w| w.min(key)));
                    }
                }
                checked = earliest(checked, found.map(|what| Event { key, what }));
            }
            for &fp in &fresh.fps {
                self.seen.insert(fp);
            }

            // Round 2: new worlds to their ranking workers; counts, events
            // and witnesses to all.
            let mut out = self.outs();
            let mut counts = vec![0u64; self.peers];
            // What this worker ranks itself skips the wire.
            let mut mine: Vec<(Key, u32, Fingerprint)> = Vec::new();
            for k in 0..fresh.len() {
                let key = fresh.keys[k];
                let r = range_of(key.parent, lo, hi, self.peers);
                counts[r] += 1;
                if r == self.me {
                    mine.push((key, fresh.positions[k], fresh.fps[k]));
                    continue;
                }
                let o = &mut out[r];
                o.u8(RANK);
                o.u64(key.parent);
                o.u32(key.sub);
                o.u32(fresh.positions[k]);
                o.u128(fresh.fps[k]);
            }
            Self::broadcast(&mut out, |o| {
                o.u8(CHECKED);
                for &n in &counts {
                    o.u64(n);
                }
                write_opt_event(o, &checked);
                for &w in &first_witness {
                    write_opt_key(o, w);
                }
                o.u8(u8::from(cut));
            });
            let got = self.round(out)?;
            let mut reports = 0usize;
            let mut totals = vec![0u64; self.peers];
            let mut witness: Vec<Option<Key>> = vec![None; nprops];
            for buf in &got {
                let mut r = In::new(buf);
                while !r.done() {
                    match r.u8()? {
                        RANK => {
                            let key = Key { parent: r.u64()?, sub: r.u32()? };
                            mine.push((key, r.u32()?, r.u128()?));
                        }
                        CHECKED => {
                            reports += 1;
                            for t in totals.iter_mut() {
                                *t += r.u64()?;
                            }
                            event = earliest(event, read_opt_event(&mut r)?);
                            for w in witness.iter_mut() {
                                if let Some(k) = read_opt_key(&mut r)? {
                                    *w = Some(w.map_or(k, |w| w.min(k)));
                                }
                            }
                            cut |= r.u8()? != 0;
                        }
                        t => return Err(format!("internal: record {t} in round 2 of a level")),
                    }
                }
            }
            self.complete(reports, 2)?;
            let new_total: u64 = totals.iter().sum();
            let offsets: Vec<u64> = totals
                .iter()
                .scan(level.base, |at, &n| {
                    let first = *at;
                    *at += n;
                    Some(first)
                })
                .collect();

            // Round 3: ids, in one-thread order, back to the owners; the
            // key of the world one past `states_max`, to all.
            mine.sort_unstable_by_key(|m| m.0);
            let mut out = self.outs();
            let first = offsets[self.me];
            let mut block = Block { first, parents: Vec::with_capacity(mine.len()), positions: Vec::new() };
            let mut ids = vec![u64::MAX; fresh.len()];
            for (i, &(key, position, fp)) in mine.iter().enumerate() {
                block.parents.push(key.parent);
                block.positions.push(position);
                let to = owner(fp, self.peers);
                if to == self.me {
                    let k = *fresh.index.get(&fp).ok_or("internal: this worker ranked a world it lost")?;
                    ids[k] = first + i as u64;
                    continue;
                }
                let o = &mut out[to];
                o.u8(ID);
                o.u128(fp);
                o.u64(first + i as u64);
            }
            if let Some(m) = self.c.options.states_max
                && m >= first
                && m < first + mine.len() as u64
            {
                let key = mine[(m - first) as usize].0;
                Self::broadcast(&mut out, |o| {
                    o.u8(CAP);
                    o.u64(key.parent);
                    o.u32(key.sub);
                });
            }
            if !block.parents.is_empty() {
                self.links.push(block);
            }
            for (r, &n) in totals.iter().enumerate() {
                if n > 0 {
                    self.blocks.push((offsets[r], n, r as u32));
                }
            }
            drop(mine);
            let got = self.round(out)?;
            for buf in &got {
                let mut r = In::new(buf);
                while !r.done() {
                    match r.u8()? {
                        ID => {
                            let fp = r.u128()?;
                            let id = r.u64()?;
                            let k =
                                *fresh.index.get(&fp).ok_or("internal: an id for a world this worker does not own")?;
                            ids[k] = id;
                        }
                        CAP => {
                            let key = Key { parent: r.u64()?, sub: r.u32()? };
                            event = earliest(event, Some(Event { key, what: What::Cap }));
                        }
                        t => return Err(format!("internal: record {t} in round 3 of a level")),
                    }
                }
            }

            // The first witnesses of this level that come before the stop.
            let stop = event;
            let new_witnesses: Vec<(usize, Key)> = witness
                .iter()
                .enumerate()
                .filter_map(|(i, w)| w.map(|k| (i, k)))
                .filter(|&(i, k)| match &stop {
                    None => true,
                    // At the stop's own world, only a violation keeps the
                    // witnesses of the properties checked before it.
                    Some(s) => k < s.key || (k == s.key && matches!(s.what, What::Violation(q) if (i as u32) < q)),
                })
                .collect();

            // Round 4, when the search stops here or a property is first
            // witnessed: counts before the stop, and ids of the worlds
            // that end traces.
            let mut stop_id = None;
            let mut before = (0u64, 0u64);
            if stop.is_some() || !new_witnesses.is_empty() {
                let mut out = self.outs();
                let (mut successors_before, mut new_before) = (0u64, 0u64);
                let mut found_stop = None;
                if let Some(s) = &stop {
                    successors_before = successors
                        .iter()
                        .zip(&self.frontier.ids)
                        .filter(|(_, id)| **id < s.key.parent)
                        .map(|(n, _)| u64::from(*n))
                        .sum();
                    new_before = fresh.keys.iter().filter(|&&k| k < s.key).count() as u64;
                    if s.discovered() {
                        found_stop = fresh.keys.iter().position(|&k| k == s.key).map(|k| ids[k]);
                    }
                }
                let mine_witnessed: Vec<(u32, u64)> = new_witnesses
                    .iter()
                    .filter_map(|&(i, key)| fresh.keys.iter().position(|&k| k == key).map(|k| (i as u32, ids[k])))
                    .collect();
                Self::broadcast(&mut out, |o| {
                    o.u8(BEFORE);
                    o.u64(successors_before);
                    o.u64(new_before);
                    o.opt_u64(found_stop);
                    o.u32(mine_witnessed.len() as u32);
                    for &(i, id) in &mine_witnessed {
                        o.u32(i);
                        o.u64(id);
                    }
                });
                let got = self.round(out)?;
                let mut reports = 0usize;
                for buf in &got {
                    let mut r = In::new(buf);
                    while !r.done() {
                        match r.u8()? {
                            BEFORE => {
                                reports += 1;
                                before.0 += r.u64()?;
                                before.1 += r.u64()?;
                                if let Some(id) = r.opt_u64()? {
                                    stop_id = Some(id);
                                }
                                for _ in 0..r.u32()? {
                                    let i = r.u32()? as usize;
                                    let id = r.u64()?;
                                    if i < nprops {
                                        self.witness_ids[i] = Some(id);
                                        self.c.unwitnessed[i] = false;
                                    }
                                }
                            }
                            t => return Err(format!("internal: record {t} in round 4 of a level")),
                        }
                    }
                }
                self.complete(reports, 4)?;
            }

            if let Some(s) = stop {
                // One thread's counts at the event: what came before it in
                // BFS order, and the successor it is at.
                let at = if s.key.sub != SUB_ERROR && s.key.sub != SUB_TERMINAL { u64::from(s.key.sub) } else { 0 };
                self.c.generated = level.generated_before + before.0 + at;
                self.c.distinct = level.base + before.1 + u64::from(s.discovered());
                self.c.depth = level.depth_before + u32::from(self.c.distinct > level.base);
                if terminal_first.is_some_and(|p| Key { parent: p, sub: SUB_TERMINAL } <= s.key) {
                    self.c.terminal_checked = true;
                }
                // An expansion's error names the action that failed: the
                // step is taken again where the trace ends.
                let expand_again = matches!(s.what, What::ExpandError(_));
                let target = match s.what {
                    What::Cap => None,
                    What::Violation(_) | What::PropertyError(..) => {
                        Some(stop_id.ok_or("internal: no worker owns the world the search stopped at")?)
                    }
                    _ => Some(s.key.parent),
                };
                let end = match s.what {
                    What::Cap => End::Incomplete(format!(
                        "states_max = {} reached",
                        self.c.options.states_max.unwrap_or_default()
                    )),
                    What::Violation(i) => {
                        let (property, kind) = self.c.property(i as usize);
                        End::Violation { property, kind, path: Vec::new() }
                    }
                    What::PropertyError(_, error) | What::TerminalError(error) => {
                        End::Error { error, path: Vec::new(), failed: None }
                    }
                    What::ExpandError(error) => End::Error { error, path: Vec::new(), failed: None },
                    What::Terminal(property, kind) => End::Violation { property, kind, path: Vec::new() },
                };
                return self.finish_with(end, target, expand_again);
            }
            self.c.generated += generated_level;
            self.c.distinct += new_total;
            if new_total > 0 {
                self.c.depth += 1;
            }
            self.c.terminal_checked |= terminal_first.is_some();
            if last_level {
                return self.finish(
                    if cut {
                        End::Incomplete(format!("depth_max = {} reached with worlds left to explore", self.c.depth))
                    } else {
                        End::Complete
                    },
                    None,
                );
            }
            if new_total == 0 {
                return self.finish(End::Complete, None);
            }
            // The next level: the worlds this worker owns, in id order.
            let mut order: Vec<usize> = (0..fresh.len()).collect();
            order.sort_unstable_by_key(|&k| ids[k]);
            let mut next = Worlds::default();
            for k in order {
                if ids[k] == u64::MAX {
                    return Err("internal: a new world was given no id".to_string());
                }
                next.push(ids[k], fresh.worlds.get(k).1);
            }
            self.frontier = next;
            (lo, hi) = (hi, hi + new_total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, owner, range_of};

    #[test]
    fn owners_and_ranges_cover_every_worker() {
        for peers in [1usize, 2, 3, 7] {
            let mut hit = vec![false; peers];
            for i in 0u128..10_000 {
                let fp = i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
                hit[owner(fp, peers)] = true;
            }
            assert!(hit.iter().all(|&h| h), "{peers} workers: {hit:?}");
            let ranges: Vec<usize> = (10..17).map(|p| range_of(p, 10, 17, peers)).collect();
            assert!(ranges.windows(2).all(|w| w[0] <= w[1]) && ranges.iter().all(|&r| r < peers));
        }
        assert!(Key { parent: 1, sub: u32::MAX } < Key { parent: 2, sub: 0 });
    }
}

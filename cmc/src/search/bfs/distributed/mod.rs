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
mod level;
mod trace;
mod wire;
mod worlds;

use crate::core::Core;
use crate::engine::Engine;
use crate::model::{Model, ModelError};
use crate::report::Report;
use crate::search::{Checker, Control, CoreExplorer, DEADLOCK, End, Explore, FpSet, Options, Search};
use wire::{In, Out};
use worlds::{Block, Worlds, owner};

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
    /// The workers do not all check the same model, properties and
    /// options. Every worker finds it in the same first round, so all end
    /// with it alike.
    #[error("distributed search refused: {0}")]
    Refused(String),
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
        run.hello()?;
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
    /// Every worker hears every other, so when one differs all refuse.
    fn hello(&mut self) -> Result<(), DistributedError> {
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
        let got = self.round(out).map_err(DistributedError::Peers)?;
        for (w, buf) in got.iter().enumerate() {
            let mut r = In::new(buf);
            let tag = r.u8().map_err(DistributedError::Peers)?;
            let theirs = r.u64().map_err(DistributedError::Peers)?;
            if tag != HELLO || !r.done() {
                return Err(DistributedError::Peers(format!(
                    "worker {w} sent worker {} something other than its hello",
                    self.me
                )));
            }
            if theirs != digest {
                return Err(DistributedError::Refused(format!(
                    "worker {w} checks another model than worker {} (its settings, properties or options differ)",
                    self.me
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::event::Key;
    use super::worlds::{owner, range_of};

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

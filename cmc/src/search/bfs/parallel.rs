//! Breadth-first search on several threads, with exactly the counts,
//! verdict and trace of one thread.
//!
//! A level is expanded in batches of worlds, each batch in three phases
//! spread over the threads, then merged on the calling thread:
//!
//! 1. *Expand.* Threads take chunks of the batch's worlds and compute
//!    their successors. A successor that is not a self-loop, nor met
//!    before in its chunk, is a *candidate*, kept with its place in BFS
//!    order: its world, and its rank among that world's successors. A
//!    chunk stops at the first world whose expansion fails or that ends
//!    the search as a world with no successor.
//! 2. *Insert.* Each thread takes a partition of the seen set's shards and
//!    inserts the candidates that fall in it, chunk after chunk in order,
//!    one probe each (a lookup that inserts what it does not find): a
//!    candidate seen before loses, and of several candidates with one new
//!    fingerprint the first in BFS order wins, as it would on one thread.
//!    On the last level the candidates are only looked up.
//! 3. *Check.* Threads take chunks again and store each winner's world:
//!    a small one phase 1 kept, a large one made again from its parent
//!    and its action (copying every candidate's large world costs more
//!    than making the few winners twice), checked to have the fingerprint
//!    it had. Then they evaluate its properties; a winner that fails one,
//!    witnesses one or whose property fails to evaluate is marked, to be
//!    checked again in order.
//!
//! The merge walks the chunks in order: it numbers the winners, records
//! their parent links and the next level, counts generated states, checks
//! the marked winners again (with the `sometimes` properties still
//! unwitnessed at that point), and stops at the first thing that ends the
//! search in BFS order: a failed expansion, a violation, `states_max`.
//! Every count there is the one-thread count. Nothing depends on which
//! thread did what, so the result is the same whatever the thread count.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::store::{Level, Link};
use super::{Bfs, Found, LevelRun, Levels, OneThread};
use crate::property::Kind;
use crate::search::fpset::{SHARDS, Shard, shard_of};
use crate::search::{End, Explore, FpHasher, terminal};

/// The most worlds per chunk, the unit of work of phases 1 and 3. A
/// smaller level gets smaller chunks, [`CHUNKS_PER_THREAD`] per thread.
const CHUNK_WORLDS_MAX: usize = 256;
/// Chunks per thread in a level too small to fill a batch, for balance.
const CHUNKS_PER_THREAD: usize = 8;
/// Chunks per batch: a batch's candidates are held in memory at once.
const BATCH_CHUNKS: usize = 64;
/// Partitions of the seen set's shards, the unit of work of phase 2.
const PARTS: usize = 16;
/// Phase 1 keeps a candidate's stored world up to this size, for phase 3 to
/// copy if it wins; a larger one is made again (about a cache line: below,
/// a copy costs less than a step).
const KEPT_BYTES_MAX: usize = 64;
/// A level with fewer worlds is expanded on one thread: starting threads
/// would cost more than it saves.
const PARALLEL_MIN: usize = 64;
/// How far ahead phase 2 prefetches the buckets of the candidates it
/// inserts.
const LOOKAHEAD: usize = 16;

/// Several threads' worth of explorers and their buffers, kept across
/// levels.
pub(super) struct Threads<E: Explore> {
    /// One explorer per thread but the calling one, which uses the search's.
    workers: Vec<E>,
    /// One working space per thread, the calling one's first.
    works: Vec<Work<E::World, E::Action>>,
    chunks: Vec<Chunk<E::Action>>,
    /// Phase 2's winners: by partition, then by chunk, candidate indices.
    won: Vec<Vec<Vec<u32>>>,
    /// For levels too small to share.
    one: OneThread<E::World, E::Action>,
    /// The calling thread's world for checking marked winners again.
    world: E::World,
}

/// A thread's working space.
struct Work<W, A> {
    world: W,
    scratch: W,
    actions: Vec<A>,
    stored: Vec<u8>,
    /// Successors of one world, back to back.
    out: Vec<u8>,
    succ: Vec<(u128, u32, usize)>,
    /// The candidates of the chunk being expanded: a successor found twice
    /// in one chunk is a candidate once, the first time.
    local: HashSet<u128, BuildHasherDefault<FpHasher>>,
}

/// A successor that may be new: not a self-loop, and the first of its
/// fingerprint in its chunk.
struct Candidate {
    fp: u128,
    /// Its world's index in the level.
    k: u32,
    /// Its rank among the world's successors.
    nth: u32,
    /// The action's position in the world's action list.
    position: u32,
    /// Where its stored world ends in [`Chunk::kept`], or [`NOT_KEPT`].
    kept: u32,
}

/// [`Candidate::kept`] of a world too large to keep.
const NOT_KEPT: u32 = u32::MAX;

/// What ends the search at a world of a chunk, before any of its successors.
enum Event<A> {
    /// The world's expansion failed (a step, a limit, a panic).
    Error { error: String, failed: Option<A> },
    /// A world with no successor fails an `eventually` property or deadlock.
    Terminal { property: String, kind: Kind },
    /// A world with no successor whose `eventually` property failed to evaluate.
    TerminalError(String),
}

/// One chunk of a batch: what its phases found.
struct Chunk<A> {
    range: Range<usize>,
    /// Successors per world, for the worlds before the event.
    counts: Vec<u32>,
    candidates: Vec<Candidate>,
    /// The small candidates' stored worlds, back to back (phase 1).
    kept: Vec<u8>,
    /// The winners' stored worlds, back to back (phase 3), and where each
    /// ends.
    bytes: Vec<u8>,
    ends: Vec<u32>,
    /// A winner whose world could not be made again: its rank and why.
    remade: Option<(usize, String)>,
    /// Candidate indices, by partition of the seen set.
    by_part: Vec<Vec<u32>>,
    /// Their fingerprints, beside them: phase 2 reads both in order, where
    /// reading the candidates themselves would miss the cache.
    fps_by_part: Vec<Vec<u128>>,
    /// The first world that ends the search, and how.
    event: Option<(usize, Event<A>)>,
    /// The first world with no successor checked (and passed).
    terminal_at: Option<usize>,
    /// The winners, candidate indices in BFS order (phase 3).
    winners: Vec<u32>,
    /// Indices into `winners` to check again in the merge.
    marked: Vec<u32>,
}

impl<A> Chunk<A> {
    fn new() -> Self {
        Chunk {
            range: 0..0,
            counts: Vec::new(),
            candidates: Vec::new(),
            kept: Vec::new(),
            bytes: Vec::new(),
            ends: Vec::new(),
            remade: None,
            by_part: (0..PARTS).map(|_| Vec::new()).collect(),
            fps_by_part: (0..PARTS).map(|_| Vec::new()).collect(),
            event: None,
            terminal_at: None,
            winners: Vec::new(),
            marked: Vec::new(),
        }
    }

    fn reset(&mut self, range: Range<usize>) {
        self.range = range;
        self.counts.clear();
        self.candidates.clear();
        self.kept.clear();
        self.bytes.clear();
        self.ends.clear();
        self.remade = None;
        self.by_part.iter_mut().for_each(Vec::clear);
        self.fps_by_part.iter_mut().for_each(Vec::clear);
        self.event = None;
        self.terminal_at = None;
        self.winners.clear();
        self.marked.clear();
    }

    /// The stored world of the winner of rank `rank`.
    fn winner_bytes(&self, rank: usize) -> &[u8] {
        let start = if rank == 0 { 0 } else { self.ends[rank - 1] as usize };
        &self.bytes[start..self.ends[rank] as usize]
    }
}

/// Phase 2's unit of work: a partition's number, its shards, and its
/// winners by chunk.
type Part<'a> = (usize, &'a mut [Shard], &'a mut Vec<Vec<u32>>);

/// Phase 3's unit of work: a chunk and its index in the batch.
type Numbered<'a, A> = (usize, &'a mut Chunk<A>);

fn part_of(fp: u128) -> usize {
    shard_of(fp) / (SHARDS / PARTS)
}

impl<E> Threads<E>
where
    E: Explore + Send,
    E::World: Send,
    E::Action: Send + Sync,
{
    /// Explorers for `threads` threads; `None` when `threads` is 1 or the
    /// front end searches on one thread only.
    pub(super) fn new(explorer: &E, threads: usize) -> Option<Self> {
        if threads <= 1 {
            return None;
        }
        let workers = (1..threads).map(|_| explorer.worker()).collect::<Option<Vec<E>>>()?;
        let works = (0..threads)
            .map(|_| Work {
                world: explorer.empty_world(),
                scratch: explorer.empty_world(),
                actions: Vec::new(),
                stored: Vec::new(),
                out: Vec::new(),
                succ: Vec::new(),
                local: HashSet::default(),
            })
            .collect();
        Some(Threads {
            workers,
            works,
            chunks: (0..BATCH_CHUNKS).map(|_| Chunk::new()).collect(),
            won: (0..PARTS).map(|_| (0..BATCH_CHUNKS).map(|_| Vec::new()).collect()).collect(),
            one: OneThread::new(explorer),
            world: explorer.empty_world(),
        })
    }

    /// Runs `job` on every thread, the calling one included, each with its
    /// explorer and working space.
    fn on_threads<F>(main: &mut E, workers: &mut [E], works: &mut [Work<E::World, E::Action>], job: F)
    where
        F: Fn(&mut E, &mut Work<E::World, E::Action>) + Sync,
    {
        let (first, rest) = works.split_first_mut().expect("one working space per thread");
        std::thread::scope(|scope| {
            for (e, w) in workers.iter_mut().zip(rest.iter_mut()) {
                let job = &job;
                scope.spawn(move || job(e, w));
            }
            job(main, first);
        });
    }
}

impl<E> Levels<E> for Threads<E>
where
    E: Explore + Send,
    E::World: Send,
    E::Action: Send + Sync,
{
    fn expand_level(&mut self, bfs: &mut Bfs<'_, E>, run: &mut LevelRun<'_>) -> Result<(), Found<E::Action>> {
        let len = run.current.len();
        if len < PARALLEL_MIN {
            return self.one.expand_range(bfs, run, 0..len);
        }
        let threads = self.works.len();
        let chunk_worlds = len.div_ceil(threads * CHUNKS_PER_THREAD).clamp(1, CHUNK_WORLDS_MAX);
        let batch = chunk_worlds * BATCH_CHUNKS;
        let level = bfs.c.depth;
        let mut lo = 0;
        while lo < len {
            let hi = (lo + batch).min(len);
            bfs.c.level = Some((level, (len - lo) as u64));
            let chunks = (hi - lo).div_ceil(chunk_worlds);
            for (i, chunk) in self.chunks[..chunks].iter_mut().enumerate() {
                let start = lo + i * chunk_worlds;
                chunk.reset(start..(start + chunk_worlds).min(hi));
            }
            self.expand(bfs, run, chunks);
            run.cut |= self.insert(bfs, chunks, run.last_level);
            if !run.last_level {
                self.check(bfs, run, chunks);
            }
            self.merge(bfs, run, chunks)?;
            lo = hi;
        }
        Ok(())
    }
}

impl<E> Threads<E>
where
    E: Explore + Send,
    E::World: Send,
    E::Action: Send + Sync,
{
    /// Phase 1: every chunk's successors, and its candidates.
    fn expand(&mut self, bfs: &mut Bfs<'_, E>, run: &LevelRun<'_>, chunks: usize) {
        let next = AtomicUsize::new(0);
        let cells: Vec<Mutex<&mut Chunk<E::Action>>> = self.chunks[..chunks].iter_mut().map(Mutex::new).collect();
        let c = &mut *bfs.c;
        let (properties, deadlock) = (&c.properties, c.options.deadlock);
        let current = run.current;
        Self::on_threads(&mut c.explorer, &mut self.workers, &mut self.works, |e, w| {
            each(&cells, &next, |chunk| expand_chunk(e, w, current, chunk, properties, deadlock));
        });
    }

    /// Phase 2: candidates inserted, partition by partition, in BFS order;
    /// on the last level only looked up. Returns whether the last level
    /// has a successor not seen (the bound hid it).
    fn insert(&mut self, bfs: &mut Bfs<'_, E>, chunks: usize, last_level: bool) -> bool {
        let next = AtomicUsize::new(0);
        let cut = AtomicBool::new(false);
        let per_part = SHARDS / PARTS;
        let parts: Vec<Mutex<Part<'_>>> = bfs
            .seen
            .shards_mut()
            .chunks_mut(per_part)
            .zip(self.won.iter_mut())
            .enumerate()
            .map(|(p, (shards, won))| Mutex::new((p, shards, won)))
            .collect();
        let all = &self.chunks[..chunks];
        Self::on_threads(&mut bfs.c.explorer, &mut self.workers, &mut self.works, |_, _| {
            each(&parts, &next, |(p, shards, won)| {
                for (chunk, won) in all.iter().zip(won.iter_mut()) {
                    won.clear();
                    let mine = &chunk.by_part[*p];
                    let fps = &chunk.fps_by_part[*p];
                    let fp_of = |j: usize| fps[j];
                    for j in 0..mine.len().min(LOOKAHEAD) {
                        shards[shard_of(fp_of(j)) % per_part].prefetch(fp_of(j));
                    }
                    for (j, &i) in mine.iter().enumerate() {
                        if j + LOOKAHEAD < mine.len() {
                            let ahead = fp_of(j + LOOKAHEAD);
                            shards[shard_of(ahead) % per_part].prefetch(ahead);
                        }
                        let fp = fp_of(j);
                        let shard = &mut shards[shard_of(fp) % per_part];
                        if last_level {
                            if !shard.contains_fp(fp) {
                                cut.store(true, Ordering::Relaxed);
                            }
                        } else if shard.insert_fp(fp) {
                            won.push(i);
                        }
                    }
                }
            });
        });
        cut.into_inner()
    }

    /// Phase 3: the winners of every chunk, in order, made again, and their
    /// properties.
    fn check(&mut self, bfs: &mut Bfs<'_, E>, run: &LevelRun<'_>, chunks: usize) {
        let next = AtomicUsize::new(0);
        let won = &self.won;
        let cells: Vec<Mutex<Numbered<'_, E::Action>>> =
            self.chunks[..chunks].iter_mut().enumerate().map(Mutex::new).collect();
        let c = &mut *bfs.c;
        let (properties, unwitnessed) = (&c.properties, &c.unwitnessed);
        let current = run.current;
        Self::on_threads(&mut c.explorer, &mut self.workers, &mut self.works, |e, w| {
            each(&cells, &next, |(index, chunk)| {
                chunk.winners.extend(won.iter().flat_map(|by_chunk| by_chunk[*index].iter().copied()));
                chunk.winners.sort_unstable();
                check_chunk(e, w, current, chunk, properties, unwitnessed);
            });
        });
    }

    /// The calling thread's walk over the chunks in BFS order.
    fn merge(&mut self, bfs: &mut Bfs<'_, E>, run: &mut LevelRun<'_>, chunks: usize) -> Result<(), Found<E::Action>> {
        let first_id = run.current.first_id();
        let states_max = bfs.c.options.states_max;
        for chunk in &self.chunks[..chunks] {
            let start = chunk.range.start;
            // Generated states before world `k` of this chunk.
            let mut counted = bfs.c.generated;
            let mut counted_to = start;
            let mut marked = chunk.marked.iter().peekable();
            // The chunk's winners go to the next level at once, at its end:
            // a stop before then ends the search, which needs no next level.
            let first_new = bfs.parents.len() as u32;
            let mut level_started = run.next.len() > 0;
            for (rank, &ci) in chunk.winners.iter().enumerate() {
                let cand = &chunk.candidates[ci as usize];
                while counted_to < cand.k as usize {
                    counted += u64::from(chunk.counts[counted_to - start]);
                    counted_to += 1;
                }
                // One thread would have stopped right after this successor.
                let generated_here = counted + u64::from(cand.nth) + 1;
                if let Some(m) = states_max
                    && bfs.c.distinct >= m
                {
                    bfs.c.generated = generated_here;
                    return Err(Found::End(End::Incomplete(format!("states_max = {m} reached"))));
                }
                if !level_started {
                    bfs.c.depth += 1;
                    level_started = true;
                }
                let parent = first_id + cand.k;
                let id = match bfs.record(Link::Step { parent, position: cand.position }) {
                    Ok(id) => id,
                    Err(found) => {
                        bfs.c.generated = generated_here;
                        return Err(found);
                    }
                };
                if let Some((at, error)) = &chunk.remade
                    && *at == rank
                {
                    bfs.c.generated = generated_here;
                    return Err(Found::Error { error: error.clone(), id: parent, failed: None });
                }
                if marked.next_if(|&&r| r as usize == rank).is_some() {
                    let bytes = chunk.winner_bytes(rank);
                    let checked = match bfs.c.explorer.load(bytes, &mut self.world) {
                        Ok(()) => bfs.check(&self.world, id),
                        Err(e) => Err(Found::Error {
                            error: format!("internal: a successor does not load: {e}"),
                            id: parent,
                            failed: None,
                        }),
                    };
                    if let Err(found) = checked {
                        bfs.c.generated = generated_here;
                        return Err(found);
                    }
                }
            }
            run.next.extend(first_new, &chunk.bytes, &chunk.ends);
            if chunk.terminal_at.is_some() {
                bfs.c.terminal_checked = true;
            }
            bfs.c.generated += chunk.counts.iter().map(|&n| u64::from(n)).sum::<u64>();
            if let Some((k, event)) = &chunk.event {
                let id = first_id + *k as u32;
                return Err(match event {
                    Event::Error { error, failed } => Found::Error { error: error.clone(), id, failed: *failed },
                    Event::Terminal { property, kind } => {
                        bfs.c.terminal_checked = true;
                        Found::Violation { property: property.clone(), kind: *kind, id }
                    }
                    Event::TerminalError(error) => {
                        bfs.c.terminal_checked = true;
                        Found::Error { error: error.clone(), id, failed: None }
                    }
                });
            }
        }
        if bfs.c.generated >= run.next_poll {
            run.next_poll = bfs.c.generated + bfs.c.explorer.poll_every();
            if let Some(reason) = run.control.poll(&bfs.c.progress()) {
                return Err(Found::End(End::Incomplete(reason)));
            }
        }
        Ok(())
    }
}

/// Runs `job` on units of work taken in turn from `cells` (`next` counts
/// the units taken, by every thread) until none is left.
fn each<T>(cells: &[Mutex<T>], next: &AtomicUsize, mut job: impl FnMut(&mut T)) {
    while let Some(cell) = cells.get(next.fetch_add(1, Ordering::Relaxed)) {
        job(&mut cell.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// Phase 1 for one chunk: expands its worlds in order and keeps their
/// candidates.
fn expand_chunk<E: Explore>(
    e: &mut E,
    w: &mut Work<E::World, E::Action>,
    current: &Level,
    chunk: &mut Chunk<E::Action>,
    properties: &[(String, Kind)],
    deadlock: bool,
) {
    w.local.clear();
    for j in chunk.range.clone() {
        let (id, bytes) = current.get(j);
        if let Err(err) = e.load(bytes, &mut w.world) {
            let error = format!("internal: stored world {id} does not load: {err}");
            chunk.event = Some((j, Event::Error { error, failed: None }));
            return;
        }
        let fp = e.fingerprint_stored(&w.world, bytes, &mut w.stored);
        w.out.clear();
        w.succ.clear();
        if let Err(error) = e.expand(&w.world, bytes, fp, &mut w.scratch, &mut w.actions, &mut w.out, &mut w.succ) {
            chunk.event = Some((j, Event::Error { error, failed: e.failed_action() }));
            return;
        }
        e.retire(bytes);
        if w.succ.is_empty() {
            match terminal(e, properties, deadlock, &w.world) {
                Ok(None) => {
                    chunk.terminal_at.get_or_insert(j);
                }
                Ok(Some((property, kind))) => {
                    chunk.event = Some((j, Event::Terminal { property, kind }));
                    return;
                }
                Err(error) => {
                    chunk.event = Some((j, Event::TerminalError(error)));
                    return;
                }
            }
        }
        chunk.counts.push(w.succ.len() as u32);
        let mut from = 0;
        for (nth, &(s, position, to)) in w.succ.iter().enumerate() {
            let bytes = &w.out[from..to];
            from = to;
            // A self-loop: the expanded world is stored already. A
            // successor met before in this chunk is a candidate already.
            if s == fp || !w.local.insert(s) {
                continue;
            }
            let kept = if bytes.len() <= KEPT_BYTES_MAX {
                chunk.kept.extend_from_slice(bytes);
                chunk.kept.len() as u32
            } else {
                NOT_KEPT
            };
            chunk.by_part[part_of(s)].push(chunk.candidates.len() as u32);
            chunk.fps_by_part[part_of(s)].push(s);
            chunk.candidates.push(Candidate { fp: s, k: j as u32, nth: nth as u32, position, kept });
        }
    }
}

/// Phase 3 for one chunk: stores each winner's world, kept or made again
/// from its parent (loaded once for all of its winners) and its action,
/// and marks the winners to check again in order. Stops at a winner that
/// cannot be made again, or not with the fingerprint it had: its core is
/// not deterministic, or a step failed that had not before.
fn check_chunk<E: Explore>(
    e: &mut E,
    w: &mut Work<E::World, E::Action>,
    current: &Level,
    chunk: &mut Chunk<E::Action>,
    properties: &[(String, Kind)],
    unwitnessed: &[bool],
) {
    let mut parent = None;
    // Winners are in candidate order: the kept worlds before the next
    // winner end at `kept_to`, counted up to candidate `scanned`.
    let (mut scanned, mut kept_to) = (0, 0);
    for rank in 0..chunk.winners.len() {
        let ci = chunk.winners[rank] as usize;
        for c in &chunk.candidates[scanned..ci] {
            if c.kept != NOT_KEPT {
                kept_to = c.kept;
            }
        }
        scanned = ci;
        let cand = &chunk.candidates[ci];
        if cand.kept != NOT_KEPT {
            let world = &chunk.kept[kept_to as usize..cand.kept as usize];
            chunk.bytes.extend_from_slice(world);
            chunk.ends.push(chunk.bytes.len() as u32);
            if e.load(world, &mut w.scratch).is_err() || notable(e, properties, unwitnessed, &w.scratch) {
                chunk.marked.push(rank as u32);
            }
            continue;
        }
        let remade = (|| {
            if parent != Some(cand.k) {
                let (_, bytes) = current.get(cand.k as usize);
                e.load(bytes, &mut w.world)?;
                e.actions(&w.world, &mut w.actions)?;
                parent = Some(cand.k);
            }
            let action = w.actions.get(cand.position as usize).ok_or("its action is gone")?;
            if !e.apply(&w.world, action, &mut w.scratch)? {
                return Err("its action is not enabled".to_string());
            }
            if e.store(&w.scratch, &mut chunk.bytes) != cand.fp {
                return Err("it has another fingerprint".to_string());
            }
            Ok(())
        })();
        if let Err(why) = remade {
            chunk.remade = Some((rank, format!("internal: a new world made again from its parent: {why}")));
            return;
        }
        chunk.ends.push(chunk.bytes.len() as u32);
        if notable(e, properties, unwitnessed, &w.scratch) {
            chunk.marked.push(rank as u32);
        }
    }
}

/// Whether a new world must be checked again in order: a property fails or
/// fails to evaluate, or a `sometimes` property unwitnessed when the batch
/// began holds. One thread's check of a world not marked would find
/// nothing either: its unwitnessed properties are a subset of these.
fn notable<E: Explore>(e: &E, properties: &[(String, Kind)], unwitnessed: &[bool], world: &E::World) -> bool {
    properties.iter().enumerate().any(|(i, (_, kind))| match kind {
        Kind::Always => !matches!(e.holds(i, world), Ok(true)),
        Kind::Sometimes => unwitnessed[i] && !matches!(e.holds(i, world), Ok(false)),
        Kind::Eventually => false,
    })
}

//! Checkpoints: a quiescent node process kept as a *snapshot*, parked in
//! the call it blocked in, and forked whenever an action needs that
//! process again, instead of restarting every node and replaying the
//! actions that led to it.
//!
//! A [`Snapshot`] is one parked process and what the supervisor keeps about
//! it outside the world's bytes ([`ProcIo`]: partial records, the recovery
//! record and how much of it was read). A [`Checkpoint`] is every node's
//! snapshot in one quiescent world, with the world; checkpoints share the
//! snapshots of the nodes an action did not touch. The [`Store`] keeps
//! checkpoints by the actions that reach them, bounded by the number of
//! processes alive (`snapshots_max`); past it, the least recently used are
//! evicted, and a world whose checkpoint was evicted is rebuilt from its
//! nearest kept ancestor (the engine does that).
//!
//! A snapshot is a child of the supervisor's thread (`CLONE_PARENT`) with
//! the death signal set, so none outlives the checker; dropping the last
//! reference kills and reaps it.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::rc::Rc;
use std::time::Duration;

use nix::libc;

use super::action::ProcessAction;
use super::forkserver::{self, ForkError, Parked};
use super::world::ProcessWorld;

/// What a store's snapshots share: their count.
#[derive(Default)]
pub struct Pool {
    live: Cell<usize>,
}

impl Pool {
    /// Snapshots alive.
    pub fn live(&self) -> usize {
        self.live.get()
    }
}

/// One parked node process.
pub struct Snapshot {
    parked: Option<RefCell<Parked>>,
    /// What the snapshots of one store share.
    pool: Rc<Pool>,
}

impl Snapshot {
    pub fn new(parked: Parked, pool: &Rc<Pool>) -> Snapshot {
        pool.live.set(pool.live.get() + 1);
        Snapshot { parked: Some(RefCell::new(parked)), pool: pool.clone() }
    }

    fn parked(&self) -> &RefCell<Parked> {
        self.parked.as_ref().unwrap_or_else(|| unreachable!("taken only on drop"))
    }

    /// A fork of this process, held in the same call.
    pub fn fork(&self, listener: BorrowedFd<'_>, timeout: Duration) -> Result<Parked, ForkError> {
        forkserver::fork(listener, &mut self.parked().borrow_mut(), timeout)
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.pool.live.set(self.pool.live.get() - 1);
        if let Some(p) = self.parked.take() {
            let p = p.into_inner();
            unsafe {
                libc::syscall(libc::SYS_pidfd_send_signal, p.pidfd.as_fd().as_raw_fd(), libc::SIGKILL, 0, 0);
                let mut status = 0;
                while libc::waitpid(p.pid, &mut status, 0) < 0 && nix::errno::Errno::last() == nix::errno::Errno::EINTR
                {
                }
            }
        }
    }
}

/// Every node's process in one quiescent world (`None`: exited), and the
/// world.
#[derive(Clone)]
pub struct Checkpoint {
    pub world: ProcessWorld,
    pub nodes: Vec<Option<Rc<Snapshot>>>,
}

/// Default of `snapshots_max`: processes kept parked. Each costs its page
/// tables and the pages it wrote since its fork (about 60 KiB of both for
/// the example programs, measured from `/proc/PID/smaps_rollup` and
/// `VmPTE`), so 2,048 take about 120 MiB of a 24 GiB machine and stay
/// far below its process limits. Big enough that breadth-first search of
/// the example models never evicts (their widest levels hold a few hundred
/// worlds): a world rebuilt after an eviction costs the actions from its
/// nearest kept ancestor.
pub const SNAPSHOTS_MAX_DEFAULT: usize = 2048;

/// At most this many checkpoints per process kept.
const CHECKPOINTS_PER_SNAPSHOT: usize = 4;

/// Checkpoints by the actions that reach them.
///
/// A checkpoint is kept while the search may still load its world. Once the
/// search says it will not ([`Store::retire`]), the checkpoint goes, unless
/// it is the nearest ancestor of a world whose own checkpoint was evicted:
/// then it stays, as the place to rebuild that world from, until that world
/// is rebuilt. Past the bound the newest checkpoints are evicted first:
/// breadth-first search loads its worlds in the order it found them, so the
/// newest is the one needed last (evicting the oldest, as plain LRU would,
/// evicts exactly the next world to expand); depth-first search and
/// simulation keep only the worlds on their path. Kept ancestors go last,
/// least recently used first.
///
/// Fewer processes alive make every fork and exit cheaper (the kernel's
/// reverse maps of a node's memory grow with the processes that share it),
/// so the store keeps no checkpoint it was told it will not need.
pub struct Store {
    checkpoints: HashMap<Vec<ProcessAction>, Entry>,
    /// The worlds of evicted wanted checkpoints, without processes: enough
    /// to load the world (for its invariants); its processes are rebuilt
    /// only when an action is applied to it.
    hollow: HashMap<Vec<ProcessAction>, ProcessWorld>,
    /// Wanted checkpoints by when they were kept: the newest last.
    wanted: BTreeMap<u64, Vec<ProcessAction>>,
    /// Retired checkpoints kept as rebuild sources, by last use: the least
    /// recently used first.
    sources: BTreeMap<u64, Vec<ProcessAction>>,
    snapshots_max: usize,
    tick: u64,
    /// Snapshots alive (parked in checkpoints, or held by the engine), and
    /// the killed ones not yet reaped.
    pub pool: Rc<Pool>,
    /// Checkpoints evicted so far.
    pub evictions: u64,
}

struct Entry {
    checkpoint: Checkpoint,
    tick: u64,
    retired: bool,
    /// Evicted descendants that will be rebuilt from this checkpoint.
    dependents: u32,
}

impl Store {
    pub fn new(snapshots_max: usize) -> Store {
        Store {
            checkpoints: HashMap::new(),
            hollow: HashMap::new(),
            wanted: BTreeMap::new(),
            sources: BTreeMap::new(),
            snapshots_max,
            tick: 0,
            pool: Rc::new(Pool::default()),
            evictions: 0,
        }
    }

    /// Whether checkpoints are kept at all (`snapshots_max` > 0).
    pub fn enabled(&self) -> bool {
        self.snapshots_max > 0
    }

    pub fn get(&mut self, path: &[ProcessAction]) -> Option<Checkpoint> {
        self.tick += 1;
        let tick = self.tick;
        let e = self.checkpoints.get_mut(path)?;
        if e.retired {
            let path = self.sources.remove(&e.tick).unwrap_or_else(|| path.to_vec());
            e.tick = tick;
            self.sources.insert(tick, path);
        }
        Some(e.checkpoint.clone())
    }

    /// The world of an evicted wanted checkpoint: what a rebuild of `path`
    /// must give again.
    pub fn hollow(&self, path: &[ProcessAction]) -> Option<&ProcessWorld> {
        self.hollow.get(path)
    }

    /// The world `path` reaches, if it is known: kept with its processes,
    /// or evicted while still wanted.
    pub fn world(&mut self, path: &[ProcessAction]) -> Option<ProcessWorld> {
        match self.hollow.get(path) {
            Some(w) => Some(w.clone()),
            None => self.get(path).map(|c| c.world),
        }
    }

    /// The longest proper prefix of `path` with a checkpoint, if any.
    pub fn nearest_ancestor(&self, path: &[ProcessAction]) -> Option<usize> {
        (0..path.len()).rev().find(|&k| self.checkpoints.contains_key(&path[..k]))
    }

    /// World `path` was rebuilt from its kept ancestor `path[..k]`: that
    /// ancestor has one dependent less.
    pub fn rebuilt(&mut self, path: &[ProcessAction], k: usize) {
        let Some(e) = self.checkpoints.get_mut(&path[..k]) else { return };
        e.dependents = e.dependents.saturating_sub(1);
        if e.retired && e.dependents == 0 {
            self.remove(&path[..k]);
        }
    }

    /// The search will not load the world `path` reaches again: its
    /// checkpoint goes, unless an evicted world is to be rebuilt from it.
    pub fn retire(&mut self, path: &[ProcessAction]) {
        self.tick += 1;
        let tick = self.tick;
        self.hollow.remove(path);
        let Some(e) = self.checkpoints.get_mut(path) else { return };
        if e.retired {
            return;
        }
        if e.dependents == 0 {
            self.remove(path);
            return;
        }
        let path = self.wanted.remove(&e.tick).unwrap_or_else(|| path.to_vec());
        e.tick = tick;
        e.retired = true;
        self.sources.insert(tick, path);
    }

    fn remove(&mut self, path: &[ProcessAction]) -> Option<Entry> {
        let e = self.checkpoints.remove(path)?;
        let index = if e.retired { &mut self.sources } else { &mut self.wanted };
        index.remove(&e.tick);
        Some(e)
    }

    /// Keeps `checkpoint` for `path` (wanted), then evicts until at most
    /// `snapshots_max` processes are parked (the newest is always kept).
    pub fn insert(&mut self, path: Vec<ProcessAction>, checkpoint: Checkpoint) {
        if !self.enabled() {
            return;
        }
        self.tick += 1;
        let tick = self.tick;
        self.hollow.remove(&path);
        let entry = Entry { checkpoint, tick, retired: false, dependents: 0 };
        if let Some(old) = self.checkpoints.insert(path.clone(), entry) {
            let index = if old.retired { &mut self.sources } else { &mut self.wanted };
            index.remove(&old.tick);
            if let Some(e) = self.checkpoints.get_mut(&path) {
                e.dependents = old.dependents;
            }
        }
        self.wanted.insert(tick, path);
        // Checkpoints that share every process cost only their world's
        // bytes; still, at most `CHECKPOINTS_PER_SNAPSHOT` per process.
        while self.pool.live() > self.snapshots_max
            || self.checkpoints.len() > CHECKPOINTS_PER_SNAPSHOT * self.snapshots_max
        {
            let newest = self.wanted.range(..tick).next_back().map(|(&t, _)| t);
            let victim = match newest.and_then(|t| self.wanted.remove(&t)) {
                Some(p) => {
                    // The world will be rebuilt from its nearest kept
                    // ancestor: keep that one until then.
                    if let Some(k) = self.nearest_ancestor(&p)
                        && let Some(a) = self.checkpoints.get_mut(&p[..k])
                    {
                        a.dependents += 1;
                    }
                    p
                }
                None => match self.sources.pop_first() {
                    Some((_, p)) => p,
                    None => break,
                },
            };
            if let Some(e) = self.checkpoints.remove(&victim) {
                if e.retired {
                    self.sources.remove(&e.tick);
                } else {
                    self.hollow.insert(victim, e.checkpoint.world);
                }
            }
            self.evictions += 1;
        }
    }

    /// The pids of the parked processes.
    pub fn pids(&self) -> Vec<i32> {
        let nodes = self.checkpoints.values().flat_map(|e| e.checkpoint.nodes.iter().flatten());
        nodes.map(|s| s.parked().borrow().pid).collect()
    }

    /// Kills every parked process.
    pub fn clear(&mut self) {
        self.wanted.clear();
        self.sources.clear();
        self.hollow.clear();
        self.checkpoints.clear();
    }
}

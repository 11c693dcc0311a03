//! Checkpoints: a quiescent node process kept as a *snapshot*, parked in
//! the call it blocked in, and forked whenever an action needs that
//! process again, instead of restarting every node and replaying the
//! actions that led to it.
//!
//! A [`Snapshot`] is one parked process; everything the supervisor knows
//! about it that its future depends on is in the world's bytes, so a
//! snapshot is kept by its node's part of the world and shared by every
//! world in which the node is in that state. A [`Checkpoint`] is one
//! quiescent world with a snapshot per live node, assembled by the
//! [`Store`] from the world (kept by the actions that reach it) and the
//! snapshots (kept by node state), bounded by a count and a memory
//! estimate; a world that lost a snapshot is rebuilt from its nearest
//! ancestor with all of its own (the engine does that).
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
use super::world::{Life, ProcessWorld};

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
    parked: RefCell<Parked>,
    /// What the snapshots of one store share.
    pool: Rc<Pool>,
}

impl Snapshot {
    /// Keeps `parked` as a snapshot, counted alive in `pool` until it is
    /// dropped, which kills the process.
    pub fn new(parked: Parked, pool: &Rc<Pool>) -> Snapshot {
        pool.live.set(pool.live.get() + 1);
        Snapshot { parked: RefCell::new(parked), pool: pool.clone() }
    }

    /// A fork of this process, held in the same call (see
    /// [`forkserver::fork`]).
    pub fn fork(
        &self,
        listener: BorrowedFd<'_>,
        timeout: Duration,
        stop: &dyn Fn() -> Option<String>,
    ) -> Result<Parked, ForkError> {
        forkserver::fork(listener, &mut self.parked.borrow_mut(), timeout, stop)
    }
}

impl Snapshot {
    /// Sends the process SIGKILL, without waiting for it (dropping the
    /// snapshot reaps it).
    fn kill(&self) {
        let p = self.parked.borrow();
        unsafe { libc::syscall(libc::SYS_pidfd_send_signal, p.pidfd.as_fd().as_raw_fd(), libc::SIGKILL, 0, 0) };
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.pool.live.set(self.pool.live.get() - 1);
        let p = self.parked.get_mut();
        unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, p.pidfd.as_fd().as_raw_fd(), libc::SIGKILL, 0, 0);
            let mut status = 0;
            while libc::waitpid(p.pid, &mut status, 0) < 0 && nix::errno::Errno::last() == nix::errno::Errno::EINTR {}
        }
    }
}

/// Every node's process in one quiescent world (`None`: exited), and the
/// world.
#[derive(Clone)]
pub struct Checkpoint {
    /// The world.
    pub world: ProcessWorld,
    /// Each node's parked process, in node order; `None` for a node that
    /// exited.
    pub nodes: Vec<Option<Rc<Snapshot>>>,
}

/// Default of `snapshots_max`: processes kept parked. Each costs its page
/// tables and the pages it wrote since its fork (about 60 KiB of both for
/// the example programs, measured from `/proc/PID/smaps_rollup` and
/// `VmPTE`), so 2,048 take about 120 MiB of a 24 GiB machine and stay far
/// below its process limits (`pid_max` is 32,768 here). Snapshots are kept
/// per node state, not per world, so this bounds the distinct node states
/// kept, far fewer than the worlds.
pub const SNAPSHOTS_MAX_DEFAULT: usize = 2048;

/// Default of `snapshots_mib_max`: the memory snapshots may take, as
/// estimated. A sixth of a 24 GiB machine.
pub const SNAPSHOTS_MIB_MAX_DEFAULT: u64 = 4096;

/// One new snapshot in this many has its memory measured, for the
/// estimate the memory cap is checked against.
const SAMPLE_EVERY: u64 = 32;

/// Retired worlds kept as places to rebuild from, per snapshot allowed:
/// a world without its processes is a few hundred bytes.
const SOURCES_PER_SNAPSHOT: usize = 4;

/// Snapshots by what determines them, and the worlds the search may load.
///
/// A node's process at quiescence is determined by the node's part of the
/// world (its reported state, which the manual requires to be complete, its
/// durable record, what it is blocked in, its descriptors and counters): so
/// a snapshot is kept under that key, and every world in which the node is
/// in that state shares it, whichever path reached it. A checkpoint (a
/// world with a process per live node) is not stored but assembled: the
/// world, kept by the actions that reach it, and each live node's snapshot
/// by its key.
///
/// Worlds are kept while the search may still load them (*wanted*); once it
/// says it will not ([`Store::retire`]) a world is kept a while longer, as a
/// place to rebuild its descendants from (least recently used first out,
/// at most `SOURCES_PER_SNAPSHOT` × `snapshots_max`). Past
/// `snapshots_max` processes, the least recently used snapshots are
/// evicted; a world that lost one is rebuilt from its nearest ancestor
/// whose snapshots are all kept, or from the templates, and the rebuilt
/// world must equal the one kept (the engine checks).
///
/// Fewer processes alive also make every fork cheaper: each parked process
/// holds a notification on its node's listener, and the kernel walks that
/// list on every poll.
pub struct Store {
    snapshots: HashMap<Vec<u8>, (Rc<Snapshot>, u64)>,
    /// Snapshot keys by last use: the least recently used first.
    by_use: BTreeMap<u64, Vec<u8>>,
    wanted: HashMap<Vec<ProcessAction>, ProcessWorld>,
    sources: HashMap<Vec<ProcessAction>, (ProcessWorld, u64)>,
    sources_by_use: BTreeMap<u64, Vec<ProcessAction>>,
    snapshots_max: usize,
    snapshots_bytes_max: u64,
    /// Snapshots measured, and their total size: the estimate of one.
    sampled: u64,
    sampled_bytes: u64,
    kept_new: u64,
    tick: u64,
    key: Vec<u8>,
    /// Snapshots alive (kept, or held by the engine).
    pub pool: Rc<Pool>,
    /// Snapshots evicted so far.
    pub evictions: u64,
}

impl Store {
    /// An empty store of at most `snapshots_max` snapshots taking at most
    /// `snapshots_mib_max` MiB, as estimated.
    pub fn new(snapshots_max: usize, snapshots_mib_max: u64) -> Store {
        Store {
            snapshots: HashMap::new(),
            by_use: BTreeMap::new(),
            wanted: HashMap::new(),
            sources: HashMap::new(),
            sources_by_use: BTreeMap::new(),
            snapshots_max,
            snapshots_bytes_max: snapshots_mib_max.saturating_mul(1 << 20),
            sampled: 0,
            sampled_bytes: 0,
            kept_new: 0,
            tick: 0,
            key: Vec::new(),
            pool: Rc::new(Pool::default()),
            evictions: 0,
        }
    }

    /// Whether checkpoints are kept at all (`snapshots_max` > 0).
    pub fn enabled(&self) -> bool {
        self.snapshots_max > 0
    }

    /// The world `path` reaches, if it is kept (with or without processes).
    pub fn world(&mut self, path: &[ProcessAction]) -> Option<ProcessWorld> {
        if let Some(w) = self.wanted.get(path) {
            return Some(w.clone());
        }
        self.tick += 1;
        let tick = self.tick;
        let (w, used) = self.sources.get_mut(path)?;
        let path = self.sources_by_use.remove(used).unwrap_or_else(|| path.to_vec());
        *used = tick;
        self.sources_by_use.insert(tick, path);
        Some(w.clone())
    }

    /// The checkpoint of the world `path` reaches, if its world and every
    /// live node's snapshot are kept.
    pub fn get(&mut self, path: &[ProcessAction]) -> Option<Checkpoint> {
        let world = self.world(path)?;
        let nodes = self.snapshots_of(&world)?;
        Some(Checkpoint { world, nodes })
    }

    /// Each live node's snapshot in `world`; `None` if one is not kept.
    fn snapshots_of(&mut self, world: &ProcessWorld) -> Option<Vec<Option<Rc<Snapshot>>>> {
        let mut nodes = Vec::with_capacity(world.nodes.len());
        for n in 0..world.nodes.len() {
            if world.nodes[n].life != Life::Live {
                nodes.push(None);
                continue;
            }
            nodes.push(Some(self.snapshot(world, n as u8)?));
        }
        Some(nodes)
    }

    /// The snapshot kept for node `n`'s state in `world`, if one is.
    pub fn snapshot(&mut self, world: &ProcessWorld, n: u8) -> Option<Rc<Snapshot>> {
        world.encode_node(n, &mut self.key);
        self.tick += 1;
        let tick = self.tick;
        let (snap, used) = self.snapshots.get_mut(&self.key)?;
        let key = self.by_use.remove(used).unwrap_or_else(|| self.key.clone());
        *used = tick;
        self.by_use.insert(tick, key);
        Some(snap.clone())
    }

    /// The longest proper prefix of `path` whose checkpoint is kept.
    pub fn nearest_ancestor(&mut self, path: &[ProcessAction]) -> Option<usize> {
        (0..path.len()).rev().find(|&k| {
            let Some(world) = self.world(&path[..k]) else { return false };
            self.snapshots_of(&world).is_some()
        })
    }

    /// The search will not load the world `path` reaches again: it is kept
    /// only as a place to rebuild from.
    pub fn retire(&mut self, path: &[ProcessAction]) {
        let Some((path, world)) = self.wanted.remove_entry(path) else { return };
        self.tick += 1;
        let tick = self.tick;
        self.sources_by_use.insert(tick, path.clone());
        self.sources.insert(path, (world, tick));
        while self.sources.len() > SOURCES_PER_SNAPSHOT * self.snapshots_max {
            let Some((_, oldest)) = self.sources_by_use.pop_first() else { break };
            self.sources.remove(&oldest);
        }
    }

    /// Keeps `checkpoint` for `path` (wanted); returns it with each node's
    /// process the one kept for its state (a new process whose node state
    /// has a snapshot already goes), then evicts the least recently used
    /// snapshots until at most `snapshots_max` processes are alive.
    pub fn insert(&mut self, path: Vec<ProcessAction>, checkpoint: Checkpoint) -> Checkpoint {
        if !self.enabled() {
            return checkpoint;
        }
        if let Some((_, used)) = self.sources.remove(&path) {
            self.sources_by_use.remove(&used);
        }
        self.wanted.insert(path, checkpoint.world.clone());
        self.share(checkpoint)
    }

    /// Keeps the processes of `checkpoint` by node state, not its world;
    /// returns it with each node's process the one kept for its state.
    pub fn share(&mut self, checkpoint: Checkpoint) -> Checkpoint {
        if !self.enabled() {
            return checkpoint;
        }
        let Checkpoint { world, mut nodes } = checkpoint;
        for (n, slot) in nodes.iter_mut().enumerate() {
            let Some(snap) = slot else { continue };
            world.encode_node(n as u8, &mut self.key);
            self.tick += 1;
            let tick = self.tick;
            match self.snapshots.get_mut(&self.key) {
                Some((kept, used)) => {
                    *slot = Some(kept.clone());
                    let key = self.by_use.remove(used).unwrap_or_else(|| self.key.clone());
                    *used = tick;
                    self.by_use.insert(tick, key);
                }
                None => {
                    if self.kept_new % SAMPLE_EVERY == 0
                        && let Some(bytes) = memory_of(snap.parked.borrow().pid)
                    {
                        self.sampled += 1;
                        self.sampled_bytes += bytes;
                    }
                    self.kept_new += 1;
                    self.snapshots.insert(self.key.clone(), (snap.clone(), tick));
                    self.by_use.insert(tick, self.key.clone());
                }
            }
        }
        let checkpoint = Checkpoint { world, nodes };
        // The snapshots just used are the newest: they go last.
        while self.pool.live() > self.snapshots_max || self.estimated_bytes() > self.snapshots_bytes_max {
            let Some((_, oldest)) = self.by_use.pop_first() else { break };
            self.snapshots.remove(&oldest);
            self.evictions += 1;
        }
        checkpoint
    }

    /// The memory the live snapshots take, estimated from those measured.
    pub fn estimated_bytes(&self) -> u64 {
        match self.sampled {
            0 => 0,
            k => self.pool.live() as u64 * (self.sampled_bytes / k),
        }
    }

    /// The pids of the parked processes.
    pub fn pids(&self) -> Vec<i32> {
        self.snapshots.values().map(|(s, _)| s.parked.borrow().pid).collect()
    }

    /// Kills every parked process.
    pub fn clear(&mut self) {
        // Every process signalled first, then each reaped as it is dropped:
        // one wait for all of them to die, not one each.
        for (snapshot, _) in self.snapshots.values() {
            snapshot.kill();
        }
        self.by_use.clear();
        self.snapshots.clear();
        self.wanted.clear();
        self.sources.clear();
        self.sources_by_use.clear();
    }
}

/// What a parked process costs: its proportional set size (its own pages,
/// and its share of those it shares with its forks) and its page tables,
/// in bytes. `None` if the kernel does not say.
fn memory_of(pid: i32) -> Option<u64> {
    let kib = |text: &str, field: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(field))?;
        line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()
    };
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some((kib(&rollup, "Pss:")? + kib(&status, "VmPTE:")?) * 1024)
}

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

/// What the supervisor keeps about a node process besides the process:
/// part of what its future depends on, so it goes with every fork.
#[derive(Clone, Debug, Default)]
pub struct ProcIo {
    /// Partial records written to fd 3 and fd 193.
    pub state_in: Vec<u8>,
    pub durable_in: Vec<u8>,
    /// What reads of fd 193 return in this life, and how much of it was read.
    pub recovery: Vec<u8>,
    pub recovery_at: usize,
}

/// One parked node process.
pub struct Snapshot {
    parked: RefCell<Parked>,
    io: ProcIo,
    /// The count of snapshots alive, shared by a store's snapshots.
    live: Rc<Cell<usize>>,
}

impl Snapshot {
    pub fn new(parked: Parked, io: ProcIo, live: &Rc<Cell<usize>>) -> Snapshot {
        live.set(live.get() + 1);
        Snapshot { parked: RefCell::new(parked), io, live: live.clone() }
    }

    /// A fork of this process, held in the same call, and its I/O state.
    pub fn fork(&self, listener: BorrowedFd<'_>, timeout: Duration) -> Result<(Parked, ProcIo), ForkError> {
        let child = forkserver::fork(listener, &mut self.parked.borrow_mut(), timeout)?;
        Ok((child, self.io.clone()))
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
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
    pub world: ProcessWorld,
    pub nodes: Vec<Option<Rc<Snapshot>>>,
}

/// Default of `snapshots_max`: processes kept parked. Each costs its page
/// tables and the pages it wrote since its fork (a few hundred KiB for the
/// example programs), so 2,048 fit a 24 GiB machine many times over and
/// stay far below its process limit.
pub const SNAPSHOTS_MAX_DEFAULT: usize = 256;

/// At most this many checkpoints per process kept.
const CHECKPOINTS_PER_SNAPSHOT: usize = 4;

/// Checkpoints by the actions that reach them.
pub struct Store {
    checkpoints: HashMap<Vec<ProcessAction>, (Checkpoint, u64)>,
    /// The same checkpoints by last use: the least recently used first.
    by_use: BTreeMap<u64, Vec<ProcessAction>>,
    snapshots_max: usize,
    tick: u64,
    /// Snapshots alive: parked in checkpoints, or held by the engine.
    pub live: Rc<Cell<usize>>,
    /// Checkpoints evicted so far.
    pub evictions: u64,
}

impl Store {
    pub fn new(snapshots_max: usize) -> Store {
        Store {
            checkpoints: HashMap::new(),
            by_use: BTreeMap::new(),
            snapshots_max,
            tick: 0,
            live: Rc::new(Cell::new(0)),
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
        let (c, used) = self.checkpoints.get_mut(path)?;
        let path = self.by_use.remove(used).unwrap_or_else(|| path.to_vec());
        *used = tick;
        self.by_use.insert(tick, path);
        Some(c.clone())
    }

    pub fn contains(&self, path: &[ProcessAction]) -> bool {
        self.checkpoints.contains_key(path)
    }

    /// Keeps `checkpoint` for `path`, then evicts the least recently used
    /// until at most `snapshots_max` processes are parked (the newest is
    /// always kept).
    pub fn insert(&mut self, path: Vec<ProcessAction>, checkpoint: Checkpoint) {
        if !self.enabled() {
            return;
        }
        self.tick += 1;
        if let Some((_, used)) = self.checkpoints.insert(path.clone(), (checkpoint, self.tick)) {
            self.by_use.remove(&used);
        }
        self.by_use.insert(self.tick, path);
        // Checkpoints that share every process cost only their world's
        // bytes; still, at most `CHECKPOINTS_PER_SNAPSHOT` per process.
        while self.checkpoints.len() > 1
            && (self.live.get() > self.snapshots_max
                || self.checkpoints.len() > CHECKPOINTS_PER_SNAPSHOT * self.snapshots_max)
        {
            let Some((_, oldest)) = self.by_use.pop_first() else { break };
            self.checkpoints.remove(&oldest);
            self.evictions += 1;
        }
    }

    /// The pids of the parked processes.
    pub fn pids(&self) -> Vec<i32> {
        self.checkpoints.values().flat_map(|(c, _)| c.nodes.iter().flatten().map(|s| s.parked.borrow().pid)).collect()
    }

    /// Kills every parked process.
    pub fn clear(&mut self) {
        self.by_use.clear();
        self.checkpoints.clear();
    }
}

//! START: every node started from its template, one at a time, and the
//! crashes that may fall while they start (`ProcessAction::StartCrash`).
//!
//! The nodes start in node order, each until it first waits, so what a node
//! finds of the others when it starts (a listener, or none: a connect
//! refused) is the same on every run. A machine may die in a node's start
//! as between any two calls of a step: after a call with an effect outside
//! the process, while crash budget is left (the supervisor's crash points).
//! The start does not stop there, since the search's first world has every
//! node started; it counts them, and the world START reaches lists each as
//! an action ([`ProcessWorld::start_crashes`](super::world::ProcessWorld)),
//! one per state of the data directory the crash may leave. Taking one
//! starts every node again and kills that node at that point: the nodes
//! after it start then, seeing it down, and the world reached lists their
//! crash points in turn while budget is left. So the crashes in one start
//! fall in node order, and a path names each once.

use super::ProcessError;
use super::action::ProcessAction;
use super::crash_states;
use super::supervisor::{Supervisor, nonzero};
use super::world::{ProcessWorld, StartCrash, Trail};

/// The crashes of one start: those its path asks for, in node order, and
/// those it found for the world it reaches.
#[derive(Debug, Default)]
pub struct StartCrashes {
    /// The crashes the path asks for.
    plan: Vec<StartCrash>,
    /// How many of them fell.
    done: usize,
    /// Per node, its crash points passed so far.
    points: Vec<u32>,
    /// The crashes that may fall, for the world the start reaches.
    found: Vec<StartCrash>,
}

impl Supervisor {
    /// Kills every node and starts them all afresh, then waits for
    /// quiescence: the initial world. Each node's template is exec'd the
    /// first time; every life is a fork of it.
    pub fn start(&mut self) -> Result<(), ProcessError> {
        self.start_with(&[])
    }

    /// [`Supervisor::start`], with a crash in the start of each node `plan`
    /// names (its `StartCrash` actions, in node order): the world those
    /// actions reach. Where the start does not reach one of them, an error
    /// naming it (the action is not enabled).
    pub fn start_with(&mut self, plan: &[StartCrash]) -> Result<(), ProcessError> {
        self.kill_all();
        self.clear_output();
        self.crash_due.fill(false);
        self.calls.fill(0);
        // A node's memory as it starts is a function of its number and of
        // the crashes in the starts before its own (a node held in its
        // start may have found a node before it down).
        for n in 0..self.cfg.nodes {
            let mut key = vec![n];
            for c in plan.iter().filter(|c| c.node < n) {
                key.push(c.node);
                key.extend_from_slice(&c.point.to_le_bytes());
                key.extend_from_slice(&c.keep.map_or(0, |k| k.mask()).to_le_bytes());
                key.push(matches!(c.keep, Some(super::world::Keep::Set(_))) as u8);
            }
            self.trails[n as usize] = Trail { hash: nonzero(xxhash_rust::xxh3::xxh3_64(&key)), holds: 0, acted: 0 };
        }
        self.world = ProcessWorld::new(self.cfg.nodes, &self.cfg.budgets);
        self.world.stream = self.cfg.stream;
        self.world.timeout_byte = self.cfg.timeout_byte;
        self.world.timeout_order = self.cfg.timeout_order;
        self.world.crash_states = self.cfg.crash_states;
        self.world.dir_order = self.cfg.dir_order;
        if let Some(dir) = &self.cfg.log_dir {
            for n in 0..self.cfg.nodes {
                // Truncate: each replay's log starts empty (the checker
                // appends to it, `log_output`).
                let _ = std::fs::write(dir.join(format!("node{n}.log")), b"");
            }
        }
        for n in 0..self.cfg.nodes {
            if self.templates[n as usize].is_none() {
                self.boot_template(n)?;
            }
        }
        self.start_crashes =
            StartCrashes { plan: plan.to_vec(), done: 0, points: vec![0; self.cfg.nodes as usize], found: Vec::new() };
        self.starting = true;
        let started = (0..self.cfg.nodes).try_for_each(|n| {
            self.new_life(n)?;
            self.settle()
        });
        self.starting = false;
        let crashes = std::mem::take(&mut self.start_crashes);
        started?;
        if let Some(&missed) = crashes.plan.get(crashes.done) {
            return Err(ProcessError::NotEnabled { action: ProcessAction::StartCrash(missed).to_string() });
        }
        self.world.start_crashes = crashes.found;
        Ok(())
    }

    /// Node `n`, starting, is at a crash point: counts it, and kills the
    /// node there if the path asks for that (`true`); otherwise notes the
    /// crashes that may fall there, for the nodes after the last one the
    /// path crashes.
    pub(super) fn start_crash_point(&mut self, n: u8) -> Result<bool, ProcessError> {
        let s = &mut self.start_crashes;
        let point = s.points[n as usize].checked_add(1).ok_or_else(|| ProcessError::Limit {
            node: n,
            limit: "start_crash_points_max",
            max: u32::MAX as usize,
            detail: "one call with an effect too many in the node's start".to_string(),
        })?;
        s.points[n as usize] = point;
        let disk = &self.world.nodes[n as usize].disk;
        if let Some(&c) = s.plan.get(s.done).filter(|c| c.node == n && c.point == point) {
            let allowed = match c.keep {
                None => disk.pending.is_empty(),
                Some(k) => !disk.pending.is_empty() && crash_states::allows(self.cfg.crash_states, disk, k),
            };
            if !allowed {
                return Err(ProcessError::NotEnabled { action: ProcessAction::StartCrash(c).to_string() });
            }
            s.done += 1;
            self.crash(n, c.keep);
            return Ok(true);
        }
        if s.plan.last().is_none_or(|c| n > c.node) {
            if disk.pending.is_empty() {
                s.found.push(StartCrash { node: n, point, keep: None });
            } else {
                let keeps = crash_states::keeps(self.cfg.crash_states, disk);
                s.found.extend(keeps.into_iter().map(|k| StartCrash { node: n, point, keep: Some(k) }));
            }
        }
        Ok(false)
    }
}

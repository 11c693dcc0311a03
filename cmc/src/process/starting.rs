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
//! an action ([`ProcessWorld::start_choices`](super::world::ProcessWorld)),
//! one per state of the data directory the crash may leave and per last
//! node started before it. In the start a listen counts as an effect too,
//! and a close of a listener: a node started meanwhile may dial it. Taking
//! one starts every node again and stops that node at that point; the
//! nodes after it up to the one the action names start meanwhile (on
//! Linux the nodes run at once, and a slow start may still be under way
//! when the next node's has run), then it is killed, and the nodes after
//! those start, seeing it down. The world reached lists the crash points of
//! the nodes after it in turn while budget is left. So a path names each
//! crash once, by node order.

use super::ProcessError;
use super::action::ProcessAction;
use super::crash_states;
use super::supervisor::{Supervisor, nonzero};
use super::world::{ProcessWorld, StartChoice, StartCrash, Trail, VFd};

/// The choices of one start (crashes, orders of listings): those its path
/// asks for, in the order the start makes them, and those it found for the
/// world it reaches.
#[derive(Debug, Default)]
pub struct StartPlan {
    /// The choices the path asks for, in the order the start makes them.
    plan: Vec<StartChoice>,
    /// How many of them fell (or stopped their node).
    done: usize,
    /// The nodes stopped at their crash point, to be killed once the
    /// start of `after` is done: (node, keep, after).
    stopped: Vec<(u8, Option<super::world::Keep>, u8)>,
    /// Per node, its crash points passed so far.
    points: Vec<u32>,
    /// Per node, its listings in the start that showed names more than
    /// one way.
    listings: Vec<u32>,
    /// The choices the start may make otherwise, for the world it
    /// reaches.
    found: Vec<StartChoice>,
}

impl Supervisor {
    /// Kills every node and starts them all afresh, then waits for
    /// quiescence: the initial world (START), with the choices `plan`
    /// names (`StartCrash` and `StartOrder` actions, in the order the start
    /// makes them; none for START itself). Each node's template is exec'd
    /// the first time; every life is a fork of it. Where the start does
    /// not reach one of the choices, an error naming it (the action is not
    /// enabled).
    pub fn start_with(&mut self, plan: &[StartChoice]) -> Result<(), ProcessError> {
        self.start_nodes(plan)?;
        self.world.sync_ready_lists();
        Ok(())
    }

    fn start_nodes(&mut self, plan: &[StartChoice]) -> Result<(), ProcessError> {
        self.acting = None;
        self.kill_all();
        self.clear_output();
        self.crash_due.fill(false);
        self.calls.fill(0);
        // A node's memory as it starts is a function of its number and of
        // the crashes in the starts before its own (a node held in its
        // start may have found a node before it down).
        for n in 0..self.cfg.nodes {
            let mut key = vec![n];
            for choice in plan.iter().filter(|c| c.node() < n) {
                match *choice {
                    StartChoice::Crash(c) => {
                        key.extend_from_slice(&[c.node, c.after]);
                        key.extend_from_slice(&c.point.to_le_bytes());
                        key.extend_from_slice(&c.keep.map_or(0, |k| k.mask()).to_le_bytes());
                        key.push(matches!(c.keep, Some(super::world::Keep::Set(_))) as u8);
                    }
                    StartChoice::Order { node, listing, way } => {
                        key.extend_from_slice(&[node, 255]);
                        key.extend_from_slice(&listing.to_le_bytes());
                        key.extend_from_slice(&way.to_le_bytes());
                    }
                }
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
        // In node order, each node once, and the last node before each
        // crash one that is there.
        let nodes = self.cfg.nodes;
        let crashes: Vec<StartCrash> = plan
            .iter()
            .filter_map(|c| match c {
                StartChoice::Crash(c) => Some(*c),
                StartChoice::Order { .. } => None,
            })
            .collect();
        let ordered = crashes.windows(2).all(|w| w[0].node < w[1].node);
        if let Some(&bad) = crashes.iter().find(|c| !ordered || c.after < c.node || c.after >= nodes) {
            return Err(ProcessError::NotEnabled { action: ProcessAction::StartCrash(bad).to_string() });
        }
        self.start_plan = StartPlan {
            plan: plan.to_vec(),
            done: 0,
            stopped: Vec::new(),
            points: vec![0; nodes as usize],
            listings: vec![0; nodes as usize],
            found: Vec::new(),
        };
        self.starting = true;
        let started: Result<(), ProcessError> = (0..nodes).try_for_each(|n| {
            self.new_life(n)?;
            self.settle()?;
            // The crashes that fall once this node's start is done.
            let due: Vec<(u8, Option<super::world::Keep>)> =
                self.start_plan.stopped.iter().filter(|s| s.2 == n).map(|s| (s.0, s.1)).collect();
            for (m, keep) in due {
                self.kill_crashed(m, keep);
            }
            Ok(())
        });
        self.starting = false;
        let done = std::mem::take(&mut self.start_plan);
        started?;
        if let Some(&missed) = done.plan.get(done.done) {
            return Err(ProcessError::NotEnabled { action: ProcessAction::start_choice(missed).to_string() });
        }
        self.world.start_choices = done.found;
        Ok(())
    }

    /// Node `n`, starting, is at a crash point (before call `notif`):
    /// counts it, and kills the node there, or stops it there until the
    /// start of the node its crash comes after is done, if the path asks
    /// for that (`true`); otherwise notes the crashes that may fall there,
    /// past the path's last choice.
    pub(super) fn start_crash_point(&mut self, n: u8, notif: super::notif::Notif) -> Result<bool, ProcessError> {
        let s = &mut self.start_plan;
        let point = s.points[n as usize].checked_add(1).ok_or_else(|| ProcessError::Limit {
            node: n,
            limit: "start_crash_points_max",
            max: u32::MAX as usize,
            detail: "one call with an effect too many in the node's start".to_string(),
        })?;
        s.points[n as usize] = point;
        let disk = &self.world.nodes[n as usize].disk;
        let planned = match s.plan.get(s.done) {
            Some(&StartChoice::Crash(c)) if c.node == n && c.point == point => Some(c),
            _ => None,
        };
        if let Some(c) = planned {
            let allowed = match c.keep {
                None => disk.pending.is_empty(),
                Some(k) => !disk.pending.is_empty() && crash_states::allows(self.cfg.crash_states, disk, k),
            };
            if !allowed {
                return Err(ProcessError::NotEnabled { action: ProcessAction::StartCrash(c).to_string() });
            }
            s.done += 1;
            if c.after == n {
                self.crash(n, c.keep);
                return Ok(true);
            }
            // Stopped here, its crash spent, until the start of node
            // `after` is done.
            s.stopped.push((n, c.keep, c.after));
            self.world.crashes -= 1;
            if let Some(p) = self.procs[n as usize].as_mut() {
                p.run = super::lives::Run::Held(notif);
            }
            let trail = self.trail_at_crash_point(n);
            self.world.nodes[n as usize].blocked = super::world::Blocked::CrashPoint { trail };
            return Ok(true);
        }
        // Past the path's last choice: a choice here comes after it.
        if s.done == s.plan.len() {
            let keeps: Vec<Option<super::world::Keep>> = if disk.pending.is_empty() {
                vec![None]
            } else {
                crash_states::keeps(self.cfg.crash_states, disk).into_iter().map(Some).collect()
            };
            for keep in keeps {
                s.found.extend(
                    (n..self.cfg.nodes).map(|after| StartChoice::Crash(StartCrash { node: n, point, keep, after })),
                );
            }
        }
        Ok(false)
    }

    /// Node `n`, starting, lists its data directory and the names it shows
    /// first fall `choices` ways: the way the path asks for (way 0 if it
    /// asks for none), placed in the world's order, and the node's trail
    /// keeps it; the other ways are noted for the world the start reaches,
    /// past the path's last choice.
    pub(super) fn start_listing(&mut self, n: u8, choices: u32) -> Result<(), ProcessError> {
        let s = &mut self.start_plan;
        s.listings[n as usize] += 1;
        let listing = s.listings[n as usize];
        let way = match s.plan.get(s.done) {
            Some(&StartChoice::Order { node, listing: j, way }) if node == n && j == listing => {
                if way >= choices {
                    let action = ProcessAction::StartOrder { node, listing, way };
                    return Err(ProcessError::NotEnabled { action: action.to_string() });
                }
                s.done += 1;
                way
            }
            _ => {
                if s.done == s.plan.len() {
                    s.found.extend((1..choices).map(|way| StartChoice::Order { node: n, listing, way }));
                }
                0
            }
        };
        let disk = &mut self.world.nodes[n as usize].disk;
        let new = super::dir_order::unshown(&disk.order, super::dir_order::listed(&disk.current().1).iter());
        super::dir_order::place(&mut disk.order, &new, way);
        let t = &mut self.trails[n as usize];
        let key = [&t.hash.to_le_bytes()[..], &[n, 2], &listing.to_le_bytes(), &way.to_le_bytes()].concat();
        t.hash = nonzero(xxhash_rust::xxh3::xxh3_64(&key));
        Ok(())
    }

    /// What node `n` has done that the others see, for its crash points:
    /// its effects (`ProcessWorld::effects_of`) and, while the nodes start,
    /// its listeners too, since a node started before its crash may dial
    /// one.
    pub(super) fn effects(&self, n: u8) -> u64 {
        let effects = self.world.effects_of(n);
        if !self.starting {
            return effects;
        }
        let mut key = effects.to_le_bytes().to_vec();
        for (fd, v) in &self.world.nodes[n as usize].fds {
            if let VFd::Socket { listening: true, port, addr, .. } = v {
                key.extend_from_slice(&fd.to_le_bytes());
                key.extend_from_slice(&port.unwrap_or(0).to_le_bytes());
                key.extend_from_slice(addr);
            }
        }
        xxhash_rust::xxh3::xxh3_64(&key)
    }
}

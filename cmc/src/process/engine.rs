//! [`ProcessEngine`]: the process front end with the in-process engine's
//! shape, for the searches: build the initial world, list the enabled
//! actions from a world alone, apply an action by stateless replay, encode
//! and fingerprint a world.
//!
//! Stateless replay: a world is reached by starting every node afresh and
//! replaying the actions that led to it (manual, "Programs as nodes"). As
//! an optimisation that changes no result, when the processes already stand
//! at exactly the asked prefix (the last call applied that prefix), the
//! next action is applied to them directly; any other prefix starts over.
//! Before every action the engine checks that it is enabled in the world the
//! processes made, so a replay that diverged is an error, never a wrong
//! world.
//!
//! It owns one [`Supervisor`] and so must stay on the thread that created it.

use super::action::{self, ProcessAction};
use super::supervisor::Supervisor;
use super::world::ProcessWorld;
use super::{Config, ProcessError};
use crate::world::Fingerprint;

/// What the engine did, for cost measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Starts from scratch (all nodes spawned).
    pub replays: u64,
    /// Actions applied, replayed ones included.
    pub actions: u64,
    /// Node processes started (CRASH restarts included).
    pub spawns: u64,
    /// Seccomp notifications handled.
    pub notifications: u64,
}

/// Runs a program as nodes and applies actions to the worlds it makes.
pub struct ProcessEngine {
    config: Config,
    supervisor: Option<Supervisor>,
    /// The actions the processes have been through since their start, when
    /// they are quiescent after the last of them.
    current: Option<Vec<ProcessAction>>,
    stats: Stats,
    scratch: Vec<ProcessAction>,
}

impl ProcessEngine {
    /// Checks the configuration (limits, program, preload); starts nothing.
    pub fn new(config: Config) -> Result<ProcessEngine, ProcessError> {
        config.validate()?;
        Ok(ProcessEngine { config, supervisor: None, current: None, stats: Stats::default(), scratch: Vec::new() })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        if let Some(sup) = &self.supervisor {
            s.spawns += sup.counters.spawns;
            s.notifications += sup.counters.notifications;
        }
        s
    }

    /// The initial world: every node started and run to quiescence.
    pub fn initial(&mut self) -> Result<ProcessWorld, ProcessError> {
        self.replay(&[])
    }

    /// Lists the actions enabled in `world`, from the world alone.
    pub fn actions(world: &ProcessWorld, out: &mut Vec<ProcessAction>) {
        action::enumerate(world, out)
    }

    /// The world reached by `prefix` and then `action`.
    pub fn apply(&mut self, prefix: &[ProcessAction], action: &ProcessAction) -> Result<ProcessWorld, ProcessError> {
        if self.current.as_deref() != Some(prefix) {
            self.replay(prefix)?;
        }
        self.step(action)?;
        Ok(self.world())
    }

    /// Starts every node afresh and replays `actions`: the world they reach.
    pub fn replay(&mut self, actions: &[ProcessAction]) -> Result<ProcessWorld, ProcessError> {
        self.current = None;
        if self.supervisor.is_none() {
            self.supervisor = Some(Supervisor::new(&self.config)?);
        }
        self.stats.replays += 1;
        self.supervisor_mut().start()?;
        self.current = Some(Vec::new());
        for a in actions {
            self.step(a)?;
        }
        Ok(self.world())
    }

    /// Kills every node process (they are killed on drop too).
    pub fn stop(&mut self) {
        self.current = None;
        if let Some(s) = self.supervisor.as_mut() {
            s.kill_all();
        }
    }

    /// The pid of node `n`'s current process, if it runs.
    pub fn pid(&self, n: u8) -> Option<i32> {
        self.supervisor.as_ref()?.pid(n)
    }

    /// Encodes `world` into `buf` and returns its fingerprint.
    pub fn fingerprint(world: &ProcessWorld, buf: &mut Vec<u8>) -> Fingerprint {
        world.fingerprint(buf)
    }

    fn supervisor_mut(&mut self) -> &mut Supervisor {
        self.supervisor.get_or_insert_with(|| unreachable!("created by replay"))
    }

    fn world(&self) -> ProcessWorld {
        self.supervisor.as_ref().map(|s| s.world().clone()).unwrap_or_else(|| unreachable!("created by replay"))
    }

    fn step(&mut self, a: &ProcessAction) -> Result<(), ProcessError> {
        let sup = self.supervisor.as_mut().ok_or(ProcessError::NotEnabled { action: a.to_string() })?;
        action::enumerate(sup.world(), &mut self.scratch);
        if !self.scratch.contains(a) {
            self.current = None;
            return Err(ProcessError::NotEnabled { action: a.to_string() });
        }
        let current = self.current.take();
        sup.apply(a)?;
        self.stats.actions += 1;
        self.current = current.map(|mut c| {
            c.push(*a);
            c
        });
        Ok(())
    }
}

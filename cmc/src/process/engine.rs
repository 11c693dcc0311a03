//! [`ProcessEngine`]: the process front end with the in-process engine's
//! shape, for the searches: build the initial world, list the enabled
//! actions from a world alone, apply an action, encode and fingerprint a
//! world.
//!
//! Applying an action to a world takes its checkpoint (every node's
//! process parked as a snapshot, `snapshot`), forks only the node the
//! action touches, runs it to quiescence and parks it: the new world's
//! checkpoint is the old one with that node's snapshot replaced. Nodes the
//! action does not touch are shared. A world with no checkpoint (evicted,
//! or never made) is rebuilt from its nearest kept ancestor by applying the
//! rest of its actions, or from the templates by replaying them all. A
//! world kept without a node's process (one with threads that could not be
//! snapshotted: `ProcessError::Threaded`) is run from the templates
//! whenever an action needs that process. With
//! `snapshots_max = 0` nothing is kept and every world is rebuilt from the
//! templates: the stateless path, kept for comparison.
//!
//! An action seen before in the same local state (the touched node's part
//! of the world, the clock, the lives, its connections) is answered from
//! the transition cache (`transitions`) with no process at all, when the
//! node state it leads to has a snapshot kept.
//!
//! Before every action the engine checks that it is enabled in the world
//! the processes made, so a replay that diverged is an error, never a wrong
//! world.
//!
//! It owns one [`Supervisor`] and so must stay on the thread that created it.

use super::action::{self, ProcessAction};
use super::snapshot::{Checkpoint, Store};
use super::supervisor::Supervisor;
use super::transitions::Transitions;
use super::world::{Life, ProcessWorld};
use super::{Config, ProcessError, StopSlot};
use crate::world::Fingerprint;

/// What the engine did, for cost measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Starts from the templates (every node's life forked afresh).
    pub replays: u64,
    /// Actions applied, replayed ones included.
    pub actions: u64,
    /// Node lives started (RESTARTs included).
    pub spawns: u64,
    /// Programs exec'd (one template per node and search).
    pub execs: u64,
    /// Seccomp filters installed (one per template).
    pub filters_installed: u64,
    /// Processes forked from parked ones (lives and snapshots' forks).
    pub forks: u64,
    /// Checkpoints evicted from the store.
    pub evictions: u64,
    /// Seccomp notifications handled.
    pub notifications: u64,
    /// Actions answered from the transition cache, with no process.
    pub cached: u64,
}

/// Runs a program as nodes and applies actions to the worlds it makes.
pub struct ProcessEngine {
    config: Config,
    supervisor: Option<Supervisor>,
    store: Store,
    transitions: Transitions,
    /// The actions the supervisor's running processes have taken since
    /// they were started from the templates (`fresh`), while they run;
    /// `None` once they are not that (forked from a checkpoint, or gone).
    running: Option<Vec<ProcessAction>>,
    stats: Stats,
    scratch: Vec<ProcessAction>,
}

impl Drop for ProcessEngine {
    /// Kills the snapshots while the templates' listeners are open: the
    /// supervisor, dropped first otherwise (fields drop in order), closes
    /// them, and a process whose listener is gone gets ENOSYS from every
    /// notified call and runs on. A server's accept loop then spins, and
    /// hundreds of parked snapshots spinning at once starved the machine
    /// while each was killed and reaped in turn (load 250 after a search of
    /// the lease model, and a concurrent search's node reported stalled).
    fn drop(&mut self) {
        self.stop();
    }
}

impl ProcessEngine {
    /// Checks the configuration (limits, program, preload); starts nothing.
    pub fn new(mut config: Config) -> Result<ProcessEngine, ProcessError> {
        config.validate()?;
        // A slot of its own: engines made from one model's configuration
        // run searches of their own.
        config.stop = StopSlot::default();
        let store = Store::new(config.snapshots_max, config.snapshots_mib_max);
        let transitions = Transitions::new(config.transitions_max);
        Ok(ProcessEngine {
            config,
            supervisor: None,
            store,
            transitions,
            running: None,
            stats: Stats::default(),
            scratch: Vec::new(),
        })
    }

    /// The configuration it runs, with a stop slot of its own.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Checks `stop` before every action from now on, and lets the
    /// supervisor check it while it waits for nodes (`None`: no more).
    pub fn watch(&mut self, stop: Option<crate::Stop>) {
        self.config.stop.set(stop);
    }

    /// What it has cost so far: its own counts and its supervisor's.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        if let Some(sup) = &self.supervisor {
            s.spawns += sup.counters.spawns;
            s.execs += sup.counters.execs;
            s.filters_installed += sup.counters.filters_installed;
            s.forks += sup.counters.forks;
            s.notifications += sup.counters.notifications;
        }
        s.evictions = self.store.evictions;
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
        if !self.store.enabled() {
            if action.as_start_choice().is_some() {
                self.fresh(&[prefix, &[*action]].concat())?;
            } else {
                self.fresh(prefix)?;
                self.step(action)?;
            }
            return Ok(self.supervisor_mut()?.world().clone());
        }
        let applied = self.checkpoint(prefix).and_then(|from| self.apply_from(prefix, &from, action, true));
        match applied {
            // A process with threads that cannot be snapshotted (one blocks
            // the snapshot signal, or has one pending) on the way: this
            // world is run from the templates.
            Err(ProcessError::Threaded { .. }) => self.fresh_kept(&[prefix, &[*action]].concat()),
            other => other.map(|c| c.world),
        }
    }

    /// Starts every node afresh (or takes the checkpoint kept for
    /// `actions`) and applies `actions`: the world they reach.
    pub fn replay(&mut self, actions: &[ProcessAction]) -> Result<ProcessWorld, ProcessError> {
        if !self.store.enabled() {
            self.fresh(actions)?;
            return Ok(self.supervisor_mut()?.world().clone());
        }
        // A world whose processes were evicted is known without them; they
        // are rebuilt when an action is applied to it.
        if let Some(world) = self.store.world(actions) {
            return Ok(world);
        }
        match self.checkpoint(actions) {
            Err(ProcessError::Threaded { .. }) => self.fresh_kept(actions),
            other => Ok(other?.world),
        }
    }

    /// The world `path` reaches, run from the templates, kept with the
    /// snapshots its processes give (none of one that cannot be
    /// snapshotted: a world whose checkpoint would need it is run so
    /// again).
    fn fresh_kept(&mut self, path: &[ProcessAction]) -> Result<ProcessWorld, ProcessError> {
        self.fresh(path)?;
        self.running = None;
        let world = self.supervisor_mut()?.world().clone();
        let nodes = self.park()?.into_iter().map(|s| s.map(std::rc::Rc::new)).collect();
        self.store.insert(path.to_vec(), Checkpoint { world: world.clone(), nodes });
        Ok(world)
    }

    /// The world `prefix` and then `action` (none: START) reach, run on
    /// processes started from the templates and kept running from one
    /// call to the next, so that a trace rendered step by step costs one
    /// start and one run per action, and with each node's stdout and
    /// stderr captured ([`ProcessEngine::take_output`]). No checkpoint
    /// and no cached transition is used: every step is a real run.
    pub fn trace(
        &mut self,
        prefix: &[ProcessAction],
        action: Option<&ProcessAction>,
    ) -> Result<ProcessWorld, ProcessError> {
        self.supervisor_mut()?.capture = true;
        match action {
            None => self.fresh(prefix)?,
            Some(a) if a.as_start_choice().is_some() => self.fresh(&[prefix, &[*a]].concat())?,
            Some(a) => {
                if self.running.as_deref() != Some(prefix) {
                    self.fresh(prefix)?;
                }
                self.step(a)?;
            }
        }
        Ok(self.supervisor_mut()?.world().clone())
    }

    /// Each node's stdout and stderr in the last step [`ProcessEngine::trace`]
    /// ran (empty where a node wrote nothing); stops capturing.
    pub fn take_output(&mut self) -> Vec<String> {
        match self.supervisor.as_mut() {
            Some(s) => {
                s.capture = false;
                s.take_output()
            }
            None => Vec::new(),
        }
    }

    /// The search will not ask for the world `path` reaches again: its
    /// checkpoint is the first to be evicted (it stays a place to rebuild
    /// its descendants from).
    pub fn retire(&mut self, path: &[ProcessAction]) {
        self.store.retire(path);
    }

    /// Kills every node process and snapshot (they are killed on drop too).
    pub fn stop(&mut self) {
        self.running = None;
        self.store.clear();
        if let Some(s) = self.supervisor.as_mut() {
            s.kill_all();
        }
    }

    /// The pids of every process the engine holds: the templates, the
    /// running lives and every snapshot kept, in no particular order.
    pub fn processes(&self) -> Vec<i32> {
        let mut pids = self.store.pids();
        if let Some(s) = &self.supervisor {
            pids.extend(s.pids());
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Encodes `world` into `buf` and returns its fingerprint.
    pub fn fingerprint(world: &ProcessWorld, buf: &mut Vec<u8>) -> Fingerprint {
        world.fingerprint(buf)
    }

    fn supervisor_mut(&mut self) -> Result<&mut Supervisor, ProcessError> {
        if self.supervisor.is_none() {
            self.supervisor = Some(Supervisor::new(&self.config)?);
        }
        Ok(self.supervisor.as_mut().unwrap_or_else(|| unreachable!("just made")))
    }

    /// Every node started from its template, and `actions` applied to the
    /// running processes: the stateless path.
    fn fresh(&mut self, actions: &[ProcessAction]) -> Result<(), ProcessError> {
        self.stats.replays += 1;
        self.running = None;
        // The choices of the start (its crashes and orders) come first, and
        // are made by starting the nodes (`Supervisor::start_with`).
        let plan = start_plan(actions);
        self.supervisor_mut()?.start_with(&plan)?;
        self.stats.actions += plan.len() as u64;
        self.running = Some(actions[..plan.len()].to_vec());
        for a in &actions[plan.len()..] {
            self.step(a)?;
        }
        Ok(())
    }

    /// The checkpoint of the world `path` reaches: kept, or rebuilt from
    /// the nearest kept ancestor, or from the templates.
    fn checkpoint(&mut self, path: &[ProcessAction]) -> Result<Checkpoint, ProcessError> {
        if let Some(c) = self.store.get(path) {
            return Ok(c);
        }
        // A world kept without all its processes must rebuild to itself.
        let expected = self.store.world(path);
        let kept = self.store.nearest_ancestor(path);
        let (mut at, mut c) = match kept.and_then(|k| self.store.get(&path[..k]).map(|c| (k, c))) {
            Some(found) => found,
            None => (0, self.started(&[])?),
        };
        // The worlds in between were expanded already: only the last is
        // kept (the processes of all are, by node state).
        while at < path.len() {
            c = self.apply_from(&path[..at], &c, &path[at], at + 1 == path.len())?;
            at += 1;
        }
        if let Some(w) = expected
            && w != c.world
        {
            let action = path.last().map_or_else(|| "START".to_string(), ToString::to_string);
            return Err(ProcessError::Diverged { action, actions: path.len(), difference: w.difference(&c.world) });
        }
        if path.is_empty() {
            c = self.store.insert(Vec::new(), c);
        }
        Ok(c)
    }

    /// Applies `action` to the world of checkpoint `from` (reached by
    /// `prefix`), forking only the node it touches; returns the new world's
    /// checkpoint, and with `keep` keeps it in the store.
    fn apply_from(
        &mut self,
        prefix: &[ProcessAction],
        from: &Checkpoint,
        action: &ProcessAction,
        keep: bool,
    ) -> Result<Checkpoint, ProcessError> {
        if action.as_start_choice().is_some() {
            return self.start_choice(prefix, from, action, keep);
        }
        if let Some(c) = self.cached(from, action)? {
            return Ok(self.keep(prefix, action, c, keep));
        }
        let touched = action.node_process();
        // A live node kept without its process (one with threads that
        // could not be snapshotted): the caller runs the world from the
        // templates.
        if let Some(n) = touched
            && from.world.nodes[n as usize].life == Life::Live
            && from.nodes[n as usize].is_none()
        {
            return Err(ProcessError::Threaded { node: n, reason: "its world was kept without it".to_string() });
        }
        self.running = None;
        let sup = self.supervisor_mut()?;
        let snapshot = touched.and_then(|n| from.nodes[n as usize].as_deref().map(|s| (n, s)));
        if let Err(e) = sup.resume(from.world.clone(), snapshot) {
            // A fork cut short by a stop may leave its snapshot between two
            // calls: none is used again (a trace rendered after the stop
            // starts from the templates).
            if matches!(e, ProcessError::Stopped { .. }) {
                self.store.clear();
            }
            return Err(e);
        }
        self.step(action)?;
        let sup = self.supervisor_mut()?;
        let world = sup.world().clone();
        let in_flight_peak = sup.in_flight_peak;
        // An action whose node asked whether the others may act read more
        // than its surroundings, the cache's key: not kept.
        let nonlocal = sup.nonlocal;
        // The new world is kept without a process that could not be
        // snapshotted.
        let parked = self.park()?;
        if let Some(n) = action.node()
            && !nonlocal
        {
            self.transitions.record(&from.world, &world, n, action, in_flight_peak);
        }
        let mut nodes = from.nodes.clone();
        if let Some(n) = action.node() {
            // The touched node's process after the action: a fork of its
            // snapshot, a new life (RESTART), or none (it exited, or is down).
            nodes[n as usize] = None;
        }
        for (n, p) in parked.into_iter().enumerate() {
            if let Some(p) = p {
                nodes[n] = Some(std::rc::Rc::new(p));
            }
        }
        Ok(self.keep(prefix, action, Checkpoint { world, nodes }, keep))
    }

    /// A choice while the nodes start (a crash, an order), `action`, in the
    /// world `from` that `prefix` (START and such choices only) reaches:
    /// every node started again, with the choices of `prefix` and this one
    /// (`Supervisor::start_with`); the new world's checkpoint, kept in the
    /// store with `keep`. Never from the transition cache: the start reads
    /// every node.
    fn start_choice(
        &mut self,
        prefix: &[ProcessAction],
        from: &Checkpoint,
        action: &ProcessAction,
        keep: bool,
    ) -> Result<Checkpoint, ProcessError> {
        check_enabled(&self.config, &mut self.scratch, &from.world, action)?;
        let path = [prefix, &[*action]].concat();
        let plan = start_plan(&path);
        if plan.len() != path.len() {
            return Err(ProcessError::NotEnabled { action: action.to_string() });
        }
        self.stats.actions += 1;
        let c = self.started(&plan)?;
        Ok(self.keep(prefix, action, c, keep))
    }

    /// Every node started from its template with the start's choices
    /// `plan` (none: START), and parked: the checkpoint of that world.
    fn started(&mut self, plan: &[super::world::StartChoice]) -> Result<Checkpoint, ProcessError> {
        self.stats.replays += 1;
        self.running = None;
        let sup = self.supervisor_mut()?;
        sup.start_with(plan)?;
        let world = sup.world().clone();
        let nodes = self.park()?.into_iter().map(|s| s.map(std::rc::Rc::new)).collect();
        Ok(Checkpoint { world, nodes })
    }

    /// Every node's process parked as a snapshot (`None` for a node with
    /// none); none at all where a process with threads cannot be
    /// snapshotted (`ProcessError::Threaded`): the processes are killed,
    /// and the world is kept without them.
    fn park(&mut self) -> Result<Vec<Option<super::snapshot::Snapshot>>, ProcessError> {
        let live = self.store.pool.clone();
        let sup = self.supervisor_mut()?;
        match sup.park_all(&live) {
            Err(ProcessError::Threaded { .. }) => {
                sup.kill_all();
                Ok((0..sup.world().nodes.len()).map(|_| None).collect())
            }
            parked => parked,
        }
    }

    /// The checkpoint `action` makes of `from` with no process run, when
    /// the transition cache knows what the action does there and the
    /// touched node's process afterwards is kept (or there is none).
    fn cached(&mut self, from: &Checkpoint, action: &ProcessAction) -> Result<Option<Checkpoint>, ProcessError> {
        let Some(n) = action.node() else { return Ok(None) };
        let Some(world) = self.transitions.lookup(&from.world, n, action) else { return Ok(None) };
        let process = match world.nodes[n as usize].life {
            Life::Live => match self.store.snapshot(&world, n) {
                Some(s) => Some(s),
                None => return Ok(None),
            },
            _ => None,
        };
        // What `step` checks before it runs an action.
        check_enabled(&self.config, &mut self.scratch, &from.world, action)?;
        self.stats.actions += 1;
        self.stats.cached += 1;
        let mut nodes = from.nodes.clone();
        nodes[n as usize] = process;
        Ok(Some(Checkpoint { world, nodes }))
    }

    /// `c`, reached by `prefix` and then `action`: kept in the store with
    /// `keep`, its processes shared by node state either way.
    fn keep(&mut self, prefix: &[ProcessAction], action: &ProcessAction, c: Checkpoint, keep: bool) -> Checkpoint {
        if keep {
            let mut path = prefix.to_vec();
            path.push(*action);
            return self.store.insert(path, c);
        }
        self.store.share(c)
    }

    fn step(&mut self, a: &ProcessAction) -> Result<(), ProcessError> {
        // Between any two actions, a rebuild's included: a long replay is
        // stopped as soon as a poll would stop the search.
        self.supervisor_mut()?;
        let world = self.supervisor.as_ref().map(Supervisor::world).unwrap_or_else(|| unreachable!("just made"));
        check_enabled(&self.config, &mut self.scratch, world, a)?;
        // Until the action is done the processes are in no known world.
        let running = self.running.take();
        self.supervisor_mut()?.apply(a)?;
        self.running = running.map(|mut r| {
            r.push(*a);
            r
        });
        self.stats.actions += 1;
        Ok(())
    }
}

/// Checks that `action` is enabled in `world` (listed into `scratch`) and
/// that no stop is asked for: what is checked before any action is taken,
/// by a process or from the transition cache.
fn check_enabled(
    config: &Config,
    scratch: &mut Vec<ProcessAction>,
    world: &ProcessWorld,
    action: &ProcessAction,
) -> Result<(), ProcessError> {
    if let Some(reason) = config.stop_requested() {
        return Err(ProcessError::Stopped { reason });
    }
    action::enumerate(world, scratch);
    if !scratch.contains(action) {
        return Err(ProcessError::NotEnabled { action: action.to_string() });
    }
    Ok(())
}

/// The choices of the start (crashes and orders) that begin `actions`:
/// the start they ask for.
fn start_plan(actions: &[ProcessAction]) -> Vec<super::world::StartChoice> {
    actions.iter().map_while(ProcessAction::as_start_choice).collect()
}

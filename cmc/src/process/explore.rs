//! The process front end as a state graph for the searches: a
//! [`ProgramModel`] (program, environment, properties) explored through a
//! [`ProcessEngine`] by stateless replay.
//!
//! A world is the actions that reach it and the canonical world they make.
//! Its stored form (what BFS keeps in its queues) is its action tokens, and
//! loading one replays them; its fingerprint is that of the canonical world
//! bytes alone, so two paths to the same world are one state.

use std::fmt;
use std::str::FromStr;

use super::action::{BadProcessAction, ProcessAction};
use super::engine::ProcessEngine;
use super::world::{ConnKind, Life, ProcessWorld, TimeoutOrder};
use super::{Config, ProcessError};
use crate::model::{Budgets as CoreBudgets, Identity};
use crate::network::Network;
use crate::property::Kind;
use crate::report::{MessageText, NodeText, ProcessCounts, Step, WorldText};
use crate::search::Explore;
use crate::trace::hex;
use crate::world::Fingerprint;

/// The property every program model has besides its own, checked after
/// them: no node dies by a signal it raised itself (a failed `assert`, a
/// segmentation fault). The checker's CRASH leaves a node down, not
/// killed, until its RESTART; an exit, whatever its status, is the program's
/// own choice and part of the world.
pub const NO_NODE_KILLED: &str = "no_node_killed_by_a_signal";

/// Why a search that starts from `initial` would check nothing of a node,
/// or nothing at all: a node that ended with a non-zero status before the
/// first action (its start failed), or every node exited. A node killed
/// by a signal is not here: that is a violation of [`NO_NODE_KILLED`].
pub fn nothing_checked(initial: &ProcessWorld) -> Option<ProcessError> {
    let failed = initial.nodes.iter().enumerate().find_map(|(n, node)| match node.life {
        Life::Exited(status) if status != 0 => Some((n as u8, status)),
        _ => None,
    });
    if let Some((node, status)) = failed {
        return Some(ProcessError::EndedAtStart { node, how: format!("exited with status {status}") });
    }
    let all_exited = initial.nodes.iter().all(|node| matches!(node.life, Life::Exited(_)));
    all_exited.then_some(ProcessError::NothingAtStart)
}

/// [`NO_NODE_KILLED`]'s predicate.
pub fn no_node_killed(world: &ProcessWorld) -> bool {
    world.nodes.iter().all(|n| !matches!(n.life, Life::Signaled(_)))
}

/// A predicate over a process world.
pub type WorldPredicate = dyn Fn(&ProcessWorld) -> bool + Send + Sync;

/// How a node's reported state and durable record read in a trace.
pub type ShowNode = dyn Fn(&[u8], Option<&[u8]>) -> String + Send + Sync;

/// A named property of a program model.
pub struct ProgramProperty {
    /// The name reports and counterexample files use; unique in a model.
    pub name: String,
    /// When the predicate must hold.
    pub kind: Kind,
    /// Whether it holds in a world.
    pub predicate: Box<WorldPredicate>,
}

/// A program, its environment and its properties: what a model file or a
/// `#[cmc::model(program = ...)]` declares.
pub struct ProgramModel {
    /// The model's name in reports (the model file's stem, say).
    pub name: String,
    /// The program, its nodes, its environment and how the front end runs
    /// it.
    pub config: Config,
    /// The model's own properties, in the order they are checked;
    /// [`NO_NODE_KILLED`] is checked after them.
    pub properties: Vec<ProgramProperty>,
    /// The model file it came from, recorded in counterexample files so
    /// that `cmc replay` can rebuild it.
    pub model_file: Option<String>,
    /// Decodes a node's state and durable record for traces; `None` shows
    /// them in hex.
    pub show: Option<Box<ShowNode>>,
}

/// A model with no program yet, one node, no budgets, no request and no
/// properties: what the body of a `#[cmc::model(program = ...)]` starts
/// from, since the attribute names the program, the nodes and the budgets.
/// Its name is empty until the program is known (the attribute names it
/// after the program's file).
impl Default for ProgramModel {
    fn default() -> ProgramModel {
        ProgramModel::new("", Config::new("", 1))
    }
}

impl ProgramModel {
    /// A model named `name` of the program `config` runs, with no
    /// properties but [`NO_NODE_KILLED`].
    pub fn new(name: impl Into<String>, config: Config) -> ProgramModel {
        ProgramModel { name: name.into(), config, properties: Vec::new(), model_file: None, show: None }
    }

    /// The bytes a CLIENT sends (at most `write_bytes_max`, checked when
    /// the model is validated).
    pub fn request(mut self, bytes: impl AsRef<[u8]>) -> Self {
        self.config.request = bytes.as_ref().to_vec();
        self
    }

    /// What each client sends: a node's k-th CLIENT sends the k-th entry
    /// (each at most `write_bytes_max`; an entry per client, checked when
    /// the model is validated). [`ProgramModel::request`] is the case
    /// where every client sends the same.
    pub fn requests<B: AsRef<[u8]>>(mut self, requests: impl IntoIterator<Item = B>) -> Self {
        self.config.requests = requests.into_iter().map(|r| r.as_ref().to_vec()).collect();
        self
    }

    /// Every argument after the program's name, in place of `i ARGS...`:
    /// `{node}` is replaced by the node's number and `{port}` by its port
    /// (20000 + i), so that a server that takes `--port N` runs as it is.
    pub fn argv<S: Into<String>>(mut self, argv: impl IntoIterator<Item = S>) -> Self {
        self.config.argv = Some(argv.into_iter().map(Into::into).collect());
        self
    }

    /// The arguments after the node number: node i runs `PROGRAM i ARGS...`.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.config.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// The nodes' working directory (relative paths they name start there).
    pub fn workdir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.config.workdir = Some(dir.into());
        self
    }

    /// The nodes' data directory (`data_dir` in a model file): its files
    /// are part of the world; it must exist, and is never written.
    pub fn data_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.config.data_dir = Some(dir.into());
        self
    }

    /// Connections as byte streams: a read may get the first bytes of a
    /// write, or two writes merged (`stream = true` in a model file).
    pub fn stream(mut self, stream: bool) -> Self {
        self.config.stream = stream;
        self
    }

    /// The manual's `T` convention (`timeout_byte = true` in a model
    /// file): a TIMEOUT may end any read or accept, one the program gave no
    /// timeout with the byte `T`. Off by default: a program written for
    /// Linux sees a timeout only where it asked for one.
    pub fn timeout_byte(mut self, on: bool) -> Self {
        self.config.timeout_byte = on;
        self
    }

    /// Whether a crash may fall between two calls of a node
    /// (`crash_points` in a model file; [`Config::crash_points`]), on by
    /// default; off, a node crashes only at quiescence, as the manual has
    /// it.
    pub fn crash_points(mut self, on: bool) -> Self {
        self.config.crash_points = on;
        self
    }

    /// Which waits a TIMEOUT may end first (`timeout_order` and
    /// `timeout_drift_s` in a model file): [`TimeoutOrder::Any`], the
    /// default, or the earliest deadlines within a drift.
    pub fn timeout_order(mut self, order: TimeoutOrder) -> Self {
        self.config.timeout_order = order;
        self
    }

    /// Which states a crash may leave of the data directory:
    /// [`CrashStates::Ext4`](super::CrashStates::Ext4) (the default) or the manual's
    /// [`CrashStates::Prefix`](super::CrashStates::Prefix) (`crash_states` in a model file).
    pub fn crash_states(mut self, states: super::CrashStates) -> Self {
        self.config.crash_states = states;
        self
    }

    /// In which order a listing of the data directory gives its names:
    /// [`DirOrder::Hash`](super::DirOrder::Hash), any the file system's
    /// hash may give (the default), or
    /// [`DirOrder::Sorted`](super::DirOrder::Sorted) (`dir_order` in a
    /// model file).
    pub fn dir_order(mut self, order: super::DirOrder) -> Self {
        self.config.dir_order = order;
        self
    }

    /// What a node's state is: [`NodeState::Report`](super::NodeState::Report),
    /// what it reports (the default, the manual's), or
    /// [`NodeState::Inputs`](super::NodeState::Inputs), that and every
    /// answer of its life, for a program that keeps in memory what it
    /// does not report, such as tokio's timers (`node_state` in a model
    /// file).
    pub fn node_state(mut self, state: super::NodeState) -> Self {
        self.config.node_state = state;
        self
    }

    /// Choices of a node's next thread past the fixed order, over all
    /// nodes (`thread_switches` in a model file): at each point where two
    /// or more of a node's threads may run next, SWITCH runs another than
    /// the lowest-numbered while switches are left (docs/SEMANTICS.md,
    /// "Threads"). 0 by default: the fixed order only.
    pub fn thread_switches(mut self, switches: u8) -> Self {
        self.config.budgets.thread_switches = switches;
        self
    }

    /// Bytes of one write on a connection, and of a client's request
    /// (`write_bytes_max` in a model file): the manual's 64 by default, at
    /// most [`limits::WRITE_BYTES_LIMIT`](super::limits::WRITE_BYTES_LIMIT).
    /// A longer write stays an error naming the limit.
    pub fn write_bytes_max(mut self, bytes: usize) -> Self {
        self.config.write_bytes_max = bytes;
        self
    }

    /// Decodes node states in traces: `show(state, durable)` replaces the
    /// hex of both, so that a counterexample reads in the program's terms.
    pub fn show(mut self, show: impl Fn(&[u8], Option<&[u8]>) -> String + Send + Sync + 'static) -> Self {
        self.show = Some(Box::new(show));
        self
    }

    /// Adds an invariant.
    pub fn always(mut self, name: &str, p: impl Fn(&ProcessWorld) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(ProgramProperty { name: name.to_string(), kind: Kind::Always, predicate: Box::new(p) });
        self
    }

    /// Adds a bounded-liveness property.
    pub fn eventually(mut self, name: &str, p: impl Fn(&ProcessWorld) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(ProgramProperty {
            name: name.to_string(),
            kind: Kind::Eventually,
            predicate: Box::new(p),
        });
        self
    }

    /// What identifies the model in reports and counterexample files.
    pub fn identity(&self) -> Identity {
        let b = &self.config.budgets;
        Identity {
            core: format!("program:{}", self.name),
            settings: Vec::new(),
            nodes: self.config.nodes,
            network: Network::Fifo,
            budgets: CoreBudgets {
                drops: b.drops,
                dups: 0,
                crashes: b.crashes,
                clients: b.clients,
                timeouts: Some(b.timeouts),
            },
            model_file: self.model_file.clone(),
            // `argv` stands in place of the node number and `args`.
            args: match &self.config.argv {
                None => self.config.args.clone(),
                Some(argv) => std::iter::once("argv:".to_string()).chain(argv.iter().cloned()).collect(),
            },
        }
    }
}

/// A step of a process trace: the start, or one action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessStep {
    /// Every node started and run to quiescence.
    Start,
    /// One action of the environment.
    Act(ProcessAction),
}

impl fmt::Display for ProcessStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessStep::Start => f.write_str("START"),
            ProcessStep::Act(a) => a.fmt(f),
        }
    }
}

impl FromStr for ProcessStep {
    type Err = BadProcessAction;
    fn from_str(s: &str) -> Result<ProcessStep, BadProcessAction> {
        if s == "START" {
            return Ok(ProcessStep::Start);
        }
        s.parse().map(ProcessStep::Act)
    }
}

/// A world and the actions that reach it.
#[derive(Clone, Debug)]
pub struct PathWorld {
    /// The actions from the start, in order.
    pub path: Vec<ProcessAction>,
    /// The world they make.
    pub world: ProcessWorld,
}

/// Explores a [`ProgramModel`]. Owns node processes, so it stays on the
/// thread that made it.
pub struct ProcessExplorer<'m> {
    model: &'m ProgramModel,
    engine: ProcessEngine,
    buf: Vec<u8>,
    /// `--det`: every start and every action is run twice, from scratch,
    /// and the two worlds must be byte for byte the same.
    det: bool,
    /// `--det`'s second run: an engine of its own, whose templates are
    /// exec'd apart from the first run's and whose snapshots are its own,
    /// with no transition cache, so that the two runs share no process and
    /// every step of the second is run.
    second: Option<ProcessEngine>,
    /// The search's stop request, passed on to `second` when it is made.
    stop: Option<crate::Stop>,
    /// Why a step was cut short to answer the search's stop request, once
    /// one was.
    stopped: Option<String>,
    /// Rendering a trace: every world is run on processes started from
    /// the templates, and each node's output in the step kept in `output`
    /// for `render`.
    tracing: bool,
    output: Vec<String>,
}

impl<'m> ProcessExplorer<'m> {
    /// An explorer of `model`, its configuration validated; starts no
    /// process until the search asks for a world.
    pub fn new(model: &'m ProgramModel) -> Result<ProcessExplorer<'m>, ProcessError> {
        model.config.validate()?;
        let engine = ProcessEngine::new(model.config.clone())?;
        Ok(ProcessExplorer {
            model,
            engine,
            buf: Vec::new(),
            det: false,
            second: None,
            stop: None,
            stopped: None,
            tracing: false,
            output: Vec::new(),
        })
    }

    /// With `det`, every world is computed twice by independent replays and
    /// a difference is an error naming the step and what differs: the
    /// program is not deterministic under the checker.
    pub fn with_det(mut self, det: bool) -> Self {
        self.det = det;
        self
    }

    /// `--det`'s second run of `path` (then `last`, if any), compared with
    /// `first`.
    fn again(
        &mut self,
        path: &[ProcessAction],
        last: Option<&ProcessAction>,
        first: &ProcessWorld,
    ) -> Result<(), String> {
        // From the templates, sharing no snapshot with the first run.
        if self.second.is_none() {
            // Its own templates and snapshots, and no transition cache: every
            // step of the second run is a run of processes of its own.
            let mut config = self.model.config.clone();
            config.transitions_max = 0;
            let mut engine = ProcessEngine::new(config).map_err(|e| self.err(e))?;
            // The search's stop request is the second run's too.
            engine.watch(self.stop.clone());
            self.second = Some(engine);
        }
        let result = match (self.second.as_mut(), last) {
            (Some(engine), Some(a)) => engine.apply(path, a),
            (Some(engine), None) => engine.replay(path),
            (None, _) => unreachable!("made above"),
        };
        let second = result.map_err(|e| self.err(e))?;
        if second == *first {
            return Ok(());
        }
        let step = last.map_or_else(|| "START".to_string(), ToString::to_string);
        Err(format!("--det: {step} gave two different worlds on two runs ({})", first.difference(&second)))
    }

    /// The engine's counters (replays, actions, spawns, notifications).
    pub fn stats(&self) -> super::Stats {
        self.engine.stats()
    }

    /// The message of a failed step, noting a stop for [`Explore::stopped`].
    fn err(&mut self, e: ProcessError) -> String {
        if let ProcessError::Stopped { reason } = &e {
            self.stopped = Some(reason.clone());
        }
        e.to_string()
    }
}

impl Explore for ProcessExplorer<'_> {
    type World = PathWorld;
    type Action = ProcessStep;

    fn empty_world(&self) -> PathWorld {
        let mut world = ProcessWorld::new(self.model.config.nodes, &self.model.config.budgets);
        world.stream = self.model.config.stream;
        world.timeout_byte = self.model.config.timeout_byte;
        world.timeout_order = self.model.config.timeout_order;
        world.dir_order = self.model.config.dir_order;
        PathWorld { path: Vec::new(), world }
    }

    fn initial_variants(&self) -> u32 {
        1
    }

    fn init_action(&self, _variant: u32) -> ProcessStep {
        ProcessStep::Start
    }

    fn initial(&mut self, _variant: u32, out: &mut PathWorld) -> Result<bool, String> {
        out.path.clear();
        out.world = if self.tracing {
            let world = self.engine.trace(&[], None).map_err(|e| self.err(e))?;
            self.output = self.engine.take_output();
            world
        } else {
            self.engine.initial().map_err(|e| self.err(e))?
        };
        if let Some(e) = nothing_checked(&out.world) {
            return Err(self.err(e));
        }
        if self.det {
            self.again(&[], None, &out.world)?;
        }
        Ok(true)
    }

    fn actions(&mut self, world: &PathWorld, out: &mut Vec<ProcessStep>) -> Result<(), String> {
        let mut actions = Vec::new();
        ProcessEngine::actions(&world.world, &mut actions);
        out.clear();
        out.extend(actions.into_iter().map(ProcessStep::Act));
        Ok(())
    }

    fn apply(&mut self, world: &PathWorld, action: &ProcessStep, out: &mut PathWorld) -> Result<bool, String> {
        let ProcessStep::Act(a) = action else {
            return Err("START is only the first step of a trace".to_string());
        };
        out.world = if self.tracing {
            let next = self.engine.trace(&world.path, Some(a)).map_err(|e| self.err(e))?;
            self.output = self.engine.take_output();
            next
        } else {
            self.engine.apply(&world.path, a).map_err(|e| self.err(e))?
        };
        if self.det {
            self.again(&world.path, Some(a), &out.world)?;
        }
        out.path.clone_from(&world.path);
        out.path.push(*a);
        Ok(true)
    }

    /// The stored form: the fingerprint in hex, `|`, then the action
    /// tokens separated by `;`.
    fn store(&mut self, world: &PathWorld, out: &mut Vec<u8>) -> Fingerprint {
        let fp = ProcessEngine::fingerprint(&world.world, &mut self.buf);
        out.extend_from_slice(format!("{fp:032x}|").as_bytes());
        for (i, a) in world.path.iter().enumerate() {
            if i > 0 {
                out.push(b';');
            }
            out.extend_from_slice(a.to_string().as_bytes());
        }
        fp
    }

    /// Rebuilds a stored world (from a checkpoint, or by replay) and checks
    /// that its fingerprint is the one recorded when it was found: a world
    /// that rebuilds differently is an error naming its last action, never
    /// a silently different world.
    fn load(&mut self, stored: &[u8], out: &mut PathWorld) -> Result<(), String> {
        let text = std::str::from_utf8(stored).map_err(|e| format!("stored path is not text: {e}"))?;
        let (fp, path) = text.split_once('|').ok_or("stored world has no fingerprint")?;
        out.path.clear();
        for token in path.split(';').filter(|t| !t.is_empty()) {
            out.path.push(token.parse().map_err(|e: BadProcessAction| e.to_string())?);
        }
        out.world = self.engine.replay(&out.path).map_err(|e| self.err(e))?;
        let now = format!("{:032x}", ProcessEngine::fingerprint(&out.world, &mut self.buf));
        if now != fp {
            let step = out.path.last().map_or_else(|| "START".to_string(), ToString::to_string);
            return Err(format!(
                "rebuilding the world reached by {step} (after {} actions) gave fingerprint {now}, not {fp} as when it was found: the program is not deterministic under the checker (--det shows where)",
                out.path.len()
            ));
        }
        Ok(())
    }

    /// Lets the world's checkpoint go: the search will not load it again.
    fn retire(&mut self, stored: &[u8]) {
        let Some(path) = std::str::from_utf8(stored).ok().and_then(|t| t.split_once('|')).map(|(_, p)| p) else {
            return;
        };
        let actions: Result<Vec<ProcessAction>, _> =
            path.split(';').filter(|t| !t.is_empty()).map(str::parse).collect();
        if let Ok(actions) = actions {
            self.engine.retire(&actions);
        }
    }

    fn retires(&self) -> bool {
        true
    }

    /// Every state costs processes: poll the search's control at each, so
    /// that Ctrl-C and a time cap stop a program search at once.
    fn poll_every(&self) -> u64 {
        1
    }

    /// The engine checks `stop` before every action, and the supervisor
    /// while it waits for nodes, so that a stop is answered even inside a
    /// step that takes long (a deep rebuild, a node slow to block).
    fn watch(&mut self, stop: Option<crate::Stop>) {
        if stop.is_some() {
            self.stopped = None;
        }
        if let Some(second) = self.second.as_mut() {
            second.watch(stop.clone());
        }
        self.stop = stop.clone();
        self.engine.watch(stop);
    }

    fn tracing(&mut self, on: bool) {
        self.tracing = on;
        self.output.clear();
    }

    fn stopped(&self) -> Option<String> {
        self.stopped.clone()
    }

    fn listed_actions_are_enabled(&self) -> bool {
        // Every action the world lists is enabled by construction; `apply`
        // errors if a replay disagrees.
        true
    }

    fn action_kind(&self, action: &ProcessStep) -> u32 {
        match action {
            ProcessStep::Start => 0,
            ProcessStep::Act(ProcessAction::Deliver { .. }) => 1,
            ProcessStep::Act(ProcessAction::Eof { .. }) => 2,
            ProcessStep::Act(ProcessAction::Accept { .. }) => 3,
            ProcessStep::Act(ProcessAction::Drop { .. }) => 4,
            ProcessStep::Act(ProcessAction::Timeout { .. }) => 5,
            ProcessStep::Act(ProcessAction::Client { .. }) => 6,
            ProcessStep::Act(ProcessAction::Crash { .. } | ProcessAction::StartCrash(_)) => 7,
            ProcessStep::Act(ProcessAction::Run { .. }) => 8,
            ProcessStep::Act(ProcessAction::Restart { .. }) => 9,
            ProcessStep::Act(ProcessAction::Order { .. } | ProcessAction::StartOrder { .. }) => 10,
            ProcessStep::Act(ProcessAction::Switch { .. }) => 11,
        }
    }

    fn process_counts(&self) -> Option<ProcessCounts> {
        let s = self.engine.stats();
        let d = self.second.as_ref().map(ProcessEngine::stats).unwrap_or_default();
        Some(ProcessCounts {
            filters_installed: s.filters_installed + d.filters_installed,
            execs: s.execs + d.execs,
            forks: s.forks + d.forks,
        })
    }

    fn properties(&self) -> Vec<(String, Kind)> {
        let declared = self.model.properties.iter().map(|p| (p.name.clone(), p.kind));
        declared.chain([(NO_NODE_KILLED.to_string(), Kind::Always)]).collect()
    }

    fn holds(&self, index: usize, world: &PathWorld) -> Result<bool, String> {
        match self.model.properties.get(index) {
            Some(p) => crate::search::unwind(|| (p.predicate)(&world.world))
                .map_err(|message| format!("{} property `{}` panicked: {message}", p.kind, p.name)),
            None => Ok(no_node_killed(&world.world)),
        }
    }

    fn render(&mut self, action: &ProcessStep, world: &PathWorld) -> Step {
        let fp = ProcessEngine::fingerprint(&world.world, &mut self.buf);
        let w = &world.world;
        let nodes = w
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let life = match n.life {
                    Life::Live => n.threads_text(),
                    Life::Exited(c) => format!("exited {c}"),
                    Life::Signaled(s) => format!("killed by signal {s}"),
                    Life::Down => "down".to_string(),
                };
                let state = match &self.model.show {
                    Some(show) => show(&n.state, n.durable.as_deref()),
                    None => {
                        format!("state {} durable {}", hex(&n.state), n.durable.as_deref().map_or("-".to_string(), hex))
                    }
                };
                NodeText {
                    state: format!("{state} ({life})"),
                    output: self.output.get(i).cloned().unwrap_or_default(),
                    timers: Vec::new(),
                    wakes: Vec::new(),
                    resets: Vec::new(),
                    clients_left: n.clients_left,
                    pending_persists: Vec::new(),
                }
            })
            .collect();
        let mut messages = Vec::new();
        for (label, c) in &w.conns {
            // A node connection's dialer is a node; a client's or a timer's
            // is not.
            let dialer = (label.kind == ConnKind::Node).then_some(label.node);
            let to_target = c.to_target.iter().map(|m| (dialer, Some(c.target), format!("{label} ->{}", c.target), m));
            let to_dialer = c.to_dialer.iter().map(|m| (Some(c.target), dialer, format!("{label} <-{}", c.target), m));
            for (from, to, channel, m) in to_target.chain(to_dialer) {
                messages.push(MessageText { from, to, channel, text: hex(m) });
            }
        }
        let network = messages.iter().map(|m| format!("{}: {}", m.channel, m.text)).collect();
        Step {
            action: action.to_string(),
            label: action.to_string(),
            fingerprint: format!("{fp:032x}"),
            world: WorldText {
                nodes,
                network,
                messages,
                replies: w.replies.iter().map(|(n, b)| format!("{n}: {}", hex(b))).collect(),
                drops_left: w.drops,
                dups_left: 0,
                crashes_left: w.crashes,
                timeouts_left: Some(w.timeouts),
            },
        }
    }

    fn identity(&self) -> Identity {
        self.model.identity()
    }
}

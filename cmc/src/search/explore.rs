//! What a search explores: a state graph given by initial worlds, the
//! actions enabled in a world, and the world an action leads to. The
//! searches are generic over [`Explore`], so the in-process engine
//! ([`CoreExplorer`]) and the process front end share BFS, DFS, simulation
//! and replay.
//!
//! A world has two byte forms: its *stored* form, which a search keeps in
//! its queues and can load back, and its canonical bytes, which the
//! fingerprint hashes. For a core they are the same; a front end that
//! rebuilds worlds by replaying their actions also stores the actions.

use std::fmt;

use super::{POLL_EVERY, Stop};
use crate::action::Action;
use crate::core::{Core, PayloadKind};
use crate::engine::Engine;
use crate::model::{Identity, ModelError};
use crate::property::{Kind, View};
use crate::report::{MessageText, NodeText, ProcessCounts, Step, WorldText};
use crate::symmetry::Symmetry;
use crate::trace::hex;
use crate::world::{Fingerprint, World, fingerprint};

/// A state graph the searches can explore.
pub trait Explore {
    /// A world, decoded: what actions are taken in and properties read.
    type World;
    /// One edge of the graph; its `Display` is the token traces and
    /// counterexample files show.
    type Action: Copy + PartialEq + fmt::Display;

    /// A world to build into (its contents do not matter).
    fn empty_world(&self) -> Self::World;
    /// How many initial worlds there may be.
    fn initial_variants(&self) -> u32;
    /// Another explorer of the same state graph, for a search thread of
    /// its own; `None` (the default) for a front end that searches on one
    /// thread only, such as the process front end, whose nodes are
    /// processes.
    fn worker(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
    /// The action that stands for initial world `variant` in a trace.
    fn init_action(&self, variant: u32) -> Self::Action;
    /// Builds initial world `variant`; `Ok(false)` if there is no such world.
    fn initial(&mut self, variant: u32, out: &mut Self::World) -> Result<bool, String>;
    /// The actions enabled in `world`, in a fixed order (from the world
    /// alone: never from a core's or program's state).
    fn actions(&mut self, world: &Self::World, out: &mut Vec<Self::Action>) -> Result<(), String>;
    /// Takes `action` in `world`; `Ok(false)` if it turns out not enabled
    /// (direct actions only).
    fn apply(&mut self, world: &Self::World, action: &Self::Action, out: &mut Self::World) -> Result<bool, String>;
    /// Appends the stored form of `world` to `out` and returns the
    /// fingerprint of its canonical bytes.
    fn store(&mut self, world: &Self::World, out: &mut Vec<u8>) -> Fingerprint;
    /// Loads a stored form back.
    fn load(&mut self, stored: &[u8], out: &mut Self::World) -> Result<(), String>;
    /// The fingerprint of `world`, just loaded from `stored`. By default
    /// its stored form is made again (into `buf`) and hashed, as
    /// [`Explore::store`] does; a front end whose stored form is the
    /// canonical bytes hashes `stored` itself.
    fn fingerprint_stored(&mut self, world: &Self::World, stored: &[u8], buf: &mut Vec<u8>) -> Fingerprint {
        let _ = stored;
        buf.clear();
        self.store(world, buf)
    }
    /// Says that the search will not load the stored world `stored` again:
    /// a successor that was seen before, or a world once expanded. A front
    /// end that keeps something per stored world (the process front end's
    /// checkpoints) may let it go first. The default keeps nothing.
    fn retire(&mut self, stored: &[u8]) {
        let _ = stored;
    }
    /// Whether [`Explore::retire`] does anything: a search that would have
    /// to compute a stored form only to retire it asks first.
    fn retires(&self) -> bool {
        false
    }

    /// Whether the stored form is a canonical world under symmetry
    /// ([`Options::symmetry`](super::Options::symmetry)): a stored world
    /// then stands for every world its renamings give, and a path through
    /// stored worlds is turned into a real trace by following
    /// fingerprints. False by default.
    fn symmetric(&self) -> bool {
        false
    }

    /// Every successor of `world` (stored as `stored`, its fingerprint
    /// `fp`): appends each one's stored form to `out` and pushes
    /// (fingerprint, action position, end offset in `out`). A successor
    /// that is `world` itself (a self-loop, common in specifications whose
    /// actions stay enabled once they have taken effect) may be pushed as
    /// `fp` with no bytes: the searches look no self-loop up. The default
    /// takes each action in turn; a front end may do better.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        world: &Self::World,
        stored: &[u8],
        fp: Fingerprint,
        scratch: &mut Self::World,
        actions: &mut Vec<Self::Action>,
        out: &mut Vec<u8>,
        succ: &mut Vec<(Fingerprint, u32, usize)>,
    ) -> Result<(), String> {
        let _ = (stored, fp);
        self.actions(world, actions)?;
        for (position, action) in actions.iter().enumerate() {
            if self.apply(world, action, scratch)? {
                let fp = self.store(scratch, out);
                succ.push((fp, position as u32, out.len()));
            }
        }
        Ok(())
    }

    /// The action whose step failed, once [`Explore::expand`] returned an
    /// error in one: the error's trace then ends with it, taken in the
    /// world expanded. `None` when unknown, or when the error was in no
    /// step. Taken: a second call gives `None`.
    fn failed_action(&mut self) -> Option<Self::Action> {
        None
    }

    /// Whether every action `actions` lists has a successor (so `apply`
    /// never says `Ok(false)`). Simulation then computes only the successor
    /// it takes. Direct-actions cores list actions that may not be enabled.
    fn listed_actions_are_enabled(&self) -> bool {
        false
    }

    /// How often (in generated states) a search polls its
    /// [`Control`](super::Control): every few thousand by default, which
    /// costs nothing next to the states in between. A front end whose
    /// successors are slow to compute asks for a smaller number (1: a poll
    /// on every generated state), so that a time cap or Ctrl-C stops it
    /// soon.
    fn poll_every(&self) -> u64 {
        POLL_EVERY
    }

    /// The kind of `action`, for simulation's per-walk weights (swarm
    /// testing): actions of one kind share a weight in a walk. Kinds are
    /// small numbers; every action may be of kind 0.
    fn action_kind(&self, action: &Self::Action) -> u32 {
        let _ = action;
        0
    }

    /// Whether the worlds made from now on are for rendering a trace (a
    /// counterexample or a witness, or a replay): a front end may then
    /// run them the slow way and capture what it can show of them, such
    /// as a program's output. Off by default and after the trace.
    fn tracing(&mut self, _on: bool) {}

    /// The search's request to stop ([`Control::stop`](super::Control::stop)),
    /// for a front end whose single steps can take long to check while it
    /// waits; `None` once the search has ended, so that its traces are
    /// rendered to the end. Ignored by default.
    fn watch(&mut self, stop: Option<Stop>) {
        let _ = stop;
    }

    /// Why the front end cut a step short, when it did so to answer the
    /// request [`Explore::watch`] gave it: the error that step returned is
    /// then the stop, and the search ends incomplete with this reason.
    fn stopped(&self) -> Option<String> {
        None
    }

    /// What the search has cost in processes so far, for the report: the
    /// process front end's counts, `None` for a front end that starts no
    /// process.
    fn process_counts(&self) -> Option<ProcessCounts> {
        None
    }

    /// The model's properties, by index: (name, kind).
    fn properties(&self) -> Vec<(String, Kind)>;
    /// Whether property `index` holds in `world`; an error when the
    /// property's own code failed (a panic), which ends the search with the
    /// verdict `error` and the trace to `world`.
    fn holds(&self, index: usize, world: &Self::World) -> Result<bool, String>;
    /// One trace step for people and files: the action and the world after.
    fn render(&mut self, action: &Self::Action, world: &Self::World) -> Step;
    /// What identifies the model in reports and counterexample files.
    fn identity(&self) -> Identity;
}

/// A payload as the core shows it ([`Core::show_payload`]), or in hex. A
/// formatter that panics shows the hex: a trace is rendered after the
/// search, and is worth more than the formatter.
fn show<C: Core>(model: &crate::model::Model<C>, kind: PayloadKind, bytes: &[u8]) -> String {
    match unwind(|| C::show_payload(&model.settings, kind, bytes)) {
        Ok(Some(text)) => text,
        Ok(None) | Err(_) => hex(bytes),
    }
}

/// Runs a core's or a property's code, turning a panic into an error
/// message: the search then ends with the verdict `error` and the trace to
/// where it happened, as TLC reports an error in evaluating a
/// specification. (A core built with `panic = "abort"` cannot be caught:
/// the process ends.)
pub(crate) fn unwind<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        if let Some(s) = payload.downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic whose payload is not a string".to_string()
        }
    })
}

/// The entry for a successor a core's step just stored at `out[from..]`:
/// a self-loop (the bytes of the world expanded, `stored`, whose
/// fingerprint is `fp`) is taken back out and not hashed; otherwise its
/// fingerprint is `hash` of its bytes (a core's stored form is its
/// canonical bytes; under symmetry, the one already computed).
#[inline]
fn successor(
    out: &mut Vec<u8>,
    from: usize,
    stored: &[u8],
    fp: Fingerprint,
    position: u32,
    hash: impl FnOnce(&[u8]) -> Fingerprint,
) -> (Fingerprint, u32, usize) {
    if out[from..] == *stored {
        out.truncate(from);
        return (fp, position, from);
    }
    (hash(&out[from..]), position, out.len())
}

/// The in-process front end: a core's model, through the engine.
pub struct CoreExplorer<'m, C: Core> {
    pub(crate) engine: Engine<'m, C>,
    buf: Vec<u8>,
    /// The action whose step failed in the last `expand` (see
    /// [`Explore::failed_action`]).
    failed: Option<Action>,
    /// Under symmetry, what picks the canonical world to store.
    symmetry: Option<Symmetry>,
}

impl<'m, C: Core> CoreExplorer<'m, C> {
    /// The state graph of the model `engine` applies actions of.
    pub fn new(engine: Engine<'m, C>) -> Self {
        CoreExplorer { engine, buf: Vec::new(), failed: None, symmetry: None }
    }

    /// The same state graph under symmetry: worlds are stored and
    /// fingerprinted in their canonical form ([`crate::symmetry`]). An
    /// error when the core declares fewer than two interchangeable nodes
    /// in this model.
    pub fn with_symmetry(mut self) -> Result<Self, ModelError> {
        let model = self.engine.model;
        let nodes = self.engine.shape.nodes;
        let set = C::interchangeable(&model.settings, nodes);
        let inside = set.iter().filter(|&n| n < nodes).count();
        if inside < 2 || inside != set.len() || self.engine.env.direct.is_some() {
            return Err(ModelError::NoSymmetry { core: C::layout(&model.settings).name, count: inside, nodes });
        }
        self.symmetry = Some(Symmetry::new(set));
        Ok(self)
    }

    fn panicked(&self, action: &Action, message: String) -> String {
        format!("core `{}` panicked in {action}: {message}", C::layout(&self.engine.model.settings).name)
    }

    /// After a failure in the direct-actions loop, which does not say
    /// which action failed: takes each in turn until one fails again (a
    /// core is deterministic; a panic's message is then printed twice).
    fn find_failed(&mut self, world: &World, scratch: &mut World, count: u16) -> Option<Action> {
        (0..count).map(|index| Action::Direct { index }).find(|a| self.apply(world, a, scratch).is_err())
    }

    fn world_text(&self, world: &World) -> WorldText {
        let model = self.engine.model;
        let view = View::<C>::new(world, &model.settings);
        let bits = |v: u32, n: usize| (0..n as u8).filter(|i| v & (1 << i) != 0).collect::<Vec<u8>>();
        let nodes = (0..world.nodes())
            .map(|n| {
                let e = world.env(n);
                NodeText {
                    state: C::show_state(&model.settings, &view.state(n)),
                    output: String::new(),
                    timers: bits(e.timers as u32, 16),
                    wakes: bits(e.wakes as u32, 8),
                    resets: bits(e.resets as u32, 8),
                    clients_left: e.clients_left,
                    pending_persists: world
                        .persists_of(n)
                        .map(|b| show::<C>(model, PayloadKind::Persist { node: n }, b))
                        .collect(),
                }
            })
            .collect();
        let (drops, dups, crashes, timeouts) = world.budgets_left();
        let messages: Vec<MessageText> = world
            .messages()
            .iter()
            .map(|m| {
                let kind = PayloadKind::Message { from: m.from, to: m.to };
                MessageText {
                    from: Some(m.from),
                    to: Some(m.to),
                    channel: format!("{}->{}", m.from, m.to),
                    text: show::<C>(model, kind, m.payload.as_slice()),
                }
            })
            .collect();
        WorldText {
            nodes,
            network: messages.iter().map(|m| format!("{}: {}", m.channel, m.text)).collect(),
            messages,
            replies: world
                .replies()
                .map(|(n, b)| format!("{n}: {}", show::<C>(model, PayloadKind::Reply { node: n }, b)))
                .collect(),
            drops_left: drops,
            dups_left: dups,
            crashes_left: crashes,
            timeouts_left: model.budgets.timeouts.map(|_| timeouts),
        }
    }
}

impl<C: Core> Explore for CoreExplorer<'_, C> {
    type World = World;
    type Action = Action;

    fn empty_world(&self) -> World {
        World::empty(&self.engine.shape)
    }

    fn initial_variants(&self) -> u32 {
        self.engine.initial_variants()
    }

    fn worker(&self) -> Option<Self> {
        // The model was validated when this explorer's engine was made.
        let mut worker = CoreExplorer::new(Engine::new(self.engine.model, self.engine.det).ok()?);
        worker.symmetry.clone_from(&self.symmetry);
        Some(worker)
    }

    fn init_action(&self, variant: u32) -> Action {
        Action::Init { variant }
    }

    fn initial(&mut self, variant: u32, out: &mut World) -> Result<bool, String> {
        let e = &mut self.engine;
        match unwind(|| e.initial(variant, out)) {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(message) => Err(self.panicked(&Action::Init { variant }, message)),
        }
    }

    fn actions(&mut self, world: &World, out: &mut Vec<Action>) -> Result<(), String> {
        self.engine.actions(world, out).map_err(|e| e.to_string())
    }

    fn apply(&mut self, world: &World, action: &Action, out: &mut World) -> Result<bool, String> {
        let e = &mut self.engine;
        match unwind(|| e.apply(world, action, out)) {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(message) => Err(self.panicked(action, message)),
        }
    }

    fn store(&mut self, world: &World, out: &mut Vec<u8>) -> Fingerprint {
        let e = &self.engine;
        if let Some(symmetry) = &mut self.symmetry {
            return symmetry.canonical_append::<C>(&e.model.settings, &e.shape, world, out);
        }
        let from = out.len();
        world.encode_append(&e.shape, out);
        fingerprint(&out[from..])
    }

    fn symmetric(&self) -> bool {
        self.symmetry.is_some()
    }

    fn load(&mut self, stored: &[u8], out: &mut World) -> Result<(), String> {
        out.decode_into(&self.engine.shape, stored).map_err(|e| e.to_string())
    }

    fn fingerprint_stored(&mut self, world: &World, stored: &[u8], buf: &mut Vec<u8>) -> Fingerprint {
        // A core's stored form is its canonical encoding: the world loaded
        // from it encodes to the same bytes (checked in debug builds).
        if cfg!(debug_assertions) {
            buf.clear();
            world.encode_append(&self.engine.shape, buf);
            debug_assert_eq!(buf.as_slice(), stored, "a stored world loads and encodes back to itself");
        }
        fingerprint(stored)
    }

    fn expand(
        &mut self,
        world: &World,
        stored: &[u8],
        fp: Fingerprint,
        scratch: &mut World,
        actions: &mut Vec<Action>,
        out: &mut Vec<u8>,
        succ: &mut Vec<(Fingerprint, u32, usize)>,
    ) -> Result<(), String> {
        let e = &mut self.engine;
        let direct = e.env.direct;
        // The action being taken, for the error: one store per successor,
        // where a catch per step would cost a call the core's step could
        // not be inlined through.
        let mut taking: Option<Action> = None;
        let expanded = unwind(|| match direct {
            // The hot loop of calibration cores: the state is read once and
            // the core's step can be inlined.
            Some(_) if !e.det => e.expand_direct(world, fp, scratch, out, succ).map_err(|e| e.to_string()),
            // A direct-actions core's list is always 0..n: no need to write
            // it out for every state.
            Some(count) => {
                for index in 0..count {
                    let from = out.len();
                    let action = Action::Direct { index };
                    taking = Some(action);
                    if e.apply_encoded(world, &action, scratch, out).map_err(|e| e.to_string())? {
                        succ.push(successor(out, from, stored, fp, index as u32, fingerprint));
                    }
                }
                Ok(())
            }
            None if self.symmetry.is_some() => {
                let Some(symmetry) = &mut self.symmetry else { unreachable!() };
                e.actions(world, actions).map_err(|e| e.to_string())?;
                let before = succ.len();
                for (position, action) in actions.iter().enumerate() {
                    taking = Some(*action);
                    if e.apply(world, action, scratch).map_err(|e| e.to_string())? {
                        let from = out.len();
                        let class = symmetry.canonical_append::<C>(&e.model.settings, &e.shape, scratch, out);
                        succ.push(successor(out, from, stored, fp, position as u32, |_| class));
                    }
                }
                taking = None;
                if e.det {
                    let mut classes = succ[before..].iter().map(|&(fp, _, _)| fp).collect();
                    crate::symmetry::check_swaps::<C>(symmetry, e, world, &mut classes)?;
                }
                Ok(())
            }
            None => {
                e.actions(world, actions).map_err(|e| e.to_string())?;
                for (position, action) in actions.iter().enumerate() {
                    let from = out.len();
                    taking = Some(*action);
                    if e.apply_encoded(world, action, scratch, out).map_err(|e| e.to_string())? {
                        succ.push(successor(out, from, stored, fp, position as u32, fingerprint));
                    }
                }
                Ok(())
            }
        });
        let error = match (expanded, taking) {
            (Ok(Ok(())), _) => return Ok(()),
            (Ok(Err(error)), _) => error,
            (Err(message), Some(action)) => self.panicked(&action, message),
            (Err(message), None) => {
                format!("core `{}` panicked: {message}", C::layout(&self.engine.model.settings).name)
            }
        };
        self.failed = taking;
        if let (None, Some(count)) = (taking, direct) {
            // The direct loop does not say which action failed.
            self.failed = self.find_failed(world, scratch, count);
            if let Some(action) = self.failed
                && let Err(named) = self.apply(world, &action, scratch)
            {
                return Err(named);
            }
        }
        Err(error)
    }

    fn failed_action(&mut self) -> Option<Action> {
        self.failed.take()
    }

    fn action_kind(&self, action: &Action) -> u32 {
        match *action {
            Action::Init { .. } => 0,
            Action::Deliver { .. } => 1,
            Action::Drop { .. } => 2,
            Action::Dup { .. } => 3,
            Action::Fire { .. } => 4,
            Action::Flush { .. } => 5,
            Action::Wake { .. } => 6,
            Action::Client { .. } => 7,
            Action::Crash { .. } => 8,
            Action::Reset { .. } => 9,
            // Each disjunct of a direct-actions core is a kind of its own.
            Action::Direct { index } => 10 + u32::from(index),
        }
    }

    fn properties(&self) -> Vec<(String, Kind)> {
        self.engine.model.properties.iter().map(|p| (p.name.clone(), p.kind)).collect()
    }

    fn holds(&self, index: usize, world: &World) -> Result<bool, String> {
        let model = self.engine.model;
        let property = &model.properties[index];
        unwind(|| property.holds(&View::<C>::new(world, &model.settings)))
            .map_err(|message| format!("{} property `{}` panicked: {message}", property.kind, property.name))
    }

    fn render(&mut self, action: &Action, world: &World) -> Step {
        let fp = self.engine.fingerprint(world, &mut self.buf);
        let model = self.engine.model;
        let message = |name: &str, from, to, msg: &crate::core::Payload| {
            let shown = show::<C>(model, PayloadKind::Message { from, to }, msg.as_slice());
            format!("{name}({from}->{to}, {shown})")
        };
        let label = match *action {
            Action::Direct { index } => C::action_label(&model.settings, index),
            Action::Deliver { from, to, msg } => message("DELIVER", from, to, &msg),
            Action::Drop { from, to, msg } => message("DROP", from, to, &msg),
            Action::Dup { from, to, msg } => message("DUP", from, to, &msg),
            _ => action.to_string(),
        };
        Step { action: action.to_string(), label, fingerprint: format!("{fp:032x}"), world: self.world_text(world) }
    }

    fn identity(&self) -> Identity {
        self.engine.model.identity()
    }
}

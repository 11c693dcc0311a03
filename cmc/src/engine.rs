//! The engine: builds initial worlds and applies one action to a world,
//! calling the core's `step` and `apply_persist` and then carrying out the
//! effects. It owns durability (it compares the durable bytes around every
//! step) and every queue bound. It does no I/O and reads no clock. With
//! `--det` it runs every `step` and every `apply_persist` twice, from copies
//! of the same state, and compares what they give back.
//!
//! With the `valgrind` feature (off by default; `scripts/memory_gate.sh`),
//! every byte a core hands back (its next state, and the payloads and
//! numbers of its effects) is checked to be defined by a memcheck client
//! request as soon as `step` or `apply_persist` returns: an uninitialised
//! byte there would end up in the world, which `--det` cannot see, since
//! both runs copy the same garbage. Outside valgrind the requests do
//! nothing; without the feature they are not compiled at all.

use zerocopy::{FromBytes, FromZeros, IntoBytes};

use crate::action::{self, Action, Environment, TooManyActions};
use crate::core::{Context, Core, Effect, EffectError, Effects, Event, NodeId, Payload, limits};
use crate::model::{Model, ModelError};
use crate::network::{self, Msg, Network};
use crate::world::{Fingerprint, Shape, World, fingerprint};

/// A core misbehaved, or a step crossed a limit. The search stops with the
/// verdict `error` and a trace to the world where it happened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("core `{core}`, node {node}, event {event}: {kind}")]
pub struct StepError {
    /// The core's [`Core::NAME`].
    pub core: &'static str,
    /// The node that stepped.
    pub node: NodeId,
    /// The event it stepped on, as [`Event`]'s `Display` shows it, or
    /// `apply_persist` or `DUP` for an error outside `step`.
    pub event: String,
    /// What went wrong.
    pub kind: StepErrorKind,
}

/// What went wrong in one step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepErrorKind {
    /// `step` changed one of the first [`Core::DURABLE`] bytes.
    #[error("step changed durable bytes (only apply_persist may)")]
    DurableChanged,
    /// `apply_persist` changed a byte after the first [`Core::DURABLE`].
    #[error("apply_persist changed volatile bytes (it may change only the first DURABLE bytes)")]
    PersistChangedVolatile,
    /// The step crossed a limit of [`Effects`].
    #[error("{0}")]
    Effect(EffectError),
    /// A send to a node the model does not have.
    #[error("send to node {to}, but the model has {nodes} nodes")]
    NoSuchNode {
        /// The receiver named.
        to: NodeId,
        /// The model's node count.
        nodes: u8,
    },
    /// A send from a node to itself.
    #[error("send to itself (a node has no channel to itself)")]
    SendToSelf,
    /// A send or a DUP would put more than [`limits::QUEUE_MAX`] messages
    /// on one channel.
    #[error("channel {from}->{to} would hold more than {max} messages (limit messages_per_channel_max)", max = limits::QUEUE_MAX)]
    ChannelFull {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
    },
    /// A persist would leave the node more than [`limits::QUEUE_MAX`]
    /// pending persists.
    #[error("more than {max} pending persists (limit pending_persists_max)", max = limits::QUEUE_MAX)]
    PersistsFull,
    /// A reply would put more than [`limits::QUEUE_MAX`] replies in the
    /// ghost log.
    #[error("the ghost log would hold more than {max} replies (limit replies_max)", max = limits::QUEUE_MAX)]
    RepliesFull,
    /// A direct-actions core emitted an effect.
    #[error("an effect from a direct-actions core (its world is one state: no messages, timers, persists or replies)")]
    EffectInDirect,
    /// A direct-actions core emitted an effect and then called
    /// [`Effects::not_enabled`].
    #[error(
        "an effect, then not_enabled() (a direct-actions core emits no effects, and an action that is not enabled has none)"
    )]
    EffectThenNotEnabled,
    /// A step that called [`Effects::not_enabled`] changed the state it
    /// was given.
    #[error("not_enabled() after changing the state (an action that is not enabled leaves the state as it is)")]
    ChangedThenNotEnabled,
    /// A message-passing core called [`Effects::not_enabled`].
    #[error("not_enabled() from a message-passing core (only direct-actions cores may)")]
    NotEnabledOutsideDirect,
    /// More possible actions in one world than
    /// [`limits::ACTIONS_PER_STATE`]. No step makes this kind at present:
    /// the searches report the [`TooManyActions`] of [`Engine::actions`]
    /// as it is.
    #[error("{0}")]
    TooManyActions(TooManyActions),
    /// `--det` ran the same call (`step`, or `apply_persist`: the error's
    /// event says which) twice from copies of one state.
    #[error("non-deterministic: two runs of the same call from the same state differ in {0} (--det)")]
    Nondeterministic(&'static str),
    /// Only with the `valgrind` feature, under valgrind's memcheck.
    #[cfg(feature = "valgrind")]
    #[error("byte {offset} of the {what} is undefined (uninitialised memory, valgrind memcheck)")]
    Undefined {
        /// What the core handed back: the next state, a message, ...
        what: &'static str,
        /// The first undefined byte's offset in it.
        offset: usize,
    },
}

/// One successor: the action taken, or none when a direct action is not
/// enabled.
pub(crate) type Outcome = Result<bool, Box<StepError>>;

/// Applies actions of one model. Holds scratch buffers so that a search
/// allocates nothing per successor.
pub struct Engine<'m, C: Core> {
    pub(crate) model: &'m Model<C>,
    pub(crate) shape: Shape,
    /// The core's name and durable bytes ([`Core::layout`]).
    name: &'static str,
    durable: usize,
    pub(crate) env: Environment,
    pub(crate) det: bool,
    effects: Effects,
    effects_again: Effects,
}

/// Builds a step error; out of line, so that the hot path stays small.
#[cold]
#[inline(never)]
fn step_error(core: &'static str, node: NodeId, event: Event<'_>, kind: StepErrorKind) -> Box<StepError> {
    Box::new(StepError { core, node, event: event.to_string(), kind })
}

impl<'m, C: Core> Engine<'m, C> {
    /// An engine for `model`, validated first ([`Model::validate`]). With
    /// `det`, every `step` and `apply_persist` runs twice and a difference
    /// is [`StepErrorKind::Nondeterministic`].
    pub fn new(model: &'m Model<C>, det: bool) -> Result<Engine<'m, C>, ModelError> {
        model.validate()?;
        let direct = C::direct_actions(&model.settings).map(|d| d.actions);
        let layout = C::layout(&model.settings);
        Ok(Engine {
            model,
            name: layout.name,
            durable: layout.durable,
            shape: Shape {
                nodes: model.nodes,
                state_size: layout.state_size,
                network: model.network,
                direct: direct.is_some(),
            },
            env: Environment { network: model.network, budgets: model.budgets, direct },
            det,
            effects: Effects::new(),
            effects_again: Effects::new(),
        })
    }

    /// What is fixed for the model's worlds: nodes, state size, network.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// How many initial worlds there are (`Init { variant }` for each).
    pub fn initial_variants(&self) -> u32 {
        C::direct_actions(&self.model.settings).map_or(1, |d| d.initial_states)
    }

    /// Builds initial world `variant` into `out`. `Ok(false)` when a
    /// direct-actions core rejects the variant (`not_enabled` in `Init`), as
    /// TLC drops an `Init` candidate whose constraint fails.
    pub fn initial(&mut self, variant: u32, out: &mut World) -> Outcome {
        let fresh = World::empty(&self.shape);
        out.copy_from(&fresh);
        let b = &self.model.budgets;
        out.drops = b.drops;
        out.dups = b.dups;
        out.crashes = b.crashes;
        out.timeouts = b.timeouts.unwrap_or(0);
        for e in out.env.iter_mut() {
            e.clients_left = b.clients;
        }
        for node in 0..self.shape.nodes {
            if !self.step(out, node, Event::Init { variant })? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Lists the actions enabled in `world` (from the world alone).
    pub fn actions(&self, world: &World, out: &mut Vec<Action>) -> Result<(), TooManyActions> {
        action::enumerate(&self.env, world, out)
    }

    /// Applies `action` to `world` into `out`. `Ok(false)` when a direct
    /// action is not enabled (then `out` is garbage).
    pub fn apply(&mut self, world: &World, action: &Action, out: &mut World) -> Outcome {
        if let Action::Direct { index } = *action {
            // The hot path of calibration cores: most indices are not
            // enabled, so step on the source world and copy only on success.
            let event = Event::Action { index };
            let Some(state) = self.run_step(world, 0, event)? else {
                return Ok(false);
            };
            out.copy_from(world);
            self.commit(out, 0, event, &state)?;
            return Ok(true);
        }
        out.copy_from(world);
        match *action {
            Action::Init { variant } => return self.initial(variant, out),
            Action::Deliver { from, to, msg } => {
                let m = Msg { from, to, payload: msg };
                let at = match self.shape.network {
                    Network::Fifo => network::head(&out.net, from, to),
                    Network::Bag => network::find(&out.net, &m),
                };
                let at = at.unwrap_or_else(|| unreachable!("DELIVER of a message not in flight"));
                out.net.remove(at);
                self.step(out, to, Event::Deliver { from, msg: msg.as_slice() })?;
            }
            Action::Drop { from, to, msg } => {
                out.drops -= 1;
                match self.shape.network {
                    Network::Fifo => {
                        network::reset_pair(&mut out.net, from, to);
                        out.env[from as usize].resets |= 1 << to;
                        out.env[to as usize].resets |= 1 << from;
                    }
                    Network::Bag => {
                        let at = network::find(&out.net, &Msg { from, to, payload: msg });
                        out.net.remove(at.unwrap_or_else(|| unreachable!("DROP of a message not in flight")));
                    }
                }
            }
            Action::Dup { from, to, msg } => {
                out.dups -= 1;
                let m = Msg { from, to, payload: msg };
                network::send(Network::Bag, &mut out.net, m).map_err(|_| {
                    Box::new(StepError {
                        core: self.name,
                        node: from,
                        event: "DUP".to_string(),
                        kind: StepErrorKind::ChannelFull { from, to },
                    })
                })?;
            }
            Action::Fire { node, timer } => {
                if self.env.budgets.timeouts.is_some() {
                    out.timeouts -= 1;
                }
                out.env[node as usize].timers &= !(1 << timer);
                self.step(out, node, Event::Fire { timer })?;
            }
            Action::Flush { node } => {
                let at = out.persists.iter().position(|(n, _)| *n == node);
                let (_, record) = out.persists.remove(at.unwrap_or_else(|| unreachable!("FLUSH with nothing pending")));
                self.persist(out, node, &record)?;
                self.step(out, node, Event::Flushed)?;
            }
            Action::Wake { node, waiter } => {
                out.env[node as usize].wakes &= !(1 << waiter);
                self.step(out, node, Event::Wake { waiter })?;
            }
            Action::Client { node } => {
                let e = &mut out.env[node as usize];
                let index = self.model.budgets.clients - e.clients_left;
                e.clients_left -= 1;
                self.step(out, node, Event::Client { index })?;
            }
            Action::Crash { node, keep } => {
                out.crashes -= 1;
                let mine: Vec<Payload> = out.persists.iter().filter(|(n, _)| *n == node).map(|(_, p)| *p).collect();
                for record in &mine[..keep as usize] {
                    self.persist(out, node, record)?;
                }
                out.persists.retain(|(n, _)| *n != node);
                let size = self.shape.state_size;
                let at = node as usize * size;
                out.states[at + self.durable..at + size].fill(0);
                let e = &mut out.env[node as usize];
                e.timers = 0;
                e.wakes = 0;
                e.resets = 0;
                network::isolate(&mut out.net, node);
                for peer in 0..self.shape.nodes {
                    if peer != node {
                        out.env[peer as usize].resets |= 1 << node;
                    }
                }
                self.step(out, node, Event::Restart)?;
            }
            Action::Reset { node, peer } => {
                out.env[node as usize].resets &= !(1 << peer);
                self.step(out, node, Event::Reset { peer })?;
            }
            Action::Direct { .. } => unreachable!("handled above"),
        }
        Ok(true)
    }

    /// Applies `action` to `world` and appends
    /// the successor's encoding to `out`; `scratch` is working space.
    /// `Ok(false)` when a direct action is not enabled (nothing appended).
    /// For a direct action the successor's encoding is just the new state,
    /// so no world is built at all.
    pub(crate) fn apply_encoded(
        &mut self,
        world: &World,
        action: &Action,
        scratch: &mut World,
        out: &mut Vec<u8>,
    ) -> Outcome {
        if let Action::Direct { index } = *action {
            let event = Event::Action { index };
            let Some(state) = self.run_step(world, 0, event)? else {
                return Ok(false);
            };
            if self.effects.as_slice().is_empty() {
                // The world of a direct-actions core is its one state.
                out.extend_from_slice(&state.as_bytes()[..self.shape.state_size]);
                return Ok(true);
            }
            scratch.copy_from(world);
            self.commit(scratch, 0, event, &state)?;
        } else if !self.apply(world, action, scratch)? {
            return Ok(false);
        }
        scratch.encode_append(&self.shape, out);
        Ok(true)
    }

    /// The hot loop of calibration cores: tries every direct action on
    /// `world` and appends each successor's encoding
    /// to `out`, pushing (fingerprint, action index, end offset) to `succ`.
    /// Same results as [`Engine::apply_encoded`] per index, but the state is
    /// read once and `step` can be inlined. Falls back to `apply_encoded`
    /// for a step that emits effects, and is not used under `--det`.
    ///
    /// A successor's bytes are compared, copied and hashed one step late:
    /// `step` has just written them with narrow stores, and reading them
    /// back at once, wider, waits for those stores to reach the cache (a
    /// failed store-to-load forward). Two buffers take turns: the next
    /// action steps in one while the other still holds the pending
    /// successor.
    #[inline]
    pub(crate) fn expand_direct(
        &mut self,
        world: &World,
        fp: crate::world::Fingerprint,
        scratch: &mut World,
        out: &mut Vec<u8>,
        succ: &mut Vec<(crate::world::Fingerprint, u32, usize)>,
    ) -> Result<(), Box<StepError>> {
        let count = self.env.direct.unwrap_or(0);
        let base = self.read_state(world, 0);
        let ctx = self.context(0);
        let mut buffers = [base, base];
        // Whether a buffer may differ from `base`: a step that is not
        // enabled leaves its state as it is (`Effects::not_enabled`, checked
        // under `--det`), so most actions step from the bytes the one before
        // left, not a fresh copy.
        let mut dirty = [false, false];
        let mut current = 0;
        // The index whose successor waits in `buffers[current ^ 1]`.
        let mut pending: Option<u16> = None;
        for index in 0..count {
            let state = &mut buffers[current];
            if dirty[current] {
                *state = base;
            }
            self.effects.clear();
            C::step(&ctx, state, Event::Action { index }, &mut self.effects);
            let clean = self.effects.error().is_none() && self.effects.len() == 0;
            if clean && self.effects.is_disabled() {
                dirty[current] = false;
                continue;
            }
            dirty[current] = true;
            #[cfg(feature = "valgrind")]
            memcheck::defined(&buffers[current], self.effects.as_slice())
                .map_err(|kind| step_error(self.name, 0, Event::Action { index }, kind))?;
            if let Some(waiting) = pending.take() {
                self.finish_direct(world, &base, &buffers[current ^ 1], waiting, fp, scratch, out, succ)?;
            }
            if clean {
                pending = Some(index);
                current ^= 1;
                continue;
            }
            let from = out.len();
            if self.apply_encoded(world, &Action::Direct { index }, scratch, out)? {
                succ.push((fingerprint(&out[from..]), index as u32, out.len()));
            }
        }
        if let Some(waiting) = pending {
            self.finish_direct(world, &base, &buffers[current ^ 1], waiting, fp, scratch, out, succ)?;
        }
        Ok(())
    }

    /// [`Engine::expand_direct`]'s successor `state` of action `index`, a
    /// step that emitted nothing: a self-loop, or a new world appended to
    /// `out` and hashed from `state` (not from `out`, just written).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn finish_direct(
        &mut self,
        world: &World,
        base: &C::State,
        state: &C::State,
        index: u16,
        fp: crate::world::Fingerprint,
        scratch: &mut World,
        out: &mut Vec<u8>,
        succ: &mut Vec<(crate::world::Fingerprint, u32, usize)>,
    ) -> Result<(), Box<StepError>> {
        let from = out.len();
        if state.as_bytes() == base.as_bytes() {
            // A self-loop: the world expanded, whose fingerprint is
            // known; not copied, not hashed (see `Explore::expand`).
            succ.push((fp, index as u32, from));
        } else if state.as_bytes()[..self.durable] == base.as_bytes()[..self.durable] {
            // The world of a direct-actions core is its state.
            let bytes = &state.as_bytes()[..self.shape.state_size];
            out.extend_from_slice(bytes);
            succ.push((fingerprint(bytes), index as u32, out.len()));
        } else if self.apply_encoded(world, &Action::Direct { index }, scratch, out)? {
            // The slow path reports the durable bytes changed; it cannot
            // get here.
            succ.push((fingerprint(&out[from..]), index as u32, out.len()));
        }
        Ok(())
    }

    /// Encodes `world` into `buf` and returns its fingerprint.
    pub fn fingerprint(&self, world: &World, buf: &mut Vec<u8>) -> Fingerprint {
        world.encode(&self.shape, buf);
        fingerprint(buf)
    }

    fn context(&self, node: NodeId) -> Context<'m, C::Settings> {
        Context { node, nodes: self.shape.nodes, settings: &self.model.settings }
    }

    fn read_state(&self, world: &World, node: NodeId) -> C::State {
        let size = self.shape.state_size;
        let at = node as usize * size;
        let bytes = &world.states[at..at + size];
        if size == std::mem::size_of::<C::State>() {
            return C::State::read_from_bytes(bytes)
                .unwrap_or_else(|_| unreachable!("state slice has the state's size"));
        }
        // A state type larger than the core's state (a C core's size
        // class): the rest stays zero.
        let mut state = C::State::new_zeroed();
        state.as_mut_bytes()[..size].copy_from_slice(bytes);
        state
    }

    fn write_state(&self, world: &mut World, node: NodeId, state: &C::State) {
        let size = self.shape.state_size;
        let at = node as usize * size;
        world.states[at..at + size].copy_from_slice(&state.as_bytes()[..size]);
    }

    /// Runs `apply_persist` for one record and checks that it touched only
    /// durable bytes; with `--det`, runs it a second time from a copy of the
    /// same state and compares.
    fn persist(&mut self, world: &mut World, node: NodeId, record: &Payload) -> Result<(), Box<StepError>> {
        let err = |kind| Box::new(StepError { core: self.name, node, event: "apply_persist".to_string(), kind });
        let before = self.read_state(world, node);
        let mut state = before;
        let ctx = self.context(node);
        C::apply_persist(&ctx, &mut state, record.as_slice());
        #[cfg(feature = "valgrind")]
        memcheck::defined(&state, &[]).map_err(err)?;
        if self.det {
            let mut again = before;
            C::apply_persist(&ctx, &mut again, record.as_slice());
            if again.as_bytes() != state.as_bytes() {
                return Err(err(StepErrorKind::Nondeterministic("next state")));
            }
        }
        if state.as_bytes()[self.durable..] != before.as_bytes()[self.durable..] {
            return Err(err(StepErrorKind::PersistChangedVolatile));
        }
        self.write_state(world, node, &state);
        Ok(())
    }

    /// Calls `step` and carries out its effects. `Ok(false)` when a direct
    /// action is not enabled.
    fn step(&mut self, world: &mut World, node: NodeId, event: Event<'_>) -> Outcome {
        match self.run_step(world, node, event)? {
            None => Ok(false),
            Some(state) => {
                self.commit(world, node, event, &state)?;
                Ok(true)
            }
        }
    }

    /// Calls `step` on node `node` of `world` and checks it; the effects are
    /// left in `self.effects`. `None` when a direct action is not enabled.
    #[inline]
    fn run_step(&mut self, world: &World, node: NodeId, event: Event<'_>) -> Result<Option<C::State>, Box<StepError>> {
        let before = self.read_state(world, node);
        let mut state = before;
        let name = self.name;
        let err = |kind| step_error(name, node, event, kind);
        self.effects.clear();
        let ctx = self.context(node);
        C::step(&ctx, &mut state, event, &mut self.effects);
        #[cfg(feature = "valgrind")]
        memcheck::defined(&state, self.effects.as_slice()).map_err(err)?;
        if self.det {
            let mut again = before;
            self.effects_again.clear();
            C::step(&ctx, &mut again, event, &mut self.effects_again);
            if again.as_bytes() != state.as_bytes() {
                return Err(err(StepErrorKind::Nondeterministic("next state")));
            }
            if self.effects_again != self.effects {
                return Err(err(StepErrorKind::Nondeterministic("effects")));
            }
        }
        if let Some(e) = self.effects.error() {
            return Err(err(StepErrorKind::Effect(e)));
        }
        if self.effects.is_disabled() {
            if self.env.direct.is_none() {
                return Err(err(StepErrorKind::NotEnabledOutsideDirect));
            }
            if self.effects.len() != 0 {
                // Dropping the effect with the successor would hide it.
                return Err(err(StepErrorKind::EffectThenNotEnabled));
            }
            if state.as_bytes() != before.as_bytes() {
                // `expand_direct` steps the next action from these bytes.
                return Err(err(StepErrorKind::ChangedThenNotEnabled));
            }
            return Ok(None);
        }
        if state.as_bytes()[..self.durable] != before.as_bytes()[..self.durable] {
            return Err(err(StepErrorKind::DurableChanged));
        }
        Ok(Some(state))
    }

    /// Writes the stepped state into `world` and carries out the effects in
    /// `self.effects`, in emission order.
    fn commit(
        &mut self,
        world: &mut World,
        node: NodeId,
        event: Event<'_>,
        state: &C::State,
    ) -> Result<(), Box<StepError>> {
        let name = self.name;
        let err = |kind| step_error(name, node, event, kind);
        if self.env.direct.is_some() && self.effects.len() != 0 {
            return Err(err(StepErrorKind::EffectInDirect));
        }
        self.write_state(world, node, state);
        for effect in self.effects.as_slice() {
            match *effect {
                Effect::Send { to, msg } => {
                    if to >= self.shape.nodes {
                        return Err(err(StepErrorKind::NoSuchNode { to, nodes: self.shape.nodes }));
                    }
                    if to == node {
                        return Err(err(StepErrorKind::SendToSelf));
                    }
                    let m = Msg { from: node, to, payload: msg };
                    network::send(self.shape.network, &mut world.net, m)
                        .map_err(|_| err(StepErrorKind::ChannelFull { from: node, to }))?;
                }
                Effect::Arm { timer } => world.env[node as usize].timers |= 1 << timer,
                Effect::Cancel { timer } => world.env[node as usize].timers &= !(1 << timer),
                Effect::Persist { record } => {
                    let pending = world.persists.iter().filter(|(n, _)| *n == node).count();
                    if pending >= limits::QUEUE_MAX {
                        return Err(err(StepErrorKind::PersistsFull));
                    }
                    let at = world.persists.partition_point(|(n, _)| *n <= node);
                    world.persists.insert(at, (node, record));
                }
                Effect::Wake { waiter } => world.env[node as usize].wakes |= 1 << waiter,
                Effect::Reply { msg } => {
                    if world.replies.len() >= limits::QUEUE_MAX {
                        return Err(err(StepErrorKind::RepliesFull));
                    }
                    world.replies.push((node, msg));
                }
            }
        }
        Ok(())
    }
}

/// The memcheck client requests of the `valgrind` feature, through
/// `crabgrind` (Valgrind's own `valgrind.h` and `memcheck.h` macros).
#[cfg(feature = "valgrind")]
mod memcheck {
    use zerocopy::{Immutable, IntoBytes};

    use super::StepErrorKind;
    use crate::core::Effect;

    /// The first undefined byte of `bytes`, if any. Memcheck also prints
    /// its own report ("Uninitialised byte(s) found during client check
    /// request"), with the stack and the origin, and counts an error for
    /// `--error-exitcode`.
    fn first_undefined(bytes: &[u8]) -> Option<usize> {
        crabgrind::memcheck::check_mem_defined(bytes.as_ptr().cast(), bytes.len()).err().map(|at| at.0)
    }

    /// Checks every byte a core handed back from one call: the state, then
    /// each effect's payload and numbers.
    pub(super) fn defined<S: IntoBytes + Immutable>(state: &S, effects: &[Effect]) -> Result<(), StepErrorKind> {
        let check = |what: &'static str, bytes: &[u8]| match first_undefined(bytes) {
            Some(offset) => Err(StepErrorKind::Undefined { what, offset }),
            None => Ok(()),
        };
        check("next state", state.as_bytes())?;
        for effect in effects {
            match effect {
                Effect::Send { to, msg } => {
                    check("destination of a send", std::slice::from_ref(to))?;
                    check("message", msg.as_slice())?;
                }
                Effect::Persist { record } => check("persist record", record.as_slice())?,
                Effect::Reply { msg } => check("reply", msg.as_slice())?,
                Effect::Arm { timer } | Effect::Cancel { timer } => check("timer number", std::slice::from_ref(timer))?,
                Effect::Wake { waiter } => check("waiter number", std::slice::from_ref(waiter))?,
            }
        }
        Ok(())
    }
}

//! Properties: named predicates over worlds, and the typed view they read.
//!
//! Properties may read core state; the code that computes possible actions
//! never calls them (manual, "Where actions come from").

use std::fmt;

use serde::{Deserialize, Serialize};
use zerocopy::{FromBytes, FromZeros, IntoBytes};

use crate::core::{Core, NodeId};
use crate::network::Msg;
use crate::world::{NodeEnv, World};

/// When a property must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An invariant: holds in every reachable world.
    Always,
    /// Holds in at least one reachable world (reported with a witness).
    Sometimes,
    /// Bounded liveness: holds in every world with no enabled action, and at
    /// the end of every simulated walk that ran out of actions.
    Eventually,
}

impl Kind {
    /// The kind's name, as reports spell it: `always`, `sometimes` or
    /// `eventually`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Always => "always",
            Kind::Sometimes => "sometimes",
            Kind::Eventually => "eventually",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

type Predicate<C> = dyn Fn(&View<'_, C>) -> bool + Send + Sync;

/// A named property of a model.
pub struct Property<C: Core> {
    /// The name reports and counterexample files use; unique in a model.
    pub name: String,
    /// When the predicate must hold.
    pub kind: Kind,
    pub(crate) predicate: Box<Predicate<C>>,
}

impl<C: Core> Property<C> {
    /// A property named `name` of kind `kind`. [`Model::always`],
    /// [`Model::sometimes`] and [`Model::eventually`] make and add one.
    ///
    /// [`Model::always`]: crate::Model::always
    /// [`Model::sometimes`]: crate::Model::sometimes
    /// [`Model::eventually`]: crate::Model::eventually
    pub fn new(
        name: impl Into<String>,
        kind: Kind,
        predicate: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static,
    ) -> Property<C> {
        Property { name: name.into(), kind, predicate: Box::new(predicate) }
    }

    /// Whether the predicate holds in the world `view` shows.
    pub fn holds(&self, view: &View<'_, C>) -> bool {
        (self.predicate)(view)
    }
}

impl<C: Core> fmt::Debug for Property<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.kind, self.name)
    }
}

/// A typed, read-only view of one world, for properties.
pub struct View<'a, C: Core> {
    pub(crate) world: &'a World,
    pub(crate) settings: &'a C::Settings,
}

impl<'a, C: Core> View<'a, C> {
    /// A view of `world`, a world of a model of `C` with `settings`.
    pub fn new(world: &'a World, settings: &'a C::Settings) -> Self {
        View { world, settings }
    }

    /// How many nodes the world has.
    pub fn nodes(&self) -> u8 {
        self.world.nodes()
    }

    /// The model's core settings.
    pub fn settings(&self) -> &C::Settings {
        self.settings
    }

    /// Node `n`'s state (a copy; states are small plain data).
    pub fn state(&self, n: NodeId) -> C::State {
        let size = C::layout(self.settings).state_size;
        let bytes = self.world.state_bytes(n, size);
        if size == std::mem::size_of::<C::State>() {
            // Every byte pattern is a state (`FromBytes`).
            return C::State::read_from_bytes(bytes).unwrap_or_else(|_| unreachable!("the slice has the state's size"));
        }
        // A state type larger than the core's state (a C core's size
        // class): the rest is zero.
        let mut state = C::State::new_zeroed();
        state.as_mut_bytes()[..size].copy_from_slice(bytes);
        state
    }

    /// Every node's state, in node order.
    pub fn states(&self) -> impl Iterator<Item = C::State> + '_ {
        (0..self.nodes()).map(|n| self.state(n))
    }

    /// The engine's environment of node `n`: clients left, timers, wakes,
    /// resets.
    pub fn env(&self, n: NodeId) -> NodeEnv {
        self.world.env(n)
    }

    /// Messages in flight, in canonical order.
    pub fn messages(&self) -> &[Msg] {
        self.world.messages()
    }

    /// Node `n`'s pending (not yet durable) persist records, oldest first.
    pub fn pending_persists(&self, n: NodeId) -> impl Iterator<Item = &[u8]> {
        self.world.persists_of(n)
    }

    /// The ghost log of client replies: (node, bytes) in emission order.
    pub fn replies(&self) -> impl Iterator<Item = (NodeId, &[u8])> {
        self.world.replies()
    }

    /// The raw world.
    pub fn world(&self) -> &World {
        self.world
    }
}

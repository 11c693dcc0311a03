//! A model: a core with its settings, the environment it runs in (nodes,
//! network, budgets) and its properties. This is what a test declares and
//! what the searches check.

use serde::{Deserialize, Serialize};

use crate::core::{Core, Settings, limits};
use crate::network::Network;
use crate::property::{Kind, Property, View};

/// Environment budgets, fixed for a run. Each is at most
/// [`limits::BUDGET_MAX`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Messages the network may lose.
    pub drops: u8,
    /// Messages the network may duplicate (bag mode only).
    pub dups: u8,
    /// Crashes, over all nodes.
    pub crashes: u8,
    /// Client requests each node receives.
    pub clients: u8,
    /// Timer firings over all nodes; `None` means a timer fires whenever it
    /// is armed, as the manual's FIRE rule says.
    pub timeouts: Option<u8>,
}

impl Budgets {
    /// The budget keys [`Budgets::set`] accepts.
    pub const KEYS: &'static [&'static str] = &["drops", "dups", "crashes", "clients", "timeouts"];

    /// Sets budget `key` from an untyped value, checking the limit.
    pub fn set(&mut self, key: &str, value: u64) -> Result<(), ModelError> {
        let v = u8::try_from(value).map_err(|_| ModelError::BudgetTooLarge { key: key.to_string(), value })?;
        match key {
            "drops" => self.drops = v,
            "dups" => self.dups = v,
            "crashes" => self.crashes = v,
            "clients" => self.clients = v,
            "timeouts" => self.timeouts = Some(v),
            _ => return Err(ModelError::UnknownBudget { key: key.to_string() }),
        }
        Ok(())
    }
}

/// A model that cannot be checked as declared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// No nodes, or more than [`limits::NODES_MAX`].
    #[error("{nodes} nodes (limit nodes_max = {max}; at least 1)", max = limits::NODES_MAX)]
    Nodes {
        /// The count asked for.
        nodes: u64,
    },
    /// The core's settings type is over [`limits::SETTINGS_BYTES_MAX`]
    /// bytes (a type [`crate::settings!`] did not declare).
    #[error("core `{core}` has settings of {size} bytes (limit settings_bytes_max = {max})", max = limits::SETTINGS_BYTES_MAX)]
    SettingsTooLarge {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// The settings' size, in bytes.
        size: usize,
    },
    /// [`Core::DURABLE`] is larger than the state.
    #[error(
        "core `{core}` declares DURABLE = {durable}, but its state is {state_size} bytes (DURABLE is at most the state's size)"
    )]
    DurableTooLarge {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// Its [`Core::DURABLE`], in bytes.
        durable: usize,
        /// The size of its [`Core::State`], in bytes.
        state_size: usize,
    },
    /// A budget over [`limits::BUDGET_MAX`].
    #[error("budget `{key}` = {value} (limit budget_max = {max})", max = limits::BUDGET_MAX)]
    BudgetTooLarge {
        /// The budget's key, one of [`Budgets::KEYS`].
        key: String,
        /// The value asked for.
        value: u64,
    },
    /// A budget key not in [`Budgets::KEYS`].
    #[error("unknown budget `{key}` (known: drops, dups, crashes, clients, timeouts)")]
    UnknownBudget {
        /// The key asked for.
        key: String,
    },
    /// A direct-actions core with more actions than
    /// [`limits::ACTIONS_PER_STATE`].
    #[error("core `{core}` declares {actions} direct actions (limit actions_per_state = {max})", max = limits::ACTIONS_PER_STATE)]
    TooManyDirectActions {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// Its [`DirectActions::actions`](crate::DirectActions::actions).
        actions: usize,
    },
    /// A direct-actions core with other than one node.
    #[error("core `{core}` uses direct actions, so the model has exactly 1 node, not {nodes}")]
    DirectNodes {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// The count asked for.
        nodes: u8,
    },
    /// A direct-actions core with a budget set.
    #[error(
        "core `{core}` uses direct actions, so the model has no budgets (its world is one state), but {budget} is set"
    )]
    DirectBudgets {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// The first budget set, one of [`Budgets::KEYS`].
        budget: &'static str,
    },
    /// A direct-actions core whose
    /// [`DirectActions::initial_states`](crate::DirectActions::initial_states)
    /// is 0.
    #[error("core `{core}` declares 0 initial states")]
    NoInitialStates {
        /// The core's [`Core::NAME`].
        core: &'static str,
    },
    /// A dup budget on the FIFO network.
    #[error("the dup budget needs the bag network (FIFO never duplicates)")]
    DupsNeedBag,
    /// A declaration expects a violation of a property the model does not
    /// have (`#[cmc::model(expect = violation("..."))]`).
    #[error("the model expects a violation of `{name}`, but has no such property (it has: {known})")]
    UnknownExpectedProperty {
        /// The property expected to fail.
        name: String,
        /// The model's property names, separated by commas.
        known: String,
    },
    /// Two properties share a name.
    #[error("two properties are named `{name}`")]
    DuplicateProperty {
        /// The name.
        name: String,
    },
    /// A property named `""`.
    #[error("a property has an empty name")]
    EmptyPropertyName,
    /// A property named [`DEADLOCK`](crate::search::DEADLOCK) in a search
    /// with [`Options::deadlock`](crate::Options::deadlock) set.
    #[error(
        "a property is named `deadlock`, the name --deadlock gives a world with no enabled action: rename the property"
    )]
    DeadlockPropertyName,
    /// Symmetry was asked for, and the core declares fewer than two
    /// interchangeable nodes in this model ([`Core::interchangeable`]).
    #[error(
        "symmetry: core `{core}` declares {count} interchangeable nodes of {nodes} (Core::interchangeable); at least 2 are needed to reduce anything"
    )]
    NoSymmetry {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// How many of the model's nodes it declares interchangeable.
        count: usize,
        /// The model's nodes.
        nodes: u8,
    },
    /// [`Core::validate`] rejected the settings.
    #[error("core `{core}`: {message}")]
    BadSettings {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// What `validate` said, naming the key.
        message: String,
    },
    /// A setting could not be set by key ([`Model::set`]).
    #[error("core `{core}`: {error}")]
    Setting {
        /// The core's [`Core::NAME`].
        core: &'static str,
        /// Which key, and why.
        error: crate::core::SettingError,
    },
}

/// A core, its settings, its environment and its properties.
///
/// Built with [`Model::new`] and the builder methods, each of which sets
/// one part and says its default and its limit. The builder checks
/// nothing: [`Model::validate`] checks every limit, and the searches call
/// it before they start, so a model over one is a [`ModelError`], never a
/// truncated search.
///
/// A two-node model with a planted bug, checked once as written and once
/// with the bug selected by key, as `--set bug_reply_early=1` would:
///
/// ```
/// # use cmc::{Context, Core, Effects, Event};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # cmc::settings! {
/// #     pub struct CounterSettings {
/// #         /// Planted bug: reply before the request is durable.
/// #         bug_reply_early: u8 = 0,
/// #     }
/// # }
/// # struct Counter;
/// # #[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
/// # #[repr(C)]
/// # struct CounterState { saved: u8 }
/// # impl Core for Counter {
/// #     const NAME: &'static str = "counter";
/// #     type State = CounterState;
/// #     type Settings = CounterSettings;
/// #     const DURABLE: usize = 1;
/// #     fn step(ctx: &Context<'_, CounterSettings>, state: &mut CounterState, event: Event<'_>, out: &mut Effects) {
/// #         match event {
/// #             Event::Client { .. } if ctx.settings.bug_reply_early != 0 => out.reply(&[state.saved]),
/// #             Event::Client { .. } => out.persist(&[1]),
/// #             Event::Flushed => out.reply(&[state.saved]),
/// #             _ => {}
/// #         }
/// #     }
/// #     fn apply_persist(_ctx: &Context<'_, CounterSettings>, state: &mut CounterState, record: &[u8]) {
/// #         state.saved += record[0];
/// #     }
/// # }
/// use cmc::{Model, Network, Options, Verdict, check};
///
/// // `Counter` answers each client request once it is durable; its state
/// // is the count of durable requests.
/// let model = || {
///     Model::<Counter>::new(CounterSettings::default())
///         .nodes(2)
///         .network(Network::Fifo)
///         .clients(2)
///         .crashes(1)
///         .always("replies_durable", |w| {
///             (0..w.nodes()).all(|n| w.replies().filter(|(m, _)| *m == n).count() <= w.state(n).saved as usize)
///         })
/// };
/// let report = check(&model(), &Options::default())?;
/// assert_eq!(report.verdict, Verdict::Pass);
///
/// let mut buggy = model();
/// buggy.set("bug_reply_early", 1)?;
/// let report = check(&buggy, &Options::default())?;
/// assert_eq!(report.verdict, Verdict::Violation);
/// assert_eq!(report.property.as_deref(), Some("replies_durable"));
/// # Ok::<(), cmc::ModelError>(())
/// ```
pub struct Model<C: Core> {
    /// The core's settings: [`Model::new`]'s argument, changed by key with
    /// [`Model::set`].
    pub settings: C::Settings,
    /// The number of nodes: [`Model::nodes`].
    pub nodes: u8,
    /// How messages travel: [`Model::network`].
    pub network: Network,
    /// What the environment may do on one path: [`Model::budgets`] and the
    /// methods for each budget.
    pub budgets: Budgets,
    /// The properties, in the order they were added, which is the order
    /// they are checked in.
    pub properties: Vec<Property<C>>,
}

impl<C: Core> Model<C> {
    /// A model of one node with the given settings, FIFO, no budgets, no
    /// properties.
    pub fn new(settings: C::Settings) -> Model<C> {
        Model { settings, nodes: 1, network: Network::Fifo, budgets: Budgets::default(), properties: Vec::new() }
    }

    /// Sets the number of nodes, numbered `0..nodes`. Default 1; from 1
    /// to [`limits::NODES_MAX`] (8), and exactly 1 for a direct-actions
    /// core.
    pub fn nodes(mut self, nodes: u8) -> Self {
        self.nodes = nodes;
        self
    }
    /// Sets how messages travel: [`Network::Fifo`] (the default), one
    /// ordered channel per pair of nodes, or [`Network::Bag`], an
    /// unordered multiset that may duplicate.
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }
    /// Sets the drop budget: messages the network may lose on one path,
    /// over all channels. On FIFO a drop resets the connection (both
    /// directions emptied, each end told by a RESET). Default 0; at most
    /// [`limits::BUDGET_MAX`] (255, which the type enforces).
    pub fn drops(mut self, n: u8) -> Self {
        self.budgets.drops = n;
        self
    }
    /// Sets the dup budget: messages the network may duplicate on one
    /// path. Bag only: with FIFO, any dup budget is
    /// [`ModelError::DupsNeedBag`]. Default 0; at most
    /// [`limits::BUDGET_MAX`].
    pub fn dups(mut self, n: u8) -> Self {
        self.budgets.dups = n;
        self
    }
    /// Sets the crash budget: crashes on one path, over all nodes. A crash
    /// keeps any prefix of the node's pending persists, zeroes its
    /// volatile bytes, empties its channels and restarts it. Default 0; at
    /// most [`limits::BUDGET_MAX`].
    pub fn crashes(mut self, n: u8) -> Self {
        self.budgets.crashes = n;
        self
    }
    /// Sets the client requests each node receives on one path (each a
    /// CLIENT action and an [`Event::Client`](crate::Event::Client)).
    /// Default 0; at most [`limits::BUDGET_MAX`].
    pub fn clients(mut self, n: u8) -> Self {
        self.budgets.clients = n;
        self
    }
    /// Sets the timeout budget: timer firings on one path, over all nodes.
    /// By default there is none, and an armed timer may fire at any time;
    /// at most [`limits::BUDGET_MAX`].
    pub fn timeouts(mut self, n: u8) -> Self {
        self.budgets.timeouts = Some(n);
        self
    }
    /// Sets every budget at once, replacing what [`Model::drops`],
    /// [`Model::dups`], [`Model::crashes`], [`Model::clients`] and
    /// [`Model::timeouts`] set. Default [`Budgets::default`]: none.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Adds an invariant: `p` must hold in every reachable world. Names
    /// are unique and not empty ([`Model::validate`]).
    pub fn always(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Always, p));
        self
    }
    /// Adds a reachability property: `p` must hold in at least one
    /// reachable world, which the report shows as a witness. A complete
    /// search that found none reports a violation.
    pub fn sometimes(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Sometimes, p));
        self
    }
    /// Adds a bounded-liveness property: `p` must hold in every reachable
    /// world with no enabled action (and at the end of every simulated
    /// walk that ran out of actions).
    pub fn eventually(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Eventually, p));
        self
    }

    /// Sets a core setting by key, as the command line and the environment
    /// do.
    pub fn set(&mut self, key: &str, value: u64) -> Result<(), ModelError> {
        let core = C::layout(&self.settings).name;
        self.settings.set(key, value).map_err(|error| ModelError::Setting { core, error })
    }

    /// Checks every limit a model can cross before a search starts.
    pub fn validate(&self) -> Result<(), ModelError> {
        let layout = C::layout(&self.settings);
        let core = layout.name;
        let size = layout.settings_size;
        if size > limits::SETTINGS_BYTES_MAX {
            return Err(ModelError::SettingsTooLarge { core, size });
        }
        let state_size = layout.state_size;
        if layout.durable > state_size {
            return Err(ModelError::DurableTooLarge { core, durable: layout.durable, state_size });
        }
        C::validate(&self.settings).map_err(|message| ModelError::BadSettings { core, message })?;
        if self.nodes == 0 || self.nodes as usize > limits::NODES_MAX {
            return Err(ModelError::Nodes { nodes: self.nodes as u64 });
        }
        if let Some(d) = C::direct_actions(&self.settings) {
            if d.actions as usize > limits::ACTIONS_PER_STATE {
                return Err(ModelError::TooManyDirectActions { core, actions: d.actions as usize });
            }
            if self.nodes != 1 {
                return Err(ModelError::DirectNodes { core, nodes: self.nodes });
            }
            if d.initial_states == 0 {
                return Err(ModelError::NoInitialStates { core });
            }
            let b = &self.budgets;
            for (budget, set) in [
                ("drops", b.drops != 0),
                ("dups", b.dups != 0),
                ("crashes", b.crashes != 0),
                ("clients", b.clients != 0),
                ("timeouts", b.timeouts.is_some()),
            ] {
                if set {
                    return Err(ModelError::DirectBudgets { core, budget });
                }
            }
        }
        if self.budgets.dups > 0 && self.network == Network::Fifo {
            return Err(ModelError::DupsNeedBag);
        }
        for (i, p) in self.properties.iter().enumerate() {
            if p.name.is_empty() {
                return Err(ModelError::EmptyPropertyName);
            }
            if self.properties[..i].iter().any(|q| q.name == p.name) {
                return Err(ModelError::DuplicateProperty { name: p.name.clone() });
            }
        }
        Ok(())
    }

    /// The settings as (key, value) pairs, in declaration order.
    pub fn settings_values(&self) -> Vec<(String, u64)> {
        self.settings
            .keys()
            .iter()
            .map(|k| (k.name.to_string(), self.settings.get(k.name).unwrap_or(k.default)))
            .collect()
    }

    /// What identifies this model in reports and counterexample files.
    pub fn identity(&self) -> Identity {
        Identity {
            core: C::layout(&self.settings).name.to_string(),
            settings: self.settings_values(),
            nodes: self.nodes,
            network: self.network,
            budgets: self.budgets,
            model_file: None,
            args: Vec::new(),
        }
    }
}

/// A model's identity: enough to rebuild it from the catalog on another
/// machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The core's [`Core::NAME`]; for a program, `program:` and the
    /// model's name.
    pub core: String,
    /// Every setting, in declaration order (a JSON object in files).
    #[serde(with = "ordered_map")]
    pub settings: Vec<(String, u64)>,
    /// The number of nodes.
    pub nodes: u8,
    /// How messages travel.
    pub network: Network,
    /// The budgets.
    pub budgets: Budgets,
    /// For a program: the model file that declares it, so that `cmc replay`
    /// can rebuild it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_file: Option<String>,
    /// For a program: its arguments after the node number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// (key, value) pairs as a JSON object that keeps their order.
mod ordered_map {
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(pairs.len()))?;
        for (k, v) in pairs {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, u64)>, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Vec<(String, u64)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of setting names to integers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, u64>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(Pairs)
    }
}

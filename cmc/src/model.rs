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
    #[error("{nodes} nodes (limit nodes_max = {max}; at least 1)", max = limits::NODES_MAX)]
    Nodes { nodes: u64 },
    #[error("core `{core}` has settings of {size} bytes (limit settings_bytes_max = {max})", max = limits::SETTINGS_BYTES_MAX)]
    SettingsTooLarge { core: &'static str, size: usize },
    #[error(
        "core `{core}` declares DURABLE = {durable}, but its state is {state_size} bytes (DURABLE is at most the state's size)"
    )]
    DurableTooLarge { core: &'static str, durable: usize, state_size: usize },
    #[error("budget `{key}` = {value} (limit budget_max = {max})", max = limits::BUDGET_MAX)]
    BudgetTooLarge { key: String, value: u64 },
    #[error("unknown budget `{key}` (known: drops, dups, crashes, clients, timeouts)")]
    UnknownBudget { key: String },
    #[error("core `{core}` declares {actions} direct actions (limit actions_per_state = {max})", max = limits::ACTIONS_PER_STATE)]
    TooManyDirectActions { core: &'static str, actions: usize },
    #[error("core `{core}` uses direct actions, so the model has exactly 1 node, not {nodes}")]
    DirectNodes { core: &'static str, nodes: u8 },
    #[error(
        "core `{core}` uses direct actions, so the model has no budgets (its world is one state), but {budget} is set"
    )]
    DirectBudgets { core: &'static str, budget: &'static str },
    #[error("core `{core}` declares 0 initial states")]
    NoInitialStates { core: &'static str },
    #[error("the dup budget needs the bag network (FIFO never duplicates)")]
    DupsNeedBag,
    #[error("the model expects a violation of `{name}`, but has no such property (it has: {known})")]
    UnknownExpectedProperty { name: String, known: String },
    #[error("two properties are named `{name}`")]
    DuplicateProperty { name: String },
    #[error("a property has an empty name")]
    EmptyPropertyName,
    #[error(
        "a property is named `deadlock`, the name --deadlock gives a world with no enabled action: rename the property"
    )]
    DeadlockPropertyName,
    #[error("core `{core}`: {message}")]
    BadSettings { core: &'static str, message: String },
    #[error("core `{core}`: {error}")]
    Setting { core: &'static str, error: crate::core::SettingError },
}

/// A core, its settings, its environment and its properties.
pub struct Model<C: Core> {
    pub settings: C::Settings,
    pub nodes: u8,
    pub network: Network,
    pub budgets: Budgets,
    pub properties: Vec<Property<C>>,
}

impl<C: Core> Model<C> {
    /// A model of one node with the given settings, FIFO, no budgets, no
    /// properties.
    pub fn new(settings: C::Settings) -> Model<C> {
        Model { settings, nodes: 1, network: Network::Fifo, budgets: Budgets::default(), properties: Vec::new() }
    }

    pub fn nodes(mut self, nodes: u8) -> Self {
        self.nodes = nodes;
        self
    }
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }
    pub fn drops(mut self, n: u8) -> Self {
        self.budgets.drops = n;
        self
    }
    pub fn dups(mut self, n: u8) -> Self {
        self.budgets.dups = n;
        self
    }
    pub fn crashes(mut self, n: u8) -> Self {
        self.budgets.crashes = n;
        self
    }
    pub fn clients(mut self, n: u8) -> Self {
        self.budgets.clients = n;
        self
    }
    pub fn timeouts(mut self, n: u8) -> Self {
        self.budgets.timeouts = Some(n);
        self
    }
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Adds an invariant.
    pub fn always(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Always, p));
        self
    }
    /// Adds a reachability property.
    pub fn sometimes(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Sometimes, p));
        self
    }
    /// Adds a bounded-liveness property.
    pub fn eventually(mut self, name: &str, p: impl Fn(&View<'_, C>) -> bool + Send + Sync + 'static) -> Self {
        self.properties.push(Property::new(name, Kind::Eventually, p));
        self
    }

    /// Sets a core setting by key, as the command line and the environment
    /// do.
    pub fn set(&mut self, key: &str, value: u64) -> Result<(), ModelError> {
        self.settings.set(key, value).map_err(|error| ModelError::Setting { core: C::NAME, error })
    }

    /// Checks every limit a model can cross before a search starts.
    pub fn validate(&self) -> Result<(), ModelError> {
        let size = std::mem::size_of::<C::Settings>();
        if size > limits::SETTINGS_BYTES_MAX {
            return Err(ModelError::SettingsTooLarge { core: C::NAME, size });
        }
        let state_size = std::mem::size_of::<C::State>();
        if C::DURABLE > state_size {
            return Err(ModelError::DurableTooLarge { core: C::NAME, durable: C::DURABLE, state_size });
        }
        C::validate(&self.settings).map_err(|message| ModelError::BadSettings { core: C::NAME, message })?;
        if self.nodes == 0 || self.nodes as usize > limits::NODES_MAX {
            return Err(ModelError::Nodes { nodes: self.nodes as u64 });
        }
        if let Some(d) = C::direct_actions(&self.settings) {
            if d.actions as usize > limits::ACTIONS_PER_STATE {
                return Err(ModelError::TooManyDirectActions { core: C::NAME, actions: d.actions as usize });
            }
            if self.nodes != 1 {
                return Err(ModelError::DirectNodes { core: C::NAME, nodes: self.nodes });
            }
            if d.initial_states == 0 {
                return Err(ModelError::NoInitialStates { core: C::NAME });
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
                    return Err(ModelError::DirectBudgets { core: C::NAME, budget });
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
        <C::Settings as Settings>::KEYS
            .iter()
            .map(|k| (k.name.to_string(), self.settings.get(k.name).unwrap_or(k.default)))
            .collect()
    }

    /// What identifies this model in reports and counterexample files.
    pub fn identity(&self) -> Identity {
        Identity {
            core: C::NAME.to_string(),
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
pub struct Identity {
    pub core: String,
    /// Every setting, in declaration order (a JSON object in files).
    #[serde(with = "ordered_map")]
    pub settings: Vec<(String, u64)>,
    pub nodes: u8,
    pub network: Network,
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

//! The catalog: models by name, with their settings, for the `cmc` command
//! and `cmc replay`. A [`DynModel`] hides what is checked (a core's type,
//! or a program) so that a runner can hold models of different cores and
//! programs side by side.

use crate::core::{Core, SettingKey, Settings};
use crate::model::{Budgets, Identity, Model, ModelError};
use crate::network::Network;
use crate::replay::{ReplayError, replay};
use crate::report::{CounterexampleFile, Report};
use crate::search::{Control, DistributedError, Exchange, Options, check_distributed, check_with};
use crate::session::{Session, Walker};

/// A model whose core type is hidden: a core's [`Model`], or (on Linux) a
/// program's [`ProgramModel`](crate::process::ProgramModel).
pub trait DynModel: Send + Sync {
    /// What identifies the model in reports and counterexample files.
    fn identity(&self) -> Identity;
    /// What the model is, as `(key, value)` lines for reports and
    /// snapshots: a core's name, settings and environment; a program's
    /// name, arguments, request and environment. No times and no paths.
    fn header(&self) -> Vec<(&'static str, String)>;
    /// Runs the search `options` ask for, polling `control`.
    fn check(&self, options: &Options, control: &mut dyn Control) -> Result<Report, DynError>;
    /// Replays a counterexample file against the model (with `det`, every
    /// step twice), as [`replay`] does for a core.
    fn replay(&self, file: &CounterexampleFile, det: bool) -> Result<Report, DynError>;
    /// A session that walks the model one action at a time, as `cmc
    /// explore` serves it.
    fn session(&self) -> Result<Box<dyn Session + '_>, DynError>;
    /// Runs this worker's part of a distributed breadth-first search
    /// ([`check_distributed`]): cores only, since a program's worlds are
    /// processes on one machine.
    fn check_distributed(
        &self,
        options: &Options,
        peers: &mut dyn Exchange,
        control: &mut dyn Control,
    ) -> Result<Report, DynError> {
        let _ = (options, peers, control);
        Err(DistributedError::Unsupported(
            "checks cores; a program's worlds are live processes on one machine (docs/DISTRIBUTED.md)".to_string(),
        )
        .into())
    }
}

/// Why a [`DynModel`] could not be built, searched or replayed at all (a
/// search that starts and fails is a report with an `error` verdict).
#[derive(Debug, thiserror::Error)]
pub enum DynError {
    /// A core's model that cannot be checked as declared.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A counterexample file that does not fit the model.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A distributed search that cannot run, or did not finish.
    #[error(transparent)]
    Distributed(#[from] DistributedError),
    /// A program model's configuration: the program, the preload, a limit.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Program(#[from] crate::process::ProcessError),
}

impl<C: Core> DynModel for Model<C>
where
    C::Settings: Send + Sync,
{
    fn identity(&self) -> Identity {
        Model::identity(self)
    }
    fn header(&self) -> Vec<(&'static str, String)> {
        let id = Model::identity(self);
        let settings: Vec<String> = id.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let b = &id.budgets;
        let timeouts = b.timeouts.map_or("unbounded".to_string(), |t| t.to_string());
        vec![
            ("core", id.core.clone()),
            ("settings", if settings.is_empty() { "-".to_string() } else { settings.join(" ") }),
            (
                "environment",
                format!(
                    "{} nodes, {}, drops {}, dups {}, crashes {}, clients {}, timeouts {timeouts}",
                    id.nodes,
                    id.network.name(),
                    b.drops,
                    b.dups,
                    b.crashes,
                    b.clients
                ),
            ),
        ]
    }
    fn check(&self, options: &Options, control: &mut dyn Control) -> Result<Report, DynError> {
        Ok(check_with(self, options, control)?)
    }
    fn replay(&self, file: &CounterexampleFile, det: bool) -> Result<Report, DynError> {
        Ok(replay(self, file, det)?)
    }
    fn check_distributed(
        &self,
        options: &Options,
        peers: &mut dyn Exchange,
        control: &mut dyn Control,
    ) -> Result<Report, DynError> {
        Ok(check_distributed(self, options, peers, control)?)
    }
    fn session(&self) -> Result<Box<dyn Session + '_>, DynError> {
        let engine = crate::engine::Engine::new(self, false)?;
        Ok(Box::new(Walker::new(crate::search::CoreExplorer::new(engine))))
    }
}

/// A program as nodes. The explorer, which owns the node processes, is made
/// and dropped within each call, on the caller's thread: a model can be
/// checked from any thread, one search per call.
#[cfg(target_os = "linux")]
impl DynModel for crate::process::ProgramModel {
    fn identity(&self) -> Identity {
        crate::process::ProgramModel::identity(self)
    }
    fn header(&self) -> Vec<(&'static str, String)> {
        let c = &self.config;
        let b = &c.budgets;
        let args = match &c.argv {
            Some(argv) => format!("argv {}", argv.join(" ")),
            None if c.args.is_empty() => "-".to_string(),
            None => c.args.join(" "),
        };
        let quoted = |r: &[u8]| format!("\"{}\"", r.escape_ascii());
        let request = match (c.requests.is_empty(), c.request.is_empty()) {
            (false, _) => c.requests.iter().map(|r| quoted(r)).collect::<Vec<_>>().join(", "),
            (true, true) => "-".to_string(),
            (true, false) => quoted(&c.request),
        };
        vec![
            ("program", self.name.clone()),
            ("arguments", args),
            ("request", request),
            (
                "environment",
                format!(
                    "{} nodes, crashes {}, drops {}, timeouts {}, clients {}{}{}{}",
                    c.nodes,
                    b.crashes,
                    b.drops,
                    b.timeouts,
                    b.clients,
                    match b.thread_switches {
                        0 => String::new(),
                        k => format!(", thread switches {k}"),
                    },
                    match c.write_bytes_max {
                        crate::process::limits::WRITE_BYTES_MAX => String::new(),
                        m => format!(", writes of up to {m} bytes"),
                    },
                    match c.node_state {
                        crate::process::NodeState::Report => "",
                        crate::process::NodeState::Inputs => ", node state: inputs",
                    }
                ),
            ),
        ]
    }
    fn check(&self, options: &Options, control: &mut dyn Control) -> Result<Report, DynError> {
        if options.symmetry {
            let reason = "renames a core's interchangeable nodes; a program's nodes are processes".to_string();
            return Err(crate::process::ProcessError::Config { key: "symmetry", reason }.into());
        }
        let explorer = crate::process::ProcessExplorer::new(self)?.with_det(options.det);
        Ok(crate::search::explore(explorer, options, control))
    }
    fn replay(&self, file: &CounterexampleFile, det: bool) -> Result<Report, DynError> {
        let core = crate::process::ProgramModel::identity(self).core;
        if file.model.core != core {
            return Err(ReplayError::WrongCore { file: file.model.core.clone(), model: core }.into());
        }
        let explorer = crate::process::ProcessExplorer::new(self)?.with_det(det);
        Ok(crate::replay::replay_with(explorer, file, det)?)
    }
    fn session(&self) -> Result<Box<dyn Session + '_>, DynError> {
        Ok(Box::new(Walker::new(crate::process::ProcessExplorer::new(self)?)))
    }
}

/// What a caller may change in a catalog model: settings by key, and the
/// environment. Anything not given keeps the model's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Settings by key, applied in order (`--set KEY=VALUE`).
    pub settings: Vec<(String, u64)>,
    /// The number of nodes, checked against [`limits::NODES_MAX`] when the
    /// model is built (`u64`, so that a value too large is named, not
    /// wrapped).
    ///
    /// [`limits::NODES_MAX`]: crate::limits::NODES_MAX
    pub nodes: Option<u64>,
    /// How messages travel.
    pub network: Option<Network>,
    /// Budgets by key (`drops`, `dups`, `crashes`, `clients`, `timeouts`).
    pub budgets: Vec<(String, u64)>,
}

impl Overrides {
    /// The overrides that rebuild a model with exactly this identity.
    pub fn from_identity(id: &Identity) -> Overrides {
        let Budgets { drops, dups, crashes, clients, timeouts } = id.budgets;
        let mut budgets = vec![
            ("drops".to_string(), drops as u64),
            ("dups".to_string(), dups as u64),
            ("crashes".to_string(), crashes as u64),
            ("clients".to_string(), clients as u64),
        ];
        if let Some(t) = timeouts {
            budgets.push(("timeouts".to_string(), t as u64));
        }
        Overrides { settings: id.settings.clone(), nodes: Some(id.nodes as u64), network: Some(id.network), budgets }
    }
}

type Build = dyn Fn(&Overrides) -> Result<Box<dyn DynModel>, ModelError> + Send + Sync;

/// One named model of the catalog.
pub struct Entry {
    /// The core's [`Core::NAME`], by which `cmc check NAME` finds it.
    pub name: &'static str,
    /// One line on what the model is, for `cmc check --list`.
    pub about: &'static str,
    /// The core's setting keys, with their defaults and docs.
    pub settings: &'static [SettingKey],
    build: Box<Build>,
}

impl Entry {
    /// An entry whose model `make` builds from settings (with its default
    /// nodes, network, budgets and properties); overrides apply on top.
    pub fn new<C: Core>(about: &'static str, make: fn(C::Settings) -> Model<C>) -> Entry
    where
        C::Settings: Send + Sync,
    {
        let build = move |o: &Overrides| -> Result<Box<dyn DynModel>, ModelError> {
            let mut settings = C::Settings::default();
            for (k, v) in &o.settings {
                settings.set(k, *v).map_err(|error| ModelError::Setting { core: C::NAME, error })?;
            }
            let mut model = make(settings);
            if let Some(n) = o.nodes {
                model.nodes = u8::try_from(n).map_err(|_| ModelError::Nodes { nodes: n })?;
            }
            if let Some(net) = o.network {
                model.network = net;
            }
            for (k, v) in &o.budgets {
                model.budgets.set(k, *v)?;
            }
            model.validate()?;
            Ok(Box::new(model))
        };
        Entry { name: C::NAME, about, settings: <C::Settings as Settings>::KEYS, build: Box::new(build) }
    }

    /// The model with `overrides` applied, validated.
    pub fn build(&self, overrides: &Overrides) -> Result<Box<dyn DynModel>, ModelError> {
        (self.build)(overrides)
    }
}

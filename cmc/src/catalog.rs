//! The catalog: models by name, with their settings, for the `cmc` command
//! and `cmc replay`. A [`DynModel`] hides the core's type so that a runner
//! can hold models of different cores side by side.

use crate::core::{Core, SettingKey, Settings};
use crate::model::{Budgets, Identity, Model, ModelError};
use crate::network::Network;
use crate::replay::{ReplayError, replay};
use crate::report::{CounterexampleFile, Report};
use crate::search::{Control, Options, check_with};

/// A model whose core type is hidden.
pub trait DynModel: Send + Sync {
    fn identity(&self) -> Identity;
    fn check(&self, options: &Options, control: &mut dyn Control) -> Result<Report, ModelError>;
    fn replay(&self, file: &CounterexampleFile, det: bool) -> Result<Report, ReplayError>;
}

impl<C: Core> DynModel for Model<C>
where
    C::Settings: Send + Sync,
{
    fn identity(&self) -> Identity {
        Model::identity(self)
    }
    fn check(&self, options: &Options, control: &mut dyn Control) -> Result<Report, ModelError> {
        check_with(self, options, control)
    }
    fn replay(&self, file: &CounterexampleFile, det: bool) -> Result<Report, ReplayError> {
        replay(self, file, det)
    }
}

/// What a caller may change in a catalog model: settings by key, and the
/// environment. Anything not given keeps the model's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub settings: Vec<(String, u64)>,
    pub nodes: Option<u64>,
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
    pub name: &'static str,
    pub about: &'static str,
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

    pub fn build(&self, overrides: &Overrides) -> Result<Box<dyn DynModel>, ModelError> {
        (self.build)(overrides)
    }
}

//! Models declared as tests: what `#[cmc::model(...)]` records, and the
//! distributed slice it records it in. The runner (`cmc-runner`) reads the
//! slice and runs each model as a test; this module only holds the data, so
//! that a test crate needs nothing but `cmc` to declare models.

use crate::catalog::DynModel;
use crate::core::Core;
use crate::model::{Model, ModelError};
use crate::network::Network;
use crate::search::Search;

/// Every model declared with `#[cmc::model]` in the binary being run.
#[linkme::distributed_slice]
pub static MODELS: [Declared];

/// What a model expects of its search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The search is complete and every property holds; the snapshot pins
    /// the counts.
    Pass,
    /// The named property fails; the snapshot pins the counterexample.
    Violation(&'static str),
}

/// The attribute's settings for one model. `None` keeps what the model's
/// body chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attributes {
    pub nodes: Option<u8>,
    pub network: Option<Network>,
    pub drops: Option<u8>,
    pub dups: Option<u8>,
    pub crashes: Option<u8>,
    pub clients: Option<u8>,
    pub timeouts: Option<u8>,
    pub search: Search,
    pub states_max: Option<u64>,
    pub time_max_s: Option<u64>,
    pub det: bool,
    pub deadlock: bool,
    pub expect: Expect,
    /// `Some(reason)`: listed but run only with `--ignored`.
    pub ignore: Option<&'static str>,
}

impl Attributes {
    /// The defaults of `#[cmc::model]` with no keys.
    pub const DEFAULT: Attributes = Attributes {
        nodes: None,
        network: None,
        drops: None,
        dups: None,
        crashes: None,
        clients: None,
        timeouts: None,
        search: Search::Bfs { depth_max: None },
        states_max: None,
        time_max_s: None,
        det: false,
        deadlock: false,
        expect: Expect::Pass,
        ignore: None,
    };
}

/// One declared model.
pub struct Declared {
    /// `module_path!()` of the declaration, crate first.
    pub module: &'static str,
    /// The function's name.
    pub function: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub attributes: Attributes,
    /// Builds the model with the given attributes applied on top of the
    /// body's.
    pub build: fn(&Attributes) -> Result<Box<dyn DynModel>, ModelError>,
}

impl Declared {
    /// The test name: the module path without the crate, then the
    /// function, as libtest names tests.
    pub fn name(&self) -> String {
        match self.module.split_once("::") {
            Some((_, rest)) => format!("{rest}::{}", self.function),
            None => self.function.to_string(),
        }
    }
}

/// Applies the attributes to a model built by a declaration's body, checks
/// it, and hides its core type. Called by the code `#[cmc::model]` writes.
pub fn prepare<C: Core>(mut model: Model<C>, a: &Attributes) -> Result<Box<dyn DynModel>, ModelError>
where
    C::Settings: Send + Sync,
{
    if let Some(n) = a.nodes {
        model.nodes = n;
    }
    if let Some(n) = a.network {
        model.network = n;
    }
    let b = &mut model.budgets;
    for (slot, value) in
        [(&mut b.drops, a.drops), (&mut b.dups, a.dups), (&mut b.crashes, a.crashes), (&mut b.clients, a.clients)]
    {
        if let Some(v) = value {
            *slot = v;
        }
    }
    if a.timeouts.is_some() {
        b.timeouts = a.timeouts;
    }
    model.validate()?;
    if let Expect::Violation(name) = a.expect
        && !model.properties.iter().any(|p| p.name == name)
    {
        return Err(ModelError::UnknownExpectedProperty {
            name: name.to_string(),
            known: model.properties.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
        });
    }
    Ok(Box::new(model))
}

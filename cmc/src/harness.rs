//! Models declared as tests: what `#[cmc::model(...)]` records, and the
//! distributed slice it records it in. The runner (`cmc-runner`) reads the
//! slice and runs each model as a test; this module only holds the data, so
//! that a test crate needs nothing but `cmc` to declare models.
//!
//! A declaration is of a core (the body returns a [`Model`]) or, with
//! `program = "..."`, of a program as nodes (the body returns a
//! [`ProgramModel`](crate::process::ProgramModel)); [`prepare`] and
//! [`prepare_program`] apply the attribute's keys to what the body built.

use std::path::Path;

use crate::catalog::{DynError, DynModel};
use crate::core::Core;
use crate::model::{Model, ModelError};
use crate::network::Network;
use crate::search::Search;

/// Every model declared with `#[cmc::model]` in the binary being run.
#[linkme::distributed_slice]
pub static MODELS: [Declared];

/// Test binaries that run their `#[cmc::model]` declarations themselves,
/// from [`MODELS`], under libtest's harness (as this repository's gates
/// do): [`reads_models!`](crate::reads_models) adds one. In any other
/// binary run by libtest's harness, every model's generated test fails,
/// saying that its target needs `harness = false`.
#[linkme::distributed_slice]
pub static READS_MODELS: [&'static str];

/// Declares that this test binary runs its models itself (see
/// [`READS_MODELS`]), so that they need no `harness = false`.
#[macro_export]
macro_rules! reads_models {
    () => {
        #[$crate::linkme::distributed_slice($crate::harness::READS_MODELS)]
        #[linkme(crate = $crate::linkme)]
        static __CMC_READS_MODELS: &str = ::core::module_path!();
    };
}

/// What a model expects of its search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The search is complete and every property holds; the snapshot pins
    /// the counts.
    Pass,
    /// The named property fails; the snapshot pins the counterexample.
    Violation(&'static str),
}

/// `timeout_order` of a program's declaration, as written: the process
/// front end's `TimeoutOrder`, which exists on Linux only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutOrderKey {
    /// `timeout_order = any`: any wait may time out first.
    Any,
    /// `timeout_order = deadline`, with `timeout_drift_s = N` or
    /// `timeout_drift_ms = N` (0 without either): the earliest deadlines
    /// first, within N seconds or milliseconds.
    Deadline {
        /// The drift, in milliseconds.
        drift_ms: u64,
    },
}

/// The attribute's settings for one model. `None` keeps what the model's
/// body chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attributes {
    /// `program = "..."`: the model is this program as nodes, the path as
    /// written (relative to the declaring crate's `CARGO_MANIFEST_DIR`).
    pub program: Option<&'static str>,
    /// For a program: a `cmc-preload` library chosen by the runner. Not a
    /// key; `None` (the usual) leaves the preload that the body's
    /// configuration found: `$CMC_PRELOAD`, or the one embedded in `cmc`
    /// ([`find_preload`](crate::process::find_preload)).
    pub preload: Option<&'static Path>,
    /// `nodes = N`: the number of nodes, 1 to 8.
    pub nodes: Option<u8>,
    /// `network = fifo` or `network = bag`.
    pub network: Option<Network>,
    /// `drops = N`: the drop budget ([`Model::drops`]).
    pub drops: Option<u8>,
    /// `dups = N`: the dup budget ([`Model::dups`]).
    pub dups: Option<u8>,
    /// `crashes = N`: the crash budget ([`Model::crashes`]).
    pub crashes: Option<u8>,
    /// `clients = N`: client requests per node ([`Model::clients`]).
    pub clients: Option<u8>,
    /// `timeouts = N`: the timeout budget ([`Model::timeouts`]).
    pub timeouts: Option<u8>,
    /// `thread_switches = N` (a program only): choices of a node's next
    /// thread past the fixed order.
    pub thread_switches: Option<u8>,
    /// `timeout_byte` (a program only): the manual's `T` convention, any
    /// read or accept may time out. `false` keeps the body's choice.
    pub timeout_byte: bool,
    /// `timeout_order = any` or `timeout_order = deadline` (a program
    /// only), the latter with `timeout_drift_s = N`.
    pub timeout_order: Option<TimeoutOrderKey>,
    /// `write_bytes_max = N` (a program only): bytes of one write on a
    /// connection. `None` keeps the body's choice (the manual's 64 by
    /// default).
    pub write_bytes_max: Option<u32>,
    /// `node_state = inputs` (a program only): a node's state is also
    /// every answer of its life. `false` keeps the body's choice.
    pub node_state_inputs: bool,
    /// `search = bfs` (the default), `dfs` or `simulate`, with
    /// `depth_max`, `walks`, `walk_length` and `seed`.
    pub search: Search,
    /// `states_max = N`: stop (incomplete) past this many distinct
    /// states. No bound by default.
    pub states_max: Option<u64>,
    /// `time_max_s = N`: stop (incomplete) after this many seconds, which
    /// the runner's clock enforces. No bound by default.
    pub time_max_s: Option<u64>,
    /// `det`: run every step twice and compare (`--det`).
    pub det: bool,
    /// `deadlock`: a world with no enabled action is a violation of
    /// `deadlock` (`--deadlock`).
    pub deadlock: bool,
    /// `threads = N`: the threads breadth-first search may use; 0 (the
    /// default) for one per core. The result is the same either way.
    pub threads: usize,
    /// `symmetry`: one world per class of worlds that differ by a renaming
    /// of the core's interchangeable nodes ([`Options::symmetry`](crate::Options::symmetry)).
    pub symmetry: bool,
    /// `expect = pass` (the default) or `expect = violation("NAME")`.
    pub expect: Expect,
    /// `Some(reason)`: listed but run only with `--ignored`.
    pub ignore: Option<&'static str>,
}

impl Attributes {
    /// The defaults of `#[cmc::model]` with no keys.
    pub const DEFAULT: Attributes = Attributes {
        program: None,
        preload: None,
        nodes: None,
        network: None,
        drops: None,
        dups: None,
        crashes: None,
        clients: None,
        timeouts: None,
        thread_switches: None,
        timeout_byte: false,
        timeout_order: None,
        write_bytes_max: None,
        node_state_inputs: false,
        search: Search::Bfs { depth_max: None },
        states_max: None,
        time_max_s: None,
        det: false,
        deadlock: false,
        threads: 0,
        symmetry: false,
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
    /// `file!()` of the declaration, for messages.
    pub file: &'static str,
    /// `line!()` of the declaration, for messages.
    pub line: u32,
    /// The attribute's keys.
    pub attributes: Attributes,
    /// Builds the model with the given attributes applied on top of the
    /// body's.
    pub build: fn(&Attributes) -> Result<Box<dyn DynModel>, DynError>,
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
pub fn prepare<C: Core>(mut model: Model<C>, a: &Attributes) -> Result<Box<dyn DynModel>, DynError>
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
    let names = model.properties.iter().map(|p| p.name.as_str());
    if a.deadlock {
        // With `deadlock`, a world with no enabled action violates the
        // property `deadlock`, which the model may then expect.
        if names.clone().any(|n| n == crate::search::DEADLOCK) {
            return Err(ModelError::DeadlockPropertyName.into());
        }
        expected_property(a.expect, names.chain([crate::search::DEADLOCK]))?;
    } else {
        expected_property(a.expect, names)?;
    }
    Ok(Box::new(model))
}

/// What a `#[cmc::model]` function may return: a [`Model`] of a Rust core,
/// or a [`CModel`](crate::ccore::CModel) of a C core. The code the
/// attribute writes calls [`Declarable::prepare`] on it.
pub trait Declarable {
    /// Applies the attributes, checks the model and hides its core type.
    fn prepare(self, a: &Attributes) -> Result<Box<dyn DynModel>, DynError>;
}

impl<C: Core> Declarable for Model<C>
where
    C::Settings: Send + Sync,
{
    fn prepare(self, a: &Attributes) -> Result<Box<dyn DynModel>, DynError> {
        prepare(self, a)
    }
}

impl Declarable for crate::ccore::CModel {
    fn prepare(self, a: &Attributes) -> Result<Box<dyn DynModel>, DynError> {
        crate::ccore::CModel::prepare(self, a)
    }
}

/// A model expecting a violation of a property it does not have is an
/// error naming the properties it has.
fn expected_property<'a>(expect: Expect, names: impl Iterator<Item = &'a str> + Clone) -> Result<(), ModelError> {
    match expect {
        Expect::Violation(name) if !names.clone().any(|n| n == name) => Err(ModelError::UnknownExpectedProperty {
            name: name.to_string(),
            known: names.collect::<Vec<_>>().join(", "),
        }),
        _ => Ok(()),
    }
}

/// Applies the attributes to a program model built by a declaration's body
/// and checks it. Called by the code `#[cmc::model(program = ...)]` writes;
/// `root` is the declaring crate's `CARGO_MANIFEST_DIR`, which a relative
/// `program` is relative to.
///
/// The program, the nodes and the budgets come from the attributes; the
/// request, the arguments and the properties from the body. A model with
/// no name is named after the program's file, which is what reports and
/// counterexample files call it (`program:NAME`): no path that differs
/// between machines. Keys that mean nothing for a program (`network`,
/// `dups`, `deadlock`) are compile errors; set by an environment override,
/// they are ignored. The rest of the configuration is the body's (say,
/// `config.log_dir` to keep the nodes' output), but for `pin_cpu`, below.
#[cfg(target_os = "linux")]
pub fn prepare_program(
    mut model: crate::process::ProgramModel,
    a: &Attributes,
    root: &str,
) -> Result<Box<dyn DynModel>, DynError> {
    use crate::process::ProcessError;
    let Some(program) = a.program else {
        return Err(ProcessError::Config { key: "program", reason: "the declaration names no program".into() }.into());
    };
    let path = Path::new(root).join(program);
    if model.name.is_empty() {
        model.name = path.file_name().map_or_else(|| program.to_string(), |n| n.to_string_lossy().into_owned());
    }
    let c = &mut model.config;
    c.program = path;
    if let Some(n) = a.nodes {
        c.nodes = n;
    }
    let b = &mut c.budgets;
    for (slot, value) in [
        (&mut b.crashes, a.crashes),
        (&mut b.drops, a.drops),
        (&mut b.timeouts, a.timeouts),
        (&mut b.clients, a.clients),
        (&mut b.thread_switches, a.thread_switches),
    ] {
        if let Some(v) = value {
            *slot = v;
        }
    }
    if a.timeout_byte {
        c.timeout_byte = true;
    }
    c.timeout_order = match a.timeout_order {
        None => c.timeout_order,
        Some(TimeoutOrderKey::Any) => crate::process::TimeoutOrder::Any,
        Some(TimeoutOrderKey::Deadline { drift_ms }) => crate::process::TimeoutOrder::Deadline { drift_ms },
    };
    if let Some(m) = a.write_bytes_max {
        c.write_bytes_max = m as usize;
    }
    if a.node_state_inputs {
        c.node_state = crate::process::NodeState::Inputs;
    }
    if let Some(p) = a.preload {
        c.preload = Some(p.to_path_buf());
    }
    if c.preload.is_none() {
        // A node without the preload would read the real clock: never run
        // one (the manual's RULES: a missing preload is an error). Either
        // no preload could be found, and finding it again says why, or the
        // body removed it.
        crate::process::find_preload()?;
        return Err(ProcessError::Config {
            key: "preload",
            reason: "no cmc-preload library: the model's configuration has `preload: None`".into(),
        }
        .into());
    }
    // Not pinned: a declared model runs beside other tests, and a search
    // pinned to the CPU its thread started on waits for that CPU while the
    // others may be idle. Measured with the models suite on two busy CPUs:
    // 15 s unpinned with two program searches at once, 34 s pinned (28 s
    // unpinned one at a time). The `cmc` command, alone on its machine,
    // pins.
    c.pin_cpu = false;
    c.validate()?;
    // Every program model also has the front end's own property.
    let mut names: Vec<&str> = model.properties.iter().map(|p| p.name.as_str()).collect();
    names.push(crate::process::NO_NODE_KILLED);
    if names.contains(&"") {
        return Err(ModelError::EmptyPropertyName.into());
    }
    names.sort_unstable();
    if let Some(twin) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(ModelError::DuplicateProperty { name: twin[0].to_string() }.into());
    }
    expected_property(a.expect, names.iter().copied())?;
    Ok(Box::new(model))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::process::ProgramModel;

    fn program(path: &'static str) -> Attributes {
        Attributes {
            program: Some(path),
            preload: Some(Path::new("/nonexistent/libcmc_preload.so")),
            nodes: Some(3),
            ..Attributes::DEFAULT
        }
    }

    fn error(model: ProgramModel, a: &Attributes) -> String {
        match prepare_program(model, a, "/root/of/crate") {
            Ok(_) => panic!("prepared"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_relative_program_is_relative_to_the_crate_and_an_absolute_one_is_as_is() {
        let e = error(ProgramModel::default(), &program("build/node"));
        assert!(e.starts_with("program /root/of/crate/build/node: "), "{e}");
        let e = error(ProgramModel::default(), &program("/opt/node"));
        assert!(e.starts_with("program /opt/node: "), "{e}");
    }

    #[test]
    fn a_program_without_a_preload_is_an_error_not_a_run_without_it() {
        let mut model = ProgramModel::default();
        model.config.preload = None;
        let a = Attributes { preload: None, ..program("build/node") };
        let e = error(model, &a);
        assert!(e.starts_with("model key `preload`: no cmc-preload library"), "{e}");
    }
}

//! Cores written in C (libcmc(3)): a `struct cmc_core` of `cmc.h`, from a
//! shared object or a static library linked into a test, checked by the
//! same engine and searches as a Rust core, under the same rules.
//!
//! [`CModel`] is a C core's model: the core, its settings by key, the
//! environment and the properties, written as Rust closures over a
//! [`CView`] or as C predicates over `struct cmc_world`. It becomes a
//! [`Model`] of [`CCore<N>`], whose state type is `N` bytes for the
//! smallest size class `N` that holds the core's `state_size`
//! ([`CModel::into_dyn`]); `#[cmc::model]` takes a function returning a
//! `CModel` as it takes one returning a `Model`.
//!
//! ```ignore
//! unsafe extern "C" {
//!     static two_phase_core: cmc::ccore::CmcCore;
//!     fn atomicity(world: *const cmc::ccore::CmcWorld) -> i32;
//! }
//!
//! #[cmc::model(nodes = 3, crashes = 1)]
//! fn two_phase() -> cmc::ccore::CModel {
//!     cmc::ccore::CModel::new(unsafe { &two_phase_core })
//!         .unwrap()
//!         .c_property(cmc::Kind::Always, "atomicity", atomicity)
//! }
//! ```

mod abi;
mod core;
#[cfg(target_os = "linux")]
pub mod model_file;

use std::path::Path;
use std::sync::Arc;

pub use self::abi::{CmcCore, Predicate as CPredicate, World as CmcWorld};
pub use self::core::{AbiError, CCore, CSettings};
use crate::catalog::{DynError, DynModel};
use crate::core::{NodeId, Settings as _};
use crate::harness::Attributes;
use crate::model::{Budgets, Identity, Model, ModelError};
use crate::network::{Msg, Network};
use crate::property::{Kind, Property, View};
use crate::world::{NodeEnv, World};

#[cfg(target_os = "linux")]
pub(crate) use crate::library::Library;
/// No shared objects off Linux: a C core there is a static library.
#[cfg(not(target_os = "linux"))]
pub(crate) struct Library;

/// The state sizes [`CCore`] is compiled for: a core's state type is the
/// smallest that holds its `state_size`. Each is a copy of the engine, so
/// there are few; the world keeps only `state_size` bytes whatever the
/// class, and a step copies the class's.
pub const SIZE_CLASSES: [usize; 4] = [16, 64, 512, abi::STATE_MAX];

type RustPredicate = dyn Fn(&CView<'_>) -> bool + Send + Sync;

#[derive(Clone)]
enum Predicate {
    Rust(Arc<RustPredicate>),
    /// A C function, with the library it lives in when that is not the
    /// core's own (kept loaded while the property lives).
    C(CPredicate, #[allow(dead_code)] Option<Arc<Library>>),
}

#[derive(Clone)]
struct CProperty {
    name: String,
    kind: Kind,
    predicate: Predicate,
}

/// A model of a C core: the core and its settings, the environment and the
/// properties. Built like a [`Model`], which it becomes to be checked.
#[derive(Clone)]
pub struct CModel {
    settings: CSettings,
    nodes: u8,
    network: Network,
    budgets: Budgets,
    properties: Vec<CProperty>,
    model_file: Option<String>,
}

impl CModel {
    /// A model of `core`, a `struct cmc_core` linked into this program,
    /// with its default settings: one node, FIFO, no budgets, no
    /// properties (as [`Model::new`]). An error names what is wrong with
    /// the core's fields.
    pub fn new(core: &'static CmcCore) -> Result<CModel, AbiError> {
        Self::registered(self::core::register(core, None, "(linked)")?)
    }

    /// A model of the core that the shared object at `path` exports as
    /// `symbol` (`cmc_core` for a library built with `CMC_EXPORT_CORE`).
    /// The library stays loaded for the life of the process.
    #[cfg(target_os = "linux")]
    pub fn load(path: &Path, symbol: &str) -> Result<CModel, AbiError> {
        let from = path.display().to_string();
        let err = |reason: String| AbiError { core: from.clone(), reason };
        let library = Library::open(path).map_err(err)?;
        let p = library.symbol(symbol, "core").map_err(err)?;
        // SAFETY: the symbol is taken to be a `const struct cmc_core`, as
        // cmc.h says a core's library exports; `register` checks its
        // fields, and the library is kept loaded with it.
        let core: &'static CmcCore = unsafe { &*p.cast::<CmcCore>() };
        Self::registered(self::core::register(core, Some(library), &from)?)
    }

    fn registered(slot: usize) -> Result<CModel, AbiError> {
        Ok(CModel {
            settings: CSettings::defaults(slot),
            nodes: 1,
            network: Network::Fifo,
            budgets: Budgets::default(),
            properties: Vec::new(),
            model_file: None,
        })
    }

    /// The core's name.
    pub fn name(&self) -> &'static str {
        self.settings.core().name
    }

    /// The core's settings.
    pub fn settings(&self) -> &CSettings {
        &self.settings
    }

    /// Sets setting `key` to `value`; an unknown key or a value that does
    /// not fit is an error naming it.
    pub fn set(&mut self, key: &str, value: u64) -> Result<(), ModelError> {
        let core = self.name();
        self.settings.set(key, value).map_err(|error| ModelError::Setting { core, error })
    }

    /// As [`Model::nodes`].
    pub fn nodes(mut self, nodes: u8) -> Self {
        self.nodes = nodes;
        self
    }
    /// As [`Model::network`].
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }
    /// As [`Model::budgets`]: every budget at once.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }
    /// As [`Model::drops`].
    pub fn drops(mut self, n: u8) -> Self {
        self.budgets.drops = n;
        self
    }
    /// As [`Model::dups`].
    pub fn dups(mut self, n: u8) -> Self {
        self.budgets.dups = n;
        self
    }
    /// As [`Model::crashes`].
    pub fn crashes(mut self, n: u8) -> Self {
        self.budgets.crashes = n;
        self
    }
    /// As [`Model::clients`].
    pub fn clients(mut self, n: u8) -> Self {
        self.budgets.clients = n;
        self
    }
    /// As [`Model::timeouts`].
    pub fn timeouts(mut self, n: u8) -> Self {
        self.budgets.timeouts = Some(n);
        self
    }

    fn property(mut self, name: &str, kind: Kind, predicate: Predicate) -> Self {
        self.properties.push(CProperty { name: name.to_string(), kind, predicate });
        self
    }

    /// Adds an invariant, a Rust closure over the world.
    pub fn always(self, name: &str, p: impl Fn(&CView<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.property(name, Kind::Always, Predicate::Rust(Arc::new(p)))
    }
    /// Adds a property that must hold in some reachable world.
    pub fn sometimes(self, name: &str, p: impl Fn(&CView<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.property(name, Kind::Sometimes, Predicate::Rust(Arc::new(p)))
    }
    /// Adds a bounded-liveness property (as [`Model::eventually`]).
    pub fn eventually(self, name: &str, p: impl Fn(&CView<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.property(name, Kind::Eventually, Predicate::Rust(Arc::new(p)))
    }

    /// Adds a property of kind `kind` whose predicate is the C function
    /// `f`, `int NAME(const struct cmc_world *)`, nonzero when it holds.
    pub fn c_property(self, kind: Kind, name: &str, f: CPredicate) -> Self {
        self.property(name, kind, Predicate::C(f, None))
    }

    /// Adds properties of kind `kind`: the C functions `names` in the
    /// shared object at `library`.
    #[cfg(target_os = "linux")]
    pub fn c_properties_from(mut self, kind: Kind, library: &Path, names: &[String]) -> Result<Self, String> {
        let library = Arc::new(Library::open(library)?);
        for name in names {
            let f = library.symbol(name, "function")?;
            // SAFETY: cmc.h declares a core's property as `int NAME(const
            // struct cmc_world *)`; a symbol of that name is taken to be one.
            let f = unsafe { std::mem::transmute::<*mut std::ffi::c_void, CPredicate>(f) };
            self = self.property(name, kind, Predicate::C(f, Some(Arc::clone(&library))));
        }
        Ok(self)
    }

    /// The model file this model was read from, which counterexample files
    /// record so that `cmc replay` can rebuild it.
    pub fn model_file(mut self, path: &Path) -> Self {
        self.model_file = Some(path.display().to_string());
        self
    }

    /// The model of [`CCore<N>`].
    fn typed<const N: usize>(self) -> Model<CCore<N>> {
        let size = self.settings.core().state_size;
        let mut model =
            Model::<CCore<N>>::new(self.settings).nodes(self.nodes).network(self.network).budgets(self.budgets);
        for p in self.properties {
            let predicate = p.predicate;
            model.properties.push(Property::new(p.name, p.kind, move |v: &View<'_, CCore<N>>| {
                predicate.holds(&CView { world: v.world(), settings: v.settings(), state_size: size })
            }));
        }
        model
    }

    /// The model, checked, as the runner and the `cmc` command hold
    /// models: a [`Model`] of the smallest [`CCore`] size class that holds
    /// the core's state.
    pub fn into_dyn(self) -> Result<Box<dyn DynModel>, ModelError> {
        let file = self.model_file.clone();
        macro_rules! typed {
            ($n:expr) => {{
                let model = self.typed::<{ $n }>();
                model.validate()?;
                Ok(Box::new(WithFile { model, file }))
            }};
        }
        match class(self.settings.core().state_size) {
            16 => typed!(16),
            64 => typed!(64),
            512 => typed!(512),
            _ => typed!(4096),
        }
    }

    /// What `#[cmc::model]` does with a declaration's `CModel`: as
    /// [`crate::harness::prepare`] with a `Model`.
    pub fn prepare(self, a: &Attributes) -> Result<Box<dyn DynModel>, DynError> {
        match class(self.settings.core().state_size) {
            16 => crate::harness::prepare(self.typed::<16>(), a),
            64 => crate::harness::prepare(self.typed::<64>(), a),
            512 => crate::harness::prepare(self.typed::<512>(), a),
            _ => crate::harness::prepare(self.typed::<4096>(), a),
        }
    }
}

/// The size class for a state of `size` bytes.
fn class(size: usize) -> usize {
    SIZE_CLASSES.into_iter().find(|&c| size <= c).unwrap_or(abi::STATE_MAX)
}

impl Predicate {
    fn holds(&self, view: &CView<'_>) -> bool {
        match self {
            Predicate::Rust(p) => p(view),
            Predicate::C(f, _) => view.with_c(|w| {
                // SAFETY: cmc.h's property signature, with a complete
                // `struct cmc_world` whose arrays live for the call.
                unsafe { f(w) != 0 }
            }),
        }
    }
}

/// A C core's model with the model file it came from, for its identity.
struct WithFile<const N: usize> {
    model: Model<CCore<N>>,
    file: Option<String>,
}

impl<const N: usize> DynModel for WithFile<N> {
    fn identity(&self) -> Identity {
        Identity { model_file: self.file.clone(), ..self.model.identity() }
    }
    fn header(&self) -> Vec<(&'static str, String)> {
        DynModel::header(&self.model)
    }
    fn check(
        &self,
        options: &crate::search::Options,
        control: &mut dyn crate::search::Control,
    ) -> Result<crate::report::Report, DynError> {
        let mut report = self.model.check(options, control)?;
        report.model.model_file.clone_from(&self.file);
        Ok(report)
    }
    fn replay(&self, file: &crate::report::CounterexampleFile, det: bool) -> Result<crate::report::Report, DynError> {
        DynModel::replay(&self.model, file, det)
    }
    fn check_distributed(
        &self,
        options: &crate::search::Options,
        peers: &mut dyn crate::search::Exchange,
        control: &mut dyn crate::search::Control,
    ) -> Result<crate::report::Report, DynError> {
        let mut report = self.model.check_distributed(options, peers, control)?;
        report.model.model_file.clone_from(&self.file);
        Ok(report)
    }
    fn session(&self) -> Result<Box<dyn crate::session::Session + '_>, DynError> {
        self.model.session()
    }
}

/// The arrays of a `struct cmc_world`, kept per thread.
#[derive(Default)]
struct ViewBuffers {
    messages: Vec<abi::Message>,
    persists: Vec<abi::RecordOf>,
    replies: Vec<abi::RecordOf>,
    env: Vec<abi::NodeEnv>,
}

impl ViewBuffers {
    fn clear(&mut self) {
        self.messages.clear();
        self.persists.clear();
        self.replies.clear();
        self.env.clear();
    }
}

thread_local! {
    static VIEW: std::cell::RefCell<ViewBuffers> = std::cell::RefCell::new(ViewBuffers::default());
}

/// A read-only view of one world of a C core's model, for properties
/// written in Rust.
pub struct CView<'a> {
    world: &'a World,
    settings: &'a CSettings,
    state_size: usize,
}

impl<'a> CView<'a> {
    /// How many nodes the world has.
    pub fn nodes(&self) -> u8 {
        self.world.nodes()
    }
    /// Node `n`'s state: `state_size` bytes.
    pub fn state(&self, n: NodeId) -> &'a [u8] {
        self.world.state_bytes(n, self.state_size)
    }
    /// The value of setting `key`.
    pub fn setting(&self, key: &str) -> Option<u64> {
        self.settings.get(key)
    }
    /// The engine's environment of node `n`.
    pub fn env(&self, n: NodeId) -> NodeEnv {
        self.world.env(n)
    }
    /// Messages in flight, in canonical order.
    pub fn messages(&self) -> &'a [Msg] {
        self.world.messages()
    }
    /// Node `n`'s pending persist records, oldest first.
    pub fn pending_persists(&self, n: NodeId) -> impl Iterator<Item = &'a [u8]> {
        self.world.persists_of(n)
    }
    /// The ghost log of client replies, in emission order.
    pub fn replies(&self) -> impl Iterator<Item = (NodeId, &'a [u8])> {
        self.world.replies()
    }
    /// The raw world.
    pub fn world(&self) -> &'a World {
        self.world
    }

    /// Calls `f` with this world as a `struct cmc_world`, its arrays built
    /// in this thread's buffers (a property is checked on every world).
    fn with_c<R>(&self, f: impl FnOnce(&abi::World) -> R) -> R {
        let w = self.world;
        let payload = |bytes: &[u8]| {
            let mut b = [0; 32];
            b[..bytes.len()].copy_from_slice(bytes);
            b
        };
        VIEW.with_borrow_mut(|v| {
            v.clear();
            v.messages.extend(w.messages().iter().map(|m| {
                let bytes = m.payload.as_slice();
                abi::Message { from: m.from, to: m.to, len: bytes.len() as u8, bytes: payload(bytes) }
            }));
            for n in 0..w.nodes() {
                v.persists.extend(w.persists_of(n).map(|b| abi::RecordOf {
                    node: n,
                    len: b.len() as u8,
                    bytes: payload(b),
                }));
                let e = w.env(n);
                v.env.push(abi::NodeEnv {
                    clients_left: e.clients_left,
                    wakes: e.wakes,
                    timers: e.timers,
                    resets: e.resets,
                    reserved: [0; 3],
                });
            }
            v.replies.extend(w.replies().map(|(n, b)| abi::RecordOf {
                node: n,
                len: b.len() as u8,
                bytes: payload(b),
            }));
            let c = abi::World {
                version: abi::CORE_ABI,
                nodes: w.nodes() as u32,
                state_size: self.state_size as u32,
                messages: v.messages.len() as u32,
                persists: v.persists.len() as u32,
                replies: v.replies.len() as u32,
                states: w.state_bytes(0, 0).as_ptr(),
                settings: self.settings.bytes().as_ptr().cast(),
                env: v.env.as_ptr(),
                message: v.messages.as_ptr(),
                persist: v.persists.as_ptr(),
                reply: v.replies.as_ptr(),
            };
            f(&c)
        })
    }
}

//! The searches: breadth-first with TLC's semantics, depth-first with a
//! bound, seeded simulation. All are generic over [`Explore`] (the state
//! graph: initial worlds, actions, successors) and share `Checker`
//! (counts, properties, traces). None of them does I/O; the caller may stop
//! a search through [`Control`].

mod bfs;
mod dfs;
mod explore;
mod fpset;
mod simulate;

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

pub use bfs::distributed::{
    DistributedError, Exchange, check_distributed, explore_distributed, supported as distributed_supported,
};
pub(crate) use explore::unwind;
pub use explore::{CoreExplorer, Explore};

use crate::core::Core;
use crate::engine::Engine;
use crate::model::{Model, ModelError};
use crate::property::Kind;
use crate::report::{Report, Step, Verdict, Witness};
use crate::world::Fingerprint;

/// Which search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Breadth-first (TLC's semantics); with `depth_max`, worlds deeper than
    /// it are not explored and a search they would have extended is
    /// incomplete.
    Bfs {
        /// The deepest worlds explored, the initial state being depth 1;
        /// `None` for no bound.
        depth_max: Option<u32>,
    },
    /// Depth-first to `depth_max` (the initial state is depth 1).
    Dfs {
        /// The deepest worlds explored, the initial state being depth 1.
        depth_max: u32,
    },
    /// `walks` seeded random walks of at most `walk_length` actions.
    Simulate {
        /// How many walks.
        walks: u64,
        /// The most actions one walk takes after its initial world.
        walk_length: u32,
        /// The seed: walk `i` draws from a generator seeded from
        /// (`seed`, `i`), so the same seed gives the same walks.
        seed: u64,
    },
}

impl Search {
    /// The search and its parameters, as reports show it.
    pub fn describe(&self) -> String {
        match *self {
            Search::Bfs { depth_max: None } => "bfs".to_string(),
            Search::Bfs { depth_max: Some(d) } => format!("bfs(depth_max={d})"),
            Search::Dfs { depth_max } => format!("dfs(depth_max={depth_max})"),
            Search::Simulate { walks, walk_length, seed } => {
                format!("simulate(walks={walks}, walk_length={walk_length}, seed={seed})")
            }
        }
    }
}

/// How to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Which search, with its bounds. Default: BFS with no depth bound.
    pub search: Search,
    /// Stop (incomplete) rather than store more distinct states than this.
    pub states_max: Option<u64>,
    /// Run every step twice and compare (`--det`).
    pub det: bool,
    /// Report a world with no enabled action as a violation of `deadlock`
    /// (TLC's default; off unless asked, as with TLC's `-deadlock`).
    pub deadlock: bool,
    /// How many threads breadth-first search may use; 0 (the default) for
    /// one per core of the machine. The report is the same whatever the
    /// number: counts, verdict and trace. Front ends that search on one
    /// thread only (the process front end) and the other searches ignore
    /// it.
    pub threads: usize,
    /// Symmetry reduction (TLC's `SYMMETRY`): keep one world of each class
    /// of worlds that differ only by a renaming of the core's
    /// interchangeable nodes ([`Core::interchangeable`]). Distinct states
    /// then count classes; a counterexample is still a real trace of the
    /// model. Cores only; a core that declares no interchangeable nodes is
    /// an error.
    pub symmetry: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            search: Search::Bfs { depth_max: None },
            states_max: None,
            det: false,
            deadlock: false,
            threads: 0,
            symmetry: false,
        }
    }
}

impl Options {
    /// The threads a search will use: [`Options::threads`], or the cores
    /// this process may run on when it is 0.
    pub fn threads_used(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// Progress, as a search reports it to its [`Control`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Distinct worlds found so far (fingerprints stored).
    pub distinct_states: u64,
    /// Successors computed so far, seen before or not.
    pub generated_states: u64,
    /// The deepest world reached so far, the initial state being depth 1.
    pub depth: u32,
    /// BFS: the depth whose worlds are being expanded, and how many of
    /// them are left to expand. `None` for the other searches.
    pub level: Option<(u32, u64)>,
}

/// Lets the caller watch a search and stop it (a time cap, Ctrl-C). The
/// engine owns no clock, so time caps live here.
pub trait Control {
    /// Called every [`Explore::poll_every`] generated states (every few
    /// thousand unless the front end asks for more). `Some(reason)` stops
    /// the search with the verdict incomplete.
    fn poll(&mut self, progress: &Progress) -> Option<String>;

    /// The same request to stop, for a front end to check inside one step,
    /// between two polls: the process front end waits for its nodes there
    /// (up to `stall_timeout`), and answers a stop while it waits. `None`
    /// (the default) when only polls can stop the search.
    fn stop(&self) -> Option<Stop> {
        None
    }
}

/// A request to stop a search, as a check anyone holding it may make from
/// any thread: `Some(reason)` once the search should stop. Made by a
/// [`Control`] (which owns the clock and the signals) and checked by a front
/// end inside a step ([`Explore::watch`]); a step it cuts short is not an
/// error but the stop, and the search ends incomplete with its reason.
#[derive(Clone)]
pub struct Stop(Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl Stop {
    /// A request that asks `requested` whether, and why, to stop.
    pub fn new(requested: impl Fn() -> Option<String> + Send + Sync + 'static) -> Stop {
        Stop(Arc::new(requested))
    }

    /// Why the search should stop, once it should.
    pub fn requested(&self) -> Option<String> {
        (self.0)()
    }
}

impl fmt::Debug for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Stop").field(&self.requested()).finish()
    }
}

/// A [`Control`] that never stops a search.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoControl;

impl Control for NoControl {
    fn poll(&mut self, _progress: &Progress) -> Option<String> {
        None
    }
}

/// The property a world with no enabled action violates under
/// `--deadlock` ([`Options::deadlock`]); no model property may have this
/// name then.
pub const DEADLOCK: &str = "deadlock";

/// How often (in generated states) a search polls its control, unless its
/// explorer says otherwise ([`Explore::poll_every`]).
pub(crate) const POLL_EVERY: u64 = 1 << 14;

/// Checks `model` with `options`.
pub fn check<C: Core>(model: &Model<C>, options: &Options) -> Result<Report, ModelError> {
    check_with(model, options, &mut NoControl)
}

/// Checks `model` with `options`, polling `control`.
pub fn check_with<C: Core>(
    model: &Model<C>,
    options: &Options,
    control: &mut dyn Control,
) -> Result<Report, ModelError> {
    if options.deadlock && model.properties.iter().any(|p| p.name == DEADLOCK) {
        return Err(ModelError::DeadlockPropertyName);
    }
    let engine = Engine::new(model, options.det)?;
    let mut explorer = CoreExplorer::new(engine);
    if options.symmetry {
        explorer = explorer.with_symmetry()?;
    }
    Ok(explore_threads(explorer, options, control).0)
}

/// Runs the search `options` ask for over any state graph.
pub fn explore<E: Explore>(explorer: E, options: &Options, control: &mut dyn Control) -> Report {
    explore_keeping(explorer, options, control).0
}

/// [`explore`], giving the explorer back (for its counters). One thread.
pub fn explore_keeping<E: Explore>(explorer: E, options: &Options, control: &mut dyn Control) -> (Report, E) {
    explore_with(explorer, options, control, bfs::run, simulate::run)
}

/// [`explore_keeping`], with breadth-first search on
/// [`Options::threads_used`] threads when the explorer can make workers
/// ([`Explore::worker`]).
pub fn explore_threads<E>(explorer: E, options: &Options, control: &mut dyn Control) -> (Report, E)
where
    E: Explore + Send,
    E::World: Send,
    E::Action: Send + Sync,
{
    let threads = options.threads_used();
    explore_with(
        explorer,
        options,
        control,
        |c, depth_max, control| bfs::run_threads(c, depth_max, control, threads),
        |c, walks, walk_length, seed, control| simulate::run_threads(c, walks, walk_length, seed, control, threads),
    )
}

fn explore_with<E: Explore>(
    explorer: E,
    options: &Options,
    control: &mut dyn Control,
    bfs_run: impl FnOnce(&mut Checker<E>, Option<u32>, &mut dyn Control) -> End<E::Action>,
    simulate_run: impl FnOnce(&mut Checker<E>, u64, u32, u64, &mut dyn Control) -> End<E::Action>,
) -> (Report, E) {
    let mut checker = Checker::new(explorer, options);
    checker.explorer.watch(control.stop());
    let end = match options.search {
        // Not even the initial worlds are within the bound: one answer for
        // both searches, and never a pass.
        Search::Bfs { depth_max: Some(0) } | Search::Dfs { depth_max: 0 } => {
            End::Incomplete("depth_max = 0 explores nothing (the initial state is depth 1)".to_string())
        }
        Search::Bfs { depth_max } => bfs_run(&mut checker, depth_max, control),
        Search::Dfs { depth_max } => dfs::run(&mut checker, depth_max, control),
        Search::Simulate { walks, walk_length, seed } => simulate_run(&mut checker, walks, walk_length, seed, control),
    };
    // Traces and witnesses are rendered to the end, stopped or not.
    checker.explorer.watch(None);
    let report = checker.finish(end);
    (report, checker.explorer)
}

/// A hasher for fingerprints, which are already uniform: it keeps the low
/// 64 bits.
#[derive(Default, Clone, Copy)]
pub(crate) struct FpHasher(u64);

impl Hasher for FpHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) use fpset::FpSet;
pub(crate) type FpMap<V> = HashMap<Fingerprint, V, BuildHasherDefault<FpHasher>>;

/// Checks a world with no enabled action ([`Checker::check_terminal`]),
/// for a search thread that does not own the checker.
pub(crate) fn terminal<E: Explore>(
    e: &E,
    properties: &[(String, Kind)],
    deadlock: bool,
    world: &E::World,
) -> Result<Option<(String, Kind)>, String> {
    for (i, (name, kind)) in properties.iter().enumerate() {
        if *kind == Kind::Eventually && !e.holds(i, world)? {
            return Ok(Some((name.clone(), *kind)));
        }
    }
    Ok(deadlock.then(|| (DEADLOCK.to_string(), Kind::Always)))
}

/// How a search ended, before the report is assembled.
pub(crate) enum End<A> {
    /// Explored everything within the search's reach.
    Complete,
    /// A property failed; the actions that lead to the failing world.
    Violation { property: String, kind: Kind, path: Vec<A> },
    /// Stopped early.
    Incomplete(String),
    /// A step failed, or a property's code did: the actions to the world
    /// the step was taken from (or the property checked in), and the
    /// failed step's action when known.
    Error { error: String, path: Vec<A>, failed: Option<A> },
}

/// Properties, counts and trace rendering, shared by the searches.
pub(crate) struct Checker<E: Explore> {
    pub explorer: E,
    pub options: Options,
    pub distinct: u64,
    pub generated: u64,
    pub depth: u32,
    /// (name, kind) of each property, by index.
    pub properties: Vec<(String, Kind)>,
    /// For each property, whether it is `sometimes` and still unwitnessed.
    pub unwitnessed: Vec<bool>,
    /// Witness paths of `sometimes` properties, by property index.
    pub witnesses: Vec<Option<Vec<E::Action>>>,
    /// Whether any world with no enabled action was checked (the
    /// `eventually` properties are checked on those only).
    pub terminal_checked: bool,
    /// BFS: the level being expanded and the worlds left in it
    /// ([`Progress::level`]).
    pub level: Option<(u32, u64)>,
}

impl<E: Explore> Checker<E> {
    pub fn new(explorer: E, options: &Options) -> Self {
        let properties = explorer.properties();
        let unwitnessed = properties.iter().map(|(_, k)| *k == Kind::Sometimes).collect();
        let witnesses = properties.iter().map(|_| None).collect();
        Checker {
            explorer,
            options: *options,
            distinct: 0,
            generated: 0,
            depth: 0,
            properties,
            unwitnessed,
            witnesses,
            terminal_checked: false,
            level: None,
        }
    }

    pub fn progress(&self) -> Progress {
        Progress {
            distinct_states: self.distinct,
            generated_states: self.generated,
            depth: self.depth,
            level: self.level,
        }
    }

    /// Checks the invariants on a newly found world; returns the first that
    /// fails. Also records which `sometimes` properties it witnesses (their
    /// indices are returned through `witnessed`). An error when a
    /// property's code failed.
    pub fn check_new(&mut self, world: &E::World, witnessed: &mut Vec<usize>) -> Result<Option<usize>, String> {
        witnessed.clear();
        for i in 0..self.properties.len() {
            match self.properties[i].1 {
                Kind::Always => {
                    if !self.explorer.holds(i, world)? {
                        return Ok(Some(i));
                    }
                }
                Kind::Sometimes => {
                    if self.unwitnessed[i] && self.explorer.holds(i, world)? {
                        self.unwitnessed[i] = false;
                        witnessed.push(i);
                    }
                }
                Kind::Eventually => {}
            }
        }
        Ok(None)
    }

    /// Checks a world with no enabled action: the `eventually` properties,
    /// then deadlock when asked. Returns the failing property's name and
    /// kind; an error when a property's code failed.
    pub fn check_terminal(&mut self, world: &E::World) -> Result<Option<(String, Kind)>, String> {
        self.terminal_checked = true;
        terminal(&self.explorer, &self.properties, self.options.deadlock, world)
    }

    pub fn property(&self, i: usize) -> (String, Kind) {
        self.properties[i].clone()
    }

    /// Re-runs `path` and renders every world. A path the search recorded
    /// always replays; if it did not, the checker's own bookkeeping would be
    /// wrong, which is reported rather than hidden.
    pub fn render(&mut self, path: &[E::Action]) -> Result<Vec<Step>, String> {
        self.render_with_last(path).map(|(steps, _)| steps)
    }

    /// [`Searcher::render`], with the last world the path rebuilt.
    fn render_with_last(&mut self, path: &[E::Action]) -> Result<(Vec<Step>, E::World), String> {
        self.explorer.tracing(true);
        let steps = self.render_traced(path);
        self.explorer.tracing(false);
        steps
    }

    fn render_traced(&mut self, path: &[E::Action]) -> Result<(Vec<Step>, E::World), String> {
        let mut steps = Vec::with_capacity(path.len());
        let mut world = self.explorer.empty_world();
        let mut next = self.explorer.empty_world();
        for (i, action) in path.iter().enumerate() {
            let ok = if i == 0 {
                let variant = (0..self.explorer.initial_variants())
                    .find(|&v| self.explorer.init_action(v) == *action)
                    .ok_or_else(|| format!("internal: a recorded trace starts with {action}, not an initial world"))?;
                self.explorer.initial(variant, &mut next)?
            } else {
                self.explorer.apply(&world, action, &mut next)?
            };
            if !ok {
                return Err(format!("internal: step {} ({action}) of a recorded trace is not enabled", i + 1));
            }
            std::mem::swap(&mut world, &mut next);
            steps.push(self.explorer.render(action, &world));
        }
        Ok((steps, world))
    }

    /// A report with the verdict pass and this checker's counts.
    pub fn empty_report(&self, search: String) -> Report {
        Report {
            verdict: Verdict::Pass,
            property: None,
            kind: None,
            reason: None,
            never_checked: Vec::new(),
            search,
            deadlock: self.options.deadlock,
            model: self.explorer.identity(),
            distinct_states: self.distinct,
            generated_states: self.generated,
            depth: self.depth,
            elapsed_s: 0.0,
            filters_installed: None,
            execs: None,
            forks: None,
            trace: Vec::new(),
            failed_action: None,
            chart: None,
            witnesses: Vec::new(),
        }
    }

    /// Assembles the report, with what the search cost the front end in
    /// processes (traces and witnesses rendered included).
    pub fn finish(&mut self, end: End<E::Action>) -> Report {
        let mut report = self.verdict(end);
        report.set_process_counts(self.explorer.process_counts());
        report
    }

    /// The report's verdict, counts, traces and witnesses.
    fn verdict(&mut self, end: End<E::Action>) -> Report {
        // A step the front end cut short to answer a stop request ended
        // the search as a poll would have.
        let end = match (end, self.explorer.stopped()) {
            (End::Error { .. }, Some(reason)) => End::Incomplete(reason),
            (end, _) => end,
        };
        let mut search = self.options.search.describe();
        if self.explorer.symmetric() {
            search.push_str(" with symmetry");
        }
        let mut report = self.empty_report(search);
        for i in 0..self.properties.len() {
            if let Some(path) = self.witnesses[i].take() {
                let property = self.properties[i].0.clone();
                match self.render(&path) {
                    Ok(trace) => report.witnesses.push(Witness { property, trace }),
                    Err(e) => return error_report(report, e),
                }
            }
        }
        match end {
            End::Complete => {
                let missing = self.properties.iter().zip(&self.unwitnessed).find(|(_, u)| **u);
                if let Some(((name, _), _)) = missing {
                    report.verdict = Verdict::Violation;
                    report.property = Some(name.clone());
                    report.kind = Some(Kind::Sometimes);
                    report.reason = Some("no reachable world satisfies it".to_string());
                }
            }
            End::Violation { property, kind, path } => {
                let (trace, last) = match self.render_with_last(&path) {
                    Ok(rendered) => rendered,
                    Err(e) => return error_report(report, e),
                };
                // The trace is rebuilt from scratch: an `always` property
                // it shows violated must be violated at its last world. A
                // program whose memory holds what its world does not (a
                // timer it keeps, unreported) can be in another state on
                // the rebuilt path than on the one the search took.
                let index = self.properties.iter().position(|(name, k)| *name == property && *k == kind);
                if kind == Kind::Always
                    && let Some(i) = index
                    && self.explorer.holds(i, &last) == Ok(true)
                {
                    report.trace = trace;
                    return error_report(
                        report,
                        format!(
                            "the counterexample to `{property}`, rebuilt from the start, does not violate it at its \
                             last world: the model is not deterministic, or keeps state its world does not show (a \
                             program's memory that its report leaves out: node_state = \"inputs\" keeps each \
                             node's inputs in the world)"
                        ),
                    );
                }
                report.verdict = Verdict::Violation;
                report.property = Some(property);
                report.kind = Some(kind);
                report.trace = trace;
            }
            End::Incomplete(reason) => {
                report.verdict = Verdict::Incomplete;
                report.reason = Some(reason);
            }
            End::Error { error, path, failed } => {
                report.verdict = Verdict::Error;
                report.reason = Some(error);
                if let Ok(trace) = self.render(&path) {
                    report.trace = trace;
                    report.failed_action = failed.map(|a| a.to_string());
                }
            }
        }
        // A search that ended without a failure and never reached a world
        // without an enabled action checked its `eventually` properties
        // nowhere: say so, rather than let them count as held.
        if matches!(report.verdict, Verdict::Pass | Verdict::Incomplete) && !self.terminal_checked {
            report.never_checked = self
                .properties
                .iter()
                .filter(|(_, kind)| *kind == Kind::Eventually)
                .map(|(name, _)| name.clone())
                .collect();
        }
        report
    }
}

fn error_report(mut report: Report, e: String) -> Report {
    report.verdict = Verdict::Error;
    report.reason = Some(e);
    report
}

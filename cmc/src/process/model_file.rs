//! Model files (DESIGN 6.3): TOML that says which program, which environment
//! and which invariants; it carries no behaviour. Unknown keys, wrong types,
//! values past a limit (`nodes` over 8, a budget over 255, a `request` over
//! 64 bytes) and missing files are errors naming the key or the path.
//!
//! ```toml
//! program = "build/register"      # relative to this file
//! args = []
//! nodes = 3
//! crashes = 1
//! drops = 1
//! timeouts = 2
//! clients = 1
//! thread_switches = 0             # choices of a node's next thread past the fixed one
//! request = "w1"
//! search = "bfs"                  # bfs, dfs or simulate
//! depth_max = 20
//! snapshots_max = 2048            # processes kept parked; 0: rebuild every world
//! snapshots_mib_max = 4096        # memory they may take (MiB, estimated)
//! transitions_max = 65536         # actions' changes kept; 0: fork for every action
//! stream = false                  # true: a read may get part of a write, or two
//! timeout_byte = false            # true: the manual's `T` (any read or accept may time out)
//! timeout_order = "any"           # "deadline": TIMEOUT wakes the earliest deadlines first
//! timeout_drift_s = 0             # deadline order: how far the nodes' clocks may disagree
//!                                 # (or timeout_drift_ms, in milliseconds)
//! crash_points = true             # false: a node crashes only at quiescence (the manual's)
//! data_dir = "data"               # the nodes' data directory, its files in the world
//! crash_states = "ext4"           # what a crash may leave of it: "ext4" or "prefix"
//! dir_order = "hash"              # a listing's order: "hash" (any) or "sorted"
//! node_state = "report"           # "inputs": also every answer of a node's life (tokio)
//! write_bytes_max = 64            # bytes of one write on a connection (and of a request)
//! log_dir = "logs"                # each node's stdout and stderr, node<i>.log
//! properties = "build/register_props.so"
//! invariants = ["acked_writes_survive"]
//! ```
//!
//! Invariants are C functions `int NAME(const struct cmc_view *)` in the
//! shared object `properties` names (see `cmc.h`); nonzero means it holds.
//!
//! Timeouts: by default a read, `recv` or `accept` times out only if the
//! program asked for it (`SO_RCVTIMEO`; the call fails with EAGAIN), as
//! on Linux, and so does every other wait with a deadline (a sleep, a
//! poll's timeout, a timerfd). `timeout_byte = true` is the manual's
//! convention, for programs written for it: a TIMEOUT may also end a read
//! or an accept that has no timeout, the read getting the byte `T`, the
//! accept a connection that carries one. `timeout_order = "deadline"`
//! lets a TIMEOUT end only the waits whose deadline is earliest, or at
//! most `timeout_drift_s` seconds later; the default, `"any"`, lets any
//! wait time out first (`docs/SEMANTICS.md`, "Timeouts").
//!
//! [`parse`] checks the text alone and touches no file, so any text is safe
//! to give it (the fuzz target `model_file` does); [`read`] reads the file,
//! parses it, then checks the program, the data directory and the preload
//! and loads the invariants.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use super::explore::{ProgramModel, ProgramProperty};
use super::view::CmcView;
use super::world::{CrashStates, DirOrder, NodeState, ProcessWorld, TimeoutOrder};
use super::{Budgets, Config, ProcessError, limits};
use crate::library::Library;
use crate::property::Kind;
use crate::search::{Options, Search};

/// What a model file may say. Unknown keys are errors.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    program: String,
    #[serde(default)]
    args: Vec<String>,
    argv: Option<Vec<String>>,
    // Counts are read wide and checked here, so that a value out of range
    // is an error naming its key and limit, not a type error.
    nodes: i64,
    #[serde(default)]
    crashes: i64,
    #[serde(default)]
    drops: i64,
    #[serde(default)]
    timeouts: i64,
    #[serde(default)]
    clients: i64,
    #[serde(default)]
    thread_switches: i64,
    #[serde(default)]
    request: String,
    #[serde(default)]
    requests: Vec<String>,
    #[serde(default)]
    search: Option<String>,
    depth_max: Option<u32>,
    walks: Option<u64>,
    walk_length: Option<u32>,
    seed: Option<u64>,
    states_max: Option<u64>,
    /// Node processes kept parked as snapshots; 0 rebuilds every world
    /// from the templates (the stateless path).
    snapshots_max: Option<u64>,
    /// The memory the snapshots may take, in MiB.
    snapshots_mib_max: Option<u64>,
    /// Changes of actions the transition cache keeps; 0 keeps none.
    transitions_max: Option<u64>,
    /// Connections are byte streams (reads may split or merge writes).
    #[serde(default)]
    stream: bool,
    /// The manual's `T` convention: any read or accept may time out.
    #[serde(default)]
    timeout_byte: bool,
    /// `any` or `deadline`: which waits a TIMEOUT may end first.
    timeout_order: Option<String>,
    /// Under deadline order, how far the nodes' clocks may disagree, in
    /// seconds or in milliseconds (one of the two).
    timeout_drift_s: Option<i64>,
    timeout_drift_ms: Option<i64>,
    /// A crash may fall between two calls of a node (the default); false:
    /// only at quiescence.
    #[serde(default = "yes")]
    crash_points: bool,
    /// The nodes' data directory: its files are part of the world.
    data_dir: Option<String>,
    /// What a crash may leave of it: "ext4" (the default) or "prefix".
    crash_states: Option<String>,
    dir_order: Option<String>,
    /// What a node's state is: "report" (the default) or "inputs".
    node_state: Option<String>,
    /// Bytes of one write on a connection (the manual's 64 by default).
    write_bytes_max: Option<u64>,
    /// Where each node's stdout and stderr go (`node<i>.log`); unset
    /// discards them.
    log_dir: Option<String>,
    #[serde(default)]
    det: bool,
    properties: Option<String>,
    #[serde(default)]
    invariants: Vec<String>,
}

/// A model file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// The file cannot be read.
    #[error("{path}: {message}")]
    Read {
        /// The model file.
        path: PathBuf,
        /// Why, as the system says.
        message: String,
    },
    /// The text is not TOML, or has an unknown key or a value of the wrong
    /// type.
    #[error("{path}: {message}")]
    Parse {
        /// The model file.
        path: PathBuf,
        /// The TOML reader's message, which names the line and the key.
        message: String,
    },
    /// A key's value cannot be used.
    #[error("{path}: key `{key}`: {message}")]
    Key {
        /// The model file.
        path: PathBuf,
        /// The key.
        key: &'static str,
        /// What is wrong with its value.
        message: String,
    },
}

/// A model file, read: the program model and how to search it.
pub struct ModelFile {
    /// The program as nodes, with the environment and the invariants.
    pub model: ProgramModel,
    /// The search, `states_max` and `det`.
    pub options: Options,
}

/// A model file's text, checked as far as it can be without the file
/// system: every key and type, the counts and budgets, the search, and
/// `properties` against `invariants`. Relative paths are joined to the
/// file's folder, but nothing is resolved, opened or loaded: that is
/// [`read`]'s, and so are the limits [`Config::validate`] checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The model's name: the file's stem.
    pub name: String,
    /// `program`, joined to the file's folder.
    pub program: PathBuf,
    /// `args`: the arguments after the node number.
    pub args: Vec<String>,
    /// `argv`: every argument after the program's name, in place of the
    /// node number and `args`.
    pub argv: Option<Vec<String>>,
    /// `nodes`, a `u8` (whether 1 to 8 is [`Config::validate`]'s).
    pub nodes: u8,
    /// `crashes`, `drops`, `timeouts` and `clients`.
    pub budgets: Budgets,
    /// `request`, as bytes.
    pub request: Vec<u8>,
    /// `requests`, each as bytes.
    pub requests: Vec<Vec<u8>>,
    /// `snapshots_max`, if set.
    pub snapshots_max: Option<usize>,
    /// `snapshots_mib_max`, if set.
    pub snapshots_mib_max: Option<u64>,
    /// `transitions_max`, if set.
    pub transitions_max: Option<usize>,
    /// `stream`.
    pub stream: bool,
    /// `timeout_byte`.
    pub timeout_byte: bool,
    /// `timeout_order` and `timeout_drift_s`.
    pub timeout_order: TimeoutOrder,
    /// `crash_points`.
    pub crash_points: bool,
    /// `data_dir`, joined to the file's folder (not yet resolved).
    pub data_dir: Option<PathBuf>,
    /// `crash_states`: ext4's (the default) or the manual's prefixes.
    pub crash_states: CrashStates,
    /// `dir_order`: any order a file system's hash may give (the
    /// default), or sorted.
    pub dir_order: DirOrder,
    /// `node_state`: what a node reports (the default), or that and every
    /// answer of its life.
    pub node_state: NodeState,
    /// `write_bytes_max`, if the file sets it.
    pub write_bytes_max: Option<usize>,
    /// `log_dir`, joined to the file's folder.
    pub log_dir: Option<PathBuf>,
    /// `properties` (joined to the file's folder) and `invariants`, if
    /// the file names any.
    pub properties: Option<(PathBuf, Vec<String>)>,
    /// The search, `states_max` and `det`.
    pub options: Options,
}

/// Reads the model file at `path`. Relative paths in it are relative to
/// the file's folder.
pub fn read(path: &Path) -> Result<ModelFile, ModelFileError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ModelFileError::Read { path: path.to_path_buf(), message: e.to_string() })?;
    let parsed = parse(&text, path)?;
    let key = |key: &'static str, message: String| ModelFileError::Key { path: path.to_path_buf(), key, message };
    if !parsed.program.is_file() {
        return Err(key("program", format!("{} is not a file", parsed.program.display())));
    }
    let mut config = Config::new(&parsed.program, parsed.nodes);
    config.args = parsed.args;
    config.argv = parsed.argv;
    config.budgets = parsed.budgets;
    config.request = parsed.request;
    config.requests = parsed.requests;
    if let Some(m) = parsed.snapshots_max {
        config.snapshots_max = m;
    }
    if let Some(m) = parsed.snapshots_mib_max {
        config.snapshots_mib_max = m;
    }
    config.stream = parsed.stream;
    config.timeout_byte = parsed.timeout_byte;
    config.timeout_order = parsed.timeout_order;
    config.crash_points = parsed.crash_points;
    config.crash_states = parsed.crash_states;
    config.dir_order = parsed.dir_order;
    config.node_state = parsed.node_state;
    if let Some(m) = parsed.write_bytes_max {
        config.write_bytes_max = m;
    }
    config.c_view = parsed.properties.is_some();
    if let Some(d) = &parsed.data_dir {
        let dir = std::fs::canonicalize(d).map_err(|e| key("data_dir", format!("{}: {e}", d.display())))?;
        if !dir.is_dir() {
            return Err(key("data_dir", format!("{} is not a directory", dir.display())));
        }
        config.data_dir = Some(dir);
    }
    if let Some(m) = parsed.transitions_max {
        config.transitions_max = m;
    }
    config.log_dir = parsed.log_dir;
    config.validate().map_err(|e| match e {
        ProcessError::Config { key: k, reason } => key(k, reason),
        e => key("program", e.to_string()),
    })?;

    let mut model = ProgramModel::new(parsed.name, config);
    model.model_file = Some(path.display().to_string());
    if let Some((so, invariants)) = &parsed.properties {
        let library = Arc::new(Library::open(so).map_err(|m| key("properties", m))?);
        for name in invariants {
            let f = library.symbol(name, "function").map_err(|m| key("invariants", m))?;
            // SAFETY: cmc.h declares every invariant as `int NAME(const
            // struct cmc_view *)`; a symbol of that name is taken to be one.
            let f = unsafe { std::mem::transmute::<*mut std::ffi::c_void, Predicate>(f) };
            let lib = Arc::clone(&library);
            model.properties.push(ProgramProperty {
                name: name.clone(),
                kind: Kind::Always,
                predicate: Box::new(move |w: &ProcessWorld| {
                    let _keep_loaded = &lib;
                    let view = CmcView::of(w);
                    // SAFETY: `f` was found in the library, which `lib`
                    // keeps loaded, under the signature cmc.h declares:
                    // `int NAME(const struct cmc_view *)`; the view is a
                    // complete, initialised `struct cmc_view`.
                    unsafe { f(&*view) != 0 }
                }),
            });
        }
    }
    Ok(ModelFile { model, options: parsed.options })
}

/// Checks the text of the model file at `path` (named in errors; relative
/// paths in the text are joined to its folder) without touching the file
/// system: no file is read, resolved or loaded, so any text is safe here.
pub fn parse(text: &str, path: &Path) -> Result<Parsed, ModelFileError> {
    let raw: Raw = toml::from_str(text)
        .map_err(|e| ModelFileError::Parse { path: path.to_path_buf(), message: e.to_string().trim().to_string() })?;
    let key = |key: &'static str, message: String| ModelFileError::Key { path: path.to_path_buf(), key, message };
    let dir = path.parent().unwrap_or(Path::new("."));
    // `Config::validate` checks 1 to 8; this, that it is a u8 at all.
    let nodes = u8::try_from(raw.nodes)
        .map_err(|_| key("nodes", format!("{} nodes (limit nodes_max = {})", raw.nodes, limits::NODES_MAX)))?;
    let budget = |k: &'static str, v: i64| {
        u8::try_from(v)
            .map_err(|_| key(k, format!("{v} is not 0 to {m} (limit budget_max = {m})", m = limits::BUDGET_MAX)))
    };
    let budgets = Budgets {
        crashes: budget("crashes", raw.crashes)?,
        drops: budget("drops", raw.drops)?,
        timeouts: budget("timeouts", raw.timeouts)?,
        clients: budget("clients", raw.clients)?,
        thread_switches: budget("thread_switches", raw.thread_switches)?,
    };
    let drift = match (raw.timeout_drift_s, raw.timeout_drift_ms) {
        (Some(_), Some(_)) => {
            return Err(key("timeout_drift_ms", "give timeout_drift_s or timeout_drift_ms, not both".into()));
        }
        (Some(s), None) => Some((
            "timeout_drift_s",
            u32::try_from(s).map_err(|_| key("timeout_drift_s", format!("{s} is not 0 to {}", u32::MAX)))? as u64
                * 1000,
        )),
        (None, Some(ms)) => Some((
            "timeout_drift_ms",
            u64::try_from(ms).map_err(|_| key("timeout_drift_ms", format!("{ms} is not 0 or more")))?,
        )),
        (None, None) => None,
    };
    let timeout_order = match (raw.timeout_order.as_deref(), drift) {
        (None | Some("any"), None) => TimeoutOrder::Any,
        (None | Some("any"), Some((name, _))) => {
            return Err(key(name, "applies to timeout_order = \"deadline\" only".into()));
        }
        (Some("deadline"), drift) => TimeoutOrder::Deadline { drift_ms: drift.map_or(0, |(_, ms)| ms) },
        (Some(other), _) => return Err(key("timeout_order", format!("`{other}` (expected any or deadline)"))),
    };
    let too_large = |k: &'static str, m: u64| usize::try_from(m).map_err(|_| key(k, format!("{m} is too large")));
    let snapshots_max = raw.snapshots_max.map(|m| too_large("snapshots_max", m)).transpose()?;
    let transitions_max = raw.transitions_max.map(|m| too_large("transitions_max", m)).transpose()?;
    let write_bytes_max = raw.write_bytes_max.map(|m| too_large("write_bytes_max", m)).transpose()?;
    let crash_states = match &raw.crash_states {
        None => CrashStates::default(),
        Some(s) => s.parse().map_err(|m| key("crash_states", m))?,
    };
    let dir_order = match &raw.dir_order {
        None => DirOrder::default(),
        Some(s) => s.parse().map_err(|m| key("dir_order", m))?,
    };
    let node_state = match &raw.node_state {
        None => NodeState::default(),
        Some(s) => s.parse().map_err(|m| key("node_state", m))?,
    };

    let keys = SearchKeys {
        search: raw.search.as_deref(),
        depth_max: raw.depth_max,
        walks: raw.walks,
        walk_length: raw.walk_length,
        seed: raw.seed,
    };
    let search = keys.search(100, 20).map_err(|(k, m)| key(k, m))?;
    let options = Options { search, states_max: raw.states_max, det: raw.det, ..Options::default() };

    let properties = match (raw.properties, raw.invariants.is_empty()) {
        (None, true) => None,
        (None, false) => return Err(key("invariants", "invariants need `properties`, the shared object".into())),
        (Some(_), true) => return Err(key("invariants", "`properties` names a shared object but no invariant".into())),
        (Some(so), false) => Some((dir.join(so), raw.invariants)),
    };
    Ok(Parsed {
        name: path.file_stem().map_or("model".to_string(), |s| s.to_string_lossy().into_owned()),
        program: dir.join(raw.program),
        args: raw.args,
        argv: raw.argv,
        nodes,
        budgets,
        request: raw.request.into_bytes(),
        requests: raw.requests.into_iter().map(String::into_bytes).collect(),
        snapshots_max,
        snapshots_mib_max: raw.snapshots_mib_max,
        transitions_max,
        stream: raw.stream,
        timeout_byte: raw.timeout_byte,
        timeout_order,
        crash_points: raw.crash_points,
        data_dir: raw.data_dir.map(|d| dir.join(d)),
        crash_states,
        dir_order,
        node_state,
        write_bytes_max,
        log_dir: raw.log_dir.map(|d| dir.join(d)),
        properties,
        options,
    })
}

/// A model file's search keys, read alike for programs and C cores.
pub(crate) struct SearchKeys<'a> {
    pub(crate) search: Option<&'a str>,
    pub(crate) depth_max: Option<u32>,
    pub(crate) walks: Option<u64>,
    pub(crate) walk_length: Option<u32>,
    pub(crate) seed: Option<u64>,
}

impl SearchKeys<'_> {
    /// The search they give, with these simulation defaults; an error
    /// names the key.
    pub(crate) fn search(&self, walks: u64, walk_length: u32) -> Result<Search, (&'static str, String)> {
        let search = match self.search.unwrap_or("bfs") {
            "bfs" => Search::Bfs { depth_max: self.depth_max },
            "dfs" => Search::Dfs {
                depth_max: self.depth_max.ok_or(("depth_max", "search = \"dfs\" needs depth_max".to_string()))?,
            },
            "simulate" => {
                if self.depth_max.is_some() {
                    return Err(("depth_max", "a simulation is bounded by walk_length, not depth_max".into()));
                }
                Search::Simulate {
                    walks: self.walks.unwrap_or(walks),
                    walk_length: self.walk_length.unwrap_or(walk_length),
                    seed: self.seed.unwrap_or(0),
                }
            }
            other => return Err(("search", format!("`{other}` (expected bfs, dfs or simulate)"))),
        };
        if !matches!(search, Search::Simulate { .. }) {
            for (k, set) in [
                ("walks", self.walks.is_some()),
                ("walk_length", self.walk_length.is_some()),
                ("seed", self.seed.is_some()),
            ] {
                if set {
                    return Err((k, "applies to search = \"simulate\" only".into()));
                }
            }
        }
        Ok(search)
    }
}

type Predicate = unsafe extern "C" fn(*const CmcView) -> i32;

/// `crash_points`'s default.
fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{ModelFileError, TimeoutOrder, parse};
    use crate::process::{Config, CrashStates, DirOrder, NodeState, ProcessError};
    use crate::search::Search;

    #[test]
    fn parse_joins_paths_to_the_files_folder_and_opens_none() {
        let text = "program = \"nope\"\nnodes = 3\ncrashes = 1\ndata_dir = \"data\"\nlog_dir = \"/tmp/logs\"\n\
                    properties = \"p.so\"\ninvariants = [\"a\", \"b\"]\n";
        let p = parse(text, Path::new("dir/m.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name, "m");
        assert_eq!(p.program, PathBuf::from("dir/nope"));
        assert_eq!((p.nodes, p.budgets.crashes), (3, 1));
        assert_eq!(p.data_dir, Some(PathBuf::from("dir/data")));
        assert_eq!(p.log_dir, Some(PathBuf::from("/tmp/logs")));
        assert_eq!(p.properties, Some((PathBuf::from("dir/p.so"), vec!["a".to_string(), "b".to_string()])));
        assert_eq!(p.options.search, Search::Bfs { depth_max: None });
        // Linux's timeouts, in any order, unless the file says otherwise.
        assert!(!p.timeout_byte);
        assert_eq!(p.timeout_order, TimeoutOrder::Any);
        assert_eq!(p.crash_states, CrashStates::Ext4, "ext4's crash states unless the file says otherwise");
        let p = parse("program = \"p\"\nnodes = 1\ncrash_states = \"prefix\"\n", Path::new("m.toml"));
        assert_eq!(p.map(|p| p.crash_states).ok(), Some(CrashStates::Prefix));
        let p = parse("program = \"p\"\nnodes = 1\n", Path::new("m.toml"));
        assert_eq!(p.map(|p| p.dir_order).ok(), Some(DirOrder::Hash), "any order unless the file says otherwise");
        let p = parse("program = \"p\"\nnodes = 1\ndir_order = \"sorted\"\n", Path::new("m.toml"));
        assert_eq!(p.map(|p| p.dir_order).ok(), Some(DirOrder::Sorted));
        let p = parse("program = \"p\"\nnodes = 1\n", Path::new("m.toml"));
        assert_eq!(p.map(|p| p.node_state).ok(), Some(NodeState::Report), "the manual's state unless the file says");
        let p = parse("program = \"p\"\nnodes = 1\nnode_state = \"inputs\"\n", Path::new("m.toml"));
        assert_eq!(p.map(|p| p.node_state).ok(), Some(NodeState::Inputs));
    }

    #[test]
    fn parse_reads_the_timeout_keys() {
        let text = "program = \"p\"\nnodes = 2\ntimeout_byte = true\ntimeout_order = \"deadline\"\n";
        let p = parse(text, Path::new("m.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.timeout_byte);
        assert_eq!(p.timeout_order, TimeoutOrder::Deadline { drift_ms: 0 });
        let p = parse(&format!("{text}timeout_drift_s = 3\n"), Path::new("m.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.timeout_order, TimeoutOrder::Deadline { drift_ms: 3000 });
        let p = parse(&format!("{text}timeout_drift_ms = 4\n"), Path::new("m.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.timeout_order, TimeoutOrder::Deadline { drift_ms: 4 });
        let p = parse("program = \"p\"\nnodes = 2\ntimeout_order = \"any\"\n", Path::new("m.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.timeout_order, TimeoutOrder::Any);
    }

    #[test]
    fn parse_errors_name_the_key_and_the_file() {
        for (text, expected) in [
            ("program = \"p\"\nnodes = 300\n", "nodes"),
            ("program = \"p\"\nnodes = 1\ndrops = -1\n", "drops"),
            ("program = \"p\"\nnodes = 1\nsearch = \"dfs\"\n", "depth_max"),
            ("program = \"p\"\nnodes = 1\nseed = 3\n", "seed"),
            ("program = \"p\"\nnodes = 1\ninvariants = [\"a\"]\n", "invariants"),
            ("program = \"p\"\nnodes = 1\ntimeout_order = \"earliest\"\n", "timeout_order"),
            ("program = \"p\"\nnodes = 1\ntimeout_drift_s = 1\n", "timeout_drift_s"),
            ("program = \"p\"\nnodes = 1\ntimeout_order = \"deadline\"\ntimeout_drift_s = -1\n", "timeout_drift_s"),
            ("program = \"p\"\nnodes = 1\ntimeout_drift_ms = 1\n", "timeout_drift_ms"),
            ("program = \"p\"\nnodes = 1\ntimeout_order = \"deadline\"\ntimeout_drift_ms = -1\n", "timeout_drift_ms"),
            (
                "program = \"p\"\nnodes = 1\ntimeout_order = \"deadline\"\ntimeout_drift_s = 1\ntimeout_drift_ms = 1\n",
                "timeout_drift_ms",
            ),
            ("program = \"p\"\nnodes = 1\ncrash_states = \"xfs\"\n", "crash_states"),
            ("program = \"p\"\nnodes = 1\nnode_state = \"memory\"\n", "node_state"),
            ("program = \"p\"\nnodes = 1\ndir_order = \"inode\"\n", "dir_order"),
        ] {
            let err = parse(text, Path::new("m.toml")).err().unwrap_or_else(|| panic!("{text}: accepted"));
            assert!(matches!(&err, ModelFileError::Key { key, .. } if *key == expected), "{text}: {err}");
            assert!(err.to_string().starts_with("m.toml: "), "{err}");
        }
        let err = parse("program = [", Path::new("m.toml")).expect_err("rejected");
        assert!(matches!(err, ModelFileError::Parse { .. }), "{err}");
    }

    /// `requests`: an entry per client, each within the write limit, and
    /// not beside `request`; a node's k-th CLIENT sends entry k.
    #[test]
    fn requests_need_an_entry_per_client_and_no_request_beside_them() {
        let parsed =
            parse("program = \"p\"\nnodes = 1\nclients = 2\nrequests = [\"A1\", \"A2\"]\n", Path::new("m.toml"))
                .expect("parsed");
        assert_eq!(parsed.requests, [b"A1".to_vec(), b"A2".to_vec()]);
        let mut c = Config::new("/nonexistent", 1);
        c.budgets.clients = 2;
        c.requests = vec![b"A1".to_vec(), b"A2".to_vec()];
        assert_eq!((c.request_of(0), c.request_of(1)), (&b"A1"[..], &b"A2"[..]));
        let key = |c: &Config| match c.validate() {
            Err(ProcessError::Config { key, reason }) => format!("{key}: {reason}"),
            other => format!("{other:?}"),
        };
        let mut few = c.clone();
        few.requests.pop();
        assert!(key(&few).starts_with("requests: 1 entries for 2 clients"), "{}", key(&few));
        let mut both = c.clone();
        both.request = b"W".to_vec();
        assert!(key(&both).starts_with("requests: both"), "{}", key(&both));
        let mut long = c.clone();
        long.requests[1] = vec![b'x'; 65];
        assert!(key(&long).starts_with("requests: entry 1: 65 bytes"), "{}", key(&long));
    }
}

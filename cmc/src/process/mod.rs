//! The process front end (Linux x86-64): unmodified C programs as nodes,
//! one process per node, under seccomp user notification and
//! `cmc-preload.so` (manual, "Programs as nodes"; DESIGN 6;
//! `../shared/research/process-frontend.md`).
//!
//! It owns processes, their system calls and the world they make: the
//! [`supervisor`] starts the nodes (`lives`, over [`spawn`], [`forkserver`]
//! and [`filter`]), answers every modelled call itself (the table and the
//! handlers by family in `calls`, over [`notif`]) and detects quiescence;
//! [`world`] is the canonical state it builds; [`action`] lists what can
//! happen next from a world alone ([`crash_states`]: what a crash may leave
//! of a data directory); [`engine`] puts them together with the
//! in-process engine's shape (initial world, enabled actions, apply by
//! stateless replay, fingerprint). [`view`] is the `struct cmc_view` of
//! `cmc.h`. [`preload`] holds the preload library, compiled by `build.rs`
//! and embedded, and writes it to a per-user cache for `LD_PRELOAD`;
//! [`find_preload`] picks it unless `$CMC_PRELOAD` names another.
//!
//! [`explore`] makes a [`ProgramModel`] (program, environment, properties)
//! a state graph for the shared searches; `model_file` reads one from TOML.

pub mod action;
mod calls;
pub mod crash_states;
mod dir_order;
pub mod engine;
pub mod explore;
pub mod filter;
pub mod forkserver;
mod lives;
pub mod model_file;
pub mod notif;
pub mod preload;
pub mod snapshot;
pub mod spawn;
pub mod start;
mod starting;
pub mod supervisor;
pub mod syscalls;
pub mod tcp;
mod thread_forks;
mod threads;
pub mod transitions;
pub mod view;
pub mod world;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::errno::Errno;

pub use action::{BadProcessAction, Part, ProcessAction};
pub use crash_states::Keep;
pub use engine::{ProcessEngine, Stats};
pub use explore::{NO_NODE_KILLED, PathWorld, ProcessExplorer, ProcessStep, ProgramModel, ProgramProperty};
pub use view::CmcView;
pub use world::{
    Blocked, Conn, ConnKind, CrashStates, DirOrder, End, Label, Life, NodeState, NodeWorld, ProcessWorld, Side,
    TimeoutOrder, Trail, VFd,
};

/// The limits of the process front end (manual, LIMITS). Crossing one is an
/// error naming it, never a truncation.
pub mod limits {
    /// Nodes in a model.
    pub const NODES_MAX: usize = 8;
    /// Reads of a clock by the nodes, over a path: each adds a nanosecond
    /// to what the clocks say after it (`ProcessWorld::clock_reads`), so
    /// what they say stays within a millisecond of the logical clock.
    pub const CLOCK_READS_MAX: usize = 999_999;
    /// Bytes in one write on a connection (and in the client request):
    /// the manual's, the default of [`Config::write_bytes_max`](super::Config::write_bytes_max).
    pub const WRITE_BYTES_MAX: usize = 64;
    /// The largest [`Config::write_bytes_max`](super::Config::write_bytes_max)
    /// a model may set.
    pub const WRITE_BYTES_LIMIT: usize = 65_536;
    /// Bytes of a reply that a C invariant's view holds (`CMC_WRITE_MAX`
    /// in `cmc.h`, `struct cmc_reply`).
    pub const VIEW_REPLY_BYTES_MAX: usize = 64;
    /// Messages in flight over all connections.
    pub const MESSAGES_IN_FLIGHT_MAX: usize = 128;
    /// Open connection ends per node.
    pub const CONNECTIONS_PER_NODE_MAX: usize = 16;
    /// Replies in the ghost log.
    pub const REPLIES_MAX: usize = 64;
    /// Bytes of one file of a node's data directory.
    pub const DATA_FILE_BYTES_MAX: usize = 4096;
    /// Files (names) in a node's data directory.
    pub const DATA_FILES_MAX: usize = 16;
    /// Changes of a node's data directory not yet durable.
    pub const DATA_PENDING_MAX: usize = 64;
    /// States a crash of one node may leave of its data directory
    /// (`crash_states::count`: each is a CRASH to try, and a new life).
    pub const CRASH_STATES_MAX: usize = 1024;
    /// Bytes of one state or durable record.
    pub const STATE_BYTES_MAX: usize = 64;
    /// Pipes, socketpairs and eventfds a node holds an end of.
    pub const LOCAL_OBJECTS_PER_NODE_MAX: usize = 16;
    /// Bytes buffered in one pipe, or toward one end of a socketpair: a
    /// page, as a data file. The kernel's pipe holds 16 pages and its
    /// socket 278 small writes (`net.core.wmem_default`, 212,992 bytes),
    /// so within this and [`LOCAL_MESSAGES_MAX`] a write never waits for
    /// room, on Linux as in the model.
    pub const LOCAL_BYTES_MAX: usize = 4096;
    /// Writes buffered toward one end of a socketpair (each is a buffer
    /// of the kernel's, about 768 bytes of the socket's room whatever its
    /// length).
    pub const LOCAL_MESSAGES_MAX: usize = 64;
    /// Calls that do not wait (a read, an accept, a poll or an observation
    /// with something on its way, or that may come: `Blocked::ReadNow`,
    /// `AcceptNow`, `LookNow`, a `Woken` wait that did not wait; not
    /// `WriteNow`, whose writes are
    /// bounded by the messages in flight) held in one step of a node, the
    /// node never waiting between: each may find the process with
    /// other memory (a count of its EAGAINs), so each is a world of its
    /// own (`Trail`), and a node that spins on such calls would make
    /// worlds without end.
    pub const HOLDS_PER_STEP_MAX: usize = 16;
    /// The ways the names a listing of a data directory shows first may
    /// fall among those shown before (`dir_order`: `.`, `..` and five
    /// names at once, the first time, are 5,040).
    pub const DIR_ORDERS_MAX: usize = 5040;
    /// The names a node's listings of its data directory may show over a
    /// search, names gone since included (`Disk::order`).
    pub const LISTED_NAMES_MAX: usize = 64;
    /// Every budget, and every per-node counter (connects, timer
    /// connections).
    pub const BUDGET_MAX: usize = 255;
}

/// How long a node may stay silent in a call the checker does not model
/// before that is an error (manual, LIMITS).
pub const STALL_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);

/// How long the supervisor waits for its nodes, at most, before it checks
/// the search's request to stop ([`Config::stop`]) again: a stop is
/// answered within this, however long a node takes to reach quiescence.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// Node i listens on 127.0.0.1, port `PORT_BASE + i`.
pub const PORT_BASE: u16 = 20000;

// Budgets and the per-node counters are `u8`: the type holds exactly
// `BUDGET_MAX`, so a budget over it cannot be configured (a model file
// reads them wider and names the key; `model_file`).
const _: () = assert!(limits::BUDGET_MAX == u8::MAX as usize);
// An object inside a node is numbered by a `u8` in its descriptors.
const _: () = assert!(limits::LOCAL_OBJECTS_PER_NODE_MAX <= u8::MAX as usize);

/// What the environment may do, at most, on one path. Each budget is at
/// most [`limits::BUDGET_MAX`], which its type enforces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budgets {
    /// Crashes (CRASH), over all nodes. Default 0.
    pub crashes: u8,
    /// Messages lost (DROP), over all connections. Default 0.
    pub drops: u8,
    /// Waits ended by their deadline (TIMEOUT), over all nodes: each
    /// moves the logical clock. Default 0: no wait times out, except one
    /// whose deadline the clock has passed already.
    pub timeouts: u8,
    /// Client connections per node.
    pub clients: u8,
    /// Choices of a node's next thread other than the fixed one (SWITCH),
    /// over all nodes. Default 0: a node's threads run in the fixed order
    /// (docs/SEMANTICS.md, "Threads").
    pub thread_switches: u8,
}

/// What to run: the program, how many nodes, the environment.
#[derive(Clone, Debug)]
pub struct Config {
    /// The program every node runs: an x86-64 ELF executable, dynamically
    /// linked ([`Config::validate`] checks).
    pub program: PathBuf,
    /// Arguments after the node number.
    pub args: Vec<String>,
    /// When set, node i's arguments after the program's name, in place of
    /// `i ARGS...`: each with `{node}` replaced by i and `{port}` by its
    /// port ([`Config::argv_of`]), for a server that takes `--port N`.
    /// Not with `args`.
    pub argv: Option<Vec<String>>,
    /// The number of nodes, 1 to [`limits::NODES_MAX`]; node i runs
    /// `PROGRAM i ARGS...` and listens on port [`PORT_BASE`] + i.
    pub nodes: u8,
    /// What the environment may do on one path.
    pub budgets: Budgets,
    /// The bytes a client sends on a CLIENT connection (nothing: it
    /// only connects), unless [`Config::requests`] lists them.
    pub request: Vec<u8>,
    /// When not empty, the bytes each client sends: a node's k-th CLIENT
    /// sends entry k (from 0), and there is an entry per client
    /// ([`Config::validate`]); [`Config::request`] is then empty.
    pub requests: Vec<Vec<u8>>,
    /// The preload library: [`find_preload`]'s, or `None` where it found
    /// none (then [`Config::validate`] reports why). A `None` set on
    /// purpose starts the nodes without it, which the supervisor reports
    /// as an error (kept for the test that shows it).
    pub preload: Option<PathBuf>,
    /// See [`STALL_TIMEOUT_DEFAULT`].
    pub stall_timeout: Duration,
    /// Where each node's stdout and stderr go (`node<i>.log`, truncated at
    /// each start of a replay); `None` discards them.
    pub log_dir: Option<PathBuf>,
    /// The nodes' working directory; `None` is the checker's.
    pub workdir: Option<PathBuf>,
    /// Pin the supervisor's thread to the CPU its nodes run on: a
    /// cross-CPU round trip costs about 100 µs against 8 µs (research,
    /// pitfall 24). The nodes are pinned whatever this says, to one CPU
    /// chosen by the program and its arguments, so that what they read of
    /// the CPU they run on is the same on every run.
    pub pin_cpu: bool,
    /// Node processes kept parked as snapshots (checkpoints); 0 keeps none,
    /// so every world is rebuilt from the templates by replaying its
    /// actions (the stateless path).
    pub snapshots_max: usize,
    /// The memory the parked snapshots may take, in MiB, as estimated
    /// from sampled snapshots' proportional set size and page tables
    /// (`snapshot::Store`); past it the least recently used are evicted.
    pub snapshots_mib_max: u64,
    /// A directory the nodes see as their data directory (`calls::disk`):
    /// its files are the world's, one directory per node, empty at the
    /// start; the real directory must exist and is never changed.
    pub data_dir: Option<PathBuf>,
    /// Connections are byte streams: a read may get the first bytes of a
    /// message, or two messages merged (bounded: see `action`). Off, every
    /// read gets one whole write.
    pub stream: bool,
    /// The manual's `T` convention (`timeout_byte` in a model file): a
    /// TIMEOUT may also end a read or an accept that has no timeout of
    /// its own, the read getting the byte `T`, the accept a connection
    /// that carries one. Off, the default, a read, `recv` or `accept`
    /// times out only if the program asked for it (`SO_RCVTIMEO`), as on
    /// Linux.
    pub timeout_byte: bool,
    /// Which waits a TIMEOUT may end first (`timeout_order` and
    /// `timeout_drift_s` in a model file): any (the default), or the one
    /// whose deadline is earliest, within a drift.
    pub timeout_order: TimeoutOrder,
    /// A crash may fall between two calls of a node (`crash_points` in a
    /// model file, on by default): after any call with an effect outside
    /// the process (a write on a connection, a record on fd 3 or 193, a
    /// change of its data directory, a connect or a close), while crash
    /// budget is left, the node is held and CRASH and RUN are the actions.
    /// Off, as the manual has it, a node crashes only at quiescence.
    pub crash_points: bool,
    /// Which states a crash may leave of a data directory: ext4's (the
    /// default) or the manual's prefixes of the pending changes
    /// ([`crash_states`]).
    pub crash_states: CrashStates,
    /// In which order a listing of a data directory gives its names: any
    /// the file system's hash may give (the default), or sorted.
    pub dir_order: DirOrder,
    /// Bytes in one write on a connection, and in a client's request, 1
    /// to [`limits::WRITE_BYTES_LIMIT`] (`write_bytes_max` in a model
    /// file); the manual's 64 by default. A longer write is an error
    /// naming the limit.
    pub write_bytes_max: usize,
    /// The model's properties read `struct cmc_view` (C invariants; set by
    /// [`model_file::read`] when it loads them), whose replies hold
    /// [`limits::VIEW_REPLY_BYTES_MAX`] bytes: a longer reply is an error
    /// naming that limit, never a truncated view.
    pub c_view: bool,
    /// What a node's state is: what it reports (the default, the
    /// manual's), or that and a digest of every answer of its life
    /// (`node_state = "inputs"`), for a program that keeps in memory what
    /// it does not report (tokio's timers).
    pub node_state: NodeState,
    /// Changes of actions kept by the transition cache (`transitions`), so
    /// that an action seen before in the same local state forks no
    /// process; 0 keeps none.
    pub transitions_max: usize,
    /// The running search's request to stop, which the engine checks before
    /// every action and the supervisor while it waits for nodes. Set by the
    /// search ([`crate::Explore::watch`]), never by a model: every engine
    /// gives its copy of a model's configuration a slot of its own.
    pub stop: StopSlot,
}

/// Where a search puts its [`Stop`](crate::Stop) for the process front
/// end: shared by an engine and its supervisor, which holds a copy of the
/// engine's [`Config`], so that a stop set or cleared after the supervisor
/// started reaches it.
#[derive(Clone, Debug, Default)]
pub struct StopSlot(Arc<Mutex<Option<crate::Stop>>>);

impl StopSlot {
    /// Puts `stop` in the slot (`None` empties it).
    pub fn set(&self, stop: Option<crate::Stop>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = stop;
    }

    /// Why the search should stop, once it should.
    pub fn requested(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref()?.requested()
    }
}

impl Config {
    /// `nodes` copies of `program` with no budgets, the preload found by
    /// [`find_preload`], the default stall timeout and logs discarded.
    pub fn new(program: impl Into<PathBuf>, nodes: u8) -> Config {
        Config {
            program: program.into(),
            args: Vec::new(),
            nodes,
            budgets: Budgets::default(),
            request: Vec::new(),
            requests: Vec::new(),
            argv: None,
            preload: find_preload().ok(),
            stall_timeout: STALL_TIMEOUT_DEFAULT,
            log_dir: None,
            workdir: None,
            pin_cpu: true,
            snapshots_max: snapshot::SNAPSHOTS_MAX_DEFAULT,
            snapshots_mib_max: snapshot::SNAPSHOTS_MIB_MAX_DEFAULT,
            transitions_max: transitions::TRANSITIONS_MAX_DEFAULT,
            stream: false,
            timeout_byte: false,
            timeout_order: TimeoutOrder::Any,
            crash_points: true,
            crash_states: CrashStates::default(),
            dir_order: DirOrder::default(),
            node_state: NodeState::default(),
            write_bytes_max: limits::WRITE_BYTES_MAX,
            c_view: false,
            data_dir: None,
            stop: StopSlot::default(),
        }
    }

    /// Why the running search should stop, once it should (see
    /// [`Config::stop`]): what the supervisor checks at least every
    /// [`STOP_POLL`] while it waits for nodes.
    pub fn stop_requested(&self) -> Option<String> {
        self.stop.requested()
    }

    /// Node `n`'s arguments after the program's name: `n` and `args`, or
    /// `argv` with `{node}` and `{port}` replaced.
    pub fn argv_of(&self, n: u8) -> Vec<String> {
        match &self.argv {
            None => std::iter::once(n.to_string()).chain(self.args.iter().cloned()).collect(),
            Some(argv) => argv
                .iter()
                .map(|a| a.replace("{node}", &n.to_string()).replace("{port}", &(PORT_BASE + n as u16).to_string()))
                .collect(),
        }
    }

    /// What a node's `k`-th CLIENT (from 0) sends.
    pub fn request_of(&self, k: u8) -> &[u8] {
        self.requests.get(k as usize).map_or(&self.request, |r| r)
    }

    /// Checks every limit and file before anything starts.
    pub fn validate(&self) -> Result<(), ProcessError> {
        let bad = |key: &'static str, reason: String| Err(ProcessError::Config { key, reason });
        if self.nodes == 0 || self.nodes as usize > limits::NODES_MAX {
            return bad("nodes", format!("{} nodes (limit nodes_max = {})", self.nodes, limits::NODES_MAX));
        }
        let max = self.write_bytes_max;
        if !(1..=limits::WRITE_BYTES_LIMIT).contains(&max) {
            return bad("write_bytes_max", format!("{max} is not 1 to {}", limits::WRITE_BYTES_LIMIT));
        }
        if self.request.len() > max {
            return bad("request", format!("{} bytes (limit write_bytes_max = {max})", self.request.len()));
        }
        if let Some((k, r)) = self.requests.iter().enumerate().find(|(_, r)| r.len() > max) {
            return bad("requests", format!("entry {k}: {} bytes (limit write_bytes_max = {max})", r.len()));
        }
        if self.argv.is_some() && !self.args.is_empty() {
            return bad("argv", "both `args` and `argv` are set: `argv` is the whole list, give one".into());
        }
        if !self.requests.is_empty() && !self.request.is_empty() {
            return bad("requests", "both `request` and `requests` are set: give one".into());
        }
        if !self.requests.is_empty() && self.requests.len() < self.budgets.clients as usize {
            return bad(
                "requests",
                format!(
                    "{} entries for {} clients per node: a node's k-th CLIENT sends entry k",
                    self.requests.len(),
                    self.budgets.clients
                ),
            );
        }
        check_program(&self.program)?;
        match &self.preload {
            Some(p) if !p.is_file() => {
                return Err(ProcessError::Preload { path: p.clone(), reason: "no such file".to_string() });
            }
            Some(_) => {}
            // Either what `Config::new` left when no preload could be
            // found, and then this says why, or a run without it on
            // purpose.
            None => {
                find_preload()?;
            }
        }
        Ok(())
    }
}

/// The preload library the nodes run with: `$CMC_PRELOAD` if set and not
/// empty (a user's own build), else the one embedded in this library,
/// written out on the first call ([`preload::path`]).
pub fn find_preload() -> Result<PathBuf, ProcessError> {
    match std::env::var_os("CMC_PRELOAD") {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => Ok(preload::path()?.to_path_buf()),
    }
}

/// A target must be an x86-64 ELF executable, dynamically linked (else
/// the preload never loads): built `-no-pie`, or position-independent
/// (PIE, the default of Debian's gcc and of rustc), which loads at one
/// fixed address too, since every node runs with ASLR off (measured:
/// `a_position_independent_program_has_the_same_addresses_on_every_run`).
fn check_program(path: &Path) -> Result<(), ProcessError> {
    let bad = |reason: &str| Err(ProcessError::Program { path: path.to_path_buf(), reason: reason.to_string() });
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return bad(&e.to_string()),
    };
    if bytes.len() < 64 || bytes[..4] != *b"\x7fELF" || bytes[4] != 2 {
        return bad("not a 64-bit ELF file");
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    if u16_at(18) != 62 {
        return bad("not an x86-64 program");
    }
    // ET_EXEC (-no-pie) or ET_DYN (a PIE executable, or a shared library,
    // which has no interpreter and is refused below).
    if !matches!(u16_at(16), 2 | 3) {
        return bad("not an executable (ELF type is neither EXEC nor DYN)");
    }
    let (phoff, phentsize, phnum) = (u64_at(32) as usize, u16_at(54) as usize, u16_at(56) as usize);
    let has_interp = (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        at + 4 <= bytes.len() && u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default()) == 3
    });
    if !has_interp {
        return bad(
            "no program interpreter: statically linked, static-pie or a shared library, and cmc-preload could not load into it",
        );
    }
    Ok(())
}

/// Everything that stops the process front end. Each names the node, the
/// system call, the file or the limit concerned.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// A configuration key over its limit, or with a value that cannot be
    /// used (a NUL byte in an argument, a data directory that cannot be
    /// read).
    #[error("model key `{key}`: {reason}")]
    Config {
        /// The key, as a model file spells it.
        key: &'static str,
        /// What is wrong, with the limit.
        reason: String,
    },
    /// The program cannot run as nodes: missing, not an x86-64 ELF
    /// executable, or statically linked.
    #[error("program {path}: {reason}")]
    Program {
        /// The program's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The preload library named is not a file, or cannot be found.
    #[error("preload {path}: {reason}")]
    Preload {
        /// The library's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The embedded preload could not be written out.
    #[error(transparent)]
    EmbeddedPreload(#[from] preload::PreloadError),
    /// Starting a node's template failed.
    #[error("node {node}: spawn failed while {step}: {errno}")]
    Spawn {
        /// The node.
        node: u8,
        /// The step of the spawn that failed.
        step: &'static str,
        /// Its error.
        errno: Errno,
    },
    /// A node made a call before the preload's hello: it runs without the
    /// preload (statically linked, or the preload was not given).
    #[error(
        "node {node}: started without cmc-preload ({detail}); a target must be dynamically linked and run with cmc-preload.so"
    )]
    MissingPreload {
        /// The node.
        node: u8,
        /// What it did first.
        detail: String,
    },
    /// The start stub could not set the node up (a trap it could not set,
    /// the vDSO it could not remove) or could not start the program (a
    /// static program, one it cannot read, a limit of its own).
    #[error("node {node}: the start stub {detail}")]
    StartFailed {
        /// The node.
        node: u8,
        /// What failed.
        detail: String,
    },
    /// A node stayed silent longer than [`Config::stall_timeout`], in a
    /// call the checker does not model or in none.
    #[error(
        "node {node}: ran for {seconds:.1} s without waiting in a call the checker models, in {call} (limit stall_timeout)"
    )]
    Stall {
        /// The node.
        node: u8,
        /// The call it was in, or what it was doing.
        call: String,
        /// How long it was silent, in seconds.
        seconds: f64,
    },
    /// A snapshot of a node whose life has made threads, which cannot be
    /// made (`reason`: a thread blocks the snapshot signal, say). The
    /// engine keeps that world without it, and runs the world from the
    /// templates when an action needs its process.
    #[error("node {node}: its process has made threads, and a snapshot of it cannot be made: {reason}")]
    Threaded {
        /// The node.
        node: u8,
        /// Why not.
        reason: String,
    },
    /// A call, or a use of one, that the checker does not model.
    #[error("node {node}: {call} is not modelled: {detail}")]
    Unmodelled {
        /// The node.
        node: u8,
        /// The call, by name and number.
        call: String,
        /// What about it is not modelled.
        detail: String,
    },
    /// A call refused for what it would do to a file: change the file
    /// system, which is read-only to a node, or read time or entropy.
    #[error("node {node}: {call} of {path}: {detail}")]
    File {
        /// The node.
        node: u8,
        /// The call, by name and number.
        call: String,
        /// The file, as the node named it.
        path: String,
        /// Why it is refused.
        detail: String,
    },
    /// A call no target may make: an exec, a seccomp filter of its own,
    /// or memory a fork would share.
    #[error("node {node}: {what} in a target is not supported ({call})")]
    Forbidden {
        /// The node.
        node: u8,
        /// What the call would do.
        what: &'static str,
        /// The call, by name and number.
        call: String,
    },
    /// A node ended before the search's first action with a status other
    /// than 0: its start failed, and nothing of it would be checked.
    #[error("node {node}: {how} before the search's first action (at START): nothing of it would be checked")]
    EndedAtStart {
        /// The node.
        node: u8,
        /// How it ended: `exited with status 1`, say.
        how: String,
    },
    /// Every node exited before the search's first action.
    #[error("every node exited at START, before the search's first action: there is nothing to check")]
    NothingAtStart,
    /// A node crossed a limit: one of [`limits`], or the logical clock's
    /// last second.
    #[error("node {node}: {detail} (limit {limit} = {max})")]
    Limit {
        /// The node.
        node: u8,
        /// The limit's name, as the manual spells it.
        limit: &'static str,
        /// Its value.
        max: usize,
        /// What would have crossed it.
        detail: String,
    },
    /// The seccomp filter could not be built (libseccomp's error).
    #[error("{0}")]
    Filter(String),
    /// A system call of the supervisor's own failed.
    #[error("supervisor: {call} failed: {errno}")]
    Sys {
        /// The call.
        call: &'static str,
        /// Its error.
        errno: Errno,
    },
    /// A system call of the supervisor's about one node failed.
    #[error("node {node}: supervisor's {call} failed: {errno}")]
    NodeSys {
        /// The node.
        node: u8,
        /// The call.
        call: &'static str,
        /// Its error.
        errno: Errno,
    },
    /// An action was asked for that the world does not enable (a replayed
    /// file that does not fit, or the front end's own bookkeeping).
    #[error("action {action} is not enabled in this world")]
    NotEnabled {
        /// The action, or what was asked for.
        action: String,
    },
    /// A world rebuilt from its actions differs from the world found.
    #[error(
        "rebuilding the world reached by {action} (after {actions} actions) gave a different world than when it was found ({difference}): the program is not deterministic under the checker, or keeps state its report does not show (--det shows where a step differs)"
    )]
    Diverged {
        /// The last action of the path (`START` for none).
        action: String,
        /// The path's length, in actions.
        actions: usize,
        /// What differs, found then rebuilt.
        difference: String,
    },
    /// Not a failure: the search was asked to stop (Ctrl-C, a time cap)
    /// while this step ran, and the step was cut short.
    #[error("stopped: {reason}")]
    Stopped {
        /// Why: what the [`Stop`](crate::Stop) said.
        reason: String,
    },
}

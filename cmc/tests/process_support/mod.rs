//! Shared by the `process_*` tests: finds the preload, builds the C
//! example programs once per test binary, and makes configurations for
//! them.
//!
//! The preload is the one embedded in `cmc`, written to the user's cache
//! on first use (`cmc::process::find_preload`); `CMC_PRELOAD` overrides
//! it, as it does for users. The C programs in `examples/c` are compiled
//! with the distribution's `cc`, `-no-pie`, as a user would build a
//! target; their C properties (`examples/c/*_props.c`) as shared objects,
//! loaded with `dlopen`.
//!
//! [`walk`] is a stopgap breadth-first search over a program's worlds, for
//! the example programs' tests, until the engine's searches drive
//! processes.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cmc::process::{Blocked, CmcView, Config, ProcessAction, ProcessEngine, ProcessWorld};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cmc sits in the workspace").to_path_buf()
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// `libcmc_preload.so`: `$CMC_PRELOAD`, or the one embedded in `cmc`.
pub fn preload() -> PathBuf {
    cmc::process::find_preload().unwrap_or_else(|e| panic!("no preload library: {e}"))
}

/// `examples/c/NAME.c`, compiled once per test binary with `extra` flags
/// (`-no-pie` unless `extra` says otherwise).
pub fn program_with(name: &str, extra: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let key = format!("{name}{}", extra.join(""));
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let dir = tmp().join("c");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out_path = dir.join(key.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "_"));
    let source = repo().join(format!("examples/c/{name}.c"));
    if !fresh(&out_path, &source) {
        let building = building(&out_path);
        let mut cmd = Command::new("cc");
        cmd.args(["-O1", "-g", "-Wall", "-Werror"]);
        if !extra.contains(&"-pie") {
            cmd.arg("-no-pie");
        }
        cmd.args(extra).arg("-I").arg(repo()).arg(&source).arg("-o").arg(&building);
        cmd.arg("-lpthread");
        let out = cmd.output().expect("cc runs (install gcc)");
        assert!(out.status.success(), "cc {name}.c failed:\n{}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(&building, &out_path).expect("rename a build into place");
    }
    built.insert(key, out_path.clone());
    out_path
}

/// Whether `built` is newer than `source`, `cmc.h` and this test binary:
/// a build another process of this binary (see [`alone`]) made of the
/// same sources with the same flags.
fn fresh(built: &Path, source: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(at) = modified(built) else { return false };
    let Ok(exe) = std::env::current_exe() else { return false };
    [source, &repo().join("cmc.h"), &exe].iter().all(|s| modified(s).is_some_and(|m| m < at))
}

/// Where to build `out` before renaming it into place, so that no process
/// ever runs or loads a half-written file.
fn building(out: &Path) -> PathBuf {
    let mut name = out.file_name().expect("a file").to_os_string();
    name.push(format!(".{}.building", std::process::id()));
    out.with_file_name(name)
}

pub fn program(name: &str) -> PathBuf {
    program_with(name, &[])
}

/// `examples/rust/NAME.rs`, compiled once per test binary with the
/// toolchain's `rustc` and `-C relocation-model=static` (which links it
/// `-no-pie`, as every target must be).
pub fn rust_program(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let dir = tmp().join("rust");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out_path = dir.join(name);
    let source = repo().join(format!("examples/rust/{name}.rs"));
    if !fresh(&out_path, &source) {
        let building = building(&out_path);
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = Command::new(rustc)
            .args(["--edition", "2024", "-O", "-C", "relocation-model=static", "-o"])
            .arg(&building)
            .arg(&source)
            .output()
            .expect("rustc runs");
        assert!(out.status.success(), "rustc {name}.rs failed:\n{}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(&building, &out_path).expect("rename a build into place");
    }
    built.insert(name.to_string(), out_path.clone());
    out_path
}

/// A configuration for `nodes` nodes of `examples/c/NAME.c`, with the
/// preload, under the manual's `T` convention (`timeout_byte`), which the
/// example programs are written for: a TIMEOUT may end any read or accept.
/// A test of Linux's own timeouts turns it off.
pub fn config(name: &str, nodes: u8) -> Config {
    let mut c = Config::new(program(name), nodes);
    c.preload = Some(preload());
    c.stall_timeout = Duration::from_secs(10);
    c.timeout_byte = true;
    c
}

/// Parses a list of action tokens.
pub fn actions(tokens: &[&str]) -> Vec<ProcessAction> {
    tokens.iter().map(|t| t.parse().unwrap_or_else(|e| panic!("{e}"))).collect()
}

/// The enabled actions of `world`, as tokens.
pub fn enabled(world: &ProcessWorld) -> Vec<String> {
    let mut out = Vec::new();
    ProcessEngine::actions(world, &mut out);
    out.iter().map(|a| a.to_string()).collect()
}

/// Replays `tokens` from scratch on a fresh engine, as they are.
pub fn replay_exact(config: &Config, tokens: &[&str]) -> ProcessWorld {
    let mut e = ProcessEngine::new(config.clone()).expect("valid config");
    e.replay(&actions(tokens)).unwrap_or_else(|err| panic!("{err}"))
}

/// Replays `tokens` from scratch on a fresh engine, letting a node held
/// at a crash point run on (`RUN(n)`), and a listing held for the order
/// of names it shows first take way 0 (`ORDER(n, 0)`), before each token
/// that is not its own, and at the end: the tokens name whole steps, and a
/// CRASH falls between them, where the test puts it ([`replay_exact`]
/// crashes at a crash point).
pub fn replay(config: &Config, tokens: &[&str]) -> ProcessWorld {
    run_on(config, tokens).0
}

/// [`replay`], with the actions it took, RUNs included.
pub fn run_on(config: &Config, tokens: &[&str]) -> (ProcessWorld, Vec<ProcessAction>) {
    let mut e = ProcessEngine::new(config.clone()).expect("valid config");
    let fail = |err: cmc::process::ProcessError| panic!("{err}");
    let mut w = e.initial().unwrap_or_else(fail);
    let mut done: Vec<ProcessAction> = Vec::new();
    for next in actions(tokens).into_iter().map(Some).chain([None]) {
        while let Some(run) = w.nodes.iter().enumerate().find_map(|(h, n)| {
            let node = h as u8;
            match n.blocked {
                Blocked::CrashPoint { .. } => Some(ProcessAction::Run { node, thread: None }),
                Blocked::Order { .. } => Some(ProcessAction::Order { node, choice: 0 }),
                _ => None,
            }
        }) {
            let h = run.node();
            if matches!(next, Some(ProcessAction::Run { node, .. } | ProcessAction::Order { node, .. }) if Some(node) == h)
            {
                break;
            }
            w = e.apply(&done, &run).unwrap_or_else(fail);
            done.push(run);
        }
        if let Some(a) = next {
            w = e.apply(&done, &a).unwrap_or_else(fail);
            done.push(a);
        }
    }
    (w, done)
}

/// `examples/c/NAME.c` compiled once per test binary as a shared object
/// (`cc -shared -fPIC`), as a model file's `properties` are built.
pub fn shared_object(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let dir = tmp().join("c");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out_path = dir.join(format!("{name}.so"));
    let source = repo().join(format!("examples/c/{name}.c"));
    if !fresh(&out_path, &source) {
        let building = building(&out_path);
        let out = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(repo())
            .arg(&source)
            .arg("-o")
            .arg(&building)
            .output()
            .expect("cc runs (install gcc)");
        assert!(out.status.success(), "cc -shared {name}.c failed:\n{}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(&building, &out_path).expect("rename a build into place");
    }
    built.insert(name.to_string(), out_path.clone());
    out_path
}

/// A C invariant: `int NAME(const struct cmc_view *)`, nonzero when it holds.
pub type CPredicate = unsafe extern "C" fn(*const CmcView) -> std::ffi::c_int;

/// `function` of the shared object `examples/c/NAME.c`, loaded once per
/// test binary and never unloaded.
pub fn c_predicate(name: &str, function: &str) -> CPredicate {
    use nix::libc;
    static LOADED: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    let key = format!("{name}:{function}");
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let address = match loaded.get(&key) {
        Some(&a) => a,
        None => {
            let path = shared_object(name);
            let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL in a path");
            let c_function = std::ffi::CString::new(function).expect("no NUL in a name");
            // SAFETY: the object is ours, built above from examples/c; it
            // has no constructors, and is never unloaded, so the address
            // stays valid.
            let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            assert!(!handle.is_null(), "dlopen {}", path.display());
            let symbol = unsafe { libc::dlsym(handle, c_function.as_ptr()) };
            assert!(!symbol.is_null(), "{function} is not in {}", path.display());
            loaded.insert(key, symbol as usize);
            symbol as usize
        }
    };
    // SAFETY: the symbol is a function of this signature (cmc.h).
    unsafe { std::mem::transmute::<usize, CPredicate>(address) }
}

/// Whether the C predicate `function` of `examples/c/NAME.c` holds on
/// `world`.
pub fn c_holds(name: &str, function: &str, world: &ProcessWorld) -> bool {
    let view = CmcView::of(world);
    // SAFETY: the predicate reads the view it is given and nothing else.
    unsafe { c_predicate(name, function)(&*view) != 0 }
}

/// Set in the environment of the child process [`alone`] starts.
const ALONE: &str = "CMC_PROCESS_TEST_ALONE";

/// Runs `body`, the body of the test function `name`, in a child process
/// of this test binary (`NAME --exact`) where it is the only test, so that
/// the tests of one binary run in parallel with one supervisor per process.
/// It was written when two supervisors in one process could deadlock at
/// teardown (fixed since: the supervisor deletes its epoll registrations
/// before it closes, and `process_race.rs` shows it); it stays because
/// these walks are long and run well in parallel processes. The child's
/// output is passed on, and its failure fails the test; it dies with the
/// thread that started it.
pub fn alone(name: &str, body: impl FnOnce()) {
    if std::env::var_os(ALONE).is_some() {
        return body();
    }
    let mut child = Command::new(std::env::current_exe().expect("the test binary"));
    child.args([name, "--exact", "--nocapture", "--test-threads=1"]).env(ALONE, "1").env("CMC_PRELOAD", preload());
    // SAFETY: prctl is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        child.pre_exec(|| {
            nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGKILL);
            Ok(())
        });
    }
    let out = child.output().expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The child's libtest frames the body's output: "running 1 test", then
    // "test NAME ... " with the body's first line, "ok", the result.
    let framing = format!("test {name} ... ");
    for line in stdout.lines() {
        let line = line.strip_prefix(&framing).unwrap_or(line);
        if !(line.is_empty() || line == "ok" || line == "running 1 test" || line.starts_with("test result: ")) {
            println!("{line}");
        }
    }
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, alone in a child process, failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A property of a process world: `Err` says why it fails.
pub type Invariant = fn(&ProcessWorld) -> Result<(), String>;

/// A world the walk should reach, to show it is not vacuous.
pub type Witness = fn(&ProcessWorld) -> bool;

/// The first world a [`walk`] found violating an invariant, and the actions
/// that reach it from the initial world.
pub struct Counterexample {
    pub property: &'static str,
    pub reason: String,
    pub actions: Vec<ProcessAction>,
    pub world: ProcessWorld,
}

impl Counterexample {
    /// The actions as tokens, as counterexample files store them.
    pub fn tokens(&self) -> Vec<String> {
        self.actions.iter().map(|a| a.to_string()).collect()
    }
}

/// What a bounded breadth-first [`walk`] saw.
pub struct Walk {
    /// Distinct worlds (by fingerprint), the initial one included.
    pub distinct: usize,
    /// Worlds computed: the initial one plus one per action applied,
    /// duplicates included.
    pub generated: usize,
    /// Actions on the longest path to a distinct world.
    pub actions_deepest: usize,
    /// Some world at the bound still had enabled actions: the walk covered
    /// every path of at most `actions_max` actions, not every world.
    pub bounded: bool,
    /// The first violation, on a shortest path.
    pub violation: Option<Counterexample>,
    /// For each witness, a shortest path to a world where it holds.
    pub witnessed: Vec<Option<Vec<ProcessAction>>>,
}

/// A stopgap search until the engine's searches drive processes: every
/// sequence of at most `actions_max` actions from the initial world,
/// breadth-first, with a visited set of fingerprints. `invariants` are
/// checked on every distinct world, the initial one included, and the walk
/// stops at the first violation (a shortest counterexample, as BFS gives);
/// `witnesses` are looked for on the same worlds. An engine error (a
/// misbehaving program, a limit) panics with the path that led to it.
pub fn walk(
    config: &Config,
    actions_max: usize,
    invariants: &[(&'static str, Invariant)],
    witnesses: &[Witness],
) -> Walk {
    let mut engine = ProcessEngine::new(config.clone()).unwrap_or_else(|e| panic!("{e}"));
    let mut buf = Vec::new();
    let initial = engine.initial().unwrap_or_else(|e| panic!("initial world: {e}"));
    let mut seen = std::collections::HashSet::new();
    seen.insert(ProcessEngine::fingerprint(&initial, &mut buf));
    let mut walk = Walk {
        distinct: 1,
        generated: 1,
        actions_deepest: 0,
        bounded: false,
        violation: None,
        witnessed: vec![None; witnesses.len()],
    };
    let check = |walk: &mut Walk, path: &[ProcessAction], world: &ProcessWorld| {
        for (found, witness) in walk.witnessed.iter_mut().zip(witnesses) {
            if found.is_none() && witness(world) {
                *found = Some(path.to_vec());
            }
        }
        walk.violation = invariants.iter().find_map(|(name, holds)| {
            holds(world).err().map(|reason| Counterexample {
                property: name,
                reason,
                actions: path.to_vec(),
                world: world.clone(),
            })
        });
        walk.violation.is_some()
    };
    if check(&mut walk, &[], &initial) {
        return walk;
    }
    let mut frontier = std::collections::VecDeque::from([(Vec::new(), initial)]);
    let mut enabled = Vec::new();
    while let Some((path, world)) = frontier.pop_front() {
        ProcessEngine::actions(&world, &mut enabled);
        if enabled.is_empty() {
            continue;
        }
        if path.len() >= actions_max {
            walk.bounded = true;
            continue;
        }
        for a in enabled.clone() {
            let next = engine.apply(&path, &a).unwrap_or_else(|e| {
                let tokens: Vec<String> = path.iter().chain([&a]).map(|a| a.to_string()).collect();
                panic!("{e}\n  after {tokens:?}")
            });
            walk.generated += 1;
            if !seen.insert(ProcessEngine::fingerprint(&next, &mut buf)) {
                continue;
            }
            walk.distinct += 1;
            let mut reached = path.clone();
            reached.push(a);
            walk.actions_deepest = walk.actions_deepest.max(reached.len());
            if check(&mut walk, &reached, &next) {
                return walk;
            }
            frontier.push_back((reached, next));
        }
    }
    walk
}

/// Runs the tests of one binary one supervisor at a time. It guarded
/// against a teardown race between supervisors on concurrent threads, fixed
/// since (`process_race.rs` shows it); it stays so that these tests' timing
/// and process counts do not depend on how the harness schedules them.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

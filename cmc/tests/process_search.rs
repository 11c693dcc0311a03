//! The process front end under the shared searches: BFS, DFS, simulation
//! and replay over real processes (`examples/c/counter.c`), determinism of
//! whole searches, and model files (TOML, with C invariants in a shared
//! object).

#![cfg(target_os = "linux")]

mod process_support;

use std::process::Command;

use cmc::process::model_file;
use cmc::process::{Budgets, ProcessExplorer, ProgramModel};
use cmc::{Control, CounterexampleFile, Kind, NoControl, Options, Report, Search, Stop, Verdict, explore, replay_with};
use process_support::{config, preload, program, repo};

/// These tests run one engine at a time, so that their timing does not
/// depend on how the harness schedules them (the teardown race between
/// concurrent supervisors is fixed; `process_race.rs` shows it).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Server (node 0) and one client node; the checker's own client sends
/// another "+", and a crashed client starts over and sends a third, so the
/// count can reach 3 and no more.
fn counter_model() -> ProgramModel {
    let mut c = config("counter", 2);
    c.budgets = Budgets { crashes: 1, drops: 0, timeouts: 0, clients: 1, ..Default::default() };
    c.request = b"+".to_vec();
    ProgramModel::new("counter", c).always("count-at-most-three", |w| w.nodes[0].state.get(2).is_none_or(|&n| n <= 3))
}

fn run(model: &ProgramModel, search: Search) -> Report {
    let explorer = ProcessExplorer::new(model).expect("valid model");
    explore(explorer, &Options { search, ..Options::default() }, &mut NoControl)
}

fn without_time(r: &Report) -> String {
    let mut r = r.clone();
    r.elapsed_s = 0.0;
    r.to_json()
}

#[test]
fn bfs_over_processes_is_complete_and_deterministic() {
    let _serial = serial();
    let model = counter_model();
    let a = run(&model, Search::Bfs { depth_max: None });
    assert_eq!(a.verdict, Verdict::Pass, "{}", a.to_text());
    assert!(a.distinct_states > 10, "{}", a.summary());
    let b = run(&model, Search::Bfs { depth_max: None });
    assert_eq!(without_time(&a), without_time(&b), "the same model checked twice gives the same report");
    println!("{}", a.summary());
}

fn run_det(model: &ProgramModel, search: Search) -> Report {
    let explorer = ProcessExplorer::new(model).expect("valid model").with_det(true);
    explore(explorer, &Options { search, det: true, ..Options::default() }, &mut NoControl)
}

#[test]
fn det_runs_every_step_twice_and_a_deterministic_program_passes_alike() {
    let _serial = serial();
    let model = counter_model();
    let plain = run(&model, Search::Bfs { depth_max: None });
    let det = run_det(&model, Search::Bfs { depth_max: None });
    assert_eq!(det.verdict, Verdict::Pass, "{}", det.to_text());
    assert_eq!(
        (det.distinct_states, det.generated_states, det.depth),
        (plain.distinct_states, plain.generated_states, plain.depth),
        "--det changes no count"
    );
}

#[test]
fn det_rejects_a_program_whose_state_depends_on_the_cpus_own_entropy() {
    let _serial = serial();
    let mut c = config("nondet", 1);
    c.budgets.crashes = 1;
    let model = ProgramModel::new("nondet", c);
    let det = run_det(&model, Search::Bfs { depth_max: None });
    assert_eq!(det.verdict, Verdict::Error, "{}", det.to_text());
    let reason = det.reason.unwrap_or_default();
    let prefix = "--det: START gave two different worlds on two runs (node 0: state 00";
    assert!(reason.starts_with(prefix), "{reason}");
    let states: Vec<&str> = reason[prefix.len() - 2..].split(" then ").map(|s| &s[..10]).collect();
    assert_eq!(states.len(), 2, "{reason}");
    assert_ne!(states[0], states[1], "{reason}");
}

#[test]
fn a_node_killed_by_its_own_signal_is_a_violation_with_a_shortest_trace() {
    let _serial = serial();
    let mut c = config("probe", 1);
    c.args = vec!["abort".to_string()];
    c.budgets.clients = 1;
    c.request = b"x".to_vec();
    let model = ProgramModel::new("abort", c);
    let r = run(&model, Search::Bfs { depth_max: None });
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some(cmc::process::NO_NODE_KILLED)));
    let actions: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(actions, ["START", "CLIENT(0)", "ACCEPT(0, client)"], "{}", r.to_text());
    assert!(r.to_text().contains("killed by signal 6"), "{}", r.to_text());
}

/// Issue 11, item 7: each node's stdout and stderr are shown with the
/// counterexample, step by step: the text gives each step's last lines,
/// the JSON report and the counterexample file all of it, and a replay
/// shows them again. They were thrown away, even in replay.
#[test]
fn each_node_output_is_shown_with_the_step_that_wrote_it() {
    let _serial = serial();
    let mut c = config("probe", 1);
    c.args = vec!["chatty".to_string()];
    c.budgets.clients = 1;
    c.request = b"x".to_vec();
    let model = ProgramModel::new("chatty", c);
    for search in [Search::Bfs { depth_max: None }, Search::Simulate { walks: 20, walk_length: 4, seed: 1 }] {
        let r = run(&model, search);
        assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
        let steps: Vec<(&str, &str)> =
            r.trace.iter().map(|s| (s.action.as_str(), s.world.nodes[0].output.as_str())).collect();
        assert_eq!(
            steps,
            [
                ("START", "node 0 up\n"),
                ("CLIENT(0)", ""),
                ("ACCEPT(0, client)", "node 0: accepted a client\nnode 0: aborting\n")
            ],
            "{search:?}"
        );
        let text = r.to_text();
        assert!(text.contains("\n          | node 0 up\n"), "{text}");
        assert!(text.contains("\n          | node 0: aborting\n"), "{text}");
        let file = r.counterexample().unwrap();
        assert_eq!(file.steps[2].output, ["node 0: accepted a client\nnode 0: aborting\n"]);
        assert!(file.steps[1].output.is_empty(), "a step in which no node wrote keeps nothing");
        let file = CounterexampleFile::from_json(&file.to_json()).unwrap();
        let replayed = replay_with(ProcessExplorer::new(&model).unwrap(), &file, false).unwrap();
        assert_eq!(replayed.trace, r.trace, "the replay shows the same output");
    }
}

#[test]
fn dfs_with_a_bound_reaches_what_bfs_reaches() {
    let _serial = serial();
    let model = counter_model();
    for d in [2, 4, 6] {
        let b = run(&model, Search::Bfs { depth_max: Some(d) });
        let f = run(&model, Search::Dfs { depth_max: d });
        assert_eq!((b.verdict, b.distinct_states), (f.verdict, f.distinct_states), "depth {d}");
    }
}

#[test]
fn a_violation_is_found_by_bfs_and_simulation_and_replays() {
    let _serial = serial();
    let model = counter_model().always("count-below-three", |w| w.nodes[0].state.get(2).is_none_or(|&n| n < 3));
    let bfs = run(&model, Search::Bfs { depth_max: None });
    println!("{}", bfs.to_text());
    assert_eq!((bfs.verdict, bfs.property.as_deref()), (Verdict::Violation, Some("count-below-three")));
    assert_eq!(bfs.trace[0].action, "START");
    let sim = run(&model, Search::Simulate { walks: 300, walk_length: 16, seed: 1 });
    assert_eq!((sim.verdict, sim.property.as_deref()), (Verdict::Violation, Some("count-below-three")));

    let file = CounterexampleFile::from_json(&bfs.counterexample().unwrap().to_json()).unwrap();
    assert_eq!(file.model.core, "program:counter");
    let replayed = replay_with(ProcessExplorer::new(&model).unwrap(), &file, false).unwrap();
    assert_eq!(replayed.verdict, Verdict::Violation, "{}", replayed.to_text());
    assert_eq!(replayed.trace, bfs.trace, "same actions, same worlds, same fingerprints");
    let mut tampered = file.clone();
    tampered.steps[1].fingerprint = "0".repeat(32);
    let e = replay_with(ProcessExplorer::new(&model).unwrap(), &tampered, false).unwrap_err();
    assert!(matches!(e, cmc::ReplayError::Diverged { step: 2, .. }), "{e}");
}

/// A control that never stops a search at a poll, only through its stop
/// request (the one a front end checks inside a step), already made.
struct StopInsideSteps;

impl Control for StopInsideSteps {
    fn poll(&mut self, _progress: &cmc::Progress) -> Option<String> {
        None
    }
    fn stop(&self) -> Option<Stop> {
        Some(Stop::new(|| Some("asked to stop".to_string())))
    }
}

/// Issue 10, item 4: a program search answers a stop inside a step (the
/// engine checks it before every action, the supervisor while it waits for
/// nodes), and a step it cuts short ends the search incomplete with the
/// stop's reason, not an error; the search is still rendered and counted.
#[test]
fn a_stop_inside_a_step_ends_a_program_search_incomplete() {
    let _serial = serial();
    let model = counter_model();
    for search in [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 8 },
        Search::Simulate { walks: 5, walk_length: 8, seed: 1 },
    ] {
        let explorer = ProcessExplorer::new(&model).expect("valid model");
        let r = explore(explorer, &Options { search, ..Options::default() }, &mut StopInsideSteps);
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Incomplete, Some("asked to stop")),
            "{search:?}: {}",
            r.to_text()
        );
        assert!(r.filters_installed.is_some(), "{search:?}: the report counts the processes");
    }
}

#[test]
fn an_eventually_property_is_checked_where_nothing_is_enabled() {
    let _serial = serial();
    let mut c = config("counter", 2);
    c.request = b"+".to_vec();
    let model = ProgramModel::new("counter", c).eventually("client-answered", |w| w.nodes[1].state.get(1) == Some(&4));
    let r = run(&model, Search::Bfs { depth_max: None });
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    let never = ProgramModel::new("counter", {
        let mut c = config("counter", 2);
        c.request = b"+".to_vec();
        c
    })
    .eventually("client-never-done", |w| w.nodes[1].state.get(1) != Some(&4));
    let r = run(&never, Search::Bfs { depth_max: None });
    assert_eq!((r.verdict, r.kind), (Verdict::Violation, Some(Kind::Eventually)), "{}", r.to_text());
}

/// Issue 10, 1b: what a read of fd 193 will return is part of the world.
/// `examples/c/lazy.c` reads its durable record at its first request; a
/// TIMEOUT makes {1} durable. After TIMEOUT then CRASH the new life's read
/// returns {1}; after CRASH then TIMEOUT it returns nothing, though the
/// durable record is {1} in both. The checker once kept the record a read
/// returns, and how much of it was read, outside the world: the two worlds
/// had one fingerprint, BFS and DFS explored only the first and passed,
/// and only simulation found the second's answer.
#[test]
fn what_fd_193_returns_on_restart_is_in_the_world() {
    let _serial = serial();
    let mut c = config("lazy", 1);
    c.budgets = Budgets { crashes: 1, drops: 0, timeouts: 1, clients: 1, ..Default::default() };
    c.request = b"x".to_vec();
    // After a crash, a node that recovered nothing has nothing durable.
    let model = ProgramModel::new("lazy", c).always("recovers-what-is-durable", |w| {
        let n = &w.nodes[0];
        !(w.crashes == 0 && n.state == [2] && n.durable.as_deref() == Some(&[1][..]))
    });
    for search in [Search::Bfs { depth_max: None }, Search::Dfs { depth_max: 8 }] {
        let r = run(&model, search);
        assert_eq!(
            (r.verdict, r.property.as_deref()),
            (Verdict::Violation, Some("recovers-what-is-durable")),
            "{search:?}: {}",
            r.to_text()
        );
        let actions: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
        assert!(actions.starts_with(&["START", "CRASH(0)", "RESTART(0)", "TIMEOUT(0)"]), "{search:?}: {actions:?}");
    }
    let sim = run(&model, Search::Simulate { walks: 300, walk_length: 8, seed: 1 });
    assert_eq!(sim.verdict, Verdict::Violation, "{}", sim.to_text());
}

/// Issue 10, 1c: a connection on fd 0 is the checker's like any other.
/// `examples/c/closed_stdin.c` closes stdin, so its accepted connection is
/// fd 0. The filter once left fds 0 to 2 to the kernel: the node's read of
/// the placeholder returned 0 with the request still queued, the reply was
/// lost, and the search reported it as the program's doing.
#[test]
fn a_connection_on_fd_0_is_seen_by_the_checker() {
    let _serial = serial();
    let mut c = config("closed_stdin", 1);
    c.budgets.clients = 1;
    c.request = b"x".to_vec();
    let model = ProgramModel::new("closed_stdin", c)
        .always("accepted-on-fd-0", |w| w.nodes[0].state.get(1).is_none_or(|&s| s != 2))
        .eventually("replied", |w| w.replies.iter().any(|(n, r)| *n == 0 && r == b"ok"));
    let r = run(&model, Search::Bfs { depth_max: None });
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

/// Issue 10, 1f: a rebuilt world is compared with its fingerprint.
/// `examples/c/nondet.c` reports four bytes of RDRAND, so every rebuild of a world
/// differs from the world first found. Stateless (every world rebuilt from
/// the templates) and with one snapshot kept (rebuilds from kept
/// ancestors), the search must stop with an error naming the action whose
/// world rebuilt differently, never go on with a different world.
#[test]
fn a_rebuilt_world_is_compared_with_its_fingerprint() {
    let _serial = serial();
    for snapshots_max in [0, 1] {
        let mut c = config("nondet", 2);
        c.budgets.clients = 1;
        c.request = b"x".to_vec();
        c.snapshots_max = snapshots_max;
        let model = ProgramModel::new("nondet", c);
        let r = run(&model, Search::Bfs { depth_max: None });
        assert_eq!(r.verdict, Verdict::Error, "snapshots_max {snapshots_max}: {}", r.to_text());
        let reason = r.reason.unwrap_or_default();
        assert!(
            reason.contains("rebuilding the world reached by ") && reason.contains("when it was found"),
            "snapshots_max {snapshots_max}: {reason}"
        );
    }
}

/// Issue 10, item 3: the store's memory cap is a bound like its count.
/// With 1 MiB for snapshots (a few processes' worth) the store evicts and
/// rebuilds, which costs forks, and the counts stay as they are.
#[test]
fn a_memory_cap_on_snapshots_evicts_and_the_counts_stay() {
    let _serial = serial();
    let free = run(&counter_model(), Search::Bfs { depth_max: None });
    let mut capped = counter_model();
    capped.config.snapshots_mib_max = 1;
    let capped = run(&capped, Search::Bfs { depth_max: None });
    assert_eq!(
        (capped.verdict, capped.distinct_states, capped.generated_states),
        (free.verdict, free.distinct_states, free.generated_states),
        "{}",
        capped.to_text()
    );
    let forks = |r: &Report| r.forks.unwrap_or_default();
    assert!(forks(&capped) > forks(&free), "capped {} forks, free {}", forks(&capped), forks(&free));
}

/// The transition cache answers an action seen before in the same local
/// state without a process: BFS, DFS and simulation give the same verdict
/// and counts with it as without it (`transitions_max = 0`), with fewer
/// forks.
#[test]
fn the_transition_cache_changes_no_count_only_the_forks() {
    let _serial = serial();
    let searches = [
        Search::Bfs { depth_max: None },
        Search::Dfs { depth_max: 12 },
        Search::Simulate { walks: 20, walk_length: 12, seed: 3 },
    ];
    for search in searches {
        let cached = run(&counter_model(), search);
        let mut off = counter_model();
        off.config.transitions_max = 0;
        let off = run(&off, search);
        let forks = |r: &Report| r.forks.unwrap_or_default();
        let same = |r: &Report| {
            let mut r = r.clone();
            r.forks = None;
            without_time(&r)
        };
        assert_eq!(same(&cached), same(&off), "{search:?}");
        assert!(forks(&cached) < forks(&off), "{search:?}: {} forks cached, {} not", forks(&cached), forks(&off));
    }
}

/// Writes `text` as a model file in a fresh folder, with the counter
/// program and a shared object of C invariants beside it.
fn model_dir(name: &str, toml: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model-files").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(program("counter"), dir.join("counter")).unwrap();
    let props = dir.join("props.c");
    std::fs::write(
        &props,
        "#include \"cmc.h\"\n\
         int count_at_most_three(const struct cmc_view *v) { return v->node[0].state.len < 3 || v->node[0].state.bytes[2] <= 3; }\n\
         int count_below_three(const struct cmc_view *v) { return v->node[0].state.len < 3 || v->node[0].state.bytes[2] < 3; }\n",
    )
    .unwrap();
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-I"])
        .arg(repo())
        .arg(&props)
        .arg("-o")
        .arg(dir.join("props.so"))
        .output()
        .expect("cc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let file = dir.join("model.toml");
    std::fs::write(&file, toml).unwrap();
    // A model file names no preload: `model_file::read` takes
    // `find_preload`'s, and the tests set the one they use.
    file
}

#[test]
fn a_model_file_runs_with_c_invariants() {
    let _serial = serial();
    let file = model_dir(
        "ok",
        "program = \"counter\"\nnodes = 2\ncrashes = 1\nclients = 1\nrequest = \"+\"\n\
         properties = \"props.so\"\ninvariants = [\"count_at_most_three\"]\n",
    );
    let mut m = model_file::read(&file).unwrap_or_else(|e| panic!("{e}"));
    m.model.config.preload = Some(preload());
    let r = explore(ProcessExplorer::new(&m.model).unwrap(), &m.options, &mut NoControl);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert_eq!(r.distinct_states, run(&counter_model(), Search::Bfs { depth_max: None }).distinct_states);

    let file = model_dir(
        "bug",
        "program = \"counter\"\nnodes = 2\ncrashes = 1\nclients = 1\nrequest = \"+\"\n\
         properties = \"props.so\"\ninvariants = [\"count_at_most_three\", \"count_below_three\"]\n",
    );
    let mut m = model_file::read(&file).unwrap();
    m.model.config.preload = Some(preload());
    let r = explore(ProcessExplorer::new(&m.model).unwrap(), &m.options, &mut NoControl);
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("count_below_three")));
    assert_eq!(r.model.model_file.as_deref(), Some(file.display().to_string().as_str()));
}

#[test]
fn model_file_mistakes_are_errors_naming_the_key_or_path() {
    let _serial = serial();
    for (name, toml, expected) in [
        ("unknown", "program = \"counter\"\nnodes = 2\nnodez = 3\n", "unknown field `nodez`"),
        ("type", "program = \"counter\"\nnodes = \"two\"\n", "nodes"),
        ("missing", "program = \"nope\"\nnodes = 2\n", "key `program`: "),
        ("budget", "program = \"counter\"\nnodes = 2\ncrashes = 256\n", "crashes"),
        ("nodes", "program = \"counter\"\nnodes = 9\n", "nodes_max = 8"),
        (
            "symbol",
            "program = \"counter\"\nnodes = 2\nproperties = \"props.so\"\ninvariants = [\"nope\"]\n",
            "no function `nope`",
        ),
        (
            "so",
            "program = \"counter\"\nnodes = 2\nproperties = \"none.so\"\ninvariants = [\"x\"]\n",
            "key `properties`",
        ),
        ("search", "program = \"counter\"\nnodes = 2\nsearch = \"random\"\n", "key `search`"),
        ("dfs", "program = \"counter\"\nnodes = 2\nsearch = \"dfs\"\n", "key `depth_max`"),
    ] {
        let file = model_dir(name, toml);
        let err = model_file::read(&file).err().unwrap_or_else(|| panic!("{name}: accepted"));
        let text = err.to_string();
        assert!(text.contains(expected), "{name}: `{text}` does not name `{expected}`");
        assert!(text.contains("model.toml"), "{name}: `{text}` does not name the file");
    }
}

/// A fresh working directory for the nodes of one test, empty.
fn fresh_workdir(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workdirs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Issue 10, 1a. A node that wrote a file carried state outside the world
/// into its sibling lives, its snapshots' forks and its next life after a
/// CRASH: `leak sibling` aborts on a fresh [CLIENT(0), ACCEPT(0, client)],
/// but BFS explored the TIMEOUT branch first, which wrote the file, and
/// passed. A node's file system is now read-only: the write is an error
/// naming the node, the call and the path, and nothing is written.
#[test]
fn files_outlive_replays_and_crashes() {
    let _serial = serial();
    for (mode, budgets) in [
        ("sibling", Budgets { crashes: 0, drops: 0, timeouts: 1, clients: 1, ..Default::default() }),
        ("crash", Budgets { crashes: 1, drops: 0, timeouts: 0, clients: 0, ..Default::default() }),
    ] {
        let dir = fresh_workdir(&format!("leak-{mode}"));
        let mut c = config("leak", 1);
        c.args = vec![mode.to_string()];
        c.budgets = budgets;
        c.request = b"+".to_vec();
        c.workdir = Some(dir.clone());
        let model = ProgramModel::new("leak", c);
        let r = run(&model, Search::Bfs { depth_max: None });
        assert_eq!(r.verdict, Verdict::Error, "{mode}: {}", r.to_text());
        let reason = r.reason.clone().unwrap_or_default();
        let marker = dir.join("leak-marker");
        let expected = format!("node 0: openat of {}: ", marker.display());
        assert!(reason.contains(&expected), "{mode}: `{reason}` does not name `{expected}`");
        assert!(reason.contains("read-only"), "{mode}: {reason}");
        assert!(!marker.exists(), "{mode}: the refused open wrote nothing");
    }
}

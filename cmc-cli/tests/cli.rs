//! The `cmc` command, run as a user runs it: exit codes, the JSON report,
//! the saved counterexample and `cmc replay`, and errors that name the key.

use std::path::PathBuf;
use std::process::{Command, Output};

fn cmc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cmc")).args(args).output().expect("cmc runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_pass_exits_0_with_the_json_report() {
    let out = cmc(&["check", "two-phase-tla", "--set", "rms=3", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["distinct_states"], 288);
    assert_eq!(json["generated_states"], 1146);
    assert_eq!(json["depth"], 11);
    assert_eq!(json["search"], "bfs");
    assert!(json["elapsed_s"].is_number());
}

#[test]
fn a_violation_exits_1_saves_a_counterexample_and_replay_reproduces_it() {
    let file = scratch("lost-wakeup.cex.json");
    let f = file.to_str().unwrap();
    let out = cmc(&["check", "lock-service", "--set", "bug_lost_wakeup=1", "--save", f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("violation of eventually property `all-requests-served`"), "{stdout}");
    assert!(stdout.contains("counterexample ("), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("reproduce: cmc check lock-service --set bug_lost_wakeup=1"), "{stderr}");
    assert!(stderr.contains(&format!("replay:    cmc replay {f}")), "{stderr}");

    let replay = cmc(&["replay", f]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    assert!(text(&replay.stdout).starts_with("violation of eventually property `all-requests-served`"));
    let det = cmc(&["replay", f, "--det", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&det.stdout).unwrap();
    assert_eq!(json["verdict"], "violation");
    assert_eq!(json["property"], "all-requests-served");
}

#[test]
fn symmetry_counts_classes_and_its_counterexample_replays_without_it() {
    let out = cmc(&["check", "two-phase", "--nodes", "4", "--crashes", "1", "--symmetry", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["search"].as_str(), json["distinct_states"].as_u64()), (Some("bfs with symmetry"), Some(22391)));

    let file = scratch("symmetry.cex.json");
    let f = file.to_str().unwrap();
    let bug = ["--set", "bug_no_persist_decision=1", "--nodes", "4", "--crashes", "1", "--symmetry", "--save", f];
    let out = cmc(&[&["check", "two-phase"], &bug[..]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--crashes 1 --symmetry"), "the command reproduces it under symmetry: {stderr}");
    let replay = cmc(&["replay", f]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    assert!(text(&replay.stdout).starts_with("violation of always property `atomicity`"));

    // A core with no interchangeable nodes.
    let out = cmc(&["check", "lock-service", "--symmetry"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("symmetry: core `lock-service` declares 0 interchangeable nodes"));
}

#[test]
fn a_deadlock_counterexample_records_deadlock_and_cmc_replay_reproduces_it() {
    let file = scratch("deadlock.cex.json");
    let f = file.to_str().unwrap();
    let out = cmc(&["check", "two-phase", "--deadlock", "--save", f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("violation of always property `deadlock`"), "{}", text(&out.stdout));
    let cex: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(cex["deadlock"], true, "{cex}");
    let replay = cmc(&["replay", f]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    assert!(text(&replay.stdout).starts_with("violation of always property `deadlock`"), "{}", text(&replay.stdout));
    let det = cmc(&["replay", f, "--det", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&det.stdout).unwrap();
    assert_eq!(
        (&json["verdict"], &json["property"], &json["deadlock"]),
        (&"violation".into(), &"deadlock".into(), &true.into())
    );
}

/// A file that does not fit the model is bad input (exit 2), not a
/// misbehaving core: the message names the step and both fingerprints.
#[test]
fn a_tampered_counterexample_exits_2_naming_the_step_and_the_fingerprints() {
    let file = scratch("tampered.cex.json");
    let f = file.to_str().unwrap();
    let out = cmc(&["check", "primary-backup", "--set", "bug_ack_before_flush=1", "--save", f]);
    assert_eq!(out.status.code(), Some(1));
    let mut cex: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    cex["steps"][2]["fingerprint"] = serde_json::json!("00000000000000000000000000000000");
    std::fs::write(&file, cex.to_string()).unwrap();
    let out = cmc(&["replay", f]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(": step 3: "), "{stderr}");
    assert!(stderr.contains("reached fingerprint ") && stderr.contains("but the file recorded 0000"), "{stderr}");
}

#[test]
fn a_bounded_search_that_is_cut_exits_3() {
    let out = cmc(&["check", "two-phase-tla", "--search", "dfs", "--depth-max", "5"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stdout).starts_with("incomplete: depth_max = 5 reached"));
    let out = cmc(&["check", "two-phase-tla", "--search", "simulate", "--walks", "5"]);
    assert_eq!(out.status.code(), Some(3), "simulation is never a pass");
    let out = cmc(&["check", "two-phase-tla", "--set", "rms=5", "--states-max", "10"]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn bad_input_exits_2_naming_what_is_wrong() {
    for (args, expected) in [
        (&["check", "no-such-core"][..], "unknown core `no-such-core`"),
        (&["check", "two-phase-tla", "--set", "rm=3"][..], "unknown setting `rm` (known: rms)"),
        (&["check", "two-phase-tla", "--set", "rms=9"][..], "setting `rms` = 9"),
        (&["check", "two-phase-tla", "--set", "rms=300"][..], "setting `rms` = 300 is out of range (at most 255)"),
        (&["check", "two-phase", "--crashes", "256"][..], "budget `crashes` = 256 (limit budget_max = 255)"),
        (&["check", "two-phase", "--nodes", "9"][..], "9 nodes (limit nodes_max = 8"),
        (&["check", "two-phase", "--dups", "1"][..], "the dup budget needs the bag network"),
        (&["check", "two-phase-tla", "--search", "dfs"][..], "--search dfs needs --depth-max"),
        (&["replay", "/nonexistent/file.json"][..], "reading /nonexistent/file.json"),
        (&["check", "two-phase-tla", "--frobnicate"][..], "--frobnicate"),
    ] {
        let out = cmc(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(expected), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn list_shows_every_core_with_its_settings() {
    let out = cmc(&["check", "--list"]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    for name in ["two-phase-tla", "two-phase", "primary-backup", "lock-service", "--set bug_lost_wakeup=0"] {
        assert!(s.contains(name), "{name} missing from:\n{s}");
    }
}

#[test]
fn ctrl_c_stops_the_search_and_prints_the_partial_report_as_incomplete() {
    // Big enough to run for seconds: stopped long before it ends.
    let child = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(["check", "two-phase-tla", "--set", "rms=8", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    interrupt_once_caught(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the partial report, as JSON");
    assert_eq!(json["verdict"], "incomplete");
    assert_eq!(json["reason"], "interrupted (Ctrl-C)");
    assert!(json["distinct_states"].as_u64().unwrap() > 0);
}

/// Sends SIGINT to `child` once it catches it (bit 1 of SigCgt), so that
/// the signal cannot arrive before the handler.
fn interrupt_once_caught(child: &std::process::Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    await_sigint_handler(child);
    std::thread::sleep(std::time::Duration::from_millis(100));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
}

/// Waits until `child` catches SIGINT (bit 1 of SigCgt).
fn await_sigint_handler(child: &std::process::Child) {
    let status = format!("/proc/{}/status", child.id());
    let catching = || {
        std::fs::read_to_string(&status).ok().and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("SigCgt:"))?.to_string();
            u64::from_str_radix(line.trim_start_matches("SigCgt:").trim(), 16).ok()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while catching().is_none_or(|mask| mask & 2 == 0) {
        assert!(std::time::Instant::now() < deadline, "cmc never installed its SIGINT handler");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_model_file_is_checked_and_its_counterexample_replays() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = scratch("model-file");
    std::fs::create_dir_all(&dir).unwrap();
    let cc = |args: &[&str]| {
        let out = Command::new("cc").args(args).output().expect("cc runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    let include = root.to_str().unwrap().to_string();
    let program = dir.join("counter");
    let counter = root.join("examples/c/counter.c");
    cc(&["-no-pie", "-O1", "-I", &include, counter.to_str().unwrap(), "-o", program.to_str().unwrap()]);
    let props = dir.join("props.c");
    std::fs::write(
        &props,
        "#include \"cmc.h\"\nint count_below_three(const struct cmc_view *v) \
         { return v->node[0].state.len < 3 || v->node[0].state.bytes[2] < 3; }\n",
    )
    .unwrap();
    let so = dir.join("props.so");
    cc(&["-shared", "-fPIC", "-I", &include, props.to_str().unwrap(), "-o", so.to_str().unwrap()]);
    let model = dir.join("counter.toml");
    std::fs::write(
        &model,
        "program = \"counter\"\nnodes = 2\ncrashes = 1\nclients = 1\nrequest = \"+\"\n\
         properties = \"props.so\"\ninvariants = [\"count_below_three\"]\n",
    )
    .unwrap();
    let cex = dir.join("counter.cex.json");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_cmc")).args(args).output().unwrap();
    let out = run(&["--model-file", model.to_str().unwrap(), "--save", cex.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).starts_with("violation of always property `count_below_three`"));
    assert!(text(&out.stderr).contains(&format!("replay:    cmc replay {}", cex.display())));
    let out = run(&["replay", cex.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["property"], "count_below_three");

    // --det runs every step twice: the same violation, and the reproduce
    // line keeps the flag.
    let out = run(&["--model-file", model.to_str().unwrap(), "--det", "--save", cex.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).starts_with("violation of always property `count_below_three`"));
    assert!(text(&out.stderr).contains(&format!("reproduce: cmc --model-file {} --det", model.display())));
    let out = run(&["replay", cex.to_str().unwrap(), "--det"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    std::fs::write(&model, "program = \"counter\"\nnodes = 2\nclinets = 1\n").unwrap();
    let out = run(&["--model-file", model.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown field `clinets`"), "{}", text(&out.stderr));
}

/// A model file `NAME.toml` (`toml` its keys after `program`) in a fresh
/// folder beside `examples/c/PROGRAM.c`, built `-no-pie` as a user builds a
/// target.
fn program_model_file(name: &str, program: &str, toml: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = scratch(name);
    std::fs::create_dir_all(&dir).unwrap();
    let source = root.join(format!("examples/c/{program}.c"));
    let out = Command::new("cc")
        .args(["-no-pie", "-O1", "-I"])
        .arg(&root)
        .arg(&source)
        .arg("-o")
        .arg(dir.join(program))
        .arg("-lpthread")
        .output()
        .expect("cc runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let model = dir.join(format!("{name}.toml"));
    std::fs::write(&model, format!("program = \"{program}\"\n{toml}")).unwrap();
    model
}

/// How long a stopped program search may take to end before the test calls
/// it hung: a guard against waiting forever, not a measure (a stop is
/// answered within a second).
const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `cmc --model-file MODEL --json ARGS`, interrupted (SIGINT) once it
/// catches the signal if `interrupt`; kills it and fails if it runs past
/// [`HANG_GUARD`]. Returns its exit code and JSON report.
fn stopped_program_search(model: &std::path::Path, args: &[&str], interrupt: bool) -> (Option<i32>, serde_json::Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .arg("--model-file")
        .arg(model)
        .arg("--json")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if interrupt {
        interrupt_once_caught(&child);
    }
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("cmc {args:?} did not stop within {HANG_GUARD:?}:\n{}", text(&out.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: no JSON report:\n{}\n{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), json)
}

/// Issue 10, item 4: `--time-max` and Ctrl-C stop a program search whose
/// space is far too big to finish (two counter nodes with every budget at
/// 255), and it reports what it found as incomplete, with the reason.
#[test]
fn time_max_and_ctrl_c_stop_a_program_search_that_would_not_finish() {
    let model = program_model_file(
        "endless-counter",
        "counter",
        "nodes = 2\ncrashes = 255\ndrops = 255\ntimeouts = 255\ntimeout_byte = true\nclients = 255\nrequest = \"+\"\n",
    );
    let (code, json) = stopped_program_search(&model, &["--time-max", "1"], false);
    assert_eq!((code, &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    assert_eq!(json["reason"], "time_max = 1 s reached", "{json}");
    assert!(json["distinct_states"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(json["filters_installed"], 2, "{json}");

    let (code, json) = stopped_program_search(&model, &[], true);
    assert_eq!((code, &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    assert_eq!(json["reason"], "interrupted (Ctrl-C)", "{json}");

    // The checker itself holds more than a mebibyte from the start.
    let (code, json) = stopped_program_search(&model, &["--memory-max", "1M"], false);
    assert_eq!((code, &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    let reason = json["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("memory_max = 1.0 MiB reached"), "{json}");
}

/// Issue 10, item 4: a stop is answered while the supervisor waits for a
/// node that takes long to block in a modelled call (here one that never
/// does: `probe busy` loops without a system call, so the wait would last
/// the ten seconds of `stall_timeout` and end in an error).
#[test]
fn time_max_and_ctrl_c_stop_a_program_search_waiting_for_a_node() {
    let model = program_model_file("stalled-probe", "probe", "nodes = 1\nargs = [\"busy\"]\n");
    let (code, json) = stopped_program_search(&model, &["--time-max", "1"], false);
    assert_eq!((code, &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    assert_eq!(json["reason"], "time_max = 1 s reached", "{json}");

    let (code, json) = stopped_program_search(&model, &[], true);
    assert_eq!((code, &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    assert_eq!(json["reason"], "interrupted (Ctrl-C)", "{json}");
}

/// A process seen as a child of a running `cmc`: its pid and its start time
/// (in clock ticks after boot), so that a pid the kernel gives a new process
/// once this one has ended is not taken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct NodeProcess {
    pid: i32,
    started: u64,
}

/// Process `pid`'s state letter and start time, from `/proc/PID/stat`;
/// `None` if there is no such process.
fn state_and_start(pid: i32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the parenthesised command name start with the state
    // (field 3); the start time is field 22.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((fields.first()?.chars().next()?, fields.get(19)?.parse().ok()?))
}

/// Whether `p` is gone: no such process, another process with its pid, or
/// a zombie (dead, and waiting only for whoever inherited it to reap it).
fn gone(p: NodeProcess) -> bool {
    match state_and_start(p.pid) {
        None => true,
        Some((state, started)) => started != p.started || matches!(state, 'Z' | 'X'),
    }
}

/// The live children of process `pid` (every thread's), in pid order.
fn live_children(pid: u32) -> Vec<NodeProcess> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out };
    for task in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else { continue };
        for child in list.split_whitespace().filter_map(|c| c.parse::<i32>().ok()) {
            if let Some((state, started)) = state_and_start(child) {
                let p = NodeProcess { pid: child, started };
                if !matches!(state, 'Z' | 'X') {
                    out.push(p);
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// Nodes of the model [`cmc_signalled_mid_search`] runs.
const SIGNALLED_NODES: usize = 2;

/// Issue 10, item 3: runs `cmc` on a program search that would not finish
/// (two probe nodes, every budget at 255) until it has many snapshots
/// alive, collects every node process it has (template, life or snapshot:
/// all are children of `cmc`, forked with `CLONE_PARENT`), sends it
/// `signal`, and asserts that none of them outlives it. A probe that loses
/// its checker lingers (examples/c/probe.c), so what ends it is the
/// checker's doing: the engine's drop, or the death signal every node
/// process sets. Returns how `cmc` ended and what it printed on stdout.
fn cmc_signalled_mid_search(name: &str, signal: nix::sys::signal::Signal) -> (std::process::ExitStatus, Vec<u8>) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let model = program_model_file(
        name,
        "probe",
        &format!(
            "nodes = {SIGNALLED_NODES}\ncrashes = 255\ndrops = 255\ntimeouts = 255\ntimeout_byte = true\nclients = 255\n"
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .arg("--model-file")
        .arg(&model)
        .arg("--json")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if signal == Signal::SIGINT {
        await_sigint_handler(&child);
    }
    // A template and a running life per node at most: past twice that,
    // at least as many again are snapshots.
    let enough = 4 * SIGNALLED_NODES;
    let mut seen: Vec<NodeProcess> = Vec::new();
    let started = std::time::Instant::now();
    loop {
        let live = live_children(child.id());
        let count = live.len();
        seen.extend(live);
        if count >= enough {
            break;
        }
        if started.elapsed() > HANG_GUARD || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("cmc never had {enough} node processes alive at once:\n{}", text(&out.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    seen.extend(live_children(child.id()));
    seen.sort_unstable();
    seen.dedup();
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    let stopped = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if stopped.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("cmc did not end within {HANG_GUARD:?} of {signal}:\n{}", text(&out.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    // The kernel kills the nodes (their death signal) and whoever inherits
    // them reaps them: wait for it, without timing it.
    let deadline = std::time::Instant::now() + HANG_GUARD;
    while !seen.iter().all(|&p| gone(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left: Vec<NodeProcess> = seen.iter().copied().filter(|&p| !gone(p)).collect();
    assert!(
        left.is_empty(),
        "{} of the {} node processes seen outlived cmc ended by {signal}: {left:?}\n{}",
        left.len(),
        seen.len(),
        text(&out.stderr)
    );
    (out.status, out.stdout)
}

#[test]
fn no_node_outlives_cmc_ended_by_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    let (status, _) = cmc_signalled_mid_search("sigterm-probe", nix::sys::signal::Signal::SIGTERM);
    assert_eq!(status.signal(), Some(nix::libc::SIGTERM), "cmc does not catch SIGTERM: {status}");
}

/// Ctrl-C ends the search as incomplete, and the engine's drop kills what
/// is left.
#[test]
fn no_node_outlives_cmc_stopped_by_ctrl_c() {
    let (status, stdout) = cmc_signalled_mid_search("sigint-probe", nix::sys::signal::Signal::SIGINT);
    let json: serde_json::Value = serde_json::from_slice(&stdout).expect("the partial report, as JSON");
    assert_eq!((status.code(), &json["verdict"]), (Some(3), &"incomplete".into()), "{json}");
    assert_eq!(json["reason"], "interrupted (Ctrl-C)", "{json}");
}

/// No destructor runs: only the nodes' death signal ends them (the
/// library's checker killed with nodes and snapshots alive is in
/// `cmc/tests/process_lifecycle.rs`; this is the `cmc` command mid-search).
#[test]
fn no_node_outlives_cmc_killed_by_sigkill() {
    use std::os::unix::process::ExitStatusExt;
    let (status, _) = cmc_signalled_mid_search("sigkill-probe", nix::sys::signal::Signal::SIGKILL);
    assert_eq!(status.signal(), Some(nix::libc::SIGKILL), "{status}");
}

/// Hostile input of each kind the command reads (issue 12, item 8; the
/// fuzz targets' findings among them) exits 2 with an error, not a panic
/// (101), an abort or a crash.
#[test]
fn hostile_inputs_exit_2_not_a_panic() {
    let regressions = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let deep_sets = regressions.join("cfg/sets-nested-50000-deep.cfg");
    let error_not_enabled = regressions.join("counterexample/error-action-not-enabled.json");
    let model = scratch("hostile.toml");
    std::fs::write(&model, "program = \"/bin/true\"\nnodes = [[[[\n").unwrap();
    for (args, expected) in [
        (vec!["calibrate", "--config", deep_sets.to_str().unwrap(), "MCDiskPaxos"], "sets nested more than 4 deep"),
        (vec!["replay", error_not_enabled.to_str().unwrap()], "FLUSH(0) is not enabled"),
        (vec!["--model-file", model.to_str().unwrap()], "TOML parse error"),
        (vec!["check", "lock-service", "--set", "bug_lost_wakeup"], "--set bug_lost_wakeup: expected KEY=VALUE"),
    ] {
        let out = cmc(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Sends one raw HTTP request to `address` and returns its status code.
fn http_status(address: &str, request: &str) -> u16 {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).expect("the explorer listens");
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
}

/// `cmc explore` answers only requests that name its own loopback address,
/// and changes its walk only for JSON, which another site's page cannot
/// send it without a preflight: a page of any site the user visits must
/// not drive it.
#[test]
fn the_explorer_answers_only_its_own_address_and_json() {
    use std::io::BufRead as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(["explore", "two-phase", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cmc runs");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("the address is printed").to_string();
    let address = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let post = |host: &str, content_type: &str, body: &str| {
        format!(
            "POST /api/take HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let get = |host: &str| format!("GET /api/state HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let statuses = [
        http_status(&address, &get(&address)),
        http_status(&address, &get("evil.example")),
        http_status(&address, &post(&address, "text/plain", "\"INIT(0)\"")),
        http_status(&address, &post(&address, "application/json", "\"INIT(0)\"")),
        http_status(&address, &post(&address, "application/json", "\"NOT-AN-ACTION\"")),
    ];
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(statuses, [200, 403, 415, 200, 400], "own GET, foreign Host, plain POST, JSON POST, bad token");
}

/// A C core's model file run from its own folder, naming its library with
/// no folder (`core = "libNAME.so"`): the library beside the file, not one
/// of the system's (dlopen searches the system's library path for a name
/// without a `/`). Its counterexample replays from the model file.
#[test]
fn a_c_core_model_file_loads_its_library_beside_it_and_replays() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = scratch("c-core");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bug) in [("libtwo_phase.so", None), ("libtwo_phase-bug.so", Some("-DBUG_COMMIT_ON_TIMEOUT=1"))] {
        let mut cc = Command::new("cc");
        cc.args(["-std=c11", "-O1", "-fPIC", "-shared", "-I"]).arg(&root).args(bug);
        let out = cc.arg(root.join("examples/ccores/two_phase.c")).arg("-o").arg(dir.join(name)).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let keys = "nodes = 3\ncrashes = 1\ninvariants = [\"atomicity\", \"commit_needs_all_yes\"]\n";
    std::fs::write(dir.join("two-phase.toml"), format!("core = \"libtwo_phase.so\"\n{keys}")).unwrap();
    std::fs::write(dir.join("bug.toml"), format!("core = \"libtwo_phase-bug.so\"\n{keys}")).unwrap();
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_cmc")).current_dir(&dir).args(args).output().unwrap();
    let out = run(&["--model-file", "two-phase.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).starts_with("pass (bfs; 3,402 distinct states, 11,464 generated, depth 15)"));

    let out = run(&["--model-file", "bug.toml", "--save", "bug.cex.json"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).starts_with("violation of always property `commit_needs_all_yes`"));
    assert!(text(&out.stderr).contains("reproduce: cmc --model-file bug.toml"), "{}", text(&out.stderr));
    let out = run(&["replay", "bug.cex.json", "--det"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("violation of always property `commit_needs_all_yes` (replay(bfs)"));
}

//! `cmc check --distributed` and `cmc calibrate --distributed` as users run
//! them: two processes over loopback give the one-thread report, and a
//! process that is killed, stopped, never comes, or runs another check makes the
//! others end with an error, never a pass and never a hang.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CMC: &str = env!("CARGO_BIN_EXE_cmc");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("distributed");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A hostfile of `n` loopback addresses on ports free when it is written.
fn hostfile(name: &str, n: usize) -> PathBuf {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let lines: Vec<String> = listeners.iter().map(|l| l.local_addr().unwrap().to_string()).collect();
    let path = scratch(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn process(args: &[&str], hosts: &Path, processes: usize, p: usize, extra: &[&str]) -> Child {
    let p = p.to_string();
    let n = processes.to_string();
    Command::new(CMC)
        .args(args)
        .args(["--distributed", "--processes", &n, "--process", &p, "--hostfile", hosts.to_str().unwrap()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cmc starts")
}

/// Runs every process of a search; their outputs by process index.
fn run_all(args: &[&str], name: &str, processes: usize, extra: &[&str]) -> Vec<Output> {
    let hosts = hostfile(name, processes);
    let children: Vec<Child> = (0..processes).rev().map(|p| process(args, &hosts, processes, p, extra)).collect();
    let mut outs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    outs.reverse();
    outs
}

/// The JSON report without its time.
fn report(out: &Output) -> serde_json::Value {
    let mut json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("a JSON report: {}", text(&out.stderr)));
    json["elapsed_s"] = 0.into();
    json["chart"] = serde_json::Value::Null;
    json
}

fn one_thread(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = Command::new(CMC).args(args).args(["--threads", "1"]).output().unwrap();
    (out.status.code(), report(&out))
}

#[test]
fn two_processes_give_the_one_thread_counts_on_two_phase_n7() {
    let args = ["check", "two-phase-tla", "--set", "rms=7", "--json"];
    let (code, expected) = one_thread(&args);
    let outs = run_all(&args, "n7.hosts", 2, &["--workers", "2"]);
    assert_eq!(outs[0].status.code(), code, "{}", text(&outs[0].stderr));
    assert_eq!(outs[1].status.code(), code, "{}", text(&outs[1].stderr));
    assert_eq!(report(&outs[0]), expected);
    assert_eq!(expected["distinct_states"], 296_448);
    assert!(outs[1].stdout.is_empty(), "only process 0 prints the report");
    assert!(
        text(&outs[1].stderr).contains("process 1: pass (bfs; 296,448 distinct states"),
        "{}",
        text(&outs[1].stderr)
    );
}

#[test]
fn two_processes_give_tlcs_counts_on_disk_paxos_c13() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../calibration/configs/c13.cfg");
    let args = ["calibrate", "--config", config, "MCDiskPaxos", "--json"];
    let (code, expected) = one_thread(&args);
    let outs = run_all(&args, "c13.hosts", 2, &["--workers", "1"]);
    assert_eq!(outs[0].status.code(), code, "{}", text(&outs[0].stderr));
    assert_eq!(outs[1].status.code(), code, "{}", text(&outs[1].stderr));
    assert_eq!(report(&outs[0]), expected);
    assert_eq!(
        (expected["distinct_states"].as_u64(), expected["generated_states"].as_u64()),
        (Some(448_280), Some(4_537_461))
    );
}

#[test]
fn a_violation_over_three_processes_is_one_threads_counterexample() {
    let saved = scratch("lost-wakeup.cex.json");
    let one = scratch("lost-wakeup-one.cex.json");
    let args = ["check", "lock-service", "--set", "bug_lost_wakeup=1", "--json"];
    let out = Command::new(CMC).args(args).args(["--threads", "1", "--save", one.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let outs = run_all(&args, "wakeup.hosts", 3, &["--workers", "1", "--save", saved.to_str().unwrap()]);
    for o in &outs {
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    }
    assert_eq!(report(&outs[0]), report(&out));
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), std::fs::read_to_string(&one).unwrap());
    assert!(text(&outs[0].stderr).contains("reproduce: cmc check lock-service"), "{}", text(&outs[0].stderr));
}

/// A C core from a model file (`cmc --model-file`): two processes give one
/// thread's report and counterexample file; a program's model file is
/// refused.
#[test]
fn a_c_core_model_file_over_two_processes_is_one_threads_check() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = scratch("c-core");
    std::fs::create_dir_all(&dir).unwrap();
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-O1", "-fPIC", "-shared", "-DBUG_COMMIT_ON_TIMEOUT=1", "-I"]).arg(&root);
    let out = cc.arg(root.join("examples/ccores/two_phase.c")).arg("-o").arg(dir.join("libbug.so")).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let keys = "nodes = 3\ncrashes = 1\ninvariants = [\"atomicity\", \"commit_needs_all_yes\"]\n";
    let file = dir.join("bug.toml");
    std::fs::write(&file, format!("core = \"{}\"\n{keys}threads = 1\n", dir.join("libbug.so").display())).unwrap();
    let (one, many) = (dir.join("one.cex.json"), dir.join("many.cex.json"));
    let args = ["--model-file", file.to_str().unwrap(), "--json"];
    let out = Command::new(CMC).args(args).args(["--save", one.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let outs = run_all(&args, "c-core.hosts", 2, &["--workers", "1", "--save", many.to_str().unwrap()]);
    for o in &outs {
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    }
    assert_eq!(report(&outs[0]), report(&out));
    assert_eq!(report(&out)["property"], "commit_needs_all_yes");
    assert_eq!(std::fs::read_to_string(&many).unwrap(), std::fs::read_to_string(&one).unwrap());
    assert!(text(&outs[0].stderr).contains("reproduce: cmc --model-file"), "{}", text(&outs[0].stderr));

    let program = root.join("examples/c/register.toml");
    let out = Command::new(CMC).args(["--model-file", program.to_str().unwrap(), "--distributed"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--distributed searches cores only"), "{}", text(&out.stderr));
}

/// Waits for `child` at most `limit`; kills it and fails when it is not done.
fn wait_at_most(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().ok();
            let out = child.wait_with_output().unwrap();
            panic!("{what}: still running after {limit:?}: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_killed_process_ends_the_others_with_an_error() {
    // Two-phase commit over six nodes takes far longer than the test.
    let args = ["check", "two-phase", "--nodes", "6", "--crashes", "1", "--time-max", "120"];
    let hosts = hostfile("kill.hosts", 2);
    let victim = process(&args, &hosts, 2, 1, &["--workers", "1"]);
    let survivor = process(&args, &hosts, 2, 0, &["--workers", "1"]);
    std::thread::sleep(Duration::from_secs(3));
    let mut victim = victim;
    assert!(victim.try_wait().unwrap().is_none(), "the run is still going when process 1 is killed");
    victim.kill().unwrap();
    victim.wait().unwrap();
    let killed = Instant::now();
    let out = wait_at_most(survivor, Duration::from_secs(60), "process 0 after process 1 was killed");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "an error, not a verdict: {stderr}");
    assert!(stderr.contains("process 0: the distributed search failed after"), "{stderr}");
    assert!(stderr.contains("lost the connection to process 1"), "{stderr}");
    assert!(out.stdout.is_empty(), "no report: {}", text(&out.stdout));
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(killed.elapsed() < Duration::from_secs(30), "ended {:?} after the kill", killed.elapsed());
}

#[test]
fn a_stopped_process_ends_the_others_with_an_error_after_the_peer_timeout() {
    // A process stopped with SIGSTOP keeps its connections open and its
    // kernel answers TCP: only its silence tells.
    let args = ["check", "two-phase", "--nodes", "6", "--crashes", "1", "--time-max", "120"];
    let hosts = hostfile("stop.hosts", 2);
    let extra = ["--workers", "1", "--peer-timeout", "3"];
    let mut stopped = process(&args, &hosts, 2, 1, &extra);
    let survivor = process(&args, &hosts, 2, 0, &extra);
    std::thread::sleep(Duration::from_secs(4));
    assert!(stopped.try_wait().unwrap().is_none(), "the run is still going when process 1 is stopped");
    let signal = |name: &str| {
        let ok = Command::new("kill").args([name, &stopped.id().to_string()]).status().unwrap().success();
        assert!(ok, "kill {name}");
    };
    signal("-STOP");
    let at = Instant::now();
    let out = wait_at_most(survivor, Duration::from_secs(60), "process 0 after process 1 was stopped");
    let waited = at.elapsed();
    signal("-KILL");
    stopped.wait().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "an error, not a verdict: {stderr}");
    assert!(stderr.contains("process 0: the distributed search failed after"), "{stderr}");
    assert!(stderr.contains("process 1 has sent nothing for 3."), "{stderr}");
    assert!(stderr.contains("(--peer-timeout 3)"), "{stderr}");
    assert!(out.stdout.is_empty(), "no report: {}", text(&out.stdout));
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(30), "ended {waited:?} after the stop");
}

#[test]
fn a_process_that_never_comes_is_an_error_after_the_connect_timeout() {
    let args = ["check", "two-phase-tla", "--set", "rms=3"];
    let hosts = hostfile("alone.hosts", 3);
    for p in [0, 2] {
        let start = Instant::now();
        let child = process(&args, &hosts, 3, p, &["--connect-timeout", "2"]);
        let out = wait_at_most(child, Duration::from_secs(30), "a process waiting for the others");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("process {p}: ")) && stderr.contains("within 2s"), "{stderr}");
        assert!(start.elapsed() >= Duration::from_secs(2), "it waited the timeout");
    }
}

#[test]
fn processes_that_run_different_checks_refuse_each_other() {
    let hosts = hostfile("mismatch.hosts", 2);
    let one = process(&["check", "two-phase-tla", "--set", "rms=3"], &hosts, 2, 1, &["--connect-timeout", "20"]);
    let zero = process(&["check", "two-phase-tla", "--set", "rms=4"], &hosts, 2, 0, &["--connect-timeout", "20"]);
    for (p, child) in [(0, zero), (1, one)] {
        let out = wait_at_most(child, Duration::from_secs(40), "a refused process");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "process {p}: {stderr}");
        assert!(stderr.contains("runs another check"), "process {p}: {stderr}");
    }
}

#[test]
fn distributed_options_are_checked() {
    for (args, says) in [
        (vec!["check", "two-phase-tla", "--workers", "2"], "--distributed"),
        (vec!["check", "two-phase-tla", "--distributed", "--processes", "2", "--process", "2"], "--process 2"),
        (vec!["check", "two-phase-tla", "--distributed", "--symmetry"], "symmetry"),
        (vec!["check", "two-phase-tla", "--distributed", "--search", "dfs", "--depth-max", "3"], "breadth-first"),
        (
            vec!["check", "two-phase-tla", "--distributed", "--processes", "3", "--hostfile", "/nonexistent"],
            "/nonexistent",
        ),
        (vec!["check", "two-phase-tla", "--distributed", "--peer-timeout", "0"], "--peer-timeout 0"),
        // Below four heartbeats, a late beat would pass for a stall.
        (vec!["check", "two-phase-tla", "--distributed", "--peer-timeout", "1.5"], "--peer-timeout 1.5: below 2 s"),
        (vec!["check", "two-phase-tla", "--distributed", "--connect-timeout", "inf"], "--connect-timeout inf"),
    ] {
        let out = Command::new(CMC).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
}

/// Needs root (a private network namespace): `.ci/run` runs it with
/// `--ignored`. Both processes run in a namespace whose loopback is taken
/// down mid-run, so their connections get no FIN and no RST, as when a
/// host loses power: keepalive and TCP_USER_TIMEOUT must end the wait.
#[test]
#[ignore = "needs root: run with --ignored (.ci/run does)"]
fn a_host_that_vanishes_ends_the_others_with_an_error() {
    let hosts = scratch("vanish.hosts");
    std::fs::write(&hosts, "127.0.0.1:24501\n127.0.0.1:24502\n").unwrap();
    let err = scratch("vanish.p1.err");
    let run = |p: usize, redirect: &str| {
        format!(
            "{CMC} check two-phase --nodes 6 --crashes 1 --time-max 120 --distributed --workers 1 --processes 2 \
             --process {p} --hostfile {} {redirect}",
            hosts.display()
        )
    };
    let script = format!(
        "ip link set lo up && {} & {} & p0=$!; sleep 3; ip link set lo down; start=$(date +%s); wait $p0; \
         code=$?; echo \"exit $code after $(( $(date +%s) - start )) s\"; wait",
        run(1, &format!("2> {} > /dev/null", err.display())),
        run(0, "")
    );
    let out = Command::new("unshare").args(["-n", "sh", "-c", &script]).output().expect("unshare runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "unshare -n failed (root is needed): {stderr}");
    let line = stdout.lines().last().unwrap_or_default();
    let seconds: u64 = line.rsplit(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
    assert!(line.starts_with("exit 2 after"), "process 0 ended with an error: {line}: {stderr}");
    assert!(seconds <= 40, "within keepalive's bound, not a hang: {line}");
    assert!(stderr.contains("lost the connection to process 1"), "{stderr}");
    let p1 = std::fs::read_to_string(&err).unwrap();
    assert!(p1.contains("lost the connection to process 0"), "process 1: {p1}");
}

#[test]
fn processes_whose_models_differ_only_in_their_properties_refuse_each_other() {
    // The identity the connection handshake compares has no properties:
    // the workers' first round compares them.
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../calibration/configs/c01.cfg");
    let fewer = scratch("c01-fewer-invariants.cfg");
    let cfg = std::fs::read_to_string(config).unwrap().replace(" Validity OutputIsChosen", "");
    std::fs::write(&fewer, cfg).unwrap();
    let hosts = hostfile("properties.hosts", 2);
    let run = |cfg: &str, p| process(&["calibrate", "--config", cfg, "MCDiskPaxos"], &hosts, 2, p, &["--workers", "1"]);
    let one = run(fewer.to_str().unwrap(), 1);
    let zero = run(config, 0);
    for (p, child) in [(0, zero), (1, one)] {
        let out = wait_at_most(child, Duration::from_secs(40), "a process of another model");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "process {p}: {stderr}");
        assert!(stderr.contains("checks another model"), "process {p}: {stderr}");
    }
}

//! Costs of the process front end, printed, never asserted (STYLE: timings
//! belong in benchmarks). Run by hand:
//!
//! ```text
//! cargo test -p cmc --release --test process_cost -- --ignored --nocapture
//! ```
#![cfg(target_os = "linux")]

mod process_support;

use std::time::{Duration, Instant};

use cmc::process::{Budgets, Config, ProcessEngine, ProcessExplorer, model_file};
use cmc::{NoControl, Search, explore_keeping};
use process_support::{actions, config, preload, repo};

const RUNS: u32 = 200;

fn show(label: &str, total: Duration, count: u64) {
    let us = total.as_secs_f64() * 1e6 / count as f64;
    println!("{label:<60} {us:>9.1} µs");
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn costs(label: &str, c: Config, tokens: &[&str]) {
    let prefix = actions(tokens);
    let mut e = ProcessEngine::new(c).expect("valid");
    let (mut start, mut stop, mut replay, mut last) = Default::default();
    let (mut start_notifs, mut replay_notifs) = (0, 0);
    for _ in 0..RUNS {
        let n0 = e.stats().notifications;
        start += timed(|| drop(e.initial().expect("starts")));
        let n1 = e.stats().notifications;
        stop += timed(|| e.stop());
        replay += timed(|| drop(e.replay(&prefix).expect("replays")));
        replay_notifs += e.stats().notifications - n1;
        start_notifs += n1 - n0;
        e.replay(&prefix[..prefix.len() - 1]).expect("replays");
        last += timed(|| drop(e.apply(&prefix[..prefix.len() - 1], &prefix[prefix.len() - 1]).expect("applies")));
    }
    let k = prefix.len() as u64;
    println!("{label}");
    show("  start every node to quiescence", start, RUNS as u64);
    println!("      notifications: {:.1}", start_notifs as f64 / RUNS as f64);
    show("  kill and reap every node", stop, RUNS as u64);
    show(&format!("  replay of {k} actions from scratch (stop, start, actions)"), replay, RUNS as u64);
    show(
        "  per action within a replay ((replay - stop - start) / k)",
        replay.saturating_sub(start + stop),
        RUNS as u64 * k,
    );
    println!("      notifications per action: {:.1}", (replay_notifs - start_notifs) as f64 / (RUNS as u64 * k) as f64);
    show(&format!("  one action on running processes ({})", prefix[prefix.len() - 1]), last, RUNS as u64);
}

#[test]
#[ignore = "measurement: prints costs, run by hand with --ignored --nocapture"]
fn process_front_costs() {
    let mut c = config("counter", 3);
    c.budgets = Budgets { crashes: 1, drops: 0, timeouts: 4, clients: 2, ..Default::default() };
    c.request = b"+".to_vec();
    let tokens = [
        "ACCEPT(0, 1)",
        "DELIVER(0, 1.0)",
        "DELIVER(1, 1.0)",
        "EOF(0, 1.0)",
        "CLIENT(0)",
        "ACCEPT(0, client)",
        "DELIVER(0, c0.0)",
        "TIMEOUT(0)",
        "ACCEPT(0, 2)",
        "DELIVER(0, 2.0)",
    ];
    costs("counter, 3 nodes, pinned to one CPU", c.clone(), &tokens);
    c.pin_cpu = false;
    costs("counter, 3 nodes, not pinned", c.clone(), &tokens);
    c.pin_cpu = true;
    c.nodes = 1;
    costs("counter, 1 node, pinned", c, &["CLIENT(0)", "ACCEPT(0, client)", "DELIVER(0, c0.0)"]);
    let mut crash = config("counter", 3);
    crash.budgets.crashes = 1;
    costs("counter, 3 nodes, CRASH(0) and its restart", crash, &["CRASH(0)"]);
}

/// Breadth-first search of an example program's model file to depth 20:
/// world expansions per second, process starts per expansion, and where
/// the time goes (starts, actions, teardown, from this run's unit costs).
fn bfs_to_depth_20(name: &str) {
    let dir = repo().join("examples/c");
    let out = std::process::Command::new("make").arg("-s").arg("-C").arg(&dir).output().expect("make runs");
    assert!(out.status.success(), "make -C examples/c failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let mut m = model_file::read(&dir.join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{e}"));
    m.model.config.preload = Some(preload());
    let mut options = m.options;
    options.search = Search::Bfs { depth_max: Some(20) };

    // Unit costs on this machine, now: a start of every node, one action,
    // a teardown.
    let mut e = ProcessEngine::new(m.model.config.clone()).expect("valid");
    let (mut start, mut stop) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..RUNS {
        start += timed(|| drop(e.initial().expect("starts")));
        stop += timed(|| e.stop());
    }
    let (start, stop) = (start / RUNS, stop / RUNS);
    drop(e);

    let explorer = ProcessExplorer::new(&m.model).expect("valid model");
    let t = Instant::now();
    let (report, explorer) = explore_keeping(explorer, &options, &mut NoControl);
    let elapsed = t.elapsed();
    let stats = explorer.stats();
    let expansions = report.distinct_states;
    println!("{name}, 3 nodes, BFS to depth 20: {}", report.summary());
    println!("  elapsed                          {:>9.1} s", elapsed.as_secs_f64());
    println!("  world expansions per second      {:>9.1}", expansions as f64 / elapsed.as_secs_f64());
    println!("  replays (all nodes started)      {:>9}", stats.replays);
    println!("  process starts                   {:>9}", stats.spawns);
    println!("  process starts per expansion     {:>9.2}", stats.spawns as f64 / expansions as f64);
    println!("  actions applied (replayed incl.) {:>9}", stats.actions);
    let starts = start * stats.replays as u32;
    let stops = stop * stats.replays as u32;
    let rest = elapsed.saturating_sub(starts + stops);
    let pct = |d: Duration| 100.0 * d.as_secs_f64() / elapsed.as_secs_f64();
    println!(
        "  split: starts {:.0}% ({:.2} ms each), teardown {:.0}% ({:.2} ms each), actions and search {:.0}% ({:.1} µs per action)",
        pct(starts),
        start.as_secs_f64() * 1e3,
        pct(stops),
        stop.as_secs_f64() * 1e3,
        pct(rest),
        rest.as_secs_f64() * 1e6 / stats.actions.max(1) as f64
    );
}

#[test]
#[ignore = "measurement: prints costs, run by hand with --ignored --nocapture"]
fn bfs_to_depth_20_costs() {
    bfs_to_depth_20("register");
    bfs_to_depth_20("election");
}

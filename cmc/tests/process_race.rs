//! Several supervisors on concurrent threads of one process. A node spawned
//! by one (`clone` without `CLONE_FILES`) holds copies of every descriptor
//! of the process until its `close_range`, so a pidfd or listener another
//! supervisor closes meanwhile stays alive; its epoll registration must not
//! outlive the close, or a killed process's exit reads as the exit of the
//! node that replaced it and the supervisor waits for a live node for ever.
//! A deadlock here aborts the test binary through a watchdog rather than
//! hanging it.
//!
//! Before the supervisor deleted its registrations before closing, the
//! short test deadlocked in each of three runs on two CPUs.
#![cfg(target_os = "linux")]

mod process_support;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cmc::process::{Config, Life, ProcessEngine};
use process_support::{actions, config};

const WATCHDOG: Duration = Duration::from_secs(120);

/// The counter with one crash: each replay kills and restarts node 0
/// mid-run, on top of the kill of every node at the next replay's start.
fn counter() -> Config {
    let mut c = config("counter", 2);
    c.budgets = cmc::process::Budgets { crashes: 1, drops: 0, timeouts: 0, clients: 0, ..Default::default() };
    c.request = b"+".to_vec();
    c.pin_cpu = false;
    // Whole steps, the sequences below name them (crash points are
    // `process_crash_points.rs`'s).
    c.crash_points = false;
    c
}

/// Runs `threads` engines on their own threads, each replaying the counter
/// `replays` times (alternating two action sequences), checking every
/// world. Aborts the process if no replay ends for [`WATCHDOG`]: a
/// deadlocked thread stops, the others finish, and then nothing moves.
fn race(threads: usize, replays: usize) {
    let cfg = counter();
    // Build the program and write out the preload before the clock starts.
    drop(ProcessEngine::new(cfg.clone()).expect("valid config"));
    let done = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let watchdog = {
        let (done, progress) = (done.clone(), progress.clone());
        std::thread::spawn(move || {
            let (mut seen, mut since) = (0, Instant::now());
            while !done.load(Ordering::SeqCst) {
                let now = progress.load(Ordering::SeqCst);
                if now != seen {
                    (seen, since) = (now, Instant::now());
                }
                if since.elapsed() > WATCHDOG {
                    // Straight to fd 2: the test harness's capture of
                    // `eprintln!` would be lost with the abort.
                    let _ = writeln!(
                        std::io::stderr(),
                        "process_race: {threads} supervisors on concurrent threads made no progress for {}s \
                         ({} of {} replays done): deadlock; aborting",
                        WATCHDOG.as_secs(),
                        progress.load(Ordering::SeqCst),
                        threads * replays
                    );
                    std::process::abort();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    // The server crashes before it reads the request: the client's read
    // ends with the reset (ECONNRESET, '?').
    let crash = actions(&["ACCEPT(0, 1)", "CRASH(0)", "RESTART(0)", "EOF(1, 1.0)"]);
    let serve = actions(&["ACCEPT(0, 1)", "DELIVER(0, 1.0)", "DELIVER(1, 1.0)"]);
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (cfg, crash, serve, progress) = (cfg.clone(), crash.clone(), serve.clone(), progress.clone());
            std::thread::spawn(move || {
                let mut e = ProcessEngine::new(cfg).expect("valid config");
                for i in 0..replays {
                    let crashed = (i + t) % 2 == 0;
                    let w = e
                        .replay(if crashed { &crash } else { &serve })
                        .unwrap_or_else(|err| panic!("thread {t}, replay {i}: {err}"));
                    if crashed {
                        assert_eq!(w.nodes[0].state, [0, 1, 0, 0], "thread {t}, replay {i}: nothing to recover");
                        assert_eq!(w.nodes[1].state, [1, 4, b'?', 0], "thread {t}, replay {i}");
                    } else {
                        assert_eq!(w.nodes[0].state, [0, 2, 1, 0], "thread {t}, replay {i}");
                        assert_eq!(w.nodes[1].state, [1, 4, 1, 0], "thread {t}, replay {i}");
                        assert_eq!(w.nodes[1].life, Life::Exited(0), "thread {t}, replay {i}");
                    }
                    progress.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
    done.store(true, Ordering::SeqCst);
    watchdog.join().expect("the watchdog ends");
    for r in results {
        if let Err(panic) = r {
            std::panic::resume_unwind(panic);
        }
    }
    println!("process_race: {threads} threads x {replays} replays in {:.1}s", started.elapsed().as_secs_f64());
}

#[test]
fn concurrent_supervisors_do_not_deadlock() {
    race(3, 150);
}

#[test]
#[ignore = "stress: minutes"]
fn concurrent_supervisors_do_not_deadlock_under_stress() {
    race(4, 3000);
}

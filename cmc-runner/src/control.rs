//! Watching a search from outside: the time cap, Ctrl-C and the progress
//! line. The engine has no clock; this is where time lives.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cmc::{Control, Progress, Stop};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: nix::libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes Ctrl-C stop the running search (it then reports incomplete with
/// what it found so far) instead of killing the process. A second Ctrl-C
/// kills as usual.
pub fn catch_interrupt() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(SigHandler::Handler(on_sigint), SaFlags::SA_RESETHAND, SigSet::empty());
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    let _ = unsafe { sigaction(Signal::SIGINT, &action) };
}

/// A [`Control`] with an optional time cap, Ctrl-C, and a progress line on
/// stderr when stderr is a terminal and the run is long.
pub struct RunControl {
    start: Instant,
    time_max: Option<Duration>,
    progress: bool,
    last_progress: Instant,
}

impl RunControl {
    /// A control that stops the search after `time_max` (none: no cap),
    /// drawing the progress line when stderr is a terminal.
    pub fn new(time_max: Option<Duration>) -> RunControl {
        let now = Instant::now();
        RunControl { start: now, time_max, progress: std::io::stderr().is_terminal(), last_progress: now }
    }

    /// A control with no progress line (for tests, whose output libtest
    /// owns).
    pub fn quiet(time_max: Option<Duration>) -> RunControl {
        RunControl { progress: false, ..RunControl::new(time_max) }
    }

    /// Seconds since the control was made, which reports record.
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Clears the progress line, if one was drawn.
    pub fn finish(&self) {
        if self.progress && self.last_progress != self.start {
            eprint!("\r\x1b[2K");
        }
    }
}

/// The progress line: elapsed time, depth, counts, the worlds left at the
/// depth being expanded (BFS), and distinct states per second.
pub fn progress_line(p: &Progress, elapsed: Duration) -> String {
    use cmc::report::count;
    let rate = (p.distinct_states as f64 / elapsed.as_secs_f64().max(1e-9)) as u64;
    let left = match p.level {
        Some((depth, left)) => format!(" ({} left to expand at depth {depth})", count(left)),
        None => String::new(),
    };
    format!(
        "{:.0} s: depth {}, {}{left}, {} generated, {} distinct/s",
        elapsed.as_secs_f64(),
        p.depth,
        cmc::report::states(p.distinct_states, "distinct state"),
        count(p.generated_states),
        count(rate)
    )
}

/// Why a run that started at `start` should stop: Ctrl-C, or its time cap.
fn stop_reason(start: Instant, time_max: Option<Duration>) -> Option<String> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Some("interrupted (Ctrl-C)".to_string());
    }
    match time_max {
        Some(max) if start.elapsed() >= max => Some(format!("time_max = {} s reached", max.as_secs_f64())),
        _ => None,
    }
}

impl Control for RunControl {
    fn poll(&mut self, p: &Progress) -> Option<String> {
        if let Some(reason) = stop_reason(self.start, self.time_max) {
            return Some(reason);
        }
        let elapsed = self.start.elapsed();
        if self.progress
            && elapsed >= Duration::from_secs(2)
            && self.last_progress.elapsed() >= Duration::from_millis(500)
        {
            self.last_progress = Instant::now();
            eprint!("\r\x1b[2K{}", progress_line(p, elapsed));
            let _ = std::io::stderr().flush();
        }
        None
    }

    /// The same checks, for the process front end to make while it waits
    /// for its nodes inside one step.
    fn stop(&self) -> Option<Stop> {
        let (start, time_max) = (self.start, self.time_max);
        Some(Stop::new(move || stop_reason(start, time_max)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_gives_time_rate_and_what_is_left_at_the_depth() {
        let p =
            Progress { distinct_states: 1_234_567, generated_states: 4_000_000, depth: 14, level: Some((13, 98_765)) };
        assert_eq!(
            progress_line(&p, Duration::from_secs(10)),
            "10 s: depth 14, 1,234,567 distinct states (98,765 left to expand at depth 13), 4,000,000 generated, \
             123,456 distinct/s"
        );
        let p = Progress { level: None, distinct_states: 1, ..p };
        assert!(progress_line(&p, Duration::from_secs(1)).starts_with("1 s: depth 14, 1 distinct state, 4,000,000"));
    }
}

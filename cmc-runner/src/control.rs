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
    /// Stop when this process's resident memory reaches this many bytes.
    memory_max: Option<u64>,
    /// When resident memory was last read: at most every [`MEMORY_EVERY`].
    last_memory: Instant,
    progress: bool,
    last_progress: Instant,
}

/// How often a poll reads this process's resident memory.
const MEMORY_EVERY: Duration = Duration::from_millis(20);

impl RunControl {
    /// A control that stops the search after `time_max` (none: no cap),
    /// drawing the progress line when stderr is a terminal.
    pub fn new(time_max: Option<Duration>) -> RunControl {
        let now = Instant::now();
        RunControl {
            start: now,
            time_max,
            memory_max: None,
            last_memory: now,
            progress: std::io::stderr().is_terminal(),
            last_progress: now,
        }
    }

    /// The same control, stopping the search (incomplete) once this
    /// process's resident memory reaches `memory_max` bytes (none: no cap).
    /// Memory is read from `/proc/self/status` at most every 20 ms, so a
    /// search stops a little past the cap, never long after.
    pub fn with_memory_max(self, memory_max: Option<u64>) -> RunControl {
        RunControl { memory_max, ..self }
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
/// This process's resident memory (`VmRSS` in `/proc/self/status`);
/// `None` where it cannot be read (no cap is enforced there).
pub fn resident_bytes() -> Option<u64> {
    kib_field("/proc/self/status", "VmRSS:").map(|kib| kib * 1024)
}

/// A `NAME: N kB` line of a `/proc` file.
fn kib_field(file: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// The memory cap a search gets by default: nine tenths of the memory the
/// machine has available now (`MemAvailable` in `/proc/meminfo`), so that a
/// search stops, incomplete, before the machine swaps. `None` where that
/// cannot be read.
pub fn memory_max_default() -> Option<u64> {
    kib_field("/proc/meminfo", "MemAvailable:").map(|kib| kib * 1024 / 10 * 9)
}

/// A memory size as people write it: bytes, or a number with `K`, `M`, `G`
/// or `T` (powers of 1024; `KiB`, `MB` and the like are read the same way),
/// such as `512M` or `1.5G`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: f64 =
        number.parse().map_err(|_| format!("`{text}` is not a size (say 4G, 512M or a number of bytes)"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (K, M, G or T)")),
    };
    let bytes = number * (1u64 << shift) as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("`{text}` is not a size between 1 byte and 16 EiB"));
    }
    Ok(bytes as u64)
}

/// `bytes` for people: `1.5 GiB`.
fn size(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} bytes") } else { format!("{value:.1} {}", units[unit]) }
}

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
        if let Some(max) = self.memory_max
            && self.last_memory.elapsed() >= MEMORY_EVERY
        {
            self.last_memory = Instant::now();
            if let Some(resident) = resident_bytes()
                && resident >= max
            {
                return Some(format!("memory_max = {} reached ({} resident)", size(max), size(resident)));
            }
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

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1 t"), Ok(1 << 40));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("3X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn a_memory_cap_below_what_the_process_holds_stops_the_search() {
        let resident = resident_bytes().expect("this test runs on Linux");
        let p = Progress::default();
        let mut under = RunControl::quiet(None).with_memory_max(Some(resident * 4));
        let mut over = RunControl::quiet(None).with_memory_max(Some(resident / 2));
        std::thread::sleep(MEMORY_EVERY * 2);
        assert_eq!(under.poll(&p), None);
        let reason = over.poll(&p).expect("the cap is below the resident memory");
        assert!(reason.starts_with("memory_max = ") && reason.ends_with(" resident)"), "{reason}");
        assert!(memory_max_default().is_some_and(|m| m > 0));
    }
}

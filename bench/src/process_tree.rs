//! The memory of a process and all its descendants together, sampled from
//! `/proc` while it runs: a program search's checker and its node
//! processes. The snapshots a checkpointing search keeps are processes of
//! their own (parked forks, children of the checker via `CLONE_PARENT`), so
//! the checker's own peak RSS says little; the sum of every process's
//! proportional set size (`Pss` in `/proc/PID/smaps_rollup`) counts a page
//! that N forks share once, as 1/N in each.
//!
//! Descendants are found by parent pid, from `/proc/*/stat`: this kernel
//! may lack `CONFIG_PROC_CHILDREN` (`/proc/PID/task/TID/children`). This
//! module measures; it does not start or stop any process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Time between the end of one sample and the start of the next.
pub const SAMPLE_INTERVAL_MS: u64 = 50;

/// The largest figures seen over a process tree's samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct Peak {
    /// The largest sum of `Pss` over the root and its descendants.
    pub pss_kib: u64,
    /// The largest number of live processes in the tree, root included.
    pub processes: usize,
    /// Samples taken.
    pub samples: u64,
    /// Wall time spent sampling, all samples together: the sampler's cost,
    /// paid on the machine it measures.
    pub sampling_s: f64,
    /// Processes of the tree whose `smaps_rollup` could not be read for a
    /// reason other than having exited (summed over samples).
    pub unreadable: u64,
}

/// Samples the tree under `root` every [`SAMPLE_INTERVAL_MS`] until `done`
/// is set, and returns the peaks.
pub fn sample_until(root: u32, done: &AtomicBool) -> Peak {
    let mut peak = Peak::default();
    while !done.load(Ordering::Acquire) {
        let start = Instant::now();
        let sample = sample(root);
        peak.sampling_s += start.elapsed().as_secs_f64();
        peak.samples += 1;
        peak.pss_kib = peak.pss_kib.max(sample.pss_kib);
        peak.processes = peak.processes.max(sample.processes);
        peak.unreadable += sample.unreadable;
        std::thread::sleep(Duration::from_millis(SAMPLE_INTERVAL_MS));
    }
    peak
}

/// One sample of the tree under `root`.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    pss_kib: u64,
    processes: usize,
    unreadable: u64,
}

fn sample(root: u32) -> Sample {
    let tree = descendants(root, &parents());
    let mut s = Sample::default();
    for pid in tree {
        match std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
            Ok(text) => match pss_kib(&text) {
                Some(kib) => {
                    s.pss_kib += kib;
                    s.processes += 1;
                }
                // A zombie's smaps_rollup is empty: it holds no memory.
                None if text.trim().is_empty() => {}
                None => s.unreadable += 1,
            },
            // The process exited between the scan and this read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) if e.raw_os_error() == Some(ESRCH) => {}
            Err(_) => s.unreadable += 1,
        }
    }
    s
}

/// `ESRCH` (Linux's errno 3), which a read of an exiting process's `/proc`
/// file can return; spelled here rather than taking `libc` for one number.
const ESRCH: i32 = 3;

/// (pid, parent pid) of every process in `/proc`. Processes that exit
/// during the scan are left out.
fn parents() -> Vec<(u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some((pid, parent_pid(&stat)?))
    })
    .collect()
}

/// The parent pid in a `/proc/PID/stat` line: field 4, after the command
/// name, which is in parentheses and may itself contain `)` and spaces.
fn parent_pid(stat: &str) -> Option<u32> {
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `root` and every process whose chain of parents leads to it, root first.
fn descendants(root: u32, parents: &[(u32, u32)]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(pid, ppid) in parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut tree = vec![root];
    let mut next = 0;
    // Each pid is pushed once, as the child of its one parent, so the walk
    // ends after at most parents.len() + 1 entries.
    while next < tree.len() {
        if let Some(c) = children.get(&tree[next]) {
            tree.extend(c.iter().copied().filter(|&pid| pid != root));
        }
        next += 1;
    }
    tree
}

/// The `Pss:` line of `/proc/PID/smaps_rollup`, in KiB.
fn pss_kib(rollup: &str) -> Option<u64> {
    let line = rollup.lines().find(|l| l.starts_with("Pss:"))?;
    line.trim_start_matches("Pss:").trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_pid_reads_field_four_after_a_command_with_parentheses() {
        assert_eq!(parent_pid("4242 (cmc) S 17 4242 17 0 -1"), Some(17));
        assert_eq!(parent_pid("99 (a) b) (c) R 4242 99 99 0"), Some(4242));
        assert_eq!(parent_pid("garbage"), None);
    }

    #[test]
    fn descendants_follow_parent_chains_and_leave_out_other_trees() {
        // 10 is the root; 11 and 12 its children; 13 a grandchild; 20 and
        // 21 another tree; 1 is init.
        let parents = [(1, 0), (10, 1), (11, 10), (12, 10), (13, 12), (20, 1), (21, 20)];
        let mut tree = descendants(10, &parents);
        assert_eq!(tree[0], 10);
        tree.sort();
        assert_eq!(tree, [10, 11, 12, 13]);
        assert_eq!(descendants(13, &parents), [13]);
    }

    #[test]
    fn pss_kib_reads_the_pss_line() {
        let rollup = "00400000-7fff [rollup]\nRss:    2048 kB\nPss:    1234 kB\nPss_Anon:  800 kB\n";
        assert_eq!(pss_kib(rollup), Some(1234));
        assert_eq!(pss_kib("Rss: 1 kB\n"), None);
    }

    #[test]
    fn sampling_this_process_sees_it_and_its_memory() {
        let s = sample(std::process::id());
        assert!(s.processes >= 1, "{s:?}");
        assert!(s.pss_kib > 0, "{s:?}");
    }
}

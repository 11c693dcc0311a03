//! Snapshots of a process with threads: at its park, which thread forks,
//! which are made again in each fork and how, and the stub's slots
//! written for it (`forkserver` has the exchange, `cmc/start/fork.rs` the
//! process's half). A fork copies only the thread that makes it; the
//! others are captured at the park and made again in every fork.

use std::os::fd::AsFd;

use super::ProcessError;
use super::forkserver::{self, Again};
use super::lives::Run;
use super::notif;
use super::start::protocol::{SLOT_BYTES, SLOT_CAPTURED, SLOT_FORKER, SLOT_NAME, SLOT_NEW, SLOT_NONE};
use super::supervisor::Supervisor;
use super::threads::ThreadRun;

impl Supervisor {
    /// Readies node `n`'s process, which has made threads, for a snapshot:
    /// every thread held in a call is captured into its slot but one, the
    /// forker; a thread not yet run is made again from its start. Returns
    /// the forker and the threads each fork makes again; every thread's
    /// call is then in its `held` (the slot's taken out of `run`). An error
    /// [`ProcessError::Threaded`] where a thread cannot be captured.
    pub(super) fn capture_threads(&mut self, n: u8) -> Result<(usize, Vec<(usize, Again)>), ProcessError> {
        let threaded = |reason: String| ProcessError::Threaded { node: n, reason };
        let slots = self.thread_slots[n as usize];
        if slots == 0 {
            return Err(threaded("the start stub gave no thread slots".to_string()));
        }
        let slot = self.world.nodes[n as usize].slot_of();
        let Some(p) = self.procs[n as usize].as_mut() else { return Err(threaded("no process".to_string())) };
        // A thread being born (its first call not yet come) has no call
        // to come back to.
        if p.birth.is_some() || p.deferred.is_some() {
            return Err(threaded("a thread is being made".to_string()));
        }
        if let Run::Held(notif) = p.run {
            let Some(t) = slot.and_then(|k| p.threads.get_mut(k)).filter(|t| t.held.is_none()) else {
                return Err(ProcessError::NotEnabled { action: format!("a snapshot of node {n}'s threads") });
            };
            t.held = Some(notif);
            p.run = Run::Idle;
        } else if matches!(p.run, Run::Running(_)) {
            return Err(ProcessError::NotEnabled { action: format!("a snapshot of node {n}, which is running") });
        }
        let (pid, node) = (p.pid, &self.world.nodes[n as usize]);
        let mut captured = Vec::new();
        let mut again = Vec::new();
        for (k, t) in p.threads.iter().enumerate() {
            if t.held.is_none() || t.tid == 0 {
                continue;
            }
            if node.threads.get(k).is_some_and(|w| w.run == ThreadRun::New) && t.start.is_some() {
                again.push((k, Again::New));
            } else if let Some(why) = not_capturable(pid, t.tid) {
                return Err(threaded(format!("thread {k} {why}")));
            } else {
                captured.push(k);
            }
        }
        let Some((&forker, rest)) = captured.split_first() else {
            return Err(threaded("no thread may fork it (none has run)".to_string()));
        };
        let rest = rest.to_vec();
        let listener = self.templates[n as usize].as_ref().map(|t| t.listener.as_fd());
        let Some(listener) = listener else { return Err(threaded("no template".to_string())) };
        let stop = || self.cfg.stop_requested();
        let Some(p) = self.procs[n as usize].as_mut() else { return Err(threaded("no process".to_string())) };
        forkserver::capture(listener, &mut p.threads, &rest, self.cfg.stall_timeout, &stop, p.pidfd.as_fd())
            .map_err(|e| super::lives::fork_error(n, e))?;
        again.extend(rest.iter().map(|&k| (k, Again::Captured)));
        again.sort_unstable_by_key(|(k, _)| *k);
        // Each slot as the fork needs it: what a capture wrote (or could
        // not), and what only the supervisor knows.
        let node = &self.world.nodes[n as usize];
        for (k, t) in p.threads.iter().enumerate() {
            let at = slots + (k * SLOT_BYTES) as u64;
            let how = again.iter().find(|(j, _)| *j == k).map(|(_, how)| *how);
            let kind = match how {
                Some(Again::Captured) => {
                    let kind = notif::read_mem(t.tid as u32, at, 8)
                        .map(|b| u64::from_ne_bytes(b[..8].try_into().unwrap_or_default()));
                    if kind != Some(SLOT_CAPTURED) {
                        return Err(threaded(format!("thread {k}'s capture failed (slot kind {kind:?})")));
                    }
                    SLOT_CAPTURED
                }
                Some(Again::New) => SLOT_NEW,
                None if k == forker => SLOT_FORKER,
                None => SLOT_NONE,
            };
            let child_tid = node.threads.get(k).map_or(0, |w| w.clear_tid);
            let mut head: Vec<u8> = [kind, t.robust, child_tid].iter().flat_map(|w| w.to_ne_bytes()).collect();
            if let (Some(Again::New), Some(s)) = (how, t.start) {
                head.extend([s.tls, s.ip, s.stack, s.entry, s.arg].iter().flat_map(|w| w.to_ne_bytes()));
            }
            let name = std::fs::read(format!("/proc/{pid}/task/{}/comm", t.tid)).unwrap_or_default();
            let mut name16 = [0u8; 16];
            let len = name.iter().position(|&b| b == b'\n').unwrap_or(name.len()).min(15);
            name16[..len].copy_from_slice(&name[..len]);
            if !notif::write_mem(pid as u32, at, &head) || !notif::write_mem(pid as u32, at + SLOT_NAME as u64, &name16)
            {
                return Err(threaded(format!("thread {k}'s slot could not be written")));
            }
        }
        Ok((forker, again))
    }
}

/// Why thread `tid` of process `pid` cannot be captured, if it cannot
/// (its `/proc` status): it blocks the snapshot signal (asked before it
/// is signalled: a blocked signal stays pending, and the call answered
/// with the kernel's restart code would return that code to the
/// program), or it or its process has a signal pending (one it blocks:
/// SIGPIPE after an EPIPE, say), which no fork has, and the thread would
/// take when it unblocks it; or it has a shadow stack.
fn not_capturable(pid: i32, tid: i32) -> Option<String> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
        return Some("has no status to read".to_string());
    };
    let mask = |field: &str| {
        status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    // A thread with a shadow stack (Intel CET) would find no restore
    // token on the new one a thread made again gets.
    let features = status.lines().find_map(|l| l.strip_prefix("x86_Thread_features:")).unwrap_or("");
    if features.contains("shstk") {
        return Some("has a shadow stack (CET), which a thread made again would not have".to_string());
    }
    let snapshot = 1u64 << (super::filter::SNAPSHOT_SIGNAL - 1);
    match (mask("SigBlk:"), mask("SigPnd:"), mask("ShdPnd:")) {
        (Some(blocked), Some(0), Some(0)) if blocked & snapshot == 0 => None,
        (Some(blocked), Some(0), Some(0)) => {
            Some(format!("blocks signal {} (mask {blocked:#x})", super::filter::SNAPSHOT_SIGNAL))
        }
        (Some(_), Some(mine), Some(shared)) => {
            Some(format!("has signals pending ({:#x}), which a fork would not have", mine | shared))
        }
        _ => Some("has a status without its signal masks".to_string()),
    }
}

//! Snapshots of a process with threads: at its park, which thread forks,
//! which are made again in each fork, and the stub's slots written for it
//! (`forkserver` has the exchange, `cmc/start/fork.rs` the process's
//! half). A fork copies only the thread that makes it; the others are
//! captured at the park and made again in every fork.

use std::os::fd::AsFd;

use super::ProcessError;
use super::forkserver;
use super::lives::Run;
use super::notif;
use super::start::protocol::{SLOT_BYTES, SLOT_CAPTURED, SLOT_FORKER, SLOT_NAME, SLOT_NONE};
use super::supervisor::Supervisor;

/// Room a thread's stack must have below its stack pointer for the
/// snapshot handler, beyond the extended state the kernel saves in its
/// signal frame: the rest of the frame and `siginfo` (under 1 KiB), the
/// red zone the kernel skips (128 bytes), and the handler's own frames.
const HANDLER_ROOM: u64 = 4096;

impl Supervisor {
    /// Readies node `n`'s process, which has made threads, for a snapshot:
    /// every thread held in a call but one, the forker, is captured into
    /// its slot. Returns the forker and the threads each fork makes again;
    /// every thread's call is then in its `held` (the slot's taken out of
    /// `run`). An error [`ProcessError::Threaded`] where a thread cannot be
    /// captured: it blocks the snapshot signal (a thread not run past its
    /// first call does: glibc starts a thread with every signal blocked),
    /// has a signal pending, or has too little stack for the handler.
    pub(super) fn capture_threads(&mut self, n: u8) -> Result<(usize, Vec<usize>), ProcessError> {
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
        let pid = p.pid;
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        let mut live = Vec::new();
        for (k, t) in p.threads.iter().enumerate() {
            if t.held.is_none() || t.tid == 0 {
                continue;
            }
            if let Some(why) = not_capturable(pid, t.tid, t.stack_lo, &maps) {
                return Err(threaded(format!("thread {k} {why}")));
            }
            live.push(k);
        }
        let Some((&forker, again)) = live.split_first() else {
            return Err(threaded("no thread is held in a call".to_string()));
        };
        let again = again.to_vec();
        let listener = self.templates[n as usize].as_ref().map(|t| t.listener.as_fd());
        let Some(listener) = listener else { return Err(threaded("no template".to_string())) };
        let stop = || self.cfg.stop_requested();
        let Some(p) = self.procs[n as usize].as_mut() else { return Err(threaded("no process".to_string())) };
        forkserver::capture(listener, &mut p.threads, &again, self.cfg.stall_timeout, &stop, p.pidfd.as_fd())
            .map_err(|e| super::lives::fork_error(n, e))?;
        // Each slot as the fork needs it: what a capture wrote (or could
        // not), and what only the supervisor knows.
        let node = &self.world.nodes[n as usize];
        for (k, t) in p.threads.iter().enumerate() {
            let at = slots + (k * SLOT_BYTES) as u64;
            let kind = if again.contains(&k) {
                let kind = notif::read_mem(t.tid as u32, at, 8)
                    .map(|b| u64::from_ne_bytes(b[..8].try_into().unwrap_or_default()));
                if kind != Some(SLOT_CAPTURED) {
                    return Err(threaded(format!("thread {k}'s capture failed (slot kind {kind:?})")));
                }
                SLOT_CAPTURED
            } else if k == forker {
                SLOT_FORKER
            } else {
                SLOT_NONE
            };
            let child_tid = node.threads.get(k).map_or(0, |w| w.clear_tid);
            let head: Vec<u8> = [kind, t.robust, child_tid].iter().flat_map(|w| w.to_ne_bytes()).collect();
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

/// Why thread `tid` of process `pid` (whose `/proc/PID/maps` is `maps`)
/// cannot be captured, if it cannot (its `/proc` status): it blocks the
/// snapshot signal (asked before it is signalled: a blocked signal stays
/// pending, and the call answered with the kernel's restart code would
/// return that code to the program), or it or its process has a signal
/// pending (one it blocks: SIGPIPE after an EPIPE, say), which no fork
/// has, and the thread would take when it unblocks it; or it has a
/// shadow stack; or its stack (from `stack_lo`, where its `clone3` put
/// it) has too little room below its stack pointer for the handler's
/// frame (the handler runs on the thread's own stack: a thread that ran
/// into its guard page there would die, and one without would write over
/// what lies below).
fn not_capturable(pid: i32, tid: i32, stack_lo: u64, maps: &str) -> Option<String> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
        return Some("has no status to read".to_string());
    };
    // A thread with a shadow stack (Intel CET) would find no restore
    // token on the new one a thread made again gets.
    let features = status.lines().find_map(|l| l.strip_prefix("x86_Thread_features:")).unwrap_or("");
    if features.contains("shstk") {
        return Some("has a shadow stack (CET), which a thread made again would not have".to_string());
    }
    let mask = |field: &str| {
        status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    let snapshot = 1u64 << (super::filter::SNAPSHOT_SIGNAL - 1);
    match (mask("SigBlk:"), mask("SigPnd:"), mask("ShdPnd:")) {
        (Some(blocked), Some(0), Some(0)) if blocked & snapshot == 0 => {}
        (Some(blocked), Some(0), Some(0)) => {
            return Some(format!("blocks signal {} (mask {blocked:#x})", super::filter::SNAPSHOT_SIGNAL));
        }
        (Some(_), Some(mine), Some(shared)) => {
            return Some(format!("has signals pending ({:#x}), which a fork would not have", mine | shared));
        }
        _ => return Some("has a status without its signal masks".to_string()),
    }
    let room = stack_room(pid, tid, stack_lo, maps)?;
    let need = xsave_bytes() + HANDLER_ROOM;
    (room < need)
        .then(|| format!("has {room} bytes of stack below its stack pointer, less than the {need} a capture needs"))
}

/// How many bytes of thread `tid`'s stack lie below its stack pointer
/// (`/proc/PID/task/TID/syscall`, held in a call): down to the lowest
/// address its `clone3` gave it (`stack_lo`), or the start of its mapping
/// if that is higher (a guard page). What lies below in the same mapping
/// may be another thread's stack or the program's data (a review: stacks
/// of 16 KiB without guards, which the kernel merges into one mapping,
/// and a stack placed in the program's own memory, written over by a
/// capture's frame). `None` for a stack that grows (the main thread's
/// `[stack]`) or one not found.
fn stack_room(pid: i32, tid: i32, stack_lo: u64, maps: &str) -> Option<u64> {
    let syscall = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    let sp = u64::from_str_radix(syscall.split_whitespace().nth(7)?.trim_start_matches("0x"), 16).ok()?;
    maps.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        let (lo, hi) = f.next()?.split_once('-')?;
        let (lo, hi) = (u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?);
        if !(lo..hi).contains(&sp) || line.ends_with("[stack]") {
            return None;
        }
        Some(sp.saturating_sub(lo.max(stack_lo)))
    })
}

/// The size of the extended state the kernel saves in a signal frame on
/// this machine: CPUID leaf 0xD's size for the features enabled in XCR0.
fn xsave_bytes() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        u64::from(std::arch::x86_64::__cpuid_count(0xd, 0).ebx)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        4096
    }
}

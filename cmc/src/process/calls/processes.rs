//! A node as a process: its virtual pid (real pids differ on every replay),
//! the signals it may send itself, and the shared mappings it may make (of
//! a file, which is the same for every life, but not of anonymous memory,
//! which a snapshot would share with its forks).
//!
//! It owns the answers that need the call's arguments, and keeps the
//! preload's traps in place: its SIGSEGV handler (which emulates `rdtsc`
//! and `cpuid`), `rdtsc` faulting (`PR_SET_TSC`) and `cpuid` faulting
//! (`ARCH_SET_CPUID`). What no node may do
//! at all (a thread or a child, exec, a filter of its own, System V IPC,
//! memfds, the snapshot signal's handler, queued signals and pidfds) is
//! refused by the table in `calls` from the call's number alone.

use nix::libc;

use super::super::ProcessError;
use super::super::filter::SNAPSHOT_SIGNAL;
use super::super::lives::signal;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::{Answer, forbid, refuse};

/// `getpid()` of node i is `VIRTUAL_PID_BASE + i`: real pids differ on every
/// replay (research, pitfall 3).
pub const VIRTUAL_PID_BASE: i64 = 1000;

/// `getpid` and `gettid` are the node's virtual pid; `getppid` is 1.
pub(super) fn on_getpid(n: u8, c: &Notif) -> Answer {
    match c.nr {
        libc::SYS_getppid => Answer::Val(1),
        _ => Answer::Val(VIRTUAL_PID_BASE + n as i64),
    }
}

/// Only shared mappings are notified. One of a file runs (a file a node may
/// read is the same for every life); shared anonymous memory would be
/// shared by a snapshot and its forks, state outside the world.
pub(super) fn on_mmap(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    if c.args[3] as i32 & libc::MAP_ANONYMOUS != 0 || c.args[4] as i32 == -1 {
        return refuse(n, c, "shared anonymous memory would be shared between lives of the node");
    }
    Ok(Answer::Continue)
}

/// `rt_sigaction` of the two signals the preload keeps: the snapshot signal
/// (never the program's) and SIGSEGV, whose handler emulates `rdtsc` and
/// `cpuid`. The program's own SIGSEGV handler goes through the preload's
/// `sigaction` and `signal`; a raw call may only query, or set the default
/// (the preload does so to die of a fault the program did not handle).
pub(super) fn on_rt_sigaction(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    if c.args[0] as i32 != libc::SIGSEGV {
        return refuse(n, c, &format!("signal {SNAPSHOT_SIGNAL} is the checker's (it makes snapshots)"));
    }
    if c.args[1] == 0 {
        return Ok(Answer::Continue);
    }
    // SIG_DFL is 0.
    match notif::read_mem(c.pid, c.args[1], 8) {
        None => Ok(Answer::Err(libc::EFAULT)),
        Some(h) if h.iter().all(|&b| b == 0) => Ok(Answer::Continue),
        Some(_) => refuse(
            n,
            c,
            "a SIGSEGV handler set by a raw system call would replace the preload's, which emulates rdtsc and cpuid: set it with sigaction or signal",
        ),
    }
}

/// `prctl`: only `PR_SET_SECCOMP` and `PR_SET_TSC` are notified. A filter
/// of the target's own is forbidden; `PR_SET_TSC` may only keep `rdtsc`
/// faulting, as the preload made it (enabling it would read real time).
pub(super) fn on_prctl(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    match c.args[0] as i32 {
        libc::PR_SET_TSC if c.args[1] == libc::PR_TSC_SIGSEGV as u64 => Ok(Answer::Continue),
        libc::PR_SET_TSC => refuse(
            n,
            c,
            "PR_SET_TSC other than PR_TSC_SIGSEGV would let rdtsc read the real time stamp counter, which the preload traps",
        ),
        _ => forbid(n, c, "a seccomp filter (it would be compiled for every life)"),
    }
}

impl Supervisor {
    /// `arch_prctl(ARCH_SET_CPUID, 1)`, the only form notified, lifts CPUID
    /// faulting: the preload's gate does so for one emulated `cpuid`, and
    /// nothing else may (the program would see RDRAND and RDSEED).
    pub(super) fn on_arch_prctl(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let gate = self.cpuid_gates[n as usize];
        if gate != 0 && c.ip == gate {
            return Ok(Answer::Continue);
        }
        refuse(
            n,
            c,
            "ARCH_SET_CPUID would let cpuid run unemulated and show the CPU's RDRAND and RDSEED, which the preload hides",
        )
    }

    /// `kill`, `tkill`, `tgkill`. A node may signal itself (raise, abort, a
    /// failed assert) by its virtual pid; the supervisor sends the signal to
    /// the real one, which takes it as the call returns. Signals between
    /// nodes, or to anything else, are not modelled, nor are stop signals (a
    /// stopped node would only stall).
    pub(super) fn on_kill(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let me = VIRTUAL_PID_BASE + n as i64;
        let (targets, sig) = match c.nr {
            libc::SYS_tgkill => (&c.args[..2], c.args[2] as i32),
            _ => (&c.args[..1], c.args[1] as i32),
        };
        if targets.iter().any(|&t| t as i32 as i64 != me) {
            return refuse(n, c, "a signal to another process is not modelled; a node may signal only itself");
        }
        if matches!(sig, libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
            return refuse(n, c, "stopping a node is not modelled");
        }
        if !(0..=libc::SIGRTMAX()).contains(&sig) {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if sig != 0
            && let Some(p) = self.procs[n as usize].as_ref()
        {
            signal(&p.pidfd, sig);
        }
        Ok(Answer::Val(0))
    }
}

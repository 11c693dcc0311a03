//! A node as a process: its virtual pid (real pids differ on every replay),
//! the signals it may send itself, and the shared mappings it may make (of
//! a file, which is the same for every life, but not of anonymous memory,
//! which a snapshot would share with its forks).
//!
//! It owns the answers that need the call's arguments. What no node may do
//! at all (a thread or a child, exec, a filter of its own, System V IPC,
//! memfds, the snapshot signal's handler, queued signals and pidfds) is
//! refused by the table in `calls` from the call's number alone.

use nix::libc;

use super::super::ProcessError;
use super::super::lives::signal;
use super::super::notif::Notif;
use super::super::supervisor::Supervisor;
use super::{Answer, refuse};

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

impl Supervisor {
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

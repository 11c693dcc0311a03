//! The fork server: the start stub is exec'd once per node and search, as
//! its *template*, parked before the program is loaded; every *life* of the
//! node (at START and after each CRASH) is a fork of the template, and a
//! *snapshot* is a fork
//! of a quiescent life, parked where it blocked (AFL's fork server, and the
//! snapshot fuzzers after it). Forks share the template's seccomp filter:
//! no process but the template installs one.
//!
//! How a parked process forks, with no help from the program (the start
//! stub's `fork` module is the other half): the supervisor sends it
//! [`SNAPSHOT_SIGNAL`], which stays pending while its call is held
//! (`WAIT_KILLABLE_RECV`), then answers the call with `-ERESTARTNOINTR`. On
//! its way back to user space the process runs the stub's handler, which
//! forks with `CLONE_PARENT` (notified, and let through here), and the
//! kernel restarts the call in both processes. Both are then held in the
//! same call again: the one asked is parked as it was, the child is the new
//! process.
//!
//! This module owns that exchange only; the supervisor decides what the
//! new process is for.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::libc;

use super::filter::SNAPSHOT_SIGNAL;
use super::notif::{self, Notif};

/// The kernel's "restart this call after the signal handler", which user
/// space never sees.
const ERESTARTNOINTR: i32 = 513;

/// A process held in a notified call (its notification received, not
/// answered).
pub struct Parked {
    /// Its process id.
    pub pid: i32,
    /// The data it gave its epoll interests, for `epoll_wait` to hand
    /// back.
    pub cookies: Cookies,
    /// Its pidfd, by which the supervisor signals it and learns of its
    /// death.
    pub pidfd: OwnedFd,
    /// The notification of the call it is held in.
    pub notif: Notif,
}

/// The data a process gave each interest of its epoll instances (by the
/// instance's name in the world and the descriptor watched), which
/// `epoll_wait` hands back with the events. The kernel never reads it: it
/// is the process's own (an address or an index, as mio's tokens are),
/// and a fork has its parent's. So it is kept with the process, not in
/// the world: worlds that differ only in where a process keeps what it
/// watches are one world, as they are for every other byte of its memory.
pub type Cookies = std::collections::BTreeMap<(i32, i32), u64>;

/// Why a fork failed.
#[derive(Debug)]
pub enum ForkError {
    /// The process re-issued its call without running the handler: it
    /// blocks or ignores [`SNAPSHOT_SIGNAL`].
    SignalBlocked,
    /// A process made a call other than those of the fork.
    Unexpected {
        /// The process.
        pid: i32,
        /// The call's number.
        nr: i64,
    },
    /// A process ended during the fork.
    Died,
    /// Nothing happened for the stall timeout, `seconds` long.
    Silent {
        /// How long the fork waited.
        seconds: f64,
    },
    /// The search asked to stop (the reason) while the fork waited.
    Stopped(String),
    /// A system call of the supervisor failed.
    Sys {
        /// The call.
        call: &'static str,
        /// Its error.
        errno: Errno,
    },
}

/// Makes `from` fork. On success `from` is parked again in the same call
/// (with a new notification) and the child, parked in that call too, is
/// returned. While it waits it asks `stop` at least every
/// [`super::STOP_POLL`] whether the search should stop.
pub fn fork(
    listener: BorrowedFd<'_>,
    from: &mut Parked,
    timeout: Duration,
    stop: &dyn Fn() -> Option<String>,
) -> Result<Parked, ForkError> {
    let sys = |call| ForkError::Sys { call, errno: Errno::last() };
    // A `siginfo` that names no process (`SI_QUEUE`, pid and uid 0): the
    // handler's frame is in the program's memory, and the supervisor's real
    // pid would differ on every run.
    let mut info = [0u8; 128];
    info[0..4].copy_from_slice(&SNAPSHOT_SIGNAL.to_ne_bytes());
    info[8..12].copy_from_slice(&libc::SI_QUEUE.to_ne_bytes());
    let r = unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, from.pidfd.as_raw_fd(), SNAPSHOT_SIGNAL, info.as_ptr(), 0)
    };
    if r < 0 {
        return Err(sys("pidfd_send_signal"));
    }
    match notif::respond(listener, from.notif.id, 0, ERESTARTNOINTR) {
        Ok(true) => {}
        Ok(false) => return Err(ForkError::Died),
        Err(errno) => return Err(ForkError::Sys { call: "NOTIF_SEND", errno }),
    }
    let call = from.notif;
    let same_call = |n: &Notif| n.nr == call.nr && n.args == call.args;
    let (mut cloned, mut reparked) = (false, false);
    let mut child: Option<(i32, Option<Notif>)> = None;
    let deadline = Instant::now() + timeout;
    while !(reparked && child.as_ref().is_some_and(|(_, n)| n.is_some())) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ForkError::Silent { seconds: timeout.as_secs_f64() });
        }
        if !readable(listener, from.pidfd.as_fd(), left.min(super::STOP_POLL)) {
            if exited(from.pidfd.as_fd()) {
                return Err(ForkError::Died);
            }
            if let Some(reason) = stop() {
                return Err(ForkError::Stopped(reason));
            }
            continue;
        }
        let n = match notif::recv(listener) {
            Ok(Some(n)) => n,
            Ok(None) => return Err(ForkError::Died),
            Err(errno) => return Err(ForkError::Sys { call: "NOTIF_RECV", errno }),
        };
        let pid = n.pid as i32;
        let answer = |val: Option<i64>| {
            let done = match val {
                Some(v) => notif::respond(listener, n.id, v, 0),
                None => notif::continue_call(listener, n.id),
            };
            match done {
                Ok(true) => Ok(()),
                Ok(false) => Err(ForkError::Died),
                Err(errno) => Err(ForkError::Sys { call: "NOTIF_SEND", errno }),
            }
        };
        if pid == from.pid {
            if !cloned && n.nr == libc::SYS_clone && n.args[0] == libc::CLONE_PARENT as u64 {
                cloned = true;
                answer(None)?;
            } else if same_call(&n) && !reparked {
                from.notif = n;
                if !cloned {
                    return Err(ForkError::SignalBlocked);
                }
                reparked = true;
            } else {
                return Err(ForkError::Unexpected { pid, nr: n.nr });
            }
            continue;
        }
        // The only other process on this listener that makes a call now is
        // the new child (every other process of the node is held).
        let (child_pid, parked) = child.get_or_insert((pid, None));
        if *child_pid != pid || parked.is_some() || !cloned {
            return Err(ForkError::Unexpected { pid, nr: n.nr });
        }
        if n.nr == libc::SYS_getppid {
            // The handler's check that the supervisor is still there.
            answer(Some(1))?;
        } else if same_call(&n) {
            *parked = Some(n);
        } else {
            return Err(ForkError::Unexpected { pid, nr: n.nr });
        }
    }
    let Some((pid, Some(notif))) = child else { return Err(ForkError::Died) };
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(sys("pidfd_open"));
    }
    // A new process: nothing written into another that had its pid (a
    // life killed while a receive waited) is its input.
    let _ = notif::take_written(pid as u32);
    Ok(Parked { pid, pidfd: unsafe { OwnedFd::from_raw_fd(pidfd as i32) }, notif, cookies: from.cookies.clone() })
}

/// Waits until `listener` (or any descriptor) is readable; `false` on
/// timeout or if the process of `pidfd` ended first.
pub fn readable(listener: BorrowedFd<'_>, pidfd: BorrowedFd<'_>, timeout: Duration) -> bool {
    let mut fds = [
        libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32 + 1;
    loop {
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if r < 0 && Errno::last() == Errno::EINTR {
            continue;
        }
        return r > 0 && fds[0].revents & libc::POLLIN != 0;
    }
}

fn exited(pidfd: BorrowedFd<'_>) -> bool {
    let mut fd = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    unsafe { libc::poll(&mut fd, 1, 0) > 0 }
}

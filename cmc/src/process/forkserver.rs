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
//! A process with threads is forked the same way with the stub's help
//! (`cmc/start/fork.rs`): at its park every thread held in a call but one
//! is asked to *capture* its frame into its slot ([`capture`]), its call
//! restarting and held again; a fork is then asked of the one left, the
//! *forker*, whose child makes each other thread again, one after the
//! other, from its slot: a captured one comes back to the call it was held
//! in, one that had not run yet to its first call. A fork copies only the
//! thread that makes it; this is how the others come along.
//!
//! This module owns that exchange only; the supervisor decides what the
//! new process is for.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::libc;

use super::filter::SNAPSHOT_SIGNAL;
use super::notif::{self, Notif};
use super::start::protocol::{SNAP_CAPTURE, SNAP_FORK, SNAP_FORK_THREADS};

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
    /// The notification of the call it is held in (its forker's, for a
    /// process with threads).
    pub notif: Notif,
    /// Its threads, by the world's number, once it has made one (each
    /// held in its call, or ended): empty for a process of one thread.
    pub threads: Vec<ThreadProc>,
    /// The thread a fork is asked of, for a process with threads.
    pub forker: usize,
    /// The threads a fork makes again from their captured frames, in the
    /// order the child makes them (the slots' order).
    pub again: Vec<usize>,
}

impl Parked {
    /// A process of one thread, held in `notif`.
    pub fn new(pid: i32, pidfd: OwnedFd, notif: Notif) -> Parked {
        Parked { pid, cookies: Cookies::new(), pidfd, notif, threads: Vec::new(), forker: 0, again: Vec::new() }
    }
}

/// One thread of a node's process that has made threads, by the world's
/// number (`NodeWorld::threads`).
pub struct ThreadProc {
    /// Its kernel id (0 before its first call).
    pub tid: i32,
    /// The call it is held in, out of the slot (the slot's is the
    /// process's `Run`; in a parked process, each thread's is here).
    pub held: Option<Notif>,
    /// A pidfd of it alone, readable once it has ended.
    pub pidfd: Option<OwnedFd>,
    /// Out of the slot, waiting: what the node's insides were when it
    /// last looked (`Supervisor::inside`), so that a change another
    /// thread makes is its wait's to see. Supervisor state: a wait made
    /// again where nothing it waits on changed finds what it found and
    /// waits again, so it changes no world the search keeps, only work.
    pub seen: u64,
    /// Where its robust futex list is (`set_robust_list`), 0 for none.
    pub robust: u64,
    /// The lowest address of its stack as its `clone3` gave it (0 for the
    /// main thread): a capture's frame must fit above it.
    pub stack_lo: u64,
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
    let threaded = !from.threads.is_empty();
    let (pidfd, from_tid) = match from.threads.get(from.forker) {
        Some(t) if threaded => (t.pidfd.as_ref().ok_or(ForkError::Died)?.as_fd(), t.tid),
        _ => (from.pidfd.as_fd(), from.pid),
    };
    ask(pidfd, if threaded { SNAP_FORK_THREADS } else { SNAP_FORK }).map_err(sys)?;
    match notif::respond(listener, from.notif.id, 0, ERESTARTNOINTR) {
        Ok(true) => {}
        Ok(false) => return Err(ForkError::Died),
        Err(errno) => return Err(ForkError::Sys { call: "NOTIF_SEND", errno }),
    }
    let call = from.notif;
    let same_call = |n: &Notif| n.nr == call.nr && n.args == call.args;
    let (mut cloned, mut reparked) = (false, false);
    let mut child: Option<(i32, Option<Notif>)> = None;
    // The threads made again in the child: how many have come back to
    // their calls, the one on its way (its kernel id once heard from, and
    // whether it has set its robust list), and the forker's call that
    // came meanwhile (the next is let run only once the last is back, so
    // that each new id is known to be the slot's).
    let mut made: Vec<(i32, Notif)> = Vec::with_capacity(from.again.len());
    let mut coming: Option<(Option<i32>, bool)> = None;
    let mut later: Option<Notif> = None;
    let deadline = Instant::now() + timeout;
    while !(reparked && made.len() == from.again.len() && child.as_ref().is_some_and(|(_, n)| n.is_some())) {
        let n = next_notif(listener, from.pidfd.as_fd(), deadline, timeout, stop)?;
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
        if pid == from_tid {
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
        // A thread the child is making again: its calls until it is back
        // in the one it was held in.
        if let Some((tid, robust_set)) = coming.as_mut()
            && child.as_ref().is_some_and(|(c, _)| *c != pid)
            && tid.is_none_or(|t| t == pid)
        {
            *tid = Some(pid);
            let k = from.again[made.len()];
            let held = from.threads[k].held.ok_or(ForkError::Unexpected { pid, nr: n.nr })?;
            if !*robust_set && n.nr == libc::SYS_set_robust_list {
                *robust_set = true;
                answer(None)?;
            } else if *robust_set && n.nr == held.nr && n.args == held.args {
                made.push((pid, n));
                coming = None;
                if let Some(next) = later.take() {
                    let again = threaded.then_some(&from.again[..]);
                    forker_call(listener, next, &mut child, &mut coming, again, made.len(), same_call)?;
                }
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
        if coming.is_some() {
            later = Some(n);
            continue;
        }
        let again = threaded.then_some(&from.again[..]);
        forker_call(listener, n, &mut child, &mut coming, again, made.len(), same_call)?;
    }
    let Some((pid, Some(notif))) = child else { return Err(ForkError::Died) };
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(sys("pidfd_open"));
    }
    // A new process: nothing written into another that had its pid (a
    // life killed while a receive waited) is its input.
    let _ = notif::take_written(pid as u32);
    let mut threads = Vec::with_capacity(from.threads.len());
    for t in &from.threads {
        threads.push(ThreadProc {
            tid: 0,
            held: None,
            pidfd: None,
            seen: t.seen,
            robust: t.robust,
            stack_lo: t.stack_lo,
        });
    }
    if threaded {
        from.threads[from.forker].held = Some(from.notif);
        threads[from.forker].tid = pid;
        threads[from.forker].held = Some(notif);
        for (&k, (tid, held)) in from.again.iter().zip(made) {
            let _ = notif::take_written(tid as u32);
            threads[k].tid = tid;
            threads[k].held = Some(held);
        }
    }
    Ok(Parked {
        pid,
        pidfd: unsafe { OwnedFd::from_raw_fd(pidfd as i32) },
        notif,
        cookies: from.cookies.clone(),
        threads,
        forker: from.forker,
        again: from.again.clone(),
    })
}

/// A call of the child's forking thread: the handler's check of its
/// parent, its own robust list and cleared-tid word, each thread it makes
/// again (`coming` until that thread is back in its call), and last its
/// own call made again, which parks it.
fn forker_call(
    listener: BorrowedFd<'_>,
    n: Notif,
    child: &mut Option<(i32, Option<Notif>)>,
    coming: &mut Option<(Option<i32>, bool)>,
    again: Option<&[usize]>,
    made: usize,
    same_call: impl Fn(&Notif) -> bool,
) -> Result<(), ForkError> {
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
    let unexpected = ForkError::Unexpected { pid: n.pid as i32, nr: n.nr };
    let (threaded, again) = (again.is_some(), again.unwrap_or_default());
    match n.nr {
        // The handler's check that the supervisor is still there.
        libc::SYS_getppid => answer(Some(1)),
        libc::SYS_set_tid_address | libc::SYS_set_robust_list if threaded && made == 0 => answer(None),
        libc::SYS_clone if threaded && n.args[0] == CLONE_THREAD_AGAIN && made < again.len() => {
            *coming = Some((None, false));
            answer(None)
        }
        _ if same_call(&n) && made == again.len() => {
            if let Some((_, parked)) = child.as_mut() {
                *parked = Some(n);
            }
            Ok(())
        }
        _ => Err(unexpected),
    }
}

/// glibc's thread flags without `CLONE_PARENT_SETTID`, as the stub makes
/// a thread again.
const CLONE_THREAD_AGAIN: u64 = 0x2d0f00;

/// Sends the snapshot signal, asking `what` (`SNAP_*`), to the process or
/// thread of `pidfd`, with a `siginfo` that names no process (`SI_QUEUE`,
/// pid and uid 0): the handler's frame is in the program's memory, and
/// the supervisor's real pid would differ on every run.
fn ask(pidfd: BorrowedFd<'_>, what: u64) -> Result<(), &'static str> {
    let mut info = [0u8; 128];
    info[0..4].copy_from_slice(&SNAPSHOT_SIGNAL.to_ne_bytes());
    info[8..12].copy_from_slice(&libc::SI_QUEUE.to_ne_bytes());
    info[24..32].copy_from_slice(&what.to_ne_bytes());
    let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), SNAPSHOT_SIGNAL, info.as_ptr(), 0) };
    if r < 0 { Err("pidfd_send_signal") } else { Ok(()) }
}

/// Has each thread `k` of `threads` in `which`, held in a call, copy its
/// frame into its slot (`SNAP_CAPTURE`): each is held in the same call
/// again afterwards, with a new notification. Each must have the
/// snapshot signal unblocked (the caller checks), or its call would fail
/// with the kernel's restart code.
pub fn capture(
    listener: BorrowedFd<'_>,
    threads: &mut [ThreadProc],
    which: &[usize],
    timeout: Duration,
    stop: &dyn Fn() -> Option<String>,
    process: BorrowedFd<'_>,
) -> Result<(), ForkError> {
    for &k in which {
        let t = &threads[k];
        let (Some(pidfd), Some(held)) = (t.pidfd.as_ref(), t.held) else { return Err(ForkError::Died) };
        ask(pidfd.as_fd(), SNAP_CAPTURE | (k as u64) << 8)
            .map_err(|call| ForkError::Sys { call, errno: Errno::last() })?;
        match notif::respond(listener, held.id, 0, ERESTARTNOINTR) {
            Ok(true) => {}
            Ok(false) => return Err(ForkError::Died),
            Err(errno) => return Err(ForkError::Sys { call: "NOTIF_SEND", errno }),
        }
    }
    let mut back = vec![false; threads.len()];
    let mut left = which.len();
    let deadline = Instant::now() + timeout;
    while left > 0 {
        let n = next_notif(listener, process, deadline, timeout, stop)?;
        let k = which.iter().copied().find(|&k| {
            let t = &threads[k];
            !back[k] && t.tid == n.pid as i32 && t.held.is_some_and(|h| h.nr == n.nr && h.args == n.args)
        });
        let Some(k) = k else { return Err(ForkError::Unexpected { pid: n.pid as i32, nr: n.nr }) };
        threads[k].held = Some(n);
        back[k] = true;
        left -= 1;
    }
    Ok(())
}

/// The next notification on `listener`, waiting until `deadline` (the
/// stall timeout `timeout` from the start) while the process of `pidfd`
/// lives, and asking `stop` at least every [`super::STOP_POLL`].
fn next_notif(
    listener: BorrowedFd<'_>,
    pidfd: BorrowedFd<'_>,
    deadline: Instant,
    timeout: Duration,
    stop: &dyn Fn() -> Option<String>,
) -> Result<Notif, ForkError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ForkError::Silent { seconds: timeout.as_secs_f64() });
        }
        if !readable(listener, pidfd, left.min(super::STOP_POLL)) {
            if exited(pidfd) {
                return Err(ForkError::Died);
            }
            if let Some(reason) = stop() {
                return Err(ForkError::Stopped(reason));
            }
            continue;
        }
        return match notif::recv(listener) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(ForkError::Died),
            Err(errno) => Err(ForkError::Sys { call: "NOTIF_RECV", errno }),
        };
    }
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

//! What a native node process is doing, read from `/proc` without stopping
//! it: whether it waits in a call with nothing it could still get.
//!
//! A node is quiescent when its process sleeps (`S` in `/proc/PID/stat`)
//! in a blocking call that `/proc/PID/syscall` names, and what that call
//! waits on is not ready: for `read`, `recvfrom`, `recvmsg` and `readv`
//! its descriptor, for `accept` its listening socket, for `epoll_wait` its
//! instance, for `poll` and `ppoll` every descriptor of its array (read
//! from `/proc/PID/mem`) with the events it asks for. Readiness is the
//! kernel's own answer: the descriptor is duplicated into the gate with
//! `pidfd_getfd`, polled with a zero timeout and closed at once (so the
//! gate holds it for microseconds, and a close by the node still sends its
//! FIN at once, or right after). A sleep, `pause`, `rt_sigsuspend` and a
//! `futex` wait are quiescent (what ends them is the gate's to do, or
//! nothing). Anything else (running, a call the gate does not know) is
//! busy, and a node busy for the quiescence limit is an error naming it
//! and its call.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;

/// What one node process is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Now {
    /// Waiting with nothing it could get.
    Quiet,
    /// Anything else, said in a few words for an error.
    Busy(String),
}

/// A pidfd of a live child.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags, no pointer.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Whether descriptor `fd` of the process behind `pidfd` is ready for any
/// of `events` (or has an error or hang-up); `None` if it cannot be had
/// (closed meanwhile).
fn ready(pidfd: &OwnedFd, fd: i32, events: i16) -> Option<bool> {
    // SAFETY: pidfd_getfd takes two descriptors and flags, no pointer.
    let dup = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if dup < 0 {
        return None;
    }
    // SAFETY: a new descriptor nothing else owns; closed on drop, at once.
    let dup = unsafe { OwnedFd::from_raw_fd(dup as RawFd) };
    let mut p = libc::pollfd { fd: dup.as_raw_fd(), events, revents: 0 };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    if n < 0 {
        return None;
    }
    Some(p.revents & (events | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0)
}

/// The state letter of `/proc/PID/stat` (after the last `)`: the command
/// may hold any character).
pub fn stat_state(text: &str) -> Option<char> {
    text.rsplit_once(')')?.1.trim_start().chars().next()
}

/// `/proc/PID/syscall`: the call number and its six arguments, or `None`
/// for "running" (or a process not in a call).
pub fn parse_syscall(text: &str) -> Option<(i64, [u64; 6])> {
    let mut f = text.split_whitespace();
    let nr: i64 = f.next()?.parse().ok()?;
    if nr < 0 {
        return None;
    }
    let mut args = [0u64; 6];
    for a in &mut args {
        *a = u64::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
    }
    Some((nr, args))
}

/// Context switches of a process so far (voluntary and not): a process
/// that woke and slept again since the last look has more.
pub fn switches(pid: i32) -> u64 {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0 };
    text.lines()
        .filter(|l| l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// What process `pid` (with `pidfd`) is doing.
pub fn now(pid: i32, pidfd: &OwnedFd) -> Now {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    match stat_state(&stat) {
        Some('S') => {}
        Some(c) => return Now::Busy(format!("in state {c}")),
        None => return Now::Busy("gone from /proc".to_string()),
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    let Some((nr, args)) = parse_syscall(&text) else {
        return Now::Busy(format!("not in a call ({})", text.trim()));
    };
    let fd = args[0] as i32;
    let input = libc::POLLIN | libc::POLLRDHUP;
    let quiet_unless_ready = |events| match ready(pidfd, fd, events) {
        Some(false) => Now::Quiet,
        Some(true) => Now::Busy(format!("in call {nr} on fd {fd}, which is ready")),
        None => Now::Busy(format!("in call {nr} on fd {fd}, which it no longer has")),
    };
    match nr {
        libc::SYS_read | libc::SYS_readv | libc::SYS_recvfrom | libc::SYS_recvmsg => quiet_unless_ready(input),
        libc::SYS_accept | libc::SYS_accept4 => quiet_unless_ready(libc::POLLIN),
        libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => quiet_unless_ready(libc::POLLIN),
        libc::SYS_poll | libc::SYS_ppoll => poll_array(pid, pidfd, args[0], args[1]),
        libc::SYS_nanosleep | libc::SYS_clock_nanosleep | libc::SYS_pause | libc::SYS_rt_sigsuspend => Now::Quiet,
        libc::SYS_futex => Now::Quiet,
        _ => Now::Busy(format!("in call {nr}, which the gate does not know as a wait")),
    }
}

/// A process blocked in `poll(array, count, ...)`: quiet when none of its
/// descriptors is ready for what it asks.
fn poll_array(pid: i32, pidfd: &OwnedFd, array: u64, count: u64) -> Now {
    const POLLFDS_MAX: u64 = 1024;
    if count > POLLFDS_MAX {
        return Now::Busy(format!("in poll of {count} descriptors (the gate reads at most {POLLFDS_MAX})"));
    }
    let mut bytes = vec![0u8; count as usize * 8];
    let read = std::fs::File::open(format!("/proc/{pid}/mem")).and_then(|m| m.read_exact_at(&mut bytes, array));
    if let Err(e) = read {
        return Now::Busy(format!("in poll, whose array the gate cannot read: {e}"));
    }
    for entry in bytes.chunks_exact(8) {
        let fd = i32::from_ne_bytes(entry[0..4].try_into().unwrap_or_default());
        let events = i16::from_ne_bytes(entry[4..6].try_into().unwrap_or_default());
        if fd < 0 {
            continue;
        }
        match ready(pidfd, fd, events) {
            Some(false) => {}
            Some(true) => return Now::Busy(format!("in poll, fd {fd} ready")),
            None => return Now::Busy(format!("in poll of fd {fd}, which it no longer has")),
        }
    }
    Now::Quiet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_lines_parse() {
        assert_eq!(stat_state("123 (a) b) S 1 2 3"), Some('S'));
        assert_eq!(stat_state("123 (x) R 1"), Some('R'));
        assert_eq!(parse_syscall("running\n"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x4011\n"), None);
        let (nr, args) = parse_syscall("43 0x4 0x0 0x0 0x0 0x0 0x0 0x7ffe5e0 0x7f12\n").unwrap();
        assert_eq!((nr, args[0], args[1]), (43, 4, 0));
    }
}

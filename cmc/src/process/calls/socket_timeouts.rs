//! A socket's timeouts: `SO_RCVTIMEO` and `SO_SNDTIMEO` (and their
//! `_NEW` numbers, the same struct on x86-64), set and read back with
//! `setsockopt` and `getsockopt`, kept in the world as the kernel keeps
//! them (`NodeWorld::socket_timeouts`, in jiffies at HZ 250; an accepted
//! connection inherits its listener's, as the kernel's clone of the
//! listening socket does).
//!
//! A receive timeout is how a program asks for one (`set_read_timeout`
//! in Rust's `std`): a read, `recv` or `accept` that finds nothing then
//! waits with a deadline, the logical millisecond its timeout ends at
//! (`Blocked::Read`, `Blocked::Accept`), and TIMEOUT ends it with EAGAIN
//! (a `MSG_WAITALL` receive returns what it has, if anything), as Linux
//! does once the time has passed. A timeout of zero jiffies (a negative
//! setting) does not wait at all: EAGAIN at once, as a non-blocking
//! socket. A send timeout is kept and read back, and changes nothing: a
//! write never waits in the model (a peer's buffer is never full).
//!
//! It owns the options and the end of a timed-out socket wait; holding
//! the call is the read's and the accept's (`connections`), and moving
//! the clock is TIMEOUT's (the supervisor's `apply`).

use nix::libc;

use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, SocketTimeouts, VFd};
use super::Answer;

/// `SO_RCVTIMEO` and `SO_SNDTIMEO` with a 64-bit `time_t` everywhere; on
/// x86-64 they read and write the same struct as the old numbers.
const SO_RCVTIMEO_NEW: i32 = 66;
const SO_SNDTIMEO_NEW: i32 = 67;

/// `struct timeval` (and `__kernel_sock_timeval`) on x86-64.
const TIMEVAL_BYTES: usize = 16;

/// Microseconds in a second.
const USEC_PER_SEC: i64 = 1_000_000;

/// The kernel's `MAX_SCHEDULE_TIMEOUT` (`LONG_MAX`): no timeout.
const MAX_SCHEDULE_TIMEOUT: i64 = i64::MAX;

/// Which of a socket's timeouts an option names.
#[derive(Clone, Copy)]
enum Which {
    Receive,
    Send,
}

fn which(level: i32, name: i32) -> Option<Which> {
    if level != libc::SOL_SOCKET {
        return None;
    }
    match name {
        libc::SO_RCVTIMEO | SO_RCVTIMEO_NEW => Some(Which::Receive),
        libc::SO_SNDTIMEO | SO_SNDTIMEO_NEW => Some(Which::Send),
        _ => None,
    }
}

/// A `struct timeval` as the kernel's `sock_set_timeout` takes it:
/// `Err(EDOM)` for microseconds out of range, `Some(0)` (do not wait) for
/// negative seconds, `None` (no timeout) for zero or for more than the
/// kernel can count, and otherwise jiffies, a started one counted whole.
pub(super) fn jiffies(sec: i64, usec: i64) -> Result<Option<u64>, i32> {
    let hz = SocketTimeouts::HZ as i64;
    if !(0..USEC_PER_SEC).contains(&usec) {
        return Err(libc::EDOM);
    }
    if sec < 0 {
        return Ok(Some(0));
    }
    if (sec == 0 && usec == 0) || sec >= MAX_SCHEDULE_TIMEOUT / hz - 1 {
        return Ok(None);
    }
    let per_jiffy = USEC_PER_SEC / hz;
    Ok(Some((sec * hz + (usec + per_jiffy - 1) / per_jiffy) as u64))
}

/// Jiffies as the `struct timeval` `getsockopt` reads back (`{0, 0}` for
/// none, as the kernel's `sock_get_timeout`).
fn timeval(jiffies: Option<u64>) -> [u8; TIMEVAL_BYTES] {
    let hz = SocketTimeouts::HZ;
    let (sec, usec) = match jiffies {
        None => (0, 0),
        Some(j) => ((j / hz) as i64, ((j % hz) * USEC_PER_SEC as u64 / hz) as i64),
    };
    let mut tv = [0u8; TIMEVAL_BYTES];
    tv[0..8].copy_from_slice(&sec.to_ne_bytes());
    tv[8..16].copy_from_slice(&usec.to_ne_bytes());
    tv
}

/// How a read or an accept that finds nothing waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wait {
    /// Until an action, without a deadline (no receive timeout).
    Forever,
    /// Until an action, or TIMEOUT at this logical time.
    Until(super::super::world::Millis),
    /// Not at all: a receive timeout of zero, EAGAIN at once.
    Never,
}

impl Supervisor {
    /// `setsockopt` of `SO_RCVTIMEO` or `SO_SNDTIMEO` on node `n`'s socket
    /// or connection `fd`: kept in the world, or the kernel's EINVAL,
    /// EFAULT or EDOM. `None` for every other option.
    pub(super) fn set_socket_timeout(&mut self, n: u8, c: &Notif, fd: i32) -> Option<Answer> {
        let which = which(c.args[1] as i32, c.args[2] as i32)?;
        if (c.args[4] as u32 as usize) < TIMEVAL_BYTES {
            return Some(Answer::Err(libc::EINVAL));
        }
        let Some(tv) = notif::read_mem(c.pid, c.args[3], TIMEVAL_BYTES) else {
            return Some(Answer::Err(libc::EFAULT));
        };
        let field = |at: usize| i64::from_ne_bytes(tv[at..at + 8].try_into().unwrap_or_default());
        let jiffies = match jiffies(field(0), field(8)) {
            Ok(j) => j,
            Err(e) => return Some(Answer::Err(e)),
        };
        let timeouts = &mut self.world.nodes[n as usize].socket_timeouts;
        let mut t = timeouts.get(&fd).copied().unwrap_or_default();
        match which {
            Which::Receive => t.receive = jiffies,
            Which::Send => t.send = jiffies,
        }
        // Kept canonical: a socket without timeouts has no entry.
        if t.is_none() {
            timeouts.remove(&fd);
        } else {
            timeouts.insert(fd, t);
        }
        Some(Answer::Val(0))
    }

    /// `getsockopt` of `SO_RCVTIMEO` or `SO_SNDTIMEO` on a socket or a
    /// connection of node `n`: the timeout as the kernel reads it back,
    /// truncated to the length given. `None` for every other option and
    /// descriptor.
    pub(super) fn get_socket_timeout(&self, n: u8, c: &Notif, vfd: Option<VFd>) -> Option<Answer> {
        let which = which(c.args[1] as i32, c.args[2] as i32)?;
        if !matches!(vfd, Some(VFd::Socket { .. } | VFd::Conn { .. })) {
            return None;
        }
        let t = self.world.nodes[n as usize].socket_timeouts.get(&(c.args[0] as i32)).copied().unwrap_or_default();
        let tv = timeval(match which {
            Which::Receive => t.receive,
            Which::Send => t.send,
        });
        let Some(len) = notif::read_mem(c.pid, c.args[4], 4) else { return Some(Answer::Err(libc::EFAULT)) };
        let len = i32::from_ne_bytes(len[..4].try_into().unwrap_or_default());
        if len < 0 {
            return Some(Answer::Err(libc::EINVAL));
        }
        let len = (len as usize).min(TIMEVAL_BYTES);
        let ok = notif::write_mem(c.pid, c.args[3], &tv[..len])
            && notif::write_mem(c.pid, c.args[4], &(len as u32).to_ne_bytes());
        Some(if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) })
    }

    /// How node `n`'s read or accept of `fd`, finding nothing, waits: by
    /// its receive timeout, from the clock now.
    pub(super) fn receive_wait(&self, n: u8, fd: i32) -> Wait {
        let timeout = self.world.nodes[n as usize].socket_timeouts.get(&fd).and_then(|t| t.receive);
        match timeout {
            None => Wait::Forever,
            Some(0) => Wait::Never,
            Some(j) => {
                // A jiffy after the timeout's end: the kernel's timer
                // counts from the next tick (measured: a 4 ms timeout
                // ends after about 8 ms, 100 ms after 104 to 108; the
                // review's `rcvlate` and `race5dl`).
                let ms = j.saturating_add(1).saturating_mul(1000).div_ceil(SocketTimeouts::HZ);
                Wait::Until(self.world.clock.saturating_add(ms))
            }
        }
    }

    /// Node `n`'s connection `fd`, accepted from listening socket
    /// `listener`, inherits the listener's timeouts.
    pub(super) fn inherit_socket_timeouts(&mut self, n: u8, listener: i32, fd: i32) {
        let timeouts = &mut self.world.nodes[n as usize].socket_timeouts;
        match timeouts.get(&listener).copied() {
            Some(t) => timeouts.insert(fd, t),
            None => timeouts.remove(&fd),
        };
    }

    /// TIMEOUT of node `n`, held in a read or an accept whose receive
    /// timeout has passed: the call fails with EAGAIN, but a `MSG_WAITALL`
    /// receive that has some bytes returns their count, as Linux's.
    pub(in crate::process) fn time_out_receive(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let node = &mut self.world.nodes[n as usize];
        node.blocked = Blocked::Nothing;
        let received = std::mem::take(&mut node.waitall);
        let answer = match received.len() {
            0 => Answer::Err(libc::EAGAIN),
            got => {
                // What the receive got in earlier steps, in its buffer.
                notif::restage_written(notif.pid, notif.args[1], &received);
                Answer::Val(got as i64)
            }
        };
        self.answer(n, &notif, answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's `sock_set_timeout`, at HZ 250.
    #[test]
    fn timeouts_are_kept_in_jiffies_as_the_kernel_keeps_them() {
        assert_eq!(jiffies(0, 500_000), Ok(Some(125)));
        assert_eq!(jiffies(1, 1), Ok(Some(251)), "a started jiffy counts whole");
        assert_eq!(jiffies(0, 0), Ok(None), "zero is no timeout");
        assert_eq!(jiffies(-1, 0), Ok(Some(0)), "negative is no wait at all");
        assert_eq!(jiffies(1, 1_000_000), Err(libc::EDOM));
        assert_eq!(jiffies(1, -1), Err(libc::EDOM));
        assert_eq!(jiffies(i64::MAX / 250, 0), Ok(None), "past what the kernel counts");
        assert_eq!(timeval(Some(125)), timeval_of(0, 500_000));
        assert_eq!(timeval(Some(251)), timeval_of(1, 4_000));
        assert_eq!(timeval(Some(0)), timeval_of(0, 0));
        assert_eq!(timeval(None), timeval_of(0, 0));
    }

    fn timeval_of(sec: i64, usec: i64) -> [u8; TIMEVAL_BYTES] {
        let mut tv = [0u8; TIMEVAL_BYTES];
        tv[0..8].copy_from_slice(&sec.to_ne_bytes());
        tv[8..16].copy_from_slice(&usec.to_ne_bytes());
        tv
    }
}

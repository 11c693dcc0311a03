//! Timers: `timerfd_create`, `timerfd_settime`, `timerfd_gettime`, and
//! reads of a timerfd. A timerfd is the world's (`VFd::Timer`, its
//! setting a `TimerFd` in nanoseconds of the logical clock: the next expiry and the
//! interval), so no kernel timer runs beside the checker and a snapshot's
//! forks share none. It has expired once the logical clock reaches its
//! deadline, whichever action moved the clock; a read of an expired timer
//! returns the expirations since (one, and one per whole interval past)
//! and re-arms a periodic one. Reading an armed timer that has not
//! expired waits (`Blocked::Timer`) until TIMEOUT moves the clock to its
//! deadline (the millisecond that covers it); reading a disarmed one
//! waits for ever, as on the kernel (`Blocked::Pause`). A non-blocking
//! timerfd answers EAGAIN instead. `timerfd_gettime` reads back the
//! setting as it was made, to the nanosecond.
//!
//! It owns the timers' calls and reads; polls of a timerfd are `poll`'s,
//! and moving the clock is TIMEOUT's.

use nix::libc;

use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, TimerFd, VFd};
use super::Answer;
use super::time::{EPOCH_BASE, nanos, read_timespec, timespec_of};

/// `struct itimerspec`: the interval, then the value, each a timespec.
const ITIMERSPEC_BYTES: usize = 32;

impl Supervisor {
    /// `timerfd_create(clock, flags)`: a disarmed timer in the world.
    pub(super) fn on_timerfd_create(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let realtime = match c.args[0] as i32 {
            libc::CLOCK_REALTIME => true,
            libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME => false,
            _ => return Ok(Answer::Err(libc::EINVAL)),
        };
        let flags = c.args[1] as i32;
        if flags & !(libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if let Some(fd) = self.add_fd(n, c, flags & libc::TFD_CLOEXEC != 0)? {
            let node = &mut self.world.nodes[n as usize];
            node.fds.insert(fd, VFd::Timer);
            node.timers.insert(fd, TimerFd { deadline: None, interval: 0, realtime });
            if flags & libc::TFD_NONBLOCK != 0 {
                node.nonblock.insert(fd);
            }
        }
        Ok(Answer::Done)
    }

    /// `timerfd_settime(fd, flags, new, old)` and `timerfd_gettime(fd,
    /// cur)`.
    pub(super) fn on_timerfd_time(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(&timer) = self.world.nodes[n as usize].timers.get(&fd) else {
            return Ok(Answer::Err(if self.owns(n, fd) { libc::EINVAL } else { libc::EBADF }));
        };
        // Reading a timer reads the node's clock, and time passes in the
        // call (`ProcessWorld::clock_reads`): one read back at once has less
        // left than was set, as on Linux. Setting one does not count: a
        // program that only sets timers (an event loop's) would make as
        // many worlds as settings, and learns nothing of the clock.
        if c.nr == libc::SYS_timerfd_gettime {
            self.tick(n, c)?;
        }
        let clock = self.world.now_ns();
        let (old_at, new) = if c.nr == libc::SYS_timerfd_gettime {
            (c.args[1], None)
        } else {
            let interval = match read_timespec(c, c.args[2]) {
                Ok(t) => t,
                Err(e) => return Ok(Answer::Err(e)),
            };
            let value = match read_timespec(c, c.args[2] + 16) {
                Ok(t) => t,
                Err(e) => return Ok(Answer::Err(e)),
            };
            let flags = c.args[1] as i32;
            if flags & !(libc::TFD_TIMER_ABSTIME | libc::TFD_TIMER_CANCEL_ON_SET) != 0 {
                return Ok(Answer::Err(libc::EINVAL));
            }
            let deadline = match value {
                (0, 0) => None,
                _ if flags & libc::TFD_TIMER_ABSTIME != 0 => {
                    let base = if timer.realtime { EPOCH_BASE } else { 0 };
                    Some(nanos(value.0.saturating_sub(base), value.1))
                }
                _ => Some(clock.saturating_add(nanos(value.0, value.1))),
            };
            let interval = nanos(interval.0, interval.1);
            (c.args[3], Some(TimerFd { deadline, interval, realtime: timer.realtime }))
        };
        if old_at != 0 {
            // What is left until the next expiry (of a periodic timer that
            // expired unread, the next one after now), and the interval.
            let left = match timer.deadline {
                None => 0,
                Some(d) if d > clock => d - clock,
                Some(_) if timer.interval == 0 => 0,
                Some(d) => {
                    let i = timer.interval;
                    i - (clock - d) % i
                }
            };
            let mut old = [0u8; ITIMERSPEC_BYTES];
            for (at, t) in [(0, timer.interval), (16, left)] {
                let (sec, nsec) = timespec_of(t);
                old[at..at + 8].copy_from_slice(&sec.to_ne_bytes());
                old[at + 8..at + 16].copy_from_slice(&nsec.to_ne_bytes());
            }
            if !notif::write_mem(c.pid, old_at, &old) {
                return Ok(Answer::Err(libc::EFAULT));
            }
        }
        if let Some(t) = new {
            self.world.nodes[n as usize].timers.insert(fd, t);
        }
        Ok(Answer::Val(0))
    }

    /// A read (call `c`) of timerfd `fd`: the expirations if it has
    /// expired, else EAGAIN or a wait.
    pub(super) fn read_timer(&mut self, n: u8, c: &Notif, fd: i32) -> Answer {
        // Only an 8-byte `read`, at once, as the kernel.
        if c.nr != libc::SYS_read || (c.args[2] as usize) < 8 {
            return Answer::Err(libc::EINVAL);
        }
        let now = self.world.now_ns();
        let node = &self.world.nodes[n as usize];
        let Some(&timer) = node.timers.get(&fd) else { return Answer::Err(libc::EINVAL) };
        if timer.expired(now) {
            return self.take_expirations(n, c, fd);
        }
        if node.nonblock.contains(&fd) {
            return Answer::Err(libc::EAGAIN);
        }
        match timer.deadline {
            Some(_) => Answer::Hold(Blocked::Timer { fd }),
            None => Answer::Hold(Blocked::Pause),
        }
    }

    /// The expirations of expired timer `fd` read by call `c` (an 8-byte
    /// count), the timer re-armed or disarmed.
    /// The read was checked by `read_timer` (an 8-byte `read`).
    fn take_expirations(&mut self, n: u8, c: &Notif, fd: i32) -> Answer {
        let clock = self.world.now_ns();
        let Some(timer) = self.world.nodes[n as usize].timers.get_mut(&fd) else { return Answer::Err(libc::EINVAL) };
        let Some(deadline) = timer.deadline else { return Answer::Err(libc::EAGAIN) };
        let count = match timer.interval {
            0 => {
                timer.deadline = None;
                1
            }
            i => {
                let k = 1 + (clock - deadline) / i;
                timer.deadline = Some(deadline.saturating_add(k.saturating_mul(i)));
                k
            }
        };
        if notif::write_mem(c.pid, c.args[1], &count.to_ne_bytes()) {
            Answer::Val(8)
        } else {
            Answer::Err(libc::EFAULT)
        }
    }

    /// TIMEOUT of node `n` blocked reading timer `fd`: the clock reaches
    /// its deadline, and the read returns its expirations.
    pub(in crate::process) fn expire_timer(&mut self, n: u8, fd: i32) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        if let Some(d) = self.world.nodes[n as usize].timers.get(&fd).and_then(|t| t.wakes_at()) {
            self.world.clock = self.world.clock.max(d);
        }
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let answer = self.take_expirations(n, &notif, fd);
        self.answer(n, &notif, answer)
    }
}

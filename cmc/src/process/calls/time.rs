//! The logical clock: `clock_gettime`, `gettimeofday` and `time` answer
//! from the world's clock, which moves only at TIMEOUT actions, so a node
//! reads the same time on every replay. The vDSO entry points reach these
//! calls because the preload patches them.
//!
//! It owns the answers to the clock's calls; it does not move the clock
//! (that is TIMEOUT, in the supervisor's `apply`), and sleeping, polling
//! and timers are refused in the table.

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::Answer;

/// `CLOCK_REALTIME` at logical second 0 (2026-01-01T00:00:00Z). Monotonic
/// clocks start at 0.
pub const EPOCH_BASE: i64 = 1_767_225_600;

impl Supervisor {
    pub(super) fn on_clock_gettime(&self, c: &Notif) -> Answer {
        let clock = c.args[0] as i32;
        let base = match clock {
            libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => EPOCH_BASE,
            _ => 0,
        };
        let sec = base + self.world.clock as i64;
        let ts = [sec.to_ne_bytes(), 0i64.to_ne_bytes()].concat();
        if notif::write_mem(c.pid, c.args[1], &ts) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
    }

    pub(super) fn on_gettimeofday(&self, c: &Notif) -> Answer {
        let sec = EPOCH_BASE + self.world.clock as i64;
        let tv = [sec.to_ne_bytes(), 0i64.to_ne_bytes()].concat();
        let ok_tv = c.args[0] == 0 || notif::write_mem(c.pid, c.args[0], &tv);
        let ok_tz = c.args[1] == 0 || notif::write_mem(c.pid, c.args[1], &[0u8; 8]);
        if ok_tv && ok_tz { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
    }

    pub(super) fn on_time(&self, c: &Notif) -> Answer {
        let sec = EPOCH_BASE + self.world.clock as i64;
        if c.args[0] != 0 && !notif::write_mem(c.pid, c.args[0], &sec.to_ne_bytes()) {
            Answer::Err(libc::EFAULT)
        } else {
            Answer::Val(sec)
        }
    }
}

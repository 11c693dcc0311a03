//! The logical clock: `clock_gettime`, `gettimeofday` and `time` answer
//! from the world's clock, which moves only at TIMEOUT actions, so a node
//! reads the same time on every replay. The vDSO entry points reach these
//! calls because the preload patches them. The other calls that read the
//! machine's time or its running figures answer from the logical clock
//! and fixed values: `times` (no CPU time is ever used), `getrusage`
//! (zeros), `sysinfo` (uptime the logical clock, fixed memory, no load),
//! `getcpu` (processor 0), and `adjtimex` and `clock_adjtime` when they
//! only read (an unsynchronised clock at the logical time); setting the
//! clock is refused.
//!
//! It owns the answers to the clock's calls; it does not move the clock
//! (that is TIMEOUT, in the supervisor's `apply`), and sleeping, polling
//! and timers are refused in the table.

use nix::libc;

use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::{Answer, refuse};

/// Clock ticks per second of `times` (`USER_HZ`).
const TICKS_PER_SECOND: i64 = 100;

/// What `sysinfo` reports of memory: 4 GiB, half of it free, no swap.
pub const SYSINFO_TOTAL_RAM: u64 = 4 << 30;
pub const SYSINFO_FREE_RAM: u64 = 2 << 30;

/// `adjtimex` modes that only read: none, and `ADJ_OFFSET_SS_READ`
/// (`adjtime(NULL, &old)`).
const ADJ_OFFSET_SS_READ: u32 = 0xa001;

/// `struct timex`, `struct rusage` and `struct sysinfo` on x86-64.
const TIMEX_BYTES: usize = 208;
const RUSAGE_BYTES: usize = 144;
const SYSINFO_BYTES: usize = 112;

fn put(out: &mut [u8], at: usize, v: i64) {
    out[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

fn written(c: &Notif, at: u64, bytes: &[u8], val: i64) -> Answer {
    if notif::write_mem(c.pid, at, bytes) { Answer::Val(val) } else { Answer::Err(libc::EFAULT) }
}

/// `getrusage`: no time used, no memory, no faults, whoever asks.
pub(super) fn on_getrusage(c: &Notif) -> Answer {
    match c.args[0] as i32 {
        libc::RUSAGE_SELF | libc::RUSAGE_CHILDREN | libc::RUSAGE_THREAD => {
            written(c, c.args[1], &[0u8; RUSAGE_BYTES], 0)
        }
        _ => Answer::Err(libc::EINVAL),
    }
}

/// `getcpu` (the vDSO's too, once patched): processor 0 of NUMA node 0.
pub(super) fn on_getcpu(c: &Notif) -> Answer {
    for at in [c.args[0], c.args[1]] {
        if at != 0 && !notif::write_mem(c.pid, at, &0u32.to_ne_bytes()) {
            return Answer::Err(libc::EFAULT);
        }
    }
    Answer::Val(0)
}

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

    /// `times`: the logical clock in ticks, and no CPU time used.
    pub(super) fn on_times(&self, c: &Notif) -> Answer {
        let ticks = self.world.clock as i64 * TICKS_PER_SECOND;
        if c.args[0] == 0 {
            return Answer::Val(ticks);
        }
        written(c, c.args[0], &[0u8; 32], ticks)
    }

    /// `sysinfo`: up for the logical clock's seconds, no load, fixed
    /// memory, one process.
    pub(super) fn on_sysinfo(&self, c: &Notif) -> Answer {
        let mut info = [0u8; SYSINFO_BYTES];
        put(&mut info, 0, self.world.clock as i64);
        put(&mut info, 32, SYSINFO_TOTAL_RAM as i64);
        put(&mut info, 40, SYSINFO_FREE_RAM as i64);
        info[80..82].copy_from_slice(&1u16.to_ne_bytes());
        info[104..108].copy_from_slice(&1u32.to_ne_bytes());
        written(c, c.args[0], &info, 0)
    }

    /// `adjtimex` and `clock_adjtime` of `CLOCK_REALTIME` that only read:
    /// an unsynchronised clock (`TIME_ERROR`) at the logical time. Setting
    /// the clock, or another clock, is refused.
    pub(super) fn on_adjtimex(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (clock, at) = match c.nr {
            libc::SYS_clock_adjtime => (c.args[0] as i32, c.args[1]),
            _ => (libc::CLOCK_REALTIME, c.args[0]),
        };
        let Some(modes) = notif::read_mem(c.pid, at, 4) else { return Ok(Answer::Err(libc::EFAULT)) };
        let modes = u32::from_ne_bytes(modes.try_into().unwrap_or_default());
        if clock != libc::CLOCK_REALTIME || (modes != 0 && modes != ADJ_OFFSET_SS_READ) {
            return refuse(
                n,
                c,
                "it would adjust the machine's clock (only reading CLOCK_REALTIME's adjustment is answered)",
            );
        }
        let mut tx = [0u8; TIMEX_BYTES];
        tx[0..4].copy_from_slice(&modes.to_ne_bytes());
        // As a kernel whose clock no NTP daemon disciplines reports it.
        put(&mut tx, 24, 16_000_000); // maxerror (us)
        put(&mut tx, 32, 16_000_000); // esterror (us)
        tx[40..44].copy_from_slice(&libc::STA_UNSYNC.to_ne_bytes()); // status
        put(&mut tx, 48, 2); // constant
        put(&mut tx, 56, 1); // precision (us)
        put(&mut tx, 64, 32_768_000); // tolerance (ppm << 16)
        put(&mut tx, 72, EPOCH_BASE + self.world.clock as i64); // time.tv_sec
        put(&mut tx, 88, 10_000); // tick (us)
        Ok(written(c, at, &tx, libc::TIME_ERROR as i64))
    }
}

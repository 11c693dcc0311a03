//! The logical clock: `clock_gettime`, `gettimeofday` and `time` answer
//! from the world's clock, which moves only at TIMEOUT actions, so a node
//! reads the same time on every replay. glibc reaches these calls, not the
//! vDSO, because the start stub removes the vDSO before the program is
//! loaded. The other calls that read the
//! machine's time or its running figures answer from the logical clock
//! and fixed values: `times` (no CPU time is ever used), `getrusage`
//! (zeros), `sysinfo` (uptime the logical clock, fixed memory, no load),
//! `getcpu` (the processor the node is pinned to, of NUMA node 0), and `adjtimex` and `clock_adjtime` when they
//! only read (an unsynchronised clock at the logical time); setting the
//! clock is refused.
//!
//! Sleeps: `nanosleep` and `clock_nanosleep` (relative, or absolute on a
//! clock the logical clock drives) hold the node asleep until a logical
//! millisecond (the end rounded up), `Blocked::Sleep`: one that has ended
//! already, or is empty, returns at once. TIMEOUT wakes a sleeping node,
//! and the clock reaches the sleep's end (a millisecond at least): a sleep
//! may end late, never early.
//!
//! It owns the answers to the clock's calls and the start of a sleep; it
//! does not move the clock (that is TIMEOUT, in the supervisor's `apply`),
//! and polling and timers are refused in the table.

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, Millis};
use super::super::{ProcessError, limits};
use super::{Answer, refuse};

/// `sec` seconds and `nsec` nanoseconds, in nanoseconds; 0 for a negative
/// time.
pub(super) fn nanos(sec: i64, nsec: i64) -> u64 {
    if sec < 0 {
        return 0;
    }
    (sec as u64).saturating_mul(1_000_000_000).saturating_add(nsec.max(0) as u64)
}

/// `ns` nanoseconds as a timespec's seconds and nanoseconds.
pub(super) fn timespec_of(ns: u64) -> (i64, i64) {
    ((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64)
}

/// The logical time `t` as a timespec's seconds and nanoseconds.
fn sec_nsec(t: Millis) -> (i64, i64) {
    timespec_of(t.saturating_mul(1_000_000))
}

/// How long a wait of `sec` seconds and `nsec` nanoseconds (not both
/// zero) lasts: to the first whole millisecond after its end. Linux ends a
/// wait late, never early (a sleep's or a poll's by the timer slack, 50 µs
/// at least; the review's `over` probe, a 1 ms sleep that took more than
/// 1 ms, aborts in 10 of 10 native runs).
pub(super) fn wait_span(sec: i64, nsec: i64) -> Millis {
    nanos(sec, nsec) / 1_000_000 + 1
}

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

/// A `struct timespec` the node passed: seconds and nanoseconds, checked
/// as the kernel checks them (EFAULT, EINVAL).
pub(super) fn read_timespec(c: &Notif, at: u64) -> Result<(i64, i64), i32> {
    let b = notif::read_mem(c.pid, at, 16).ok_or(libc::EFAULT)?;
    let sec = i64::from_ne_bytes(b[0..8].try_into().map_err(|_| libc::EFAULT)?);
    let nsec = i64::from_ne_bytes(b[8..16].try_into().map_err(|_| libc::EFAULT)?);
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(libc::EINVAL);
    }
    Ok((sec, nsec))
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

/// `getcpu`: the processor every node of the search is pinned to (which
/// `rdpid` and `lsl` read too, without a system call), of NUMA node 0.
pub(super) fn on_getcpu(c: &Notif, cpu: u32) -> Answer {
    for (at, v) in [(c.args[0], cpu), (c.args[1], 0)] {
        if at != 0 && !notif::write_mem(c.pid, at, &v.to_ne_bytes()) {
            return Answer::Err(libc::EFAULT);
        }
    }
    Answer::Val(0)
}

/// `CLOCK_REALTIME` at logical time 0 (2026-01-01T00:00:00Z). Monotonic
/// clocks start at 0.
pub const EPOCH_BASE: i64 = 1_767_225_600;

/// What a clock id names, as the kernel decodes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// Wall-clock time: 2026-01-01 plus the logical clock.
    Real,
    /// Time since boot: the logical clock.
    Monotonic,
    /// A coarse clock of either kind (the kernel's resolution is a tick).
    Coarse(i64),
    /// The CPU time of the node (its process or its thread): none is ever
    /// used, as `times` and `getrusage` say.
    Cpu,
}

/// The kernel's coarse clocks' resolution, one tick at `CONFIG_HZ=250`
/// (Debian's).
const COARSE_NS: i64 = 4_000_000;

/// Decodes clock id `id` for node `n`: the fixed clocks, and the CPU-time
/// clocks of a process or thread by pid (`clock_getcpuclockid`), the
/// node's own (0 or its virtual pid) only. `None` (EINVAL) for anything
/// else: an unused number, another process, a clock of a descriptor.
fn clock(me: i64, id: i32) -> Option<Clock> {
    Some(match id {
        libc::CLOCK_REALTIME | libc::CLOCK_TAI | libc::CLOCK_REALTIME_ALARM => Clock::Real,
        libc::CLOCK_REALTIME_COARSE => Clock::Coarse(EPOCH_BASE),
        libc::CLOCK_MONOTONIC | libc::CLOCK_MONOTONIC_RAW | libc::CLOCK_BOOTTIME | libc::CLOCK_BOOTTIME_ALARM => {
            Clock::Monotonic
        }
        libc::CLOCK_MONOTONIC_COARSE => Clock::Coarse(0),
        libc::CLOCK_PROCESS_CPUTIME_ID | libc::CLOCK_THREAD_CPUTIME_ID => Clock::Cpu,
        id if id < 0 => {
            // `(~pid << 3) | type`: type 3 is a descriptor's clock.
            let pid = !(id >> 3) as i64;
            let own = pid == 0 || pid == me;
            if id & 3 == 3 || !own {
                return None;
            }
            Clock::Cpu
        }
        _ => return None,
    })
}

/// `clock_getres`: a nanosecond, but a tick for the coarse clocks.
pub(super) fn on_clock_getres(me: i64, c: &Notif) -> Answer {
    let ns = match clock(me, c.args[0] as i32) {
        None => return Answer::Err(libc::EINVAL),
        Some(Clock::Coarse(_)) => COARSE_NS,
        Some(_) => 1,
    };
    if c.args[1] == 0 {
        return Answer::Val(0);
    }
    written(c, c.args[1], &[0i64.to_ne_bytes(), ns.to_ne_bytes()].concat(), 0)
}

impl Supervisor {
    /// What node `n`'s clocks say now, as seconds and nanoseconds of the
    /// monotonic clock, and its CPU time in nanoseconds: the logical clock
    /// and a nanosecond per read before this one, which this read counts
    /// (`ProcessWorld::clock_reads`; on Linux two reads differ, and a process
    /// that runs uses CPU time).
    fn read_clock(&mut self, n: u8, c: &Notif) -> Result<((i64, i64), i64), ProcessError> {
        let (now, cpu) = self.tick(n, c)?;
        Ok((timespec_of(now), cpu as i64))
    }

    /// Node `n`'s read of its clocks by call `c`: what they say
    /// ([`ProcessWorld::now_ns`](super::super::world::ProcessWorld::now_ns))
    /// and its CPU time, in nanoseconds; the read counts, so the next says
    /// a nanosecond more.
    pub(super) fn tick(&mut self, n: u8, c: &Notif) -> Result<(u64, u64), ProcessError> {
        let now = self.world.now_ns();
        let reads = self.world.clock_reads;
        if reads as usize >= limits::CLOCK_READS_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "clock_reads_max",
                max: limits::CLOCK_READS_MAX,
                detail: format!(
                    "{} reads a clock once more: nodes that read a clock a million times on one path (a wait that \
                     spins on it) would see it pass the logical clock by a millisecond; make it wait in a call",
                    super::super::syscalls::describe(c.nr)
                ),
            });
        }
        self.world.clock_reads += 1;
        let node = &mut self.world.nodes[n as usize];
        let cpu = node.life_clock_reads;
        node.life_clock_reads += 1;
        Ok((now, cpu as u64))
    }

    /// `clock_gettime`: the logical clock, on every clock a node may read.
    pub(super) fn on_clock_gettime(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let Some(which) = clock(self.world.pid(n), c.args[0] as i32) else { return Ok(Answer::Err(libc::EINVAL)) };
        let ((sec, nsec), cpu) = self.read_clock(n, c)?;
        let (sec, nsec) = match which {
            Clock::Cpu => (0, cpu),
            Clock::Real => (EPOCH_BASE + sec, nsec),
            Clock::Monotonic => (sec, nsec),
            // The last tick the clock passed.
            Clock::Coarse(base) => (base + sec, nsec - nsec % COARSE_NS),
        };
        let ts = [sec.to_ne_bytes(), nsec.to_ne_bytes()].concat();
        Ok(if notif::write_mem(c.pid, c.args[1], &ts) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) })
    }

    pub(super) fn on_gettimeofday(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        // Only a read of the time counts as one.
        let ok_tv = c.args[0] == 0 || {
            let ((sec, nsec), _) = self.read_clock(n, c)?;
            let tv = [(EPOCH_BASE + sec).to_ne_bytes(), (nsec / 1000).to_ne_bytes()].concat();
            notif::write_mem(c.pid, c.args[0], &tv)
        };
        let ok_tz = c.args[1] == 0 || notif::write_mem(c.pid, c.args[1], &[0u8; 8]);
        Ok(if ok_tv && ok_tz { Answer::Val(0) } else { Answer::Err(libc::EFAULT) })
    }

    pub(super) fn on_time(&self, c: &Notif) -> Answer {
        let sec = EPOCH_BASE + sec_nsec(self.world.clock).0;
        if c.args[0] != 0 && !notif::write_mem(c.pid, c.args[0], &sec.to_ne_bytes()) {
            Answer::Err(libc::EFAULT)
        } else {
            Answer::Val(sec)
        }
    }

    /// `nanosleep(req, rem)`: asleep until the logical millisecond that
    /// covers `req` from now; at once if `req` is zero.
    pub(super) fn on_nanosleep(&self, c: &Notif) -> Result<Answer, ProcessError> {
        Ok(match read_timespec(c, c.args[0]) {
            Err(e) => Answer::Err(e),
            Ok((0, 0)) => Answer::Val(0),
            Ok((sec, nsec)) => Answer::Hold(Blocked::Sleep { until: self.after(sec, nsec) }),
        })
    }

    /// `clock_nanosleep(clock, flags, req, rem)`: as `nanosleep`, or with
    /// `TIMER_ABSTIME` until `req` on `clock` (at once if it has passed).
    pub(super) fn on_clock_nanosleep(&self, c: &Notif) -> Result<Answer, ProcessError> {
        let base = match c.args[0] as i32 {
            libc::CLOCK_REALTIME | libc::CLOCK_TAI => EPOCH_BASE,
            libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME => 0,
            _ => return Ok(Answer::Err(libc::EINVAL)),
        };
        let (sec, nsec) = match read_timespec(c, c.args[2]) {
            Err(e) => return Ok(Answer::Err(e)),
            Ok(t) => t,
        };
        if c.args[1] as i32 & libc::TIMER_ABSTIME == 0 {
            return Ok(match (sec, nsec) {
                (0, 0) => Answer::Val(0),
                _ => Answer::Hold(Blocked::Sleep { until: self.after(sec, nsec) }),
            });
        }
        // At once where the node's clocks have passed `req` (it may have
        // read it); else until the first logical millisecond after it.
        let end = nanos(sec.saturating_sub(base), nsec);
        Ok(if end <= self.world.now_ns() {
            Answer::Val(0)
        } else {
            Answer::Hold(Blocked::Sleep { until: end / 1_000_000 + 1 })
        })
    }

    /// When a wait of `sec` seconds and `nsec` nanoseconds (not both zero)
    /// made now ends: the first logical millisecond after its end, from
    /// what the clocks say now
    /// ([`ProcessWorld::now_ns`](super::super::world::ProcessWorld::now_ns)),
    /// so that it never ends before a time a node may have read and the
    /// wait.
    pub(super) fn after(&self, sec: i64, nsec: i64) -> Millis {
        self.world.now_ns().saturating_add(nanos(sec, nsec)) / 1_000_000 + 1
    }

    /// Wakes node `n` from its sleep: the call returns 0.
    pub(in crate::process) fn wake(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        self.answer(n, &notif, Answer::Val(0))
    }

    /// `times`: the logical clock in ticks, and no CPU time used.
    pub(super) fn on_times(&self, c: &Notif) -> Answer {
        let ticks = (self.world.clock / (1000 / TICKS_PER_SECOND as u64)) as i64;
        if c.args[0] == 0 {
            return Answer::Val(ticks);
        }
        written(c, c.args[0], &[0u8; 32], ticks)
    }

    /// `sysinfo`: up for the logical clock's seconds, no load, fixed
    /// memory, one process.
    pub(super) fn on_sysinfo(&self, c: &Notif) -> Answer {
        let mut info = [0u8; SYSINFO_BYTES];
        put(&mut info, 0, sec_nsec(self.world.clock).0);
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
        let (sec, nsec) = sec_nsec(self.world.clock);
        put(&mut tx, 72, EPOCH_BASE + sec); // time.tv_sec
        put(&mut tx, 80, nsec / 1000); // time.tv_usec
        put(&mut tx, 88, 10_000); // tick (us)
        Ok(written(c, at, &tx, libc::TIME_ERROR as i64))
    }
}

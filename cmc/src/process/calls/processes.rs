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
use super::super::lives::signal_from;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, VFd};
use super::threads::FutexCall;
use super::{Answer, forbid, refuse};

/// `getpid()` of node i in its first life is `VIRTUAL_PID_BASE + i`, and
/// `NODES_MAX` more in each life after (`ProcessWorld::pid`): real pids
/// differ on every replay (research, pitfall 3).
pub const VIRTUAL_PID_BASE: i64 = 1000;

/// Whether process `pid` blocks signal `sig` (`SigBlk` of its status). An
/// unreadable status counts as blocked: the signal is refused.
fn blocked(pid: i32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return true };
    let mask =
        status.lines().find_map(|l| l.strip_prefix("SigBlk:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    mask.is_none_or(|m| m & (1u64 << (sig - 1)) != 0)
}

/// Whether process `pid` catches signal `sig` (`SigCgt` of its status).
/// An unreadable status counts as caught.
fn caught(pid: i32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return true };
    let mask =
        status.lines().find_map(|l| l.strip_prefix("SigCgt:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    mask.is_none_or(|m| m & (1u64 << (sig - 1)) != 0)
}

/// Whether process `pid` ignores signal `sig` (`SigIgn` of its status).
/// An unreadable status counts as not ignored.
fn ignored(pid: i32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
    let mask =
        status.lines().find_map(|l| l.strip_prefix("SigIgn:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    mask.is_some_and(|m| m & (1u64 << (sig - 1)) != 0)
}

/// `getpid` and `gettid` are the node's virtual pid in its life, `me`;
/// `getppid` is 1.
pub(super) fn on_getpid(me: i64, c: &Notif) -> Answer {
    match c.nr {
        libc::SYS_getppid => Answer::Val(1),
        _ => Answer::Val(me),
    }
}

/// `madvise` with an advice the table does not pass: `MADV_FREE` is
/// answered as a kernel under no memory pressure does, keeping the contents
/// (so that what a node reads back does not depend on the machine's
/// memory); the advices that make memory differ between forks, and those
/// that poison pages, are refused.
pub(super) fn on_madvise(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    match c.args[2] as i32 {
        libc::MADV_FREE => Ok(Answer::Val(0)),
        libc::MADV_WIPEONFORK | libc::MADV_DONTFORK | libc::MADV_DOFORK => {
            refuse(n, c, "MADV_WIPEONFORK and MADV_DONTFORK make memory differ between forks of a node")
        }
        advice => refuse(n, c, &format!("madvise advice {advice} is not modelled")),
    }
}

/// `getpgrp`, `getpgid`, `getsid`, `setpgid`, `setsid`: a node is a daemon,
/// the leader of its own session and process group, whose ids are its
/// virtual pid; its parent (pid 1, init) leads its own. So `setsid` fails
/// with EPERM as for any group leader, and `setpgid` of itself to its own
/// group changes nothing.
pub(super) fn on_process_group(me: i64, c: &Notif) -> Answer {
    let who = |arg: u64| match arg as i32 as i64 {
        0 => Some(me),
        p if p == me || p == 1 => Some(p),
        _ => None,
    };
    match c.nr {
        libc::SYS_getpgrp => Answer::Val(me),
        libc::SYS_getpgid | libc::SYS_getsid => match who(c.args[0]) {
            Some(p) => Answer::Val(p),
            None => Answer::Err(libc::ESRCH),
        },
        libc::SYS_setsid => Answer::Err(libc::EPERM),
        _ => {
            let group = c.args[1] as i32 as i64;
            match who(c.args[0]) {
                None => Answer::Err(libc::ESRCH),
                Some(_) if group < 0 => Answer::Err(libc::EINVAL),
                Some(p) if p == me && (group == 0 || group == me) => Answer::Val(0),
                Some(_) => Answer::Err(libc::EPERM),
            }
        }
    }
}

/// `uname`: a fixed machine, the same on every run and every host.
pub const UNAME: [&str; 6] = ["Linux", "cmc", "6.1.0-cmc", "#1 SMP PREEMPT_DYNAMIC cmc", "x86_64", "(none)"];

pub(super) fn on_uname(c: &Notif) -> Answer {
    let mut buf = [0u8; 6 * 65];
    for (i, field) in UNAME.iter().enumerate() {
        buf[i * 65..i * 65 + field.len()].copy_from_slice(field.as_bytes());
    }
    if notif::write_mem(c.pid, c.args[0], &buf) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
}

/// `prctl(PR_GET_AUXV, ...)` (Linux 6.4; not in the `libc` crate).
const PR_GET_AUXV: i32 = 0x4155_5856;

/// The personality every node runs with: Linux, address space layout
/// randomisation off.
const PERSONALITY: u64 = libc::ADDR_NO_RANDOMIZE as u64;

/// `personality`: the query, and setting the one it has, answer it;
/// changing it is refused (it changes what `uname` and `mmap` answer).
pub(super) fn on_personality(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    match c.args[0] as u32 as u64 {
        0xffff_ffff | PERSONALITY => Ok(Answer::Val(PERSONALITY as i64)),
        p => refuse(n, c, &format!("changing the personality to {p:#x} is not modelled")),
    }
}

/// `setrlimit` and `prlimit64` of the node itself: reading any limit runs
/// (the checker fixed them at the node's start); setting one is allowed for
/// the limits a fork copies and that count nothing a process accumulates:
/// descriptors (a node at its limit gets EMFILE, as on Linux), the stack
/// and core files. CPU time would count from zero in every fork, files are
/// the world's, and the others limit kernel objects a node cannot make:
/// each is refused by name.
pub(super) fn on_rlimit(n: u8, me: i64, c: &Notif) -> Result<Answer, ProcessError> {
    let (pid, resource, new) = match c.nr {
        libc::SYS_prlimit64 => (c.args[0] as i32 as i64, c.args[1] as u32, c.args[2]),
        _ => (0, c.args[0] as u32, c.args[1]),
    };
    if pid != 0 && pid != me {
        return refuse(n, c, "the resource limits of another process");
    }
    let allowed = match resource {
        _ if new == 0 => Ok(Answer::Continue),
        libc::RLIMIT_NOFILE | libc::RLIMIT_STACK | libc::RLIMIT_CORE => Ok(Answer::Continue),
        r => {
            let name = match r {
                libc::RLIMIT_CPU => "RLIMIT_CPU (CPU time would count from zero in every fork of a node)",
                libc::RLIMIT_RTTIME => "RLIMIT_RTTIME (CPU time would count from zero in every fork of a node)",
                libc::RLIMIT_FSIZE => "RLIMIT_FSIZE (the data directory's files are the world's)",
                libc::RLIMIT_AS | libc::RLIMIT_DATA | libc::RLIMIT_RSS => {
                    "a memory limit (the checker's own mappings in the node count against it)"
                }
                _ => "a limit of kernel objects or priorities the checker does not model",
            };
            refuse(n, c, &format!("setting {name}"))
        }
    };
    if !matches!(allowed, Ok(Answer::Continue)) || pid == 0 {
        return allowed;
    }
    // `prlimit64` of its own virtual pid: the kernel would take it for
    // another process's (or none), so the checker makes the call on the
    // node's real process and copies what it gives.
    let limit_of = |at: u64| -> Option<libc::rlimit> {
        let b = notif::read_mem(c.pid, at, 16)?;
        let word = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Some(libc::rlimit { rlim_cur: word(0), rlim_max: word(8) })
    };
    let new_limit = match new {
        0 => None,
        at => match limit_of(at) {
            Some(l) => Some(l),
            None => return Ok(Answer::Err(libc::EFAULT)),
        },
    };
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    let new_ptr = new_limit.as_ref().map_or(std::ptr::null(), |l| l as *const libc::rlimit);
    // SAFETY: both pointers are to locals that outlive the call.
    if unsafe { libc::prlimit(c.pid as libc::pid_t, resource as _, new_ptr, &mut old) } != 0 {
        return Ok(Answer::Err(nix::errno::Errno::last() as i32));
    }
    let old_at = c.args[3];
    let bytes = [old.rlim_cur.to_ne_bytes(), old.rlim_max.to_ne_bytes()].concat();
    Ok(if old_at == 0 || notif::write_mem(c.pid, old_at, &bytes) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) })
}

/// The size of the CPU mask the kernel copies (`cpumask_size()`, one long
/// for up to 64 processors).
const CPU_MASK_BYTES: usize = 8;

/// `sched_getaffinity`: the node runs on one processor, the one the checker
/// pinned it to (as `getcpu` says). `sched_setaffinity` may only keep it
/// there.
pub(super) fn on_affinity(n: u8, me: i64, c: &Notif, cpu: u32) -> Result<Answer, ProcessError> {
    let cpu = cpu.min(63);
    let pid = c.args[0] as i32 as i64;
    if pid != 0 && pid != me {
        return Ok(Answer::Err(libc::ESRCH));
    }
    let len = c.args[1] as usize;
    if c.nr == libc::SYS_sched_getaffinity {
        if len < CPU_MASK_BYTES || len % std::mem::size_of::<u64>() != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let mask = (1u64 << cpu).to_ne_bytes();
        return Ok(if notif::write_mem(c.pid, c.args[2], &mask) {
            Answer::Val(CPU_MASK_BYTES as i64)
        } else {
            Answer::Err(libc::EFAULT)
        });
    }
    let Some(mask) = notif::read_mem(c.pid, c.args[2], len.min(1024)) else { return Ok(Answer::Err(libc::EFAULT)) };
    let only = |i: usize, b: &u8| *b == if i == cpu as usize / 8 { 1u8 << (cpu % 8) } else { 0 };
    if mask.len() > cpu as usize / 8 && mask.iter().enumerate().all(|(i, b)| only(i, b)) {
        return Ok(Answer::Val(0));
    }
    refuse(n, c, &format!("a node runs on one processor, {cpu}: another mask is not modelled"))
}

/// `futex` in a process of one thread (`call`, decoded by
/// `Supervisor::futex_call`): a wake finds no waiter; a wait whose word
/// has not changed waits for ever (no other thread could wake it), as
/// `pause`, or, timed, until TIMEOUT ends it with ETIMEDOUT. The
/// operations on other words or priority-inheritance locks are refused.
pub(super) fn on_futex(n: u8, c: &Notif, call: Result<FutexCall, i32>) -> Result<Answer, ProcessError> {
    match call {
        Err(e) => Ok(Answer::Err(e)),
        Ok(FutexCall::Wake { .. }) => Ok(Answer::Val(0)),
        Ok(FutexCall::Wait { until: None, .. }) => Ok(Answer::Hold(Blocked::Pause)),
        Ok(FutexCall::Wait { bitset, until }) => Ok(Answer::Hold(Blocked::Futex { addr: c.args[0], bitset, until })),
        Ok(FutexCall::Other(op)) => refuse(n, c, &format!("futex operation {op} is not modelled")),
    }
}

/// `prctl` with an option the table does not pass. A filter of the
/// target's own is forbidden; `PR_SET_TSC` is the preload's alone, before
/// its hello (`greeted`): enabling `rdtsc` would read real time, and a
/// program's own trap would find the preload's emulation where it asked
/// for SIGSEGV; making the node non-dumpable would hide its memory from
/// the checker; every other option is refused by its number.
pub(super) fn on_prctl(n: u8, c: &Notif, greeted: bool) -> Result<Answer, ProcessError> {
    match c.args[0] as i32 {
        // The preload's own trap, set before its hello.
        libc::PR_SET_TSC if c.args[1] == libc::PR_TSC_SIGSEGV as u64 && !greeted => Ok(Answer::Continue),
        libc::PR_SET_TSC if c.args[1] == libc::PR_TSC_SIGSEGV as u64 => refuse(
            n,
            c,
            "PR_SET_TSC, PR_TSC_SIGSEGV: a program's own rdtsc trap is not modelled (the preload's emulation would answer rdtsc where the program asked for SIGSEGV)",
        ),
        libc::PR_SET_TSC => refuse(
            n,
            c,
            "PR_SET_TSC other than PR_TSC_SIGSEGV would let rdtsc read the real time stamp counter, which the preload traps",
        ),
        // The auxiliary vector a kernel gives is the start stub's (every
        // life is a fork of it), not the one the stub built for the
        // program, which `getauxval` reads.
        PR_GET_AUXV => refuse(
            n,
            c,
            "PR_GET_AUXV: the kernel's auxiliary vector is the start stub's, not the life's; it is not modelled",
        ),
        libc::PR_SET_SECCOMP => forbid(n, c, "a seccomp filter (it would be compiled for every life)"),
        // The death signal a snapshot's forks have is the checker's (the
        // start stub sets it in every fork, so that no node outlives the
        // checker): it is not the one the program set.
        libc::PR_GET_PDEATHSIG => {
            refuse(n, c, "PR_GET_PDEATHSIG: a node's death signal is the checker's, not the one it set")
        }
        // As a program exec'd outside any sandbox sees them: no seccomp
        // filter, no no_new_privs, rdtsc enabled (the checker's filter,
        // no_new_privs and rdtsc trap are not the program's).
        libc::PR_GET_SECCOMP | libc::PR_GET_NO_NEW_PRIVS => Ok(Answer::Val(0)),
        libc::PR_GET_TSC => {
            let ok = notif::write_mem(c.pid, c.args[1], &libc::PR_TSC_ENABLE.to_ne_bytes());
            Ok(if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) })
        }
        libc::PR_SET_DUMPABLE => {
            refuse(n, c, "PR_SET_DUMPABLE would hide the node's memory from the checker, which reads its calls there")
        }
        option => refuse(n, c, &format!("prctl option {option} is not modelled")),
    }
}

impl Supervisor {
    /// The calls that read a process's scheduling (`sched_getparam`,
    /// `sched_getscheduler`, `sched_getattr`, `sched_rr_get_interval`,
    /// `getpriority` and `ioprio_get` of a process), naming another pid than
    /// 0 (which the table passes): of the node itself, by its virtual pid,
    /// answered by the same call on its real process; of any other process,
    /// ESRCH (none is visible to a node); of a process group or user, which
    /// would read the machine's processes, refused.
    pub(super) fn on_sched_query(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let me = self.world.pid(n);
        let (which, who) = match c.nr {
            libc::SYS_getpriority => (Some(c.args[0] as i32), c.args[1] as i32 as i64),
            libc::SYS_ioprio_get => (Some(c.args[0] as i32 - 1), c.args[1] as i32 as i64),
            _ => (None, c.args[0] as i32 as i64),
        };
        if which.is_some_and(|w| w != 0) {
            return refuse(n, c, "the scheduling of a process group or a user would read the machine's processes");
        }
        if who != 0 && who != me {
            return Ok(Answer::Err(libc::ESRCH));
        }
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(Answer::Err(libc::ESRCH)) };
        let real = p.pid as i64;
        // The call again, on the real process, into a buffer of the
        // checker's, copied to the node's.
        let mut buf = [0u8; 128];
        let (r, out, len) = unsafe {
            match c.nr {
                libc::SYS_sched_getscheduler => (libc::syscall(c.nr, real), 0, 0),
                libc::SYS_getpriority => (libc::syscall(c.nr, 0, real), 0, 0),
                libc::SYS_ioprio_get => (libc::syscall(c.nr, 1, real), 0, 0),
                libc::SYS_sched_getparam => (libc::syscall(c.nr, real, buf.as_mut_ptr()), c.args[1], 4),
                libc::SYS_sched_rr_get_interval => (libc::syscall(c.nr, real, buf.as_mut_ptr()), c.args[1], 16),
                _ => {
                    // sched_getattr(pid, attr, size, flags)
                    let size = (c.args[2] as usize).min(buf.len());
                    (libc::syscall(c.nr, real, buf.as_mut_ptr(), size, c.args[3]), c.args[1], size)
                }
            }
        };
        if r < 0 {
            return Ok(Answer::Err(nix::errno::Errno::last_raw()));
        }
        if len > 0 && !notif::write_mem(c.pid, out, &buf[..len]) {
            return Ok(Answer::Err(libc::EFAULT));
        }
        Ok(Answer::Val(r))
    }

    /// `capget(header, data)`: the node's capabilities (the checker's user's,
    /// which it inherits), of itself (pid 0 or its virtual pid) only, read
    /// by the same call on its real process; another pid is ESRCH.
    pub(super) fn on_capget(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let Some(header) = notif::read_mem(c.pid, c.args[0], 8) else { return Ok(Answer::Err(libc::EFAULT)) };
        let version = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
        let pid = i32::from_ne_bytes([header[4], header[5], header[6], header[7]]) as i64;
        if pid != 0 && pid != self.world.pid(n) {
            return Ok(Answer::Err(libc::ESRCH));
        }
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(Answer::Err(libc::ESRCH)) };
        let mut ours = [0u8; 8];
        ours[0..4].copy_from_slice(&version.to_ne_bytes());
        ours[4..8].copy_from_slice(&p.pid.to_ne_bytes());
        let mut data = [0u8; 24];
        let data_at = if c.args[1] == 0 { std::ptr::null_mut() } else { data.as_mut_ptr() };
        let r = unsafe { libc::syscall(libc::SYS_capget, ours.as_mut_ptr(), data_at) };
        let errno = nix::errno::Errno::last_raw();
        // The kernel writes its preferred version back into the header
        // (on EINVAL, or a query with no data); the pid stays the node's.
        if !notif::write_mem(c.pid, c.args[0], &ours[0..4]) {
            return Ok(Answer::Err(libc::EFAULT));
        }
        if r < 0 {
            return Ok(Answer::Err(errno));
        }
        // 12 bytes per 32 bits of capabilities: two sets from version 2.
        let len = if version == 0x1998_0330 { 12 } else { 24 };
        if c.args[1] != 0 && !notif::write_mem(c.pid, c.args[1], &data[..len]) {
            return Ok(Answer::Err(libc::EFAULT));
        }
        Ok(Answer::Val(0))
    }

    /// `rt_sigaction` of the two signals the checker keeps: the snapshot
    /// signal (never the program's) and SIGSEGV, whose handler emulates
    /// `rdtsc` and `cpuid` (the stub's, then the preload's). The program's
    /// own SIGSEGV handler goes through the preload's `sigaction` and
    /// `signal`; a raw call may only query, or set the default (the preload
    /// does so to die of a fault the program did not handle), but for the
    /// preload's own, made before its hello in each life.
    pub(super) fn on_rt_sigaction(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if !(1..=64).contains(&(c.args[0] as i32)) {
            // No signal: the kernel's EINVAL.
            return Ok(Answer::Continue);
        }
        if c.args[0] as i32 != libc::SIGSEGV {
            return refuse(n, c, &format!("signal {SNAPSHOT_SIGNAL} is the checker's (it makes snapshots)"));
        }
        if c.args[1] == 0 || !self.greeted[n as usize] {
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

    /// `mmap` other than of private anonymous memory (which the table
    /// passes): a shared mapping would be shared by a snapshot and its
    /// forks, state outside the world, and is refused; a private mapping of
    /// an ordinary file runs (ld.so maps libraries so); one of a descriptor
    /// the checker answers for (a connection, a data-directory file, a
    /// random device) is refused, since its placeholder would be mapped.
    pub(super) fn on_mmap(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let flags = c.args[3] as i32;
        if flags & 0x3 != libc::MAP_PRIVATE {
            return refuse(n, c, "a shared mapping would be shared between the lives and snapshots of the node");
        }
        if flags & libc::MAP_ANONYMOUS != 0 {
            return Ok(Answer::Continue);
        }
        let fd = c.args[4] as i32;
        let real = matches!(
            self.world.nodes[n as usize].fds.get(&fd),
            Some(VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. })
        );
        if self.owns(n, fd) && !real {
            let what = match self.world.nodes[n as usize].fds.get(&fd) {
                Some(VFd::File { .. }) => "a data-directory file",
                Some(VFd::Conn { .. } | VFd::Socket { .. }) => "a connection or socket",
                _ => "a descriptor the checker answers for",
            };
            return refuse(n, c, &format!("mapping {what} (fd {fd}) is not modelled"));
        }
        Ok(Answer::Continue)
    }

    /// `arch_prctl` in the forms the table does not pass.
    /// `ARCH_SET_CPUID, 1` lifts CPUID faulting: the preload's gate does so
    /// for one emulated `cpuid`, and nothing else may (the program would see
    /// RDRAND and RDSEED). A program's own `ARCH_SET_CPUID, 0` asks for
    /// `cpuid` to fault into its own SIGSEGV handler (or kill it), which
    /// the preload's emulation would hide: refused by name, as keeping the
    /// program's mode beside the preload's is not modelled.
    /// `ARCH_GET_CPUID` is the program's view: 1, `cpuid` runs, as for a
    /// program exec'd outside any sandbox (the kernel's answer, 0, is the
    /// preload's faulting). Any other code is refused by its number.
    pub(super) fn on_arch_prctl(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        match (c.args[0], c.args[1]) {
            (super::table::ARCH_GET_CPUID, _) => Ok(Answer::Val(1)),
            (super::table::ARCH_SET_CPUID, 0) => refuse(
                n,
                c,
                "ARCH_SET_CPUID, 0: a program's own cpuid faulting is not modelled (the preload's emulation would answer cpuid where the program asked for SIGSEGV)",
            ),
            (super::table::ARCH_SET_CPUID, _) => {
                let gates = self.cpuid_gates[n as usize];
                if gates.iter().any(|&g| g != 0 && c.ip == g) {
                    return Ok(Answer::Continue);
                }
                refuse(
                    n,
                    c,
                    "ARCH_SET_CPUID would let cpuid run unemulated and show the CPU's RDRAND and RDSEED, which the preload hides",
                )
            }
            (code, _) => refuse(n, c, &format!("arch_prctl code {code:#x} is not modelled")),
        }
    }

    /// A write (call `c`) on a pipe or stream socket that nothing can read
    /// any more raises SIGPIPE in the writer, as the kernel's does, before
    /// the call fails with EPIPE: nothing if the node ignores it; sent to
    /// the real process otherwise, through the path of a node's signals to
    /// itself (`on_kill`), taken as the call returns (the handler runs, or
    /// the default action kills the node). A blocked SIGPIPE is refused by
    /// name, as a raise of a blocked signal is: it would stay pending, and
    /// a snapshot's forks would not have it.
    pub(super) fn raise_sigpipe(&self, n: u8, c: &Notif) -> Result<(), ProcessError> {
        // The writing thread's: Linux sends SIGPIPE to it.
        let Some((tid, pidfd)) = self.running_thread(n) else { return Ok(()) };
        if ignored(tid, libc::SIGPIPE) {
            return Ok(());
        }
        // Blocked, it would be pending where a snapshot's forks would not
        // have it; in a process that has made threads it stays pending for
        // the writing thread, as on Linux, and the process is then not
        // snapshotted (`thread_forks`: its worlds are rebuilt).
        let threaded = !self.world.nodes[n as usize].threads.is_empty();
        if blocked(tid, libc::SIGPIPE) && !threaded {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: super::super::syscalls::describe(c.nr),
                detail: "SIGPIPE is blocked: the EPIPE's signal would be pending when the node waits, and a fork of it (a snapshot's) would not have it".to_string(),
            });
        }
        self.note_fatal(n, tid, libc::SIGPIPE);
        signal_from(pidfd, libc::SIGPIPE, self.world.pid(n) as i32);
        Ok(())
    }

    /// Node `n`'s thread `tid` is about to be sent signal `sig`: where its
    /// default action ends the process (not ignored, caught or blocked,
    /// and not one whose default is to be ignored), the process is ending,
    /// every thread of it, and is reaped as one (a review's probe: a
    /// thread's `abort` while another waited was sometimes taken for that
    /// thread's end alone, and the node for a live one).
    fn note_fatal(&self, n: u8, tid: i32, sig: i32) {
        let ignored_by_default = matches!(sig, libc::SIGCHLD | libc::SIGURG | libc::SIGWINCH | libc::SIGCONT);
        if ignored_by_default || ignored(tid, sig) || caught(tid, sig) || blocked(tid, sig) {
            return;
        }
        if let Some(p) = self.procs[n as usize].as_ref() {
            p.exiting.set(true);
        }
    }

    /// `kill`, `tkill`, `tgkill`. A node may signal itself (raise, abort, a
    /// failed assert) by its virtual pid; the supervisor sends the signal to
    /// the real one, which takes it as the call returns. Signals between
    /// nodes, or to anything else, are not modelled, nor are stop signals (a
    /// stopped node would only stall).
    pub(super) fn on_kill(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let me = self.world.pid(n);
        let (targets, sig) = match c.nr {
            libc::SYS_tgkill => (&c.args[..2], c.args[2] as i32),
            _ => (&c.args[..1], c.args[1] as i32),
        };
        // A thread's own id (`tkill`, `tgkill`, as `raise` and `abort`
        // send) is the running thread's; a process-directed signal goes
        // to the running thread too, which sent it (and must not block
        // it, below).
        let running = self.tid(n, self.world.nodes[n as usize].slot());
        let id = |i: usize| targets[i] as i32 as i64;
        let own = match c.nr {
            libc::SYS_kill => id(0) == me,
            libc::SYS_tkill => id(0) == running,
            _ => id(0) == me && id(1) == running,
        };
        if !own {
            let threads = self.world.nodes[n as usize].threads.len();
            if (0..threads).any(|k| targets.iter().any(|&t| t as i32 as i64 == self.tid(n, k) && k > 0)) {
                return refuse(n, c, "a signal to another thread of the node is not modelled");
            }
            return refuse(n, c, "a signal to another process is not modelled; a node may signal only itself");
        }
        if matches!(sig, libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
            return refuse(n, c, "stopping a node is not modelled");
        }
        if sig == SNAPSHOT_SIGNAL {
            return refuse(n, c, &format!("signal {SNAPSHOT_SIGNAL} is the checker's (it makes snapshots)"));
        }
        if !(0..=libc::SIGRTMAX()).contains(&sig) {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let threaded = !self.world.nodes[n as usize].threads.is_empty();
        if sig != 0
            && threaded
            && c.nr == libc::SYS_kill
            && let Some((tid, _)) = self.running_thread(n)
            && !ignored(tid, sig)
            && (caught(tid, sig) || blocked(tid, sig))
        {
            // Linux gives a process-directed signal to the main thread, or
            // to any thread that does not block it: which one runs the
            // handler, or keeps it pending, is not modelled. (Its default
            // action ends the whole process, whichever thread takes it.)
            return refuse(
                n,
                c,
                &format!(
                    "signal {sig} to the process, caught or blocked by the sending thread, in a process with \
                     threads: Linux gives it to the main thread or another that does not block it, which is not \
                     modelled (raise it in the thread with raise, or pthread_kill itself)"
                ),
            );
        }
        if sig != 0
            && let Some((tid, pidfd)) = self.running_thread(n)
        {
            // A blocked signal would stay pending, and a snapshot's forks
            // would not have it: the kernel does not copy pending signals
            // into a fork. (An unblocked one is taken as the call returns,
            // before the node can wait anywhere.) A process with threads
            // keeps it, and is then not snapshotted (`thread_forks`).
            if blocked(tid, sig) && !threaded {
                return refuse(
                    n,
                    c,
                    &format!(
                        "signal {sig} is blocked: it would be pending when the node waits, and a fork of it (a snapshot's) would not have it"
                    ),
                );
            }
            self.note_fatal(n, tid, sig);
            signal_from(pidfd, sig, me as i32);
        }
        Ok(Answer::Val(0))
    }
}

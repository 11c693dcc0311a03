//! A node's threads (SEMANTICS, "Threads"): glibc's `pthread_create`
//! (`clone3`), a thread's end (`exit`), futexes, `sched_yield`, and the
//! scheduler that runs one thread at a time. The world's side is
//! `process::threads`.
//!
//! A thread is made by letting glibc's `clone3` run (CONTINUE), with
//! `CLONE_PARENT_SETTID` taken out of its arguments and the thread's
//! virtual id written where it asked: the new thread runs glibc's
//! `start_thread` only, which touches its own descriptor and TLS, up to
//! its first call (`set_robust_list`, notified for this), where it is held
//! unexamined until the scheduler runs it. Meanwhile the creator's next
//! call waits, unexamined, until that first call has come, so the new
//! thread's kernel id is known before anything else happens.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use nix::errno::Errno;
use nix::libc;

use super::super::ProcessError;
use super::super::lives::{Run, ThreadProc};
use super::super::notif::{self, Notif};
use super::super::supervisor::{EXIT, Supervisor, token};
use super::super::threads::{ThreadRun, ThreadWorld};
use super::super::world::{Blocked, ProcessWorld};
use super::{Answer, refuse};

/// The most threads a node's life may make, its main thread included.
pub(in crate::process) const THREADS_MAX: usize = 64;

/// glibc's `pthread_create` flags: `CLONE_VM | CLONE_FS | CLONE_FILES |
/// CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
/// CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID`.
const GLIBC_THREAD_FLAGS: u64 = 0x3d0f00;

/// How far apart the virtual ids of one node's threads are: thread k of a
/// process of virtual pid p is p + k * TID_STRIDE, above every pid.
const TID_STRIDE: i64 = 4096;

/// `PIDFD_THREAD`: a pidfd of one thread, readable when it has ended.
const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

/// `FUTEX_BITSET_MATCH_ANY`.
const ANY: u32 = u32::MAX;

impl Supervisor {
    /// The virtual id of node `n`'s thread `k` (`gettid`).
    pub(in crate::process) fn tid(&self, n: u8, k: usize) -> i64 {
        self.world.pid(n) + k as i64 * TID_STRIDE
    }

    /// `clone3` (and `clone`) of node `n`: a thread as glibc makes one, or
    /// an error naming what is not.
    pub(super) fn on_clone(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if c.nr != libc::SYS_clone3 {
            let flags = c.args[0];
            if flags & libc::CLONE_THREAD as u64 != 0 {
                return refuse(n, c, "a thread made with clone rather than clone3 (glibc's) is not modelled");
            }
            return Err(ProcessError::Forbidden {
                node: n,
                what: "a child process",
                call: super::syscalls::describe(c.nr),
            });
        }
        let size = c.args[1] as usize;
        let Some(args) = notif::read_mem(c.pid, c.args[0], 64.min(size)) else { return Ok(Answer::Err(libc::EFAULT)) };
        if args.len() < 64 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let field = |i: usize| u64::from_ne_bytes(args[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        let (flags, child_tid, parent_tid) = (field(0), field(2), field(3));
        if flags & libc::CLONE_THREAD as u64 == 0 {
            return Err(ProcessError::Forbidden {
                node: n,
                what: "a child process",
                call: super::syscalls::describe(c.nr),
            });
        }
        // (`pidfd`, field 1, is read only with `CLONE_PIDFD`.)
        if flags != GLIBC_THREAD_FLAGS || field(4) != 0 {
            return refuse(
                n,
                c,
                &format!("a thread made with flags {flags:#x} (glibc's pthread_create uses {GLIBC_THREAD_FLAGS:#x})"),
            );
        }
        // The new thread runs from the creator's call on, unheld until its
        // first call: that must be glibc's code, not the program's.
        if !in_libc(c.pid, c.ip) || !in_libc(c.pid, c.args[2]) {
            return refuse(n, c, "a thread made by code other than glibc's pthread_create is not modelled");
        }
        let node = &self.world.nodes[n as usize];
        let k = node.threads.len().max(1);
        if k >= THREADS_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "threads_per_node_max",
                max: THREADS_MAX,
                detail: "one thread too many in a life".to_string(),
            });
        }
        let tid = self.tid(n, k) as i32;
        // The kernel would write the real id: the virtual one instead.
        if !notif::write_mem(c.pid, c.args[0], &(flags & !(libc::CLONE_PARENT_SETTID as u64)).to_ne_bytes())
            || !notif::write_mem(c.pid, parent_tid, &tid.to_ne_bytes())
        {
            return Ok(Answer::Err(libc::EFAULT));
        }
        let Some(serial) = self.procs[n as usize].as_ref().map(|p| p.serial) else { return Ok(Answer::Continue) };
        let first = self.world.nodes[n as usize].threads.is_empty();
        let pidfd = if first { Some(self.watch_thread(n, serial, c.pid as i32)?) } else { None };
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(Answer::Continue) };
        let node = &mut self.world.nodes[n as usize];
        if first {
            // The node's one thread until now: thread 0, in the slot.
            node.threads.push(ThreadWorld { run: ThreadRun::Slot, clear_tid: 0 });
            p.threads.push(ThreadProc { tid: c.pid as i32, held: None, pidfd, seen: 0 });
        }
        node.threads.push(ThreadWorld { run: ThreadRun::New, clear_tid: child_tid });
        p.threads.push(ThreadProc { tid: 0, held: None, pidfd: None, seen: 0 });
        p.birth = Some(k);
        Ok(Answer::Continue)
    }

    /// Takes node `n`'s notification `c` from a thread that is not the
    /// running one: the first call of the thread being born, held until
    /// the scheduler runs it. `false` for any other.
    pub(in crate::process) fn take_birth(&mut self, n: u8, c: &Notif) -> Result<bool, ProcessError> {
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(false) };
        let Some(k) = p.birth else { return Ok(false) };
        if tgid_of(c.pid as i32) != Some(p.pid) {
            return Ok(false);
        }
        let pidfd = self.watch_thread(n, p.serial, c.pid as i32)?;
        if let Some(p) = self.procs[n as usize].as_mut() {
            p.threads[k] = ThreadProc { tid: c.pid as i32, held: Some(*c), pidfd: Some(pidfd), seen: 0 };
            p.birth = None;
        }
        Ok(true)
    }

    /// The kernel id of the thread node `n` runs now (its process's for a
    /// node of one thread).
    pub(in crate::process) fn running_tid(&self, n: u8) -> Option<i32> {
        let p = self.procs[n as usize].as_ref()?;
        let slot = self.world.nodes[n as usize].slot();
        Some(p.threads.get(slot).map_or(p.pid, |t| t.tid))
    }

    /// Node `n`'s running thread has ended, if its pidfd says so (its
    /// `exit`, passed through, is its last call): the next may run. Wakes
    /// its `clear_tid` word's waiter, as the kernel does.
    pub(in crate::process) fn thread_exited(&mut self, n: u8) -> Result<(), ProcessError> {
        let slot = self.world.nodes[n as usize].slot();
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(()) };
        let Some(t) = p.threads.get_mut(slot) else { return Ok(()) };
        let ended = t.pidfd.as_ref().is_some_and(|pidfd| {
            let mut pfd = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            (unsafe { libc::poll(&mut pfd, 1, 0) }) > 0
        });
        if !ended || !matches!(p.run, Run::Running(_)) {
            return Ok(());
        }
        let pidfd = t.pidfd.take();
        t.held = None;
        p.run = Run::Idle;
        if let Some(pidfd) = pidfd {
            self.unregister(&[&pidfd]);
        }
        let node = &mut self.world.nodes[n as usize];
        node.blocked = Blocked::Nothing;
        node.threads[slot].run = ThreadRun::Exited;
        let word = std::mem::take(&mut node.threads[slot].clear_tid);
        if word != 0 {
            node.futex_wake(word, ANY, 1);
        }
        Ok(())
    }

    /// Watches thread `tid` of node `n`'s process for its end, with the
    /// process's token: [`Supervisor::thread_exited`] tells the two apart.
    fn watch_thread(&self, n: u8, serial: u64, tid: i32) -> Result<OwnedFd, ProcessError> {
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) } as i32;
        if fd < 0 {
            return Err(ProcessError::NodeSys { node: n, call: "pidfd_open of a thread", errno: Errno::last() });
        }
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token(serial, n, EXIT) };
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(ProcessError::NodeSys { node: n, call: "epoll_ctl", errno: Errno::last() });
        }
        Ok(pidfd)
    }

    /// `futex` of a node that has made threads: a wait blocks its thread
    /// (`Blocked::Futex`) until a wake of its word; a wake makes up to its
    /// count of the oldest waiters ready.
    pub(super) fn on_thread_futex(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        const FUTEX_CMD_MASK: u64 = !(libc::FUTEX_PRIVATE_FLAG | libc::FUTEX_CLOCK_REALTIME) as u64;
        let op = (c.args[1] & FUTEX_CMD_MASK) as i32;
        let bitset = match op {
            libc::FUTEX_WAIT | libc::FUTEX_WAKE => ANY,
            _ => c.args[5] as u32,
        };
        match op {
            libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => {
                if bitset == 0 {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                // The kernel wakes one even for a count of 0 or less.
                let count = (c.args[2] as i32).max(1) as u32;
                Ok(Answer::Val(self.world.nodes[n as usize].futex_wake(c.args[0], bitset, count) as i64))
            }
            libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET => {
                if bitset == 0 {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                let Some(word) = notif::read_mem(c.pid, c.args[0], 4) else { return Ok(Answer::Err(libc::EFAULT)) };
                if u32::from_ne_bytes([word[0], word[1], word[2], word[3]]) != c.args[2] as u32 {
                    return Ok(Answer::Err(libc::EAGAIN));
                }
                if c.args[3] != 0 {
                    return refuse(n, c, "a futex wait with a timeout is not modelled");
                }
                let node = &mut self.world.nodes[n as usize];
                let slot = node.slot() as u8;
                node.futex_queue.push(slot);
                Ok(Answer::Hold(Blocked::Futex { addr: c.args[0], bitset }))
            }
            op => refuse(n, c, &format!("futex operation {op} is not modelled")),
        }
    }

    /// `sched_yield`: with another thread ready, the running one goes
    /// after it (held with nothing to wait for: `schedule` makes it
    /// ready); else it returns at once.
    pub(super) fn on_yield(&mut self, n: u8) -> Answer {
        let node = &self.world.nodes[n as usize];
        if node.next_ready().is_some() { Answer::Hold(Blocked::Nothing) } else { Answer::Val(0) }
    }

    /// Runs node `n`'s next ready thread, if its running one waits, has
    /// ended or yields (`true`: one runs now).
    pub(in crate::process) fn schedule(&mut self, n: u8) -> Result<bool, ProcessError> {
        let node = &self.world.nodes[n as usize];
        if node.threads.is_empty() {
            return Ok(false);
        }
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(false) };
        // A thread held in the middle of its step is the node's: the
        // others wait for its action.
        if matches!(p.run, Run::Running(_)) || node.blocked.trail().is_some() {
            return Ok(false);
        }
        // What the running thread changed inside the node ends the waits
        // of the others that look at it.
        let inside = self.inside(n);
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(false) };
        let node = &mut self.world.nodes[n as usize];
        if let Some(slot) = node.slot_of() {
            p.threads[slot].seen = inside;
        }
        for (t, tp) in node.threads.iter_mut().zip(&p.threads) {
            if t.run.waits_on_node() && tp.seen != inside {
                t.run = ThreadRun::Again;
            }
        }
        let Some(k) = node.next_ready() else { return Ok(false) };
        let slot = node.slot_of();
        let out = match &p.run {
            Run::Held(_) if node.blocked == Blocked::Nothing => Some(ThreadRun::Ready { yielded: true }),
            _ => None,
        };
        if let (Run::Held(notif), Some(slot)) = (std::mem::replace(&mut p.run, Run::Running(Instant::now())), slot) {
            p.threads[slot].held = Some(notif);
        }
        let coming = node.threads[k].run.clone();
        let notif = p.threads[k].held.take();
        self.world.nodes[n as usize].swap_slot(k, out);
        let Some(notif) = notif else {
            return Err(ProcessError::NotEnabled {
                action: format!("a run of node {n}'s thread {k}, which holds no call"),
            });
        };
        match coming {
            ThreadRun::New => self.on_call(n, notif)?,
            // The wait again, as if just made.
            ThreadRun::Again => self.run_call(n, &notif)?,
            _ => self.answer(n, &notif, Answer::Val(0))?,
        }
        Ok(true)
    }

    /// A digest of what a wait inside node `n` looks at: its descriptors,
    /// its pipes, socketpairs and eventfds, its epoll instances, and its
    /// connections.
    fn inside(&self, n: u8) -> u64 {
        let node = &self.world.nodes[n as usize];
        let conns: Vec<_> = self.world.conns.iter().filter(|(l, c)| ProcessWorld::involves(n, l, c)).collect();
        let text = format!("{:?}{:?}{:?}{:?}{:?}", node.fds, node.locals, node.epolls, node.accept_queue, conns);
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// Between actions: puts in node `n`'s slot the thread whose wait the
    /// actions answer ([`NodeWorld::slot_wanted`](super::super::world::NodeWorld)).
    pub(in crate::process) fn settle_slot(&mut self, n: u8) -> Result<(), ProcessError> {
        let node = &self.world.nodes[n as usize];
        if node.threads.is_empty() || node.blocked.trail().is_some() {
            return Ok(());
        }
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(()) };
        let k = match node.slot_wanted() {
            Ok(k) => k,
            Err((a, b)) => {
                let what = |k: usize| match &node.threads[k].run {
                    ThreadRun::Waits { blocked, .. } => blocked.to_string(),
                    _ => node.blocked.to_string(),
                };
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: "a wait".to_string(),
                    detail: format!(
                        "threads {a} ({}) and {b} ({}) wait at once for what the world brings; one thread at a \
                         time may wait for a connection, a peer or time, the others on futexes",
                        what(a),
                        what(b)
                    ),
                });
            }
        };
        let slot = node.slot_of();
        if slot == Some(k) {
            return Ok(());
        }
        if let (Run::Held(notif), Some(slot)) = (&p.run, slot) {
            p.threads[slot].held = Some(*notif);
        }
        p.run = match p.threads[k].held.take() {
            Some(notif) => Run::Held(notif),
            None => Run::Idle,
        };
        self.world.nodes[n as usize].swap_slot(k, None);
        Ok(())
    }
}

/// Whether `addr` is in the text of the C library of thread `tid`'s
/// process.
fn in_libc(tid: u32, addr: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{tid}/maps")) else { return false };
    maps.lines().any(|line| {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { return false };
        let path = f.nth(3).unwrap_or("");
        let Some((lo, hi)) = range.split_once('-') else { return false };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else { return false };
        (lo..hi).contains(&addr) && perms.contains('x') && path.rsplit('/').next() == Some("libc.so.6")
    })
}

/// The thread group of kernel thread `tid`.
fn tgid_of(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

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
use super::super::world::{Blocked, End, Millis, ProcessWorld, Side};
use super::{Answer, refuse, time};

/// The most threads a node's life may make, its main thread included.
pub(in crate::process) const THREADS_MAX: usize = 64;

/// glibc's `pthread_create` flags: `CLONE_VM | CLONE_FS | CLONE_FILES |
/// CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
/// CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID`.
const GLIBC_THREAD_FLAGS: u64 = 0x3d0f00;

/// glibc's `__clone3` after its `syscall`: `test rax, rax; jl error; jz
/// child; ret; child: xor ebp, ebp; and rsp, -16; mov rdi, r8; call rdx`
/// (the `jl`'s offset may differ between builds).
const GLIBC_CHILD_PATH: [Option<u8>; 19] = [
    Some(0x48),
    Some(0x85),
    Some(0xc0),
    Some(0x7c),
    None,
    Some(0x74),
    Some(0x01),
    Some(0xc3),
    Some(0x31),
    Some(0xed),
    Some(0x48),
    Some(0x83),
    Some(0xe4),
    Some(0xf0),
    Some(0x4c),
    Some(0x89),
    Some(0xc7),
    Some(0xff),
    Some(0xd2),
];

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
        // first call: that must be glibc's code, not the program's: its
        // `__clone3`, whose child calls `rdx` (glibc's `start_thread`).
        let path = notif::read_mem(c.pid, c.ip, GLIBC_CHILD_PATH.len());
        let glibc = path.is_some_and(|b| b.iter().zip(GLIBC_CHILD_PATH).all(|(x, y)| y.is_none_or(|y| *x == y)));
        if !glibc || !in_libc(c.pid, &[c.ip, c.args[2]]) {
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
            p.threads.push(ThreadProc { tid: c.pid as i32, held: None, pidfd, seen: 0, robust: p.robust, stack_lo: 0 });
        }
        node.threads.push(ThreadWorld { run: ThreadRun::New, clear_tid: child_tid });
        // Its stack (`stack`, `stack_size`): a capture's frame must fit
        // above its lowest address, whatever lies below it in its mapping.
        p.threads.push(ThreadProc { tid: 0, held: None, pidfd: None, seen: 0, robust: 0, stack_lo: field(5) });
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
            let t = &mut p.threads[k];
            (t.tid, t.held, t.pidfd) = (c.pid as i32, Some(*c), Some(pidfd));
            p.birth = None;
        }
        Ok(true)
    }

    /// The thread node `n` runs now, by its kernel id, and a pidfd that
    /// signals it alone (its process's for a node of one thread).
    pub(in crate::process) fn running_thread(&self, n: u8) -> Option<(i32, &OwnedFd)> {
        let p = self.procs[n as usize].as_ref()?;
        let slot = self.world.nodes[n as usize].slot();
        match p.threads.get(slot) {
            Some(t) => Some((t.tid, t.pidfd.as_ref()?)),
            None => Some((p.pid, &p.pidfd)),
        }
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
        // The whole process is ending (`exit_group`): its end is reaped.
        if p.exiting.get() {
            return Ok(());
        }
        let Some(t) = p.threads.get_mut(slot) else { return Ok(()) };
        let readable = t.pidfd.as_ref().is_some_and(|pidfd| {
            let mut pfd = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            (unsafe { libc::poll(&mut pfd, 1, 0) }) > 0
        });
        // A main thread that ends before the others stays a zombie, and
        // its pidfd is not readable until they end too.
        let ended = readable || t.pidfd.is_some() && zombie(p.pid, t.tid);
        if !ended || !matches!(p.run, Run::Running(_)) {
            return Ok(());
        }
        // A robust mutex held at a thread's end is marked by the kernel
        // only where its word holds the thread's real id; glibc writes the
        // virtual one there, so Linux's EOWNERDEAD would never come.
        let robust = t.robust;
        let reader = p.threads.iter().enumerate().find(|(k, t)| *k != slot && t.tid != 0 && t.pidfd.is_some());
        let reader = reader.map_or(p.pid, |(_, t)| t.tid) as u32;
        if robust != 0
            && let Some(head) = notif::read_mem(reader, robust, 24)
        {
            let word = |i: usize| u64::from_ne_bytes(head[i * 8..i * 8 + 8].try_into().unwrap_or_default());
            if word(0) != robust || word(2) != 0 {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: "exit".to_string(),
                    detail: format!(
                        "thread {slot} ended holding a robust mutex (its robust futex list is not empty): the kernel \
                         marks such a mutex by the thread's real id, and a node's threads have virtual ones"
                    ),
                });
            }
        }
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(()) };
        let Some(t) = p.threads.get_mut(slot) else { return Ok(()) };
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
    pub(in crate::process) fn watch_thread(&self, n: u8, serial: u64, tid: i32) -> Result<OwnedFd, ProcessError> {
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

    /// `set_robust_list` of node `n`'s running thread: where its robust
    /// futex list is, read when it ends; then let run.
    pub(super) fn on_set_robust_list(&mut self, n: u8, c: &Notif) -> Answer {
        let slot = self.world.nodes[n as usize].slot();
        if let Some(p) = self.procs[n as usize].as_mut() {
            match p.threads.get_mut(slot) {
                Some(t) => t.robust = c.args[0],
                None => p.robust = c.args[0],
            }
        }
        Answer::Continue
    }

    /// `futex` of a node that has made threads: a wait blocks its thread
    /// (`Blocked::Futex`) until a wake of its word (or, timed, a TIMEOUT);
    /// a wake makes up to its count of the oldest waiters ready.
    pub(super) fn on_thread_futex(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        match self.futex_call(c) {
            Err(e) => Ok(Answer::Err(e)),
            Ok(FutexCall::Wake { bitset, count }) => {
                Ok(Answer::Val(self.world.nodes[n as usize].futex_wake(c.args[0], bitset, count) as i64))
            }
            Ok(FutexCall::Wait { bitset, until }) => {
                let node = &mut self.world.nodes[n as usize];
                let slot = node.slot() as u8;
                node.futex_queue.push(slot);
                Ok(Answer::Hold(Blocked::Futex { addr: c.args[0], bitset, until }))
            }
            Ok(FutexCall::Other(op)) => refuse(n, c, &format!("futex operation {op} is not modelled")),
        }
    }

    /// Futex call `c` decoded, with the kernel's errors in the kernel's
    /// order: a bad timeout (EFAULT, EINVAL), `FUTEX_CLOCK_REALTIME` with
    /// an operation other than `FUTEX_WAIT_BITSET` (ENOSYS), a bitset of
    /// 0 (EINVAL); for a wait, the word changed (EFAULT, EAGAIN), then a
    /// timeout that has passed (ETIMEDOUT). A wait's timeout is relative
    /// for `FUTEX_WAIT`, absolute on the monotonic clock (or the real-time
    /// one, with `FUTEX_CLOCK_REALTIME`) for `FUTEX_WAIT_BITSET`; it ends
    /// at the first logical millisecond after it.
    pub(super) fn futex_call(&self, c: &Notif) -> Result<FutexCall, i32> {
        const FUTEX_CMD_MASK: u64 = !(libc::FUTEX_PRIVATE_FLAG | libc::FUTEX_CLOCK_REALTIME) as u64;
        let op = (c.args[1] & FUTEX_CMD_MASK) as i32;
        let realtime = c.args[1] & libc::FUTEX_CLOCK_REALTIME as u64 != 0;
        let wait = matches!(op, libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET);
        let timeout = if wait && c.args[3] != 0 { Some(time::read_timespec(c, c.args[3])?) } else { None };
        if !matches!(op, libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET | libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET) {
            return Ok(FutexCall::Other(op));
        }
        if realtime && op != libc::FUTEX_WAIT_BITSET {
            return Err(libc::ENOSYS);
        }
        let bitset = match op {
            libc::FUTEX_WAIT | libc::FUTEX_WAKE => ANY,
            _ => c.args[5] as u32,
        };
        if bitset == 0 {
            return Err(libc::EINVAL);
        }
        if !wait {
            // The kernel wakes one even for a count of 0 or less.
            return Ok(FutexCall::Wake { bitset, count: (c.args[2] as i32).max(1) as u32 });
        }
        let word = notif::read_mem(c.pid, c.args[0], 4).ok_or(libc::EFAULT)?;
        if u32::from_ne_bytes([word[0], word[1], word[2], word[3]]) != c.args[2] as u32 {
            return Err(libc::EAGAIN);
        }
        let Some((sec, nsec)) = timeout else { return Ok(FutexCall::Wait { bitset, until: None }) };
        let end = if op == libc::FUTEX_WAIT {
            self.world.now_ns().saturating_add(time::nanos(sec, nsec))
        } else {
            let base = if realtime { time::EPOCH_BASE } else { 0 };
            time::nanos(sec.saturating_sub(base), nsec)
        };
        if end <= self.world.now_ns() {
            return Err(libc::ETIMEDOUT);
        }
        Ok(FutexCall::Wait { bitset, until: Some(end / 1_000_000 + 1) })
    }

    /// TIMEOUT of node `n`'s slot's timed futex wait: the thread leaves
    /// the word's queue, and the call fails with ETIMEDOUT.
    pub(in crate::process) fn time_out_futex(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let node = &mut self.world.nodes[n as usize];
        let slot = node.slot() as u8;
        node.futex_queue.retain(|&k| k != slot);
        node.blocked = Blocked::Nothing;
        self.answer(n, &notif, Answer::Err(libc::ETIMEDOUT))
    }

    /// Node `n`'s running thread closes the descriptors `fds` (a close, a
    /// `close_range`, a `dup2` over one): an error where another thread
    /// waits on one of them. Linux keeps the file open for that wait,
    /// whatever the number names next; the world forgets the file at the
    /// close, and a wait made again would find what the number names then
    /// (a review's probe: a read went on in a pipe made at the number).
    pub(super) fn check_waited_on(
        &self,
        n: u8,
        c: &Notif,
        fds: std::ops::RangeInclusive<i32>,
    ) -> Result<(), ProcessError> {
        let node = &self.world.nodes[n as usize];
        for (k, t) in node.threads.iter().enumerate() {
            if let ThreadRun::Waits { blocked, .. } = &t.run
                && let Some(fd) =
                    self.waited_fds(n, k).into_iter().find(|fd| fds.contains(fd) && node.fds.contains_key(fd))
            {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: super::syscalls::describe(c.nr),
                    detail: format!(
                        "descriptor {fd} closed while thread {k} waits on it ({blocked}): on Linux the wait goes on \
                         with the file, which the checker does not model"
                    ),
                });
            }
        }
        Ok(())
    }

    /// `sched_yield`: with another thread ready, the running one goes
    /// after it (held with nothing to wait for: `schedule` makes it
    /// ready); else it returns at once.
    pub(super) fn on_yield(&mut self, n: u8) -> Answer {
        let node = &self.world.nodes[n as usize];
        if node.next_ready().is_some() { Answer::Hold(Blocked::Nothing) } else { Answer::Val(0) }
    }

    /// Marks each thread of node `n` waiting out of the slot on something
    /// the node's threads change whose call is to be made again. Where the
    /// running thread waits (`inside`, the node's insides now): each whose
    /// insides have changed since it looked (a wait made again that finds
    /// nothing waits again), made again at once (`ThreadRun::Again`).
    /// Before the running thread's next call (`None`): each whose wait may end now,
    /// as Linux would wake it (a function of the world, found again at
    /// each call), made again at a SWITCH to it (`Waits { changed }`), the
    /// world still answering it as it waits. An error where a descriptor
    /// it waits on has been closed.
    fn mark_changed(&mut self, n: u8, inside: Option<u64>) -> Result<(), ProcessError> {
        let again = inside.is_some();
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(()) };
        let node = &self.world.nodes[n as usize];
        let mut marks = Vec::new();
        for (k, (t, tp)) in node.threads.iter().zip(&p.threads).enumerate() {
            if !t.run.waits_on_node() {
                continue;
            }
            // Where the running thread waits, a change since the thread
            // looked (what it waits on can only have become ready by one,
            // the world's answers aside; and a call made again that waits
            // again has looked at what is there now, so this ends); before
            // its next call, a wait that may end now.
            let mark = match inside {
                Some(inside) => tp.seen != inside,
                None => self.wait_may_end(n, k),
            };
            // Linux keeps a descriptor's file open while a call of another
            // thread uses it; the world forgets it at the close.
            if mark && let Some(fd) = self.waited_fds(n, k).into_iter().find(|fd| !node.fds.contains_key(fd)) {
                let blocked = node.blocked_of(k).copied().unwrap_or(Blocked::Nothing);
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: "close".to_string(),
                    detail: format!(
                        "descriptor {fd} closed while thread {k} waits on it ({blocked}): on Linux the wait goes on \
                         with the file, which the checker does not model"
                    ),
                });
            }
            marks.push((k, mark));
        }
        let node = &mut self.world.nodes[n as usize];
        for (k, mark) in marks {
            let run = &mut node.threads[k].run;
            match run {
                ThreadRun::Waits { changed, .. } if !again || !mark => *changed = mark && !again,
                _ if mark => {
                    if let ThreadRun::Waits { blocked, watch, waitall, .. } = std::mem::replace(run, ThreadRun::Exited)
                    {
                        *run = ThreadRun::Again { watch, waitall, until: blocked.until() };
                    }
                }
                _ => {}
            }
        }
        Ok(())
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
        if let Some(slot) = self.world.nodes[n as usize].slot_of() {
            p.threads[slot].seen = inside;
        }
        self.mark_changed(n, Some(inside))?;
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(false) };
        let node = &mut self.world.nodes[n as usize];
        let Some(k) = node.next_ready() else { return Ok(false) };
        let slot = node.slot_of();
        let out = match &p.run {
            Run::Held(_) if node.blocked == Blocked::Nothing => Some(ThreadRun::Ready { yielded: true }),
            _ => None,
        };
        if let (Run::Held(notif), Some(slot)) = (std::mem::replace(&mut p.run, Run::Idle), slot) {
            p.threads[slot].held = Some(notif);
        }
        // Out of the slot, waiting (or ready again, having yielded).
        node.swap_out(out);
        // Which thread runs next is a choice while switches are left (not
        // in the nodes' start, whose choices are the start's).
        let ready = node.threads.iter().filter(|t| t.run.ready()).count();
        let switches = !self.starting && self.world.thread_switches.is_some_and(|s| s > 0);
        if switches && (ready >= 2 || self.world_may_answer(n)) {
            let trail = self.trail_at(n, 2);
            self.world.nodes[n as usize].blocked = Blocked::Choice { trail };
            return Ok(false);
        }
        self.run_thread(n, k)?;
        Ok(true)
    }

    /// Puts node `n`'s thread `k`, ready, in its empty slot and runs it:
    /// its first call examined, its wait made again, or its call answered
    /// 0 (a futex wake, a yield).
    pub(in crate::process) fn run_thread(&mut self, n: u8, k: usize) -> Result<(), ProcessError> {
        let node = &mut self.world.nodes[n as usize];
        node.blocked = Blocked::Nothing;
        let coming = node.threads.get(k).map(|t| t.run.clone());
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(()) };
        let notif = p.threads.get_mut(k).and_then(|t| t.held.take());
        let (Some(coming), Some(notif)) = (coming, notif) else {
            return Err(ProcessError::NotEnabled {
                action: format!("a run of node {n}'s thread {k}, which holds no call"),
            });
        };
        p.run = Run::Running(Instant::now());
        node.swap_slot(k, None);
        match coming {
            ThreadRun::New => self.on_call(n, notif),
            // Its call, chosen to come after another thread's run.
            ThreadRun::Preempted => self.on_call_now(n, notif),
            // The wait again, as if just made, its timeout ending where
            // it did.
            ThreadRun::Again { until, .. } => {
                self.kept_until = Some(until);
                let made = self.run_call(n, &notif);
                self.kept_until = None;
                made
            }
            _ => self.answer(n, &notif, Answer::Val(0)),
        }
    }

    /// Holds node `n`'s running thread before its call `notif` where
    /// another thread may run first and switches are left (not in the
    /// nodes' start): a choice (`Blocked::Choice`, the slot's thread
    /// staying in it), RUN going on with the call, SWITCH running another.
    /// `true` when held.
    pub(in crate::process) fn preempt(&mut self, n: u8, notif: Notif) -> Result<bool, ProcessError> {
        let node = &self.world.nodes[n as usize];
        if node.threads.is_empty() || self.starting || self.world.thread_switches.is_none_or(|s| s == 0) {
            return Ok(false);
        }
        // A thread waiting out of the slot whose wait may end now (woken,
        // on Linux) may run before the running thread's next call: a
        // SWITCH to it makes its call again (a read woken by data another
        // thread's poll was given: a third review's probe, found on 2 of
        // 40 native runs, passed).
        self.mark_changed(n, None)?;
        let node = &self.world.nodes[n as usize];
        let others_ready = node.threads.iter().any(|t| t.run.switchable());
        if !others_ready && !self.world_may_answer(n) {
            return Ok(false);
        }
        let Some(p) = self.procs[n as usize].as_mut() else { return Ok(false) };
        p.run = Run::Held(notif);
        let trail = self.trail_at(n, 3);
        self.world.nodes[n as usize].blocked = Blocked::Choice { trail };
        Ok(true)
    }

    /// RUN at a choice before the running thread's call: the call goes on.
    pub(in crate::process) fn go_on(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        if let Some(p) = self.procs[n as usize].as_mut() {
            p.run = Run::Running(Instant::now());
        }
        self.on_call_now(n, notif)
    }

    /// SWITCH to thread `k` at a choice: the running thread, if the choice
    /// is before its call, waits for its turn with the call unexamined.
    pub(in crate::process) fn switch_to(&mut self, n: u8, k: usize) -> Result<(), ProcessError> {
        let node = &mut self.world.nodes[n as usize];
        // A wait whose object changed is made again.
        if let Some(t) = node.threads.get_mut(k)
            && let ThreadRun::Waits { blocked, watch, waitall, changed: true } = &mut t.run
        {
            let until = blocked.until();
            t.run = ThreadRun::Again { watch: std::mem::take(watch), waitall: std::mem::take(waitall), until };
        }
        if let Some(slot) = node.slot_of()
            && let Some(p) = self.procs[n as usize].as_mut()
            && let Run::Held(notif) = std::mem::replace(&mut p.run, Run::Idle)
        {
            p.threads[slot].held = Some(notif);
            node.blocked = Blocked::Nothing;
            node.swap_out(Some(ThreadRun::Preempted));
        }
        self.run_thread(n, k)
    }

    /// A digest of what a wait inside node `n` looks at that its threads
    /// change: its descriptors, its pipes, socketpairs and eventfds, its
    /// epoll instances, its accept queue, its timers, and its own ends of its
    /// connections (their state and what they have received). What only
    /// the world changes (messages on their way, connections not yet
    /// accepted) is left out: the actions see it, and a wait made again
    /// for it would find what it found.
    pub(in crate::process) fn inside(&self, n: u8) -> u64 {
        let node = &self.world.nodes[n as usize];
        let ends: Vec<_> = self
            .world
            .conns
            .iter()
            .flat_map(|(l, c)| {
                let target = (c.target == n && c.target_end != End::Pending).then_some((
                    l,
                    Side::Target,
                    c.target_end,
                    &c.target_sock,
                    &c.at_target,
                ));
                let dialer = (ProcessWorld::dialer_node(l) == Some(n)).then_some((
                    l,
                    Side::Dialer,
                    c.dialer_end,
                    &c.dialer_sock,
                    &c.at_dialer,
                ));
                target.into_iter().chain(dialer)
            })
            .collect();
        let text = format!(
            "{:?}{:?}{:?}{:?}{:?}{:?}",
            node.fds, node.locals, node.epolls, node.accept_queue, node.timers, ends
        );
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// Between actions: puts in node `n`'s slot the thread whose wait the
    /// actions answer first ([`NodeWorld::slot_wanted`](super::super::world::NodeWorld)).
    /// Two threads in `accept` on one listening socket are an error: Linux
    /// wakes the one that began to wait first, which the world does not
    /// keep.
    pub(in crate::process) fn settle_slot(&mut self, n: u8) -> Result<(), ProcessError> {
        let node = &self.world.nodes[n as usize];
        if node.threads.is_empty() || node.blocked.mid_step() {
            return Ok(());
        }
        let accepting: Vec<(usize, i32)> = node
            .outward()
            .into_iter()
            .filter_map(|k| match node.blocked_of(k) {
                Some(Blocked::Accept { fd, .. }) => Some((k, *fd)),
                _ => None,
            })
            .collect();
        for (i, &(a, fd)) in accepting.iter().enumerate() {
            if let Some(&(b, _)) = accepting[i + 1..].iter().find(|(_, f)| *f == fd) {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: "accept".to_string(),
                    detail: format!(
                        "threads {a} and {b} wait in accept on one listening socket (descriptor {fd}): Linux gives \
                         a connection to the one that began to wait first, which the checker does not keep"
                    ),
                });
            }
        }
        let k = node.slot_wanted();
        self.focus(n, k);
        Ok(())
    }

    /// At node `n`'s choice of its next thread: its thread `k`, waiting
    /// for the world out of the slot, takes the slot for an action that
    /// answers it; the running thread, where the choice is before its
    /// call, goes out preempted, the call unexamined.
    pub(in crate::process) fn answer_at_choice(&mut self, n: u8, k: usize) {
        let node = &mut self.world.nodes[n as usize];
        let Some(p) = self.procs[n as usize].as_mut() else { return };
        if let (Some(slot), Run::Held(notif)) = (node.slot_of(), std::mem::replace(&mut p.run, Run::Idle)) {
            p.threads[slot].held = Some(notif);
        }
        node.answer_at_choice(k);
        p.run = match p.threads[k].held.take() {
            Some(notif) => Run::Held(notif),
            None => Run::Idle,
        };
    }

    /// Whether the world may answer one of node `n`'s threads waiting for
    /// it out of the slot, were the node held at a choice of its next
    /// thread: then it is held there, so that the answer may come before
    /// the running thread goes on.
    fn world_may_answer(&self, n: u8) -> bool {
        if self.world.nodes[n as usize].outward_out_of_slot().is_empty() {
            return false;
        }
        let mut w = self.world.clone();
        w.nodes[n as usize].blocked = Blocked::Choice { trail: Default::default() };
        !super::super::action::answers_at_choice(&w, n).is_empty()
    }

    /// Puts node `n`'s waiting thread `k` in its slot, the slot's thread
    /// going out of it, waiting: where an action for thread `k` begins.
    pub(in crate::process) fn focus(&mut self, n: u8, k: usize) {
        let node = &self.world.nodes[n as usize];
        let slot = node.slot_of();
        if slot == Some(k) || k >= node.threads.len() {
            return;
        }
        let Some(p) = self.procs[n as usize].as_mut() else { return };
        if let (Run::Held(notif), Some(slot)) = (&p.run, slot) {
            p.threads[slot].held = Some(*notif);
        }
        p.run = match p.threads[k].held.take() {
            Some(notif) => Run::Held(notif),
            None => Run::Idle,
        };
        self.world.nodes[n as usize].swap_slot(k, None);
    }
}

/// A futex call, decoded ([`Supervisor::futex_call`]).
pub(super) enum FutexCall {
    /// A wake of up to `count` waiters whose bitsets meet `bitset`.
    Wake {
        /// The wake's bitset.
        bitset: u32,
        /// How many at most.
        count: u32,
    },
    /// A wait whose word is unchanged: until a wake that meets `bitset`,
    /// or, timed, until `until`.
    Wait {
        /// The wait's bitset.
        bitset: u32,
        /// Its timeout's end, for a timed one.
        until: Option<Millis>,
    },
    /// Another operation, by number.
    Other(i32),
}

/// Whether every one of `addrs` is in the text of the C library of
/// thread `tid`'s process (one read of its maps).
fn in_libc(tid: u32, addrs: &[u64]) -> bool {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{tid}/maps")) else { return false };
    let libc_text: Vec<(u64, u64)> = maps
        .lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            let path = f.nth(3).unwrap_or("");
            let (lo, hi) = range.split_once('-')?;
            let text = perms.contains('x') && path.rsplit('/').next() == Some("libc.so.6");
            text.then_some((u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?))
        })
        .collect();
    addrs.iter().all(|a| libc_text.iter().any(|(lo, hi)| (lo..hi).contains(&a)))
}

/// Whether thread `tid` of process `pid` has ended (a zombie, or gone).
fn zombie(pid: i32, tid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// The thread group of kernel thread `tid`.
fn tgid_of(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

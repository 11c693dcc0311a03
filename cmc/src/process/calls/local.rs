//! Objects inside one node: pipes (`pipe`, `pipe2`), socketpairs
//! (`socketpair` of `AF_UNIX`, `SOCK_STREAM` or `SOCK_SEQPACKET`) and
//! eventfds (`eventfd`, `eventfd2`), entirely in the world. A kernel pipe
//! a node made would be shared by every fork of its snapshot, state
//! outside the world; here each object is a [`Local`] in the node's part
//! of the world, each end a descriptor of its own (`VFd::Pipe`,
//! `VFd::Pair`, `VFd::Event`) over a `/dev/null` placeholder of its own.
//!
//! There is no network between a node and itself, so no action is
//! involved: what one end writes is read at once at the other, as the
//! kernel does it in a process of one thread, and Linux is the oracle for
//! every answer (each was measured natively; `cmc/tests/process_local.rs`
//! holds the figures). A read that would wait (nothing buffered, a writer
//! still open) can never be woken in a node of one thread, so the node
//! waits for ever (`Blocked::Pause`), as a real one would hang; a poll or
//! epoll over these objects and connections is `poll`'s, which asks
//! [`Supervisor::local_readiness`]. Within the limits (`local_bytes_max`,
//! `local_messages_max`) a write never waits for room, on Linux as here,
//! and crossing one is an error naming it.
//!
//! It owns the creation of these objects, their reads and writes, their
//! closing, their readiness and the socket calls on a socketpair's ends.
//! `connections` routes their reads and writes here, `files` their close,
//! `ioctl`, `fcntl` and `fstat`, `processes` raises SIGPIPE.

use std::os::fd::AsFd;

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, Local, PairEnd, VFd};
use super::super::{ProcessError, limits, syscalls};
use super::buffers::{gather, iovecs, scatter};
use super::{Answer, refuse};

/// `O_NOTIFICATION_PIPE` (a pipe of kernel notifications), which is
/// `O_EXCL`.
const O_NOTIFICATION_PIPE: i32 = libc::O_EXCL;

/// A pipe's capacity as `F_GETPIPE_SZ` reports it: 16 pages.
pub(super) const PIPE_CAPACITY: i64 = 65536;

/// The room the model keeps buffered is this figure's, not the kernel's:
/// see `limits::LOCAL_BYTES_MAX`.
const BYTES_MAX: usize = limits::LOCAL_BYTES_MAX;

/// The bytes a read or write call names, over all its buffers.
fn requested(c: &Notif) -> Result<usize, i32> {
    Ok(iovecs(c)?.iter().map(|&(_, len)| len).sum())
}

fn answer_of(r: Result<usize, i32>) -> Answer {
    match r {
        Ok(k) => Answer::Val(k as i64),
        Err(e) => Answer::Err(e),
    }
}

/// What a node's descriptor of an object inside it is, for messages.
pub(super) fn kind(v: VFd) -> &'static str {
    match v {
        VFd::Pipe { write: false, .. } => "the read end of a pipe",
        VFd::Pipe { write: true, .. } => "the write end of a pipe",
        VFd::Pair { .. } => "an end of a socketpair",
        _ => "an eventfd",
    }
}

impl Supervisor {
    /// `pipe(fds)` and `pipe2(fds, flags)`: a pipe in the world, its read
    /// end at the lower of the two descriptors.
    pub(super) fn on_pipe(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let flags = if c.nr == libc::SYS_pipe2 { c.args[1] as i32 } else { 0 };
        if flags & !(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_DIRECT | O_NOTIFICATION_PIPE) != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if flags & libc::O_DIRECT != 0 {
            return refuse(n, c, "a packet-mode pipe (O_DIRECT) is not modelled");
        }
        if flags & O_NOTIFICATION_PIPE != 0 {
            return refuse(n, c, "a notification pipe (O_NOTIFICATION_PIPE) is not modelled");
        }
        self.check_local_limit(n, c)?;
        let (read, write) = match self.reserve_two(n, c, c.args[0])? {
            Ok(fds) => fds,
            Err(answer) => return Ok(answer),
        };
        let cloexec = flags & libc::O_CLOEXEC != 0;
        if !self.install_placeholders(n, c, [read, write], cloexec)? {
            return Ok(Answer::Done);
        }
        let node = &mut self.world.nodes[n as usize];
        let id = node.locals.len() as u8;
        node.locals.push(Local::Pipe { bytes: Vec::new() });
        node.fds.insert(read, VFd::Pipe { id, write: false });
        node.fds.insert(write, VFd::Pipe { id, write: true });
        if flags & libc::O_NONBLOCK != 0 {
            node.nonblock.extend([read, write]);
        }
        node.renumber_locals();
        Ok(Answer::Val(0))
    }

    /// `socketpair(AF_UNIX, type, protocol, sv)` of `SOCK_STREAM` or
    /// `SOCK_SEQPACKET`: two connected ends in the world. Another family or
    /// type is an error naming it, as for `socket`.
    pub(super) fn on_socketpair(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (domain, ty, protocol) = (c.args[0] as i32, c.args[1] as i32, c.args[2] as i32);
        let flags = ty & !0xf;
        if flags & !(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let unmodelled = |detail: String| ProcessError::Unmodelled { node: n, call: "socketpair".to_string(), detail };
        if domain != libc::AF_UNIX {
            return Err(unmodelled(format!("address family {domain} is not modelled: only AF_UNIX socketpairs")));
        }
        let seqpacket = match ty & 0xf {
            libc::SOCK_STREAM => false,
            libc::SOCK_SEQPACKET => true,
            other => {
                return Err(unmodelled(format!(
                    "socket type {other} is not modelled: AF_UNIX socketpairs of SOCK_STREAM and SOCK_SEQPACKET"
                )));
            }
        };
        self.check_local_limit(n, c)?;
        // As Linux: the descriptors are reserved and written before the
        // sockets are made, so a bad protocol leaves their numbers written.
        let (a, b) = match self.reserve_two(n, c, c.args[3])? {
            Ok(fds) => fds,
            Err(answer) => return Ok(answer),
        };
        if protocol != 0 && protocol != libc::PF_UNIX {
            return Ok(Answer::Err(libc::EPROTONOSUPPORT));
        }
        if !self.install_placeholders(n, c, [a, b], flags & libc::SOCK_CLOEXEC != 0)? {
            return Ok(Answer::Done);
        }
        let node = &mut self.world.nodes[n as usize];
        let id = node.locals.len() as u8;
        node.locals.push(Local::Pair { seqpacket, ends: Default::default() });
        node.fds.insert(a, VFd::Pair { id, end: 0 });
        node.fds.insert(b, VFd::Pair { id, end: 1 });
        if flags & libc::SOCK_NONBLOCK != 0 {
            node.nonblock.extend([a, b]);
        }
        node.renumber_locals();
        Ok(Answer::Val(0))
    }

    /// `eventfd(count)` and `eventfd2(count, flags)`: a counter in the
    /// world.
    pub(super) fn on_eventfd(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let count = c.args[0] as u32 as u64;
        let flags = if c.nr == libc::SYS_eventfd2 { c.args[1] as i32 } else { 0 };
        if flags & !(libc::EFD_CLOEXEC | libc::EFD_NONBLOCK | libc::EFD_SEMAPHORE) != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        self.check_local_limit(n, c)?;
        if let Some(fd) = self.add_fd(n, c, flags & libc::EFD_CLOEXEC != 0)? {
            let node = &mut self.world.nodes[n as usize];
            let id = node.locals.len() as u8;
            node.locals.push(Local::Event { count, semaphore: flags & libc::EFD_SEMAPHORE != 0 });
            node.fds.insert(fd, VFd::Event { id });
            if flags & libc::EFD_NONBLOCK != 0 {
                node.nonblock.insert(fd);
            }
            node.renumber_locals();
        }
        Ok(Answer::Done)
    }

    fn check_local_limit(&self, n: u8, c: &Notif) -> Result<(), ProcessError> {
        if self.world.nodes[n as usize].locals.len() >= limits::LOCAL_OBJECTS_PER_NODE_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "local_objects_per_node_max",
                max: limits::LOCAL_OBJECTS_PER_NODE_MAX,
                detail: format!("{} would make one more pipe, socketpair or eventfd", syscalls::describe(c.nr)),
            });
        }
        Ok(())
    }

    /// The two descriptor numbers a call that makes two would get (the
    /// lowest free, as the kernel's `get_unused_fd_flags` twice), written
    /// into the node's `int[2]` at `at`; or what the call answers instead:
    /// EMFILE past the node's `RLIMIT_NOFILE` (nothing made, as Linux),
    /// EFAULT for a bad address, nothing (`Done`) for a node that is gone.
    /// Nothing is installed yet: the numbers are computed from the node's
    /// descriptor table, which cannot change while its one thread waits in
    /// this call.
    fn reserve_two(&mut self, n: u8, c: &Notif, at: u64) -> Result<Result<(i32, i32), Answer>, ProcessError> {
        if self.procs[n as usize].is_none() {
            return Ok(Err(Answer::Done));
        }
        let sys = |call: &'static str| ProcessError::NodeSys { node: n, call, errno: nix::errno::Errno::last() };
        let listing = std::fs::read_dir(format!("/proc/{}/fd", c.pid)).map_err(|e| ProcessError::NodeSys {
            node: n,
            call: "read /proc/PID/fd",
            errno: nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)),
        })?;
        let open: std::collections::BTreeSet<i32> =
            listing.flatten().filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok())).collect();
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if unsafe { libc::prlimit(c.pid as i32, libc::RLIMIT_NOFILE, std::ptr::null(), &mut limit) } != 0 {
            return Err(sys("prlimit"));
        }
        let mut free = (0..i32::MAX).filter(|fd| !open.contains(fd));
        let (Some(a), Some(b)) = (free.next(), free.next()) else { return Ok(Err(Answer::Err(libc::EMFILE))) };
        if b as u64 >= limit.rlim_cur {
            return Ok(Err(Answer::Err(libc::EMFILE)));
        }
        let mut numbers = [0u8; 8];
        numbers[..4].copy_from_slice(&a.to_ne_bytes());
        numbers[4..].copy_from_slice(&b.to_ne_bytes());
        if !notif::write_mem(c.pid, at, &numbers) {
            return Ok(Err(Answer::Err(libc::EFAULT)));
        }
        Ok(Ok((a, b)))
    }

    /// Installs a placeholder of its own (`/dev/null`) at each of `fds`
    /// in node `n`, without answering its call. `false` when the node is
    /// gone.
    fn install_placeholders(&mut self, n: u8, c: &Notif, fds: [i32; 2], cloexec: bool) -> Result<bool, ProcessError> {
        for fd in fds {
            let Some(t) = self.templates[n as usize].as_ref() else { return Ok(false) };
            let devnull = super::super::lives::open_devnull().map_err(|errno| ProcessError::NodeSys {
                node: n,
                call: "open /dev/null",
                errno,
            })?;
            let added = notif::add_fd_at_flagged(t.listener.as_fd(), c.id, devnull.as_fd(), fd, cloexec)
                .map_err(|errno| ProcessError::NodeSys { node: n, call: "NOTIF_ADDFD", errno })?;
            if !added {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A read (`read`, `readv`, `recv*`, the positional forms at the
    /// current offset) of descriptor `fd`, an end `v` of an object inside
    /// node `n`.
    pub(super) fn read_local(&mut self, n: u8, c: &Notif, fd: i32, v: VFd) -> Result<Answer, ProcessError> {
        let nonblock = self.world.nodes[n as usize].nonblock.contains(&fd);
        let want = match requested(c) {
            Ok(k) => k,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let before = match v {
            VFd::Pair { id, end } => queued(&self.world.nodes[n as usize], id, end),
            _ => 0,
        };
        let answer = match v {
            VFd::Pipe { write: true, .. } => Answer::Err(libc::EBADF),
            VFd::Pipe { id, .. } => self.read_pipe(n, c, id, want, nonblock),
            VFd::Event { id } => self.read_event(n, c, id, want, nonblock),
            VFd::Pair { id, end } => self.read_pair(n, c, id, end, want, nonblock)?,
            _ => Answer::Err(libc::EBADF),
        };
        // A read wakes writers where it freed room: an eventfd's read
        // always; a socketpair's where it took a whole message off the
        // queue (`sock_wfree`), not a peek nor part of one; a pipe's, only
        // where the pipe was full, which it never is here.
        let freed = match v {
            VFd::Pair { id, end } => queued(&self.world.nodes[n as usize], id, end) < before,
            _ => true,
        };
        if matches!(answer, Answer::Val(k) if k > 0) && freed {
            self.wake_local(n, v, false);
        }
        Ok(answer)
    }

    /// A pipe's read: what is buffered, at most `want` bytes; at EOF (no
    /// write end left) 0; otherwise EAGAIN, or a wait for ever.
    fn read_pipe(&mut self, n: u8, c: &Notif, id: u8, want: usize, nonblock: bool) -> Answer {
        let node = &mut self.world.nodes[n as usize];
        let writers = node.local_end_open(id, |v| matches!(v, VFd::Pipe { write: true, .. }));
        let Some(Local::Pipe { bytes }) = node.locals.get_mut(id as usize) else { return Answer::Err(libc::EBADF) };
        if want == 0 {
            return Answer::Val(0);
        }
        if bytes.is_empty() {
            return if !writers {
                Answer::Val(0)
            } else if nonblock {
                Answer::Err(libc::EAGAIN)
            } else {
                Answer::Hold(Blocked::Pause)
            };
        }
        let take = want.min(bytes.len());
        let r = scatter(c, &bytes[..take]);
        if let Ok(k) = r {
            bytes.drain(..k);
        }
        answer_of(r)
    }

    /// An eventfd's read: 8 bytes, the count (or 1 under
    /// `EFD_SEMAPHORE`), taken from the counter; a count of 0 gives EAGAIN
    /// or a wait for ever.
    fn read_event(&mut self, n: u8, c: &Notif, id: u8, want: usize, nonblock: bool) -> Answer {
        if want < 8 {
            return Answer::Err(libc::EINVAL);
        }
        let Some(Local::Event { count, semaphore }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Answer::Err(libc::EBADF);
        };
        if *count == 0 {
            return if nonblock { Answer::Err(libc::EAGAIN) } else { Answer::Hold(Blocked::Pause) };
        }
        let value = if *semaphore { 1 } else { *count };
        *count -= value;
        // Taken even if the copy faults, as the kernel's.
        match scatter(c, &value.to_ne_bytes()) {
            Ok(_) => Answer::Val(8),
            Err(e) => Answer::Err(e),
        }
    }

    /// A socketpair end's read, with the receive flags modelled
    /// (`MSG_DONTWAIT`, `MSG_PEEK`, `MSG_WAITALL`, `MSG_TRUNC`).
    fn read_pair(
        &mut self,
        n: u8,
        c: &Notif,
        id: u8,
        end: u8,
        want: usize,
        nonblock: bool,
    ) -> Result<Answer, ProcessError> {
        let flags = Self::read_flags(c);
        let known = libc::MSG_DONTWAIT | libc::MSG_PEEK | libc::MSG_WAITALL | libc::MSG_TRUNC | libc::MSG_CMSG_CLOEXEC;
        if flags & !known != 0 {
            return refuse(
                n,
                c,
                &format!(
                    "receive flags {flags:#x} on a socketpair (MSG_DONTWAIT, MSG_PEEK, MSG_WAITALL and MSG_TRUNC are modelled)"
                ),
            );
        }
        let nonblock = nonblock || flags & libc::MSG_DONTWAIT != 0;
        let peek = flags & libc::MSG_PEEK != 0;
        let Some(Local::Pair { seqpacket, ends }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        let me = &mut ends[end as usize];
        let answer = if *seqpacket {
            // The pending error first, even before what is queued.
            if std::mem::take(&mut me.reset) {
                return Ok(Answer::Err(libc::ECONNRESET));
            }
            let Some(msg) = me.queue.front() else {
                return Ok(waiting(me, nonblock));
            };
            let (len, take) = (msg.len(), want.min(msg.len()));
            let r = scatter(c, &msg[..take]);
            if !peek {
                // Dequeued before the copy: a fault loses it too. The rest
                // of a message longer than the read is lost.
                me.queue.pop_front();
            }
            let Ok(k) = r else { return Ok(answer_of(r)) };
            if c.nr == libc::SYS_recvmsg
                && take < len
                && !notif::write_mem(c.pid, c.args[1] + 48, &(libc::MSG_TRUNC as u32).to_ne_bytes())
            {
                return Ok(Answer::Err(libc::EFAULT));
            }
            let returned = if flags & libc::MSG_TRUNC != 0 { len } else { k };
            Answer::Val(returned as i64)
        } else {
            let available: usize = me.queue.iter().map(Vec::len).sum();
            if want == 0 {
                return Ok(Answer::Val(0));
            }
            if available == 0 {
                if std::mem::take(&mut me.reset) {
                    return Ok(Answer::Err(libc::ECONNRESET));
                }
                return Ok(waiting(me, nonblock));
            }
            let take = want.min(available);
            let short = flags & libc::MSG_WAITALL != 0 && !peek && take < want;
            if short && me.shutdown & PairEnd::RCV == 0 && !me.reset && !nonblock {
                // Linux takes what is there and waits for the rest; with
                // threads another may read or write meanwhile, which the
                // wait (holding the bytes queued) does not model.
                if !self.world.nodes[n as usize].threads.is_empty() {
                    return refuse(n, c, "a MSG_WAITALL receive of a socketpair that waits with part of it there");
                }
                // MSG_WAITALL waits for the rest, which nothing can write.
                return Ok(Answer::Hold(Blocked::Pause));
            }
            let data: Vec<u8> = me.queue.iter().flatten().take(take).copied().collect();
            let r = scatter(c, &data);
            let Ok(k) = r else { return Ok(answer_of(r)) };
            if !peek {
                take_front(&mut me.queue, k);
                if short {
                    // The pending error ends the wait for the rest, and is
                    // taken (the kernel's `sock_error`).
                    me.reset = false;
                }
            }
            Answer::Val(k as i64)
        };
        // recvfrom's address: an unnamed socket's is empty.
        if c.nr == libc::SYS_recvfrom && c.args[4] != 0 && !notif::write_mem(c.pid, c.args[5], &0u32.to_ne_bytes()) {
            return Ok(Answer::Err(libc::EFAULT));
        }
        Ok(answer)
    }

    /// A write (`write`, `writev`, `send*`, the positional forms at the
    /// current offset) to descriptor `fd`, an end `v` of an object inside
    /// node `n`.
    pub(super) fn write_local(&mut self, n: u8, c: &Notif, fd: i32, v: VFd) -> Result<Answer, ProcessError> {
        let nonblock = self.world.nodes[n as usize].nonblock.contains(&fd);
        let want = match requested(c) {
            Ok(k) => k,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let answer = match v {
            VFd::Pipe { write: false, .. } => Answer::Err(libc::EBADF),
            VFd::Pipe { id, .. } => self.write_pipe(n, c, id, want)?,
            VFd::Event { id } => self.write_event(n, c, id, nonblock)?,
            VFd::Pair { id, end } => self.write_pair(n, c, id, end)?,
            _ => Answer::Err(libc::EBADF),
        };
        if matches!(answer, Answer::Val(k) if k > 0) {
            self.wake_local(n, v, true);
        }
        Ok(answer)
    }

    /// A pipe's write: EPIPE and SIGPIPE without a read end; otherwise
    /// the bytes are buffered, all of them (within `local_bytes_max` the
    /// kernel's pipe has room for them).
    fn write_pipe(&mut self, n: u8, c: &Notif, id: u8, want: usize) -> Result<Answer, ProcessError> {
        if want == 0 {
            return Ok(Answer::Val(0));
        }
        let node = &self.world.nodes[n as usize];
        if !node.local_end_open(id, |v| matches!(v, VFd::Pipe { write: false, .. })) {
            self.raise_sigpipe(n, c)?;
            return Ok(Answer::Err(libc::EPIPE));
        }
        let data = match gather(c) {
            Ok(d) => d,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let Some(Local::Pipe { bytes }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        if bytes.len() + data.len() > BYTES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "local_bytes_max",
                max: BYTES_MAX,
                detail: format!("a {}-byte {} to a pipe holding {}", data.len(), syscalls::describe(c.nr), bytes.len()),
            });
        }
        bytes.extend_from_slice(&data);
        Ok(Answer::Val(data.len() as i64))
    }

    /// An eventfd's write: each buffer of the call by itself (the
    /// kernel's eventfd has `write`, not `write_iter`), each 8 bytes
    /// added to the counter; a value that would take it past
    /// `u64::MAX - 1` gives EAGAIN or a wait for ever.
    fn write_event(&mut self, n: u8, c: &Notif, id: u8, nonblock: bool) -> Result<Answer, ProcessError> {
        let buffers = match iovecs(c) {
            Ok(b) => b,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let mut left: usize = buffers.iter().map(|&(_, len)| len).sum();
        let mut done = 0;
        let stop = |done: usize, e: i32| if done == 0 { Answer::Err(e) } else { Answer::Val(done as i64) };
        for (base, len) in buffers {
            if left == 0 {
                break;
            }
            if len != 8 {
                return Ok(stop(done, libc::EINVAL));
            }
            let Some(b) = notif::read_mem(c.pid, base, 8) else { return Ok(stop(done, libc::EFAULT)) };
            let value = u64::from_ne_bytes(b.try_into().unwrap_or_default());
            if value == u64::MAX {
                return Ok(stop(done, libc::EINVAL));
            }
            let Some(Local::Event { count, .. }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
                return Ok(Answer::Err(libc::EBADF));
            };
            if u64::MAX - *count <= value {
                if nonblock {
                    return Ok(stop(done, libc::EAGAIN));
                }
                // A later buffer of a vectored write waits with the ones
                // before it counted: made again, the call would count them
                // twice (a review's probe), and another thread can read.
                if done > 0 && !self.world.nodes[n as usize].threads.is_empty() {
                    return refuse(n, c, "a vectored write to an eventfd whose later buffer waits for room");
                }
                // No reader can make room (or another thread's read may):
                // the node waits.
                return Ok(Answer::Hold(Blocked::Pause));
            }
            *count += value;
            done += 8;
            left -= 8;
        }
        Ok(Answer::Val(done as i64))
    }

    /// A socketpair end's write: one message to the other end's queue.
    /// A stream end shut for writing (or whose peer is gone) fails with
    /// EPIPE and raises SIGPIPE unless `MSG_NOSIGNAL`; a seqpacket end
    /// fails with EPIPE and raises nothing, or first with a pending
    /// ECONNRESET.
    fn write_pair(&mut self, n: u8, c: &Notif, id: u8, end: u8) -> Result<Answer, ProcessError> {
        let flags = match c.nr {
            libc::SYS_sendto => c.args[3] as i32,
            libc::SYS_sendmsg => c.args[2] as i32,
            _ => 0,
        };
        if flags & !(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) != 0 {
            return refuse(
                n,
                c,
                &format!("send flags {flags:#x} on a socketpair (MSG_DONTWAIT and MSG_NOSIGNAL are modelled)"),
            );
        }
        // The address the call names: a connected socket's own for a
        // seqpacket end (ignored), EISCONN for a stream end.
        let named = match c.nr {
            libc::SYS_sendto if c.args[4] != 0 => {
                let len = c.args[5] as i32;
                if !(0..=128).contains(&len) {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                len != 0
            }
            libc::SYS_sendmsg => {
                let Some(h) = notif::read_mem(c.pid, c.args[1], 56) else { return Ok(Answer::Err(libc::EFAULT)) };
                let word = |at: usize| u64::from_ne_bytes(h[at..at + 8].try_into().unwrap_or_default());
                if word(40) != 0 {
                    return refuse(
                        n,
                        c,
                        "ancillary data (SCM_RIGHTS, SCM_CREDENTIALS) on a socketpair is not modelled",
                    );
                }
                word(0) != 0 && word(8) as u32 != 0
            }
            _ => false,
        };
        let Some(Local::Pair { seqpacket, ends }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        let seqpacket = *seqpacket;
        let me = &mut ends[end as usize];
        let shut = me.shutdown & PairEnd::SEND != 0;
        if seqpacket {
            if std::mem::take(&mut me.reset) {
                return Ok(Answer::Err(libc::ECONNRESET));
            }
            if shut {
                return Ok(Answer::Err(libc::EPIPE));
            }
        } else {
            if named {
                return Ok(Answer::Err(libc::EISCONN));
            }
            if shut {
                if flags & libc::MSG_NOSIGNAL == 0 {
                    self.raise_sigpipe(n, c)?;
                }
                return Ok(Answer::Err(libc::EPIPE));
            }
        }
        let data = match gather(c) {
            Ok(d) => d,
            Err(e) => return Ok(Answer::Err(e)),
        };
        // A stream sends nothing for nothing; a seqpacket end sends an
        // empty message, which its reader reads as 0 bytes.
        if data.is_empty() && !seqpacket {
            return Ok(Answer::Val(0));
        }
        let Some(Local::Pair { ends, .. }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        let peer = &mut ends[1 - end as usize];
        let buffered: usize = peer.queue.iter().map(Vec::len).sum();
        if buffered + data.len() > BYTES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "local_bytes_max",
                max: BYTES_MAX,
                detail: format!(
                    "a {}-byte {} to a socketpair end holding {buffered}",
                    data.len(),
                    syscalls::describe(c.nr)
                ),
            });
        }
        if peer.queue.len() >= limits::LOCAL_MESSAGES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "local_messages_max",
                max: limits::LOCAL_MESSAGES_MAX,
                detail: format!("one more {} to a socketpair end", syscalls::describe(c.nr)),
            });
        }
        let len = data.len();
        peer.queue.push_back(data);
        Ok(Answer::Val(len as i64))
    }

    /// Node `n` closes descriptor `fd` of `v`: an error if an epoll
    /// instance watches it and a duplicate of it is left, where Linux
    /// keeps the interest (an interest is the description's, and goes
    /// with its last descriptor) and goes on reporting it under the number
    /// closed, which the world, keeping interests by descriptor, does not.
    pub(super) fn check_watched_duplicate(
        &self,
        n: u8,
        c: &Notif,
        fd: i32,
        v: Option<VFd>,
    ) -> Result<(), ProcessError> {
        let node = &self.world.nodes[n as usize];
        let Some(v) = v.filter(|v| v.local_id().is_some()) else { return Ok(()) };
        let duplicated = node.fds.iter().any(|(&f, w)| f != fd && *w == v);
        if duplicated && node.epolls.values().any(|i| i.contains_key(&fd)) {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(c.nr),
                detail: format!(
                    "closing fd {fd}, {} an epoll instance watches, while a duplicate of it is open: Linux keeps the \
                     interest until the last duplicate is closed, which is not modelled",
                    kind(v)
                ),
            });
        }
        Ok(())
    }

    /// Node `n` closed its descriptor of `v` (forgotten already): unless
    /// a duplicate of it is left, the other end of a socketpair is shut both ways (and told ECONNRESET
    /// if this end had data unread), and an object with no end left is
    /// forgotten. A pipe's other end needs nothing: its EOF and EPIPE are
    /// read from the descriptors left.
    pub(super) fn close_local(&mut self, n: u8, v: VFd) {
        let node = &mut self.world.nodes[n as usize];
        // A duplicate keeps the end open (its description).
        let open = node.fds.values().any(|w| *w == v);
        let mut peer = None;
        if !open
            && let VFd::Pair { id, end } = v
            && let Some(Local::Pair { ends, .. }) = node.locals.get_mut(id as usize)
        {
            let (closed, other) = (end as usize, 1 - end as usize);
            let unread = !ends[closed].queue.is_empty();
            // Its receive queue goes with it; its own state no longer
            // matters, and is left as one value.
            ends[closed] = PairEnd { queue: Default::default(), shutdown: PairEnd::RCV | PairEnd::SEND, reset: false };
            ends[other].shutdown = PairEnd::RCV | PairEnd::SEND;
            ends[other].reset |= unread;
            peer = Some((id, other as u8));
        }
        // `unix_release_sock`: the peer's `sk_state_change`.
        if let Some((id, other)) = peer {
            self.wake_pair_end(n, id, other);
        }
        self.world.nodes[n as usize].renumber_locals();
    }

    /// The socket calls on an end of a socketpair: `shutdown`,
    /// `getsockname`, `getpeername`, `getsockopt` answered; `listen` and
    /// `accept` fail as on a connected `AF_UNIX` socket; `bind` (which
    /// would name it), `connect` and `setsockopt` (its buffer sizes decide
    /// when a write would wait) are errors naming the node and the call.
    pub(super) fn on_pair_call(&mut self, n: u8, c: &Notif, v: Option<VFd>) -> Result<Answer, ProcessError> {
        let Some(VFd::Pair { id, end }) = v else { return Ok(Answer::Err(libc::ENOTSOCK)) };
        let Some(Local::Pair { seqpacket, ends }) = self.world.nodes[n as usize].locals.get_mut(id as usize) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        let me = end as usize;
        Ok(match c.nr {
            libc::SYS_shutdown => {
                let how = c.args[1] as i32;
                if !(libc::SHUT_RD..=libc::SHUT_RDWR).contains(&how) {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                // SHUT_RD is RCV (1), SHUT_WR SEND (2), SHUT_RDWR both; the
                // peer is shut the other way.
                let mode = (how + 1) as u8;
                let mut peer_mode = 0;
                if mode & PairEnd::RCV != 0 {
                    peer_mode |= PairEnd::SEND;
                }
                if mode & PairEnd::SEND != 0 {
                    peer_mode |= PairEnd::RCV;
                }
                ends[me].shutdown |= mode;
                ends[1 - me].shutdown |= peer_mode;
                // `unix_shutdown`: this end's `sk_state_change`, then the
                // peer's, whether or not their events change.
                self.wake_pair_end(n, id, end);
                self.wake_pair_end(n, id, 1 - end);
                return Ok(Answer::Val(0));
            }
            libc::SYS_getsockname | libc::SYS_getpeername => {
                // Unnamed: the family alone.
                unix_address(c.pid, c.args[1], c.args[2])
            }
            libc::SYS_getsockopt => {
                let (level, name) = (c.args[1] as i32, c.args[2] as i32);
                if level != libc::SOL_SOCKET {
                    return Ok(Answer::Err(libc::EOPNOTSUPP));
                }
                let value: Vec<u8> = match name {
                    libc::SO_TYPE => {
                        (if *seqpacket { libc::SOCK_SEQPACKET } else { libc::SOCK_STREAM }).to_ne_bytes().to_vec()
                    }
                    libc::SO_DOMAIN => libc::AF_UNIX.to_ne_bytes().to_vec(),
                    libc::SO_PROTOCOL | libc::SO_ACCEPTCONN => 0i32.to_ne_bytes().to_vec(),
                    libc::SO_ERROR => {
                        let reset = std::mem::take(&mut ends[me].reset);
                        (if reset { libc::ECONNRESET } else { 0 }).to_ne_bytes().to_vec()
                    }
                    libc::SO_PEERCRED => {
                        // Made by the node itself: its virtual pid, the user
                        // and group it runs as.
                        let mut cred = Vec::with_capacity(12);
                        cred.extend_from_slice(&(self.world.pid(n) as i32).to_ne_bytes());
                        cred.extend_from_slice(&unsafe { libc::geteuid() }.to_ne_bytes());
                        cred.extend_from_slice(&unsafe { libc::getegid() }.to_ne_bytes());
                        cred
                    }
                    _ => {
                        return refuse(
                            n,
                            c,
                            &format!(
                                "socket option {name} of a socketpair end (SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ERROR, SO_ACCEPTCONN and SO_PEERCRED are modelled)"
                            ),
                        );
                    }
                };
                option(c.pid, c.args[3], c.args[4], &value)
            }
            libc::SYS_setsockopt if c.args[1] as i32 != libc::SOL_SOCKET => Answer::Err(libc::EOPNOTSUPP),
            libc::SYS_setsockopt => {
                return refuse(
                    n,
                    c,
                    "socket options of a socketpair end are not modelled (its buffer sizes decide when a write waits)",
                );
            }
            libc::SYS_listen | libc::SYS_accept | libc::SYS_accept4 => Answer::Err(libc::EINVAL),
            _ => {
                return refuse(
                    n,
                    c,
                    "binding or connecting a socketpair end is not modelled (a bind would give it an address)",
                );
            }
        })
    }
}

/// A read that finds nothing at a socketpair end: EOF once nothing more
/// can arrive, else EAGAIN, or a wait for ever.
fn waiting(me: &PairEnd, nonblock: bool) -> Answer {
    if me.shutdown & PairEnd::RCV != 0 {
        Answer::Val(0)
    } else if nonblock {
        Answer::Err(libc::EAGAIN)
    } else {
        Answer::Hold(Blocked::Pause)
    }
}

/// Takes `k` bytes from the front of `queue`, leaving the rest of a
/// message first.
/// How many messages are queued at end `end` of socketpair `id` of `node`.
fn queued(node: &super::super::world::NodeWorld, id: u8, end: u8) -> usize {
    match node.locals.get(id as usize) {
        Some(Local::Pair { ends, .. }) => ends[end as usize].queue.len(),
        _ => 0,
    }
}

fn take_front(queue: &mut std::collections::VecDeque<Vec<u8>>, mut k: usize) {
    while k > 0 {
        let Some(front) = queue.front_mut() else { return };
        if front.len() <= k {
            k -= front.len();
            queue.pop_front();
        } else {
            front.drain(..k);
            k = 0;
        }
    }
}

/// Writes an unnamed `AF_UNIX` address (the family alone, 2 bytes) as
/// `getsockname` does: as much of it as the caller's length allows, and
/// the length it has.
fn unix_address(pid: u32, addr: u64, len_at: u64) -> Answer {
    let Some(len) = notif::read_mem(pid, len_at, 4) else { return Answer::Err(libc::EFAULT) };
    let room = i32::from_ne_bytes(len[..4].try_into().unwrap_or_default());
    if room < 0 {
        return Answer::Err(libc::EINVAL);
    }
    let family = (libc::AF_UNIX as u16).to_ne_bytes();
    let k = (room as usize).min(family.len());
    if !notif::write_mem(pid, addr, &family[..k]) || !notif::write_mem(pid, len_at, &2u32.to_ne_bytes()) {
        return Answer::Err(libc::EFAULT);
    }
    Answer::Val(0)
}

/// Writes a socket option's `value` as `getsockopt` does: as much as the
/// caller's length allows, and that length.
fn option(pid: u32, at: u64, len_at: u64, value: &[u8]) -> Answer {
    let Some(len) = notif::read_mem(pid, len_at, 4) else { return Answer::Err(libc::EFAULT) };
    let room = i32::from_ne_bytes(len[..4].try_into().unwrap_or_default());
    if room < 0 {
        return Answer::Err(libc::EINVAL);
    }
    let k = (room as usize).min(value.len());
    if !notif::write_mem(pid, at, &value[..k]) || !notif::write_mem(pid, len_at, &(k as u32).to_ne_bytes()) {
        return Answer::Err(libc::EFAULT);
    }
    Answer::Val(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_read_takes_across_writes_and_leaves_the_rest_first() {
        let mut q: std::collections::VecDeque<Vec<u8>> = [b"ab".to_vec(), b"cd".to_vec()].into();
        take_front(&mut q, 3);
        assert_eq!(q, [b"d".to_vec()]);
        take_front(&mut q, 1);
        assert!(q.is_empty());
    }
}

//! Starting a node's template: `fork`, a child that makes only raw system
//! calls on memory the parent prepared, the seccomp filter installed before
//! `execve`, the listener handed back over a socket, and the one `execve`
//! let through by the parent. A template is started once per node and
//! search; every process the node runs after that is forked from it
//! (`forkserver`), so the filter is installed once per node.
//!
//! Why this shape (research, pitfalls 5, 8, 9, 10, 21, 24):
//! - The filter notifies `execve`, so that a target that execs is an error;
//!   the template's own exec is the one the parent answers with CONTINUE.
//!   That needs a parent that runs while the child execs, so the child is
//!   forked, not vforked. `fork()` of a large checker costs O(its RSS), but
//!   it happens once per node and search, when the checker is small.
//! - Between installing the filter and `execve` the child makes no notified
//!   call but the `execve` itself: the listener goes back by `sendmsg` on
//!   [`HANDOFF_FD`], which the filter exempts, and so does the report of a
//!   failed step.
//! - `PR_SET_PDEATHSIG(SIGKILL)` makes the kernel kill the template when the
//!   spawning thread dies, so it never outlives the checker. The death
//!   signal is tied to the spawning *thread*: a [`super::supervisor::Supervisor`] must
//!   stay on the thread that created it.
//! - ASLR off (`personality`), no core files, `RLIMIT_STACK` fixed at 8 MiB (unlimited
//!   switches the mmap layout), `RLIMIT_NOFILE` at 1,024, the mode mask
//!   022, the same argv, envp and cwd byte for byte: the same addresses
//!   and the same limits on every run.
//! - fds: 0 is `/dev/null`, 1 and 2 the node's log, 3 and 193 `/dev/null`
//!   placeholders so that the kernel never hands those numbers out (the
//!   supervisor answers every call on them), everything else closed.
//!
//! This module does not decide anything about the world: it returns a
//! process that has begun its `execve`, its pidfd and its listener, or the
//! step that failed.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;
use nix::libc;

use super::filter::HANDOFF_FD;

/// What the child needs, prepared by the parent before the fork.
#[repr(C)]
struct Child {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    prog: libc::sock_fprog,
    devnull: i32,
    log: i32,
    handoff: i32,
    cpu: i32,
    ppid: i32,
    old_mask: libc::sigset_t,
}

/// The steps of the child, for error messages.
const STEPS: [&str; 12] = [
    "none",
    "checking the parent",
    "setting the death signal",
    "pinning to a CPU",
    "turning ASLR off",
    "setting RLIMIT_STACK, RLIMIT_CORE and RLIMIT_NOFILE",
    "changing directory",
    "setting up file descriptors",
    "setting no_new_privs",
    "installing the seccomp filter",
    "handing the listener over",
    "execve",
];

/// What to start.
pub struct Spec<'a> {
    /// The program.
    pub path: &'a CStr,
    /// Its arguments, the program's name first.
    pub argv: &'a [CString],
    /// Its whole environment (`LD_PRELOAD` among it).
    pub envp: &'a [CString],
    /// Its working directory.
    pub cwd: &'a CStr,
    /// The seccomp filter it installs before its `execve`.
    pub filter: &'a [libc::sock_filter],
    /// `/dev/null`, its stdin.
    pub devnull: BorrowedFd<'a>,
    /// Where its stdout and stderr go.
    pub log: BorrowedFd<'a>,
    /// The child end of the hand-off socket pair.
    pub handoff_child: BorrowedFd<'a>,
    /// The parent end, read after the fork.
    pub handoff_parent: BorrowedFd<'a>,
    /// The CPU to pin it to, if any.
    pub cpu: Option<usize>,
    /// How long the child may take to reach its `execve`.
    pub timeout_ms: i32,
}

/// A started template: its `execve` is under way (the program's first
/// notified calls follow).
pub struct Spawned {
    /// Its process id.
    pub pid: i32,
    /// Its pidfd.
    pub pidfd: OwnedFd,
    /// Its filter's notification listener, handed over from the child.
    pub listener: OwnedFd,
}

/// A spawn that failed: the step and the error.
#[derive(Debug)]
pub struct SpawnError {
    /// The step that failed, one of the steps listed above.
    pub step: &'static str,
    /// Its error.
    pub errno: Errno,
}

/// Forks and starts `spec`, and lets its `execve` through. Must be called
/// from the thread that will own the node (the death signal follows it).
pub fn spawn(spec: &Spec<'_>) -> Result<Spawned, SpawnError> {
    let argv: Vec<*const libc::c_char> =
        spec.argv.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Vec<*const libc::c_char> =
        spec.envp.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let mut child = Child {
        path: spec.path.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: spec.cwd.as_ptr(),
        prog: libc::sock_fprog { len: spec.filter.len() as u16, filter: spec.filter.as_ptr() as *mut _ },
        devnull: spec.devnull.as_raw_fd(),
        log: spec.log.as_raw_fd(),
        handoff: spec.handoff_child.as_raw_fd(),
        cpu: spec.cpu.map_or(-1, |c| c as i32),
        ppid: unsafe { libc::getpid() },
        old_mask: unsafe { std::mem::zeroed() },
    };
    // Block every signal across the fork, so that no handler of the checker
    // runs in the child (as posix_spawn).
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut child.old_mask);
    }
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child_main(&child);
    }
    let fork_errno = Errno::last();
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &child.old_mask, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(SpawnError { step: "fork", errno: fork_errno });
    }
    let give_up = |e: SpawnError| {
        kill_and_reap(pid);
        Err(e)
    };
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return give_up(SpawnError { step: "pidfd_open", errno: Errno::last() });
    }
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    // The listener, or the step that failed before it.
    let listener = match receive(spec.handoff_parent, pidfd.as_fd(), spec.timeout_ms) {
        Ok(Message::Listener(l)) => l,
        Ok(Message::Failed(step, errno)) => return give_up(SpawnError { step: STEPS[step], errno }),
        Err(step) => return give_up(SpawnError { step, errno: Errno::last() }),
    };
    // Its execve, the only notified call the child makes, runs as asked.
    match let_exec_through(listener.as_fd(), pidfd.as_fd(), pid, spec.timeout_ms) {
        Ok(()) => Ok(Spawned { pid, pidfd, listener }),
        Err(step) => {
            // A failed step sent after the exec (its errno), or none.
            if let Ok(Message::Failed(s, errno)) = receive(spec.handoff_parent, pidfd.as_fd(), 0) {
                return give_up(SpawnError { step: STEPS[s], errno });
            }
            give_up(SpawnError { step, errno: Errno::last() })
        }
    }
}

fn kill_and_reap(pid: i32) {
    let mut status = 0;
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
    }
}

enum Message {
    Listener(OwnedFd),
    /// The child's failed step and its errno.
    Failed(usize, Errno),
}

fn wait_readable(fd: BorrowedFd<'_>, pidfd: BorrowedFd<'_>, timeout_ms: i32) -> bool {
    super::forkserver::readable(fd, pidfd, std::time::Duration::from_millis(timeout_ms.max(0) as u64))
}

/// One message from the child on the hand-off socket.
fn receive(sock: BorrowedFd<'_>, pidfd: BorrowedFd<'_>, timeout_ms: i32) -> Result<Message, &'static str> {
    if !wait_readable(sock, pidfd, timeout_ms) {
        return Err("receiving the listener (the child ended or was silent)");
    }
    let mut data = [0u8; 8];
    let mut iov = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: data.len() };
    let mut cmsg = [0u64; 4];
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg);
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if n < 1 {
        return Err("receiving the listener");
    }
    if data[0] != 0 {
        let errno = i32::from_ne_bytes([data[4], data[5], data[6], data[7]]);
        return Ok(Message::Failed((data[0] as usize).min(STEPS.len() - 1), Errno::from_raw(errno)));
    }
    unsafe {
        let cm = libc::CMSG_FIRSTHDR(&msg);
        if cm.is_null() || (*cm).cmsg_type != libc::SCM_RIGHTS {
            return Err("receiving the listener (no descriptor)");
        }
        let fd = (libc::CMSG_DATA(cm) as *const i32).read_unaligned();
        Ok(Message::Listener(OwnedFd::from_raw_fd(fd)))
    }
}

/// Receives the child's `execve` notification and lets it run.
fn let_exec_through(
    listener: BorrowedFd<'_>,
    pidfd: BorrowedFd<'_>,
    pid: i32,
    timeout_ms: i32,
) -> Result<(), &'static str> {
    if !wait_readable(listener, pidfd, timeout_ms) {
        return Err("execve (the child ended before it)");
    }
    let notif = match super::notif::recv(listener) {
        Ok(Some(n)) => n,
        _ => return Err("execve (no notification)"),
    };
    if notif.nr != libc::SYS_execve || notif.pid as i32 != pid {
        return Err("execve (another call came first)");
    }
    match super::notif::continue_call(listener, notif.id) {
        Ok(true) => Ok(()),
        _ => Err("execve (the child ended in it)"),
    }
}

/// The child: raw system calls only on memory prepared before the fork, no
/// allocation, no locks (another thread of the checker may have held one at
/// the fork), no return.
fn child_main(c: &Child) -> ! {
    // Tells the parent which step failed, on whichever descriptor the
    // hand-off socket has at that moment, and exits.
    let give_up = |handoff: i32, step: u8| -> ! {
        let errno = Errno::last_raw();
        let mut data = [0u8; 8];
        data[0] = step;
        data[4..8].copy_from_slice(&errno.to_ne_bytes());
        let mut iov = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: data.len() };
        unsafe {
            // sendmsg, not send: after the filter only sendmsg on the
            // hand-off descriptor goes unnotified.
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            libc::sendmsg(handoff, &msg, 0);
            libc::_exit(127)
        }
    };
    unsafe {
        let h = c.handoff;
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            give_up(h, 2);
        }
        // The parent may have died before the death signal was set.
        if libc::getppid() != c.ppid {
            give_up(h, 1);
        }
        if c.cpu >= 0 {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(c.cpu as usize, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                give_up(h, 3);
            }
        }
        let persona = libc::personality(0xffff_ffff);
        if persona < 0 || libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) < 0 {
            give_up(h, 4);
        }
        let mut lim: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_STACK, &mut lim);
        let want = 8 << 20;
        lim.rlim_cur = if lim.rlim_max == libc::RLIM_INFINITY { want } else { lim.rlim_max.min(want) };
        if libc::setrlimit(libc::RLIMIT_STACK, &lim) != 0 {
            give_up(h, 5);
        }
        // No core files: a node killed by its own signal is a finding the
        // checker reports, and every one would otherwise leave a core in
        // the node's directory.
        let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::setrlimit(libc::RLIMIT_CORE, &none) != 0 {
            give_up(h, 5);
        }
        // The file mode mask, whatever the checker's: 022.
        libc::umask(0o022);
        if libc::chdir(c.cwd) != 0 {
            give_up(h, 6);
        }
        // Copy the sources high first: one of them may sit on a number about
        // to be overwritten (or already be 3, where dup2 would be a no-op
        // that keeps close-on-exec).
        let dn = libc::fcntl(c.devnull, libc::F_DUPFD_CLOEXEC, 2000);
        let lg = libc::fcntl(c.log, libc::F_DUPFD_CLOEXEC, 2000);
        let hf = libc::fcntl(c.handoff, libc::F_DUPFD_CLOEXEC, 2000);
        if dn < 0
            || lg < 0
            || hf < 0
            || libc::dup2(dn, 0) < 0
            || libc::dup2(lg, 1) < 0
            || libc::dup2(lg, 2) < 0
            || libc::dup2(dn, 3) < 0
            || libc::dup2(dn, 193) < 0
            || libc::dup3(hf, HANDOFF_FD as i32, libc::O_CLOEXEC) < 0
        {
            give_up(h, 7);
        }
        let h = HANDOFF_FD as i32;
        if libc::syscall(libc::SYS_close_range, 4u32, 192u32, 0u32) < 0
            || libc::syscall(libc::SYS_close_range, 194u32, HANDOFF_FD - 1, 0u32) < 0
            || libc::syscall(libc::SYS_close_range, HANDOFF_FD + 1, u32::MAX, 0u32) < 0
        {
            give_up(h, 7);
        }
        // Descriptors: 1,024 (the usual soft limit), whatever the shell
        // that started the checker said, so that a node's EMFILE comes
        // where it comes on every run (set once the descriptors above it
        // are closed: F_DUPFD above the limit fails).
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max.min(1024);
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            give_up(h, 5);
        }
        // Every signal at its default disposition and none blocked, as
        // for a program started by a shell of its own: `execve` keeps
        // ignored signals ignored and the mask as it is, and the checker
        // may have been started by anything (a background job ignores
        // SIGQUIT, `nohup` SIGHUP). Raw calls: libc's `signal` would
        // refuse its own reserved ones.
        // The kernel's `struct sigaction` (handler, flags, restorer, mask),
        // all zero: SIG_DFL.
        let default = [0u64; 4];
        for sig in 1..=64 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(libc::SYS_rt_sigaction, sig, &default, std::ptr::null::<u64>(), 8);
            }
        }
        let none: libc::sigset_t = std::mem::zeroed();
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &none, std::ptr::null::<libc::sigset_t>(), 8);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            give_up(h, 8);
        }
        // From here on, no notified call but the execve (see the module doc).
        let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER
            | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
            | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        let listener = libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &c.prog);
        if listener < 0 {
            give_up(h, 9);
        }
        // One byte 0 and one SCM_RIGHTS descriptor: the listener.
        let mut byte = [0u8; 8];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: byte.len() };
        let mut cmsg = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as usize;
        let cm = libc::CMSG_FIRSTHDR(&msg);
        (*cm).cmsg_level = libc::SOL_SOCKET;
        (*cm).cmsg_type = libc::SCM_RIGHTS;
        (*cm).cmsg_len = libc::CMSG_LEN(4) as usize;
        (libc::CMSG_DATA(cm) as *mut i32).write_unaligned(listener as i32);
        if libc::sendmsg(h, &msg, 0) != byte.len() as isize {
            give_up(h, 10);
        }
        // The listener is close-on-exec: the exec takes it away (a close
        // here would be a notified call).
        libc::execve(c.path, c.argv, c.envp);
        give_up(h, 11)
    }
}

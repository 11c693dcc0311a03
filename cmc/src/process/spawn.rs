//! Starting one node: `clone(CLONE_VM | CLONE_VFORK)`, a child that makes
//! only raw system calls on memory the parent prepared, the seccomp filter
//! installed before `execve`, and the listener handed back over a socket.
//!
//! Why this shape (research, pitfalls 5, 8, 9, 10, 21, 24):
//! - `fork()` of a large checker costs O(its RSS) (59 ms per node at 1 GiB);
//!   a vfork-style clone costs the same at any size. Rust's `Command` with
//!   `pre_exec` forces `fork()`, so the child is written by hand here.
//! - Between installing the filter and `execve` the child may make no
//!   notified call: the parent is suspended until the exec, so nobody could
//!   answer. The listener therefore goes back by `sendmsg` on
//!   [`filter::HANDOFF_FD`], which the filter exempts, and `execve` itself is
//!   not notified.
//! - `PR_SET_PDEATHSIG(SIGKILL)` makes the kernel kill the node when the
//!   spawning thread dies, so no node outlives the checker, also when it
//!   panics or is killed. The death signal is tied to the spawning *thread*:
//!   a [`super::Supervisor`] must stay on the thread that created it.
//! - ASLR off (`personality`), no core files, `RLIMIT_STACK` fixed at 8 MiB (unlimited
//!   switches the mmap layout), the same argv, envp and cwd byte for byte:
//!   the same addresses on every run.
//! - fds: 0 is `/dev/null`, 1 and 2 the node's log, 3 and 193 `/dev/null`
//!   placeholders so that the kernel never hands those numbers out (the
//!   supervisor answers every call on them), everything else closed.
//!
//! This module does not decide anything about the world: it returns a
//! running process, its pidfd and its listener, or the step that failed.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;
use nix::libc;

use super::filter::HANDOFF_FD;

/// What the child needs, prepared by the parent: the child may not
/// allocate, so every pointer here is to memory that outlives the spawn.
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
    msg: libc::msghdr,
    iov: libc::iovec,
    byte: u8,
    cmsg: [u64; 4],
    fd_slot: *mut i32,
    /// Written by the child before it gives up: the step and its errno.
    failed_step: i32,
    failed_errno: i32,
}

/// The steps of the child, for error messages.
const STEPS: [&str; 12] = [
    "none",
    "checking the parent",
    "setting the death signal",
    "pinning to a CPU",
    "turning ASLR off",
    "setting RLIMIT_STACK and RLIMIT_CORE",
    "changing directory",
    "setting up file descriptors",
    "setting no_new_privs",
    "installing the seccomp filter",
    "handing the listener over",
    "execve",
];

/// What to start.
pub struct Spec<'a> {
    pub path: &'a CStr,
    pub argv: &'a [CString],
    pub envp: &'a [CString],
    pub cwd: &'a CStr,
    pub filter: &'a [libc::sock_filter],
    pub devnull: BorrowedFd<'a>,
    pub log: BorrowedFd<'a>,
    /// The child end of the hand-off socket pair.
    pub handoff_child: BorrowedFd<'a>,
    /// The parent end, read after the spawn.
    pub handoff_parent: BorrowedFd<'a>,
    pub cpu: Option<usize>,
}

/// A started node.
pub struct Spawned {
    pub pid: i32,
    pub pidfd: OwnedFd,
    pub listener: OwnedFd,
}

/// A spawn that failed: the step and the error.
#[derive(Debug)]
pub struct SpawnError {
    pub step: &'static str,
    pub errno: Errno,
}

const STACK_BYTES: usize = 64 * 1024;

/// Starts `spec`. Must be called from the thread that will own the node
/// (the death signal follows it).
pub fn spawn(spec: &Spec<'_>) -> Result<Spawned, SpawnError> {
    let fail = |step: usize| SpawnError { step: STEPS[step], errno: Errno::last() };
    let argv: Vec<*const libc::c_char> =
        spec.argv.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Vec<*const libc::c_char> =
        spec.envp.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let mut stack = vec![0u8; STACK_BYTES];
    let mut child: Box<Child> = Box::new(unsafe { std::mem::zeroed() });
    child.path = spec.path.as_ptr();
    child.argv = argv.as_ptr();
    child.envp = envp.as_ptr();
    child.cwd = spec.cwd.as_ptr();
    child.prog = libc::sock_fprog { len: spec.filter.len() as u16, filter: spec.filter.as_ptr() as *mut _ };
    child.devnull = spec.devnull.as_raw_fd();
    child.log = spec.log.as_raw_fd();
    child.handoff = spec.handoff_child.as_raw_fd();
    child.cpu = spec.cpu.map_or(-1, |c| c as i32);
    child.ppid = unsafe { libc::getpid() };
    // The hand-off message: one byte and one SCM_RIGHTS descriptor, whose
    // slot the child fills with its listener.
    child.iov = libc::iovec { iov_base: (&mut child.byte as *mut u8).cast(), iov_len: 1 };
    child.msg.msg_iov = &mut child.iov;
    child.msg.msg_iovlen = 1;
    child.msg.msg_control = child.cmsg.as_mut_ptr().cast();
    child.msg.msg_controllen = unsafe { libc::CMSG_SPACE(4) } as usize;
    unsafe {
        let cm = libc::CMSG_FIRSTHDR(&child.msg);
        (*cm).cmsg_level = libc::SOL_SOCKET;
        (*cm).cmsg_type = libc::SCM_RIGHTS;
        (*cm).cmsg_len = libc::CMSG_LEN(4) as usize;
        child.fd_slot = libc::CMSG_DATA(cm) as *mut i32;
    }

    // Block every signal across the clone, so that no handler of the
    // checker runs on the child's stack in shared memory (as posix_spawn).
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut child.old_mask);
    }
    let top = unsafe { stack.as_mut_ptr().add(STACK_BYTES) } as usize & !15;
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&mut *child as *mut Child).cast(),
        )
    };
    let clone_errno = Errno::last();
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &child.old_mask, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(SpawnError { step: "clone", errno: clone_errno });
    }
    // The child has exec'd or exited. Take the listener first, even if exec
    // failed afterwards, so that no stale message is left for the next spawn.
    let listener = recv_listener(spec.handoff_parent);
    if child.failed_step != 0 {
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(SpawnError { step: STEPS[child.failed_step as usize], errno: Errno::from_raw(child.failed_errno) });
    }
    let listener = match listener {
        Some(l) => l,
        None => {
            kill_and_reap(pid);
            return Err(SpawnError { step: "receiving the listener", errno: Errno::last() });
        }
    };
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        let e = fail(0);
        kill_and_reap(pid);
        return Err(SpawnError { step: "pidfd_open", errno: e.errno });
    }
    Ok(Spawned { pid, pidfd: unsafe { OwnedFd::from_raw_fd(pidfd as i32) }, listener })
}

fn kill_and_reap(pid: i32) {
    let mut status = 0;
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
    }
}

fn recv_listener(sock: BorrowedFd<'_>) -> Option<OwnedFd> {
    let mut byte = 0u8;
    let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
    let mut cmsg = [0u64; 4];
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg);
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if n < 1 {
        return None;
    }
    unsafe {
        let cm = libc::CMSG_FIRSTHDR(&msg);
        if cm.is_null() || (*cm).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = (libc::CMSG_DATA(cm) as *const i32).read_unaligned();
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// The child. Runs on its own stack in the parent's memory while the parent
/// is suspended: raw system calls only, no allocation, no locks, no return.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    let c = unsafe { &mut *(arg as *mut Child) };
    let give_up = |c: &mut Child, step: i32| -> ! {
        c.failed_errno = Errno::last_raw();
        c.failed_step = step;
        unsafe { libc::_exit(127) }
    };
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            give_up(c, 2);
        }
        // The parent may have died before the death signal was set.
        if libc::getppid() != c.ppid {
            give_up(c, 1);
        }
        if c.cpu >= 0 {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(c.cpu as usize, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                give_up(c, 3);
            }
        }
        let persona = libc::personality(0xffff_ffff);
        if persona < 0 || libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) < 0 {
            give_up(c, 4);
        }
        let mut lim: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_STACK, &mut lim);
        let want = 8 << 20;
        lim.rlim_cur = if lim.rlim_max == libc::RLIM_INFINITY { want } else { lim.rlim_max.min(want) };
        if libc::setrlimit(libc::RLIMIT_STACK, &lim) != 0 {
            give_up(c, 5);
        }
        // No core files: a node killed by its own signal is a finding the
        // checker reports, and every one would otherwise leave a core in
        // the node's directory.
        let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::setrlimit(libc::RLIMIT_CORE, &none) != 0 {
            give_up(c, 5);
        }
        if libc::chdir(c.cwd) != 0 {
            give_up(c, 6);
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
            || libc::syscall(libc::SYS_close_range, 4u32, 192u32, 0u32) < 0
            || libc::syscall(libc::SYS_close_range, 194u32, HANDOFF_FD - 1, 0u32) < 0
            || libc::syscall(libc::SYS_close_range, HANDOFF_FD + 1, u32::MAX, 0u32) < 0
        {
            give_up(c, 7);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::pthread_sigmask(libc::SIG_SETMASK, &c.old_mask, std::ptr::null_mut());
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            give_up(c, 8);
        }
        // From here on, no notified call until execve (see the module doc).
        let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER
            | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
            | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        let listener = libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &c.prog);
        if listener < 0 {
            give_up(c, 9);
        }
        c.fd_slot.write_unaligned(listener as i32);
        if libc::sendmsg(HANDOFF_FD as i32, &c.msg, 0) != 1 {
            give_up(c, 10);
        }
        libc::execve(c.path, c.argv, c.envp);
        give_up(c, 11)
    }
}

//! The system calls a node makes, answered: `table` gives every number
//! one of three groups (default-deny, as shadow's handler table): *passed
//! through* (the filter lets it reach the kernel unnotified, with a sentence
//! on why that is harmless), *modelled* (notified, and answered by the one
//! `match` in [`Supervisor::handle`]: from the world, or by letting it run
//! where the handler has seen it is harmless), *refused* (an error naming
//! the node and the call, with the table's reason). Before the start stub's
//! hello, in the template, a second, smaller table,
//! [`Supervisor::before_hello`], lets only the stub's own set-up run.
//!
//! The handlers live in a file of their family: `connections` (sockets,
//! connections, non-blocking I/O and the records on fds 3 and 193), `local`
//! (pipes, socketpairs and eventfds inside a node), `poll` (`poll`,
//! `select`, epoll), `files` (descriptors: open, close, dup, fcntl, ioctl,
//! lseek, stat, transfers; what may be opened of `/proc`, `/sys` and
//! `/dev`; the calls that would change the file system, which are
//! refused), `host` (the machine's files, devices and the node's stdin,
//! stdout and stderr, in the world), `paths` (a node's paths, resolved as
//! the kernel resolves them for it), `time` (the logical clock, sleeps, and
//! the machine's other time figures), `timers` (timerfds), `disk` (the data
//! directory's files), `random` (the nodes' random streams), `processes`
//! (virtual pids and process groups, signals to oneself, limits, mappings,
//! the traps of the stub and the preload); `buffers` reads and writes a
//! call's buffers in the target's memory. This module owns the dispatch and
//! what is shared by the families; it does not send answers, wait for
//! events or carry out actions (that is the supervisor), and it starts no
//! process.

mod buffers;
mod connections;
mod disk;
mod files;
mod host;
mod local;
mod paths;
mod poll;
mod processes;
mod random;
mod readiness;
mod ready_list;
mod socket_timeouts;
pub(super) mod table;
mod threads;
mod time;
mod timers;

pub use connections::EPHEMERAL_BASE;
pub use processes::VIRTUAL_PID_BASE;
pub use random::random_stream;
pub use time::EPOCH_BASE;

pub(super) use files::CHANGE_FILES;
pub(super) use paths::Resolved;
pub(super) use poll::IN;
pub(super) use ready_list::READABLE;

use std::os::fd::AsFd;

use nix::libc;

use files::{on_fcntl, on_ioctl, on_lseek, on_mmsg};
use processes::{
    on_affinity, on_futex, on_getpid, on_madvise, on_personality, on_prctl, on_process_group, on_rlimit, on_uname,
};
use time::{on_clock_getres, on_getcpu, on_getrusage};

use super::filter::SNAPSHOT_SIGNAL;
use super::notif::{self, Notif};
use super::supervisor::Supervisor;
use super::world::{Blocked, VFd};
use super::{ProcessError, syscalls};

/// The preload's handshake (`cmc-preload`'s `HELLO_*`; kept in step by the
/// test that starts a node with the preload). The start stub's uses the
/// same request with its own magic (`start::protocol`).
const HELLO_REQUEST: u64 = 0x434d_4301;
const HELLO_MAGIC: u64 = 0x6f6c_6568_2d63_6d63;
const HELLO_VERSION: u32 = 4;
const HELLO_BYTES: usize = 40;
/// The `ioctl` on fd 3 a template parks in (the start stub's
/// `PARK_REQUEST`).
pub(super) const PARK_REQUEST: u64 = super::start::protocol::PARK_REQUEST;

/// Calls that ask about a file (its status, whether it exists, a
/// directory's names) or make it durable: notified (the filter), since the
/// data directory's files are the world's (`disk`), and let run on any
/// other file, before the preload's hello as after.
pub(super) const FILE_QUERIES: &[i64] = &[
    libc::SYS_fstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_access,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_getdents64,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_syncfs,
    libc::SYS_sync,
    libc::SYS_stat,
    libc::SYS_lstat,
    libc::SYS_readlink,
    libc::SYS_readlinkat,
];

/// Calls on descriptors that ld.so and libc make on files and the log
/// before the preload's hello.
const FILE_CALLS: &[i64] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_close,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_lseek,
    libc::SYS_fcntl,
    libc::SYS_ioctl,
    libc::SYS_dup,
];

/// Calls that would change the machine outside the file system (its name,
/// clock, kernel, keyrings, mounts made by descriptor), or read state of it
/// that no world holds (the kernel log, performance counters): each is
/// refused, before the preload's hello as after. A node may run as root,
/// and then each would work.
pub(super) const MACHINE: &[i64] = &[
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_quotactl_fd,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_syslog,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_fanotify_init,
    libc::SYS_vhangup,
];

fn refuse_machine(n: u8, c: &Notif) -> Result<Answer, ProcessError> {
    refuse(n, c, "it would change the machine, or read its state, outside the world (a node may run as root)")
}

/// What to do with a notification.
#[derive(Debug)]
pub(super) enum Answer {
    Val(i64),
    Err(i32),
    Continue,
    Hold(Blocked),
    /// Already answered (by ADDFD with SEND), or the node is gone.
    Done,
    /// The preload's hello, accepted (answered 0).
    Hello,
}

/// The calls of sockets only: on any other descriptor, ENOTSOCK.
const SOCKET_CALLS: &[i64] = &[
    libc::SYS_bind,
    libc::SYS_connect,
    libc::SYS_listen,
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_shutdown,
    libc::SYS_getsockopt,
    libc::SYS_setsockopt,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_sendmmsg,
    libc::SYS_recvmmsg,
];

/// `AUDIT_ARCH_X86_64`: the only calling convention a node may use.
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// The bit of an x32 system call's number.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The refusal of a call made through another ABI than x86-64's: `int
/// 0x80` (i386 numbers, which name other calls) or the x32 ABI. The filter
/// notifies them rather than killing the node, which would read as a
/// violation of `no_node_killed_by_a_signal`.
fn foreign_abi(n: u8, c: &Notif) -> Option<ProcessError> {
    let call = if c.arch != AUDIT_ARCH_X86_64 {
        format!("i386 system call {} (int 0x80, architecture {:#x})", c.nr, c.arch)
    } else if c.nr & X32_SYSCALL_BIT != 0 {
        format!("x32 system call {}", c.nr & !X32_SYSCALL_BIT)
    } else {
        return None;
    };
    Some(ProcessError::Unmodelled { node: n, call, detail: "only the x86-64 system call ABI is modelled".to_string() })
}

/// The refusal of a call the checker does not model.
fn refuse(n: u8, c: &Notif, detail: &str) -> Result<Answer, ProcessError> {
    Err(ProcessError::Unmodelled { node: n, call: syscalls::describe(c.nr), detail: detail.to_string() })
}

/// The refusal of a call no target may make.
fn forbid(n: u8, c: &Notif, what: &'static str) -> Result<Answer, ProcessError> {
    Err(ProcessError::Forbidden { node: n, what, call: syscalls::describe(c.nr) })
}

impl Supervisor {
    /// The table: what node `n`'s call `c` gets.
    pub(super) fn handle(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if let Some(refused) = foreign_abi(n, c) {
            return Err(refused);
        }
        let fd = c.args[0] as i32;
        let vfd = self.world.nodes[n as usize].fds.get(&fd).copied();
        if SOCKET_CALLS.contains(&c.nr)
            && vfd.is_some_and(|v| !matches!(v, VFd::Socket { .. } | VFd::Conn { .. } | VFd::Pair { .. }))
        {
            return Ok(Answer::Err(libc::ENOTSOCK));
        }
        match c.nr {
            // Modelled: answered from the world. On a descriptor the checker
            // does not own (a file) most of them run.
            libc::SYS_read | libc::SYS_readv | libc::SYS_recvfrom | libc::SYS_recvmsg => self.on_read(n, c, vfd),
            libc::SYS_write | libc::SYS_writev | libc::SYS_sendto | libc::SYS_sendmsg => self.on_write(n, c, vfd),
            libc::SYS_pread64
            | libc::SYS_pwrite64
            | libc::SYS_preadv
            | libc::SYS_pwritev
            | libc::SYS_preadv2
            | libc::SYS_pwritev2 => self.on_positional(n, c, vfd),
            libc::SYS_socket => self.on_socket(n, c),
            // Objects inside one node, in the world (`local`).
            libc::SYS_pipe | libc::SYS_pipe2 => self.on_pipe(n, c),
            libc::SYS_socketpair => self.on_socketpair(n, c),
            libc::SYS_eventfd | libc::SYS_eventfd2 => self.on_eventfd(n, c),
            libc::SYS_bind
            | libc::SYS_connect
            | libc::SYS_listen
            | libc::SYS_accept
            | libc::SYS_accept4
            | libc::SYS_shutdown
            | libc::SYS_setsockopt
            | libc::SYS_getsockopt
            | libc::SYS_getsockname
            | libc::SYS_getpeername
                if matches!(vfd, Some(VFd::Pair { .. })) =>
            {
                self.on_pair_call(n, c, vfd)
            }
            libc::SYS_bind | libc::SYS_connect | libc::SYS_listen | libc::SYS_accept | libc::SYS_accept4 => {
                self.on_socket_call(n, c, vfd)
            }
            libc::SYS_shutdown => self.on_shutdown(n, c, vfd),
            libc::SYS_setsockopt => match self.on_socket_option(n, c, vfd)? {
                Some(answer) => Ok(answer),
                None => self.on_setsockopt(n, c, vfd),
            },
            libc::SYS_getsockopt => {
                Ok(self.get_socket_timeout(n, c, vfd).unwrap_or_else(|| self.on_getsockopt(n, c, vfd)))
            }
            libc::SYS_getsockname | libc::SYS_getpeername => Ok(self.on_sockname(n, c, vfd)),
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => self.on_open(n, c),
            nr if CHANGE_FILES.contains(&nr) => self.on_file_system(n, c),
            libc::SYS_close => {
                self.check_waited_on(n, c, fd..=fd)?;
                self.on_data_close(n, vfd)?;
                self.check_watched_duplicate(n, c, fd, vfd)?;
                Ok(self.on_close(n, fd, vfd))
            }
            libc::SYS_ioctl if fd == 3 && c.args[1] == HELLO_REQUEST => self.on_preload_hello(n, c),
            // What a connection's end has received, observed without
            // waiting: held while more may arrive first.
            libc::SYS_ioctl
                if c.args[1] == libc::FIONREAD
                    && let Some(VFd::Conn { label, side }) = vfd
                    && let Some(hold) = self.look_now(n, fd, label, side, connections::Look::Bytes) =>
            {
                Ok(hold)
            }
            libc::SYS_ioctl => on_ioctl(&mut self.world, n, c, vfd),
            libc::SYS_fcntl
                if matches!(c.args[1] as i32, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC)
                    && vfd.is_some_and(|v| {
                        files::shared_flags(v) || matches!(v, VFd::Epoll { .. }) || v.local_id().is_some()
                    }) =>
            {
                self.dup_shared(n, c, fd, c.args[2] as i32, c.args[1] as i32 == libc::F_DUPFD_CLOEXEC)
            }
            libc::SYS_fcntl => on_fcntl(&mut self.world.nodes[n as usize], n, c, vfd),
            libc::SYS_lseek if matches!(vfd, Some(VFd::File { .. } | VFd::Dir { .. })) => self.seek_file(n, c, fd),
            libc::SYS_lseek if matches!(vfd, Some(VFd::Host { .. })) => Ok(self.seek_host(n, c, fd)),
            libc::SYS_lseek => Ok(on_lseek(vfd)),
            libc::SYS_fsync | libc::SYS_fdatasync | libc::SYS_syncfs | libc::SYS_sync => self.on_sync(n, c, vfd),
            libc::SYS_fstat | libc::SYS_newfstatat | libc::SYS_statx | libc::SYS_stat | libc::SYS_lstat => {
                self.on_stat(n, c)
            }
            libc::SYS_readlink | libc::SYS_readlinkat => self.on_readlink(n, c),
            libc::SYS_access | libc::SYS_faccessat | libc::SYS_faccessat2 => self.on_access(n, c),
            libc::SYS_getdents64 if matches!(vfd, Some(VFd::Host { .. })) => {
                if paths::of_fd(c.pid, fd).starts_with("/proc") {
                    return refuse(n, c, "listing a directory of /proc would show real pids and inode numbers");
                }
                Ok(self.list_host(n, c, fd))
            }
            libc::SYS_getdents64 => self.on_getdents(n, c, vfd),
            libc::SYS_clock_gettime => self.on_clock_gettime(n, c),
            libc::SYS_gettimeofday => self.on_gettimeofday(n, c),
            libc::SYS_time => Ok(self.on_time(c)),
            libc::SYS_times => Ok(self.on_times(c)),
            libc::SYS_sysinfo => Ok(self.on_sysinfo(c)),
            libc::SYS_getrusage => Ok(on_getrusage(c)),
            libc::SYS_getcpu => Ok(on_getcpu(c, self.cpu.unwrap_or(0) as u32)),
            libc::SYS_adjtimex | libc::SYS_clock_adjtime => self.on_adjtimex(n, c),
            libc::SYS_getrandom => Ok(self.on_getrandom(n, c)),
            libc::SYS_gettid | libc::SYS_set_tid_address => {
                Ok(Answer::Val(self.tid(n, self.world.nodes[n as usize].slot())))
            }
            libc::SYS_getpid | libc::SYS_getppid => Ok(on_getpid(self.world.pid(n), c)),
            libc::SYS_kill | libc::SYS_tkill | libc::SYS_tgkill => self.on_kill(n, c),
            libc::SYS_dup2 | libc::SYS_dup3 if c.args[0] != c.args[1] => {
                let to = c.args[1] as i32;
                self.check_waited_on(n, c, to..=to)?;
                self.on_dup(n, c, vfd)
            }
            libc::SYS_dup | libc::SYS_dup2 | libc::SYS_dup3 => self.on_dup(n, c, vfd),
            libc::SYS_close_range => {
                let (first, last) = (c.args[0] as u32, c.args[1] as u32);
                self.check_waited_on(n, c, first.min(i32::MAX as u32) as i32..=last.min(i32::MAX as u32) as i32)?;
                self.on_close_range(n, c)
            }
            libc::SYS_sendfile | libc::SYS_splice | libc::SYS_tee | libc::SYS_vmsplice | libc::SYS_copy_file_range => {
                self.on_transfer(n, c)
            }
            libc::SYS_sendmmsg | libc::SYS_recvmmsg => on_mmsg(n, c, vfd),
            libc::SYS_mmap => self.on_mmap(n, c),
            libc::SYS_madvise => on_madvise(n, c),
            libc::SYS_fchdir | libc::SYS_fadvise64 | libc::SYS_readahead | libc::SYS_sync_file_range => {
                self.on_file_hint(n, c, vfd)
            }
            libc::SYS_epoll_ctl => self.on_epoll_ctl(n, c),
            libc::SYS_poll | libc::SYS_ppoll => self.on_poll(n, c),
            libc::SYS_nanosleep => self.on_nanosleep(c),
            libc::SYS_clock_nanosleep => self.on_clock_nanosleep(c),
            libc::SYS_clock_getres => Ok(on_clock_getres(self.world.pid(n), c)),
            // Waiting for a signal: none comes to a node but its own.
            libc::SYS_pause | libc::SYS_rt_sigsuspend => Ok(Answer::Hold(Blocked::Pause)),
            // The end of the process, which the supervisor sees.
            libc::SYS_exit_group => {
                if let Some(p) = self.procs[n as usize].as_mut() {
                    p.exiting.set(true);
                }
                Ok(Answer::Continue)
            }
            libc::SYS_select | libc::SYS_pselect6 => self.on_select(n, c),
            libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => self.on_epoll_wait(n, c),
            libc::SYS_epoll_create | libc::SYS_epoll_create1 => self.on_epoll_create(n, c),
            libc::SYS_timerfd_create => self.on_timerfd_create(n, c),
            libc::SYS_timerfd_settime | libc::SYS_timerfd_gettime => self.on_timerfd_time(n, c),
            // The process as the node's: a daemon with a virtual pid, its
            // own session and group, fixed limits, one CPU, a fixed name.
            libc::SYS_getpgrp | libc::SYS_getpgid | libc::SYS_getsid | libc::SYS_setpgid | libc::SYS_setsid => {
                Ok(on_process_group(self.world.pid(n), c))
            }
            libc::SYS_uname => Ok(on_uname(c)),
            libc::SYS_personality => on_personality(n, c),
            libc::SYS_setrlimit | libc::SYS_prlimit64 => on_rlimit(n, self.world.pid(n), c),
            libc::SYS_sched_getaffinity | libc::SYS_sched_setaffinity => {
                // Asked of the process or of one of its threads.
                let threads = self.world.nodes[n as usize].threads.len();
                let me = (1..threads).map(|k| self.tid(n, k)).find(|&t| t == c.args[0] as i32 as i64);
                on_affinity(n, me.unwrap_or(self.world.pid(n)), c, self.cpu.unwrap_or(0) as u32)
            }
            libc::SYS_sched_getparam
            | libc::SYS_sched_getscheduler
            | libc::SYS_sched_getattr
            | libc::SYS_sched_rr_get_interval
            | libc::SYS_getpriority
            | libc::SYS_ioprio_get => self.on_sched_query(n, c),
            libc::SYS_capget => self.on_capget(n, c),
            libc::SYS_chdir => self.on_chdir(n, c),
            libc::SYS_futex if !self.world.nodes[n as usize].threads.is_empty() => self.on_thread_futex(n, c),
            libc::SYS_futex => on_futex(n, c, self.futex_call(c)),
            // Restartable sequences would show the CPU the node runs on in
            // its memory: a kernel without them answers ENOSYS.
            libc::SYS_rseq => Ok(Answer::Err(libc::ENOSYS)),
            // Only the snapshot signal's and SIGSEGV's `rt_sigaction`, and a
            // number that is no signal, are notified.
            libc::SYS_rt_sigaction => self.on_rt_sigaction(n, c),
            // Only `arch_prctl(ARCH_SET_CPUID)` that lifts CPUID faulting,
            // and options the table does not pass.
            libc::SYS_arch_prctl => self.on_arch_prctl(n, c),
            // Only the options the table does not pass.
            libc::SYS_prctl => on_prctl(n, c, self.greeted[n as usize]),
            libc::SYS_seccomp => forbid(n, c, "a seccomp filter (it would be compiled for every life)"),
            libc::SYS_execve | libc::SYS_execveat => forbid(n, c, "exec"),
            libc::SYS_clone | libc::SYS_clone3 => self.on_clone(n, c),
            libc::SYS_fork | libc::SYS_vfork => forbid(n, c, "a child process"),
            libc::SYS_sched_yield => Ok(self.on_yield(n)),
            // The robust list of the running thread, which the kernel reads
            // when it ends; notified to hold a new thread at its first call.
            libc::SYS_set_robust_list => Ok(self.on_set_robust_list(n, c)),
            // Everything else: refused, with the table's reason (default-deny).
            nr => match table::group(nr) {
                table::Group::Refused(why) => refuse(n, c, why),
                table::Group::Passed(_) => Ok(Answer::Continue),
                table::Group::Modelled => refuse(n, c, "a call the table models but no handler answers"),
            },
        }
    }

    /// The start stub's hello, before it parks as the node's template:
    /// every trap it sets must be set (`rdtsc`, the SIGSEGV handler that
    /// emulates it and `cpuid`, the snapshot signal's handler) and the vDSO
    /// gone, or the program would read real time.
    fn on_stub_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        use super::start::protocol::{HELLO_MAGIC as STUB_MAGIC, HELLO_VERSION as STUB_VERSION, Hello};
        let failed = |detail: String| Err(ProcessError::StartFailed { node: n, detail });
        let size = std::mem::size_of::<Hello>();
        let Some(b) = notif::read_mem(c.pid, c.args[2], size) else { return failed("said an unreadable hello".into()) };
        let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default());
        let u64_at = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default());
        if u64_at(0) != STUB_MAGIC || u32_at(8) != STUB_VERSION || u32_at(12) as usize != size {
            return failed(format!("said a hello of another version ({:#x}, {})", u64_at(0), u32_at(8)));
        }
        // tsc_trapped, segv_handler, snapshot_signal, vdso_removed.
        if u32_at(16) == 0 || u32_at(24) == 0 {
            return failed("could not make rdtsc fault into its handler: the node would read real time".into());
        }
        if u32_at(28) != SNAPSHOT_SIGNAL as u32 {
            return failed(format!("could not install its handler of signal {SNAPSHOT_SIGNAL}"));
        }
        if u32_at(32) == 0 {
            return failed("could not remove the vDSO: the node would read real time without a system call".into());
        }
        self.cpuid_gates[n as usize][0] = u64_at(40);
        self.thread_slots[n as usize] = u64_at(64);
        Ok(Answer::Hello)
    }

    /// The preload's hello, in every life, before the program's `main`:
    /// it has taken SIGSEGV over from the stub, and its `cpuid` gate is the
    /// second one allowed.
    fn on_preload_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let missing = |detail: String| Err(ProcessError::MissingPreload { node: n, detail });
        let Some(b) = notif::read_mem(c.pid, c.args[2], HELLO_BYTES) else {
            return missing("unreadable hello".to_string());
        };
        let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default());
        let u64_at = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default());
        if u64_at(0) != HELLO_MAGIC || u32_at(8) != HELLO_VERSION {
            return missing(format!("a hello of another version ({:#x}, {})", u64_at(0), u32_at(8)));
        }
        if u32_at(12) == 0 {
            return missing("it could not make rdtsc fault into its handler".to_string());
        }
        self.cpuid_gates[n as usize][1] = u64_at(32);
        self.greeted[n as usize] = true;
        Ok(Answer::Val(0))
    }

    /// Before the start stub's hello only its own set-up may pass (its
    /// handlers, its traps, reading its maps to remove the vDSO).
    pub(super) fn before_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let missing = |detail: String| Err(ProcessError::MissingPreload { node: n, detail });
        match c.nr {
            libc::SYS_ioctl if fd == 3 && c.args[1] == HELLO_REQUEST => self.on_stub_hello(n, c),
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => self.on_open_before_hello(n, c),
            nr if CHANGE_FILES.contains(&nr) => self.on_file_system(n, c),
            nr if MACHINE.contains(&nr) => refuse_machine(n, c),
            // The preload installs its handlers (of the snapshot signal and
            // SIGSEGV) and its rdtsc trap before its hello.
            libc::SYS_rt_sigaction => Ok(Answer::Continue),
            libc::SYS_exit_group => Ok(Answer::Continue),
            libc::SYS_prctl => on_prctl(n, c, self.greeted[n as usize]),
            libc::SYS_arch_prctl => self.on_arch_prctl(n, c),
            // ld.so's and libc's own start-up I/O on files and the log.
            nr if (FILE_CALLS.contains(&nr) || FILE_QUERIES.contains(&nr)) && fd != 3 && fd != 193 => {
                Ok(Answer::Continue)
            }
            // The process's own set-up, answered as after the hello: a
            // library's mappings, the thread's id, limits, and the rest
            // that reads no time, entropy or world.
            libc::SYS_mmap
            | libc::SYS_madvise
            | libc::SYS_set_tid_address
            | libc::SYS_rseq
            | libc::SYS_prlimit64
            | libc::SYS_setrlimit
            | libc::SYS_futex
            | libc::SYS_getpid
            | libc::SYS_gettid
            | libc::SYS_getppid
            | libc::SYS_uname
            | libc::SYS_personality
            | libc::SYS_set_robust_list
            | libc::SYS_sched_getaffinity => self.handle(n, c),
            nr if foreign_abi(n, c).is_some() || matches!(table::group(nr), table::Group::Refused(_)) => {
                self.handle(n, c)
            }
            nr => missing(format!("{} before the preload's hello", syscalls::describe(nr))),
        }
    }

    /// Whether the checker answers for node `n`'s descriptor `fd`: a
    /// connection, a socket, `/dev/urandom`, or fd 3 or 193. A descriptor it
    /// does not own is a file, and a CONTINUE runs the call on it: the fd
    /// table cannot change in between, as a target has one thread (a second
    /// is an error) and that thread waits in the call being answered.
    fn owns(&self, n: u8, fd: i32) -> bool {
        fd == 3 || fd == 193 || self.world.nodes[n as usize].fds.contains_key(&fd)
    }

    /// Installs a placeholder in node `n` and completes its call with the
    /// new descriptor's number. `None` when the node is gone, or when it has
    /// no descriptor free (at its `RLIMIT_NOFILE`, or the machine's limit):
    /// its call then fails with EMFILE or ENFILE, as on Linux, which takes
    /// the descriptor before anything else. So a caller changes the world
    /// only once this has given a descriptor.
    fn add_fd(&mut self, n: u8, c: &Notif, cloexec: bool) -> Result<Option<i32>, ProcessError> {
        // A description of its own: nothing a node does to one placeholder
        // reaches another node's, or another of its own.
        let devnull = super::lives::open_devnull().map_err(|errno| ProcessError::NodeSys {
            node: n,
            call: "open /dev/null",
            errno,
        })?;
        self.add_fd_of(n, c, devnull.as_fd(), cloexec)
    }

    /// [`Self::add_fd`] of the checker's descriptor `src`: the node's new
    /// descriptor shares its open file description.
    fn add_fd_of(
        &mut self,
        n: u8,
        c: &Notif,
        src: std::os::fd::BorrowedFd<'_>,
        cloexec: bool,
    ) -> Result<Option<i32>, ProcessError> {
        let (Some(_), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
            return Ok(None);
        };
        let listener = t.listener.as_fd();
        match notif::add_fd_and_return(listener, c.id, src, cloexec) {
            Ok(fd) => Ok(fd),
            Err(errno @ (nix::errno::Errno::EMFILE | nix::errno::Errno::ENFILE)) => {
                notif::respond(listener, c.id, 0, errno as i32).map_err(|errno| ProcessError::NodeSys {
                    node: n,
                    call: "NOTIF_SEND",
                    errno,
                })?;
                Ok(None)
            }
            Err(errno) => Err(ProcessError::NodeSys { node: n, call: "NOTIF_ADDFD", errno }),
        }
    }
}

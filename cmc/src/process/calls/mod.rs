//! The table of system calls: every call the filter notifies is answered by
//! the one `match` in [`Supervisor::handle`], each number in one of three
//! groups, as in shadow's syscall handler. *Modelled*: the checker answers
//! from the world (on a descriptor it does not own, a file, the call runs).
//! *Passed through*: the call runs once shown harmless (it touches no
//! descriptor the checker owns and no memory a fork would share), and is
//! refused otherwise. *Refused*: an error naming the node and the call.
//! Before the preload's hello a second, smaller table,
//! [`Supervisor::before_hello`], lets only ld.so's own file I/O pass.
//!
//! The handlers live in a file of their family: `connections` (sockets,
//! connections, non-blocking I/O and the records on fds 3 and 193), `poll`
//! (`poll` and `ppoll`), `files` (descriptors:
//! open, close, dup, fcntl, ioctl, lseek, transfers; the calls that would
//! change the file system, which are refused), `paths` (a node's paths,
//! resolved as the kernel resolves them for it), `time` (the logical
//! clock, sleeps, and the machine's other time figures), `timers`
//! (timerfds), `disk` (the data directory's files), `random` (the nodes'
//! random streams), `processes` (virtual pids, signals to oneself, shared
//! mappings, the preload's traps); `buffers` reads and writes a call's
//! buffers in the target's memory. This module owns the dispatch and what
//! is shared by the families; it does not send answers, wait for events or
//! carry out actions (that is the supervisor), and it starts no process.

mod buffers;
mod connections;
mod disk;
mod files;
mod paths;
mod poll;
mod processes;
mod random;
mod time;
mod timers;

pub use connections::EPHEMERAL_BASE;
pub use processes::VIRTUAL_PID_BASE;
pub use random::random_stream;
pub use time::EPOCH_BASE;

pub(super) use files::CHANGE_FILES;
pub(super) use poll::IN;

use std::os::fd::AsFd;

use nix::libc;

use connections::{on_getsockopt, on_shutdown};
use files::{on_fcntl, on_ioctl, on_lseek, on_mmsg};
use processes::{on_getpid, on_mmap, on_prctl, on_rt_sigaction};
use time::{on_getcpu, on_getrusage};

use super::filter::SNAPSHOT_SIGNAL;
use super::notif::{self, Notif};
use super::supervisor::Supervisor;
use super::world::{Blocked, VFd};
use super::{ProcessError, syscalls};

/// The preload's handshake (`cmc-preload`'s `HELLO_*`; kept in step by the
/// test that starts a node with the preload).
const HELLO_REQUEST: u64 = 0x434d_4301;
const HELLO_MAGIC: u64 = 0x6f6c_6568_2d63_6d63;
const HELLO_VERSION: u32 = 3;
const HELLO_BYTES: usize = 48;
/// The `ioctl` on fd 3 a template parks in (`cmc-preload`'s `PARK_REQUEST`).
pub(super) const PARK_REQUEST: u64 = 0x434d_4302;

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
        let fd = c.args[0] as i32;
        let vfd = self.world.nodes[n as usize].fds.get(&fd).copied();
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
            libc::SYS_bind | libc::SYS_connect | libc::SYS_listen | libc::SYS_accept | libc::SYS_accept4 => {
                self.on_socket_call(n, c, vfd)
            }
            libc::SYS_shutdown => Ok(on_shutdown(vfd)),
            libc::SYS_setsockopt => self.on_setsockopt(n, c, vfd),
            libc::SYS_getsockopt => Ok(on_getsockopt(c, vfd)),
            libc::SYS_getsockname | libc::SYS_getpeername => Ok(self.on_sockname(n, c, vfd)),
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => self.on_open(n, c),
            nr if CHANGE_FILES.contains(&nr) => self.on_file_system(n, c),
            libc::SYS_close => Ok(self.on_close(n, fd, vfd)),
            libc::SYS_ioctl => on_ioctl(&mut self.world, n, c, vfd),
            libc::SYS_fcntl => on_fcntl(&mut self.world.nodes[n as usize].nonblock, n, c, vfd),
            libc::SYS_lseek if matches!(vfd, Some(VFd::File { .. } | VFd::Dir { .. })) => self.seek_file(n, c, fd),
            libc::SYS_lseek => Ok(on_lseek(vfd)),
            libc::SYS_fsync | libc::SYS_fdatasync | libc::SYS_syncfs | libc::SYS_sync => Ok(self.on_sync(n, c, vfd)),
            libc::SYS_fstat | libc::SYS_newfstatat | libc::SYS_statx | libc::SYS_stat | libc::SYS_lstat => {
                Ok(self.on_stat(n, c))
            }
            libc::SYS_readlink | libc::SYS_readlinkat => Ok(self.on_readlink(n, c)),
            libc::SYS_access | libc::SYS_faccessat | libc::SYS_faccessat2 => Ok(self.on_access(n, c)),
            libc::SYS_getdents64 => Ok(self.on_getdents(n, c, vfd)),
            libc::SYS_clock_gettime => Ok(self.on_clock_gettime(c)),
            libc::SYS_gettimeofday => Ok(self.on_gettimeofday(c)),
            libc::SYS_time => Ok(self.on_time(c)),
            libc::SYS_times => Ok(self.on_times(c)),
            libc::SYS_sysinfo => Ok(self.on_sysinfo(c)),
            libc::SYS_getrusage => Ok(on_getrusage(c)),
            libc::SYS_getcpu => Ok(on_getcpu(c)),
            libc::SYS_adjtimex | libc::SYS_clock_adjtime => self.on_adjtimex(n, c),
            libc::SYS_getrandom => Ok(self.on_getrandom(n, c)),
            libc::SYS_getpid | libc::SYS_gettid | libc::SYS_getppid => Ok(on_getpid(n, c)),
            libc::SYS_kill | libc::SYS_tkill | libc::SYS_tgkill => self.on_kill(n, c),
            // Passed through once shown harmless: they run unless they touch a
            // descriptor the checker owns or memory a fork would share.
            libc::SYS_dup | libc::SYS_dup2 | libc::SYS_dup3 => self.on_dup(n, c, vfd),
            libc::SYS_close_range => self.on_close_range(n, c),
            libc::SYS_sendfile | libc::SYS_splice | libc::SYS_tee | libc::SYS_vmsplice | libc::SYS_copy_file_range => {
                self.on_transfer(n, c)
            }
            libc::SYS_sendmmsg | libc::SYS_recvmmsg => on_mmsg(n, c, vfd),
            libc::SYS_mmap => on_mmap(n, c),
            // Refused: an error naming the node and the call.
            libc::SYS_epoll_ctl => self.on_epoll_ctl(n, c),
            libc::SYS_socketpair => refuse(n, c, "only AF_INET stream sockets through socket() are modelled"),
            libc::SYS_poll | libc::SYS_ppoll => self.on_poll(n, c),
            libc::SYS_nanosleep => self.on_nanosleep(c),
            libc::SYS_clock_nanosleep => self.on_clock_nanosleep(c),
            libc::SYS_pause => Ok(Answer::Hold(Blocked::Pause)),
            libc::SYS_select | libc::SYS_pselect6 => self.on_select(n, c),
            libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => self.on_epoll_wait(n, c),
            libc::SYS_epoll_create | libc::SYS_epoll_create1 => self.on_epoll_create(n, c),
            libc::SYS_timerfd_create => self.on_timerfd_create(n, c),
            libc::SYS_timerfd_settime | libc::SYS_timerfd_gettime => self.on_timerfd_time(n, c),
            libc::SYS_alarm | libc::SYS_setitimer | libc::SYS_timer_create => refuse(
                n,
                c,
                "signal timers are not modelled: use a timerfd, a sleep or a poll's timeout, and TIMEOUT fires",
            ),
            libc::SYS_io_uring_setup | libc::SYS_io_setup => {
                refuse(n, c, "asynchronous I/O is not modelled: its reads and writes would bypass the checker")
            }
            libc::SYS_rt_sigqueueinfo
            | libc::SYS_rt_tgsigqueueinfo
            | libc::SYS_pidfd_open
            | libc::SYS_pidfd_send_signal => refuse(n, c, "queued signals and pidfds are not modelled"),
            // Only the snapshot signal's and SIGSEGV's `rt_sigaction` are
            // notified.
            libc::SYS_rt_sigaction => on_rt_sigaction(n, c),
            // Only `arch_prctl(ARCH_SET_CPUID)` that lifts CPUID faulting.
            libc::SYS_arch_prctl => self.on_arch_prctl(n, c),
            // Only `MADV_WIPEONFORK` and `MADV_DONTFORK` are notified.
            libc::SYS_madvise => {
                refuse(n, c, "MADV_WIPEONFORK and MADV_DONTFORK make memory differ between forks of a node")
            }
            libc::SYS_memfd_create
            | libc::SYS_shmget
            | libc::SYS_shmat
            | libc::SYS_msgget
            | libc::SYS_semget
            | libc::SYS_mq_open
            | libc::SYS_shmctl
            | libc::SYS_shmdt
            | libc::SYS_msgsnd
            | libc::SYS_msgrcv
            | libc::SYS_msgctl
            | libc::SYS_semop
            | libc::SYS_semtimedop
            | libc::SYS_semctl
            | libc::SYS_mq_unlink
            | libc::SYS_mq_timedsend
            | libc::SYS_mq_timedreceive
            | libc::SYS_mq_notify
            | libc::SYS_mq_getsetattr
            | libc::SYS_memfd_secret => {
                refuse(n, c, "shared memory, message queues and semaphores would hold state outside the world")
            }
            libc::SYS_ptrace
            | libc::SYS_process_vm_readv
            | libc::SYS_process_vm_writev
            | libc::SYS_pidfd_getfd
            | libc::SYS_kcmp
            | libc::SYS_process_madvise
            | libc::SYS_process_mrelease => refuse(
                n,
                c,
                "reaching another process (a sibling life, a snapshot, the checker) is state outside the world",
            ),
            // Only `prctl(PR_SET_SECCOMP)` and `prctl(PR_SET_TSC)`.
            libc::SYS_prctl => on_prctl(n, c),
            libc::SYS_seccomp => forbid(n, c, "a seccomp filter (it would be compiled for every life)"),
            nr if MACHINE.contains(&nr) => refuse_machine(n, c),
            libc::SYS_open_by_handle_at => {
                refuse(n, c, "opening a file by handle would bypass the path the checker resolves: open it by its path")
            }
            libc::SYS_flock => {
                refuse(n, c, "file locks are kernel state the lives of a node would share, outside the world")
            }
            libc::SYS_execve | libc::SYS_execveat => forbid(n, c, "exec"),
            libc::SYS_clone | libc::SYS_clone3 | libc::SYS_fork | libc::SYS_vfork => {
                forbid(n, c, "a thread or a child process")
            }
            // The filter notifies nothing else.
            _ => Ok(Answer::Continue),
        }
    }

    /// Before the preload's hello only ld.so's own file I/O may pass: any
    /// modelled call means the preload is not there.
    pub(super) fn before_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let missing = |detail: String| Err(ProcessError::MissingPreload { node: n, detail });
        match c.nr {
            libc::SYS_ioctl if fd == 3 && c.args[1] == HELLO_REQUEST => {
                let Some(b) = notif::read_mem(c.pid, c.args[2], HELLO_BYTES) else {
                    return missing("unreadable hello".to_string());
                };
                let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default());
                let magic = u64::from_ne_bytes(b[0..8].try_into().unwrap_or_default());
                if magic != HELLO_MAGIC || u32_at(8) != HELLO_VERSION {
                    return missing(format!("a hello of another version ({magic:#x}, {})", u32_at(8)));
                }
                let (found, patched) = (u32_at(12), u32_at(16));
                if found != patched || found & 7 != 7 {
                    return Err(ProcessError::VdsoUnpatched { node: n, found, patched });
                }
                if u32_at(24) != SNAPSHOT_SIGNAL as u32 {
                    return missing(format!("the preload could not install its handler of signal {SNAPSHOT_SIGNAL}"));
                }
                self.cpuid_gates[n as usize] = u64::from_ne_bytes(b[40..48].try_into().unwrap_or_default());
                Ok(Answer::Hello)
            }
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => self.on_open_before_hello(n, c),
            nr if CHANGE_FILES.contains(&nr) => self.on_file_system(n, c),
            nr if MACHINE.contains(&nr) => refuse_machine(n, c),
            // The preload installs its handlers (of the snapshot signal and
            // SIGSEGV) and its rdtsc trap before its hello.
            libc::SYS_rt_sigaction => Ok(Answer::Continue),
            libc::SYS_prctl => on_prctl(n, c),
            libc::SYS_arch_prctl => self.on_arch_prctl(n, c),
            // ld.so's and libc's own start-up I/O on files and the log.
            nr if (FILE_CALLS.contains(&nr) || FILE_QUERIES.contains(&nr)) && fd != 3 && fd != 193 => {
                Ok(Answer::Continue)
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
    /// new descriptor's number. `None` when the node is gone.
    fn add_fd(&mut self, n: u8, c: &Notif, cloexec: bool) -> Result<Option<i32>, ProcessError> {
        let (Some(_), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
            return Ok(None);
        };
        notif::add_fd_and_return(t.listener.as_fd(), c.id, self.devnull.as_fd(), cloexec)
            .map_err(|errno| ProcessError::NodeSys { node: n, call: "NOTIF_ADDFD", errno })
    }
}

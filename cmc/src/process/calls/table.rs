//! The groups: every x86-64 system call number in exactly one of three,
//! default-deny (shadow's handler table, gVisor's "implement it or
//! ENOSYS"; `../shared/STYLE.md`).
//!
//! - **Passed through**: the filter lets the call reach the kernel without
//!   a notification. Each has a sentence saying why that is harmless: it
//!   takes no descriptor (a descriptor may be one of the checker's
//!   placeholders, which the kernel would answer for wrongly), and what it
//!   reads or changes is the process's own, copied by `fork` as it is, and
//!   the same on every run; or it is passed only for the arguments named in
//!   [`PASSED_WHEN`], and notified for all others.
//! - **Modelled**: notified, and answered by a handler of the supervisor's
//!   table (`calls::Supervisor::handle`): from the world, or by running it
//!   once the handler has seen it is harmless there (a read of an ordinary
//!   file, say).
//! - **Refused**: notified, and an error naming the node and the call, with
//!   the reason here.
//!
//! A number this table does not know (above [`NR_MAX`], or a gap) is
//! refused; so is a call of another architecture (`int 0x80`) or of the
//! x32 ABI, which the filter notifies too rather than killing the node (a
//! kill would read as a violation of `no_node_killed_by_a_signal`).
//!
//! This module is data: the filter (`filter::program`) and the dispatch
//! read it, and so do the tests that check every number is in one group.

use nix::libc;

/// The highest number the table classifies (Linux 6.18's last is 470).
/// Everything above is refused.
pub const NR_MAX: i64 = 511;

/// What happens to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Reaches the kernel unnotified, for the reason given.
    Passed(&'static str),
    /// Notified and answered by the supervisor's handlers.
    Modelled,
    /// Notified and refused, for the reason given.
    Refused(&'static str),
}

/// A comparison of one argument, for [`PASSED_WHEN`].
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// The argument equals the value.
    Eq(u8, u64),
    /// The argument, masked, equals the value.
    Masked(u8, u64, u64),
}

/// Modelled calls that the filter passes through for some arguments: each
/// rule is a conjunction, and a call matching none is notified and
/// answered by its handler (which refuses what it does not allow).
pub fn passed_when() -> Vec<(i64, Vec<Arg>, &'static str)> {
    let mut rules: Vec<(i64, Vec<Arg>, &'static str)> =
        PASSED_WHEN.iter().map(|&(nr, args, why)| (nr, args.to_vec(), why)).collect();
    // rt_sigaction: every signal but the two the checker keeps (the
    // snapshot signal, and SIGSEGV, whose handler emulates rdtsc and
    // cpuid); a number that is no signal is notified, and the kernel's
    // EINVAL is let through.
    for signal in 1..=64u64 {
        if signal != libc::SIGSEGV as u64 && signal != super::super::filter::SNAPSHOT_SIGNAL as u64 {
            rules.push((libc::SYS_rt_sigaction, vec![Arg::Eq(0, signal)], SIGNALS));
        }
    }
    rules
}

const PASSED_WHEN: &[(i64, &[Arg], &str)] = &[
    (
        libc::SYS_mmap,
        &[Arg::Masked(
            3,
            MAP_SHARING | libc::MAP_ANONYMOUS as u64,
            libc::MAP_PRIVATE as u64 | libc::MAP_ANONYMOUS as u64,
        )],
        "private anonymous memory is the process's own, copied by fork",
    ),
    // madvise: every advice that changes no content a fork would see
    // differently; MADV_FREE (contents kept or zeroed, as memory pressure
    // decides), MADV_DONTFORK, MADV_DOFORK, MADV_WIPEONFORK and the
    // poisoning advices are notified.
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_NORMAL as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_RANDOM as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_SEQUENTIAL as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_WILLNEED as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_DONTNEED as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_MERGEABLE as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_UNMERGEABLE as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_HUGEPAGE as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_NOHUGEPAGE as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_DONTDUMP as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, libc::MADV_DODUMP as u64)], MADVISE),
    (libc::SYS_madvise, &[Arg::Eq(2, 19)], MADVISE),  // MADV_KEEPONFORK
    (libc::SYS_madvise, &[Arg::Eq(2, 20)], MADVISE),  // MADV_COLD
    (libc::SYS_madvise, &[Arg::Eq(2, 21)], MADVISE),  // MADV_PAGEOUT
    (libc::SYS_madvise, &[Arg::Eq(2, 22)], MADVISE),  // MADV_POPULATE_READ
    (libc::SYS_madvise, &[Arg::Eq(2, 23)], MADVISE),  // MADV_POPULATE_WRITE
    (libc::SYS_madvise, &[Arg::Eq(2, 24)], MADVISE),  // MADV_DONTNEED_LOCKED
    (libc::SYS_madvise, &[Arg::Eq(2, 25)], MADVISE),  // MADV_COLLAPSE
    (libc::SYS_madvise, &[Arg::Eq(2, 102)], MADVISE), // MADV_GUARD_INSTALL
    (libc::SYS_madvise, &[Arg::Eq(2, 103)], MADVISE), // MADV_GUARD_REMOVE
    // prctl: the options that read the process, or change what fork copies.
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_SET_PDEATHSIG as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_GET_DUMPABLE as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_GET_KEEPCAPS as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_SET_NAME as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_GET_NAME as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_CAPBSET_READ as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_GET_THP_DISABLE as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, libc::PR_SET_THP_DISABLE as u64)], PRCTL),
    (libc::SYS_prctl, &[Arg::Eq(0, PR_SET_VMA)], PRCTL),
    // arch_prctl: the thread pointer and the CPU's extended state, which
    // ld.so and libc set up; cpuid faulting may be kept on. Lifting it, and
    // mapping a vDSO, are notified.
    // The calls that read a process's scheduling, of the process itself
    // (pid 0): the same on every run. Another pid is notified.
    (libc::SYS_sched_getparam, &[Arg::Eq(0, 0)], SCHED_READ),
    (libc::SYS_sched_getscheduler, &[Arg::Eq(0, 0)], SCHED_READ),
    (libc::SYS_sched_getattr, &[Arg::Eq(0, 0)], SCHED_READ),
    (libc::SYS_sched_rr_get_interval, &[Arg::Eq(0, 0)], SCHED_READ),
    (libc::SYS_getpriority, &[Arg::Eq(0, 0), Arg::Eq(1, 0)], SCHED_READ), // PRIO_PROCESS, itself
    (libc::SYS_ioprio_get, &[Arg::Eq(0, 1), Arg::Eq(1, 0)], SCHED_READ),  // IOPRIO_WHO_PROCESS, itself
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1001)], ARCH_PRCTL),            // ARCH_SET_GS
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1002)], ARCH_PRCTL),            // ARCH_SET_FS
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1003)], ARCH_PRCTL),            // ARCH_GET_FS
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1004)], ARCH_PRCTL),            // ARCH_GET_GS
    // CPUID faulting set again by the stub or the preload (the form only
    // they use); a program's own ARCH_SET_CPUID, and ARCH_GET_CPUID, which
    // would read the preload's setting as the program's, are notified.
    (libc::SYS_arch_prctl, &[Arg::Eq(0, ARCH_SET_CPUID), Arg::Eq(1, 0), Arg::Eq(2, CPUID_REARM)], ARCH_PRCTL),
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1021)], ARCH_PRCTL), // ARCH_GET_XCOMP_SUPP
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1022)], ARCH_PRCTL), // ARCH_GET_XCOMP_PERM
    (libc::SYS_arch_prctl, &[Arg::Eq(0, 0x1023)], ARCH_PRCTL), // ARCH_REQ_XCOMP_PERM
];

/// `MAP_SHARED | MAP_PRIVATE` (`MAP_SHARED_VALIDATE` is both).
const MAP_SHARING: u64 = 0x3;

/// `prctl(PR_SET_VMA, ...)`: names an anonymous mapping.
const PR_SET_VMA: u64 = 0x5356_4d41;

/// `arch_prctl(ARCH_SET_CPUID, ...)` (the filter's).
pub const ARCH_SET_CPUID: u64 = super::super::filter::ARCH_SET_CPUID;

/// `arch_prctl(ARCH_GET_CPUID)`.
pub const ARCH_GET_CPUID: u64 = 0x1011;

/// The stub's and the preload's mark on their `ARCH_SET_CPUID, 0`.
const CPUID_REARM: u64 = super::super::start::protocol::CPUID_REARM;

const MADVISE: &str = "advice about the process's own memory that changes nothing a fork would see differently";
const PRCTL: &str = "the process's own name, death signal, and figures that are the same on every run, copied by fork";
const ARCH_PRCTL: &str = "the thread pointer and the CPU's extended state, the process's own, copied by fork";

const MEMORY: &str = "the process's own memory, copied by fork (no shared mapping can be made)";
const SIGNALS: &str = "the process's own signal state (mask, handlers' return, alternate stack), copied by fork";
const CHECKERS: &str = "the user and group the checker runs as, the same on every run";
const SCHED_READ: &str = "scheduling figures of the process, the same on every run";
const NO_CHILD: &str = "a node has no child (a fork is refused), so it reads ECHILD on every run";
const EXIT: &str = "the end of the process, which the supervisor sees";

const KERNEL_OBJECT: &str = "it makes a kernel object outside the world, which a snapshot and its forks would share";
const IPC: &str = "shared memory, message queues and semaphores would hold state outside the world";
const OTHER_PROCESS: &str =
    "reaching another process (a sibling life, a snapshot, the checker) is state outside the world";
const CREDENTIALS: &str =
    "changing the node's credentials or capabilities (the checker would lose sight of its memory)";
const SCHEDULING: &str =
    "changing how the node is scheduled (a real-time node could starve the checker, which shares its CPU)";
const MEMORY_LOCKS: &str = "memory locks are not inherited by fork: a snapshot's forks would not hold them";
const NUMA: &str = "memory placement on the machine's NUMA nodes is the machine's";
const RESIDENCY: &str = "which pages are resident is the machine's memory pressure, different on every run";
const FS_FIGURES: &str = "the file system's figures (free blocks, files) are the machine's, different on every run";
const NAMESPACES: &str = "namespaces are the machine's";
const OBSOLETE: &str = "an obsolete or unimplemented call";
const XATTRS: &str = "extended attributes are not modelled";
const SIGNAL_WAIT: &str = "waiting for a signal is not modelled (no signal comes from outside a node)";
const TIMERS: &str = "signal timers are not modelled: use a timerfd, a sleep or a poll's timeout, and TIMEOUT fires";
const ASYNC_IO: &str = "asynchronous I/O is not modelled: its reads and writes would bypass the checker";
const MACHINE: &str = "it would change the machine, or read its state, outside the world (a node may run as root)";
const LDT: &str = "segment descriptors of the node's own are not modelled";

/// The group of call `nr` (x86-64).
pub fn group(nr: i64) -> Group {
    use Group::{Modelled, Passed, Refused};
    match nr {
        // Memory and the program break.
        libc::SYS_brk
        | libc::SYS_munmap
        | libc::SYS_mprotect
        | libc::SYS_mremap
        | libc::SYS_msync
        | libc::SYS_pkey_mprotect
        | libc::SYS_pkey_alloc
        | libc::SYS_pkey_free => Passed(MEMORY),
        libc::SYS_membarrier => {
            Passed("a memory barrier across the threads of a process, whose threads run one at a time (`threads`)")
        }
        // Signals.
        libc::SYS_rt_sigprocmask | libc::SYS_rt_sigreturn | libc::SYS_sigaltstack => Passed(SIGNALS),
        libc::SYS_rt_sigpending => {
            Passed("the signals pending for the process, which are none at a snapshot (a blocked self-signal is refused)")
        }
        // Scheduling, read.
        libc::SYS_sched_get_priority_max | libc::SYS_sched_get_priority_min => Passed(SCHED_READ),
        // Who the checker runs as.
        libc::SYS_getuid
        | libc::SYS_getgid
        | libc::SYS_geteuid
        | libc::SYS_getegid
        | libc::SYS_getresuid
        | libc::SYS_getresgid
        | libc::SYS_getgroups => Passed(CHECKERS),
        libc::SYS_getrlimit => Passed("the process's resource limits, fixed by the checker at its start, copied by fork"),
        libc::SYS_getitimer => Passed("no interval timer can be set (setitimer and alarm are refused): zeros on every run"),
        libc::SYS_umask => Passed("the file mode mask, fixed by the checker at the node's start, copied by fork"),
        libc::SYS_getcwd => {
            Passed("the working directory, the process's own, copied by fork (chdir into /proc is refused)")
        }
        libc::SYS_restart_syscall => Passed("the kernel's restart of a call interrupted by a signal"),
        libc::SYS_wait4 | libc::SYS_waitid => Passed(NO_CHILD),
        libc::SYS_exit => Passed(EXIT),

        // Modelled: the handlers of `calls`.
        libc::SYS_read
        | libc::SYS_write
        | libc::SYS_close
        | libc::SYS_readv
        | libc::SYS_writev
        | libc::SYS_pread64
        | libc::SYS_pwrite64
        | libc::SYS_preadv
        | libc::SYS_pwritev
        | libc::SYS_preadv2
        | libc::SYS_pwritev2
        | libc::SYS_lseek
        | libc::SYS_fcntl
        | libc::SYS_ioctl
        | libc::SYS_dup
        | libc::SYS_dup2
        | libc::SYS_dup3
        | libc::SYS_close_range
        | libc::SYS_socket
        | libc::SYS_bind
        | libc::SYS_listen
        | libc::SYS_accept
        | libc::SYS_accept4
        | libc::SYS_connect
        | libc::SYS_shutdown
        | libc::SYS_getsockopt
        | libc::SYS_setsockopt
        | libc::SYS_getsockname
        | libc::SYS_getpeername
        | libc::SYS_sendto
        | libc::SYS_recvfrom
        | libc::SYS_sendmsg
        | libc::SYS_recvmsg
        | libc::SYS_sendmmsg
        | libc::SYS_recvmmsg
        | libc::SYS_sendfile
        | libc::SYS_splice
        | libc::SYS_tee
        | libc::SYS_vmsplice
        | libc::SYS_copy_file_range
        | libc::SYS_poll
        | libc::SYS_ppoll
        | libc::SYS_select
        | libc::SYS_pselect6
        | libc::SYS_epoll_create
        | libc::SYS_epoll_create1
        | libc::SYS_epoll_ctl
        | libc::SYS_epoll_wait
        | libc::SYS_epoll_pwait
        | libc::SYS_epoll_pwait2
        | libc::SYS_timerfd_create
        | libc::SYS_timerfd_settime
        | libc::SYS_timerfd_gettime
        // Objects inside one node, in the world (`calls::local`).
        | libc::SYS_pipe
        | libc::SYS_pipe2
        | libc::SYS_eventfd
        | libc::SYS_eventfd2
        | libc::SYS_socketpair
        | libc::SYS_open
        | libc::SYS_openat
        | libc::SYS_openat2
        | libc::SYS_creat
        | libc::SYS_fstat
        | libc::SYS_newfstatat
        | libc::SYS_statx
        | libc::SYS_stat
        | libc::SYS_lstat
        | libc::SYS_access
        | libc::SYS_faccessat
        | libc::SYS_faccessat2
        | libc::SYS_readlink
        | libc::SYS_readlinkat
        | libc::SYS_getdents64
        | libc::SYS_fsync
        | libc::SYS_fdatasync
        | libc::SYS_syncfs
        | libc::SYS_sync
        | libc::SYS_fchdir
        | libc::SYS_fadvise64
        | libc::SYS_readahead
        | libc::SYS_sync_file_range
        | libc::SYS_mmap
        | libc::SYS_madvise
        | libc::SYS_clock_gettime
        | libc::SYS_clock_getres
        | libc::SYS_gettimeofday
        | libc::SYS_time
        | libc::SYS_times
        | libc::SYS_sysinfo
        | libc::SYS_getrusage
        | libc::SYS_getcpu
        | libc::SYS_adjtimex
        | libc::SYS_clock_adjtime
        | libc::SYS_nanosleep
        | libc::SYS_clock_nanosleep
        | libc::SYS_pause
        | libc::SYS_rt_sigsuspend
        | libc::SYS_getrandom
        | libc::SYS_getpid
        | libc::SYS_getppid
        | libc::SYS_gettid
        | libc::SYS_set_tid_address
        | libc::SYS_getpgrp
        | libc::SYS_getpgid
        | libc::SYS_getsid
        | libc::SYS_setpgid
        | libc::SYS_setsid
        | libc::SYS_kill
        | libc::SYS_tkill
        | libc::SYS_tgkill
        | libc::SYS_rt_sigaction
        | libc::SYS_prctl
        | libc::SYS_arch_prctl
        | libc::SYS_uname
        | libc::SYS_personality
        | libc::SYS_setrlimit
        | libc::SYS_prlimit64
        | libc::SYS_sched_getaffinity
        | libc::SYS_sched_setaffinity
        | libc::SYS_futex
        | libc::SYS_sched_yield
        | libc::SYS_set_robust_list
        | libc::SYS_rseq
        | libc::SYS_chdir
        | libc::SYS_capget
        | libc::SYS_sched_getparam
        | libc::SYS_sched_getscheduler
        | libc::SYS_sched_getattr
        | libc::SYS_sched_rr_get_interval
        | libc::SYS_getpriority
        | libc::SYS_ioprio_get
        // Forks are the checker's (the fork server's clone is let through
        // while it makes one); the rest refused in the handler.
        | libc::SYS_clone
        | libc::SYS_clone3
        | libc::SYS_fork
        | libc::SYS_vfork
        | libc::SYS_execve
        | libc::SYS_execveat
        | libc::SYS_seccomp
        // Notified so that a crash may fall between a node's last effect
        // and its exit (a crash point); then it runs. `exit` stays passed:
        // glibc's `_exit` falls back to it when `exit_group` fails, so a
        // process whose checker has gone (every notified call fails with
        // ENOSYS) still ends.
        | libc::SYS_exit_group => Modelled,
        nr if super::CHANGE_FILES.contains(&nr) => Modelled,

        // Refused.
        libc::SYS_signalfd
        | libc::SYS_signalfd4
        | libc::SYS_inotify_init
        | libc::SYS_inotify_init1
        | libc::SYS_inotify_add_watch
        | libc::SYS_inotify_rm_watch
        | libc::SYS_userfaultfd
        | libc::SYS_fanotify_init
        | libc::SYS_fanotify_mark
        | libc::SYS_memfd_create
        | libc::SYS_memfd_secret
        | libc::SYS_pidfd_open
        | libc::SYS_landlock_create_ruleset
        | libc::SYS_landlock_add_rule
        | libc::SYS_landlock_restrict_self
        | libc::SYS_open_by_handle_at
        | libc::SYS_name_to_handle_at => Refused(KERNEL_OBJECT),
        libc::SYS_flock => Refused("file locks are kernel state the lives of a node would share, outside the world"),
        libc::SYS_shmget
        | libc::SYS_shmat
        | libc::SYS_shmctl
        | libc::SYS_shmdt
        | libc::SYS_msgget
        | libc::SYS_msgsnd
        | libc::SYS_msgrcv
        | libc::SYS_msgctl
        | libc::SYS_semget
        | libc::SYS_semop
        | libc::SYS_semtimedop
        | libc::SYS_semctl
        | libc::SYS_mq_open
        | libc::SYS_mq_unlink
        | libc::SYS_mq_timedsend
        | libc::SYS_mq_timedreceive
        | libc::SYS_mq_notify
        | libc::SYS_mq_getsetattr => Refused(IPC),
        libc::SYS_ptrace
        | libc::SYS_process_vm_readv
        | libc::SYS_process_vm_writev
        | libc::SYS_pidfd_getfd
        | libc::SYS_pidfd_send_signal
        | libc::SYS_kcmp
        | libc::SYS_process_madvise
        | libc::SYS_process_mrelease
        | libc::SYS_get_robust_list
        | libc::SYS_rt_sigqueueinfo
        | libc::SYS_rt_tgsigqueueinfo => Refused(OTHER_PROCESS),
        libc::SYS_setuid
        | libc::SYS_setgid
        | libc::SYS_setreuid
        | libc::SYS_setregid
        | libc::SYS_setresuid
        | libc::SYS_setresgid
        | libc::SYS_setfsuid
        | libc::SYS_setfsgid
        | libc::SYS_setgroups
        | libc::SYS_capset => Refused(CREDENTIALS),
        libc::SYS_setpriority
        | libc::SYS_sched_setparam
        | libc::SYS_sched_setscheduler
        | libc::SYS_sched_setattr
        | libc::SYS_ioprio_set => Refused(SCHEDULING),
        libc::SYS_mlock | libc::SYS_mlock2 | libc::SYS_munlock | libc::SYS_mlockall | libc::SYS_munlockall => {
            Refused(MEMORY_LOCKS)
        }
        libc::SYS_mbind
        | libc::SYS_set_mempolicy
        | libc::SYS_get_mempolicy
        | libc::SYS_migrate_pages
        | libc::SYS_move_pages
        | SYS_SET_MEMPOLICY_HOME_NODE => Refused(NUMA),
        libc::SYS_mincore | SYS_CACHESTAT => Refused(RESIDENCY),
        libc::SYS_statfs | libc::SYS_fstatfs | libc::SYS_ustat | libc::SYS_sysfs => Refused(FS_FIGURES),
        libc::SYS_unshare | libc::SYS_setns | SYS_LISTNS => Refused(NAMESPACES),
        libc::SYS_getxattr
        | libc::SYS_lgetxattr
        | libc::SYS_fgetxattr
        | libc::SYS_listxattr
        | libc::SYS_llistxattr
        | libc::SYS_flistxattr
        | SYS_GETXATTRAT
        | SYS_LISTXATTRAT
        | SYS_FILE_GETATTR => Refused(XATTRS),
        libc::SYS_rt_sigtimedwait => Refused(SIGNAL_WAIT),
        libc::SYS_alarm
        | libc::SYS_setitimer
        | libc::SYS_timer_create
        | libc::SYS_timer_settime
        | libc::SYS_timer_gettime
        | libc::SYS_timer_getoverrun
        | libc::SYS_timer_delete => Refused(TIMERS),
        libc::SYS_io_setup
        | libc::SYS_io_destroy
        | libc::SYS_io_getevents
        | libc::SYS_io_submit
        | libc::SYS_io_cancel
        | SYS_IO_PGETEVENTS
        | libc::SYS_io_uring_setup
        | libc::SYS_io_uring_enter
        | libc::SYS_io_uring_register => Refused(ASYNC_IO),
        libc::SYS_futex_waitv | SYS_FUTEX_WAKE | SYS_FUTEX_WAIT | SYS_FUTEX_REQUEUE => {
            Refused("futex2 waits are not modelled")
        }
        libc::SYS_modify_ldt | libc::SYS_set_thread_area | libc::SYS_get_thread_area => Refused(LDT),
        SYS_MAP_SHADOW_STACK => Refused("shadow stacks are not modelled"),
        SYS_MSEAL => Refused("sealed mappings are not modelled"),
        SYS_STATMOUNT | SYS_LISTMOUNT | SYS_OPEN_TREE_ATTR => Refused(MACHINE),
        SYS_LSM_GET_SELF_ATTR | SYS_LSM_SET_SELF_ATTR | SYS_LSM_LIST_MODULES => {
            Refused("security modules' attributes are the machine's")
        }
        nr if super::MACHINE.contains(&nr) => Refused(MACHINE),
        libc::SYS_uselib
        | libc::SYS__sysctl
        | 174
        | 177
        | 178
        | libc::SYS_nfsservctl
        | libc::SYS_getpmsg
        | libc::SYS_putpmsg
        | libc::SYS_afs_syscall
        | libc::SYS_tuxcall
        | libc::SYS_security
        | libc::SYS_vserver
        | libc::SYS_lookup_dcookie
        | libc::SYS_epoll_ctl_old
        | libc::SYS_epoll_wait_old
        | libc::SYS_remap_file_pages
        | libc::SYS_getdents
        | SYS_URETPROBE => Refused(OBSOLETE),
        _ => Refused("a system call the checker does not know"),
    }
}

// Calls newer than the `libc` crate's list.
const SYS_IO_PGETEVENTS: i64 = 333;
const SYS_URETPROBE: i64 = 335;
const SYS_SET_MEMPOLICY_HOME_NODE: i64 = 450;
const SYS_CACHESTAT: i64 = 451;
const SYS_MAP_SHADOW_STACK: i64 = 453;
const SYS_FUTEX_WAKE: i64 = 454;
const SYS_FUTEX_WAIT: i64 = 455;
const SYS_FUTEX_REQUEUE: i64 = 456;
const SYS_STATMOUNT: i64 = 457;
const SYS_LISTMOUNT: i64 = 458;
const SYS_LSM_GET_SELF_ATTR: i64 = 459;
const SYS_LSM_SET_SELF_ATTR: i64 = 460;
const SYS_LSM_LIST_MODULES: i64 = 461;
const SYS_MSEAL: i64 = 462;
const SYS_GETXATTRAT: i64 = 464;
const SYS_LISTXATTRAT: i64 = 465;
const SYS_OPEN_TREE_ATTR: i64 = 467;
const SYS_FILE_GETATTR: i64 = 468;
const SYS_LISTNS: i64 = 470;

/// Every number the filter passes through whatever the arguments.
pub fn passed() -> impl Iterator<Item = i64> {
    (0..=NR_MAX).filter(|&nr| matches!(group(nr), Group::Passed(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_is_in_one_group_and_every_known_call_is_named() {
        for nr in 0..=NR_MAX {
            let g = group(nr);
            if let Group::Passed(why) | Group::Refused(why) = g {
                assert!(why.len() > 10, "{nr}: a reason in a sentence");
            }
            if crate::process::syscalls::name(nr).is_some() {
                assert_ne!(
                    g,
                    Group::Refused("a system call the checker does not know"),
                    "{} ({nr}) is a known call: give it a group",
                    crate::process::syscalls::describe(nr)
                );
            }
        }
    }

    #[test]
    fn conditional_passes_are_of_modelled_calls() {
        for (nr, args, _) in passed_when() {
            assert_eq!(group(nr), Group::Modelled, "{nr}");
            assert!(!args.is_empty());
        }
    }

    #[test]
    fn nothing_that_takes_a_descriptor_is_passed_through() {
        // The calls whose first argument is a descriptor or a directory
        // descriptor, by name: none may reach the kernel unseen, since it
        // may be a placeholder of the checker's.
        let takes_fd = |name: &str| {
            name.starts_with('f')
                || name.ends_with("at")
                || name.ends_with("at2")
                || ["read", "write", "close", "ioctl", "lseek", "mmap", "getdents", "sync_file_range", "readahead"]
                    .iter()
                    .any(|p| name.starts_with(p))
        };
        for nr in passed() {
            let name = crate::process::syscalls::describe(nr);
            let harmless = ["futex", "fork"].iter().any(|h| name == *h);
            assert!(!takes_fd(&name) || harmless, "{name} takes a descriptor and is passed through");
        }
    }
}

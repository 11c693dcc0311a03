//! The seccomp filter every node runs under, built with libseccomp and
//! exported as a classic BPF program before the node's template is spawned
//! (the pre-exec child may not allocate, so it only installs the program it
//! is given).
//!
//! One filter per node and search: the template installs it once before its
//! `execve`, and every life and snapshot of the node is forked from the
//! template and shares it (seccomp filters are reference-counted and
//! inherited by `fork`). Creating and freeing a filter per process start
//! wedged the kernel's BPF allocator on this machine kind
//! (`../shared/research/process-frontend.md`, "the wedge").
//!
//! Policy (research, section 2 and pitfalls 8, 13, 17, 18):
//!
//! - another architecture, or an x32 call, kills the process;
//! - `sendmsg` on [`HANDOFF_FD`] is allowed: it is how the pre-exec child
//!   hands its listener to the supervisor before its `execve`;
//! - the calls in [`NOTIFIED`] are notified whatever their arguments, on
//!   every descriptor, 0 to 2 included: a daemon that closes stdin gets its
//!   next connection on fd 0, and the checker must see every connection,
//!   whatever its number;
//! - `mmap` of a shared mapping, `madvise` that makes memory behave
//!   differently in a fork (`MADV_WIPEONFORK`, `MADV_DONTFORK`) and
//!   `rt_sigaction` of [`SNAPSHOT_SIGNAL`] are notified, so that the
//!   supervisor can refuse what would let a snapshot and its forks share
//!   state outside the world, or take the signal snapshots are made with;
//! - `prctl(PR_SET_TSC)`, `arch_prctl(ARCH_SET_CPUID)` other than to make
//!   `cpuid` fault, and `rt_sigaction` of SIGSEGV are notified, so that the
//!   supervisor can refuse what would undo the preload's traps of `rdtsc`
//!   and `cpuid` (real time, and the CPU's RDRAND and RDSEED);
//! - everything else is allowed.
//!
//! This module only builds the program; `spawn` installs it.

use std::io::{Read, Seek};
use std::os::fd::{FromRawFd, OwnedFd};

use libseccomp::{ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall};
use nix::libc;

/// The descriptor, in the pre-exec child, of the socket that carries the
/// listener to the supervisor.
pub const HANDOFF_FD: u32 = 1021;

/// The signal the supervisor sends a parked process to make it fork
/// (`cmc-preload`'s `SNAPSHOT_SIGNAL`; the hello checks they agree).
pub const SNAPSHOT_SIGNAL: i32 = 63;

/// `arch_prctl(ARCH_SET_CPUID, ...)` (`asm/prctl.h`; not in the `libc`
/// crate).
pub const ARCH_SET_CPUID: u64 = 0x1012;

/// Notified whatever their arguments.
pub const NOTIFIED: &[i64] = &[
    // Descriptors: every call that takes one, whatever its number.
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_close,
    libc::SYS_readv,
    libc::SYS_writev,
    // Positional I/O and seeking: on a file each costs a CONTINUE, on a
    // connection the checker answers ESPIPE as a socket does.
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
    libc::SYS_lseek,
    libc::SYS_fcntl,
    libc::SYS_ioctl,
    libc::SYS_dup,
    libc::SYS_dup2,
    libc::SYS_dup3,
    libc::SYS_close_range,
    libc::SYS_socket,
    libc::SYS_socketpair,
    libc::SYS_bind,
    libc::SYS_listen,
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_connect,
    libc::SYS_shutdown,
    libc::SYS_getsockopt,
    libc::SYS_setsockopt,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_recvmsg,
    libc::SYS_sendmmsg,
    libc::SYS_recvmmsg,
    // Transfers between two descriptors, either of which may be a
    // connection (rare in targets, so notifying them all costs nothing).
    libc::SYS_sendfile,
    libc::SYS_splice,
    libc::SYS_tee,
    libc::SYS_vmsplice,
    libc::SYS_copy_file_range,
    // Asynchronous I/O would reach a connection without a notification.
    libc::SYS_io_uring_setup,
    libc::SYS_io_setup,
    // Time and entropy.
    libc::SYS_clock_gettime,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_times,
    libc::SYS_sysinfo,
    libc::SYS_getrusage,
    libc::SYS_getcpu,
    libc::SYS_adjtimex,
    libc::SYS_clock_adjtime,
    libc::SYS_getrandom,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_create,
    libc::SYS_epoll_create1,
    libc::SYS_pause,
    libc::SYS_alarm,
    libc::SYS_setitimer,
    libc::SYS_timer_create,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_settime,
    libc::SYS_timerfd_gettime,
    // Files: opens (the checker resolves the path and decides), and,
    // through `calls::CHANGE_FILES`, every call that would change the file
    // system, which is read-only to a node.
    libc::SYS_open,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_creat,
    libc::SYS_open_by_handle_at,
    libc::SYS_flock,
    // Processes and signals, which name processes by virtual pids.
    libc::SYS_clone,
    libc::SYS_clone3,
    libc::SYS_fork,
    libc::SYS_vfork,
    libc::SYS_execve,
    libc::SYS_execveat,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    libc::SYS_kill,
    libc::SYS_tkill,
    libc::SYS_tgkill,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
    // Memory a snapshot would share with its forks.
    libc::SYS_memfd_create,
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_msgget,
    libc::SYS_semget,
    libc::SYS_mq_open,
    // Objects of System V IPC and POSIX message queues a node did not make
    // (their ids and names are the machine's): refused like the above.
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
    libc::SYS_memfd_secret,
    // Other processes (sibling lives, snapshots, the supervisor), reached
    // by real pid.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    libc::SYS_process_madvise,
    libc::SYS_process_mrelease,
    // A target's own filter would be compiled for every life.
    libc::SYS_seccomp,
];

/// Every call notified whatever its arguments: [`NOTIFIED`], the calls that
/// change the file system, those that change the machine and those that
/// ask about a file or make it durable (the table's lists,
/// `calls::CHANGE_FILES`, `calls::MACHINE`, `calls::FILE_QUERIES`).
pub fn notified() -> impl Iterator<Item = i64> {
    NOTIFIED
        .iter()
        .chain(super::calls::CHANGE_FILES)
        .chain(super::calls::MACHINE)
        .chain(super::calls::FILE_QUERIES)
        .copied()
}

/// Why the filter could not be built (a libseccomp failure: its version or
/// the system's).
#[derive(Debug, thiserror::Error)]
#[error("building the seccomp filter with libseccomp: {0}")]
pub struct FilterError(String);

fn lib(e: impl std::fmt::Display) -> FilterError {
    FilterError(e.to_string())
}

/// Builds the filter program.
pub fn program() -> Result<Vec<libc::sock_filter>, FilterError> {
    let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).map_err(lib)?;
    // The native architecture only: another one (and x32 on x86-64) takes
    // the bad-architecture action.
    ctx.set_act_badarch(ScmpAction::KillProcess).map_err(lib)?;
    if ScmpArch::native() != ScmpArch::X8664 {
        return Err(FilterError("the process front end runs on x86-64 only".to_string()));
    }
    let notify = ScmpAction::Notify;
    let sys = |nr: i64| ScmpSyscall::from(nr as i32);
    for nr in notified() {
        ctx.add_rule(notify, sys(nr)).map_err(lib)?;
    }
    let arg = |i: u32, op: ScmpCompareOp, v: u64| ScmpArgCompare::new(i, op, v);
    ctx.add_rule_conditional(notify, sys(libc::SYS_sendmsg), &[arg(0, ScmpCompareOp::NotEqual, HANDOFF_FD as u64)])
        .map_err(lib)?;
    let shared = libc::MAP_SHARED as u64;
    ctx.add_rule_conditional(notify, sys(libc::SYS_mmap), &[arg(3, ScmpCompareOp::MaskedEqual(shared), shared)])
        .map_err(lib)?;
    for advice in [libc::MADV_WIPEONFORK, libc::MADV_DONTFORK] {
        ctx.add_rule_conditional(notify, sys(libc::SYS_madvise), &[arg(2, ScmpCompareOp::Equal, advice as u64)])
            .map_err(lib)?;
    }
    for option in [libc::PR_SET_SECCOMP, libc::PR_SET_TSC] {
        ctx.add_rule_conditional(notify, sys(libc::SYS_prctl), &[arg(0, ScmpCompareOp::Equal, option as u64)])
            .map_err(lib)?;
    }
    ctx.add_rule_conditional(
        notify,
        sys(libc::SYS_arch_prctl),
        &[arg(0, ScmpCompareOp::Equal, ARCH_SET_CPUID), arg(1, ScmpCompareOp::NotEqual, 0)],
    )
    .map_err(lib)?;
    for signal in [SNAPSHOT_SIGNAL, libc::SIGSEGV] {
        ctx.add_rule_conditional(notify, sys(libc::SYS_rt_sigaction), &[arg(0, ScmpCompareOp::Equal, signal as u64)])
            .map_err(lib)?;
    }
    export(&ctx)
}

/// The filter as a BPF program: libseccomp writes it to a descriptor, here
/// a memory file.
fn export(ctx: &ScmpFilterContext) -> Result<Vec<libc::sock_filter>, FilterError> {
    let fd = unsafe { libc::memfd_create(c"cmc-filter".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(FilterError(format!("memfd_create: {}", std::io::Error::last_os_error())));
    }
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    ctx.export_bpf(&file).map_err(lib)?;
    let mut bytes = Vec::new();
    file.rewind().and_then(|()| file.read_to_end(&mut bytes)).map_err(lib)?;
    const INSN: usize = std::mem::size_of::<libc::sock_filter>();
    if bytes.is_empty() || bytes.len() % INSN != 0 || bytes.len() / INSN > u16::MAX as usize {
        return Err(FilterError(format!("libseccomp exported {} bytes, not a BPF program", bytes.len())));
    }
    Ok(bytes
        .chunks_exact(INSN)
        .map(|i| libc::sock_filter {
            code: u16::from_ne_bytes([i[0], i[1]]),
            jt: i[2],
            jf: i[3],
            k: u32::from_ne_bytes([i[4], i[5], i[6], i[7]]),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

    /// Runs a classic BPF program on one call, as the kernel would
    /// (`seccomp_data`: nr at 0, arch at 4, instruction pointer at 8, the
    /// six arguments from 16).
    fn run(prog: &[libc::sock_filter], nr: i64, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut a, mut x, mut mem) = (0usize, 0u32, 0u32, [0u32; 16]);
        loop {
            let i = prog[pc];
            pc += 1;
            let code = i.code as u32;
            let src = if code & libc::BPF_X != 0 { x } else { i.k };
            match code & 0x07 {
                libc::BPF_LD => {
                    a = match code & 0xe0 {
                        libc::BPF_ABS => {
                            let k = i.k as usize;
                            u32::from_le_bytes(data[k..k + 4].try_into().unwrap())
                        }
                        libc::BPF_IMM => i.k,
                        libc::BPF_MEM => mem[i.k as usize],
                        m => panic!("load mode {m:#x}"),
                    }
                }
                libc::BPF_LDX => {
                    x = match code & 0xe0 {
                        libc::BPF_IMM => i.k,
                        libc::BPF_MEM => mem[i.k as usize],
                        m => panic!("ldx mode {m:#x}"),
                    }
                }
                libc::BPF_ST => mem[i.k as usize] = a,
                libc::BPF_STX => mem[i.k as usize] = x,
                libc::BPF_ALU => {
                    a = match code & 0xf0 {
                        libc::BPF_ADD => a.wrapping_add(src),
                        libc::BPF_SUB => a.wrapping_sub(src),
                        libc::BPF_AND => a & src,
                        libc::BPF_OR => a | src,
                        libc::BPF_RSH => a >> src,
                        libc::BPF_LSH => a << src,
                        op => panic!("alu op {op:#x}"),
                    }
                }
                libc::BPF_JMP => {
                    let taken = match code & 0xf0 {
                        libc::BPF_JA => {
                            pc += i.k as usize;
                            continue;
                        }
                        libc::BPF_JEQ => a == src,
                        libc::BPF_JGT => a > src,
                        libc::BPF_JGE => a >= src,
                        libc::BPF_JSET => a & src != 0,
                        op => panic!("jump op {op:#x}"),
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                libc::BPF_RET => return if code & 0x18 == libc::BPF_A { a } else { i.k },
                libc::BPF_MISC => {
                    if code & 0xf8 == libc::BPF_TAX {
                        x = a
                    } else {
                        a = x
                    }
                }
                c => panic!("instruction class {c:#x}"),
            }
        }
    }

    #[test]
    fn policy() {
        let p = program().expect("libseccomp builds the filter");
        let x86 = AUDIT_ARCH_X86_64;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let kill = libc::SECCOMP_RET_KILL_PROCESS;
        let a0 = |v: u64| [v, 0, 0, 0, 0, 0];
        assert_eq!(run(&p, libc::SYS_read, x86, a0(0)), notify, "fd 0 may be a connection");
        assert_eq!(run(&p, libc::SYS_write, x86, a0(2)), notify, "fd 2 may be a connection");
        assert_eq!(run(&p, libc::SYS_write, x86, a0(3)), notify, "fd 3 is the state report");
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, a0(HANDOFF_FD as u64)), allow, "the listener hand-off");
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, a0(5)), notify);
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, a0(1)), notify);
        assert_eq!(run(&p, libc::SYS_execve, x86, a0(0)), notify, "exec is the template's start only");
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, libc::MAP_PRIVATE as u64, u64::MAX, 0]), allow);
        let shared_anon = (libc::MAP_SHARED | libc::MAP_ANONYMOUS) as u64;
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, shared_anon, u64::MAX, 0]), notify);
        assert_eq!(run(&p, libc::SYS_madvise, x86, [0, 4096, libc::MADV_DONTNEED as u64, 0, 0, 0]), allow);
        assert_eq!(run(&p, libc::SYS_madvise, x86, [0, 4096, libc::MADV_WIPEONFORK as u64, 0, 0, 0]), notify);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(libc::SIGINT as u64)), allow);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(SNAPSHOT_SIGNAL as u64)), notify);
        assert_eq!(run(&p, libc::SYS_brk, x86, a0(7)), allow);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_NAME as u64)), allow);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_SECCOMP as u64)), notify);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_TSC as u64)), notify);
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [ARCH_SET_CPUID, 0, 0, 0, 0, 0]), allow, "cpuid faults");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [ARCH_SET_CPUID, 1, 0, 0, 0, 0]), notify, "cpuid runs");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [0x1002, 1, 0, 0, 0, 0]), allow);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(libc::SIGSEGV as u64)), notify);
        assert_eq!(run(&p, libc::SYS_rt_sigreturn, x86, a0(0)), allow, "the snapshot handler returns");
        assert_eq!(run(&p, libc::SYS_read, 0x4000_0003, a0(5)), kill, "another architecture");
        assert_eq!(run(&p, 0x4000_0000 | libc::SYS_read, x86, a0(5)), kill, "x32");
        for nr in notified() {
            assert_eq!(run(&p, nr, x86, a0(0)), notify, "{nr}");
            assert_eq!(run(&p, nr, x86, a0(7)), notify, "{nr}");
        }
    }
}

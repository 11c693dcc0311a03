//! The seccomp filter every node runs under, as a classic BPF program built
//! before the node is spawned (the spawning child may not allocate).
//!
//! Policy (research, section 2 and pitfalls 8, 13, 17, 18):
//!
//! - another architecture, or an x32 call, kills the process;
//! - `sendmsg` on [`HANDOFF_FD`] is allowed: it is how the pre-exec child
//!   hands its listener to the supervisor without a notified call, which
//!   would deadlock the spawn;
//! - the calls in [`ALWAYS`] are notified whatever their arguments;
//! - the calls in [`ON_FD`] are notified when the low 32 bits of their first
//!   argument, a file descriptor, are 3 or more, so that stdin, stdout and
//!   stderr never cost a round trip;
//! - a call that can take a connection in another argument (`sendfile`,
//!   `splice`, `epoll_ctl`, ...) is in [`ALWAYS`]: a connection is a
//!   `/dev/null` placeholder in the node, and a call the checker never sees
//!   would quietly write into it or read end-of-file from it;
//! - everything else is allowed, `execve` included: the node is spawned with
//!   `CLONE_VFORK`, so a notified exec could never be answered. The preload
//!   stacks its own filter that kills an exec after start-up.
//!
//! This module only builds the program; `spawn` installs it.

use nix::libc;

/// The descriptor, in the pre-exec child, of the socket that carries the
/// listener to the supervisor.
pub const HANDOFF_FD: u32 = 1021;

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Notified whatever their arguments.
pub const ALWAYS: &[i64] = &[
    libc::SYS_socket,
    libc::SYS_socketpair,
    libc::SYS_dup2,
    libc::SYS_dup3,
    libc::SYS_close_range,
    libc::SYS_clock_gettime,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_getrandom,
    libc::SYS_clone,
    libc::SYS_clone3,
    libc::SYS_fork,
    libc::SYS_vfork,
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
    libc::SYS_pause,
    libc::SYS_alarm,
    libc::SYS_setitimer,
    libc::SYS_timer_create,
    libc::SYS_timerfd_create,
    libc::SYS_open,
    libc::SYS_openat,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    // Signals name processes by the virtual pids above.
    libc::SYS_kill,
    libc::SYS_tkill,
    libc::SYS_tgkill,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
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
];

/// Notified when their first argument is a descriptor of 3 or more.
pub const ON_FD: &[i64] = &[
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
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_sendmmsg,
    libc::SYS_recvmmsg,
];

/// A jump target of the program below.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    Next,
    SendMsg,
    FdCheck,
    FdLoaded,
    Allow,
    Notify,
    Kill,
}

enum Item {
    Load(u32),
    Jeq(u32, Label, Label),
    Jge(u32, Label, Label),
    Ret(u32),
    Here(Label),
}

/// Builds the filter program.
pub fn program() -> Vec<libc::sock_filter> {
    use Item::*;
    use Label::*;
    // seccomp_data: nr at 0, arch at 4, args[0] (low word first) at 16.
    let mut items = vec![
        Load(4),
        Jeq(AUDIT_ARCH_X86_64, Next, Kill),
        Load(0),
        Jge(X32_SYSCALL_BIT, Kill, Next),
        Jeq(libc::SYS_sendmsg as u32, SendMsg, Next),
    ];
    items.extend(ALWAYS.iter().map(|&nr| Jeq(nr as u32, Notify, Next)));
    items.extend(ON_FD.iter().map(|&nr| Jeq(nr as u32, FdCheck, Next)));
    items.extend([
        Ret(libc::SECCOMP_RET_ALLOW),
        Here(SendMsg),
        Load(16),
        Jeq(HANDOFF_FD, Allow, FdLoaded),
        Here(FdCheck),
        Load(16),
        Here(FdLoaded),
        Jge(3, Notify, Allow),
        Here(Allow),
        Ret(libc::SECCOMP_RET_ALLOW),
        Here(Notify),
        Ret(libc::SECCOMP_RET_USER_NOTIF),
        Here(Kill),
        Ret(libc::SECCOMP_RET_KILL_PROCESS),
    ]);
    assemble(&items)
}

fn assemble(items: &[Item]) -> Vec<libc::sock_filter> {
    let mut at = Vec::new();
    let mut n = 0usize;
    for item in items {
        match item {
            Item::Here(l) => at.push((*l, n)),
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for item in items {
        let here = out.len();
        // Classic BPF jumps are forward only, relative to the next
        // instruction, at most 255 (research, section 2).
        let off = |l: Label| -> u8 {
            if l == Label::Next {
                return 0;
            }
            let target = at.iter().find(|(m, _)| *m == l).map(|(_, i)| *i).expect("every label is placed");
            u8::try_from(target - here - 1).expect("filter jumps stay under 256 instructions")
        };
        let ins = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter { code: code as u16, jt, jf, k };
        match *item {
            Item::Here(_) => continue,
            Item::Load(k) => out.push(ins(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, k)),
            Item::Jeq(k, t, f) => out.push(ins(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, off(t), off(f), k)),
            Item::Jge(k, t, f) => out.push(ins(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, off(t), off(f), k)),
            Item::Ret(k) => out.push(ins(libc::BPF_RET | libc::BPF_K, 0, 0, k)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on one call, as the kernel would.
    fn run(prog: &[libc::sock_filter], nr: i64, arch: u32, arg0: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        data[16..24].copy_from_slice(&arg0.to_le_bytes());
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            let code = i.code as u32;
            pc += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let k = i.k as usize;
                    a = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += if a == i.k { i.jt } else { i.jf } as usize;
                }
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => {
                    pc += if a >= i.k { i.jt } else { i.jf } as usize;
                }
                c if c == libc::BPF_RET | libc::BPF_K => return i.k,
                _ => panic!("unknown instruction {code:#x}"),
            }
        }
    }

    #[test]
    fn policy() {
        let p = program();
        let x86 = AUDIT_ARCH_X86_64;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let kill = libc::SECCOMP_RET_KILL_PROCESS;
        assert_eq!(run(&p, libc::SYS_read, x86, 0), allow, "stdin is the node's own");
        assert_eq!(run(&p, libc::SYS_write, x86, 2), allow, "stderr is the node's own");
        assert_eq!(run(&p, libc::SYS_write, x86, 3), notify, "fd 3 is the state report");
        assert_eq!(run(&p, libc::SYS_write, x86, 0xffff_ffff_0000_0001), allow, "only the low word is an fd");
        assert_eq!(run(&p, libc::SYS_socket, x86, 2), notify);
        assert_eq!(run(&p, libc::SYS_getrandom, x86, 0), notify);
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, HANDOFF_FD as u64), allow, "the listener hand-off");
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, 5), notify);
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, 1), allow);
        assert_eq!(run(&p, libc::SYS_execve, x86, 0), allow, "a notified exec would deadlock the vfork spawn");
        assert_eq!(run(&p, libc::SYS_mmap, x86, 7), allow);
        assert_eq!(run(&p, libc::SYS_sendfile, x86, 1), notify, "sendfile's source may be a connection");
        assert_eq!(run(&p, libc::SYS_epoll_ctl, x86, 0), notify, "epoll_ctl's third argument may be a connection");
        assert_eq!(run(&p, libc::SYS_pread64, x86, 0), allow, "stdin is the node's own");
        assert_eq!(run(&p, libc::SYS_lseek, x86, 4), notify);
        assert_eq!(run(&p, libc::SYS_read, 0x4000_0003, 5), kill, "another architecture");
        assert_eq!(run(&p, 0x4000_0000 | libc::SYS_read, x86, 5), kill, "x32");
        for &nr in ALWAYS {
            assert_eq!(run(&p, nr, x86, 0), notify, "{nr}");
        }
        for &nr in ON_FD {
            assert_eq!(run(&p, nr, x86, 7), notify, "{nr}");
        }
    }
}

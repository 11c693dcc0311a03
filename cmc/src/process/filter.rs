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
//! Policy: default-deny (`calls::table`, which gives every number one of
//! three groups). Only the calls the table passes through reach the kernel
//! unnotified, some of them only for the arguments it names (private
//! anonymous `mmap`, the harmless `madvise`, `prctl` and `arch_prctl`
//! options, `rt_sigaction` of any signal but SIGSEGV and the snapshot
//! signal); everything else is notified, whatever its descriptor (0 to 2
//! included: a daemon that closes stdin gets its next connection on fd 0),
//! and the supervisor answers it or refuses it by name. Calls of another
//! architecture (`int 0x80`) and of the x32 ABI are notified too, for the
//! supervisor to refuse by name; a kill would read as a violation of
//! `no_node_killed_by_a_signal`. `sendmsg` on [`HANDOFF_FD`] is allowed: it
//! is how the pre-exec child hands its listener to the supervisor before
//! its `execve`.
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

/// Every call the filter notifies whatever its arguments: all but those the
/// table passes through (`calls::table`), up to the last number it knows.
pub fn notified() -> impl Iterator<Item = i64> {
    (0..=super::calls::table::NR_MAX)
        .filter(|&nr| !matches!(super::calls::table::group(nr), super::calls::table::Group::Passed(_)))
        .filter(|&nr| !super::calls::table::passed_when().iter().any(|(n, _, _)| *n == nr))
}

/// Why the filter could not be built (a libseccomp failure: its version or
/// the system's).
#[derive(Debug, thiserror::Error)]
#[error("building the seccomp filter with libseccomp: {0}")]
pub struct FilterError(String);

fn lib(e: impl std::fmt::Display) -> FilterError {
    FilterError(e.to_string())
}

/// Builds the filter program: default-deny. Every call is notified but
/// those the table passes through (`calls::table::group`, and
/// `passed_when` for some arguments) and the pre-exec child's hand-off of
/// its listener. A call of another architecture (`int 0x80`) or of the
/// x32 ABI is notified too, so that the supervisor can refuse it by name.
pub fn program() -> Result<Vec<libc::sock_filter>, FilterError> {
    use super::calls::table::{self, Arg};
    let mut ctx = ScmpFilterContext::new(ScmpAction::Notify).map_err(lib)?;
    ctx.set_act_badarch(ScmpAction::Notify).map_err(lib)?;
    if ScmpArch::native() != ScmpArch::X8664 {
        return Err(FilterError("the process front end runs on x86-64 only".to_string()));
    }
    let allow = ScmpAction::Allow;
    let sys = |nr: i64| ScmpSyscall::from(nr as i32);
    for nr in table::passed() {
        ctx.add_rule(allow, sys(nr)).map_err(lib)?;
    }
    for (nr, args, _) in table::passed_when() {
        let cmp: Vec<ScmpArgCompare> = args
            .iter()
            .map(|a| match *a {
                Arg::Eq(i, v) => ScmpArgCompare::new(i as u32, ScmpCompareOp::Equal, v),
                Arg::Masked(i, mask, v) => ScmpArgCompare::new(i as u32, ScmpCompareOp::MaskedEqual(mask), v),
            })
            .collect();
        ctx.add_rule_conditional(allow, sys(nr), &cmp).map_err(lib)?;
    }
    let handoff = ScmpArgCompare::new(0, ScmpCompareOp::Equal, HANDOFF_FD as u64);
    ctx.add_rule_conditional(allow, sys(libc::SYS_sendmsg), &[handoff]).map_err(lib)?;
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
        use crate::process::calls::table;
        let p = program().expect("libseccomp builds the filter");
        let x86 = AUDIT_ARCH_X86_64;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let a0 = |v: u64| [v, 0, 0, 0, 0, 0];
        assert_eq!(run(&p, libc::SYS_read, x86, a0(0)), notify, "fd 0 may be a connection");
        assert_eq!(run(&p, libc::SYS_write, x86, a0(2)), notify, "fd 2 may be a connection");
        assert_eq!(run(&p, libc::SYS_write, x86, a0(3)), notify, "fd 3 is the state report");
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, a0(HANDOFF_FD as u64)), allow, "the listener hand-off");
        assert_eq!(run(&p, libc::SYS_sendmsg, x86, a0(5)), notify);
        assert_eq!(run(&p, libc::SYS_execve, x86, a0(0)), notify, "exec is the template's start only");
        let private_anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, private_anon, u64::MAX, 0]), allow);
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, libc::MAP_PRIVATE as u64, 5, 0]), notify, "a file");
        let shared_anon = (libc::MAP_SHARED | libc::MAP_ANONYMOUS) as u64;
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, shared_anon, u64::MAX, 0]), notify);
        assert_eq!(run(&p, libc::SYS_mmap, x86, [0, 4096, 3, 0x23, u64::MAX, 0]), notify, "MAP_SHARED_VALIDATE");
        assert_eq!(run(&p, libc::SYS_madvise, x86, [0, 4096, libc::MADV_DONTNEED as u64, 0, 0, 0]), allow);
        assert_eq!(run(&p, libc::SYS_madvise, x86, [0, 4096, libc::MADV_WIPEONFORK as u64, 0, 0, 0]), notify);
        assert_eq!(run(&p, libc::SYS_madvise, x86, [0, 4096, libc::MADV_FREE as u64, 0, 0, 0]), notify);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(libc::SIGINT as u64)), allow);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(SNAPSHOT_SIGNAL as u64)), notify);
        assert_eq!(run(&p, libc::SYS_rt_sigaction, x86, a0(libc::SIGSEGV as u64)), notify);
        assert_eq!(run(&p, libc::SYS_brk, x86, a0(7)), allow);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_NAME as u64)), allow);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_DUMPABLE as u64)), notify);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_SECCOMP as u64)), notify);
        assert_eq!(run(&p, libc::SYS_prctl, x86, a0(libc::PR_SET_TSC as u64)), notify);
        let rearm = super::super::start::protocol::CPUID_REARM;
        assert_eq!(
            run(&p, libc::SYS_arch_prctl, x86, [ARCH_SET_CPUID, 0, rearm, 0, 0, 0]),
            allow,
            "cpuid faults again"
        );
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [ARCH_SET_CPUID, 0, 0, 0, 0, 0]), notify, "a program's own");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [0x1011, 0, 0, 0, 0, 0]), notify, "ARCH_GET_CPUID");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [ARCH_SET_CPUID, 1, 0, 0, 0, 0]), notify, "cpuid runs");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [0x1002, 1, 0, 0, 0, 0]), allow, "ARCH_SET_FS");
        assert_eq!(run(&p, libc::SYS_arch_prctl, x86, [0x2003, 1, 0, 0, 0, 0]), notify, "ARCH_MAP_VDSO_64");
        assert_eq!(run(&p, libc::SYS_rt_sigreturn, x86, a0(0)), allow, "the snapshot handler returns");
        assert_eq!(run(&p, libc::SYS_pipe2, x86, a0(0)), notify, "default-deny");
        assert_eq!(run(&p, libc::SYS_setrlimit, x86, a0(0)), notify, "default-deny");
        assert_eq!(run(&p, 470, x86, a0(0)), notify, "a number nobody knows yet");
        assert_eq!(run(&p, 100_000, x86, a0(0)), notify, "a number nobody knows");
        assert_eq!(run(&p, libc::SYS_read, 0x4000_0003, a0(5)), notify, "int 0x80: another architecture");
        assert_eq!(run(&p, 0x4000_0000 | libc::SYS_read, x86, a0(5)), notify, "x32");
        assert_eq!(run(&p, 0x4000_0000 | libc::SYS_getuid, x86, a0(5)), notify, "x32, of a call passed on x86-64");
        for nr in 0..=table::NR_MAX {
            let got = run(&p, nr, x86, a0(7));
            match table::group(nr) {
                table::Group::Passed(_) => assert_eq!(got, allow, "{nr} is passed through"),
                _ if table::passed_when().iter().any(|(n, _, _)| *n == nr) => {}
                _ => assert_eq!(got, notify, "{nr} is notified"),
            }
        }
        for nr in notified() {
            assert_eq!(run(&p, nr, x86, a0(0)), notify, "{nr}");
        }
    }
}

//! Raw Linux x86-64 system calls, and the kernel's numbers and layouts the
//! stub uses: no libc. Each call returns the kernel's value, `-errno` on
//! failure (`-4095..=-1`).

#![allow(dead_code)]

use core::arch::asm;

// System call numbers (`arch/x86/entry/syscalls/syscall_64.tbl`).
pub const SYS_READ: usize = 0;
pub const SYS_WRITE: usize = 1;
pub const SYS_CLOSE: usize = 3;
pub const SYS_MMAP: usize = 9;
pub const SYS_MPROTECT: usize = 10;
pub const SYS_MUNMAP: usize = 11;
pub const SYS_RT_SIGACTION: usize = 13;
pub const SYS_RT_SIGRETURN: usize = 15;
pub const SYS_IOCTL: usize = 16;
pub const SYS_PREAD64: usize = 17;
pub const SYS_CLONE: usize = 56;
pub const SYS_GETPPID: usize = 110;
pub const SYS_SET_TID_ADDRESS: usize = 218;
pub const SYS_SET_ROBUST_LIST: usize = 273;
pub const SYS_PRCTL: usize = 157;
pub const SYS_ARCH_PRCTL: usize = 158;
pub const SYS_CLOCK_GETTIME: usize = 228;
pub const SYS_GETCPU: usize = 309;
pub const SYS_EXIT_GROUP: usize = 231;
pub const SYS_OPENAT: usize = 257;
pub const SYS_FACCESSAT: usize = 269;
pub const SYS_GETRANDOM: usize = 318;

// `fcntl.h`, `unistd.h`
pub const AT_FDCWD: isize = -100;
pub const O_RDONLY: usize = 0;
pub const O_CLOEXEC: usize = 0o2_000_000;
pub const X_OK: usize = 1;

// `sys/mman.h`
pub const PROT_NONE: usize = 0;
pub const PROT_READ: usize = 1;
pub const PROT_WRITE: usize = 2;
pub const PROT_EXEC: usize = 4;
pub const PROT_GROWSDOWN: usize = 0x0100_0000;
pub const MAP_PRIVATE: usize = 0x02;
pub const MAP_FIXED: usize = 0x10;
pub const MAP_ANONYMOUS: usize = 0x20;
pub const MAP_NORESERVE: usize = 0x4000;
pub const MAP_FIXED_NOREPLACE: usize = 0x10_0000;

// `signal.h` (the kernel's `struct sigaction` flags)
pub const SIGKILL: usize = 9;
pub const SIGSEGV: usize = 11;
pub const SIG_DFL: usize = 0;
pub const SA_SIGINFO: u64 = 0x0000_0004;
pub const SA_RESTORER: u64 = 0x0400_0000;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
/// `si_code` of a signal the kernel raised for a fault (`#GP`).
pub const SI_KERNEL: i32 = 0x80;

// `sched.h`, `sys/prctl.h`, `asm/prctl.h`
pub const CLONE_PARENT: usize = 0x8000;
pub const PR_SET_PDEATHSIG: usize = 1;
pub const PR_SET_NAME: usize = 15;
pub const PR_SET_TSC: usize = 26;
pub const PR_TSC_SIGSEGV: usize = 2;
pub const ARCH_SET_CPUID: usize = 0x1012;
pub const ARCH_GET_FS: usize = 0x1003;
/// glibc's thread flags without `CLONE_PARENT_SETTID` (`CLONE_VM |
/// CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
/// CLONE_SETTLS | CLONE_CHILD_CLEARTID`).
pub const CLONE_THREAD_AGAIN: usize = 0x2d0f00;
pub const CLOCK_MONOTONIC: usize = 1;

// `elf.h`: auxiliary vector types.
pub const AT_NULL: usize = 0;
pub const AT_PHDR: usize = 3;
pub const AT_PHENT: usize = 4;
pub const AT_PHNUM: usize = 5;
pub const AT_PAGESZ: usize = 6;
pub const AT_BASE: usize = 7;
pub const AT_ENTRY: usize = 9;
pub const AT_RANDOM: usize = 25;
pub const AT_EXECFN: usize = 31;
pub const AT_SYSINFO: usize = 32;
pub const AT_SYSINFO_EHDR: usize = 33;

// `errno.h`, for messages.
pub const EPERM: isize = 1;
pub const ENOENT: isize = 2;
pub const EINTR: isize = 4;
pub const EIO: isize = 5;
pub const EBADF: isize = 9;
pub const ENOMEM: isize = 12;
pub const EACCES: isize = 13;
pub const EEXIST: isize = 17;
pub const ENOTDIR: isize = 20;
pub const EISDIR: isize = 21;
pub const EINVAL: isize = 22;
pub const ENOTTY: isize = 25;
pub const ENAMETOOLONG: isize = 36;
pub const ENOSYS: isize = 38;
pub const ELOOP: isize = 40;
pub const ENODEV: isize = 19;

pub const PAGE: usize = 4096;

/// The kernel's `struct sigaction` for `rt_sigaction` on x86-64 (not
/// glibc's: the mask is the kernel's 64 bits, after the restorer).
#[repr(C)]
pub struct KernelSigaction {
    pub handler: usize,
    pub flags: u64,
    pub restorer: usize,
    pub mask: u64,
}


/// The head of `siginfo_t`.
#[repr(C)]
pub struct SiginfoHead {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
}

/// `struct timespec`.
#[repr(C)]
pub struct Timespec {
    pub sec: i64,
    pub nsec: i64,
}

/// Where the general registers are in the `ucontext_t` a handler gets:
/// `uc_flags`, `uc_link`, `uc_stack` (8 + 8 + 24 bytes), then
/// `uc_mcontext`, whose first 23 words are `r8` to `cr2` in the order of
/// glibc's `REG_*` (the kernel's `struct sigcontext`).
pub const UC_GREGS: usize = 40;
pub const REG_RBX: usize = 11;
pub const REG_RDX: usize = 12;
pub const REG_RAX: usize = 13;
pub const REG_RCX: usize = 14;
pub const REG_RIP: usize = 16;

const _: () = assert!(core::mem::size_of::<KernelSigaction>() == 32);
const _: () = assert!(core::mem::size_of::<Timespec>() == 16);

/// One system call with up to six arguments.
///
/// # Safety
/// As the call: pointers among the arguments must be valid for it.
#[inline(always)]
pub unsafe fn syscall6(nr: usize, a: usize, b: usize, c: usize, d: usize, e: usize, f: usize) -> isize {
    let r: isize;
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr as isize => r,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            in("r8") e,
            in("r9") f,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    r
}

/// # Safety
/// As [`syscall6`].
#[inline(always)]
pub unsafe fn syscall3(nr: usize, a: usize, b: usize, c: usize) -> isize {
    unsafe { syscall6(nr, a, b, c, 0, 0, 0) }
}

pub fn exit_group(status: i32) -> ! {
    unsafe {
        asm!("syscall", in("rax") SYS_EXIT_GROUP, in("rdi") status as isize, options(noreturn, nostack));
    }
}

pub fn write(fd: i32, bytes: &[u8]) -> isize {
    unsafe { syscall3(SYS_WRITE, fd as usize, bytes.as_ptr() as usize, bytes.len()) }
}

/// Writes all of `bytes`, retrying short writes and `EINTR`; gives up on
/// any other error (there is nowhere else to report it).
pub fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = write(fd, bytes);
        if n == -EINTR {
            continue;
        }
        if n <= 0 {
            return;
        }
        bytes = &bytes[(n as usize).min(bytes.len())..];
    }
}

/// `openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)`; `path` ends in a NUL.
pub fn open_read(path: &[u8]) -> isize {
    debug_assert!(path.last() == Some(&0));
    unsafe { syscall6(SYS_OPENAT, AT_FDCWD as usize, path.as_ptr() as usize, O_RDONLY | O_CLOEXEC, 0, 0, 0) }
}

pub fn close(fd: i32) {
    unsafe { syscall3(SYS_CLOSE, fd as usize, 0, 0) };
}

/// Reads exactly `buf.len()` bytes at `offset`, retrying short reads and
/// `EINTR`. Returns 0, `-errno`, or `-EIO` at the end of the file.
pub fn pread_exact(fd: i32, buf: &mut [u8], offset: u64) -> isize {
    let mut done = 0;
    while done < buf.len() {
        let n = unsafe {
            syscall6(
                SYS_PREAD64,
                fd as usize,
                buf.as_mut_ptr() as usize + done,
                buf.len() - done,
                (offset + done as u64) as usize,
                0,
                0,
            )
        };
        if n == -EINTR {
            continue;
        }
        if n < 0 {
            return n;
        }
        if n == 0 {
            return -EIO;
        }
        done += n as usize;
    }
    0
}

/// # Safety
/// As `mmap`: a `MAP_FIXED` mapping replaces what was there.
pub unsafe fn mmap(addr: usize, len: usize, prot: usize, flags: usize, fd: i32, offset: usize) -> isize {
    unsafe { syscall6(SYS_MMAP, addr, len, prot, flags, fd as isize as usize, offset) }
}

/// # Safety
/// Nothing in use may lie in the range.
pub unsafe fn munmap(addr: usize, len: usize) -> isize {
    unsafe { syscall3(SYS_MUNMAP, addr, len, 0) }
}

/// # Safety
/// As `mprotect`.
pub unsafe fn mprotect(addr: usize, len: usize, prot: usize) -> isize {
    unsafe { syscall3(SYS_MPROTECT, addr, len, prot) }
}

pub fn prctl(option: usize, arg: usize) -> isize {
    unsafe { syscall6(SYS_PRCTL, option, arg, 0, 0, 0, 0) }
}

pub fn arch_prctl(code: usize, arg: usize) -> isize {
    unsafe { syscall3(SYS_ARCH_PRCTL, code, arg, 0) }
}

/// `arch_prctl(ARCH_SET_CPUID, 0)` in the form the filter passes
/// (`protocol::CPUID_REARM`): `cpuid` faults again.
pub fn cpuid_fault() -> isize {
    unsafe { syscall3(SYS_ARCH_PRCTL, ARCH_SET_CPUID, 0, crate::protocol::CPUID_REARM as usize) }
}

/// # Safety
/// `act` is a valid handler for `sig` whose restorer returns through
/// `rt_sigreturn`.
pub unsafe fn rt_sigaction(sig: usize, act: &KernelSigaction) -> isize {
    unsafe { syscall6(SYS_RT_SIGACTION, sig, act as *const _ as usize, 0, 8, 0, 0) }
}

/// Sets `sig`'s disposition back to the default.
pub fn default_action(sig: usize) -> isize {
    let act = KernelSigaction { handler: SIG_DFL, flags: 0, restorer: 0, mask: 0 };
    unsafe { rt_sigaction(sig, &act) }
}

core::arch::global_asm!(
    ".pushsection .text.cmc_start_restorer,\"ax\",@progbits",
    ".globl cmc_start_restorer",
    ".hidden cmc_start_restorer",
    ".type cmc_start_restorer,@function",
    "cmc_start_restorer:",
    "mov eax, 15", // rt_sigreturn
    "syscall",
    "ud2",
    ".size cmc_start_restorer, . - cmc_start_restorer",
    ".popsection",
);

unsafe extern "C" {
    /// The signal return trampoline every handler of the stub names as its
    /// restorer: x86-64 has no default one (glibc supplies its own).
    fn cmc_start_restorer();
}

/// The restorer's address, for [`KernelSigaction::restorer`].
pub fn restorer() -> usize {
    cmc_start_restorer as *const () as usize
}

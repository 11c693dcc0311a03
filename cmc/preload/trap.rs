//! The instructions that read the machine without a system call: `rdtsc`
//! and `rdtscp` (the time stamp counter) and `cpuid` (which says whether
//! the CPU has `rdrand` and `rdseed`, real entropy). The start stub made
//! them fault before any of the program's code ran (`PR_SET_TSC` with
//! `PR_TSC_SIGSEGV`, and `ARCH_SET_CPUID` where the CPU supports CPUID
//! faulting), with its own handler; the preload takes the handler over
//! (making them fault again, for a run outside cmc) and emulates them the
//! same way:
//!
//! - `rdtsc` and `rdtscp` return the monotonic clock in nanoseconds, read
//!   with a real `clock_gettime`, which the supervisor answers from the
//!   world's logical clock (`rdtscp`'s processor number is the one `getcpu`
//!   names);
//! - `cpuid` runs for real with faulting lifted for the one instruction,
//!   and its answer has RDRAND (leaf 1, ECX bit 30) and RDSEED (leaf 7,
//!   EBX bit 18) cleared. Lifting it is `arch_prctl(ARCH_SET_CPUID, 1)`,
//!   which the filter notifies: the supervisor lets it run only from
//!   [`cmc_cpuid_gate`], whose address the hello reports, so a program
//!   cannot lift it itself.
//!
//! `rdrand` and `rdseed` themselves cannot be made to fault: a program
//! that executes them without asking CPUID reads real entropy (docs,
//! SEMANTICS).
//!
//! The program keeps its own view of SIGSEGV: `sigaction` and `signal` are
//! interposed for it, and a fault that is not one of these instructions
//! goes to the program's handler, or kills the process as the default
//! disposition would. A SIGSEGV handler installed by a raw system call
//! would take the preload's place, so the supervisor refuses one.

use core::ffi::{c_int, c_long, c_void};
use core::ptr;

use crate::protocol::{AT_CMC_CPUID, CpuidTable, hide_entropy};
use crate::sys;

/// The start stub's table of `cpuid` answers (its auxiliary vector entry),
/// or 0 without the stub (run outside cmc).
static mut TABLE: usize = 0;

/// Where the start stub's image lies (`cmc/start/protocol.rs`,
/// `IMAGE_BASE`, and far less than 4 GiB of it).
const STUB_IMAGE: core::ops::Range<u64> = crate::protocol::IMAGE_BASE..crate::protocol::IMAGE_BASE + (1 << 32);

/// `arch_prctl` codes (`asm/prctl.h`, a kernel header).
const ARCH_SET_CPUID: c_long = 0x1012;
/// The form of `arch_prctl(ARCH_SET_CPUID, 0)` the filter passes.
const REARM: c_long = crate::protocol::CPUID_REARM as c_long;

/// What the program asked SIGSEGV to do (its view; the real disposition
/// stays the preload's handler, or the stub's before the preload's
/// constructor, while [`INSTALLED`]). From the start: a library's
/// constructor that runs before the preload's sets the program's view too,
/// not the real handler, which emulates `rdtsc` and `cpuid`.
static mut PROGRAM: sys::sigaction = unsafe { core::mem::zeroed() };
static mut INSTALLED: bool = true;
/// libc's `signal` and `sysv_signal`, which the preload interposes.
static mut REAL_SIGNAL: usize = 0;
static mut REAL_SYSV_SIGNAL: usize = 0;

unsafe extern "C" {
    /// libc's own `sigaction`, under a name the preload does not define.
    fn __sigaction(sig: c_int, act: *const sys::sigaction, old: *mut sys::sigaction) -> c_int;
    /// The gate: `arch_prctl(ARCH_SET_CPUID, 1)`, returning its result.
    fn cmc_cpuid_gate() -> c_long;
    /// The address just after the gate's `syscall` instruction: the
    /// instruction pointer the supervisor sees for it.
    static cmc_cpuid_gate_return: u8;
}

core::arch::global_asm!(
    ".pushsection .text.cmc_cpuid_gate,\"ax\",@progbits",
    ".hidden cmc_cpuid_gate",
    ".hidden cmc_cpuid_gate_return",
    ".globl cmc_cpuid_gate",
    ".globl cmc_cpuid_gate_return",
    ".type cmc_cpuid_gate,@function",
    "cmc_cpuid_gate:",
    "mov eax, 158",    // arch_prctl
    "mov edi, 0x1012", // ARCH_SET_CPUID
    "mov esi, 1",
    "syscall",
    "cmc_cpuid_gate_return:",
    "ret",
    ".size cmc_cpuid_gate, . - cmc_cpuid_gate",
    ".popsection",
);

/// The gate's address as the supervisor sees it (the hello's
/// `cpuid_gate`).
pub fn gate() -> u64 {
    (&raw const cmc_cpuid_gate_return) as u64
}

/// Installs the handler, then makes `rdtsc` and `cpuid` fault (`cpuid`
/// where the CPU can). Returns (rdtsc trapped, cpuid trapped); neither
/// without the handler.
///
/// # Safety
/// Called once, from the constructor, before the program runs.
pub unsafe fn install() -> (bool, bool) {
    unsafe {
        let mut action: sys::sigaction = core::mem::zeroed();
        action.sa_sigaction = on_segv as *const () as usize;
        // SA_NODEFER: a cpuid in the program's own SIGSEGV handler faults
        // again, and must be emulated too.
        action.sa_flags = sys::SA_SIGINFO | sys::SA_ONSTACK | sys::SA_NODEFER;
        sys::sigemptyset(&mut action.sa_mask);
        let mut old: sys::sigaction = core::mem::zeroed();
        if __sigaction(sys::SIGSEGV, &action, &mut old) != 0 {
            INSTALLED = false;
            return (false, false);
        }
        // The handler it replaces: the start stub's (in the stub's image),
        // or none; or a library's, set by a raw call before this ran,
        // which is the program's own.
        let stub = STUB_IMAGE.contains(&(old.sa_sigaction as u64));
        if !stub && old.sa_sigaction != sys::SIG_DFL {
            PROGRAM = old;
        }
        TABLE = sys::getauxval(AT_CMC_CPUID as sys::c_ulong) as usize;
        let tsc = sys::prctl(sys::PR_SET_TSC, sys::PR_TSC_SIGSEGV, 0, 0, 0) == 0;
        let cpuid = sys::syscall(sys::SYS_arch_prctl, ARCH_SET_CPUID, 0 as c_long, REARM) == 0;
        (tsc, cpuid)
    }
}

extern "C" fn on_segv(sig: c_int, info: *mut sys::siginfo_t, context: *mut c_void) {
    unsafe {
        let errno = *sys::__errno_location();
        let uc = &mut *(context as *mut sys::ucontext_t);
        let emulated = (*info).si_code == sys::SI_KERNEL && emulate(&mut uc.uc_mcontext.gregs);
        *sys::__errno_location() = errno;
        if !emulated {
            chain(sig, info, context);
        }
    }
}

const RIP: usize = sys::REG_RIP as usize;
const RAX: usize = sys::REG_RAX as usize;
const RBX: usize = sys::REG_RBX as usize;
const RCX: usize = sys::REG_RCX as usize;
const RDX: usize = sys::REG_RDX as usize;

/// Emulates the instruction at the faulting address, if it is one of
/// the preload's, and steps over it.
///
/// # Safety
/// `g` are the registers of a fault (`SI_KERNEL`) at an instruction that
/// was fetched, so its first bytes are readable.
unsafe fn emulate(g: &mut [sys::greg_t; 23]) -> bool {
    let at = g[RIP] as *const u8;
    let (b0, b1) = unsafe { (*at, *at.add(1)) };
    // `rdtscp` is three bytes; read the third only when the second says so.
    let rdtscp = b0 == 0x0f && b1 == 0x01 && unsafe { *at.add(2) } == 0xf9;
    match (b0, b1) {
        (0x0f, 0x31) => {
            let t = unsafe { counter() };
            g[RAX] = (t & 0xffff_ffff) as i64;
            g[RDX] = (t >> 32) as i64;
            g[RIP] += 2;
        }
        _ if rdtscp => {
            let t = unsafe { counter() };
            g[RAX] = (t & 0xffff_ffff) as i64;
            g[RDX] = (t >> 32) as i64;
            g[RCX] = unsafe { processor() } as i64;
            g[RIP] += 3;
        }
        (0x0f, 0xa2) => {
            let (a, b, c, d) = unsafe { cpuid(g[RAX] as u32, g[RCX] as u32) };
            g[RAX] = a as i64;
            g[RBX] = b as i64;
            g[RCX] = c as i64;
            g[RDX] = d as i64;
            g[RIP] += 2;
        }
        _ => return false,
    }
    true
}

/// The time stamp counter: the monotonic clock in nanoseconds (under cmc,
/// the logical clock).
unsafe fn counter() -> u64 {
    let mut ts: sys::timespec = unsafe { core::mem::zeroed() };
    unsafe { sys::syscall(sys::SYS_clock_gettime, sys::CLOCK_MONOTONIC as c_long, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// `rdtscp`'s `IA32_TSC_AUX`, as Linux sets it: the NUMA node above bit
/// 12 and the processor below, by a `getcpu` system call (under cmc, the
/// processor the node is pinned to, which `getcpu` and
/// `sched_getaffinity` name, of node 0).
unsafe fn processor() -> u32 {
    let (mut cpu, mut node) = (0u32, 0u32);
    let r = unsafe { sys::syscall(sys::SYS_getcpu, &mut cpu as *mut u32, &mut node as *mut u32, 0usize) };
    if r != 0 {
        return 0;
    }
    (node << 12) | (cpu & 0xfff)
}

/// `cpuid(leaf, subleaf)` without RDRAND and RDSEED: from the stub's
/// table of this CPU's answers, or for real through the gate.
unsafe fn cpuid(leaf: u32, subleaf: u32) -> (u32, u32, u32, u32) {
    unsafe {
        let table = TABLE as *const CpuidTable;
        if let Some([a, b, c, d]) = table.as_ref().and_then(|t| t.lookup(leaf, subleaf)) {
            return (a, b, c, d);
        }
        if cmc_cpuid_gate() != 0 {
            // Refused (the supervisor ends the search); answer an empty CPU.
            return (0, 0, 0, 0);
        }
        let r = core::arch::x86_64::__cpuid_count(leaf, subleaf);
        sys::syscall(sys::SYS_arch_prctl, ARCH_SET_CPUID, 0 as c_long, REARM);
        let [a, b, c, d] = hide_entropy(leaf, subleaf, [r.eax, r.ebx, r.ecx, r.edx]);
        (a, b, c, d)
    }
}

/// A fault that is not the preload's: what the program asked for.
unsafe fn chain(sig: c_int, info: *mut sys::siginfo_t, context: *mut c_void) {
    unsafe {
        let program = PROGRAM;
        let handler = program.sa_sigaction;
        let sent = (*info).si_code <= 0;
        if handler == sys::SIG_IGN && sent {
            return;
        }
        if handler == sys::SIG_DFL || handler == sys::SIG_IGN {
            // The default disposition (the kernel ignores no fault, and
            // kills for one whose handler is SIG_IGN): the faulting
            // instruction runs again and kills the process; a signal sent
            // by a process is sent again.
            let mut default: sys::sigaction = core::mem::zeroed();
            default.sa_sigaction = sys::SIG_DFL;
            INSTALLED = false;
            __sigaction(sys::SIGSEGV, &default, ptr::null_mut());
            if sent {
                sys::raise(sys::SIGSEGV);
            }
            return;
        }
        if program.sa_flags & sys::SA_RESETHAND != 0 {
            PROGRAM.sa_sigaction = sys::SIG_DFL;
        }
        // The handler's mask, and SIGSEGV itself unless `SA_NODEFER`, as the
        // kernel blocks them while a handler runs (the preload's own
        // handler is `SA_NODEFER`): a fault in the handler then kills, as
        // on Linux; a `siglongjmp` out of it restores the mask it saved.
        let mut mask = program.sa_mask;
        if program.sa_flags & sys::SA_NODEFER != 0 {
            sys::sigdelset(&mut mask, sys::SIGSEGV);
        } else {
            sys::sigaddset(&mut mask, sys::SIGSEGV);
        }
        let mut old: sys::sigset_t = core::mem::zeroed();
        sys::pthread_sigmask(sys::SIG_BLOCK, &mask, &mut old);
        if program.sa_flags & sys::SA_SIGINFO != 0 {
            let f: extern "C" fn(c_int, *mut sys::siginfo_t, *mut c_void) = core::mem::transmute(handler);
            f(sig, info, context);
        } else {
            let f: extern "C" fn(c_int) = core::mem::transmute(handler);
            f(sig);
        }
        sys::pthread_sigmask(sys::SIG_SETMASK, &old, ptr::null_mut());
    }
}

/// `sigaction`, with the program's own view of SIGSEGV.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigaction(sig: c_int, act: *const sys::sigaction, old: *mut sys::sigaction) -> c_int {
    unsafe {
        if sig != sys::SIGSEGV || !INSTALLED {
            return __sigaction(sig, act, old);
        }
        if !old.is_null() {
            *old = PROGRAM;
        }
        if !act.is_null() {
            PROGRAM = *act;
        }
        0
    }
}

/// `signal` and `sysv_signal` for SIGSEGV: BSD semantics (`SA_RESTART`)
/// and System V semantics (`SA_RESETHAND | SA_NODEFER`), as glibc's.
unsafe fn set_program(handler: sys::sighandler_t, flags: c_int) -> sys::sighandler_t {
    unsafe {
        let old = PROGRAM.sa_sigaction;
        PROGRAM = core::mem::zeroed();
        PROGRAM.sa_sigaction = handler;
        PROGRAM.sa_flags = flags;
        old
    }
}

/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn signal(sig: c_int, handler: sys::sighandler_t) -> sys::sighandler_t {
    unsafe {
        if sig == sys::SIGSEGV && INSTALLED {
            return set_program(handler, sys::SA_RESTART);
        }
        if REAL_SIGNAL == 0 {
            REAL_SIGNAL = sys::dlsym(sys::RTLD_NEXT, c"signal".as_ptr()) as usize;
        }
        if REAL_SIGNAL == 0 {
            return sys::SIG_ERR;
        }
        let f: extern "C" fn(c_int, sys::sighandler_t) -> sys::sighandler_t = core::mem::transmute(REAL_SIGNAL);
        f(sig, handler)
    }
}

/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sysv_signal(sig: c_int, handler: sys::sighandler_t) -> sys::sighandler_t {
    unsafe {
        if sig == sys::SIGSEGV && INSTALLED {
            return set_program(handler, sys::SA_RESETHAND | sys::SA_NODEFER);
        }
        if REAL_SYSV_SIGNAL == 0 {
            REAL_SYSV_SIGNAL = sys::dlsym(sys::RTLD_NEXT, c"sysv_signal".as_ptr()) as usize;
        }
        if REAL_SYSV_SIGNAL == 0 {
            return sys::SIG_ERR;
        }
        let f: extern "C" fn(c_int, sys::sighandler_t) -> sys::sighandler_t = core::mem::transmute(REAL_SYSV_SIGNAL);
        f(sig, handler)
    }
}

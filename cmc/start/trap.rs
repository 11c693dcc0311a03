//! `rdtsc`, `rdtscp` and `cpuid` made to fault and emulated, as the
//! preload's `trap.rs` does, but set in the stub before it parks, so that
//! ld.so, IFUNC resolvers and constructors in every life already run under
//! them:
//!
//! - `rdtsc` and `rdtscp` return `CLOCK_MONOTONIC` in nanoseconds, read by
//!   a `clock_gettime` *system call* (the vDSO is gone, and under cmc the
//!   supervisor answers it from the logical clock); `rdtscp`'s processor
//!   number is the one `getcpu` names (a `getcpu` system call);
//! - `cpuid` is answered from [`CPUID`], the table of its answers the stub
//!   read on this CPU before making it fault (a life's glibc asks some
//!   fifty times, each a round trip to the supervisor otherwise), or, for a
//!   question the table does not hold, runs for real with faulting lifted
//!   for the one instruction (`arch_prctl(ARCH_SET_CPUID, 1)` from
//!   [`gate`], the only such call the supervisor lets run); either way with
//!   RDRAND (leaf 1, ECX bit 30) and RDSEED (leaf 7 subleaf 0, EBX bit 18)
//!   cleared.
//!
//! Any other SIGSEGV (a real fault, or one sent by a process) gets the
//! default disposition back, and then kills the process as it would have
//! without the handler: a fault by running the instruction again, a sent
//! signal by a fault of the handler's own. A handler the program installs
//! later replaces this one (under cmc, the preload's, which emulates the
//! same instructions and keeps the program's own SIGSEGV handler aside).

use core::arch::global_asm;

use crate::protocol::{ANY_SUBLEAF, CPUID_ENTRIES_MAX, CPUID_MAGIC, CpuidEntry, CpuidTable, hide_entropy};
use crate::sys;

/// The answers of `cpuid` on this CPU, read before it faults; the program
/// gets its address in its auxiliary vector (`AT_CMC_CPUID`), for the
/// preload's handler.
pub static mut CPUID: CpuidTable = CpuidTable {
    magic: 0,
    count: 0,
    reserved: 0,
    entries: [CpuidEntry { leaf: 0, subleaf: 0, regs: [0; 4] }; CPUID_ENTRIES_MAX],
};

/// Subleaves read for a leaf whose answer depends on `ECX`; a question of
/// a higher one goes through the gate.
const SUBLEAVES: u32 = 64;
/// Subleaves compared to tell whether a leaf's answer depends on `ECX`.
const PROBES: [u32; 5] = [1, 2, 3, 0x55, 0xff];

fn raw_cpuid(leaf: u32, subleaf: u32) -> [u32; 4] {
    let r = core::arch::x86_64::__cpuid_count(leaf, subleaf);
    [r.eax, r.ebx, r.ecx, r.edx]
}

/// Fills [`CPUID`] with the CPU's answers (entropy hidden), before `cpuid`
/// faults: the standard leaves, the hypervisor's if there is one, and the
/// extended ones, each up to its range's highest leaf (at most 64 of a
/// range); every subleaf up to [`SUBLEAVES`] of a leaf whose answer
/// depends on `ECX`, and one entry for any subleaf of one whose answer
/// does not. Entries in (leaf, subleaf) order, as they are made.
///
/// # Safety
/// Called once, before `cpuid` faults and before any reader of [`CPUID`].
unsafe fn fill_cpuid() {
    let table = unsafe { &mut *(&raw mut CPUID) };
    let mut count = 0usize;
    let mut push = |leaf: u32, subleaf: u32, regs: [u32; 4]| {
        if count < CPUID_ENTRIES_MAX {
            table.entries[count] = CpuidEntry { leaf, subleaf, regs: hide_entropy(leaf, subleaf, regs) };
            count += 1;
        }
    };
    let hypervisor = raw_cpuid(1, 0)[2] & (1 << 31) != 0;
    let mut ranges = [(0u32, raw_cpuid(0, 0)[0]), (0x4000_0000, 0), (0x8000_0000, raw_cpuid(0x8000_0000, 0)[0])];
    if hypervisor {
        ranges[1].1 = raw_cpuid(0x4000_0000, 0)[0].max(0x4000_0000);
    } else {
        ranges[1] = (1, 0);
    }
    for (first, last) in ranges {
        if last < first {
            continue;
        }
        for leaf in first..=last.min(first + 63) {
            let zero = raw_cpuid(leaf, 0);
            if PROBES.iter().all(|&s| raw_cpuid(leaf, s) == zero) {
                push(leaf, ANY_SUBLEAF, zero);
                continue;
            }
            for subleaf in 0..SUBLEAVES {
                push(leaf, subleaf, raw_cpuid(leaf, subleaf));
            }
        }
    }
    table.count = count as u32;
    table.magic = CPUID_MAGIC;
}

/// The table's address, for the program's auxiliary vector.
pub fn cpuid_table() -> usize {
    (&raw const CPUID) as usize
}

global_asm!(
    ".pushsection .text.cmc_start_cpuid_gate,\"ax\",@progbits",
    ".globl cmc_start_cpuid_gate",
    ".globl cmc_start_cpuid_gate_return",
    ".hidden cmc_start_cpuid_gate",
    ".hidden cmc_start_cpuid_gate_return",
    ".type cmc_start_cpuid_gate,@function",
    "cmc_start_cpuid_gate:",
    "mov eax, 158",    // arch_prctl
    "mov edi, 0x1012", // ARCH_SET_CPUID
    "mov esi, 1",
    "syscall",
    "cmc_start_cpuid_gate_return:",
    "ret",
    ".size cmc_start_cpuid_gate, . - cmc_start_cpuid_gate",
    ".popsection",
);

unsafe extern "C" {
    /// `arch_prctl(ARCH_SET_CPUID, 1)`, returning its result.
    fn cmc_start_cpuid_gate() -> isize;
    /// Just after the gate's `syscall`: the instruction pointer the
    /// supervisor sees for it.
    static cmc_start_cpuid_gate_return: u8;
}

/// The gate's address as the supervisor sees it (the hello's `cpuid_gate`).
pub fn gate() -> u64 {
    (&raw const cmc_start_cpuid_gate_return) as u64
}

/// What [`install`] managed.
pub struct Installed {
    pub handler: bool,
    pub tsc: bool,
    pub cpuid: bool,
}

/// Installs the SIGSEGV handler, then makes `rdtsc` and (where the CPU can)
/// `cpuid` fault; neither without the handler.
///
/// # Safety
/// Called once, before any instruction it traps runs.
pub unsafe fn install() -> Installed {
    let act = sys::KernelSigaction {
        handler: on_segv as *const () as usize,
        // SA_NODEFER: a cpuid in a SIGSEGV handler is emulated too.
        flags: sys::SA_SIGINFO | sys::SA_ONSTACK | sys::SA_NODEFER | sys::SA_RESTORER,
        restorer: sys::restorer(),
        mask: 0,
    };
    if unsafe { sys::rt_sigaction(sys::SIGSEGV, &act) } != 0 {
        return Installed { handler: false, tsc: false, cpuid: false };
    }
    unsafe { fill_cpuid() };
    let tsc = sys::prctl(sys::PR_SET_TSC, sys::PR_TSC_SIGSEGV) == 0;
    let cpuid = sys::cpuid_fault() == 0;
    Installed { handler: true, tsc, cpuid }
}

extern "C" fn on_segv(_sig: i32, info: *const sys::SiginfoHead, context: *mut u8) {
    unsafe {
        let gregs = &mut *(context.add(sys::UC_GREGS) as *mut [u64; 23]);
        let code = (*info).code;
        if code == sys::SI_KERNEL && emulate(gregs) {
            return;
        }
        sys::default_action(sys::SIGSEGV);
        if code <= 0 {
            // Sent by a process (`kill`, `raise`): the default disposition
            // would have killed the process. A fault of its own does, now
            // that the disposition is the default (a non-canonical
            // address: #GP, SIGSEGV).
            core::arch::asm!("mov rax, qword ptr [rax]", in("rax") 0x8000_0000_0000_0000u64, options(nostack));
        }
        // A fault: the instruction runs again, and kills.
    }
}

/// Emulates the instruction at the faulting address if it is one of
/// these, and steps over it.
///
/// # Safety
/// `g` are the registers of a fault (`SI_KERNEL`) at an instruction that
/// was fetched, so its first bytes are readable.
unsafe fn emulate(g: &mut [u64; 23]) -> bool {
    let at = g[sys::REG_RIP] as *const u8;
    let (b0, b1) = unsafe { (*at, *at.add(1)) };
    // `rdtscp` is three bytes; read the third only when the first two say so.
    let rdtscp = b0 == 0x0f && b1 == 0x01 && unsafe { *at.add(2) } == 0xf9;
    match (b0, b1) {
        (0x0f, 0x31) => {
            let t = counter();
            g[sys::REG_RAX] = t & 0xffff_ffff;
            g[sys::REG_RDX] = t >> 32;
            g[sys::REG_RIP] += 2;
        }
        _ if rdtscp => {
            let t = counter();
            g[sys::REG_RAX] = t & 0xffff_ffff;
            g[sys::REG_RDX] = t >> 32;
            g[sys::REG_RCX] = processor();
            g[sys::REG_RIP] += 3;
        }
        (0x0f, 0xa2) => {
            let (a, b, c, d) = unsafe { cpuid(g[sys::REG_RAX] as u32, g[sys::REG_RCX] as u32) };
            g[sys::REG_RAX] = a as u64;
            g[sys::REG_RBX] = b as u64;
            g[sys::REG_RCX] = c as u64;
            g[sys::REG_RDX] = d as u64;
            g[sys::REG_RIP] += 2;
        }
        _ => return false,
    }
    true
}

/// The time stamp counter: the monotonic clock in nanoseconds, by a
/// system call (under cmc, the logical clock).
fn counter() -> u64 {
    let mut ts = sys::Timespec { sec: 0, nsec: 0 };
    unsafe { sys::syscall3(sys::SYS_CLOCK_GETTIME, sys::CLOCK_MONOTONIC, &mut ts as *mut _ as usize, 0) };
    (ts.sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.nsec as u64)
}

/// `rdtscp`'s `IA32_TSC_AUX`, as Linux sets it: the NUMA node above bit
/// 12 and the processor below, by a `getcpu` system call (under cmc, the
/// processor the node is pinned to, of node 0).
fn processor() -> u64 {
    let (mut cpu, mut node) = (0u32, 0u32);
    let r = unsafe { sys::syscall3(sys::SYS_GETCPU, &mut cpu as *mut u32 as usize, &mut node as *mut u32 as usize, 0) };
    if r != 0 {
        return 0;
    }
    ((node as u64) << 12) | (cpu as u64 & 0xfff)
}

/// `cpuid(leaf, subleaf)` without RDRAND and RDSEED: from the table, or
/// for real through the gate.
///
/// # Safety
/// Only from the handler, with CPUID faulting on.
unsafe fn cpuid(leaf: u32, subleaf: u32) -> (u32, u32, u32, u32) {
    let regs = match unsafe { (*(&raw const CPUID)).lookup(leaf, subleaf) } {
        Some(regs) => regs,
        None => {
            if unsafe { cmc_start_cpuid_gate() } != 0 {
                // Refused (the supervisor ends the search): an empty CPU.
                return (0, 0, 0, 0);
            }
            let regs = raw_cpuid(leaf, subleaf);
            sys::cpuid_fault();
            hide_entropy(leaf, subleaf, regs)
        }
    };
    (regs[0], regs[1], regs[2], regs[3])
}

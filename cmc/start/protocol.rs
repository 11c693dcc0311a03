//! The start stub's protocol with the supervisor: how it is run, what it
//! says before it parks, and how it exits when it cannot start the
//! program. Shared, as source, by the stub (`cmc/start/main.rs`) and the
//! library (`cmc::process::start`, which includes this file with
//! `#[path]`), so the two cannot drift apart.

#![allow(dead_code)]
//!
//! Run: `execve(stub, argv, envp)` with `argv` exactly as the program must
//! see it (`argv[0]` its name, `argv[1]` the node number, then its
//! arguments) and the program's path in `envp` as [`EXEC_VAR`]`=PATH`; the
//! stub gives the program `envp` without that entry, everything else
//! (`LD_PRELOAD` among it) in the same order.
//!
//! Hello and park: once its traps are set (see [`Hello`]), the stub calls
//! `ioctl(3, HELLO_REQUEST, &hello)`; if that returns 0 (a supervisor
//! answered it) it calls `ioctl(3, PARK_REQUEST, 0)` and waits there. Each
//! life is a fork of the parked stub (the snapshot signal, see
//! [`SNAPSHOT_SIGNAL`]) whose park the supervisor answers 0: it then loads
//! the program and its interpreter and jumps to the interpreter's entry. A
//! hello that fails (no supervisor: fd 3 closed, `EBADF`, or not ours,
//! `ENOTTY`) means the stub runs natively: it does not park and goes on
//! at once. A park answered with anything but 0 ends the stub with
//! [`EXIT_PARK`].

/// The environment variable naming the program's path (absolute, or
/// relative to the working directory, as `execve`'s would be).
pub const EXEC_VAR: &str = "CMC_EXEC";

/// The handshake's `ioctl` request on fd 3, the preload's own (`'C' 'M' 'C'
/// 1`): the supervisor tells the stub's hello from the preload's by
/// [`HELLO_MAGIC`].
pub const HELLO_REQUEST: u64 = 0x434d_4301;
/// The `ioctl` request on fd 3 the stub parks in, the preload's own.
pub const PARK_REQUEST: u64 = 0x434d_4302;
/// The magic at the start of [`Hello`]: `"cmc-strt"` in little-endian
/// bytes (the preload's is `"cmc-helo"`).
pub const HELLO_MAGIC: u64 = u64::from_le_bytes(*b"cmc-strt");
/// The version of [`Hello`].
pub const HELLO_VERSION: u32 = 2;
/// The signal that makes a parked process fork (the preload's and the
/// supervisor's `SNAPSHOT_SIGNAL`).
pub const SNAPSHOT_SIGNAL: i32 = 63;

/// The third argument of `arch_prctl(ARCH_SET_CPUID, 0)` when the stub or
/// the preload makes `cpuid` fault again (at its set-up, and after each
/// emulated instruction): the kernel ignores it, and the filter passes
/// that form only, so that a program's own call (which would make the
/// preload's emulation stand where the program asked for a fault) is
/// notified and refused by name. `"cmc-cpid"` in little-endian bytes.
pub const CPUID_REARM: u64 = u64::from_le_bytes(*b"cmc-cpid");

/// What the snapshot handler does, in the `si_value` of the signal's
/// `siginfo` (`SI_QUEUE`): [`SNAP_FORK`] (0, what every snapshot of a
/// process of one thread asks), or one of the others below with, for
/// [`SNAP_CAPTURE`], the slot in bits 8 to 15.
pub const SNAP_FORK: u64 = 0;
/// Copy the signalled thread's frame (its registers at its held call, and
/// its extended state) and its thread pointer into the slot named, then
/// return: the call restarts and is held again.
pub const SNAP_CAPTURE: u64 = 1;
/// Fork (as [`SNAP_FORK`]); in the child, make again every thread the
/// slots record ([`SLOT_CAPTURED`]), one after the other in slot order,
/// after restoring the forking thread's own
/// ([`SLOT_FORKER`]) robust list and cleared-tid word, which a fork does
/// not copy.
pub const SNAP_FORK_THREADS: u64 = 2;

/// The most threads a life may make, its main thread included: one slot
/// each.
pub const THREAD_SLOTS: usize = 64;
/// A slot's size: its header, the kernel's `ucontext` and the extended
/// state the kernel saves on a signal (2,696 bytes with AVX-512, 11,008
/// with AMX tiles).
pub const SLOT_BYTES: usize = 16384;

/// A slot records no thread.
pub const SLOT_NONE: u64 = 0;
/// A thread captured by [`SNAP_CAPTURE`]: made again from its frame,
/// which `rt_sigreturn` resumes at its held call.
pub const SLOT_CAPTURED: u64 = 1;
/// The thread that forks: its robust list and cleared-tid word restored
/// in the child.
pub const SLOT_FORKER: u64 = 3;
/// A capture that could not be made: the extended state is larger than
/// the slot.
pub const SLOT_TOO_LARGE: u64 = 4;

/// One thread's record in a parked process (`#[repr(C)]`, 64-aligned for
/// the extended state, which `xrstor` needs aligned). The supervisor
/// writes `kind`, `robust`, `child_tid` and `name`, a capture the rest.
#[repr(C, align(64))]
pub struct ThreadSlot {
    /// `SLOT_*` (offset 0).
    pub kind: u64,
    /// Its robust futex list's head, 0 for none (offset 8).
    pub robust: u64,
    /// The word the kernel clears at its end (`CLONE_CHILD_CLEARTID`), 0
    /// for none (offset 16).
    pub child_tid: u64,
    /// Its thread pointer (FS base) (offset 24).
    pub tls: u64,
    /// Unused (offset 32).
    pub _reserved: [u64; 4],
    /// Its name (`comm`), NUL-terminated (offset 64).
    pub name: [u8; 16],
    /// The bytes of extended state captured (offset 80).
    pub xsave_bytes: u64,
    /// Unused, to [`SLOT_FRAME`].
    pub _pad: [u8; 40],
    /// The kernel's `ucontext` at the capture, its `fpregs` pointing at
    /// [`ThreadSlot::xsave`] (offset 128).
    pub frame: [u8; SLOT_FRAME_BYTES],
    /// The extended state (offset 448).
    pub xsave: [u8; SLOT_BYTES - SLOT_XSAVE],
}

/// The kernel's `struct ucontext` on x86-64, as the handler copies it.
pub const SLOT_FRAME_BYTES: usize = 320;
/// Where [`ThreadSlot::frame`] is in a slot.
pub const SLOT_FRAME: usize = 128;
/// Where [`ThreadSlot::xsave`] is in a slot.
pub const SLOT_XSAVE: usize = 448;
/// Where [`ThreadSlot::tls`] is in a slot.
pub const SLOT_TLS: usize = 24;
/// Where [`ThreadSlot::name`] is in a slot.
pub const SLOT_NAME: usize = 64;

const _: () = assert!(core::mem::size_of::<ThreadSlot>() == SLOT_BYTES);
const _: () = assert!(core::mem::offset_of!(ThreadSlot, frame) == SLOT_FRAME);
const _: () = assert!(core::mem::offset_of!(ThreadSlot, xsave) == SLOT_XSAVE);
const _: () = assert!(core::mem::offset_of!(ThreadSlot, tls) == SLOT_TLS);
const _: () = assert!(core::mem::offset_of!(ThreadSlot, name) == SLOT_NAME);

/// What the stub tells the supervisor before it parks, by
/// `ioctl(3, HELLO_REQUEST, &hello)`: the state every life inherits.
/// 72 bytes, fields at fixed offsets (asserted below).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// [`HELLO_MAGIC`] (offset 0).
    pub magic: u64,
    /// [`HELLO_VERSION`] (offset 8).
    pub version: u32,
    /// `size_of::<Hello>()`, 64 (offset 12).
    pub size: u32,
    /// Nonzero when `rdtsc` and `rdtscp` fault (`PR_SET_TSC`,
    /// `PR_TSC_SIGSEGV`) and the stub's SIGSEGV handler emulates them from
    /// `clock_gettime(CLOCK_MONOTONIC)` system calls (offset 16).
    pub tsc_trapped: u32,
    /// Nonzero when `cpuid` faults (`ARCH_SET_CPUID`, where the CPU has
    /// CPUID faulting) and the handler emulates it, RDRAND and RDSEED
    /// cleared (offset 20).
    pub cpuid_trapped: u32,
    /// Nonzero when the SIGSEGV handler is installed (offset 24).
    pub segv_handler: u32,
    /// [`SNAPSHOT_SIGNAL`] when its handler (fork with `CLONE_PARENT`, on
    /// the stack it interrupts) is installed, else 0 (offset 28).
    pub snapshot_signal: u32,
    /// Nonzero when the vDSO and every vvar mapping were unmapped (offset
    /// 32). The program gets no `AT_SYSINFO_EHDR` either way.
    pub vdso_removed: u32,
    /// How many mappings named `[vdso]` or `[vvar...]` were unmapped
    /// (offset 36).
    pub vdso_mappings: u32,
    /// The instruction pointer the supervisor sees for the stub's one
    /// `arch_prctl(ARCH_SET_CPUID, 1)`, which lifts CPUID faulting for the
    /// one emulated instruction: the only one to let run (offset 40).
    pub cpuid_gate: u64,
    /// The start of the range the stub's own image occupies (its first
    /// page, the ELF headers, is mapped by some linkers only): its code,
    /// data and handlers' stack stay mapped in every life (offset 48).
    pub image_start: u64,
    /// The end of that range (offset 56).
    pub image_end: u64,
    /// Where the stub's [`ThreadSlot`] table is (offset 64): the snapshot
    /// handler's record of a parked process's threads, in every life.
    pub thread_slots: u64,
}

const _: () = assert!(core::mem::size_of::<Hello>() == 72);
const _: () = assert!(core::mem::offset_of!(Hello, thread_slots) == 64);
const _: () = assert!(core::mem::offset_of!(Hello, tsc_trapped) == 16);
const _: () = assert!(core::mem::offset_of!(Hello, vdso_removed) == 32);
const _: () = assert!(core::mem::offset_of!(Hello, cpuid_gate) == 40);
const _: () = assert!(core::mem::offset_of!(Hello, image_end) == 56);

/// Where the stub's image is linked (`cmc/start/start.ld`), 127 TiB up,
/// 1 TiB under the stack. It stays mapped in every life, so it must be
/// clear of everything a program's address space holds (ASLR is off):
///
/// - `-no-pie` programs at 0x400000, and position-independent ones at
///   0x555555554000;
/// - the legacy bottom-up mmap area (an unlimited `RLIMIT_STACK`), growing
///   up from 0x2aaaaaaab000;
/// - the top-down mmap area (ld.so, libraries, mappings), growing down from
///   under the stack, 0x7ffff7fff000: 1 TiB of mappings before it would
///   reach the stub, and the kernel places the next ones below it;
/// - the stack, under 0x7ffffffff000;
///
/// and of the ranges the sanitizers reserve at fixed addresses, which
/// refuse to start when anything is mapped there: it is in
/// MemorySanitizer's third application range (0x740000000000 to the top;
/// at 0x600000000000 it lay in MSan's origin range, and every MSan build
/// exited before the preload's hello), in ThreadSanitizer's range of
/// modules and the main stack (0x7a0000000000 or, before LLVM 17,
/// 0x7e8000000000, to the top), and in AddressSanitizer's high memory.
///
/// The `brk` area of a life starts after the stub's image (it is the
/// stub's, set by the kernel's exec of it), a few pages above this.
pub const IMAGE_BASE: u64 = 0x7f00_0000_0000;

/// Where a position-independent program is loaded: the kernel's
/// `ELF_ET_DYN_BASE` with ASLR off (two thirds of the 47-bit address
/// space, page aligned), lowered to the program's largest segment
/// alignment as the kernel does.
pub const PIE_BASE: u64 = 0x5555_5555_4000;

// Exit statuses of the stub when it cannot start the program; each comes
// with one line on fd 2 that starts `cmc-start: `. A program's own exit
// status may be any of these too: a supervisor tells them apart by when
// the life ended (before the stub's jump to the interpreter, whose first
// system calls are ld.so's).

/// The park was answered with an error (the supervisor is gone).
pub const EXIT_PARK: i32 = 120;
/// No [`EXEC_VAR`] in the environment, or an empty one.
pub const EXIT_USAGE: i32 = 121;
/// The program or its interpreter cannot be opened or read, or is not
/// executable.
pub const EXIT_READ: i32 = 122;
/// The program is not an x86-64 ELF executable, or its interpreter not an
/// x86-64 ELF object, or their headers are malformed.
pub const EXIT_FORMAT: i32 = 123;
/// The program is statically linked (no `PT_INTERP`): it must be
/// dynamically linked, so that ld.so starts it (and loads the preload).
pub const EXIT_STATIC: i32 = 124;
/// One of the stub's limits (arguments, environment, auxiliary vector,
/// path length, program headers) was exceeded: the message names it.
pub const EXIT_LIMIT: i32 = 125;
/// Mapping the program or its interpreter failed (its addresses are taken,
/// or the kernel refused).
pub const EXIT_MAP: i32 = 126;
/// A forked life found its supervisor gone (the snapshot handler's check,
/// as the preload's).
pub const EXIT_ORPHAN: i32 = 127;
/// The stub panicked: a bug in the stub.
pub const EXIT_PANIC: i32 = 119;
/// A fork of a parked process could not make one of its threads again
/// (the snapshot handler's `clone` failed).
pub const EXIT_THREADS: i32 = 118;

// The stub's limits, each named in the message of `EXIT_LIMIT`.

/// Arguments (`argc`).
pub const ARGS_MAX: usize = 4096;
/// Environment entries.
pub const ENV_MAX: usize = 4096;
/// Auxiliary vector entries from the kernel, `AT_NULL` excluded.
pub const AUXV_MAX: usize = 64;
/// Bytes of a path (the program's, its interpreter's), the NUL included.
pub const PATH_MAX: usize = 4096;
/// Program headers of the program or of its interpreter.
pub const PHDRS_MAX: usize = 128;

/// The auxiliary vector entry the stub gives the program: the address of
/// the stub's [`CpuidTable`], where the preload's SIGSEGV handler finds it
/// (`getauxval`; a type no kernel uses). Absent when the stub did not run.
pub const AT_CMC_CPUID: usize = 0x636d_6301;

/// [`CpuidTable::magic`]: `"cmccpuid"` in little-endian bytes.
pub const CPUID_MAGIC: u64 = u64::from_le_bytes(*b"cmccpuid");

/// The entries a [`CpuidTable`] holds at most.
pub const CPUID_ENTRIES_MAX: usize = 1024;

/// A [`CpuidEntry::subleaf`] that stands for every subleaf: the CPU
/// answered the same for each subleaf the stub tried.
pub const ANY_SUBLEAF: u32 = u32::MAX;

/// One answer of `cpuid`: for `leaf` and `subleaf` (`ECX`), `eax`, `ebx`,
/// `ecx`, `edx` with RDRAND and RDSEED cleared.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuidEntry {
    /// `EAX` asked.
    pub leaf: u32,
    /// `ECX` asked, or [`ANY_SUBLEAF`].
    pub subleaf: u32,
    /// `EAX`, `EBX`, `ECX`, `EDX` answered.
    pub regs: [u32; 4],
}

/// Every answer of `cpuid` the stub read in the template, on the CPU its
/// node is pinned to, before it made `cpuid` fault: so that emulating
/// `cpuid` in a life (glibc's start-up asks it some fifty times) needs no
/// round trip to lift the faulting. Sorted by (leaf, subleaf); a question
/// it does not hold is asked of the CPU through the gate.
#[repr(C)]
pub struct CpuidTable {
    /// [`CPUID_MAGIC`] once filled.
    pub magic: u64,
    /// Entries used.
    pub count: u32,
    /// Zero.
    pub reserved: u32,
    /// The entries, sorted; the first `count` used.
    pub entries: [CpuidEntry; CPUID_ENTRIES_MAX],
}

/// Clears RDRAND (leaf 1, `ECX` bit 30) and RDSEED (leaf 7 subleaf 0,
/// `EBX` bit 18) in an answer of `cpuid`: the CPU's entropy, which cannot
/// be trapped, is hidden from a program that asks first.
pub fn hide_entropy(leaf: u32, subleaf: u32, regs: [u32; 4]) -> [u32; 4] {
    let [a, mut b, mut c, d] = regs;
    if leaf == 1 {
        c &= !(1 << 30);
    }
    if leaf == 7 && subleaf == 0 {
        b &= !(1 << 18);
    }
    [a, b, c, d]
}

impl CpuidTable {
    /// The answer the table holds for (`leaf`, `subleaf`), if any.
    pub fn lookup(&self, leaf: u32, subleaf: u32) -> Option<[u32; 4]> {
        if self.magic != CPUID_MAGIC {
            return None;
        }
        let used = &self.entries[..(self.count as usize).min(CPUID_ENTRIES_MAX)];
        for key in [(leaf, ANY_SUBLEAF), (leaf, subleaf)] {
            if let Ok(i) = used.binary_search_by(|e| (e.leaf, e.subleaf).cmp(&key)) {
                return Some(used[i].regs);
            }
        }
        None
    }
}

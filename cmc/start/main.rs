//! `cmc-start`, the start stub: the process every node's *template* is, in
//! place of the node's program, so that no program code runs before the
//! template parks (issue 26, class 2).
//!
//! The supervisor execs the stub (a small static executable, linked at
//! `protocol::IMAGE_BASE`, out of every program's way) with the program's
//! argv and the program's path in `CMC_EXEC` (see `protocol`). Before it
//! parks, the stub sets up what every life inherits:
//!
//! - `AT_RANDOM`'s 16 bytes fixed by the node's number, so that the
//!   template holds none of the kernel's entropy (`stack::fix_at_random`;
//!   each life then draws its own with `getrandom`,
//!   `stack::draw_at_random`), and `CMC_EXEC` zeroed from the environment
//!   strings;
//! - the snapshot signal's handler, forking with `CLONE_PARENT` on the
//!   stack it interrupts (no alternate stack: the program would see one);
//! - `rdtsc`, `rdtscp` and `cpuid` made to fault and emulated by a SIGSEGV
//!   handler (`trap`);
//! - the vDSO and vvar pages unmapped (`vdso`);
//! - the process name (`comm`) the program's file name, as its `execve`
//!   would have set.
//!
//! Then it says hello on fd 3 and parks (`protocol`). Each life, a fork of
//! the parked stub let go by the supervisor, loads the program and its
//! interpreter as the kernel would (`elf`), builds the program's initial
//! stack and jumps to the interpreter's entry (`stack`): ld.so, IFUNC
//! resolvers, constructors and `main` all run inside the life, under the
//! checker. Run without a supervisor (the hello fails), it does not park:
//! it is then a plain, testable "exec".
//!
//! The stub's own code is small on purpose: raw system calls (`sys`), no
//! allocation, limits on everything it reads (`protocol::*_MAX`), a
//! message on fd 2 and a distinct exit status for every refusal
//! (`protocol::EXIT_*`), and a panic handler that exits with
//! `EXIT_PANIC`. `cmc/build.rs` builds it with a bare `rustc` and
//! `start.ld`, and `cmc::process::start` embeds it.

#![no_std]
#![no_main]

mod elf;
mod fork;
mod out;
mod protocol;
mod stack;
mod sys;
mod trap;
mod vdso;

use protocol::{EXEC_VAR, PARK_REQUEST, PATH_MAX, SNAPSHOT_SIGNAL};
use protocol::{EXIT_MAP, EXIT_PANIC, EXIT_PARK, EXIT_USAGE, HELLO_MAGIC, HELLO_REQUEST, HELLO_VERSION, Hello};

core::arch::global_asm!(
    ".globl _start",
    ".type _start,@function",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call cmc_start_main",
    "ud2",
);

/// The program's path with its NUL, copied out of the environment (whose
/// entry is then zeroed).
static mut PROGRAM: [u8; PATH_MAX] = [0; PATH_MAX];

unsafe extern "C" {
    /// The linker script's bounds of the stub's image.
    static __cmc_start_image_start: u8;
    static __cmc_start_image_end: u8;
}

/// # Safety
/// Called once, by `_start`, with the kernel's initial stack pointer.
#[unsafe(no_mangle)]
unsafe extern "C" fn cmc_start_main(sp: *mut usize) -> ! {
    let init = unsafe { stack::Initial::parse(sp) };
    let path = unsafe { take_program_path(&init) };
    unsafe { stack::fix_at_random(&init) };
    let snapshots = unsafe { fork::install() };
    let traps = unsafe { trap::install() };
    let vdso = unsafe { vdso::remove(init.aux(sys::AT_SYSINFO_EHDR)) };
    set_name(path);
    let hello = Hello {
        magic: HELLO_MAGIC,
        version: HELLO_VERSION,
        size: core::mem::size_of::<Hello>() as u32,
        tsc_trapped: (traps.handler && traps.tsc) as u32,
        cpuid_trapped: (traps.handler && traps.cpuid) as u32,
        segv_handler: traps.handler as u32,
        snapshot_signal: if snapshots { SNAPSHOT_SIGNAL as u32 } else { 0 },
        vdso_removed: vdso.removed as u32,
        vdso_mappings: vdso.mappings,
        cpuid_gate: trap::gate(),
        image_start: (&raw const __cmc_start_image_start) as u64,
        image_end: (&raw const __cmc_start_image_end) as u64,
        thread_slots: (&raw const fork::SLOTS) as u64,
    };
    let hello_answer = unsafe { sys::syscall3(sys::SYS_IOCTL, 3, HELLO_REQUEST as usize, &hello as *const _ as usize) };
    if hello_answer == 0 {
        // Under cmc: the template parks here; each life is a fork of it
        // whose park the supervisor answers 0.
        let r = unsafe { sys::syscall3(sys::SYS_IOCTL, 3, PARK_REQUEST as usize, 0) };
        if r != 0 {
            out::Msg::new().s(b"the park was answered with an error: ").errno(r).exit(EXIT_PARK);
        }
    }
    // A life: its own AT_RANDOM, from the node's random stream.
    unsafe { stack::draw_at_random(&init) };
    let image = elf::load(path);
    if image.exec_stack {
        make_stack_executable(vdso.stack_end, init.sp as usize);
    }
    unsafe { stack::enter(&init, &image, path) }
}

/// Copies the program's path out of the environment into [`PROGRAM`] and
/// zeroes the entry's bytes; exits if there is none, or it is too long.
///
/// # Safety
/// Called once; `init` is this process's initial stack.
unsafe fn take_program_path(init: &stack::Initial) -> &'static [u8] {
    let Some(entry) = init.exec_entry() else {
        out::Msg::new()
            .s(b"no ")
            .s(EXEC_VAR.as_bytes())
            .s(b" in the environment: the stub is run by cmc's supervisor with ")
            .s(EXEC_VAR.as_bytes())
            .s(b"=/path/of/the/program")
            .exit(EXIT_USAGE)
    };
    let value = unsafe { entry.add(EXEC_VAR.len() + 1) };
    let Some(len) = (unsafe { stack::strnlen(value, PATH_MAX) }) else {
        out::limit(b"the program's path", b"PATH_MAX", PATH_MAX)
    };
    if len == 0 {
        out::Msg::new().s(EXEC_VAR.as_bytes()).s(b" is empty").exit(EXIT_USAGE);
    }
    // Called once: the only reference to PROGRAM.
    let program = unsafe { core::slice::from_raw_parts_mut((&raw mut PROGRAM) as *mut u8, PATH_MAX) };
    unsafe {
        core::ptr::copy_nonoverlapping(value, program.as_mut_ptr(), len);
        // The whole entry, NAME=VALUE, is zeroed where the kernel put it.
        for i in 0..EXEC_VAR.len() + 1 + len {
            entry.add(i).write_volatile(0);
        }
    }
    program[len] = 0;
    &program[..len + 1]
}

/// `comm` as the program's `execve` would set it: the last component of
/// the path, cut to 15 bytes by the kernel.
fn set_name(path: &[u8]) {
    let end = path.len() - 1;
    let start = path[..end].iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let mut name = [0u8; 16];
    let len = (end - start).min(15);
    name[..len].copy_from_slice(&path[start..start + len]);
    sys::prctl(sys::PR_SET_NAME, name.as_ptr() as usize);
}

/// `PT_GNU_STACK` with `PF_X`: the whole stack mapping made executable, as
/// the kernel makes it for such a program (and its growth with it).
fn make_stack_executable(stack_end: usize, sp: usize) {
    if stack_end == 0 || sp >= stack_end {
        out::Msg::new()
            .s(b"the program asks for an executable stack, and the stack's mapping was not found")
            .exit(EXIT_MAP);
    }
    let page = sp & !(sys::PAGE - 1);
    // PROT_GROWSDOWN: down to the start of the mapping, however far it has grown.
    let rwx = sys::PROT_READ | sys::PROT_WRITE | sys::PROT_EXEC;
    let r = unsafe { sys::mprotect(page, stack_end - page, rwx | sys::PROT_GROWSDOWN) };
    if r != 0 {
        out::Msg::new().s(b"cannot make the stack executable: ").errno(r).exit(EXIT_MAP);
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    sys::write_all(2, b"cmc-start: panic (a bug in the stub)\n");
    sys::exit_group(EXIT_PANIC)
}

/// The unwinder's personality routine, which `core` (built to unwind)
/// refers to from its unwind tables. The stub never unwinds (panics
/// abort, through [`panic`]): never called.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}

// The stub links no libc: the memory functions the compiler may call.

/// # Safety
/// As C's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8 {
    unsafe {
        core::arch::asm!("rep stosb", inout("rdi") dest => _, inout("rcx") n => _, in("al") c as u8, options(nostack));
    }
    dest
}

/// # Safety
/// As C's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    unsafe {
        core::arch::asm!("rep movsb", inout("rdi") dest => _, inout("rsi") src => _, inout("rcx") n => _, options(nostack));
    }
    dest
}

/// # Safety
/// As C's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize).wrapping_sub(src as usize) >= n {
        // No overlap that a forward copy would clobber.
        return unsafe { memcpy(dest, src, n) };
    }
    unsafe {
        core::arch::asm!(
            "std",
            "rep movsb",
            "cld",
            inout("rdi") dest.add(n - 1) => _,
            inout("rsi") src.add(n - 1) => _,
            inout("rcx") n => _,
            options(nostack),
        );
    }
    dest
}

/// # Safety
/// As C's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return x as i32 - y as i32;
        }
    }
    0
}

/// # Safety
/// As C's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    unsafe { memcmp(a, b, n) }
}

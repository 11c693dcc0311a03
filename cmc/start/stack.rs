//! The initial stack: reading the one the kernel built for the stub, and
//! building the program's below the stub's frames, then entering the
//! interpreter as the kernel would have.
//!
//! The kernel's stack, from `sp` up: `argc`, `argv[0..argc]`, NULL,
//! `envp[..]`, NULL, the auxiliary vector (type, value pairs up to
//! `AT_NULL`), then padding, the 16 `AT_RANDOM` bytes, the platform
//! string, and the argument and environment strings, with the path the
//! stub was exec'd by at the very top.
//!
//! The program's stack reuses those strings where they lie (so
//! `/proc/self/cmdline` and the strings' addresses are the kernel's), minus
//! the [`EXEC_VAR`] entry, which is zeroed in place. Its vectors are new:
//! `argc`, the same `argv`, `envp` without [`EXEC_VAR`], and the kernel's
//! auxiliary vector with the program's `AT_PHDR`, `AT_PHENT`, `AT_PHNUM`,
//! `AT_ENTRY`, the interpreter's `AT_BASE`, `AT_EXECFN` pointing at a copy
//! of the program's path, and no `AT_SYSINFO_EHDR` (the vDSO is gone);
//! `AT_RANDOM` points where the kernel put it, at bytes the stub fixed by
//! node number. The kernel's own vectors are zeroed before the jump.

use core::mem::MaybeUninit;

use crate::elf::Loaded;
use crate::out::{Msg, limit};
use crate::protocol::{ARGS_MAX, AUXV_MAX, ENV_MAX, EXEC_VAR, EXIT_LIMIT, PATH_MAX};
use crate::sys;

/// The kernel's initial stack, as found.
pub struct Initial {
    /// Where `argc` is: the stub's stack pointer at `_start`.
    pub sp: *mut usize,
    pub argc: usize,
    pub argv: *const *const u8,
    pub envp: *const *const u8,
    pub envc: usize,
    /// The first auxiliary vector entry; `auxc` pairs before `AT_NULL`.
    pub auxv: *const [usize; 2],
    pub auxc: usize,
    /// The index in `envp` of the [`EXEC_VAR`] entry, if any.
    pub exec: Option<usize>,
}

impl Initial {
    /// Reads the vectors at `sp`; exits when one is over its limit.
    ///
    /// # Safety
    /// `sp` is the stack pointer the kernel entered `_start` with.
    pub unsafe fn parse(sp: *mut usize) -> Initial {
        unsafe {
            let argc = *sp;
            if argc > ARGS_MAX {
                limit(b"arguments", b"ARGS_MAX", ARGS_MAX);
            }
            let argv = sp.add(1) as *const *const u8;
            let envp = argv.add(argc + 1);
            let mut envc = 0;
            let mut exec = None;
            while !(*envp.add(envc)).is_null() {
                if envc == ENV_MAX {
                    limit(b"environment entries", b"ENV_MAX", ENV_MAX);
                }
                if exec.is_none() && is_exec_var(*envp.add(envc)) {
                    exec = Some(envc);
                }
                envc += 1;
            }
            let auxv = envp.add(envc + 1) as *const [usize; 2];
            let mut auxc = 0;
            while (*auxv.add(auxc))[0] != sys::AT_NULL {
                if auxc == AUXV_MAX {
                    limit(b"auxiliary vector entries", b"AUXV_MAX", AUXV_MAX);
                }
                auxc += 1;
            }
            Initial { sp, argc, argv, envp, envc, auxv, auxc, exec }
        }
    }

    /// The value of auxiliary vector entry `kind`, 0 if absent.
    pub fn aux(&self, kind: usize) -> usize {
        self.aux_entries().iter().find(|e| e[0] == kind).map_or(0, |e| e[1])
    }

    fn aux_entries(&self) -> &[[usize; 2]] {
        unsafe { core::slice::from_raw_parts(self.auxv, self.auxc) }
    }

    /// `argv[i]`, if there is one.
    pub fn arg(&self, i: usize) -> Option<*const u8> {
        (i < self.argc).then(|| unsafe { *self.argv.add(i) }).filter(|p| !p.is_null())
    }

    /// The [`EXEC_VAR`] entry's string (`NAME=VALUE`), if any.
    pub fn exec_entry(&self) -> Option<*mut u8> {
        self.exec.map(|i| unsafe { *self.envp.add(i) as *mut u8 })
    }
}

/// Whether `entry` is `CMC_EXEC=...`.
///
/// # Safety
/// `entry` is a NUL-terminated string.
unsafe fn is_exec_var(entry: *const u8) -> bool {
    let name = EXEC_VAR.as_bytes();
    for (i, &b) in name.iter().enumerate() {
        if unsafe { *entry.add(i) } != b {
            return false;
        }
    }
    unsafe { *entry.add(name.len()) == b'=' }
}

/// The length of a NUL-terminated string, at most `max` (then `None`).
///
/// # Safety
/// `s` is readable up to its NUL or `max` bytes.
pub unsafe fn strnlen(s: *const u8, max: usize) -> Option<usize> {
    (0..max).find(|&i| unsafe { *s.add(i) } == 0)
}

/// Overwrites the 16 bytes `AT_RANDOM` points at with bytes fixed by the
/// node's number, `argv[1]` (FNV-1a over the argument's bytes, then spread
/// over 16 bytes), so that the template holds none of the kernel's entropy:
/// ld.so takes the stack protector's canary from bytes 0..8 (lowest byte
/// zeroed) and the pointer guard from bytes 8..16, and each life draws its
/// own with [`draw_at_random`] before ld.so runs.
///
/// # Safety
/// Called once, before parking.
pub unsafe fn fix_at_random(init: &Initial) {
    // In a life, `draw_at_random` then replaces them with the node's own.
    let at = init.aux(sys::AT_RANDOM) as *mut u8;
    if at.is_null() {
        return;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    if let Some(mut p) = init.arg(1) {
        unsafe {
            while *p != 0 {
                h = (h ^ *p as u64).wrapping_mul(0x100_0000_01b3);
                p = p.add(1);
            }
        }
    }
    for i in 0..16 {
        h = (h ^ i as u64).wrapping_mul(0x100_0000_01b3);
        unsafe { at.add(i).write_volatile((h >> 56) as u8) };
    }
}

/// Replaces the 16 bytes `AT_RANDOM` points at with 16 bytes of
/// `getrandom`: in a life under cmc, the next 16 bytes of the node's random
/// stream (the supervisor answers it), so that every life, as every exec,
/// has its own canary and pointer guard, the same on every run; run
/// outside cmc, the kernel's. Before anything of the program reads them.
/// If the call fails, the bytes stay as [`fix_at_random`] left them.
///
/// # Safety
/// Called once per life, before `enter`.
pub unsafe fn draw_at_random(init: &Initial) {
    let at = init.aux(sys::AT_RANDOM) as *mut u8;
    if at.is_null() {
        return;
    }
    let mut bytes = [0u8; 16];
    let got = unsafe { sys::syscall3(sys::SYS_GETRANDOM, bytes.as_mut_ptr() as usize, 16, 0) };
    if got == 16 {
        for (i, b) in bytes.iter().enumerate() {
            unsafe { at.add(i).write_volatile(*b) };
        }
    }
}

/// Words of the new stack block: `argc`, `argv` and `envp` with their
/// NULLs, the auxiliary vector with room for the entries the stub may add
/// and `AT_NULL`, the program's path, and alignment slack.
const BLOCK_WORDS: usize = 1 + (ARGS_MAX + 1) + (ENV_MAX + 1) + 2 * (AUXV_MAX + 8) + PATH_MAX / 8 + 4;

/// The auxiliary vector entries the stub sets, in the order it appends
/// those the kernel did not give.
const SET: [usize; 6] = [sys::AT_PHDR, sys::AT_PHENT, sys::AT_PHNUM, sys::AT_BASE, sys::AT_ENTRY, sys::AT_EXECFN];

/// Builds the program's initial stack below the stub's frames and jumps to
/// the interpreter's entry with the registers the kernel's `execve`
/// leaves: `rsp` at `argc` (16-byte aligned), every other general register
/// zero (`rdx` too: no exit function for the program to register), the
/// direction flag clear, `xmm0` to `xmm15` zero.
///
/// # Safety
/// `init` is this process's initial stack, `image` the mapped program,
/// `path` its path with its NUL.
pub unsafe fn enter(init: &Initial, image: &Loaded, path: &[u8]) -> ! {
    let mut block = MaybeUninit::<[usize; BLOCK_WORDS]>::uninit();
    let base = block.as_mut_ptr() as *mut usize;
    let top = unsafe { base.add(BLOCK_WORDS) } as usize;
    // The path at the top, 16-byte aligned.
    let execfn = (top - path.len()) & !15;
    unsafe { core::ptr::copy_nonoverlapping(path.as_ptr(), execfn as *mut u8, path.len()) };
    let envc = init.envc - init.exec.is_some() as usize;
    let words = 1 + (init.argc + 1) + (envc + 1) + 2 * (init.auxc + SET.len() + 2);
    let sp = (execfn - words * 8) & !15;
    if sp < base as usize {
        // Cannot happen within the limits; checked all the same.
        Msg::new().s(b"the initial stack does not fit its block").exit(EXIT_LIMIT);
    }
    let mut w = sp as *mut usize;
    let mut push = |v: usize| unsafe {
        w.write(v);
        w = w.add(1);
    };
    push(init.argc);
    for i in 0..init.argc {
        push(unsafe { *init.argv.add(i) } as usize);
    }
    push(0);
    for i in (0..init.envc).filter(|&i| Some(i) != init.exec) {
        push(unsafe { *init.envp.add(i) } as usize);
    }
    push(0);
    let value = |kind: usize| match kind {
        sys::AT_PHDR => image.phdr as usize,
        sys::AT_PHENT => 56,
        sys::AT_PHNUM => image.phnum as usize,
        sys::AT_BASE => image.interp_base as usize,
        sys::AT_ENTRY => image.entry as usize,
        _ => execfn,
    };
    let mut given = [false; SET.len()];
    for &[kind, v] in init.aux_entries() {
        if kind == sys::AT_SYSINFO_EHDR || kind == sys::AT_SYSINFO {
            continue;
        }
        match SET.iter().position(|&k| k == kind) {
            Some(i) => {
                given[i] = true;
                push(kind);
                push(value(kind));
            }
            None => {
                push(kind);
                push(v);
            }
        }
    }
    for (i, &kind) in SET.iter().enumerate() {
        if !given[i] {
            push(kind);
            push(value(kind));
        }
    }
    // The stub's answers of cpuid, for the preload's handler.
    push(crate::protocol::AT_CMC_CPUID);
    push(crate::trap::cpuid_table());
    push(sys::AT_NULL);
    push(0);
    // The kernel's vectors, from its argc to its AT_NULL pair: nothing
    // reads them any more (the stub's frames are below them).
    let old_end = unsafe { init.auxv.add(init.auxc + 1) } as usize;
    let mut p = init.sp as usize;
    while p < old_end {
        unsafe { (p as *mut usize).write_volatile(0) };
        p += 8;
    }
    unsafe { jump(sp, image.interp_entry as usize) }
}

/// Sets `rsp` to `sp`, clears the registers and jumps to `entry`.
///
/// # Safety
/// `sp` is a complete initial stack and `entry` the interpreter's entry.
unsafe fn jump(sp: usize, entry: usize) -> ! {
    unsafe {
        core::arch::asm!(
            "mov rsp, rdi",
            // The entry below the stack pointer, for the `ret` (the
            // interpreter's first `call` overwrites it).
            "push rsi",
            "pxor xmm0, xmm0", "pxor xmm1, xmm1", "pxor xmm2, xmm2", "pxor xmm3, xmm3",
            "pxor xmm4, xmm4", "pxor xmm5, xmm5", "pxor xmm6, xmm6", "pxor xmm7, xmm7",
            "pxor xmm8, xmm8", "pxor xmm9, xmm9", "pxor xmm10, xmm10", "pxor xmm11, xmm11",
            "pxor xmm12, xmm12", "pxor xmm13, xmm13", "pxor xmm14, xmm14", "pxor xmm15, xmm15",
            "xor eax, eax", "xor ebx, ebx", "xor ecx, ecx", "xor edx, edx",
            "xor esi, esi", "xor edi, edi", "xor ebp, ebp",
            "xor r8d, r8d", "xor r9d, r9d", "xor r10d, r10d", "xor r11d, r11d",
            "xor r12d, r12d", "xor r13d, r13d", "xor r14d, r14d", "xor r15d, r15d",
            // The flags as the kernel leaves them (IF, and bit 1).
            "push 0x202",
            "popfq",
            "ret",
            in("rdi") sp,
            in("rsi") entry,
            options(noreturn),
        );
    }
}

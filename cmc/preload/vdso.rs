//! Patching the vDSO: its clock and random entry points run in user space
//! and never reach seccomp, so the supervisor would never see them and the
//! node would read real time (research, pitfalls 1 and 2). Overriding the
//! libc symbols is not enough: glibc calls the vDSO from inside itself
//! (`timespec_get`, `clock`, and in glibc 2.41 `getrandom` and `arc4random`).
//!
//! Each entry point found in the vDSO's `.dynsym` is overwritten in place
//! with a stub that issues the real system call, which the supervisor's
//! filter notifies. `__vdso_getrandom` answers its parameter query (the call
//! with `opaque_len == ~0`) with `-ENOSYS`, so that a glibc that had not yet
//! allocated its state falls back to the system call, and otherwise issues
//! `getrandom(buf, len, flags)`.

use core::ffi::c_void;

use crate::sys;

/// One entry point: its symbol, its bit in the hello masks and its stub.
pub struct Entry {
    pub name: &'static [u8],
    pub bit: u32,
    stub: &'static [u8],
}

/// `mov eax, NR; syscall; ret`
const fn stub(nr: u16) -> [u8; 8] {
    [0xb8, nr as u8, (nr >> 8) as u8, 0, 0, 0x0f, 0x05, 0xc3]
}
const CLOCK_GETTIME: [u8; 8] = stub(228);
const GETTIMEOFDAY: [u8; 8] = stub(96);
const TIME: [u8; 8] = stub(201);
const CLOCK_GETRES: [u8; 8] = stub(229);
const GETCPU: [u8; 8] = stub(309);
/// `cmp r8, -1; jne 1f; mov rax, -ENOSYS; ret; 1: mov eax, 318; syscall; ret`
const GETRANDOM: [u8; 22] = [
    0x49, 0x83, 0xf8, 0xff, // cmp r8, -1
    0x75, 0x08, // jne +8
    0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, // mov rax, -38
    0xc3, // ret
    0xb8, 0x3e, 0x01, 0x00, 0x00, // mov eax, 318
    0x0f, 0x05, // syscall
    0xc3, // ret
];

pub const ENTRIES: [Entry; 6] = [
    Entry { name: b"__vdso_clock_gettime", bit: 1, stub: &CLOCK_GETTIME },
    Entry { name: b"__vdso_gettimeofday", bit: 2, stub: &GETTIMEOFDAY },
    Entry { name: b"__vdso_time", bit: 4, stub: &TIME },
    Entry { name: b"__vdso_clock_getres", bit: 8, stub: &CLOCK_GETRES },
    Entry { name: b"__vdso_getcpu", bit: 16, stub: &GETCPU },
    Entry { name: b"__vdso_getrandom", bit: 32, stub: &GETRANDOM },
];

const SHT_DYNSYM: u32 = 11;
const PT_LOAD: u32 = 1;

#[repr(C)]
struct Ehdr {
    ident: [u8; 16],
    kind: u16,
    machine: u16,
    version: u32,
    entry: u64,
    phoff: u64,
    shoff: u64,
    flags: u32,
    ehsize: u16,
    phentsize: u16,
    phnum: u16,
    shentsize: u16,
    shnum: u16,
    shstrndx: u16,
}

#[repr(C)]
struct Phdr {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    paddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

#[repr(C)]
struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    addralign: u64,
    entsize: u64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

/// Patches every entry point found. Returns (found, patched) bitmasks.
///
/// The whole vDSO is made writable at once: the kernel refuses (`EINVAL`) an
/// `mprotect` that would split its mapping. Where even that fails, the stubs
/// are written through `/proc/self/mem`, which ignores page protections.
///
/// # Safety
/// Must run before any other thread exists (the preload's constructor).
pub unsafe fn patch() -> (u32, u32) {
    let base = unsafe { sys::getauxval(sys::AT_SYSINFO_EHDR) } as usize;
    if base == 0 {
        return (0, 0);
    }
    let mut found = 0;
    let mut patches: [(usize, &[u8], u32); 8] = [(0, &[], 0); 8];
    let mut count = 0;
    let image_end;
    unsafe {
        let eh = &*(base as *const Ehdr);
        if eh.ident[..4] != *b"\x7fELF" || eh.shoff == 0 {
            return (0, 0);
        }
        let mut end = eh.shoff as usize + eh.shnum as usize * eh.shentsize as usize;
        // The load bias: the vDSO's first PT_LOAD maps file offset 0.
        let mut vaddr0 = None;
        for i in 0..eh.phnum as usize {
            let ph = &*((base + eh.phoff as usize + i * eh.phentsize as usize) as *const Phdr);
            if ph.kind == PT_LOAD {
                vaddr0.get_or_insert(ph.vaddr - ph.offset);
                end = end.max((ph.offset + ph.memsz) as usize);
            }
        }
        image_end = end;
        let vaddr0 = vaddr0.unwrap_or(0);
        let shdr = |i: usize| &*((base + eh.shoff as usize + i * eh.shentsize as usize) as *const Shdr);
        for i in 0..eh.shnum as usize {
            let sh = shdr(i);
            if sh.kind != SHT_DYNSYM || sh.entsize == 0 {
                continue;
            }
            let strtab = base + shdr(sh.link as usize).offset as usize;
            for s in 0..(sh.size / sh.entsize) as usize {
                let sym = &*((base + sh.offset as usize + s * sh.entsize as usize) as *const Sym);
                let name = core::ffi::CStr::from_ptr((strtab + sym.name as usize) as *const sys::c_char).to_bytes();
                let Some(entry) = ENTRIES.iter().find(|e| e.name == name) else { continue };
                found |= entry.bit;
                let fits = sym.size == 0 || sym.size as usize >= entry.stub.len();
                if fits && count < patches.len() {
                    patches[count] = (base + (sym.value - vaddr0) as usize, entry.stub, entry.bit);
                    count += 1;
                }
            }
        }
    }
    let patches = &patches[..count];
    let len = image_end.next_multiple_of(4096);
    let rwx = sys::PROT_READ | sys::PROT_WRITE | sys::PROT_EXEC;
    let mut patched = 0;
    unsafe {
        if sys::mprotect(base as *mut c_void, len, rwx) == 0 {
            for &(at, code, bit) in patches {
                core::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len());
                patched |= bit;
            }
            sys::mprotect(base as *mut c_void, len, sys::PROT_READ | sys::PROT_EXEC);
        } else {
            let fd = sys::open(c"/proc/self/mem".as_ptr(), sys::O_RDWR | sys::O_CLOEXEC);
            if fd >= 0 {
                for &(at, code, bit) in patches {
                    if sys::pwrite(fd, code.as_ptr().cast(), code.len(), at as sys::off_t) == code.len() as isize {
                        patched |= bit;
                    }
                }
                sys::close(fd);
            }
        }
    }
    (found, patched)
}

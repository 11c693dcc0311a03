//! Loading the program and its interpreter as the kernel's
//! `load_elf_binary` does (fs/binfmt_elf.c), in the stub's own process.
//!
//! Everything is read and checked before anything is mapped, so that a
//! refusal leaves nothing behind and comes with a message:
//!
//! - the program: an x86-64 little-endian ELF64 executable, `ET_EXEC` or
//!   `ET_DYN`, executable by this user, with a `PT_INTERP` (a statically
//!   linked one is refused: ld.so must start it, so that the preload
//!   loads);
//! - its interpreter: an x86-64 ELF64 object, `ET_DYN` (or `ET_EXEC`);
//! - for both: at most `PHDRS_MAX` program headers, at least one
//!   `PT_LOAD`, `PT_LOAD`s in ascending address order with file offsets
//!   congruent to their addresses modulo the page size, `p_filesz <=
//!   p_memsz`, and every address below the top of user space.
//!
//! Mapping, as the kernel: a program `ET_EXEC` at its own addresses; `ET_DYN`
//! at `PIE_BASE` (the kernel's `ELF_ET_DYN_BASE` with ASLR off; the stub
//! never randomises it), lowered to the largest `PT_LOAD` alignment; the
//! interpreter where `mmap` puts its whole span (top-down under the stack,
//! where the kernel puts it), aligned likewise. The span is reserved
//! first (`PROT_NONE`), each `PT_LOAD` mapped over it with its protection
//! (`PF_R`, `PF_W`, `PF_X`), the rest of the page after `p_filesz` zeroed,
//! the pages up to `p_memsz` anonymous, and the gaps between segments
//! unmapped again.

use crate::out::{Msg, limit};
use crate::protocol::{EXIT_FORMAT, EXIT_MAP, EXIT_READ, EXIT_STATIC, PATH_MAX, PHDRS_MAX, PIE_BASE};
use crate::sys::{self, PAGE};

const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
/// The top of user space with 4-level page tables (`TASK_SIZE`): no
/// segment may end above it.
const TASK_SIZE: u64 = (1 << 47) - PAGE as u64;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Ehdr {
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
#[derive(Clone, Copy)]
pub struct Phdr {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    paddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

const EHDR_BYTES: usize = 64;
const PHDR_BYTES: usize = 56;
const _: () = assert!(core::mem::size_of::<Ehdr>() == EHDR_BYTES);
const _: () = assert!(core::mem::size_of::<Phdr>() == PHDR_BYTES);

const NO_PHDR: Phdr = Phdr { kind: 0, flags: 0, offset: 0, vaddr: 0, paddr: 0, filesz: 0, memsz: 0, align: 0 };

/// Which file a message is about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Program,
    Interpreter,
}

/// An opened, checked ELF file.
struct Elf<'a> {
    role: Role,
    path: &'a [u8],
    fd: i32,
    eh: Ehdr,
    ph: [Phdr; PHDRS_MAX],
    phnum: usize,
    /// `[lo, hi)`: the page-aligned span of its `PT_LOAD`s, unbiased.
    lo: u64,
    hi: u64,
    /// The largest `PT_LOAD` alignment, at least a page.
    align: u64,
    /// The first `PT_LOAD`'s address.
    first_vaddr: u64,
}

/// What the new stack and the jump need.
pub struct Loaded {
    /// The program's entry (`AT_ENTRY`).
    pub entry: u64,
    /// Its program headers in memory (`AT_PHDR`) and their number.
    pub phdr: u64,
    pub phnum: u64,
    /// The interpreter's load address (`AT_BASE`) and entry, where the stub
    /// jumps.
    pub interp_base: u64,
    pub interp_entry: u64,
    /// `PT_GNU_STACK` asks for an executable stack.
    pub exec_stack: bool,
}

/// Reads, checks and maps the program at `path` (NUL-terminated) and its
/// interpreter; exits with a message on any refusal or failure.
pub fn load(path: &[u8]) -> Loaded {
    let access = unsafe {
        sys::syscall6(sys::SYS_FACCESSAT, sys::AT_FDCWD as usize, path.as_ptr() as usize, sys::X_OK, 0, 0, 0)
    };
    if access != 0 {
        Msg::new().path(path).s(b": not executable: ").errno(access).exit(EXIT_READ);
    }
    let program = Elf::open(Role::Program, path);
    if !matches!(program.eh.kind, ET_EXEC | ET_DYN) {
        program.refuse(b"not an executable (ELF type is neither EXEC nor DYN)", EXIT_FORMAT);
    }
    let mut interp_path = [0u8; PATH_MAX];
    let interp_len = program.interpreter(&mut interp_path);
    let interp_path = &interp_path[..interp_len];
    let interp = Elf::open(Role::Interpreter, interp_path);
    if !matches!(interp.eh.kind, ET_EXEC | ET_DYN) {
        interp.refuse(b"not a shared object (ELF type is neither DYN nor EXEC)", EXIT_FORMAT);
    }
    let phdr_vaddr = program.phdr_vaddr();
    let exec_stack = program.headers().iter().any(|p| p.kind == PT_GNU_STACK && p.flags & PF_X != 0);

    let bias = match program.eh.kind {
        // As the kernel: ELF_PAGESTART((base & ~(alignment - 1)) - vaddr).
        ET_DYN => (PIE_BASE & !(program.align - 1)).wrapping_sub(program.first_vaddr) & !(PAGE as u64 - 1),
        _ => 0,
    };
    program.map(Some(bias));
    let interp_bias = interp.map(if interp.eh.kind == ET_EXEC { Some(0) } else { None });
    sys::close(program.fd);
    sys::close(interp.fd);
    Loaded {
        entry: program.eh.entry.wrapping_add(bias),
        phdr: phdr_vaddr.wrapping_add(bias),
        phnum: program.phnum as u64,
        interp_base: interp_bias,
        interp_entry: interp.eh.entry.wrapping_add(interp_bias),
        exec_stack,
    }
}

impl<'a> Elf<'a> {
    /// Opens and reads the headers; checks everything but the type.
    fn open(role: Role, path: &'a [u8]) -> Elf<'a> {
        let fd = sys::open_read(path);
        let mut elf = Elf {
            role,
            path,
            fd: fd as i32,
            eh: unsafe { core::mem::zeroed() },
            ph: [NO_PHDR; PHDRS_MAX],
            phnum: 0,
            lo: 0,
            hi: 0,
            align: PAGE as u64,
            first_vaddr: 0,
        };
        if fd < 0 {
            elf.fail(b"cannot open: ", fd, EXIT_READ);
        }
        let mut raw = [0u8; EHDR_BYTES];
        let r = sys::pread_exact(elf.fd, &mut raw, 0);
        if r == -sys::EIO {
            elf.refuse(b"not an ELF file (shorter than an ELF header)", EXIT_FORMAT);
        }
        if r < 0 {
            elf.fail(b"cannot read: ", r, EXIT_READ);
        }
        elf.eh = unsafe { core::ptr::read_unaligned(raw.as_ptr() as *const Ehdr) };
        let eh = elf.eh;
        if eh.ident[..4] != *b"\x7fELF" {
            elf.refuse(b"not an ELF file", EXIT_FORMAT);
        }
        if eh.ident[4] != 2 || eh.ident[5] != 1 || eh.machine != EM_X86_64 {
            elf.refuse(b"not an x86-64 ELF file (64-bit, little-endian, machine 62)", EXIT_FORMAT);
        }
        if eh.phentsize as usize != PHDR_BYTES || eh.phnum == 0 {
            elf.refuse(b"malformed program headers (entry size or count)", EXIT_FORMAT);
        }
        if eh.phnum as usize > PHDRS_MAX {
            match role {
                Role::Program => limit(b"the program's program headers", b"PHDRS_MAX", PHDRS_MAX),
                Role::Interpreter => limit(b"the interpreter's program headers", b"PHDRS_MAX", PHDRS_MAX),
            }
        }
        elf.phnum = eh.phnum as usize;
        let bytes = elf.phnum * PHDR_BYTES;
        let table = unsafe { core::slice::from_raw_parts_mut(elf.ph.as_mut_ptr() as *mut u8, bytes) };
        let r = sys::pread_exact(elf.fd, table, eh.phoff);
        if r == -sys::EIO {
            elf.refuse(b"malformed: its program headers lie past its end", EXIT_FORMAT);
        }
        if r < 0 {
            elf.fail(b"cannot read its program headers: ", r, EXIT_READ);
        }
        elf.check_loads();
        elf
    }

    fn headers(&self) -> &[Phdr] {
        &self.ph[..self.phnum]
    }

    /// Checks the `PT_LOAD`s and records their span and alignment.
    fn check_loads(&mut self) {
        let page = PAGE as u64;
        let mut count = 0;
        let mut last_vaddr = 0;
        let (mut lo, mut hi, mut align) = (0, 0, page);
        for i in 0..self.phnum {
            let p = self.ph[i];
            if p.kind != PT_LOAD {
                continue;
            }
            if p.filesz > p.memsz {
                self.refuse(b"malformed: a PT_LOAD with p_filesz > p_memsz", EXIT_FORMAT);
            }
            if p.vaddr % page != p.offset % page {
                self.refuse(b"malformed: a PT_LOAD whose offset and address differ modulo the page size", EXIT_FORMAT);
            }
            let end = match p.vaddr.checked_add(p.memsz) {
                Some(end) if end <= TASK_SIZE => end,
                _ => self.refuse(b"malformed: a PT_LOAD beyond the top of user space", EXIT_FORMAT),
            };
            if count > 0 && p.vaddr < last_vaddr {
                self.refuse(b"malformed: PT_LOAD segments not in ascending address order", EXIT_FORMAT);
            }
            if count == 0 {
                lo = p.vaddr & !(page - 1);
                self.first_vaddr = p.vaddr;
            }
            hi = hi.max((end + page - 1) & !(page - 1));
            // As the kernel's maximum_alignment: powers of two only.
            if p.align.is_power_of_two() {
                align = align.max(p.align);
            }
            last_vaddr = p.vaddr;
            count += 1;
        }
        if count == 0 {
            self.refuse(b"malformed: no PT_LOAD segment", EXIT_FORMAT);
        }
        // An alignment larger than the span's own room is refused rather
        // than honoured at any cost.
        if align > 1 << 30 {
            self.refuse(b"malformed: a PT_LOAD alignment over 1 GiB", EXIT_FORMAT);
        }
        (self.lo, self.hi, self.align) = (lo, hi, align);
    }

    /// The program's interpreter path, NUL included, copied into `buf`;
    /// refuses a program without one.
    fn interpreter(&self, buf: &mut [u8; PATH_MAX]) -> usize {
        let Some(p) = self.headers().iter().find(|p| p.kind == PT_INTERP) else {
            self.refuse(
                b"statically linked (no PT_INTERP): cmc runs dynamically linked programs only, which ld.so starts",
                EXIT_STATIC,
            )
        };
        if p.filesz < 2 {
            self.refuse(b"malformed: an empty PT_INTERP", EXIT_FORMAT);
        }
        if p.filesz > PATH_MAX as u64 {
            limit(b"the program's interpreter path (PT_INTERP)", b"PATH_MAX", PATH_MAX);
        }
        let len = p.filesz as usize;
        let r = sys::pread_exact(self.fd, &mut buf[..len], p.offset);
        if r < 0 {
            self.fail(b"cannot read its PT_INTERP: ", r, EXIT_READ);
        }
        // As the kernel: the path must end in its NUL.
        if buf[len - 1] != 0 {
            self.refuse(b"malformed: PT_INTERP does not end in a NUL", EXIT_FORMAT);
        }
        len
    }

    /// The address of the program headers, unbiased: as the kernel, where
    /// the `PT_LOAD` holding the file's bytes at `e_phoff` maps them.
    fn phdr_vaddr(&self) -> u64 {
        let off = self.eh.phoff;
        let holding = self.headers().iter().find(|p| p.kind == PT_LOAD && p.offset <= off && off - p.offset < p.filesz);
        match holding {
            Some(p) => off - p.offset + p.vaddr,
            None => self.refuse(b"malformed: its program headers are in no PT_LOAD segment (no AT_PHDR)", EXIT_FORMAT),
        }
    }

    /// Maps every `PT_LOAD` at `bias` (`Some`: fixed, the range must be
    /// free) or wherever `mmap` finds room (`None`); returns the bias.
    fn map(&self, bias: Option<u64>) -> u64 {
        let page = PAGE as u64;
        let span = self.hi - self.lo;
        let private = sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE;
        let bias = match bias {
            Some(bias) => {
                let at = self.lo.wrapping_add(bias);
                if at.checked_add(span).is_none_or(|end| end > TASK_SIZE) {
                    self.refuse(b"its load address puts it beyond the top of user space", EXIT_MAP);
                }
                let r = unsafe {
                    sys::mmap(at as usize, span as usize, sys::PROT_NONE, private | sys::MAP_FIXED_NOREPLACE, -1, 0)
                };
                if r < 0 || r as u64 != at {
                    if r >= 0 {
                        // A kernel older than 4.17 took the flag as a hint.
                        unsafe { sys::munmap(r as usize, span as usize) };
                    }
                    let mut m = Msg::new();
                    m.s(self.name()).s(b" ").path(self.path).s(b": cannot map ").hex(at).s(b"-").hex(at + span);
                    m.s(b": ").errno(if r < 0 { r } else { -sys::EEXIST }).exit(EXIT_MAP);
                }
                bias
            }
            None => {
                let extra = self.align - page;
                let total = span + extra;
                let r = unsafe { sys::mmap(0, total as usize, sys::PROT_NONE, private, -1, 0) };
                if r < 0 {
                    self.fail(b"cannot reserve its address range: ", r, EXIT_MAP);
                }
                let r = r as u64;
                let at = (r + self.align - 1) & !(self.align - 1);
                unsafe {
                    if at > r {
                        sys::munmap(r as usize, (at - r) as usize);
                    }
                    if r + total > at + span {
                        sys::munmap((at + span) as usize, (r + total - at - span) as usize);
                    }
                }
                at.wrapping_sub(self.lo)
            }
        };
        let mut mapped_end = self.lo.wrapping_add(bias);
        for p in self.headers().iter().filter(|p| p.kind == PT_LOAD && p.memsz > 0) {
            let prot = prot_of(p.flags);
            let start = (p.vaddr & !(page - 1)).wrapping_add(bias);
            let file_end = (p.vaddr + p.filesz).wrapping_add(bias);
            let mem_end = ((p.vaddr + p.memsz + page - 1) & !(page - 1)).wrapping_add(bias);
            if start > mapped_end {
                // A gap between segments: unmapped, as the kernel leaves it.
                unsafe { sys::munmap(mapped_end as usize, (start - mapped_end) as usize) };
            }
            let mut anon_start = start;
            if p.filesz > 0 {
                let file_map_end = (file_end + page - 1) & !(page - 1);
                // The rest of the last file page is zeroed when the segment
                // goes on in memory: writable for that moment.
                let tail = p.memsz > p.filesz && file_end % page != 0;
                let first_prot = if tail { prot | sys::PROT_WRITE } else { prot };
                let offset = p.offset & !(page - 1);
                let r = unsafe {
                    sys::mmap(
                        start as usize,
                        (file_map_end - start) as usize,
                        first_prot,
                        sys::MAP_PRIVATE | sys::MAP_FIXED,
                        self.fd,
                        offset as usize,
                    )
                };
                if r < 0 || r as u64 != start {
                    self.fail(b"cannot map a segment: ", if r < 0 { r } else { -sys::EINVAL }, EXIT_MAP);
                }
                if tail {
                    let zeros = (file_map_end - file_end) as usize;
                    unsafe { core::ptr::write_bytes(file_end as *mut u8, 0, zeros) };
                    if first_prot != prot {
                        unsafe { sys::mprotect(start as usize, (file_map_end - start) as usize, prot) };
                    }
                }
                anon_start = file_map_end;
            }
            if mem_end > anon_start {
                let r = unsafe {
                    sys::mmap(
                        anon_start as usize,
                        (mem_end - anon_start) as usize,
                        prot,
                        sys::MAP_PRIVATE | sys::MAP_FIXED | sys::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if r < 0 {
                    self.fail(b"cannot map a segment's zero-filled part: ", r, EXIT_MAP);
                }
            }
            mapped_end = mapped_end.max(mem_end);
        }
        bias
    }

    fn name(&self) -> &'static [u8] {
        match self.role {
            Role::Program => b"program",
            Role::Interpreter => b"interpreter",
        }
    }

    /// Exits: `what` about this file, with `status`.
    fn refuse(&self, what: &[u8], status: i32) -> ! {
        Msg::new().s(self.name()).s(b" ").path(self.path).s(b": ").s(what).exit(status)
    }

    /// Exits: `what` failed with `r` (`-errno`).
    fn fail(&self, what: &[u8], r: isize, status: i32) -> ! {
        Msg::new().s(self.name()).s(b" ").path(self.path).s(b": ").s(what).errno(r).exit(status)
    }
}

fn prot_of(flags: u32) -> usize {
    let mut prot = sys::PROT_NONE;
    if flags & PF_R != 0 {
        prot |= sys::PROT_READ;
    }
    if flags & PF_W != 0 {
        prot |= sys::PROT_WRITE;
    }
    if flags & PF_X != 0 {
        prot |= sys::PROT_EXEC;
    }
    prot
}

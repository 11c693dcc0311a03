//! The fixed heap: `malloc` and friends served from one range reserved at
//! [`BASE`], so that a deterministic program gets the same pointers on
//! every run, with or without ASLR.
//!
//! The range is clear of `-no-pie` text and `brk` (from 0x400000), of the
//! top-down and legacy bottom-up mmap areas and of the stack (research,
//! pitfall 22). It is mapped lazily, because `malloc` can be called before
//! the preload's constructor, with `MAP_FIXED_NOREPLACE`, and the returned
//! address is checked (older kernels treat the flag as a hint).
//!
//! Blocks come in power-of-two classes from 16 bytes, each behind a 16-byte
//! header; a freed block goes to its class's free list and is reused last in,
//! first out. Everything here is a pure function of the sequence of calls, so
//! a deterministic program gets deterministic addresses. Targets are
//! single-threaded (the supervisor rejects threads), so there is no lock.
//! glibc's own allocator is never used, so its tcache key (drawn from
//! `getrandom`) never lands in freed memory.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr;

use crate::sys;

/// Where the heap starts (16 TiB).
pub const BASE: usize = 0x1000_0000_0000;
/// How much address space it reserves; crossing it makes `malloc` fail with
/// `ENOMEM`, never wrap.
const RESERVE_BYTES: usize = 1 << 34;
const HEADER: usize = 16;
const MAGIC: u32 = 0x636d_6368;
/// Classes hold 16 << class bytes.
const CLASSES: usize = 31;

struct Heap {
    mapped: bool,
    /// Offset of the first unused byte.
    bump: usize,
    free: [*mut u8; CLASSES],
}

struct Global(UnsafeCell<Heap>);
// Targets are single-threaded; see the module comment.
unsafe impl Sync for Global {}

static HEAP: Global = Global(UnsafeCell::new(Heap { mapped: false, bump: 0, free: [ptr::null_mut(); CLASSES] }));

fn fatal(msg: &[u8]) -> ! {
    unsafe {
        sys::write(2, msg.as_ptr().cast(), msg.len());
        sys::abort()
    }
}

fn set_errno(e: i32) {
    unsafe { *sys::__errno_location() = e };
}

fn class_of(size: usize) -> Option<usize> {
    let size = size.max(16);
    let class = (usize::BITS - (size - 1).leading_zeros()) as usize - 4;
    if class < CLASSES { Some(class) } else { None }
}

fn class_bytes(class: usize) -> usize {
    16 << class
}

unsafe fn heap() -> &'static mut Heap {
    let h = unsafe { &mut *HEAP.0.get() };
    if !h.mapped {
        let want = BASE as *mut c_void;
        let got = unsafe {
            sys::mmap(
                want,
                RESERVE_BYTES,
                sys::PROT_READ | sys::PROT_WRITE,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE | sys::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if got != want {
            fatal(b"cmc-preload: cannot map the fixed heap at 0x100000000000\n");
        }
        h.mapped = true;
    }
    h
}

/// Takes `class_bytes(class)` bytes whose start is `align`-aligned from the
/// bump area; the header goes just before.
unsafe fn bump(h: &mut Heap, class: usize, align: usize) -> *mut u8 {
    let user = (h.bump + HEADER).next_multiple_of(align);
    let end = user + class_bytes(class);
    if end > RESERVE_BYTES {
        set_errno(sys::ENOMEM);
        return ptr::null_mut();
    }
    h.bump = end;
    let p = (BASE + user) as *mut u8;
    unsafe {
        let header = p.sub(HEADER);
        (header as *mut u32).write(class as u32);
        (header.add(4) as *mut u32).write(MAGIC);
    }
    p
}

fn ours(p: *mut u8) -> bool {
    let a = p as usize;
    (BASE + HEADER..BASE + RESERVE_BYTES).contains(&a)
}

unsafe fn class_of_block(p: *mut u8) -> usize {
    unsafe {
        let header = p.sub(HEADER);
        if (header.add(4) as *const u32).read() != MAGIC {
            fatal(b"cmc-preload: free or realloc of a pointer the heap did not give\n");
        }
        (header as *const u32).read() as usize
    }
}

unsafe fn alloc(size: usize, align: usize) -> *mut u8 {
    let Some(class) = class_of(size) else {
        set_errno(sys::ENOMEM);
        return ptr::null_mut();
    };
    let h = unsafe { heap() };
    if align <= HEADER {
        let head = h.free[class];
        if !head.is_null() {
            h.free[class] = unsafe { (head as *const *mut u8).read() };
            return head;
        }
    }
    unsafe { bump(h, class, align.max(HEADER)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    unsafe { alloc(size, HEADER).cast() }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    let p = p as *mut u8;
    if p.is_null() || !ours(p) {
        // Memory from ld.so's start-up allocator is never ours; leaking it
        // is what glibc does too.
        return;
    }
    unsafe {
        let class = class_of_block(p);
        let h = heap();
        (p as *mut *mut u8).write(h.free[class]);
        h.free[class] = p;
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    let Some(total) = n.checked_mul(size) else {
        set_errno(sys::ENOMEM);
        return ptr::null_mut();
    };
    let p = unsafe { alloc(total, HEADER) };
    if !p.is_null() {
        unsafe { ptr::write_bytes(p, 0, total) };
    }
    p.cast()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    let old = p as *mut u8;
    if old.is_null() {
        return unsafe { malloc(size) };
    }
    if size == 0 {
        unsafe { free(p) };
        return ptr::null_mut();
    }
    if !ours(old) {
        fatal(b"cmc-preload: realloc of a pointer the heap did not give\n");
    }
    let have = class_bytes(unsafe { class_of_block(old) });
    if size <= have {
        return p;
    }
    let new = unsafe { alloc(size, HEADER) };
    if !new.is_null() {
        unsafe {
            ptr::copy_nonoverlapping(old, new, have);
            free(p);
        }
    }
    new.cast()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => unsafe { realloc(p, total) },
        None => {
            set_errno(sys::ENOMEM);
            ptr::null_mut()
        }
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    if !align.is_power_of_two() {
        set_errno(sys::EINVAL);
        return ptr::null_mut();
    }
    unsafe { alloc(size, align).cast() }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    unsafe { memalign(align, size) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    if !align.is_power_of_two() || align % core::mem::size_of::<usize>() != 0 {
        return sys::EINVAL;
    }
    let p = unsafe { alloc(size, align) };
    if p.is_null() {
        return sys::ENOMEM;
    }
    unsafe { *out = p.cast() };
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    unsafe { memalign(4096, size) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    unsafe { memalign(4096, size.next_multiple_of(4096)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc_usable_size(p: *mut c_void) -> usize {
    let p = p as *mut u8;
    if p.is_null() || !ours(p) {
        return 0;
    }
    class_bytes(unsafe { class_of_block(p) })
}

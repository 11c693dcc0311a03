//! The C declarations the preload uses, for x86-64 Linux with glibc, and
//! nothing else: its types, constants and libc functions, under the names
//! glibc's headers give them, so that a use reads as it would in C.
//!
//! They are declared here rather than taken from the `libc` crate so that
//! the preload depends on nothing but `core` and `std`: `cmc`'s build
//! script compiles it with a bare `rustc`, with no crates to link (see
//! `cmc/build.rs`). Each value was taken from glibc 2.36's headers and the
//! `libc` crate 0.2 (which agree); each struct's size, alignment and the
//! offset of every field the preload reads are asserted below against
//! glibc's (`offsetof` and `sizeof` in C on x86-64), so a wrong layout
//! fails the build instead of a node.

#![allow(non_camel_case_types, non_upper_case_globals)]

use core::ffi::c_void;
use core::mem::{align_of, offset_of, size_of};

pub use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong};

pub type size_t = usize;
pub type time_t = i64;
pub type suseconds_t = i64;
pub type clockid_t = c_int;
pub type greg_t = i64;
/// A handler as `struct sigaction` holds it: a function's address, or
/// [`SIG_DFL`], [`SIG_IGN`] or [`SIG_ERR`].
pub type sighandler_t = size_t;

/// `sigset_t`: 1024 signals, one bit each.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sigset_t {
    __val: [u64; 16],
}

/// `struct sigaction` (`bits/sigaction.h`): the handler is a union of
/// `sa_handler` and `sa_sigaction`, one address.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sigaction {
    pub sa_sigaction: sighandler_t,
    pub sa_mask: sigset_t,
    pub sa_flags: c_int,
    pub sa_restorer: Option<extern "C" fn()>,
}

/// `stack_t`: an alternate signal stack.
#[repr(C)]
pub struct stack_t {
    pub ss_sp: *mut c_void,
    pub ss_flags: c_int,
    pub ss_size: size_t,
}

/// `siginfo_t`: the three leading fields, then the union of the per-signal
/// fields (`_sifields`, 8-aligned), which the preload never reads.
#[repr(C)]
pub struct siginfo_t {
    pub si_signo: c_int,
    pub si_errno: c_int,
    pub si_code: c_int,
    _pad0: c_int,
    _sifields: [u64; 14],
}

/// `mcontext_t`: the general registers, indexed by `REG_*`.
#[repr(C)]
pub struct mcontext_t {
    pub gregs: [greg_t; 23],
    /// `struct _libc_fpstate *`.
    pub fpregs: *mut c_void,
    __reserved1: [u64; 8],
}

/// `ucontext_t`, with the shadow stack words glibc 2.28 added (`__ssp`).
#[repr(C)]
pub struct ucontext_t {
    pub uc_flags: c_ulong,
    pub uc_link: *mut ucontext_t,
    pub uc_stack: stack_t,
    pub uc_mcontext: mcontext_t,
    pub uc_sigmask: sigset_t,
    __fpregs_mem: [u8; 512],
    __ssp: [u64; 4],
}

#[repr(C)]
pub struct timespec {
    pub tv_sec: time_t,
    pub tv_nsec: c_long,
}

#[repr(C)]
pub struct timeval {
    pub tv_sec: time_t,
    pub tv_usec: suseconds_t,
}

// The layouts, as glibc's on x86-64.
const _: () = assert!(size_of::<sigset_t>() == 128 && align_of::<sigset_t>() == 8);
const _: () = assert!(size_of::<sigaction>() == 152 && align_of::<sigaction>() == 8);
const _: () = assert!(offset_of!(sigaction, sa_sigaction) == 0);
const _: () = assert!(offset_of!(sigaction, sa_mask) == 8);
const _: () = assert!(offset_of!(sigaction, sa_flags) == 136);
const _: () = assert!(offset_of!(sigaction, sa_restorer) == 144);
const _: () = assert!(size_of::<stack_t>() == 24 && align_of::<stack_t>() == 8);
const _: () = assert!(offset_of!(stack_t, ss_sp) == 0);
const _: () = assert!(offset_of!(stack_t, ss_flags) == 8);
const _: () = assert!(offset_of!(stack_t, ss_size) == 16);
const _: () = assert!(size_of::<siginfo_t>() == 128 && align_of::<siginfo_t>() == 8);
const _: () = assert!(offset_of!(siginfo_t, si_code) == 8);
const _: () = assert!(size_of::<mcontext_t>() == 256 && align_of::<mcontext_t>() == 8);
const _: () = assert!(offset_of!(mcontext_t, gregs) == 0);
const _: () = assert!(offset_of!(mcontext_t, fpregs) == 184);
const _: () = assert!(size_of::<ucontext_t>() == 968 && align_of::<ucontext_t>() == 8);
const _: () = assert!(offset_of!(ucontext_t, uc_stack) == 16);
const _: () = assert!(offset_of!(ucontext_t, uc_mcontext) == 40);
const _: () = assert!(offset_of!(ucontext_t, uc_sigmask) == 296);
const _: () = assert!(offset_of!(ucontext_t, __ssp) == 936);
const _: () = assert!(size_of::<timespec>() == 16 && offset_of!(timespec, tv_nsec) == 8);
const _: () = assert!(size_of::<timeval>() == 16 && offset_of!(timeval, tv_usec) == 8);

// `errno.h`
pub const EINTR: c_int = 4;
pub const EIO: c_int = 5;

// `signal.h`
pub const SIGSEGV: c_int = 11;
pub const SIG_DFL: sighandler_t = 0;
pub const SIG_IGN: sighandler_t = 1;
pub const SIG_ERR: sighandler_t = !0;
pub const SA_SIGINFO: c_int = 0x0000_0004;
pub const SA_ONSTACK: c_int = 0x0800_0000;
pub const SA_RESTART: c_int = 0x1000_0000;
pub const SA_NODEFER: c_int = 0x4000_0000;
pub const SIG_BLOCK: c_int = 0;
pub const SIG_SETMASK: c_int = 2;
pub const SA_RESETHAND: c_int = 0x8000_0000_u32 as c_int;
/// `si_code` of a signal the kernel raised for a fault.
pub const SI_KERNEL: c_int = 0x80;
// `sys/ucontext.h`: indices into `gregs`.
pub const REG_RBX: c_int = 11;
pub const REG_RDX: c_int = 12;
pub const REG_RAX: c_int = 13;
pub const REG_RCX: c_int = 14;
pub const REG_RIP: c_int = 16;

// `sys/mman.h`

// `fcntl.h`

// `time.h`, `sched.h`, `sys/prctl.h`, `sys/auxv.h`, `dlfcn.h`
pub const CLOCK_MONOTONIC: clockid_t = 1;
pub const PR_SET_TSC: c_int = 26;
pub const PR_TSC_SIGSEGV: c_int = 2;
pub const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;

// `sys/syscall.h` (x86-64 numbers)
pub const SYS_ioctl: c_long = 16;
pub const SYS_gettimeofday: c_long = 96;
pub const SYS_arch_prctl: c_long = 158;
pub const SYS_time: c_long = 201;
pub const SYS_clock_gettime: c_long = 228;
pub const SYS_getcpu: c_long = 309;
pub const SYS_getrandom: c_long = 318;

// glibc's functions, resolved by the dynamic linker when a node loads the
// preload (libc is linked through `std`). `sigaction` is also the name of
// the preload's own interposer (`trap::sigaction`): a call to this
// declaration binds to that export, as a C call would.
unsafe extern "C" {
    pub fn __errno_location() -> *mut c_int;
    pub fn syscall(num: c_long, ...) -> c_long;
    pub fn prctl(option: c_int, ...) -> c_int;
    pub fn _exit(status: c_int) -> !;
    pub fn raise(sig: c_int) -> c_int;
    pub fn sigemptyset(set: *mut sigset_t) -> c_int;
    pub fn sigdelset(set: *mut sigset_t, sig: c_int) -> c_int;
    pub fn sigaddset(set: *mut sigset_t, sig: c_int) -> c_int;
    pub fn pthread_sigmask(how: c_int, set: *const sigset_t, old: *mut sigset_t) -> c_int;
    pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    pub fn getauxval(kind: c_ulong) -> c_ulong;
}

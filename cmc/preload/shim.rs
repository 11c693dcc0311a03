//! The libc entry points for time and randomness, and the constructor.
//!
//! Each entry point issues the real system call: the supervisor's filter
//! notifies it and the supervisor answers from the world (the logical clock,
//! the node's random stream). Run outside cmc, the calls reach the kernel
//! and behave as usual.

use core::ffi::{c_int, c_long, c_void};

use crate::{HELLO_MAGIC, HELLO_REQUEST, HELLO_VERSION, Hello, sys, trap};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn clock_gettime(clock: sys::clockid_t, tp: *mut sys::timespec) -> c_int {
    unsafe { sys::syscall(sys::SYS_clock_gettime, clock as c_long, tp) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn gettimeofday(tv: *mut sys::timeval, tz: *mut c_void) -> c_int {
    unsafe { sys::syscall(sys::SYS_gettimeofday, tv, tz) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn time(t: *mut sys::time_t) -> sys::time_t {
    unsafe { sys::syscall(sys::SYS_time, t) as sys::time_t }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, len: usize, flags: sys::c_uint) -> isize {
    unsafe { sys::syscall(sys::SYS_getrandom, buf, len, flags as c_long) as isize }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn getentropy(buf: *mut c_void, len: usize) -> c_int {
    if len > 256 {
        unsafe { *sys::__errno_location() = sys::EIO };
        return -1;
    }
    let mut done = 0;
    while done < len {
        let n = unsafe { getrandom((buf as *mut u8).add(done).cast(), len - done, 0) };
        if n < 0 {
            if unsafe { *sys::__errno_location() } == sys::EINTR {
                continue;
            }
            return -1;
        }
        done += n as usize;
    }
    0
}

/// The constructor, run by ld.so before the program's `main` (after the
/// constructors of the libraries it depends on). It takes SIGSEGV over from
/// the stub, keeping `rdtsc` and `cpuid` emulated, and says hello.
#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn(c_int, *const *const sys::c_char) = init;

extern "C" fn init(_argc: c_int, _argv: *const *const sys::c_char) {
    let (tsc_trapped, cpuid_trapped) = unsafe { trap::install() };
    let hello = Hello {
        magic: HELLO_MAGIC,
        version: HELLO_VERSION,
        tsc_trapped: tsc_trapped as u32,
        cpuid_trapped: cpuid_trapped as u32,
        reserved: 0,
        reserved2: 0,
        cpuid_gate: trap::gate(),
    };
    unsafe { sys::syscall(sys::SYS_ioctl, 3 as c_long, HELLO_REQUEST, &hello as *const Hello) };
}

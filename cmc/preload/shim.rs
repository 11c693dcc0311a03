//! The libc entry points for time and randomness, and the constructor.
//!
//! Each entry point issues the real system call: the supervisor's filter
//! notifies it and the supervisor answers from the world (the logical clock,
//! the node's random stream). Run outside cmc, the calls reach the kernel
//! and behave as usual.

use core::ffi::{c_int, c_long, c_void};

use crate::{HELLO_MAGIC, HELLO_REQUEST, HELLO_VERSION, Hello, fork, heap, trap, vdso};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> c_int {
    unsafe { libc::syscall(libc::SYS_clock_gettime, clock as c_long, tp) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    unsafe { libc::syscall(libc::SYS_gettimeofday, tv, tz) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
    unsafe { libc::syscall(libc::SYS_time, t) as libc::time_t }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, len: usize, flags: libc::c_uint) -> isize {
    unsafe { libc::syscall(libc::SYS_getrandom, buf, len, flags as c_long) as isize }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn getentropy(buf: *mut c_void, len: usize) -> c_int {
    if len > 256 {
        unsafe { *libc::__errno_location() = libc::EIO };
        return -1;
    }
    let mut done = 0;
    while done < len {
        let n = unsafe { getrandom((buf as *mut u8).add(done).cast(), len - done, 0) };
        if n < 0 {
            if unsafe { *libc::__errno_location() } == libc::EINTR {
                continue;
            }
            return -1;
        }
        done += n as usize;
    }
    0
}

/// The constructor, run by ld.so before the program's `main`. Under the
/// checker it ends parked: the process is its node's template, and each
/// life of the node is a fork of it that the supervisor lets go on into
/// `main` (`fork`).
#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn(c_int, *const *const libc::c_char) = init;

extern "C" fn init(argc: c_int, argv: *const *const libc::c_char) {
    let (found, patched) = unsafe { vdso::patch() };
    // rdtsc may fault only once no vDSO clock needs it (research, pitfall 3):
    // an unpatched vDSO reads the TSC itself.
    let (tsc_trapped, cpuid_trapped) = unsafe { trap::install(found != 0 && found == patched) };
    unsafe { fork::fix_at_random(argc, argv) };
    let snapshots = unsafe { fork::install() };
    let hello = Hello {
        magic: HELLO_MAGIC,
        version: HELLO_VERSION,
        vdso_found: found,
        vdso_patched: patched,
        tsc_trapped: tsc_trapped as u32,
        snapshot_signal: if snapshots { fork::SNAPSHOT_SIGNAL as u32 } else { 0 },
        cpuid_trapped: cpuid_trapped as u32,
        heap_base: heap::BASE as u64,
        cpuid_gate: trap::gate(),
    };
    let answered = unsafe { libc::syscall(libc::SYS_ioctl, 3 as c_long, HELLO_REQUEST, &hello as *const Hello) } == 0;
    if answered {
        unsafe { fork::park() };
    }
}

//! The fork server's side in the node: parking the template before `main`,
//! and forking a parked process when the supervisor asks.
//!
//! The supervisor makes a parked process fork without the process's
//! cooperation beyond this handler, whatever call it is parked in (the
//! template's [`park`], a `read` or `accept` deep in the program or in libc):
//! it sends [`SNAPSHOT_SIGNAL`], which stays pending while the call is held,
//! then answers the call with `-ERESTARTNOINTR`. On the way back to user
//! space the kernel runs this handler and then restarts the call, so the
//! program never sees the interruption. The handler forks with
//! `CLONE_PARENT`: the child is the supervisor's child, whose exit status it
//! can read; both processes then re-issue the parked call, and the
//! supervisor holds both.
//!
//! The handler runs on its own stack, so the program's stack below its
//! pointer is the same in a fork as in the process it came from.

use core::ffi::{c_int, c_long, c_void};
use core::ptr;

use crate::sys;

/// The signal that asks a parked process to fork (the supervisor's
/// `filter::SNAPSHOT_SIGNAL`).
pub const SNAPSHOT_SIGNAL: c_int = 63;

const ALT_STACK_BYTES: usize = 64 * 1024;

#[repr(C, align(16))]
struct AltStack([u8; ALT_STACK_BYTES]);

static mut ALT_STACK: AltStack = AltStack([0; ALT_STACK_BYTES]);

/// Installs the handler on its own stack; `false` if the kernel refused.
///
/// # Safety
/// Called once, from the constructor, before the program runs.
pub unsafe fn install() -> bool {
    unsafe {
        let stack = sys::stack_t {
            ss_sp: ptr::addr_of_mut!(ALT_STACK).cast::<c_void>(),
            ss_flags: 0,
            ss_size: ALT_STACK_BYTES,
        };
        if sys::sigaltstack(&stack, ptr::null_mut()) != 0 {
            return false;
        }
        let mut action: sys::sigaction = core::mem::zeroed();
        action.sa_sigaction = on_snapshot as *const () as usize;
        action.sa_flags = sys::SA_SIGINFO | sys::SA_ONSTACK;
        sys::sigfillset(&mut action.sa_mask);
        sys::sigaction(SNAPSHOT_SIGNAL, &action, ptr::null_mut()) == 0
    }
}

extern "C" fn on_snapshot(_sig: c_int, _info: *mut sys::siginfo_t, _context: *mut c_void) {
    unsafe {
        let errno = *sys::__errno_location();
        // No exit signal of its own: with CLONE_PARENT the child takes the
        // parent's, SIGCHLD for the supervisor.
        let r = sys::syscall(sys::SYS_clone, sys::CLONE_PARENT as c_long, 0 as c_long, 0 as c_long, 0 as c_long);
        if r == 0 {
            // The death signal is not inherited. If the supervisor died before
            // it was set, the listener is gone and every notified call fails
            // with ENOSYS: the child must not go on unsupervised.
            sys::prctl(sys::PR_SET_PDEATHSIG, sys::SIGKILL as sys::c_ulong, 0, 0, 0);
            if sys::syscall(sys::SYS_getppid) < 0 {
                sys::_exit(127);
            }
        }
        *sys::__errno_location() = errno;
    }
}

/// Parks the template: a notified `ioctl` on fd 3 that the supervisor holds.
/// A fork of it that the supervisor answers goes on into `main`; run outside
/// cmc, the call fails at once and the program starts as usual.
///
/// # Safety
/// Called from the constructor.
pub unsafe fn park() {
    unsafe { sys::syscall(sys::SYS_ioctl, 3 as c_long, crate::PARK_REQUEST, 0 as c_long) };
}

/// Overwrites the 16 bytes `getauxval(AT_RANDOM)` points at with bytes fixed
/// by the node's number (`argv[1]`). ld.so has already taken the stack
/// canary and pointer guard from them; those differ per exec, but a
/// template is exec'd once and every life is forked from it.
///
/// # Safety
/// `argv` is the program's argument vector, `argc` entries long.
pub unsafe fn fix_at_random(argc: c_int, argv: *const *const sys::c_char) {
    unsafe {
        let at = sys::getauxval(sys::AT_RANDOM) as *mut u8;
        if at.is_null() {
            return;
        }
        // FNV-1a over the node argument, spread over 16 bytes.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        if argc > 1 && !argv.is_null() && !(*argv.add(1)).is_null() {
            let mut p = *argv.add(1) as *const u8;
            while *p != 0 {
                h = (h ^ *p as u64).wrapping_mul(0x100_0000_01b3);
                p = p.add(1);
            }
        }
        for i in 0..16 {
            h = (h ^ i as u64).wrapping_mul(0x100_0000_01b3);
            *at.add(i) = (h >> 56) as u8;
        }
    }
}

//! The fork server's half in the stub: the
//! supervisor sends [`SNAPSHOT_SIGNAL`] to a process parked in a notified
//! call, answers the call with `-ERESTARTNOINTR`, and the handler forks
//! with `CLONE_PARENT`, so that the child is the supervisor's child; both
//! then re-issue the call the kernel restarts. Set in the stub before it
//! parks, so every life is made this way from the parked stub, and it
//! stays set in the lives (the stub's image stays mapped) until the
//! program or the preload replaces it.
//!
//! The handler runs on the stack the process was on (the stub's, or the
//! program's below its stack pointer: an alternate stack of the program's
//! may be too small, and the program must see none of the stub's, as after
//! an exec). What it leaves there is the same in the fork as in its
//! parent: the supervisor sends the signal with a `siginfo` that names no
//! process, and the clone's result (the child's real pid in the parent)
//! never leaves a register.

use crate::protocol::{EXIT_ORPHAN, SNAPSHOT_SIGNAL};
use crate::sys;

/// Installs the handler; `false` if the kernel refused it.
///
/// # Safety
/// Called once, before parking.
pub unsafe fn install() -> bool {
    let act = sys::KernelSigaction {
        handler: on_snapshot as *const () as usize,
        flags: sys::SA_SIGINFO | sys::SA_RESTORER,
        restorer: sys::restorer(),
        // Every signal blocked while it runs.
        mask: !0,
    };
    unsafe { sys::rt_sigaction(SNAPSHOT_SIGNAL as usize, &act) == 0 }
}

extern "C" fn on_snapshot(_sig: i32, _info: *const sys::SiginfoHead, _context: *mut u8) {
    // No exit signal of its own: with CLONE_PARENT the child takes the
    // parent's, SIGCHLD for the supervisor. Only whether this is the child
    // leaves the assembly: the parent's `rax` (the child's pid) is zeroed.
    let child: usize;
    unsafe {
        core::arch::asm!(
            "syscall",
            "xor ecx, ecx",
            "test rax, rax",
            "sete cl",
            "xor eax, eax",
            inlateout("rax") sys::SYS_CLONE => _,
            in("rdi") sys::CLONE_PARENT,
            in("rsi") 0usize,
            in("rdx") 0usize,
            in("r10") 0usize,
            in("r8") 0usize,
            lateout("rcx") child,
            lateout("r11") _,
            options(nostack),
        );
    }
    if child != 0 {
        // The death signal is not inherited. If the supervisor died before
        // it was set, its listener is gone and every notified call fails
        // with ENOSYS: the child must not go on unsupervised.
        sys::prctl(sys::PR_SET_PDEATHSIG, sys::SIGKILL);
        if unsafe { sys::syscall3(sys::SYS_GETPPID, 0, 0, 0) } < 0 {
            sys::exit_group(EXIT_ORPHAN);
        }
    }
}

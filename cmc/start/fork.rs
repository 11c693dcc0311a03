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
//!
//! A process with threads is forked in two steps (the signal's `si_value`
//! says which, `protocol::SNAP_*`): at its park each thread held in a
//! call is signalled in turn and *captures* its frame into its slot
//! ([`SLOTS`]), the call restarting; a fork is then asked of one of them,
//! whose child makes every other thread again from its slot (a fork
//! copies only the thread that makes it). The new threads come back to
//! their held calls.

use crate::protocol::{EXIT_ORPHAN, EXIT_THREADS, SNAPSHOT_SIGNAL};
use crate::protocol::{SLOT_CAPTURED, SLOT_FORKER, SLOT_TOO_LARGE, THREAD_SLOTS, ThreadSlot};
use crate::protocol::{SNAP_CAPTURE, SNAP_FORK_THREADS};
use crate::sys;

/// The threads of a parked process, one slot per thread by the world's
/// number (`protocol::ThreadSlot`): the supervisor writes what it knows
/// of each, a capture adds its frame, and a fork of the process makes
/// them again from there. In the stub's image, so in every life at the
/// address the hello gives; its pages are touched only by processes that
/// make threads.
pub static mut SLOTS: [ThreadSlot; THREAD_SLOTS] = unsafe { core::mem::zeroed() };

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

/// Where the kernel's `ucontext` keeps `uc_mcontext.fpstate`.
const UC_FPSTATE: usize = 224;
/// `FP_XSTATE_MAGIC1`, at offset 464 of an extended state the kernel
/// saved with `xsave`, followed by its `extended_size`.
const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;
/// The legacy `fxsave` area's size, all there is without that magic.
const FXSAVE_BYTES: usize = 512;

extern "C" fn on_snapshot(_sig: i32, info: *const sys::SiginfoHead, context: *mut u8) {
    // `si_value` of an `SI_QUEUE` signal, after its pid and uid.
    let mode = unsafe { (info as *const u8).add(24).cast::<u64>().read_unaligned() };
    match mode & 0xff {
        SNAP_CAPTURE => unsafe { capture((mode >> 8) as usize & 0xff, context) },
        SNAP_FORK_THREADS => {
            if fork() {
                unsafe { make_threads() }
            }
        }
        _ => {
            fork();
        }
    }
}

/// Forks with `CLONE_PARENT`; `true` in the child.
fn fork() -> bool {
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
    child != 0
}

/// Copies this thread's frame (`context`, the kernel's `ucontext`), its
/// extended state and its thread pointer into slot `k`.
///
/// # Safety
/// `context` is the handler's third argument.
unsafe fn capture(k: usize, context: *mut u8) {
    if k >= THREAD_SLOTS {
        return;
    }
    // The only reference to the slot while this thread is held (the
    // supervisor captures each thread into its own).
    let slot = unsafe { &mut (*(&raw mut SLOTS))[k] };
    let frame = unsafe { core::slice::from_raw_parts(context, slot.frame.len()) };
    slot.frame.copy_from_slice(frame);
    let fpstate = u64::from_ne_bytes(slot.frame[UC_FPSTATE..UC_FPSTATE + 8].try_into().unwrap_or_default());
    let mut bytes = 0;
    if fpstate != 0 {
        let at = |off: usize| unsafe { ((fpstate as usize + off) as *const u32).read_unaligned() };
        bytes = if at(464) == FP_XSTATE_MAGIC1 { at(468) as usize } else { FXSAVE_BYTES };
        if bytes > slot.xsave.len() {
            slot.kind = SLOT_TOO_LARGE;
            return;
        }
        let state = unsafe { core::slice::from_raw_parts(fpstate as *const u8, bytes) };
        slot.xsave[..bytes].copy_from_slice(state);
        let moved = slot.xsave.as_ptr() as u64;
        slot.frame[UC_FPSTATE..UC_FPSTATE + 8].copy_from_slice(&moved.to_ne_bytes());
    }
    slot.xsave_bytes = bytes as u64;
    unsafe { sys::syscall3(sys::SYS_ARCH_PRCTL, sys::ARCH_GET_FS, (&raw mut slot.tls) as usize, 0) };
    slot.kind = SLOT_CAPTURED;
}

/// In a fork's child: the forking thread's robust list and cleared-tid
/// word as they were, then every other thread the slots record, made
/// again one after the other in slot order.
///
/// # Safety
/// In the child of a fork of a parked process whose slots the supervisor
/// wrote; every signal is blocked (the handler's mask), and each new
/// thread starts with that mask.
unsafe fn make_threads() {
    let slots = unsafe { &*(&raw const SLOTS) };
    for slot in slots.iter().filter(|s| s.kind == SLOT_FORKER) {
        unsafe {
            sys::syscall3(sys::SYS_SET_TID_ADDRESS, slot.child_tid as usize, 0, 0);
            sys::syscall3(sys::SYS_SET_ROBUST_LIST, slot.robust as usize, 24, 0);
        }
    }
    for slot in slots {
        let made = match slot.kind {
            SLOT_CAPTURED => unsafe { again_captured(slot) },
            _ => 0,
        };
        if made < 0 {
            sys::exit_group(EXIT_THREADS);
        }
    }
}

/// A thread made again from its captured frame: it sets its robust list
/// and name, and `rt_sigreturn` (its stack pointer at the frame, as after
/// a handler's `ret`) puts it back at its held call with its registers,
/// extended state, signal mask and alternate stack.
///
/// # Safety
/// As [`make_threads`]; `slot` is a captured one.
unsafe fn again_captured(slot: &ThreadSlot) -> isize {
    let r: isize;
    unsafe {
        core::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            // The new thread, on the frame.
            "mov rdi, r12",
            "mov esi, 24",
            "mov eax, {robust}",
            "syscall",
            "mov edi, {set_name}",
            "mov rsi, r13",
            "mov eax, {prctl}",
            "syscall",
            "mov eax, {sigreturn}",
            "syscall",
            "ud2",
            "2:",
            robust = const sys::SYS_SET_ROBUST_LIST,
            set_name = const sys::PR_SET_NAME,
            prctl = const sys::SYS_PRCTL,
            sigreturn = const sys::SYS_RT_SIGRETURN,
            inlateout("rax") sys::SYS_CLONE as isize => r,
            in("rdi") sys::CLONE_THREAD_AGAIN,
            in("rsi") slot.frame.as_ptr(),
            in("rdx") 0usize,
            in("r10") slot.child_tid,
            in("r8") slot.tls,
            in("r12") slot.robust,
            in("r13") slot.name.as_ptr(),
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    r
}

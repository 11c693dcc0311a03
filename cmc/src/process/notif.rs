//! Thin wrappers over the seccomp user-notification ioctls and over the
//! target's memory (`process_vm_readv`/`writev`). No policy lives here: the
//! supervisor decides what to answer.
//!
//! A target killed while its call is held makes `SEND` and `ADDFD` fail with
//! `ENOENT`; callers treat that as "the node is gone" and learn of its death
//! from its pidfd (research, pitfall 11).

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::libc;

/// One received notification.
#[derive(Clone, Copy, Debug)]
pub struct Notif {
    /// The kernel's id of the notification, which the answer names.
    pub id: u64,
    /// The calling thread's id, as the supervisor's pid namespace sees it.
    pub pid: u32,
    /// The system call's number (of `arch`).
    pub nr: i64,
    /// The calling convention's architecture (`AUDIT_ARCH_X86_64`, or
    /// `AUDIT_ARCH_I386` for `int 0x80`).
    pub arch: u32,
    /// The call's six arguments, as registers.
    pub args: [u64; 6],
    /// The instruction pointer after the call's `syscall` instruction.
    pub ip: u64,
}

/// Receives one notification. `Ok(None)` when the notifying task died
/// before it could be received (`ENOENT`).
pub fn recv(listener: BorrowedFd<'_>) -> Result<Option<Notif>, Errno> {
    // The buffer must be zeroed, or RECV fails with EINVAL.
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV as _, &mut n) };
    if r < 0 {
        return match Errno::last() {
            Errno::ENOENT => Ok(None),
            e => Err(e),
        };
    }
    Ok(Some(Notif {
        id: n.id,
        pid: n.pid,
        nr: n.data.nr as i64,
        arch: n.data.arch,
        args: n.data.args,
        ip: n.data.instruction_pointer,
    }))
}

/// Completes a held call with `val` (when `error` is 0) or `-error`.
/// `Ok(false)` when the target is gone.
pub fn respond(listener: BorrowedFd<'_>, id: u64, val: i64, error: i32) -> Result<bool, Errno> {
    let resp = libc::seccomp_notif_resp { id, val, error: -error, flags: 0 };
    send(listener, &resp)
}

/// Lets the kernel run the held call as the target made it.
pub fn continue_call(listener: BorrowedFd<'_>, id: u64) -> Result<bool, Errno> {
    let resp = libc::seccomp_notif_resp { id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
    send(listener, &resp)
}

fn send(listener: BorrowedFd<'_>, resp: &libc::seccomp_notif_resp) -> Result<bool, Errno> {
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND as _, resp) };
    if r < 0 {
        return match Errno::last() {
            Errno::ENOENT => Ok(false),
            e => Err(e),
        };
    }
    Ok(true)
}

/// Installs `src` in the target at the lowest free descriptor and completes
/// the held call with that number, atomically (`ADDFD_FLAG_SEND`), as a real
/// `socket()` or `accept()` would. `Ok(None)` when the target is gone.
pub fn add_fd_and_return(
    listener: BorrowedFd<'_>,
    id: u64,
    src: BorrowedFd<'_>,
    cloexec: bool,
) -> Result<Option<i32>, Errno> {
    add_fd_at_and_return(listener, id, src, None, cloexec)
}

/// Installs the supervisor's `src` in the target at descriptor number `at`
/// (replacing one open there, as `dup2` does) without completing the held
/// call. `Ok(false)` when the target is gone.
pub fn add_fd_at(listener: BorrowedFd<'_>, id: u64, src: BorrowedFd<'_>, at: i32) -> Result<bool, Errno> {
    add_fd_at_flagged(listener, id, src, at, false)
}

/// [`add_fd_at`], with the new descriptor close-on-exec if `cloexec`.
pub fn add_fd_at_flagged(
    listener: BorrowedFd<'_>,
    id: u64,
    src: BorrowedFd<'_>,
    at: i32,
    cloexec: bool,
) -> Result<bool, Errno> {
    let add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: src.as_raw_fd() as u32,
        newfd: at as u32,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ADDFD as _, &add) };
    if r < 0 {
        return match Errno::last() {
            Errno::ENOENT => Ok(false),
            e => Err(e),
        };
    }
    Ok(true)
}

/// [`add_fd_and_return`] at descriptor number `at` (`SECCOMP_ADDFD_FLAG_SETFD`,
/// which replaces a descriptor open there, as `dup2` does), or at the
/// lowest free number for `None`.
pub fn add_fd_at_and_return(
    listener: BorrowedFd<'_>,
    id: u64,
    src: BorrowedFd<'_>,
    at: Option<i32>,
    cloexec: bool,
) -> Result<Option<i32>, Errno> {
    let setfd = if at.is_some() { libc::SECCOMP_ADDFD_FLAG_SETFD as u32 } else { 0 };
    let add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32 | setfd,
        srcfd: src.as_raw_fd() as u32,
        newfd: at.unwrap_or(0) as u32,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ADDFD as _, &add) };
    if r < 0 {
        return match Errno::last() {
            Errno::ENOENT => Ok(None),
            e => Err(e),
        };
    }
    Ok(Some(r))
}

/// Reads `len` bytes at `addr` in process `pid`. `None` for a bad address
/// (the caller answers `EFAULT`, as the kernel would).
pub fn read_mem(pid: u32, addr: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Some(buf);
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: len };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len };
    let n = unsafe { libc::process_vm_readv(pid as i32, &local, 1, &remote, 1, 0) };
    (n == len as isize).then_some(buf)
}

thread_local! {
    /// What [`write_mem`] has written into each process since the last
    /// [`take_written`] for it: its pid and a running digest of each
    /// address and its bytes. The answer that follows the writes folds it
    /// into the node's inputs (`NodeState::Inputs`). Only the checker's
    /// own bookkeeping between a call and its answer, never the world: the
    /// world keeps the digest.
    static WRITTEN: std::cell::RefCell<Vec<(u32, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Writes `bytes` at `addr` in process `pid`. `false` for a bad address.
pub fn write_mem(pid: u32, addr: u64, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let local = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: bytes.len() };
    let n = unsafe { libc::process_vm_writev(pid as i32, &local, 1, &remote, 1, 0) };
    let written = n == bytes.len() as isize;
    if written {
        WRITTEN.with_borrow_mut(|w| {
            let i = w.iter().position(|&(p, _)| p == pid).unwrap_or_else(|| {
                w.push((pid, 0));
                w.len() - 1
            });
            let mut h = xxhash_rust::xxh3::Xxh3::with_seed(w[i].1);
            h.update(&addr.to_le_bytes());
            h.update(bytes);
            w[i].1 = h.digest();
        });
    }
    written
}

/// The digest of what [`write_mem`] wrote into process `pid` since the
/// last call of this for it (0 for nothing), and forgets it.
pub fn take_written(pid: u32) -> u64 {
    WRITTEN.with_borrow_mut(|w| match w.iter().position(|&(p, _)| p == pid) {
        Some(i) => w.swap_remove(i).1,
        None => 0,
    })
}

/// What process `pid` was written since the last answer is, as far as
/// its answer goes, `bytes` at `addr` (written already, in this step or
/// in earlier ones): for a receive that fills one buffer over several
/// actions, whose first parts the world kept while it waited
/// (`NodeWorld::waitall`), and whose pieces must digest as the whole
/// buffer, however they came.
pub fn restage_written(pid: u32, addr: u64, bytes: &[u8]) {
    let mut h = xxhash_rust::xxh3::Xxh3::with_seed(0);
    h.update(&addr.to_le_bytes());
    h.update(bytes);
    let digest = h.digest();
    WRITTEN.with_borrow_mut(|w| {
        w.retain(|&(p, _)| p != pid);
        w.push((pid, digest));
    });
}

/// Forgets what [`write_mem`] wrote into every process: at each action,
/// so that what a process was written in a step and not answered (a
/// `recv` with `MSG_WAITALL` that waits on, its bytes kept in the world)
/// is never folded into another step's answer.
pub fn forget_written() {
    WRITTEN.with_borrow_mut(Vec::clear);
}

/// Reads a NUL-terminated path of at most `max` bytes.
pub fn read_cstr(pid: u32, addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        // Read up to the end of the page, so a string that ends just before
        // an unmapped page is still read.
        let chunk = (4096 - (at % 4096) as usize).min(max - out.len());
        let bytes = read_mem(pid, at, chunk)?;
        if let Some(end) = bytes.iter().position(|&b| b == 0) {
            out.extend_from_slice(&bytes[..end]);
            return Some(out);
        }
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    None
}

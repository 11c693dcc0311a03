//! The machine's files and devices as a node has them open, in the world:
//! a file or directory of the machine, read only (`VFd::Host`), a device of
//! no state (`VFd::Device`: `/dev/null`, `/dev/zero`, `/dev/full`), and the
//! node's stdout and stderr (`VFd::Out`).
//!
//! Why in the world: a snapshot and every fork of it share the kernel's
//! open file descriptions, so a file offset moved by one fork, or a status
//! flag set by one, would be seen by its siblings, state outside the world
//! (issue 26, classes 1, 6 and 7). So the checker opens what a node opens
//! itself and hands the node the descriptor (`SECCOMP_IOCTL_NOTIF_ADDFD`),
//! and answers every call that reads or moves an offset or a status flag
//! from the world: a file's reads at the offset the world holds (with
//! `pread` on a description of its own), its seeks and its directory
//! listings; writes to stdout and stderr are kept by the checker (a trace's
//! output, the log), and the node's descriptor is `/dev/null`. What the
//! kernel may answer itself, it does: a mapping of a file, a read of
//! `/dev/zero`, `fstat` (through `files::stat_host`, times fixed).
//!
//! It owns these answers; the opens' policy (what may be opened at all) is
//! `files`'.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::VFd;
use super::super::{ProcessError, syscalls};
use super::Answer;
use super::buffers::{gather, iovecs, scatter};

/// The status flags an open keeps (as `F_GETFL` shows them); the others
/// (`O_CREAT`, `O_CLOEXEC`, ...) act at the open only.
const KEPT_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_DIRECTORY
    | libc::O_NOFOLLOW
    | libc::O_NOATIME
    | libc::O_PATH
    | libc::O_LARGEFILE
    | libc::O_DIRECT
    | libc::O_SYNC
    | libc::O_DSYNC;

/// The most a read of a machine's file hands over at once (a larger buffer
/// gets this much, as a short read).
const READ_BYTES_MAX: usize = 1 << 20;

fn open_own(path: &str, flags: i32) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::ENOENT)?;
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(nix::errno::Errno::last_raw());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A description of the checker's own of node process `pid`'s descriptor
/// `fd` (a fresh one, through `/proc/PID/fd`), to read at an offset.
fn reopen(pid: u32, fd: i32, directory: bool) -> Result<OwnedFd, i32> {
    let flags = libc::O_RDONLY | if directory { libc::O_DIRECTORY } else { 0 };
    open_own(&format!("/proc/{pid}/fd/{fd}"), flags)
}

impl Supervisor {
    /// An open of a file of the machine (its policy checked by `on_open`):
    /// the checker opens the resolved path itself, read only, and hands the
    /// node its descriptor; the world holds the file and the offset. A
    /// device of no state is the real device, its status flags in the
    /// world.
    pub(super) fn open_host(
        &mut self,
        n: u8,
        c: &Notif,
        shown: &str,
        stat: Option<&libc::stat>,
        flags: i32,
    ) -> Result<Answer, ProcessError> {
        let device = stat.and_then(|st| {
            let char_device = st.st_mode & libc::S_IFMT == libc::S_IFCHR && libc::major(st.st_rdev) == 1;
            char_device.then(|| libc::minor(st.st_rdev) as u8)
        });
        let own = flags & (KEPT_FLAGS | libc::O_NOCTTY) & !libc::O_APPEND;
        let file = match open_own(shown, own) {
            Ok(f) => f,
            Err(errno) => return Ok(Answer::Err(errno)),
        };
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
            return Ok(Answer::Err(nix::errno::Errno::last_raw()));
        }
        // A file of /proc is the world's by its path (its own pid written
        // `self`), not by the inode procfs made when it was looked up,
        // which differs between lives and runs.
        let ino = super::paths::proc_ino(shown, c.pid).unwrap_or(st.st_ino);
        let vfd = match device {
            Some(minor) if flags & libc::O_PATH == 0 => VFd::Device { minor, mode: (flags & libc::O_ACCMODE) as u8 },
            _ => VFd::Host { dev: st.st_dev, ino, offset: 0, flags: (flags & KEPT_FLAGS) as u32 },
        };
        let cloexec = flags & libc::O_CLOEXEC != 0;
        if let Some(fd) = self.add_fd_of(n, c, file.as_fd(), cloexec)? {
            let node = &mut self.world.nodes[n as usize];
            node.fds.insert(fd, vfd);
            if flags & libc::O_NONBLOCK != 0 {
                node.nonblock.insert(fd);
            }
        }
        Ok(Answer::Done)
    }

    /// A read of a file of the machine (`read`, `readv`, and at `at` the
    /// positional ones): from the checker's own description, at the offset
    /// the world holds (moving it), or at `at` (not).
    pub(super) fn read_host(&mut self, n: u8, c: &Notif, fd: i32, at: Option<u64>) -> Answer {
        let Some(&VFd::Host { offset, flags, .. }) = self.world.nodes[n as usize].fds.get(&fd) else {
            return Answer::Err(libc::EBADF);
        };
        let flags = flags as i32;
        if flags & libc::O_PATH != 0 || flags & libc::O_ACCMODE == libc::O_WRONLY {
            return Answer::Err(libc::EBADF);
        }
        if matches!(c.nr, libc::SYS_recvfrom | libc::SYS_recvmsg) {
            return Answer::Err(libc::ENOTSOCK);
        }
        let own = match reopen(c.pid, fd, false) {
            Ok(f) => f,
            Err(libc::EISDIR) => return Answer::Err(libc::EISDIR),
            Err(e) => return Answer::Err(e),
        };
        let room = match iovecs(c) {
            Ok(v) => v.iter().map(|&(_, len)| len).sum::<usize>().min(READ_BYTES_MAX),
            Err(e) => return Answer::Err(e),
        };
        let from = at.unwrap_or(offset);
        let mut buf = vec![0u8; room];
        let got = unsafe { libc::pread(own.as_raw_fd(), buf.as_mut_ptr().cast(), room, from as i64) };
        if got < 0 {
            return Answer::Err(nix::errno::Errno::last_raw());
        }
        buf.truncate(got as usize);
        match scatter(c, &buf) {
            Ok(k) => {
                if at.is_none()
                    && let Some(VFd::Host { offset, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd)
                {
                    *offset = from + k as u64;
                }
                Answer::Val(k as i64)
            }
            Err(e) => Answer::Err(e),
        }
    }

    /// `lseek` of a file or directory of the machine: the offset in the
    /// world. `SEEK_END`, `SEEK_DATA` and `SEEK_HOLE` ask the checker's own
    /// description (the file's size and holes are the file's); a
    /// directory's position is a `d_off` that a listing gave.
    pub(super) fn seek_host(&mut self, n: u8, c: &Notif, fd: i32) -> Answer {
        let Some(&VFd::Host { offset, flags, .. }) = self.world.nodes[n as usize].fds.get(&fd) else {
            return Answer::Err(libc::EBADF);
        };
        if flags as i32 & libc::O_PATH != 0 {
            return Answer::Err(libc::EBADF);
        }
        let directory = flags as i32 & libc::O_DIRECTORY != 0;
        let (delta, whence) = (c.args[1] as i64, c.args[2] as i32);
        let to = match whence {
            libc::SEEK_SET => Some(delta),
            libc::SEEK_CUR => (offset as i64).checked_add(delta),
            _ if directory => return Answer::Err(libc::EINVAL),
            libc::SEEK_END | libc::SEEK_DATA | libc::SEEK_HOLE => {
                let own = match reopen(c.pid, fd, false) {
                    Ok(f) => f,
                    Err(e) => return Answer::Err(e),
                };
                let r = unsafe { libc::lseek(own.as_raw_fd(), delta, whence) };
                if r < 0 {
                    return Answer::Err(nix::errno::Errno::last_raw());
                }
                Some(r)
            }
            _ => return Answer::Err(libc::EINVAL),
        };
        match to {
            Some(to) if to >= 0 => {
                if let Some(VFd::Host { offset, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
                    *offset = to as u64;
                }
                Answer::Val(to)
            }
            _ => Answer::Err(libc::EINVAL),
        }
    }

    /// `getdents64` of a directory of the machine: listed by the checker's
    /// own description from the position the world holds.
    pub(super) fn list_host(&mut self, n: u8, c: &Notif, fd: i32) -> Answer {
        let Some(&VFd::Host { offset, flags, .. }) = self.world.nodes[n as usize].fds.get(&fd) else {
            return Answer::Err(libc::EBADF);
        };
        if flags as i32 & libc::O_PATH != 0 {
            return Answer::Err(libc::EBADF);
        }
        let own = match reopen(c.pid, fd, true) {
            Ok(f) => f,
            Err(e) => return Answer::Err(e),
        };
        let room = (c.args[2] as usize).min(READ_BYTES_MAX);
        let mut buf = vec![0u8; room];
        let r = unsafe {
            if libc::lseek(own.as_raw_fd(), offset as i64, libc::SEEK_SET) < 0 {
                return Answer::Err(nix::errno::Errno::last_raw());
            }
            libc::syscall(libc::SYS_getdents64, own.as_raw_fd(), buf.as_mut_ptr(), room)
        };
        if r < 0 {
            return Answer::Err(nix::errno::Errno::last_raw());
        }
        let next = unsafe { libc::lseek(own.as_raw_fd(), 0, libc::SEEK_CUR) };
        if !notif::write_mem(c.pid, c.args[1], &buf[..r as usize]) {
            return Answer::Err(libc::EFAULT);
        }
        if let Some(VFd::Host { offset, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
            *offset = next.max(0) as u64;
        }
        Answer::Val(r as i64)
    }

    /// A write to the node's stdout or stderr: kept by the checker (the
    /// log, a trace's output), all of it written, as to `/dev/null`.
    pub(super) fn write_out(&mut self, n: u8, c: &Notif, stream: u8) -> Answer {
        if matches!(c.nr, libc::SYS_sendto | libc::SYS_sendmsg) {
            return Answer::Err(libc::ENOTSOCK);
        }
        let data = match gather(c) {
            Ok(d) => d,
            Err(e) => return Answer::Err(e),
        };
        let len = match iovecs(c) {
            Ok(v) => v.iter().map(|&(_, len)| len).sum::<usize>(),
            Err(e) => return Answer::Err(e),
        };
        self.log_output(n, stream, &data);
        if self.capture {
            self.captured(n, &data);
        }
        // Before the preload's hello only the start stub writes, and only
        // why it could not load the program: kept for the error.
        if stream == 2 && !self.greeted[n as usize] {
            let kept = &mut self.start_message[n as usize];
            let room = super::super::supervisor::START_MESSAGE_MAX.saturating_sub(kept.len());
            kept.extend_from_slice(&data[..data.len().min(room)]);
        }
        Answer::Val(len as i64)
    }

    /// `sendfile(out, in, offset, count)` from a file of the machine to
    /// the node's stdout, stderr or `/dev/null`: the bytes read from the
    /// file (at `*offset`, moving it, or at the file's offset, moving that)
    /// and written where they go.
    pub(super) fn sendfile_host(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (out_fd, in_fd) = (c.args[0] as i32, c.args[1] as i32);
        let fds = &self.world.nodes[n as usize].fds;
        let (Some(&VFd::Host { offset, flags, .. }), Some(&out)) = (fds.get(&in_fd), fds.get(&out_fd)) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        if flags as i32 & (libc::O_PATH | libc::O_DIRECTORY) != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let from = if c.args[2] != 0 {
            match notif::read_mem(c.pid, c.args[2], 8) {
                Some(b) => i64::from_ne_bytes(b.try_into().unwrap_or_default()) as u64,
                None => return Ok(Answer::Err(libc::EFAULT)),
            }
        } else {
            offset
        };
        let own = match reopen(c.pid, in_fd, false) {
            Ok(f) => f,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let count = (c.args[3] as usize).min(READ_BYTES_MAX);
        let mut buf = vec![0u8; count];
        let got = unsafe { libc::pread(own.as_raw_fd(), buf.as_mut_ptr().cast(), count, from as i64) };
        if got < 0 {
            return Ok(Answer::Err(nix::errno::Errno::last_raw()));
        }
        buf.truncate(got as usize);
        match out {
            VFd::Out { stream } => {
                self.log_output(n, stream, &buf);
                if self.capture {
                    self.captured(n, &buf);
                }
            }
            VFd::Device { minor: 3, .. } => {}
            VFd::Device { minor: 7, .. } => return Ok(Answer::Err(libc::ENOSPC)),
            _ => {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: syscalls::describe(c.nr),
                    detail: format!("a transfer to {} is not modelled: use read and write", super::files::kind(out)),
                });
            }
        }
        let next = from + buf.len() as u64;
        if c.args[2] != 0 {
            if !notif::write_mem(c.pid, c.args[2], &(next as i64).to_ne_bytes()) {
                return Ok(Answer::Err(libc::EFAULT));
            }
        } else if let Some(VFd::Host { offset, .. }) = self.world.nodes[n as usize].fds.get_mut(&in_fd) {
            *offset = next;
        }
        Ok(Answer::Val(buf.len() as i64))
    }
}

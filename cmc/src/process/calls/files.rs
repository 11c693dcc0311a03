//! Descriptors and files: `open` and `openat` (only random devices are
//! modelled; any other file opens for real), and the calls on a
//! descriptor that are not I/O on it: `close`, `ioctl`, `fcntl`, `lseek`,
//! `dup`, `dup2`, `dup3`, `close_range`, the transfers between two
//! descriptors (`sendfile`, `splice`, `tee`, `vmsplice`,
//! `copy_file_range`), `epoll_ctl`, `sendmmsg` and `recvmmsg`.
//!
//! On a file each runs (CONTINUE). On a descriptor the checker owns (a
//! connection, a socket, a random device, fds 3 and 193) it is answered,
//! or refused when the model has no meaning for it (duplicating a
//! connection, non-blocking I/O, polling). It does not read or write
//! connections (`connections`) nor produce random bytes (`random`).

use nix::libc;

use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::VFd;
use super::{Answer, HELLO_REQUEST, refuse};

/// `ioctl`: a hello after the first is answered 0; no descriptor the
/// checker owns is a terminal; any other request on a connection is
/// refused.
pub(super) fn on_ioctl(n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    let fd = c.args[0] as i32;
    let reserved = fd == 3 || fd == 193;
    Ok(match vfd {
        _ if fd == 3 && c.args[1] == HELLO_REQUEST => Answer::Val(0),
        _ if reserved => Answer::Err(libc::ENOTTY),
        Some(_) if c.args[1] == libc::TCGETS => Answer::Err(libc::ENOTTY),
        Some(_) => return refuse(n, c, "ioctl on a connection (non-blocking I/O and FIONREAD are not modelled)"),
        None => Answer::Continue,
    })
}

pub(super) fn on_fcntl(n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    let fd = c.args[0] as i32;
    let reserved = fd == 3 || fd == 193;
    Ok(match (vfd, c.args[1] as i32) {
        (_, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) if vfd.is_some() || reserved => {
            return refuse(n, c, "duplicating a connection or fd 3 or 193");
        }
        (Some(_), libc::F_GETFL) => Answer::Val(libc::O_RDWR as i64),
        (Some(_), libc::F_SETFL) if c.args[2] as i32 & libc::O_NONBLOCK != 0 => {
            return refuse(n, c, "non-blocking I/O on a connection is not modelled");
        }
        (Some(_), libc::F_SETFL) => Answer::Val(0),
        (Some(_), libc::F_GETFD | libc::F_SETFD) => Answer::Continue,
        (Some(_), _) => {
            return refuse(n, c, "fcntl on a connection other than F_GETFL, F_SETFL, F_GETFD, F_SETFD");
        }
        (None, _) => Answer::Continue,
    })
}

/// A socket cannot seek. The placeholder can, and stdio, told that a
/// connection seeks, drops the input it has buffered when it syncs a
/// stream.
pub(super) fn on_lseek(vfd: Option<VFd>) -> Answer {
    match vfd {
        Some(VFd::Conn { .. } | VFd::Socket { .. }) => Answer::Err(libc::ESPIPE),
        _ => Answer::Continue,
    }
}

pub(super) fn on_mmsg(n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    match vfd {
        Some(_) => refuse(n, c, "sendmmsg and recvmmsg on a connection are not modelled"),
        None => Ok(Answer::Continue),
    }
}

impl Supervisor {
    /// A random device becomes the node's; any other path opens for real.
    pub(super) fn on_open(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (path_at, flags) = if c.nr == libc::SYS_open { (c.args[0], c.args[1]) } else { (c.args[1], c.args[2]) };
        let Some(path) = notif::read_cstr(c.pid, path_at, 4096) else { return Ok(Answer::Continue) };
        if !matches!(path.as_slice(), b"/dev/urandom" | b"/dev/random" | b"/dev/srandom") {
            return Ok(Answer::Continue);
        }
        let cloexec = flags as i32 & libc::O_CLOEXEC != 0;
        Ok(match self.add_fd(n, c, cloexec)? {
            Some(fd) => {
                self.world.nodes[n as usize].fds.insert(fd, VFd::Random);
                Answer::Done
            }
            None => Answer::Done,
        })
    }

    /// Closing a descriptor the checker owns forgets it (and closes the
    /// node's end of a connection); the placeholder closes for real. Fds 3
    /// and 193 stay open.
    pub(super) fn on_close(&mut self, n: u8, fd: i32, vfd: Option<VFd>) -> Answer {
        match vfd {
            _ if fd == 3 || fd == 193 => Answer::Val(0),
            Some(v) => {
                self.world.nodes[n as usize].fds.remove(&fd);
                if let VFd::Conn { label, side } = v {
                    self.world.close_end(&label, side);
                }
                Answer::Continue
            }
            None => Answer::Continue,
        }
    }

    /// `dup`, `dup2`, `dup3`: of files only.
    pub(super) fn on_dup(&self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        if c.nr == libc::SYS_dup {
            let fd = c.args[0] as i32;
            if vfd.is_some() || fd == 3 || fd == 193 {
                return refuse(n, c, "duplicating a connection or fd 3 or 193");
            }
            return Ok(Answer::Continue);
        }
        let fds = &self.world.nodes[n as usize].fds;
        let touches = |f: i32| fds.contains_key(&f) || f == 3 || f == 193;
        if touches(c.args[0] as i32) || touches(c.args[1] as i32) {
            return refuse(n, c, "duplicating onto or from a connection or fd 3 or 193");
        }
        Ok(Answer::Continue)
    }

    pub(super) fn on_close_range(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (lo, hi) = (c.args[0] as u32 as i64, c.args[1] as u32 as i64);
        let fds = &self.world.nodes[n as usize].fds;
        let touches = |f: i64| (lo..=hi).contains(&f);
        if touches(3) || touches(193) || fds.keys().any(|&f| touches(f as i64)) {
            return refuse(n, c, "closing a range that holds a connection or fd 3 or 193");
        }
        Ok(Answer::Continue)
    }

    /// `sendfile`, `splice`, `tee`, `vmsplice`, `copy_file_range`: between
    /// files only.
    pub(super) fn on_transfer(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        // The descriptors each call takes (vmsplice takes one).
        let ends = match c.nr {
            libc::SYS_sendfile | libc::SYS_tee => [c.args[0], c.args[1]],
            libc::SYS_vmsplice => [c.args[0], c.args[0]],
            _ => [c.args[0], c.args[2]],
        };
        if ends.iter().any(|&f| self.owns(n, f as i32)) {
            return refuse(
                n,
                c,
                "a transfer to or from a connection, a socket, /dev/urandom or fd 3 or 193 is not modelled: use read and write",
            );
        }
        Ok(Answer::Continue)
    }

    pub(super) fn on_epoll_ctl(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if self.owns(n, c.args[2] as i32) {
            return refuse(
                n,
                c,
                "polling a connection or socket is not modelled: block in read or accept, and TIMEOUT fires",
            );
        }
        Ok(Answer::Continue)
    }
}

//! Descriptors and files: the opens (`open`, `openat`, `openat2`,
//! `creat`), which resolve their path (`paths`) and decide by what it is (a
//! random device becomes the node's random stream, a file of time or
//! entropy is refused, an open that would write is refused but of
//! `/dev/null`, anything else opens for real); every call that would
//! change the file system, each refused with the path it names, because a
//! node's file system is read-only (a file it wrote would be seen by its
//! sibling lives, the forks of its snapshots and its next life after a
//! crash: state outside the world); and the calls on a descriptor that are
//! not I/O on it: `close`, `ioctl`, `fcntl`, `lseek`, `dup`, `dup2`,
//! `dup3`, `close_range`, the transfers between two descriptors
//! (`sendfile`, `splice`, `tee`, `vmsplice`, `copy_file_range`),
//! `epoll_ctl`, `sendmmsg` and `recvmmsg`.
//!
//! On a file each runs (CONTINUE), unless it would change the file (file
//! flags, locks). On a descriptor the checker owns (a connection, a socket,
//! a random device, fds 3 and 193) it is answered, or refused when the
//! model has no meaning for it (duplicating a connection, non-blocking
//! I/O, polling). It does not read or write connections (`connections`)
//! nor produce random bytes (`random`).

use nix::libc;
use nix::libc::{F_NOTIFY, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_SETLK, F_SETLKW};

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{ProcessWorld, VFd};
use super::super::{ProcessError, syscalls};
use super::disk::DataPath;
use super::{Answer, HELLO_REQUEST, paths, refuse};

/// An open's directory, path and flags, whichever call made it.
struct Open {
    dirfd: i32,
    path: Vec<u8>,
    flags: i32,
}

/// `None` when the kernel would refuse the call before looking at the path
/// (an unreadable path or `struct open_how`, a short or unknown one):
/// running it gets the kernel's answer.
fn open_request(c: &Notif) -> Option<Open> {
    let path = |at: u64| notif::read_cstr(c.pid, at, libc::PATH_MAX as usize);
    Some(match c.nr {
        libc::SYS_open => Open { dirfd: libc::AT_FDCWD, path: path(c.args[0])?, flags: c.args[1] as i32 },
        libc::SYS_creat => Open {
            dirfd: libc::AT_FDCWD,
            path: path(c.args[0])?,
            flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
        },
        libc::SYS_openat2 => {
            // struct open_how { u64 flags, mode, resolve; }
            if c.args[3] < 24 {
                return None;
            }
            let how = notif::read_mem(c.pid, c.args[2], 8)?;
            let flags = u64::from_ne_bytes(how.try_into().ok()?);
            Open { dirfd: c.args[0] as i32, path: path(c.args[1])?, flags: i32::try_from(flags).ok()? }
        }
        _ => Open { dirfd: c.args[0] as i32, path: path(c.args[1])?, flags: c.args[2] as i32 },
    })
}

/// Whether an open with `flags` could change a file or the file system.
/// `O_PATH` opens nothing (the kernel ignores the other flags).
fn writes(flags: i32) -> bool {
    if flags & libc::O_PATH != 0 {
        return false;
    }
    flags & libc::O_ACCMODE != libc::O_RDONLY
        || flags & (libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND) != 0
        || flags & libc::O_TMPFILE == libc::O_TMPFILE
}

/// Whether an open follows a symbolic link as its last component.
fn follows(flags: i32) -> bool {
    flags & libc::O_NOFOLLOW == 0 && flags & (libc::O_CREAT | libc::O_EXCL) != libc::O_CREAT | libc::O_EXCL
}

/// The random devices: `/dev/random` (1:8) and `/dev/urandom` (1:9),
/// however the path spells them.
fn is_random_device(file: &paths::Resolved) -> bool {
    file.is_char_device(1, 8) || file.is_char_device(1, 9)
}

/// Files whose contents are the machine's time or entropy, by their path
/// after resolution (a trailing `/` names a directory and all in it): each
/// is an error to open. Other host-dependent files (`/proc/PID/*`, the
/// machine's memory and processors) are not listed: see SEMANTICS.
const TIME_AND_ENTROPY: &[(&str, &str)] = &[
    ("/proc/sys/kernel/random/", "the kernel's entropy (boot_id, uuid, entropy_avail)"),
    ("/proc/uptime", "real time"),
    ("/proc/stat", "real time (boot time, CPU times)"),
    ("/proc/loadavg", "the machine's load"),
    ("/proc/schedstat", "real time (scheduler times)"),
    ("/proc/timer_list", "real time (timers)"),
    ("/proc/interrupts", "the machine's interrupt counts"),
    ("/proc/softirqs", "the machine's interrupt counts"),
    ("/proc/driver/rtc", "real time (the hardware clock)"),
    ("/dev/rtc", "real time (the hardware clock)"),
    ("/dev/hwrng", "the hardware's entropy"),
];

fn time_or_entropy(shown: &str) -> Option<&'static str> {
    TIME_AND_ENTROPY.iter().find_map(|&(path, what)| {
        let hit = match path.strip_suffix('/') {
            Some(dir) => shown.starts_with(path) || shown == dir,
            // `/dev/rtc` is also `/dev/rtc0`, `/dev/rtc1`.
            None if path == "/dev/rtc" => {
                shown.strip_prefix(path).is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
            }
            None => shown == path,
        };
        hit.then_some(what)
    })
}

fn read_only(node: u8, call: String, path: String) -> ProcessError {
    ProcessError::File {
        node,
        call,
        path,
        detail: "a node's file system is read-only (what it wrote would outlive its crashes, snapshots and replays, outside the world)".to_string(),
    }
}

/// Which of a call's arguments name the file it would change.
#[derive(Clone, Copy)]
enum Names {
    /// A path relative to the working directory.
    Path(usize),
    /// A directory descriptor and a path relative to it.
    At(usize, usize),
    /// A descriptor.
    Fd(usize),
    /// `At`, or the descriptor itself when the path is empty or null
    /// (`AT_EMPTY_PATH`, `futimens`).
    AtOrFd(usize, usize),
}

/// The system calls that change the file system (or the machine's view of
/// it), with where each names the file.
fn changed(nr: i64) -> Option<Names> {
    use Names::*;
    Some(match nr {
        libc::SYS_unlink | libc::SYS_rename | libc::SYS_mkdir | libc::SYS_rmdir | libc::SYS_mknod => Path(0),
        libc::SYS_chmod | libc::SYS_chown | libc::SYS_lchown | libc::SYS_truncate => Path(0),
        libc::SYS_utime | libc::SYS_utimes => Path(0),
        libc::SYS_setxattr | libc::SYS_lsetxattr | libc::SYS_removexattr | libc::SYS_lremovexattr => Path(0),
        libc::SYS_link | libc::SYS_symlink => Path(1),
        libc::SYS_umount2 | libc::SYS_chroot | libc::SYS_pivot_root | libc::SYS_swapon | libc::SYS_swapoff => Path(0),
        libc::SYS_acct => Path(0),
        libc::SYS_mount | libc::SYS_quotactl => Path(1),
        libc::SYS_unlinkat | libc::SYS_renameat | libc::SYS_renameat2 | libc::SYS_mkdirat | libc::SYS_mknodat => {
            At(0, 1)
        }
        libc::SYS_fchmodat => At(0, 1),
        libc::SYS_linkat => At(2, 3),
        libc::SYS_symlinkat => At(1, 2),
        libc::SYS_fchmod | libc::SYS_fchown | libc::SYS_ftruncate | libc::SYS_fallocate => Fd(0),
        libc::SYS_fsetxattr | libc::SYS_fremovexattr => Fd(0),
        libc::SYS_fchownat | libc::SYS_utimensat | libc::SYS_futimesat => AtOrFd(0, 1),
        SYS_FCHMODAT2 | SYS_SETXATTRAT | SYS_REMOVEXATTRAT | SYS_FILE_SETATTR => AtOrFd(0, 1),
        _ => return None,
    })
}

/// Calls newer than the `libc` crate's list (Linux 6.6 to 6.17).
pub(super) const SYS_FCHMODAT2: i64 = 452;
pub(super) const SYS_SETXATTRAT: i64 = 463;
pub(super) const SYS_REMOVEXATTRAT: i64 = 466;
pub(super) const SYS_FILE_SETATTR: i64 = 469;

/// The system calls that change the file system, as the filter notifies
/// them.
pub const CHANGE_FILES: &[i64] = &[
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_rmdir,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_mknod,
    libc::SYS_mknodat,
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    SYS_FCHMODAT2,
    libc::SYS_chown,
    libc::SYS_fchown,
    libc::SYS_lchown,
    libc::SYS_fchownat,
    libc::SYS_truncate,
    libc::SYS_ftruncate,
    libc::SYS_fallocate,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_utimensat,
    libc::SYS_futimesat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    SYS_SETXATTRAT,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_REMOVEXATTRAT,
    SYS_FILE_SETATTR,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_chroot,
    libc::SYS_pivot_root,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
];

/// `ioctl`: a hello after the first is answered 0; no descriptor the
/// checker owns is a terminal; any other request on a connection is
/// refused.
/// `O_NONBLOCK` on (`on`) or off for descriptor `fd`.
fn set_nonblock(nonblock: &mut std::collections::BTreeSet<i32>, fd: i32, on: bool) {
    if on {
        nonblock.insert(fd);
    } else {
        nonblock.remove(&fd);
    }
}

/// `ioctl`: on a descriptor the checker owns, `FIONBIO` (non-blocking on
/// or off) and `FIONREAD` (the bytes received and not read) are answered
/// from the world, and a terminal's `TCGETS` fails as on a socket.
pub(super) fn on_ioctl(world: &mut ProcessWorld, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    let fd = c.args[0] as i32;
    let reserved = fd == 3 || fd == 193;
    Ok(match vfd {
        _ if fd == 3 && c.args[1] == HELLO_REQUEST => Answer::Val(0),
        _ if reserved => Answer::Err(libc::ENOTTY),
        Some(_) if c.args[1] == libc::TCGETS => Answer::Err(libc::ENOTTY),
        Some(_) if c.args[1] == libc::FIONBIO => {
            let Some(b) = notif::read_mem(c.pid, c.args[2], 4) else { return Ok(Answer::Err(libc::EFAULT)) };
            let on = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) != 0;
            set_nonblock(&mut world.nodes[n as usize].nonblock, fd, on);
            Answer::Val(0)
        }
        Some(v) if c.args[1] == libc::FIONREAD => {
            let bytes: usize = match v {
                VFd::Conn { label, side } => {
                    world.conns.get(&label).map_or(0, |conn| conn.at(side).iter().map(Vec::len).sum())
                }
                _ => 0,
            };
            let ok = notif::write_mem(c.pid, c.args[2], &(bytes as i32).to_ne_bytes());
            if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
        }
        Some(_) => return refuse(n, c, "ioctl on a connection other than FIONBIO, FIONREAD and TCGETS"),
        None if FILE_SETTERS.contains(&c.args[1]) => {
            return Err(read_only(n, format!("ioctl {:#x}", c.args[1]), paths::of_fd(c.pid, fd)));
        }
        None => Answer::Continue,
    })
}

/// The `ioctl`s that change a file through a descriptor opened only for
/// reading: its flags (`chattr`), version, extended attributes, encryption
/// policy, verity and the file system's label; and the clones and dedupes
/// that write another file.
const FILE_SETTERS: &[u64] = &[
    0x4008_6602, // FS_IOC_SETFLAGS
    0x4004_6602, // FS_IOC32_SETFLAGS
    0x4008_7602, // FS_IOC_SETVERSION
    0x4004_7602, // FS_IOC32_SETVERSION
    0x401c_5820, // FS_IOC_FSSETXATTR
    0x800c_6613, // FS_IOC_SET_ENCRYPTION_POLICY
    0x4080_6685, // FS_IOC_ENABLE_VERITY
    0x4100_9432, // FS_IOC_SETFSLABEL
    0x4004_9409, // FICLONE
    0x4020_940d, // FICLONERANGE
    0xc018_9436, // FIDEDUPERANGE
];

pub(super) fn on_fcntl(
    nonblock: &mut std::collections::BTreeSet<i32>,
    n: u8,
    c: &Notif,
    vfd: Option<VFd>,
) -> Result<Answer, ProcessError> {
    let fd = c.args[0] as i32;
    let reserved = fd == 3 || fd == 193;
    Ok(match (vfd, c.args[1] as i32) {
        (_, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) if vfd.is_some() || reserved => {
            return refuse(n, c, "duplicating a connection or fd 3 or 193");
        }
        (Some(_), libc::F_GETFL) => {
            let flags = libc::O_RDWR | if nonblock.contains(&fd) { libc::O_NONBLOCK } else { 0 };
            Answer::Val(flags as i64)
        }
        (Some(_), libc::F_SETFL) => {
            set_nonblock(nonblock, fd, c.args[2] as i32 & libc::O_NONBLOCK != 0);
            Answer::Val(0)
        }
        (Some(_), libc::F_GETFD | libc::F_SETFD) => Answer::Continue,
        (Some(_), _) => {
            return refuse(n, c, "fcntl on a connection other than F_GETFL, F_SETFL, F_GETFD, F_SETFD");
        }
        (None, F_SETLK | F_SETLKW | F_OFD_SETLK | F_OFD_SETLKW | F_SETLEASE | F_NOTIFY) => {
            return refuse(
                n,
                c,
                "file locks, leases and notifications are kernel state the lives of a node would share, outside the world",
            );
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
    /// An open resolves its path as the kernel would for the node, and what
    /// it opens decides: a random device becomes the node's random stream;
    /// a file of time or entropy is refused; so is any open that would
    /// write (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`, `O_APPEND`,
    /// `O_TMPFILE`), but of `/dev/null`, because a node's file system is
    /// read-only; anything else opens for real.
    pub(super) fn on_open(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let Some(open) = open_request(c) else { return Ok(Answer::Continue) };
        if open.path.is_empty() {
            return Ok(Answer::Continue);
        }
        let file = self.resolve_at(n, c.pid, open.dirfd, &open.path, follows(open.flags));
        let call = syscalls::describe(c.nr);
        if is_random_device(&file) && open.flags & libc::O_PATH == 0 {
            let cloexec = open.flags & libc::O_CLOEXEC != 0;
            if let Some(fd) = self.add_fd(n, c, cloexec)? {
                self.world.nodes[n as usize].fds.insert(fd, VFd::Random);
            }
            return Ok(Answer::Done);
        }
        if let Some(place) = self.data_path(&file.shown) {
            return self.open_data(n, c, place, &file.shown, open.flags);
        }
        if let Some(what) = time_or_entropy(&file.shown) {
            return Err(ProcessError::File {
                node: n,
                call,
                path: file.shown,
                detail: format!("{what} would reach the node, outside the world"),
            });
        }
        if writes(open.flags) && !file.is_char_device(1, 3) {
            return Err(read_only(n, call, file.shown));
        }
        Ok(Answer::Continue)
    }

    /// Before the preload's hello, an open runs unless it would write:
    /// ld.so and libc only read. The preload's own write of its memory
    /// (`/proc/self/mem`, where `mprotect` cannot patch the vDSO) and
    /// `/dev/null` are not the file system.
    pub(super) fn on_open_before_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let Some(open) = open_request(c) else { return Ok(Answer::Continue) };
        if open.path.is_empty() || !writes(open.flags) {
            return Ok(Answer::Continue);
        }
        let file = paths::resolve(c.pid, open.dirfd, &open.path, follows(open.flags));
        if file.is_char_device(1, 3) || file.shown == format!("/proc/{}/mem", c.pid) {
            return Ok(Answer::Continue);
        }
        Err(read_only(n, syscalls::describe(c.nr), file.shown))
    }

    /// A call that would change the file system: refused, naming the path
    /// it would change.
    pub(super) fn on_file_system(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let call = syscalls::describe(c.nr);
        let Some(names) = changed(c.nr) else { return refuse(n, c, "it would change the file system") };
        let path_at = |i: usize| if c.args[i] == 0 { None } else { notif::read_cstr(c.pid, c.args[i], 4096) };
        // Making a directory that exists changes nothing: the kernel's
        // answer is EEXIST (sanitizer runtimes make sure of /tmp so).
        let made = match c.nr {
            libc::SYS_mkdir => path_at(0).map(|p| self.resolve_at(n, c.pid, libc::AT_FDCWD, &p, false)),
            libc::SYS_mkdirat => path_at(1).map(|p| self.resolve_at(n, c.pid, c.args[0] as i32, &p, false)),
            _ => None,
        };
        if made.is_some_and(|r| r.stat.is_some()) {
            return Ok(Answer::Err(libc::EEXIST));
        }
        let resolve = |dirfd: i32, path: Vec<u8>| self.resolve_at(n, c.pid, dirfd, &path, false).shown;
        // The data directory's: answered from the world.
        let fd_vfd = |f: usize| self.world.nodes[n as usize].fds.get(&(c.args[f] as i32)).copied();
        if let Names::Fd(f) = names
            && let Some(v @ (VFd::File { .. } | VFd::Dir { .. })) = fd_vfd(f)
        {
            if c.nr == libc::SYS_ftruncate {
                return self.truncate_file(n, c, v);
            }
            return Err(ProcessError::File {
                node: n,
                call,
                path: "(a descriptor of the data directory)".to_string(),
                detail: "only creating, writing, truncating, unlinking and renaming files of the data directory"
                    .to_string(),
            });
        }
        let named: Vec<String> = match (c.nr, names) {
            (libc::SYS_rename, _) => {
                [0, 1].iter().filter_map(|&i| path_at(i)).map(|p| resolve(libc::AT_FDCWD, p)).collect()
            }
            (libc::SYS_renameat | libc::SYS_renameat2, _) => {
                [(0, 1), (2, 3)].iter().filter_map(|&(d, i)| path_at(i).map(|p| resolve(c.args[d] as i32, p))).collect()
            }
            (_, Names::Path(i)) => path_at(i).map(|p| resolve(libc::AT_FDCWD, p)).into_iter().collect(),
            (_, Names::At(d, i)) => path_at(i).map(|p| resolve(c.args[d] as i32, p)).into_iter().collect(),
            _ => Vec::new(),
        };
        if named.iter().any(|p| self.data_path(p).is_some()) {
            let places: Vec<(String, Option<DataPath>)> =
                named.into_iter().map(|p| (p.clone(), self.data_path(&p))).collect();
            return self.change_names(n, c, &places);
        }
        let path = match names {
            Names::Path(i) => path_at(i).map_or_else(|| "(no path)".to_string(), |p| resolve(libc::AT_FDCWD, p)),
            Names::At(d, i) => path_at(i).map_or_else(|| "(no path)".to_string(), |p| resolve(c.args[d] as i32, p)),
            Names::Fd(f) => paths::of_fd(c.pid, c.args[f] as i32),
            Names::AtOrFd(d, i) => match path_at(i) {
                Some(p) if !p.is_empty() => resolve(c.args[d] as i32, p),
                _ if c.args[d] as i32 == libc::AT_FDCWD => resolve(libc::AT_FDCWD, b".".to_vec()),
                _ => paths::of_fd(c.pid, c.args[d] as i32),
            },
        };
        if matches!(c.nr, libc::SYS_mount | libc::SYS_umount2 | libc::SYS_chroot | libc::SYS_pivot_root)
            || matches!(c.nr, libc::SYS_swapon | libc::SYS_swapoff | libc::SYS_acct | libc::SYS_quotactl)
        {
            return Err(ProcessError::File {
                node: n,
                call,
                path,
                detail: "mounts, the root, swap, accounting and quotas are the machine's, outside the world"
                    .to_string(),
            });
        }
        Err(read_only(n, call, path))
    }

    /// Closing a descriptor the checker owns forgets it (and closes the
    /// node's end of a connection); the placeholder closes for real. Fds 3
    /// and 193 stay open.
    pub(super) fn on_close(&mut self, n: u8, fd: i32, vfd: Option<VFd>) -> Answer {
        match vfd {
            _ if fd == 3 || fd == 193 => Answer::Val(0),
            Some(v) => {
                let node = &mut self.world.nodes[n as usize];
                node.fds.remove(&fd);
                node.nonblock.remove(&fd);
                // An epoll instance goes with its descriptor; a closed
                // descriptor leaves every interest list (it has no
                // duplicate to keep it open).
                node.epolls.remove(&fd);
                node.timers.remove(&fd);
                let closed_file = matches!(v, VFd::File { .. });
                for interest in node.epolls.values_mut() {
                    interest.remove(&fd);
                }
                if let VFd::Conn { label, side } = v {
                    self.world.close_end(&label, side);
                }
                if closed_file {
                    // An unlinked file goes with its last descriptor.
                    self.collect_files(n);
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
}

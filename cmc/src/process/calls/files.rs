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
//! a pipe, a socketpair, an eventfd, a random device, fds 3 and 193) it is
//! answered, or refused when the model has no meaning for it (duplicating
//! a connection, resizing a pipe). It does not read or write connections
//! (`connections`) nor objects inside a node (`local`), nor produce random
//! bytes (`random`).

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use nix::libc;
use nix::libc::{F_NOTIFY, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_SETLK, F_SETLKW};

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Local, NodeWorld, ProcessWorld, VFd};
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

/// What a node may read of the machine's special file systems, by path
/// after resolution (`SEMANTICS.md`, "What a node may read of the
/// machine"): what is the same on every run of the same model on the same
/// machine, each allowed as an exact file, never a subtree (a directory of
/// settings may hold counters too). In `/proc`, its own process's fixed
/// files (a process's `/proc/self` is `/proc/PID`, its real pid; its
/// descriptors' links are `fd/N`) and a few settings of the kernel; in
/// `/sys`, the processors' numbering, the CPU quota of the node's own
/// cgroup and of those above it, and the huge-page settings. Anything else
/// there holds real time, real entropy, the machine's load or memory, the
/// process's own counters (CPU time, page faults, context switches, real
/// pids), another process, or another cgroup's settings: `hidden` says
/// why.
const PROC_SELF: &[&str] = &[
    "",
    "maps",
    "exe",
    "cmdline",
    "environ",
    "comm",
    "limits",
    "mem",
    "cgroup",
    "mountinfo",
    "mounts",
    "fd",
    "root",
    "cwd",
];
const PROC_FIXED: &[&str] = &[
    "/proc/filesystems",
    "/proc/sys/vm/overcommit_memory",
    "/proc/sys/vm/max_map_count",
    "/proc/sys/kernel/pid_max",
    "/proc/sys/kernel/threads-max",
    "/proc/sys/net/core/somaxconn",
];
const SYS_FIXED: &[&str] = &[
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/kernel_max",
];
/// The settings of transparent huge pages (`/sys/kernel/mm/
/// transparent_hugepage/`; allocators read `enabled` and
/// `hpage_pmd_size`), and of each page size (`hugepages-<size>kB/`): not
/// the counters beside them (`hugepages-*/stats/`, `khugepaged/full_scans`,
/// `pages_collapsed`), which every process of the machine moves.
const THP: &str = "/sys/kernel/mm/transparent_hugepage/";
const THP_SETTINGS: &[&str] = &[
    "enabled",
    "defrag",
    "hpage_pmd_size",
    "shmem_enabled",
    "use_zero_page",
    "khugepaged/defrag",
    "khugepaged/pages_to_scan",
    "khugepaged/scan_sleep_millisecs",
    "khugepaged/alloc_sleep_millisecs",
    "khugepaged/max_ptes_none",
    "khugepaged/max_ptes_swap",
    "khugepaged/max_ptes_shared",
];
const THP_SIZE_SETTINGS: &[&str] = &["enabled", "shmem_enabled"];
/// A cgroup's CPU quota files (v2 and v1) and its controllers, which
/// runtimes read to size their thread pools (Rust's
/// `available_parallelism` walks up from the process's cgroup).
const CGROUP_NAMES: &[&str] = &["cpu.max", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cgroup.controllers"];

/// Whether `after` (a path under `THP`) is one of its settings.
fn thp_setting(after: &str) -> bool {
    if THP_SETTINGS.contains(&after) {
        return true;
    }
    let Some((dir, name)) = after.split_once('/') else { return false };
    let size = dir.strip_prefix("hugepages-").and_then(|d| d.strip_suffix("kB"));
    size.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())) && THP_SIZE_SETTINGS.contains(&name)
}

/// The cgroup files a node may read: [`CGROUP_NAMES`] in the directory of
/// each cgroup the checker (and so every node, its child) belongs to, and
/// in each directory above it up to its hierarchy's mount, as
/// `/proc/self/cgroup` and `/proc/self/mountinfo` give them; read once.
fn cgroup_files() -> &'static std::collections::BTreeSet<String> {
    static FILES: std::sync::OnceLock<std::collections::BTreeSet<String>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let mut files = std::collections::BTreeSet::new();
        let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        // (root in the hierarchy, mount point, file system type, super options)
        let mounts: Vec<(&str, &str, &str, &str)> = mounts
            .lines()
            .filter_map(|l| {
                let (before, after) = l.split_once(" - ")?;
                let f: Vec<&str> = before.split(' ').collect();
                let a: Vec<&str> = after.split(' ').collect();
                Some((*f.get(3)?, *f.get(4)?, *a.first()?, *a.get(2)?))
            })
            .filter(|m| m.2 == "cgroup" || m.2 == "cgroup2")
            .collect();
        for line in groups.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            for &(root, point, fs, options) in &mounts {
                let ours = if id == "0" && controllers.is_empty() {
                    fs == "cgroup2"
                } else {
                    fs == "cgroup" && controllers.split(',').any(|k| options.split(',').any(|o| o == k))
                };
                let Some(rel) = path.strip_prefix(root.trim_end_matches('/')) else { continue };
                if !ours {
                    continue;
                }
                let mut dir = std::path::PathBuf::from(format!("{point}/{}", rel.trim_start_matches('/')));
                loop {
                    for name in CGROUP_NAMES {
                        files.insert(dir.join(name).to_string_lossy().into_owned());
                    }
                    if dir.as_os_str().len() <= point.len() || !dir.pop() {
                        break;
                    }
                }
            }
        }
        files
    })
}

/// Why node process `pid` may not read `shown` (a resolved path), or
/// `None` when it may. `Err` is a path that names another process, which a
/// node cannot see: it does not exist for it (ENOENT, as `/proc` mounted
/// with `hidepid=invisible` answers).
pub(super) fn hidden(shown: &str, pid: u32, stat: Option<&libc::stat>) -> Result<Option<&'static str>, i32> {
    if let Some(rest) = shown.strip_prefix("/proc/") {
        let (first, after) = rest.split_once('/').unwrap_or((rest, ""));
        if first.bytes().all(|b| b.is_ascii_digit()) && !first.is_empty() {
            if first != pid.to_string() {
                return Err(libc::ENOENT);
            }
            // Its own process, or its one thread (whose files are the
            // process's; its `task` directory would list the real tid).
            let own = format!("task/{pid}");
            let after = after.strip_prefix(&own).map_or(after, |a| a.trim_start_matches('/'));
            let link =
                after.strip_prefix("fd/").is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
            if after == "auxv" {
                return Ok(Some(
                    "its auxiliary vector is the start stub's (every life is a fork of it), not the one the program was given, which getauxval reads",
                ));
            }
            let fixed = PROC_SELF.contains(&after) || link;
            return Ok((!fixed).then_some(
                "it holds the process's own counters (CPU time, faults, switches, real pids, descriptions), different on every run",
            ));
        }
        if PROC_FIXED.contains(&shown) {
            return Ok(None);
        }
        if shown.starts_with("/proc/sys/kernel/random") {
            return Ok(Some("the kernel's entropy would reach the node, outside the world"));
        }
        return Ok(Some("the machine's time, load, memory or processes would reach the node, outside the world"));
    }
    if shown == "/proc" {
        return Ok(Some("listing the machine's processes would reach the node, outside the world"));
    }
    if shown.starts_with("/sys/") || shown == "/sys" {
        let thp = shown.strip_prefix(THP).is_some_and(thp_setting);
        if SYS_FIXED.contains(&shown) || thp || cgroup_files().contains(shown) {
            return Ok(None);
        }
        if shown.starts_with(THP) || shown.starts_with("/sys/fs/cgroup/") {
            return Ok(Some(
                "a machine-wide counter, or another cgroup's settings, would reach the node, outside the world",
            ));
        }
        return Ok(Some("the machine's devices and figures would reach the node, outside the world"));
    }
    if shown.starts_with("/dev/shm/") || shown == "/dev/shm" {
        return Ok(Some("shared memory would be shared with other processes, outside the world"));
    }
    if let Some(st) = stat {
        let kind = st.st_mode & libc::S_IFMT;
        let dev = (libc::major(st.st_rdev), libc::minor(st.st_rdev));
        // /dev/null, /dev/zero and /dev/full (the random devices are
        // modelled before this is asked).
        if kind == libc::S_IFCHR && !matches!(dev, (1, 3) | (1, 5) | (1, 7)) {
            return Ok(Some("a device would reach the machine (a terminal, a clock, hardware), outside the world"));
        }
        if kind == libc::S_IFBLK {
            return Ok(Some("a block device is the machine's, outside the world"));
        }
        if kind == libc::S_IFIFO || kind == libc::S_IFSOCK {
            return Ok(Some("a named pipe or socket would reach another process, outside the world"));
        }
    }
    Ok(None)
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
/// What a descriptor the checker answers for is, for error messages.
pub(super) fn kind(v: VFd) -> &'static str {
    match v {
        VFd::Socket { .. } => "a socket",
        VFd::Conn { .. } => "a connection",
        VFd::Random { .. } => "a random device",
        VFd::Epoll { .. } => "an epoll instance",
        VFd::Timer => "a timerfd",
        VFd::File { .. } => "a data-directory file",
        VFd::Dir { .. } => "the data directory",
        VFd::Device { .. } => "a device (/dev/null, /dev/zero, /dev/full)",
        VFd::Out { .. } => "stdout or stderr",
        VFd::Host { .. } => "a file of the machine",
        VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. } => super::local::kind(v),
    }
}

/// Whether a descriptor's status flags would be shared with duplicates the
/// model does not follow: stdin, stdout, stderr and `/dev/null` are
/// duplicated freely (`dup2` onto 0 to 2), so changing their flags is
/// refused rather than kept per descriptor.
pub(super) fn shared_flags(v: VFd) -> bool {
    matches!(v, VFd::Device { .. } | VFd::Out { .. })
}

/// What descriptor `fd` of a node is, for error messages: fd 3 and 193
/// are the records.
fn kind_of(fd: i32, v: Option<VFd>) -> &'static str {
    match v {
        Some(v) => kind(v),
        None if fd == 3 => "fd 3, the state record",
        None if fd == 193 => "fd 193, the durable record",
        None => "a file",
    }
}

/// `O_NONBLOCK` on (`on`) or off for descriptor `fd`.
fn set_nonblock(nonblock: &mut std::collections::BTreeSet<i32>, fd: i32, on: bool) {
    if on {
        nonblock.insert(fd);
    } else {
        nonblock.remove(&fd);
    }
}

/// `O_NONBLOCK` on or off for descriptor `fd` and every duplicate of it
/// the world keeps apart from its description: a flag of the open file
/// description, which a `dup` shares (the ends of pipes, socketpairs and
/// eventfds; the devices' duplicates are never changed).
fn set_nonblock_of(node: &mut NodeWorld, fd: i32, on: bool) {
    let v = node.fds.get(&fd).copied();
    let same: Vec<i32> = match v {
        Some(v) if v.local_id().is_some() => node.fds.iter().filter(|&(_, w)| *w == v).map(|(&f, _)| f).collect(),
        _ => vec![fd],
    };
    for f in same {
        set_nonblock(&mut node.nonblock, f, on);
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
        None | Some(VFd::Host { .. }) if FILE_SETTERS.contains(&c.args[1]) => {
            return Err(read_only(n, format!("ioctl {:#x}", c.args[1]), paths::of_fd(c.pid, fd)));
        }
        // What a file's flags, version and attributes are, and setting the
        // descriptor's own close-on-exec: the kernel's answer.
        Some(VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. }) if HARMLESS_IOCTLS.contains(&c.args[1]) => {
            Answer::Continue
        }
        // Not a terminal: EINVAL from the random devices and epoll, ENOTTY
        // from the others, as Linux answers for each.
        Some(VFd::Random { .. } | VFd::Epoll { .. }) if c.args[1] == libc::TCGETS => Answer::Err(libc::EINVAL),
        Some(_) if c.args[1] == libc::TCGETS => Answer::Err(libc::ENOTTY),
        Some(v) if c.args[1] == libc::FIONBIO => {
            let Some(b) = notif::read_mem(c.pid, c.args[2], 4) else { return Ok(Answer::Err(libc::EFAULT)) };
            let on = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) != 0;
            if shared_flags(v) && on != world.nodes[n as usize].nonblock.contains(&fd) {
                return refuse(n, c, &format!("changing O_NONBLOCK of {} (fd {fd}) is not modelled", kind(v)));
            }
            set_nonblock_of(&mut world.nodes[n as usize], fd, on);
            Answer::Val(0)
        }
        Some(v) if c.args[1] == libc::FIONREAD => {
            let bytes: i64 = match v {
                VFd::Conn { label, side } => {
                    world.conns.get(&label).map_or(0, |conn| conn.received(side).iter().map(Vec::len).sum()) as i64
                }
                VFd::Socket { .. } => 0,
                // A pipe's bytes, at either end; what has arrived at a
                // socketpair end; an eventfd is no stream (ENOTTY).
                VFd::Pipe { id, .. } => match world.nodes[n as usize].locals.get(id as usize) {
                    Some(Local::Pipe { bytes }) => bytes.len() as i64,
                    _ => return Ok(Answer::Err(libc::EBADF)),
                },
                VFd::Pair { id, end } => match world.nodes[n as usize].locals.get(id as usize) {
                    Some(Local::Pair { ends, .. }) => {
                        ends[end as usize].queue.iter().map(Vec::len).sum::<usize>() as i64
                    }
                    _ => return Ok(Answer::Err(libc::EBADF)),
                },
                VFd::Event { .. } => return Ok(Answer::Err(libc::ENOTTY)),
                // A regular file's size less the offset, negative past its
                // end, as Linux's `do_vfs_ioctl` computes it.
                VFd::File { inode, offset, .. } => {
                    let len = world.nodes[n as usize].disk.current().0.get(&inode).map_or(0, Vec::len);
                    len as i64 - offset as i64
                }
                VFd::Random { .. } | VFd::Epoll { .. } => return Ok(Answer::Err(libc::EINVAL)),
                VFd::Dir { .. } | VFd::Timer | VFd::Device { .. } | VFd::Out { .. } => {
                    return Ok(Answer::Err(libc::ENOTTY));
                }
                VFd::Host { flags, .. } if flags as i32 & (libc::O_DIRECTORY | libc::O_PATH) != 0 => {
                    return Ok(Answer::Err(libc::ENOTTY));
                }
                VFd::Host { offset, .. } => {
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    let path = std::ffi::CString::new(format!("/proc/{}/fd/{fd}", c.pid)).unwrap_or_default();
                    if unsafe { libc::stat(path.as_ptr(), &mut st) } != 0 {
                        return Ok(Answer::Err(libc::EBADF));
                    }
                    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                        return Ok(Answer::Err(libc::ENOTTY));
                    }
                    st.st_size - offset as i64
                }
            };
            let ok = notif::write_mem(c.pid, c.args[2], &(bytes as i32).to_ne_bytes());
            if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
        }
        Some(v) => {
            return refuse(
                n,
                c,
                &format!(
                    "ioctl {:#x} on {} (fd {fd}): only FIONBIO, FIONREAD and TCGETS are modelled",
                    c.args[1],
                    kind(v)
                ),
            );
        }
        None => Answer::Continue,
    })
}

/// The `ioctl`s that read a file's attributes or set the descriptor's own
/// close-on-exec flag: answered by the kernel on a file of the machine.
const HARMLESS_IOCTLS: &[u64] = &[
    0x5451,      // FIOCLEX
    0x5450,      // FIONCLEX
    0x8008_6601, // FS_IOC_GETFLAGS
    0x8004_6601, // FS_IOC32_GETFLAGS
    0x8008_7601, // FS_IOC_GETVERSION
    0x801c_581f, // FS_IOC_FSGETXATTR
    0x2,         // FIGETBSZ
];

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

/// Every `fcntl` command Linux knows (`F_DUPFD` to `F_GETSIG`,
/// `F_SETOWN_EX`, `F_GETOWN_EX`, the open file description locks, and the
/// Linux-specific ones from `F_SETLEASE`): any other is EINVAL, as the
/// kernel answers.
const KNOWN_FCNTL: &[i32] = &[
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 36, 37, 38, 1024, 1025, 1026, 1027, 1028, 1030, 1031, 1032, 1033,
    1034, 1035, 1036, 1037, 1038,
];

pub(super) fn on_fcntl(node: &mut NodeWorld, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    let fd = c.args[0] as i32;
    let reserved = fd == 3 || fd == 193;
    Ok(match (vfd, c.args[1] as i32) {
        (_, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) if vfd.is_some() || reserved => {
            return refuse(n, c, &format!("duplicating {} (fd {fd}) is not modelled", kind_of(fd, vfd)));
        }
        // The records: read and written, never non-blocking. Their flags
        // are the checker's, not the placeholder's (which a snapshot's
        // forks share).
        (None, libc::F_GETFL) if reserved => Answer::Val(libc::O_RDWR as i64),
        (None, libc::F_SETFL) if reserved && c.args[2] as i32 & libc::O_NONBLOCK == 0 => Answer::Val(0),
        (None, libc::F_SETFL) if reserved => {
            return refuse(
                n,
                c,
                &format!("{} (fd {fd}) holds records: it cannot be made non-blocking", kind_of(fd, None)),
            );
        }
        (Some(v), libc::F_GETFL) => {
            let access = match v {
                VFd::Device { mode, .. } => mode as i32,
                VFd::Out { .. } | VFd::Pipe { write: true, .. } => libc::O_WRONLY,
                VFd::Pipe { write: false, .. } => libc::O_RDONLY,
                VFd::Host { flags, .. } => flags as i32 & !libc::O_NONBLOCK,
                _ => libc::O_RDWR,
            };
            let flags = access | if node.nonblock.contains(&fd) { libc::O_NONBLOCK } else { 0 };
            Answer::Val(flags as i64)
        }
        // The other status flags a pipe, socketpair or eventfd takes
        // (F_GETFL would report them; O_DIRECT makes a pipe's writes
        // packets): not modelled.
        (Some(v), libc::F_SETFL)
            if v.local_id().is_some()
                && c.args[2] as i32 & (libc::O_APPEND | libc::O_ASYNC | libc::O_DIRECT | libc::O_NOATIME) != 0 =>
        {
            return refuse(
                n,
                c,
                &format!("status flags other than O_NONBLOCK on {} (fd {fd}) are not modelled", kind(v)),
            );
        }
        (Some(VFd::Pipe { .. }), libc::F_GETPIPE_SZ) => Answer::Val(super::local::PIPE_CAPACITY),
        (Some(v @ VFd::Pipe { .. }), libc::F_SETPIPE_SZ) => {
            return refuse(n, c, &format!("resizing {} (fd {fd}) is not modelled", kind(v)));
        }
        (Some(VFd::Pair { .. } | VFd::Event { .. }), libc::F_GETPIPE_SZ | libc::F_SETPIPE_SZ) => {
            Answer::Err(libc::EBADF)
        }
        (Some(v), libc::F_SETFL) => {
            let on = c.args[2] as i32 & libc::O_NONBLOCK != 0;
            if shared_flags(v) && on != node.nonblock.contains(&fd) {
                return refuse(n, c, &format!("changing O_NONBLOCK of {} (fd {fd}) is not modelled", kind(v)));
            }
            set_nonblock_of(node, fd, on);
            Answer::Val(0)
        }
        (Some(_), libc::F_GETFD | libc::F_SETFD) => Answer::Continue,
        (Some(_), cmd) if !KNOWN_FCNTL.contains(&cmd) => Answer::Err(libc::EINVAL),
        (Some(v), cmd) => {
            return refuse(
                n,
                c,
                &format!(
                    "fcntl {cmd} on {} (fd {fd}): only F_GETFL, F_SETFL, F_GETFD and F_SETFD are modelled",
                    kind(v)
                ),
            );
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
        Some(VFd::Conn { .. } | VFd::Socket { .. } | VFd::Pipe { .. } | VFd::Pair { .. }) => Answer::Err(libc::ESPIPE),
        // An eventfd's seeks change nothing and give 0, as the
        // placeholder's.
        _ => Answer::Continue,
    }
}

pub(super) fn on_mmsg(n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
    match vfd {
        Some(_) => refuse(n, c, "sendmmsg and recvmmsg on a connection are not modelled"),
        None => Ok(Answer::Continue),
    }
}

/// Sets a `struct stat`'s three times (at 72, 88 and 104 on x86-64, each
/// seconds then nanoseconds) to 2026-01-01, the logical clock's origin: a
/// host file's times, and a special file's (a `/proc` file's are the time
/// it was looked up), are real time, different on every run.
fn fix_times(st: &mut libc::stat) {
    st.st_atime = super::time::EPOCH_BASE;
    st.st_atime_nsec = 0;
    st.st_mtime = super::time::EPOCH_BASE;
    st.st_mtime_nsec = 0;
    st.st_ctime = super::time::EPOCH_BASE;
    st.st_ctime_nsec = 0;
}

fn bytes_of(st: &libc::stat) -> &[u8] {
    // SAFETY: `struct stat` is plain data; its padding bytes are zeroed by
    // the kernel's copy and by `zeroed` where it is built here.
    unsafe { std::slice::from_raw_parts((st as *const libc::stat).cast::<u8>(), std::mem::size_of::<libc::stat>()) }
}

/// `stat` of `path` as the checker sees it, `lstat` without `follow`.
fn stat_path(path: &str, follow: bool) -> Result<libc::stat, i32> {
    let c = std::ffi::CString::new(path).map_err(|_| libc::ENOENT)?;
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    if unsafe { libc::fstatat(libc::AT_FDCWD, c.as_ptr(), &mut st, flags) } != 0 {
        return Err(nix::errno::Errno::last_raw());
    }
    Ok(st)
}

impl Supervisor {
    /// The program's path for the start stub's (`/proc/self/exe` resolves
    /// to the stub, which every life of a node is, and is the program for a
    /// kernel's exec of it); any other path as it is.
    pub(super) fn exe_alias(&self, shown: &str) -> String {
        let stub = self.stub.to_str().unwrap_or_default();
        match self.argvs.first() {
            Some(argv) if shown == stub => argv[0].to_string_lossy().into_owned(),
            _ => shown.to_string(),
        }
    }

    /// `log_dir` as the kernel names it, which no path a node names may
    /// be under (`resolve_at`): its links followed, or, should it not be
    /// there to follow (every template opens its log in it first), at
    /// least absolute, as resolved paths are.
    pub(super) fn log_dir_real(&self) -> Option<&std::path::Path> {
        self.log_dir_real
            .get_or_init(|| {
                self.cfg.log_dir.as_ref().map(|d| {
                    std::fs::canonicalize(d).unwrap_or_else(|_| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
                })
            })
            .as_deref()
    }

    /// What node `n`'s descriptor `fd`'s magic link (`/proc/self/fd/N`,
    /// `/dev/fd/N`) leads to, as the world has it: the kernel's file for a
    /// file, directory or device of the machine, stdin, stdout and stderr
    /// (which the node holds itself); the data directory's path for a
    /// descriptor of it; for anything else the world holds (whose
    /// placeholder, `/dev/null`, the kernel would find), the object, named
    /// as `readlink` names it.
    pub(super) fn through(&self, n: u8, fd: i32) -> paths::Through {
        match self.world.nodes[n as usize].fds.get(&fd) {
            None if fd != 3 && fd != 193 => paths::Through::Kernel,
            Some(VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. }) => paths::Through::Kernel,
            Some(VFd::Dir { .. }) => match &self.cfg.data_dir {
                Some(dir) => paths::Through::Dir(dir.as_os_str().as_encoded_bytes().to_vec()),
                None => paths::Through::Kernel,
            },
            v => paths::Through::World(self.link_name(n, fd).unwrap_or_else(|| kind_of(fd, v.copied()).to_string())),
        }
    }

    /// The text of node `n`'s descriptor `fd`'s magic link, as Linux gives
    /// it for what the world holds (measured natively): `socket:[INO]` for
    /// a socket, a connection or a socketpair's end and `pipe:[INO]` for
    /// either end of a pipe, with the inode `fstat` gives (`stat_host`);
    /// `anon_inode:[eventfd]`, `[eventpoll]`, `[timerfd]`; the random
    /// device's path; a data-directory file's path, or its directory's.
    /// `None` for fds 3 and 193 (the records, which a real run has as its
    /// harness made them) and for a data file with no name left (Linux
    /// names it by the name it had, with ` (deleted)`, which the world does
    /// not keep), and for a descriptor that is not the world's.
    pub(super) fn link_name(&self, n: u8, fd: i32) -> Option<String> {
        let node = &self.world.nodes[n as usize];
        let data_dir = || self.cfg.data_dir.as_ref().map(|d| d.to_string_lossy().trim_end_matches('/').to_string());
        Some(match *node.fds.get(&fd)? {
            VFd::Socket { .. } | VFd::Conn { .. } | VFd::Pair { .. } => format!("socket:[{}]", fd as u64 + 1),
            VFd::Pipe { id, .. } => {
                let lowest = node.fds.iter().find(|(_, v)| v.local_id() == Some(id)).map_or(fd, |(&f, _)| f);
                format!("pipe:[{}]", lowest as u64 + 1)
            }
            VFd::Event { .. } => "anon_inode:[eventfd]".to_string(),
            VFd::Epoll { .. } => "anon_inode:[eventpoll]".to_string(),
            VFd::Timer => "anon_inode:[timerfd]".to_string(),
            VFd::Random { minor: 8 } => "/dev/random".to_string(),
            VFd::Random { .. } => "/dev/urandom".to_string(),
            VFd::Dir { .. } => data_dir()?,
            VFd::File { inode, .. } => {
                let (_, names) = node.disk.current();
                let name = names.iter().find(|&(_, &i)| i == inode).map(|(name, _)| name)?;
                format!("{}/{}", data_dir()?, String::from_utf8_lossy(name))
            }
            VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. } => return None,
        })
    }

    /// An open of node `n`'s descriptor `fd`'s magic link when the world
    /// holds what it stands for ([`Self::through`]), as Linux opens the
    /// object itself anew, a description of its own (each answer measured
    /// natively): a data file is opened again at offset 0; a pipe gives a
    /// new end of the same pipe, reading or writing as `flags` ask
    /// (`O_RDWR`, an end that does both, is refused by name); a random
    /// device another; a socket, a connection, a socketpair's end, an
    /// eventfd, an epoll instance or a timerfd cannot be opened (ENXIO), nor
    /// be a directory (ENOTDIR). `O_PATH` of any of them, and fds 3 and 193,
    /// are refused by name.
    fn reopen(&mut self, n: u8, c: &Notif, fd: i32, flags: i32) -> Result<Answer, ProcessError> {
        let Some(v) = self.world.nodes[n as usize].fds.get(&fd).copied() else {
            return refuse(
                n,
                c,
                &format!("reopening fd {fd}, a record of the checker's, through its link in /proc is not modelled"),
            );
        };
        if let VFd::File { inode, .. } = v {
            return self.reopen_file(n, c, inode, flags);
        }
        if flags & libc::O_PATH != 0 {
            return refuse(n, c, &format!("an O_PATH open of {} (fd {fd}) through its link is not modelled", kind(v)));
        }
        if flags & libc::O_DIRECTORY != 0 {
            return Ok(Answer::Err(libc::ENOTDIR));
        }
        let cloexec = flags & libc::O_CLOEXEC != 0;
        match v {
            VFd::Pipe { id, .. } => {
                let kept = libc::O_ACCMODE | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_LARGEFILE | libc::O_NOCTTY;
                if flags & libc::O_ACCMODE == libc::O_RDWR || flags & !kept != 0 {
                    return refuse(
                        n,
                        c,
                        &format!(
                            "reopening {} (fd {fd}) with flags {flags:#o}: only a read end (O_RDONLY) or a write end (O_WRONLY), with O_NONBLOCK and O_CLOEXEC, is modelled",
                            kind(v)
                        ),
                    );
                }
                let Some(new) = self.add_fd(n, c, cloexec)? else { return Ok(Answer::Done) };
                let node = &mut self.world.nodes[n as usize];
                node.fds.insert(new, VFd::Pipe { id, write: flags & libc::O_ACCMODE == libc::O_WRONLY });
                if flags & libc::O_NONBLOCK != 0 {
                    node.nonblock.insert(new);
                }
                // The object is numbered by its lowest descriptor, which
                // the new end may be.
                node.renumber_locals();
                Ok(Answer::Done)
            }
            VFd::Random { minor } => {
                if let Some(new) = self.add_fd(n, c, cloexec)? {
                    self.world.nodes[n as usize].fds.insert(new, VFd::Random { minor });
                }
                Ok(Answer::Done)
            }
            VFd::Socket { .. }
            | VFd::Conn { .. }
            | VFd::Pair { .. }
            | VFd::Event { .. }
            | VFd::Epoll { .. }
            | VFd::Timer => Ok(Answer::Err(libc::ENXIO)),
            _ => refuse(n, c, &format!("reopening {} (fd {fd}) through its link is not modelled", kind(v))),
        }
    }

    /// `chdir`: runs, but into `/proc`, where the working directory would
    /// name the real pid (`getcwd`, relative paths) and probe which
    /// processes exist.
    pub(super) fn on_chdir(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let Some(path) = notif::read_cstr(c.pid, c.args[0], libc::PATH_MAX as usize) else {
            return Ok(Answer::Err(libc::EFAULT));
        };
        let resolved = self.resolve_at(n, c, libc::AT_FDCWD, &path, true)?;
        if resolved.fd.is_some() {
            // A descriptor's magic link to a socket, a pipe, a file.
            return Ok(Answer::Err(libc::ENOTDIR));
        }
        if resolved.through_proc && self.data_path(&resolved.shown).is_some() {
            // Through a descriptor of the data directory, whose placeholder
            // the kernel would find.
            return refuse(
                n,
                c,
                "a working directory reached through a descriptor of the data directory is not modelled",
            );
        }
        if resolved.shown == "/proc" || resolved.shown.starts_with("/proc/") {
            return Err(ProcessError::File {
                node: n,
                call: syscalls::describe(c.nr),
                path: resolved.shown,
                detail: "a working directory in /proc would name the node's real pid".to_string(),
            });
        }
        Ok(Answer::Continue)
    }

    /// A stat of a file outside the data directory, made by the checker
    /// with the times fixed (`fix_times`): a path (resolved for the node; a
    /// path into another process's `/proc` does not exist for it), or a
    /// descriptor. A connection or socket is a socket (its placeholder
    /// would say `/dev/null`), an epoll instance or timerfd an anonymous
    /// inode, as the kernel's fstat says.
    pub(super) fn stat_host(&self, n: u8, c: &Notif, of: super::disk::StatOf, at: u64) -> Answer {
        use super::disk::StatOf;
        let mut in_proc = None;
        let st = match of {
            StatOf::Path { shown, follow } => match hidden(&shown, c.pid, None) {
                Err(errno) => Err(errno),
                Ok(_) => {
                    if shown == "/proc" || shown.starts_with("/proc/") {
                        in_proc = Some(shown.clone());
                    }
                    stat_path(&self.exe_alias(&shown), follow)
                }
            },
            StatOf::Fd(fd) => match self.world.nodes[n as usize].fds.get(&fd) {
                Some(VFd::Pipe { id, .. }) => {
                    // Both ends one inode, numbered by the object's lowest
                    // descriptor (canonical, as the world numbers it).
                    let node = &self.world.nodes[n as usize];
                    let lowest = node.fds.iter().find(|(_, v)| v.local_id() == Some(*id)).map_or(fd, |(&f, _)| f);
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    st.st_mode = libc::S_IFIFO | 0o600;
                    st.st_nlink = 1;
                    st.st_blksize = 4096;
                    st.st_ino = lowest as u64 + 1;
                    st.st_uid = unsafe { libc::getuid() };
                    st.st_gid = unsafe { libc::getgid() };
                    Ok(st)
                }
                Some(VFd::Conn { .. } | VFd::Socket { .. } | VFd::Pair { .. }) => {
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    st.st_mode = libc::S_IFSOCK | 0o777;
                    st.st_nlink = 1;
                    st.st_blksize = 4096;
                    st.st_ino = fd as u64 + 1;
                    st.st_uid = unsafe { libc::getuid() };
                    st.st_gid = unsafe { libc::getgid() };
                    Ok(st)
                }
                Some(VFd::Epoll { .. } | VFd::Timer | VFd::Event { .. }) => {
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    st.st_mode = 0o600;
                    st.st_nlink = 1;
                    st.st_blksize = 4096;
                    st.st_uid = unsafe { libc::getuid() };
                    st.st_gid = unsafe { libc::getgid() };
                    Ok(st)
                }
                Some(VFd::Random { minor: 8 }) => stat_path("/dev/random", true),
                Some(VFd::Random { .. }) => stat_path("/dev/urandom", true),
                Some(VFd::File { .. } | VFd::Dir { .. }) => Err(libc::EBADF),
                Some(VFd::Host { .. })
                    if {
                        let p = paths::of_fd(c.pid, fd);
                        p == "/proc" || p.starts_with("/proc/")
                    } =>
                {
                    in_proc = Some(paths::of_fd(c.pid, fd));
                    stat_path(&format!("/proc/{}/fd/{fd}", c.pid), true)
                }
                Some(VFd::Device { .. } | VFd::Out { .. } | VFd::Host { .. }) | None => {
                    match stat_path(&format!("/proc/{}/fd/{fd}", c.pid), true) {
                        Err(libc::ENOENT) => Err(libc::EBADF),
                        other => other,
                    }
                }
            },
        };
        match st {
            Err(e) => Answer::Err(e),
            Ok(mut st) => {
                fix_times(&mut st);
                if let Some(path) = in_proc {
                    // A /proc file's inode is made when it is looked up, and
                    // names the process: one fixed by its path, the pid
                    // written as `self`.
                    st.st_ino = paths::proc_ino(&path, c.pid).unwrap_or(st.st_ino);
                    if path == "/proc" {
                        // procfs counts every process of the machine in its
                        // root's links (2, one per directory of its own,
                        // then `nr_processes()`): as for a machine whose one
                        // process is the node.
                        st.st_nlink = proc_root_links();
                    }
                }
                if notif::write_mem(c.pid, at, bytes_of(&st)) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
            }
        }
    }

    /// `fchdir`, `fadvise64`, `readahead`, `sync_file_range`: on an
    /// ordinary file or directory they run. On a data-directory file the
    /// three hints succeed as on Linux, changing nothing the node can see
    /// (`sync_file_range` makes nothing durable: it writes no metadata and
    /// flushes no disk cache, so only `fsync` does); on a socket they fail
    /// as on one; on anything else the checker answers for (the data
    /// directory itself, a random device, fds 3 and 193), including
    /// `fchdir` into the data directory, they are refused by name.
    pub(super) fn on_file_hint(&self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        if c.nr == libc::SYS_fchdir && paths::of_fd(c.pid, fd).starts_with("/proc") {
            return refuse(n, c, "a working directory in /proc would name the node's real pid");
        }
        if !self.owns(n, fd) || matches!(vfd, Some(VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. })) {
            // The kernel's answer, on the real file or device (the node's
            // stdout and stderr are /dev/null to it).
            return Ok(Answer::Continue);
        }
        Ok(match (c.nr, vfd) {
            (libc::SYS_fadvise64 | libc::SYS_readahead | libc::SYS_sync_file_range, Some(VFd::File { .. })) => {
                Answer::Val(0)
            }
            (libc::SYS_fadvise64 | libc::SYS_sync_file_range, Some(VFd::Conn { .. } | VFd::Socket { .. })) => {
                Answer::Err(libc::ESPIPE)
            }
            (libc::SYS_readahead, Some(VFd::Conn { .. } | VFd::Socket { .. })) => Answer::Err(libc::EINVAL),
            // A pipe, a socketpair, an eventfd: as Linux answers for each.
            (libc::SYS_fadvise64, Some(VFd::Pipe { .. })) => Answer::Err(libc::ESPIPE),
            (libc::SYS_fadvise64, Some(VFd::Pair { .. } | VFd::Event { .. })) => Answer::Val(0),
            (libc::SYS_readahead, Some(VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. })) => {
                Answer::Err(libc::EINVAL)
            }
            (libc::SYS_sync_file_range, Some(VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. })) => {
                Answer::Err(libc::ESPIPE)
            }
            (libc::SYS_fchdir, Some(VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. })) => {
                Answer::Err(libc::ENOTDIR)
            }
            (libc::SYS_fchdir, Some(VFd::Conn { .. } | VFd::Socket { .. } | VFd::File { .. })) => {
                Answer::Err(libc::ENOTDIR)
            }
            _ => return refuse(n, c, &format!("on fd {fd}, which the checker answers for, it is not modelled")),
        })
    }

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
        if open.path[0] != b'/' && open.dirfd != libc::AT_FDCWD && !self.owns(n, open.dirfd) {
            // A directory descriptor the node does not have.
            return Ok(Answer::Err(libc::EBADF));
        }
        let file = self.resolve_at(n, c, open.dirfd, &open.path, follows(open.flags))?;
        let call = syscalls::describe(c.nr);
        if let Some(fd) = file.fd {
            return self.reopen(n, c, fd, open.flags);
        }
        if is_random_device(&file) && open.flags & libc::O_PATH == 0 {
            let cloexec = open.flags & libc::O_CLOEXEC != 0;
            let minor = if file.is_char_device(1, 8) { 8 } else { 9 };
            if let Some(fd) = self.add_fd(n, c, cloexec)? {
                self.world.nodes[n as usize].fds.insert(fd, VFd::Random { minor });
            }
            return Ok(Answer::Done);
        }
        if let Some(place) = self.data_path(&file.shown) {
            return self.open_data(n, c, place, &file.shown, open.flags);
        }
        match hidden(&file.shown, c.pid, file.stat.as_ref()) {
            Err(errno) => return Ok(Answer::Err(errno)),
            Ok(Some(why)) => {
                // Its own /proc entry by the pid it knows, not the real one.
                let path = paths::virtual_name(&file.shown, c.pid, self.world.pid(n) as u32);
                return Err(ProcessError::File { node: n, call, path, detail: why.to_string() });
            }
            Ok(None) => {}
        }
        if writes(open.flags) && !file.is_char_device(1, 3) {
            return Err(read_only(n, call, file.shown));
        }
        let shown = self.exe_alias(&file.shown);
        self.open_host(n, c, &shown, file.stat.as_ref(), open.flags)
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
        // Only the start stub's own set-up runs here: no descriptor is the
        // world's yet.
        let node = paths::Node { pid: c.pid, vpid: self.world.pid(n) as u32, through: &|_| paths::Through::Kernel };
        let file = paths::resolve(&node, open.dirfd, &open.path, follows(open.flags));
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
            libc::SYS_mkdir => path_at(0).map(|p| self.resolve_at(n, c, libc::AT_FDCWD, &p, false)).transpose()?,
            libc::SYS_mkdirat => path_at(1).map(|p| self.resolve_at(n, c, c.args[0] as i32, &p, false)).transpose()?,
            _ => None,
        };
        if made.is_some_and(|r| r.stat.is_some()) {
            return Ok(Answer::Err(libc::EEXIST));
        }
        // (A path under log_dir is refused as any path-naming call's is;
        // here every other change is refused too.)
        let resolve = |dirfd: i32, path: Vec<u8>| match self.resolve_at(n, c, dirfd, &path, false) {
            Ok(r) => r.shown,
            Err(ProcessError::File { path, .. }) => path,
            Err(_) => String::from_utf8_lossy(&path).into_owned(),
        };
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
        // A pipe, a socketpair, an eventfd: ftruncate fails as Linux's;
        // the rest would change their inode, and are not modelled.
        if let Names::Fd(f) = names
            && let Some(v) = fd_vfd(f)
            && v.local_id().is_some()
        {
            if c.nr == libc::SYS_ftruncate {
                return Ok(Answer::Err(libc::EINVAL));
            }
            return refuse(n, c, &format!("on {} (fd {}) it is not modelled", kind(v), c.args[f] as i32));
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
                node.socket_timeouts.remove(&fd);
                node.timers.remove(&fd);
                let closed_file = matches!(v, VFd::File { .. });
                // A closed descriptor leaves every interest list (it has
                // no duplicate to keep it open), its data with it; an
                // epoll instance goes with its last descriptor (and is
                // named by its lowest one left).
                for interest in node.epolls.values_mut() {
                    interest.remove(&fd);
                }
                if let Some(p) = self.procs[n as usize].as_mut() {
                    p.cookies.retain(|&(_, watched), _| watched != fd);
                }
                if let VFd::Epoll { .. } = v {
                    self.renumber_epolls(n);
                }
                if let VFd::Conn { label, side } = v {
                    self.world.close_end(&label, side);
                }
                if let VFd::Socket { listening: true, .. } = v {
                    self.world.close_listener(n, fd);
                }
                if v.local_id().is_some() {
                    self.close_local(n, v);
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

    /// `dup`, `dup2`, `dup3` (and `fcntl`'s `F_DUPFD`, through
    /// [`Self::dup_shared`]). Stdin, stdout, stderr and the devices of no
    /// state may be duplicated, in the world and in the node (sharing the
    /// description, as Linux does), and a descriptor `dup2` would close
    /// implicitly may be any of those or a file of the machine; anything
    /// else the checker answers for is refused by name (a duplicate of a
    /// connection or of a file would share an offset or an end the world
    /// keeps once).
    pub(super) fn on_dup(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let from = c.args[0] as i32;
        let fds = &self.world.nodes[n as usize].fds;
        let refused = |f: i32, v: Option<VFd>| {
            refuse(n, c, &format!("duplicating from or onto {} (fd {f}) is not modelled", kind_of(f, v)))
        };
        match vfd {
            Some(v) if shared_flags(v) => {}
            // An epoll instance's duplicate refers to it (by its lowest
            // descriptor); `dup2` and `dup3` of one, which may close a
            // descriptor at the number they name, are not modelled.
            Some(VFd::Epoll { .. }) if c.nr == libc::SYS_dup => return self.dup_shared(n, c, from, 0, false),
            // So is a pipe's, a socketpair's or an eventfd's end's (tokio's
            // signal driver watches a duplicate of its socketpair's end).
            Some(v) if v.local_id().is_some() && c.nr == libc::SYS_dup => {
                return self.dup_shared(n, c, from, 0, false);
            }
            None if from != 3 && from != 193 => return Ok(Answer::Continue),
            v => return refused(from, v),
        }
        if c.nr == libc::SYS_dup {
            return self.dup_shared(n, c, from, 0, false);
        }
        let to = c.args[1] as i32;
        if to == from {
            return Ok(if c.nr == libc::SYS_dup3 { Answer::Err(libc::EINVAL) } else { Answer::Val(to as i64) });
        }
        let onto = fds.get(&to).copied();
        match onto {
            Some(v) if shared_flags(v) || matches!(v, VFd::Host { .. }) => {}
            None if to != 3 && to != 193 => {}
            v => return refused(to, v),
        }
        if to < 0 || c.nr == libc::SYS_dup3 && c.args[2] as i32 & !libc::O_CLOEXEC != 0 {
            // The kernel's EBADF and EINVAL.
            return Ok(Answer::Continue);
        }
        let node = &mut self.world.nodes[n as usize];
        let copied = node.fds[&from];
        node.fds.insert(to, copied);
        let on = node.nonblock.contains(&from);
        set_nonblock(&mut node.nonblock, to, on);
        Ok(Answer::Continue)
    }

    /// A duplicate of node `n`'s descriptor `from` (stdin, stdout, stderr
    /// or a device of no state) at the lowest free number from `min`: the
    /// same open file description, fetched from the node (`pidfd_getfd`)
    /// and installed at that number, and its copy in the world.
    pub(super) fn dup_shared(
        &mut self,
        n: u8,
        c: &Notif,
        from: i32,
        min: i32,
        cloexec: bool,
    ) -> Result<Answer, ProcessError> {
        if min < 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let node = &self.world.nodes[n as usize];
        let taken = |f: i32| f == 3 || f == 193 || node.fds.contains_key(&f);
        let Some(at) = (min..i32::MAX).find(|&f| !taken(f)) else { return Ok(Answer::Err(libc::EMFILE)) };
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(Answer::Done) };
        let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, p.pidfd.as_raw_fd(), from, 0) };
        if got < 0 {
            return Err(ProcessError::NodeSys { node: n, call: "pidfd_getfd", errno: nix::errno::Errno::last() });
        }
        let description = unsafe { OwnedFd::from_raw_fd(got as i32) };
        let (Some(_), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
            return Ok(Answer::Done);
        };
        match notif::add_fd_at_and_return(t.listener.as_fd(), c.id, description.as_fd(), Some(at), cloexec) {
            Ok(Some(fd)) => {
                let node = &mut self.world.nodes[n as usize];
                let copied = node.fds[&from];
                node.fds.insert(fd, copied);
                let on = node.nonblock.contains(&from);
                set_nonblock(&mut node.nonblock, fd, on);
                // A duplicate of an epoll instance may be its lowest
                // descriptor now.
                if let VFd::Epoll { .. } = copied {
                    self.renumber_epolls(n);
                }
                Ok(Answer::Done)
            }
            Ok(None) => Ok(Answer::Done),
            Err(nix::errno::Errno::EMFILE) => Ok(Answer::Err(libc::EMFILE)),
            Err(errno) => Err(ProcessError::NodeSys { node: n, call: "NOTIF_ADDFD", errno }),
        }
    }

    /// `close_range`: of descriptors the checker need not see closed (the
    /// files of the machine, the devices, stdout and stderr), forgotten in
    /// the world and closed by the kernel; a range that holds anything else
    /// the checker answers for is refused.
    pub(super) fn on_close_range(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (lo, hi) = (c.args[0] as u32 as i64, c.args[1] as u32 as i64);
        let touches = |f: i64| (lo..=hi).contains(&f);
        if c.args[2] & libc::CLOSE_RANGE_CLOEXEC as u64 != 0 {
            // Sets close-on-exec, a flag of the descriptors, not of what
            // they refer to.
            return Ok(Answer::Continue);
        }
        let node = &mut self.world.nodes[n as usize];
        let plain = |v: &VFd| shared_flags(*v) || matches!(v, VFd::Host { .. });
        if touches(3) || touches(193) || node.fds.iter().any(|(&f, v)| touches(f as i64) && !plain(v)) {
            return refuse(n, c, "closing a range that holds a connection, a socket, a data file, or fd 3 or 193");
        }
        node.fds.retain(|&f, _| !touches(f as i64));
        node.nonblock.retain(|&f| !touches(f as i64));
        Ok(Answer::Continue)
    }

    /// `sendfile`, `splice`, `tee`, `vmsplice`, `copy_file_range`: between
    /// files only.
    pub(super) fn on_transfer(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fds = &self.world.nodes[n as usize].fds;
        if c.nr == libc::SYS_sendfile
            && matches!(fds.get(&(c.args[1] as i32)), Some(VFd::Host { .. }))
            && fds.get(&(c.args[0] as i32)).is_some_and(|&v| shared_flags(v))
        {
            return self.sendfile_host(n, c);
        }
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
                "a transfer to or from a connection, a socket, a pipe, a socketpair, an eventfd, a random device, a data file or fd 3 or 193 is not modelled (only sendfile from a file to stdout, stderr or /dev/null): use read and write",
            );
        }
        Ok(Answer::Continue)
    }
}

/// The link count of `/proc` on this machine were the node its only
/// process: 2, and 1 for each directory of procfs's own (not a process's)
/// in its root, and 1 for the process. A fact of the kernel's build, the
/// same on every run.
fn proc_root_links() -> u64 {
    let own = std::fs::read_dir("/proc").map_or(0, |d| {
        d.flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| !e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
            .count()
    });
    2 + own as u64 + 1
}

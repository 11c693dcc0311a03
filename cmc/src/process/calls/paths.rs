//! Paths a node names, resolved as the kernel resolves them for that node:
//! from its root, its working directory (`/proc/PID/cwd`) or a descriptor
//! of its own (`/proc/PID/fd/N`), through its symbolic links, with
//! `/proc/self`, `/proc/thread-self` and `/proc/<its virtual pid>` meaning
//! the node, not the supervisor (so `/dev/stdout` and `/dev/fd/N` are the
//! node's). The supervisor walks the path one component at a time with
//! `O_PATH` descriptors, which open nothing for reading or writing and
//! change no file.
//!
//! A descriptor's magic link (`/proc/self/fd/N`, `/dev/fd/N`) is what the
//! world says the descriptor is ([`Through`]), not the kernel's file behind
//! it: most descriptors the checker answers for are a `/dev/null`
//! placeholder in the node, and the file they stand for (a data-directory
//! file, a pipe, a socket) is the world's. So the walk asks, and goes on in
//! the data directory, or stops at the descriptor ([`Resolved::fd`]) for
//! the call to be answered from the world.
//!
//! What a file *is* (a random device, `/dev/null`, a file of time or
//! entropy in `/proc`) is told by the resolved file itself, its device
//! numbers and its path after resolution, so that no spelling of a path
//! (`/dev/./urandom`, `//dev/random`, a symbolic link, `urandom` from
//! `/dev`) escapes. Resolution never fails: where the kernel would fail, or
//! the file does not exist, the path is shown as far as it resolved, and
//! the call itself gets the kernel's answer.
//!
//! It owns resolution only; what a call may do with the file is the
//! handlers' (`files`, `random`).

use std::collections::VecDeque;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::libc;

/// The kernel's bound on symbolic links followed in one resolution
/// (`MAXSYMLINKS`); past it the kernel answers `ELOOP`.
const SYMLINKS_MAX: usize = 40;

/// procfs's `f_type` (`PROC_SUPER_MAGIC`) and the inode of its root.
const PROC_SUPER_MAGIC: i64 = 0x9fa0;
const PROC_ROOT_INO: u64 = 1;

/// A path a node named, resolved for it.
#[derive(Clone)]
pub(crate) struct Resolved {
    /// Absolute, with symbolic links followed (the last one only when the
    /// call follows it); for a file that does not exist, its directory
    /// resolved and its name; where resolution failed, the path made
    /// absolute by text alone.
    pub(crate) shown: String,
    /// The file, when it exists.
    pub(crate) stat: Option<libc::stat>,
    /// Whether the walk went through `/proc` (its root, a magic link of
    /// it): its result is then the resolving process's, not the same for
    /// every node and life. True where the walk failed, to be safe.
    pub(crate) through_proc: bool,
    /// The node's descriptor whose magic link the path ends in, followed,
    /// when the world answers for what it stands for ([`Through::World`]):
    /// `shown` is then the link's text, and the call is answered from the
    /// descriptor, never by the kernel (which would find the placeholder).
    pub(crate) fd: Option<i32>,
}

/// What the magic link of a node's descriptor (`/proc/PID/fd/N`) leads to,
/// as the world has it.
pub(crate) enum Through {
    /// The file the node holds, the kernel's (a file, directory or device
    /// of the machine, stdin, stdout, stderr): the kernel's link.
    Kernel,
    /// The data directory, at this path of the machine (which exists, and
    /// is never read): the walk goes on there.
    Dir(Vec<u8>),
    /// Something the world holds (a data-directory file, a pipe, a socket,
    /// an eventfd, the records on fds 3 and 193), named as `readlink` names
    /// it: the walk stops there.
    World(String),
}

impl Resolved {
    /// Whether the file is the character device `major:minor`.
    pub(super) fn is_char_device(&self, major: u32, minor: u32) -> bool {
        self.stat.is_some_and(|s| {
            s.st_mode & libc::S_IFMT == libc::S_IFCHR
                && libc::major(s.st_rdev) == major
                && libc::minor(s.st_rdev) == minor
        })
    }
}

fn open_path(at: i32, name: &[u8], flags: i32) -> Option<OwnedFd> {
    let name = CString::new(name).ok()?;
    let fd = unsafe { libc::openat(at, name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn stat_of(fd: &OwnedFd) -> Option<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some(st)
}

/// The path of what `fd` refers to, as the kernel names it.
fn name_of(fd: &OwnedFd) -> Option<String> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok().map(|p| p.to_string_lossy().into_owned())
}

fn readlink_at(fd: &OwnedFd) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    let n = unsafe { libc::readlinkat(fd.as_raw_fd(), c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return None;
    }
    buf.truncate(n as usize);
    Some(buf)
}

fn is_proc_root(fd: &OwnedFd) -> bool {
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    let proc = unsafe { libc::fstatfs(fd.as_raw_fd(), &mut fs) } == 0 && fs.f_type == PROC_SUPER_MAGIC;
    proc && stat_of(fd).is_some_and(|s| s.st_ino == PROC_ROOT_INO)
}

fn components(path: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    path.split(|&b| b == b'/').filter(|c| !c.is_empty() && c != b".").map(<[u8]>::to_vec)
}

/// The directory a relative path of node process `pid` starts from:
/// `dirfd`, or its working directory for `AT_FDCWD`.
fn start_of(pid: u32, dirfd: i32) -> Option<OwnedFd> {
    let at = if dirfd == libc::AT_FDCWD { format!("/proc/{pid}/cwd") } else { format!("/proc/{pid}/fd/{dirfd}") };
    open_path(libc::AT_FDCWD, at.as_bytes(), 0)
}

/// The node a path is resolved for: its process, its virtual pid (which
/// `/proc/<vpid>` names, as `/proc/self`), and what its descriptors' magic
/// links lead to.
pub(crate) struct Node<'a> {
    /// The real pid of the node's running process.
    pub(crate) pid: u32,
    /// Its virtual pid, `getpid()` to it (and `gettid()`).
    pub(crate) vpid: u32,
    /// What descriptor N's magic link leads to.
    pub(crate) through: &'a dyn Fn(i32) -> Through,
}

/// Resolves `path`, named by `node` relative to its `dirfd` (or
/// `AT_FDCWD`), as the kernel would; `follow` says whether a symbolic link
/// as the last component is followed.
pub(super) fn resolve(node: &Node<'_>, dirfd: i32, path: &[u8], follow: bool) -> Resolved {
    let pid = node.pid;
    let absolute = path.first() == Some(&b'/');
    let root = || open_path(libc::AT_FDCWD, format!("/proc/{pid}/root").as_bytes(), 0);
    let start = if absolute { root() } else { start_of(pid, dirfd) };
    let lexical = |start: Option<&OwnedFd>| {
        let text = String::from_utf8_lossy(path).into_owned();
        match start.and_then(name_of) {
            Some(dir) if !absolute => format!("{}/{text}", dir.trim_end_matches('/')),
            _ => text,
        }
    };
    let Some(start) = start else { return Resolved { shown: lexical(None), stat: None, through_proc: true, fd: None } };
    match walk(node, &start, path, follow, root) {
        Some(r) => r,
        None => Resolved { shown: lexical(Some(&start)), stat: None, through_proc: true, fd: None },
    }
}

/// The descriptor number `name` names in `dir`, when `dir` is the
/// descriptor directory of process `pid` (`/proc/PID/fd`, or its one
/// thread's).
fn descriptor_in(pid: u32, dir: &OwnedFd, name: &[u8]) -> Option<i32> {
    let fd: i32 = std::str::from_utf8(name).ok()?.parse().ok()?;
    let at = name_of(dir)?;
    (at == format!("/proc/{pid}/fd") || at == format!("/proc/{pid}/task/{pid}/fd")).then_some(fd)
}

/// The walk itself; `None` where the kernel would fail before the last
/// component.
fn walk(
    node: &Node<'_>,
    start: &OwnedFd,
    path: &[u8],
    follow: bool,
    root: impl Fn() -> Option<OwnedFd>,
) -> Option<Resolved> {
    let pid = node.pid;
    let vpid = node.vpid.to_string();
    let mut cur = open_path(start.as_raw_fd(), b".", 0)?;
    let mut todo: VecDeque<Vec<u8>> = components(path).collect();
    let mut links = 0;
    let mut through_proc = false;
    while let Some(mut name) = todo.pop_front() {
        if name == b".." {
            cur = open_path(cur.as_raw_fd(), b"..", libc::O_DIRECTORY)?;
            continue;
        }
        // `/proc/self`, `/proc/thread-self` and `/proc/<its pid>` name the
        // process that resolves them: here, the node, whose pid is virtual
        // (its one thread's id is the same). The real pid is opened at once,
        // never looked at again: it may be the virtual one (pids wrap), and
        // taking it for the virtual pid again looped for ever.
        let at_proc = is_proc_root(&cur);
        through_proc |= at_proc;
        if at_proc && (name == b"self" || name == b"thread-self" || name == vpid.as_bytes()) {
            if name == b"thread-self" {
                todo.push_front(pid.to_string().into_bytes());
                todo.push_front(b"task".to_vec());
            }
            name = pid.to_string().into_bytes();
        }
        let last = todo.is_empty();
        if name == vpid.as_bytes() && name_of(&cur).is_some_and(|d| d == format!("/proc/{pid}/task")) {
            name = pid.to_string().into_bytes();
        }
        let Some(next) = open_path(cur.as_raw_fd(), &name, libc::O_NOFOLLOW) else {
            if !last {
                return None;
            }
            // The file does not exist (yet): its directory and its name.
            let dir = name_of(&cur)?;
            let shown = format!("{}/{}", dir.trim_end_matches('/'), String::from_utf8_lossy(&name));
            return Some(Resolved { shown, stat: None, through_proc, fd: None });
        };
        let st = stat_of(&next)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFLNK || (last && !follow) {
            cur = next;
            continue;
        }
        links += 1;
        if links > SYMLINKS_MAX {
            return None;
        }
        let target = readlink_at(&next)?;
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        let in_proc = unsafe { libc::fstatfs(next.as_raw_fd(), &mut fs) } == 0 && fs.f_type == PROC_SUPER_MAGIC;
        through_proc |= in_proc;
        let textual =
            target.first() != Some(&b'/') && (target.starts_with(b"self") || target.starts_with(b"thread-self"));
        if in_proc && !textual {
            // A magic link (`/proc/PID/fd/N`, `cwd`, `root`, `exe`): the
            // kernel jumps to the file itself, which its text may not name
            // (`socket:[...]`, a deleted file). A descriptor's is what the
            // world says it is.
            match descriptor_in(pid, &cur, &name).map_or(Through::Kernel, |fd| (node.through)(fd)) {
                Through::Kernel => cur = open_path(cur.as_raw_fd(), &name, 0)?,
                Through::Dir(dir) => {
                    cur = root()?;
                    for (i, c) in components(&dir).enumerate() {
                        todo.insert(i, c);
                    }
                }
                // Not a directory: the kernel fails the rest (ENOTDIR on
                // the placeholder, as on the object).
                Through::World(_) if !last => return None,
                Through::World(shown) => {
                    return Some(Resolved {
                        shown,
                        stat: None,
                        through_proc: true,
                        fd: descriptor_in(pid, &cur, &name),
                    });
                }
            }
            continue;
        }
        if target.first() == Some(&b'/') {
            cur = root()?;
        }
        for (i, c) in components(&target).enumerate() {
            todo.insert(i, c);
        }
    }
    Some(Resolved { shown: name_of(&cur)?, stat: stat_of(&cur), through_proc, fd: None })
}

/// `shown` (a resolved path) in the form the node knows it by: its own
/// `/proc/<real pid>` (and its thread's `task/<real pid>`) as
/// `/proc/<vpid>`, the pid `getpid()` gives it, as a kernel names a
/// process's own entry; any other path as it is.
pub(super) fn virtual_name(shown: &str, pid: u32, vpid: u32) -> String {
    own_as(shown, pid, &vpid.to_string())
}

/// `shown` with process `pid`'s own `/proc` entry, and its thread's, named
/// `me` instead.
fn own_as(shown: &str, pid: u32, me: &str) -> String {
    let at_end_or_dir = |r: &&str| r.is_empty() || r.starts_with('/');
    let Some(rest) = shown.strip_prefix(&format!("/proc/{pid}")).filter(at_end_or_dir) else {
        return shown.to_string();
    };
    match rest.strip_prefix(&format!("/task/{pid}")).filter(at_end_or_dir) {
        Some(after) => format!("/proc/{me}/task/{me}{after}"),
        None => format!("/proc/{me}{rest}"),
    }
}

/// The inode a file of `/proc` has for node process `pid`: fixed by its
/// path, its own pid (and thread id) written `self` (procfs makes an inode
/// when a file is looked up, so the real one differs between lives and
/// runs, and names the process). `None` outside `/proc`.
pub(super) fn proc_ino(shown: &str, pid: u32) -> Option<u64> {
    if shown != "/proc" && !shown.starts_with("/proc/") {
        return None;
    }
    Some(xxhash_rust::xxh3::xxh3_64(own_as(shown, pid, "self").as_bytes()) & 0xffff_ffff)
}

/// The path of node process `pid`'s descriptor `fd`, as the kernel names
/// it, or `fd N`.
pub(super) fn of_fd(pid: u32, fd: i32) -> String {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("fd {fd}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> u32 {
        std::process::id()
    }

    /// This process, as a node whose descriptors are all the kernel's, and
    /// whose virtual pid is 7.
    fn resolve(pid: u32, dirfd: i32, path: &[u8], follow: bool) -> Resolved {
        super::resolve(&Node { pid, vpid: 7, through: &|_| Through::Kernel }, dirfd, path, follow)
    }

    fn urandom(r: &Resolved) -> bool {
        r.is_char_device(1, 9)
    }

    /// A node whose real pid is its virtual one (pids wrap on a busy
    /// machine: a life was pid 1000, the first node's virtual pid): its
    /// `/proc/self` resolves, where the walk took the real pid for the
    /// virtual one again and looped for ever (a search stuck in one open
    /// of `/proc/self/maps`).
    #[test]
    fn a_real_pid_equal_to_the_virtual_one_resolves() {
        let node = Node { pid: me(), vpid: me(), through: &|_| Through::Kernel };
        for path in ["/proc/self/status", "/proc/thread-self/status"] {
            let r = super::resolve(&node, libc::AT_FDCWD, path.as_bytes(), true);
            assert!(r.stat.is_some(), "{path}: {}", r.shown);
        }
        let own = format!("/proc/{}/status", me());
        assert!(super::resolve(&node, libc::AT_FDCWD, own.as_bytes(), true).stat.is_some(), "{own}");
    }

    #[test]
    fn every_spelling_of_a_device_resolves_to_it() {
        for path in
            ["/dev/urandom", "/dev/./urandom", "//dev//urandom", "/dev/../dev/urandom", "/proc/self/root/dev/urandom"]
        {
            let r = resolve(me(), libc::AT_FDCWD, path.as_bytes(), true);
            assert!(urandom(&r), "{path}");
            assert_eq!(r.shown, "/dev/urandom", "{path}");
        }
        let dev = std::fs::File::open("/dev").unwrap();
        let r = resolve(me(), dev.as_raw_fd(), b"urandom", true);
        assert!(urandom(&r), "relative to a descriptor of /dev");
        assert!(resolve(me(), libc::AT_FDCWD, b"/dev/null", true).is_char_device(1, 3));
    }

    #[test]
    fn symbolic_links_are_followed_as_the_kernel_follows_them() {
        let dir = std::env::temp_dir().join(format!("cmc-paths-{}", me()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("/dev/urandom", dir.join("abs")).unwrap();
        std::os::unix::fs::symlink("../abs", dir.join("sub/rel")).unwrap();
        std::os::unix::fs::symlink("loop", dir.join("loop")).unwrap();
        let at = |p: &std::path::Path, follow| resolve(me(), libc::AT_FDCWD, p.as_os_str().as_encoded_bytes(), follow);
        assert!(urandom(&at(&dir.join("abs"), true)));
        assert!(urandom(&at(&dir.join("sub/rel"), true)), "a relative link from a subdirectory");
        let link = at(&dir.join("sub/rel"), false);
        assert!(!urandom(&link), "a last link not followed is the link");
        assert_eq!(link.shown, dir.join("sub/rel").display().to_string());
        let missing = at(&dir.join("sub/new-file"), true);
        assert!(missing.stat.is_none());
        assert_eq!(missing.shown, dir.join("sub/new-file").display().to_string(), "a file not there yet");
        let looped = at(&dir.join("loop"), true);
        assert!(looped.stat.is_none(), "a loop of links ends");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn proc_self_is_the_named_process_not_the_resolver() {
        let f = std::fs::File::open("/dev/urandom").unwrap();
        let r = resolve(me(), libc::AT_FDCWD, format!("/dev/fd/{}", f.as_raw_fd()).as_bytes(), true);
        assert!(urandom(&r), "/dev/fd/N is /proc/self/fd/N, a magic link");
        let r = resolve(me(), libc::AT_FDCWD, b"/proc/self", false);
        assert_eq!(r.shown, format!("/proc/{}", me()));
        assert_eq!(of_fd(me(), f.as_raw_fd()), "/dev/urandom");
        // A result that went through /proc, however the path is spelt, is
        // the process's: the supervisor does not keep it.
        for spelling in ["/dev/fd/{}", "//dev/fd/{}", "/dev/./fd/{}", "//proc/self/fd/{}"] {
            let path = spelling.replace("{}", &f.as_raw_fd().to_string());
            let r = resolve(me(), libc::AT_FDCWD, path.as_bytes(), true);
            assert!(urandom(&r) && r.through_proc, "{path}");
        }
        assert!(!resolve(me(), libc::AT_FDCWD, b"/dev/urandom", true).through_proc);
    }
}

//! Paths a node names, resolved as the kernel resolves them for that node:
//! from its root, its working directory (`/proc/PID/cwd`) or a descriptor
//! of its own (`/proc/PID/fd/N`), through its symbolic links, with
//! `/proc/self` and `/proc/thread-self` meaning the node, not the
//! supervisor (so `/dev/stdout` and `/dev/fd/N` are the node's). The
//! supervisor walks the path one component at a time with `O_PATH`
//! descriptors, which open nothing for reading or writing and change no
//! file.
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
pub(super) struct Resolved {
    /// Absolute, with symbolic links followed (the last one only when the
    /// call follows it); for a file that does not exist, its directory
    /// resolved and its name; where resolution failed, the path made
    /// absolute by text alone.
    pub shown: String,
    /// The file, when it exists.
    pub stat: Option<libc::stat>,
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

/// Resolves `path`, named by node process `pid` relative to its `dirfd`
/// (or `AT_FDCWD`), as the kernel would; `follow` says whether a symbolic
/// link as the last component is followed.
pub(super) fn resolve(pid: u32, dirfd: i32, path: &[u8], follow: bool) -> Resolved {
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
    let Some(start) = start else { return Resolved { shown: lexical(None), stat: None } };
    match walk(pid, &start, path, follow, root) {
        Some(r) => r,
        None => Resolved { shown: lexical(Some(&start)), stat: None },
    }
}

/// The walk itself; `None` where the kernel would fail before the last
/// component.
fn walk(pid: u32, start: &OwnedFd, path: &[u8], follow: bool, root: impl Fn() -> Option<OwnedFd>) -> Option<Resolved> {
    let mut cur = open_path(start.as_raw_fd(), b".", 0)?;
    let mut todo: VecDeque<Vec<u8>> = components(path).collect();
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        let last = todo.is_empty();
        if name == b".." {
            cur = open_path(cur.as_raw_fd(), b"..", libc::O_DIRECTORY)?;
            continue;
        }
        // `/proc/self` and `/proc/thread-self` name the process that
        // resolves them: here, the node.
        if is_proc_root(&cur) && (name == b"self" || name == b"thread-self") {
            let own = if name == b"self" { format!("{pid}") } else { format!("{pid}/task/{pid}") };
            for (i, c) in components(own.as_bytes()).enumerate() {
                todo.insert(i, c);
            }
            continue;
        }
        let Some(next) = open_path(cur.as_raw_fd(), &name, libc::O_NOFOLLOW) else {
            if !last {
                return None;
            }
            // The file does not exist (yet): its directory and its name.
            let dir = name_of(&cur)?;
            let shown = format!("{}/{}", dir.trim_end_matches('/'), String::from_utf8_lossy(&name));
            return Some(Resolved { shown, stat: None });
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
        let textual =
            target.first() != Some(&b'/') && (target.starts_with(b"self") || target.starts_with(b"thread-self"));
        if in_proc && !textual {
            // A magic link (`/proc/PID/fd/N`, `cwd`, `root`, `exe`): the
            // kernel jumps to the file itself, which its text may not name
            // (`socket:[...]`, a deleted file).
            cur = open_path(cur.as_raw_fd(), &name, 0)?;
            continue;
        }
        if target.first() == Some(&b'/') {
            cur = root()?;
        }
        for (i, c) in components(&target).enumerate() {
            todo.insert(i, c);
        }
    }
    Some(Resolved { shown: name_of(&cur)?, stat: stat_of(&cur) })
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

    fn urandom(r: &Resolved) -> bool {
        r.is_char_device(1, 9)
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
    }
}

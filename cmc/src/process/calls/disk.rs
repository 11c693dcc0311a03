//! A node's data directory (model key `data_dir`): files whose contents
//! are part of the world (`NodeWorld::disk`), so that a program that keeps
//! its durable state in a file with `fsync`, as servers do, is checked as
//! it runs. The directory is flat (files only) and each node has its own,
//! empty at the search's start, at the path `data_dir` names (a real,
//! existing directory, whose contents are never touched).
//!
//! Every change is pending until made durable: `fsync` or `fdatasync` of a
//! file makes its writes, truncations and size durable, a write to a file
//! opened `O_SYNC` or `O_DSYNC` is durable at once, and `fsync` of the
//! directory makes its names (creations, unlinks, renames) durable. The
//! node sees every change. A CRASH keeps the durable directory and, of the
//! pending changes, what `crash_states` allows: a prefix, oldest first
//! (CRASH(n, j), for each j), as CRASH(n, j) does for a core's persists,
//! and under ext4's crash states (the default) every other set its journal
//! and writeback may leave; an exit keeps them all (the machine did not
//! fail). A rename is one change, atomic. So that a crash can keep a file's
//! size apart from its bytes, as ext4 may, a write past a file's end is
//! recorded under ext4's crash states as its growth and then its bytes, and
//! the first close after a truncation to zero as the allocation ext4's
//! `auto_da_alloc` makes there; this module records the changes, and
//! `crash_states` says which sets of them a crash may keep.
//!
//! Calls: `open`, `openat`, `openat2`, `creat` (`O_CREAT`, `O_EXCL`,
//! `O_TRUNC`, `O_APPEND`, access modes, `O_SYNC`, `O_DSYNC`), `read`,
//! `write` and their vectored and positional kin, `lseek`, `fsync`,
//! `fdatasync`, `ftruncate`, `fstat` and `newfstatat` (a regular file of
//! its size; `statx` answers ENOSYS, so that programs fall back to
//! `fstat`), `unlink`, `unlinkat`, `rename`, `renameat`, `renameat2`
//! (without flags). Anything else in the directory (subdirectories, links,
//! permissions) is an error naming the node, the call and the path; and so
//! is crossing a limit: `data_file_bytes_max` per file, `data_files_max`
//! names, `data_pending_max` pending changes, `crash_states_max` states a
//! crash may leave of them.

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, CrashStates, DirOrder, DiskOp, Trail, VFd};
use super::super::{ProcessError, limits, syscalls};
use super::super::{crash_states, dir_order};
use super::Answer;
use super::buffers::{gather, scatter};

/// A listing's entry: inode number, type, name.
type Entry = (u64, u8, Vec<u8>);

/// The position of a listing of the data directory that has given every
/// entry: later calls give none, until a seek.
const LISTING_DONE: u32 = u32::MAX;

/// The bytes of one block of a directory on ext4 (4 KiB blocks, less the
/// 12-byte tail of `metadata_csum`): a directory whose entries need more
/// is indexed, and lists `.` and `..` first.
const DIR_BLOCK_BYTES: usize = 4096 - 12;

/// `VFd::File` mode bits.
const READ: u8 = 1;
const WRITE: u8 = 2;
const APPEND: u8 = 4;
const SYNC: u8 = 8;

/// What a resolved path is, against the data directory.
pub(super) enum DataPath {
    /// The directory itself.
    Dir,
    /// A file in it, by name.
    File(Vec<u8>),
    /// Deeper than a file in it.
    Deeper,
}

impl Supervisor {
    /// `paths::resolve` for node `n`'s call `c` (its process, its virtual
    /// pid, what its descriptors' magic links lead to: `Supervisor::through`),
    /// but a relative path named from a descriptor of the data directory
    /// (whose placeholder is `/dev/null`) starts there. A path under
    /// `log_dir`, however spelt, is an error naming it, whatever the call:
    /// the checker's logs grow as the search runs, so what a node learnt of
    /// them (a size, whether one exists, a name) would differ between runs.
    pub(super) fn resolve_at(
        &self,
        n: u8,
        c: &Notif,
        dirfd: i32,
        path: &[u8],
        follow: bool,
    ) -> Result<super::paths::Resolved, ProcessError> {
        let through = |fd: i32| self.through(n, fd);
        let node = super::paths::Node { pid: c.pid, vpid: self.world.pid(n) as u32, through: &through };
        let from_dir = matches!(self.world.nodes[n as usize].fds.get(&dirfd), Some(VFd::Dir { .. }));
        let resolved = match (&self.cfg.data_dir, from_dir && path.first() != Some(&b'/')) {
            (Some(dir), true) => {
                let mut full = dir.as_os_str().as_encoded_bytes().to_vec();
                full.push(b'/');
                full.extend_from_slice(path);
                super::paths::resolve(&node, libc::AT_FDCWD, &full, follow)
            }
            _ if cacheable(path) => {
                let key = (path.to_vec(), follow);
                let kept = self.resolved.borrow().get(&key).cloned();
                match kept {
                    Some(r) => r,
                    None => {
                        let r = super::paths::resolve(&node, dirfd, path, follow);
                        if !r.through_proc && !r.shown.starts_with("/proc") {
                            let mut cache = self.resolved.borrow_mut();
                            if cache.len() >= RESOLVED_MAX {
                                cache.clear();
                            }
                            cache.insert(key, r.clone());
                        }
                        r
                    }
                }
            }
            _ => super::paths::resolve(&node, dirfd, path, follow),
        };
        if let Some(logs) = self.log_dir_real()
            && std::path::Path::new(&resolved.shown).starts_with(logs)
        {
            return Err(ProcessError::File {
                node: n,
                call: syscalls::describe(c.nr),
                path: resolved.shown,
                detail: "the checker's own output (log_dir) changes while the search runs".to_string(),
            });
        }
        Ok(resolved)
    }

    /// Where `shown` (a resolved path) is in the data directory, if it is.
    pub(super) fn data_path(&self, shown: &str) -> Option<DataPath> {
        let dir = self.cfg.data_dir.as_ref()?.to_str()?.trim_end_matches('/');
        let rest = shown.strip_prefix(dir)?;
        if rest.is_empty() || rest == "/" {
            return Some(DataPath::Dir);
        }
        let name = rest.strip_prefix('/')?.trim_end_matches('/');
        if name.contains('/') {
            return Some(DataPath::Deeper);
        }
        match name {
            "." => Some(DataPath::Dir),
            ".." => None,
            _ => Some(DataPath::File(name.as_bytes().to_vec())),
        }
    }

    fn data_error(&self, n: u8, c: &Notif, path: &str, detail: &str) -> ProcessError {
        ProcessError::File {
            node: n,
            call: syscalls::describe(c.nr),
            path: path.to_string(),
            detail: detail.to_string(),
        }
    }

    /// Forgets node `n`'s files nothing reaches (no name, no pending
    /// change, no open descriptor): a closed, unlinked file is gone.
    pub(in crate::process) fn collect_files(&mut self, n: u8) {
        let node = &mut self.world.nodes[n as usize];
        let open = node.open_files();
        node.disk.collect(&open);
    }

    /// Records a pending change of node `n`'s data directory, within the
    /// limits.
    fn change(&mut self, n: u8, op: DiskOp) -> Result<(), ProcessError> {
        let disk = &mut self.world.nodes[n as usize].disk;
        if disk.pending.len() >= limits::DATA_PENDING_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "data_pending_max",
                max: limits::DATA_PENDING_MAX,
                detail: "one more change of the data directory not made durable".to_string(),
            });
        }
        disk.pending.push(op);
        self.collect_files(n);
        let disk = &self.world.nodes[n as usize].disk;
        let (files, names) = disk.current();
        if names.len() > limits::DATA_FILES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "data_files_max",
                max: limits::DATA_FILES_MAX,
                detail: "one more file in the data directory".to_string(),
            });
        }
        if let Some(big) = files.values().find(|f| f.len() > limits::DATA_FILE_BYTES_MAX) {
            return Err(ProcessError::Limit {
                node: n,
                limit: "data_file_bytes_max",
                max: limits::DATA_FILE_BYTES_MAX,
                detail: format!("a file of {} bytes in the data directory", big.len()),
            });
        }
        self.check_crash_states(n)
    }

    /// Node `n`'s data directory within `crash_states_max`, checked after
    /// every change and every sync: a sync mostly leaves fewer sets, not
    /// always (`crash_states`' module docs), and CRASH's enumeration relies
    /// on the bound.
    fn check_crash_states(&self, n: u8) -> Result<(), ProcessError> {
        let disk = &self.world.nodes[n as usize].disk;
        // Each state a crash may leave is a CRASH to try; with no crash
        // left on this path none will be.
        let states = crash_states::count(self.cfg.crash_states, disk);
        if self.world.crashes > 0 && states > limits::CRASH_STATES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "crash_states_max",
                max: limits::CRASH_STATES_MAX,
                detail: format!(
                    "{} states a crash could leave of the data directory, with {} changes not made durable (an fsync \
                     makes fewer)",
                    states.min(999_999),
                    disk.pending.len()
                ),
            });
        }
        Ok(())
    }

    /// A close of `vfd`: of a data file truncated to zero since its last
    /// close, under ext4's crash states, the allocation `auto_da_alloc`
    /// makes of its delayed writes ([`DiskOp::Allocate`]; ext4 does it at
    /// the file's next release, once, whatever was written).
    pub(super) fn on_data_close(&mut self, n: u8, vfd: Option<VFd>) -> Result<(), ProcessError> {
        let Some(VFd::File { inode, .. }) = vfd else { return Ok(()) };
        if self.cfg.crash_states != CrashStates::Ext4 {
            return Ok(());
        }
        let pending = &self.world.nodes[n as usize].disk.pending;
        let truncated =
            pending.iter().rposition(|op| matches!(op, DiskOp::Truncate { inode: i, len: 0 } if *i == inode));
        let Some(at) = truncated else { return Ok(()) };
        if pending[at..].iter().any(|op| matches!(op, DiskOp::Allocate { inode: i } if *i == inode)) {
            return Ok(());
        }
        self.change(n, DiskOp::Allocate { inode })
    }

    /// An open of `path` (resolved, shown as `shown`) in the data directory
    /// with `flags`.
    pub(super) fn open_data(
        &mut self,
        n: u8,
        c: &Notif,
        path: DataPath,
        shown: &str,
        flags: i32,
    ) -> Result<Answer, ProcessError> {
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let access = flags & libc::O_ACCMODE;
        let name = match path {
            DataPath::Deeper => {
                return Err(self.data_error(
                    n,
                    c,
                    shown,
                    "the data directory is flat: subdirectories are not modelled",
                ));
            }
            DataPath::Dir => {
                if access != libc::O_RDONLY || flags & (libc::O_CREAT | libc::O_TRUNC) != 0 {
                    return Ok(Answer::Err(libc::EISDIR));
                }
                if let Some(fd) = self.add_fd(n, c, cloexec)? {
                    self.world.nodes[n as usize].fds.insert(fd, VFd::Dir { pos: 0 });
                }
                return Ok(Answer::Done);
            }
            DataPath::File(name) if name.len() > 255 => return Ok(Answer::Err(libc::ENAMETOOLONG)),
            DataPath::File(name) => name,
        };
        if flags & (libc::O_DIRECTORY | libc::O_PATH | libc::O_TMPFILE) != 0 {
            return Err(self.data_error(n, c, shown, "O_DIRECTORY, O_PATH and O_TMPFILE in the data directory"));
        }
        let (_, names) = self.world.nodes[n as usize].disk.current();
        let existed = names.contains_key(&name);
        let (inode, create) = match names.get(&name) {
            Some(_) if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 => return Ok(Answer::Err(libc::EEXIST)),
            Some(&inode) => (inode, false),
            None if flags & libc::O_CREAT == 0 => return Ok(Answer::Err(libc::ENOENT)),
            None => {
                let node = &self.world.nodes[n as usize];
                (node.disk.free_inode(&node.open_files()), true)
            }
        };
        self.open_inode(n, c, inode, create.then_some(name), existed, flags)
    }

    /// An open of node `n`'s data file `inode` through a descriptor's magic
    /// link (`/proc/self/fd/N`, `/dev/fd/N`), whatever its name, or with
    /// none left (an unlinked file open elsewhere): as Linux opens the file
    /// itself anew, a description of its own at offset 0 (measured
    /// natively: `O_CREAT | O_EXCL` fails with EEXIST, `O_DIRECTORY` with
    /// ENOTDIR, `O_TRUNC` truncates).
    pub(super) fn reopen_file(&mut self, n: u8, c: &Notif, inode: u32, flags: i32) -> Result<Answer, ProcessError> {
        if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 {
            return Ok(Answer::Err(libc::EEXIST));
        }
        if flags & libc::O_DIRECTORY != 0 && flags & libc::O_TMPFILE != libc::O_TMPFILE {
            return Ok(Answer::Err(libc::ENOTDIR));
        }
        if flags & (libc::O_PATH | libc::O_TMPFILE) != 0 {
            return Err(self.data_error(
                n,
                c,
                "(a descriptor's magic link)",
                "O_PATH and O_TMPFILE in the data directory",
            ));
        }
        self.open_inode(n, c, inode, None, true, flags)
    }

    /// The open of file `inode` itself: a descriptor at offset 0 with the
    /// mode `flags` give, `link` its new name if the open creates it, and a
    /// truncation on `O_TRUNC` if it `existed`.
    fn open_inode(
        &mut self,
        n: u8,
        c: &Notif,
        inode: u32,
        link: Option<Vec<u8>>,
        existed: bool,
        flags: i32,
    ) -> Result<Answer, ProcessError> {
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let mode = match flags & libc::O_ACCMODE {
            libc::O_RDONLY => READ,
            libc::O_WRONLY => WRITE,
            _ => READ | WRITE,
        } | if flags & libc::O_APPEND != 0 { APPEND } else { 0 }
            | if flags & (libc::O_SYNC | libc::O_DSYNC) != 0 { SYNC } else { 0 };
        // The descriptor first, as Linux takes it: at its limit the open
        // fails with EMFILE and changes nothing.
        let Some(fd) = self.add_fd(n, c, cloexec)? else { return Ok(Answer::Done) };
        if let Some(name) = link {
            self.change(n, DiskOp::Link { name, inode })?;
        }
        // Linux truncates on O_TRUNC whatever the access mode.
        if flags & libc::O_TRUNC != 0 && existed {
            self.change(n, DiskOp::Truncate { inode, len: 0 })?;
            if mode & SYNC != 0 {
                self.world.nodes[n as usize].disk.sync_file(inode);
                self.check_crash_states(n)?;
            }
        }
        self.world.nodes[n as usize].fds.insert(fd, VFd::File { inode, offset: 0, mode });
        Ok(Answer::Done)
    }

    /// The current contents of file `inode` of node `n`.
    fn contents(&self, n: u8, inode: u32) -> Vec<u8> {
        self.world.nodes[n as usize].disk.current().0.remove(&inode).unwrap_or_default()
    }

    /// A read of file descriptor `fd` (`VFd::File`) at `at`, or at its
    /// offset (moving it) if `at` is `None`.
    pub(super) fn read_file(&mut self, n: u8, c: &Notif, fd: i32, at: Option<u64>) -> Answer {
        let Some(&VFd::File { inode, offset, mode }) = self.world.nodes[n as usize].fds.get(&fd) else {
            return Answer::Err(libc::EBADF);
        };
        if mode & READ == 0 {
            return Answer::Err(libc::EBADF);
        }
        let data = self.contents(n, inode);
        let start = at.unwrap_or(offset as u64);
        let from = (start as usize).min(data.len());
        match scatter(c, &data[from..]) {
            Ok(k) => {
                if at.is_none() {
                    self.set_offset(n, fd, (start + k as u64) as u32);
                }
                Answer::Val(k as i64)
            }
            Err(e) => Answer::Err(e),
        }
    }

    /// A write to file descriptor `fd` (`VFd::File`), as `read_file`.
    pub(super) fn write_file(&mut self, n: u8, c: &Notif, fd: i32, at: Option<u64>) -> Result<Answer, ProcessError> {
        let Some(&VFd::File { inode, offset, mode }) = self.world.nodes[n as usize].fds.get(&fd) else {
            return Ok(Answer::Err(libc::EBADF));
        };
        if mode & WRITE == 0 {
            return Ok(Answer::Err(libc::EBADF));
        }
        let bytes = match gather(c) {
            Ok(b) => b,
            Err(e) => return Ok(Answer::Err(e)),
        };
        // Linux appends on an O_APPEND file whatever offset pwrite names.
        let start = match at {
            _ if mode & APPEND != 0 => self.contents(n, inode).len() as u64,
            Some(at) => at,
            None => offset as u64,
        };
        let end = start + bytes.len() as u64;
        if end > limits::DATA_FILE_BYTES_MAX as u64 {
            return Err(ProcessError::Limit {
                node: n,
                limit: "data_file_bytes_max",
                max: limits::DATA_FILE_BYTES_MAX,
                detail: format!("a write to byte {end} of a file in the data directory"),
            });
        }
        let len = bytes.len();
        // Under ext4's crash states a write past the end is two changes, its
        // size and its bytes, which a crash may keep apart.
        if len > 0 && self.cfg.crash_states == CrashStates::Ext4 && end > self.contents(n, inode).len() as u64 {
            self.change(n, DiskOp::Grow { inode, len: end as u32 })?;
        }
        if len > 0 {
            self.change(n, DiskOp::Write { inode, offset: start as u32, bytes })?;
        }
        if mode & SYNC != 0 {
            self.world.nodes[n as usize].disk.sync_file(inode);
            self.check_crash_states(n)?;
        }
        if at.is_none() {
            self.set_offset(n, fd, end as u32);
        }
        Ok(Answer::Val(len as i64))
    }

    fn set_offset(&mut self, n: u8, fd: i32, to: u32) {
        if let Some(VFd::File { offset, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
            *offset = to;
        }
    }

    /// `lseek` of a data file.
    pub(super) fn seek_file(&mut self, n: u8, c: &Notif, fd: i32) -> Result<Answer, ProcessError> {
        let node = &mut self.world.nodes[n as usize];
        if let Some(VFd::Dir { pos }) = node.fds.get_mut(&fd) {
            // `rewinddir` and `seekdir`: a position is an entry's place, as
            // getdents64's d_off gives it (`on_getdents`).
            return Ok(match (c.args[2] as i32, c.args[1] as i64) {
                (libc::SEEK_SET, to) if (0..=u32::MAX as i64).contains(&to) => {
                    *pos = to as u32;
                    Answer::Val(to)
                }
                _ => Answer::Err(libc::EINVAL),
            });
        }
        let Some(&VFd::File { inode, offset, .. }) = node.fds.get(&fd) else {
            return Ok(Answer::Val(0));
        };
        let delta = c.args[1] as i64;
        let len = self.contents(n, inode).len() as i64;
        let base = match c.args[2] as i32 {
            libc::SEEK_SET => 0,
            libc::SEEK_CUR => offset as i64,
            libc::SEEK_END => len,
            // A file of the model has no holes: data up to its end, the
            // one hole after it; past the end, ENXIO, as Linux answers.
            libc::SEEK_DATA | libc::SEEK_HOLE if !(0..len).contains(&delta) => return Ok(Answer::Err(libc::ENXIO)),
            libc::SEEK_DATA => {
                self.set_offset(n, fd, delta as u32);
                return Ok(Answer::Val(delta));
            }
            libc::SEEK_HOLE => {
                self.set_offset(n, fd, len as u32);
                return Ok(Answer::Val(len));
            }
            _ => return Ok(Answer::Err(libc::EINVAL)),
        };
        match base.checked_add(delta) {
            Some(to) if (0..=limits::DATA_FILE_BYTES_MAX as i64).contains(&to) => {
                self.set_offset(n, fd, to as u32);
                Ok(Answer::Val(to))
            }
            Some(to) if to >= 0 => Err(ProcessError::Limit {
                node: n,
                limit: "data_file_bytes_max",
                max: limits::DATA_FILE_BYTES_MAX,
                detail: format!("an lseek to byte {to} of a file in the data directory"),
            }),
            _ => Ok(Answer::Err(libc::EINVAL)),
        }
    }

    /// `fsync`, `fdatasync` (and `syncfs`) of a descriptor of the data
    /// directory; on any other the call runs.
    pub(super) fn on_sync(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let answer = self.sync_of(n, c, vfd);
        self.collect_files(n);
        self.check_crash_states(n)?;
        Ok(answer)
    }

    fn sync_of(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Answer {
        let disk = &mut self.world.nodes[n as usize].disk;
        if c.nr == libc::SYS_sync {
            disk.sync_all();
            return Answer::Val(0);
        }
        match vfd {
            Some(VFd::File { .. } | VFd::Dir { .. }) if c.nr == libc::SYS_syncfs => {
                disk.sync_all();
                Answer::Val(0)
            }
            Some(VFd::File { inode, .. }) => {
                disk.sync_file(inode);
                Answer::Val(0)
            }
            Some(VFd::Dir { .. }) => {
                disk.sync_dir();
                Answer::Val(0)
            }
            // A file of the machine, read only, or a device: as the kernel.
            Some(VFd::Host { .. } | VFd::Device { .. } | VFd::Out { .. }) | None => Answer::Continue,
            Some(_) => Answer::Err(libc::EINVAL),
        }
    }

    /// `ftruncate` of a data file.
    pub(super) fn truncate_file(&mut self, n: u8, c: &Notif, vfd: VFd) -> Result<Answer, ProcessError> {
        let VFd::File { inode, mode, .. } = vfd else { return Ok(Answer::Err(libc::EINVAL)) };
        if mode & WRITE == 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let len = c.args[1] as i64;
        if len < 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if len as u64 > limits::DATA_FILE_BYTES_MAX as u64 {
            return Err(ProcessError::Limit {
                node: n,
                limit: "data_file_bytes_max",
                max: limits::DATA_FILE_BYTES_MAX,
                detail: format!("a file cut to {len} bytes in the data directory"),
            });
        }
        self.change(n, DiskOp::Truncate { inode, len: len as u32 })?;
        if mode & SYNC != 0 {
            self.world.nodes[n as usize].disk.sync_file(inode);
            self.check_crash_states(n)?;
        }
        Ok(Answer::Val(0))
    }

    /// `unlink`, `rename` and their `at` forms of names in the data
    /// directory (`names`: the resolved paths the call names).
    pub(super) fn change_names(
        &mut self,
        n: u8,
        c: &Notif,
        names: &[(String, Option<DataPath>)],
    ) -> Result<Answer, ProcessError> {
        let file = |i: usize| match names.get(i) {
            Some((_, Some(DataPath::File(name)))) => Some(name.clone()),
            _ => None,
        };
        let shown = names.first().map_or(String::new(), |(s, _)| s.clone());
        let (_, current) = self.world.nodes[n as usize].disk.current();
        match c.nr {
            libc::SYS_unlink | libc::SYS_unlinkat => {
                if c.nr == libc::SYS_unlinkat && c.args[2] as i32 & libc::AT_REMOVEDIR != 0 {
                    return Err(self.data_error(n, c, &shown, "removing a directory of the data directory"));
                }
                let Some(name) = file(0) else {
                    return Err(self.data_error(n, c, &shown, "only files of the data directory are modelled"));
                };
                if !current.contains_key(&name) {
                    return Ok(Answer::Err(libc::ENOENT));
                }
                self.change(n, DiskOp::Unlink { name })?;
                Ok(Answer::Val(0))
            }
            libc::SYS_rename | libc::SYS_renameat | libc::SYS_renameat2 => {
                if c.nr == libc::SYS_renameat2 && c.args[4] != 0 {
                    return Err(self.data_error(n, c, &shown, "renameat2 flags in the data directory"));
                }
                let (Some(from), Some(to)) = (file(0), file(1)) else {
                    return Err(self.data_error(
                        n,
                        c,
                        &shown,
                        "a rename into or out of the data directory, or of the directory",
                    ));
                };
                if !current.contains_key(&from) {
                    return Ok(Answer::Err(libc::ENOENT));
                }
                if from != to {
                    self.change(n, DiskOp::Rename { from, to })?;
                }
                Ok(Answer::Val(0))
            }
            _ => Err(self.data_error(n, c, &shown, "only creating, writing, truncating, unlinking and renaming files")),
        }
    }

    /// `fstat` of a data file or the directory: a regular file of its size,
    /// or a directory.
    pub(super) fn stat_data(&self, n: u8, c: &Notif, at: u64, what: &DataStat) -> Answer {
        // struct stat on x86-64: st_mode at 24, st_nlink at 16, st_size at
        // 48, st_blksize at 56, 144 bytes.
        let mut st = [0u8; 144];
        let (mode, size) = match what {
            DataStat::Inode(inode) => (libc::S_IFREG | 0o644, self.contents(n, *inode).len() as i64),
            DataStat::Dir => (libc::S_IFDIR | 0o755, 4096),
            DataStat::Missing => return Answer::Err(libc::ENOENT),
        };
        // st_dev at 0, st_ino at 8 (as getdents64's d_ino).
        let ino = match what {
            DataStat::Inode(inode) => *inode as u64 + 2,
            _ => 1,
        };
        st[0..8].copy_from_slice(&0xc3c_u64.to_ne_bytes());
        st[8..16].copy_from_slice(&ino.to_ne_bytes());
        st[16..24].copy_from_slice(&1u64.to_ne_bytes());
        st[24..28].copy_from_slice(&mode.to_ne_bytes());
        st[48..56].copy_from_slice(&size.to_ne_bytes());
        st[56..64].copy_from_slice(&4096i64.to_ne_bytes());
        if notif::write_mem(c.pid, at, &st) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
    }

    /// `fstat(fd, st)`, `stat`, `lstat`, `newfstatat(dirfd, path, st,
    /// flags)` and `statx`: of the data directory and its files, answered
    /// from the world; of anything else, by the checker's own `stat` with
    /// the times fixed (`files::stat_host`). `statx` is ENOSYS on every
    /// file (glibc and Rust's standard library fall back to `fstat` and
    /// `newfstatat`), so that there is one answer to keep right.
    pub(super) fn on_stat(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let node = &self.world.nodes[n as usize];
        let of_fd = |fd: i32| match node.fds.get(&fd) {
            Some(VFd::File { inode, .. }) => Found::Data(DataStat::Inode(*inode)),
            Some(VFd::Dir { .. }) => Found::Data(DataStat::Dir),
            _ => Found::Host(StatOf::Fd(fd)),
        };
        // What a path names: in the data directory, or a host file (its
        // resolved path, or a descriptor for `AT_EMPTY_PATH` or through
        // its magic link).
        let of_path = |dirfd: i32, at: u64, flags: i32| -> Result<Found, ProcessError> {
            if at == 0 && flags & libc::AT_EMPTY_PATH == 0 {
                return Ok(Found::Errno(libc::EFAULT));
            }
            let path = if at == 0 {
                Vec::new()
            } else {
                match notif::read_cstr(c.pid, at, libc::PATH_MAX as usize) {
                    Some(path) => path,
                    None => return Ok(Found::Errno(libc::EFAULT)),
                }
            };
            if path.is_empty() {
                if flags & libc::AT_EMPTY_PATH == 0 {
                    return Ok(Found::Errno(libc::ENOENT));
                }
                return Ok(of_fd(dirfd));
            }
            let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
            let resolved = self.resolve_at(n, c, dirfd, &path, follow)?;
            if let Some(fd) = resolved.fd {
                return Ok(of_fd(fd));
            }
            Ok(match self.data_path(&resolved.shown) {
                Some(DataPath::Dir) => Found::Data(DataStat::Dir),
                Some(DataPath::File(name)) => Found::Data(match node.disk.current().1.get(&name) {
                    Some(&inode) => DataStat::Inode(inode),
                    None => DataStat::Missing,
                }),
                Some(DataPath::Deeper) => Found::Data(DataStat::Missing),
                None => Found::Host(StatOf::Path { shown: resolved.shown, follow }),
            })
        };
        let (found, at) = match c.nr {
            libc::SYS_statx => return Ok(Answer::Err(libc::ENOSYS)),
            libc::SYS_stat => (of_path(libc::AT_FDCWD, c.args[0], 0)?, c.args[1]),
            libc::SYS_lstat => (of_path(libc::AT_FDCWD, c.args[0], libc::AT_SYMLINK_NOFOLLOW)?, c.args[1]),
            libc::SYS_fstat => (of_fd(c.args[0] as i32), c.args[1]),
            _ => (of_path(c.args[0] as i32, c.args[1], c.args[3] as i32)?, c.args[2]),
        };
        Ok(match found {
            Found::Errno(e) => Answer::Err(e),
            Found::Data(DataStat::Missing) => Answer::Err(libc::ENOENT),
            Found::Data(what) => self.stat_data(n, c, at, &what),
            Found::Host(of) => self.stat_host(n, c, of, at),
        })
    }
}

/// What a stat names.
enum Found {
    /// The data directory or one of its files.
    Data(DataStat),
    /// Anything else.
    Host(StatOf),
    /// Nothing: the call fails with this errno.
    Errno(i32),
}

/// Resolutions kept by [`Supervisor::resolve_at`] before the cache starts
/// again.
const RESOLVED_MAX: usize = 4096;

/// Whether a path's resolution may be the same for every node, life and
/// call, so that it may be kept: an absolute path. The machine's file
/// system does not change during a search (a node cannot write it), nor
/// does the data directory's real directory (it is never written). Whether
/// it is kept is then the walk's to say: not if it went through `/proc`
/// (`Resolved::through_proc`: `/proc/self`, `/dev/fd/N` however spelt, any
/// link into it), whose results are a process's.
fn cacheable(path: &[u8]) -> bool {
    path.first() == Some(&b'/')
}

impl Supervisor {
    /// The text of a link in node `n`'s own `/proc` entry (`path` resolved
    /// without following its last link, as `resolved`), as the node knows
    /// it: `/proc/self` is its virtual pid and `/proc/thread-self` its
    /// thread (a kernel gives the process's pid: here, `getpid()`'s);
    /// `exe` is the program (the kernel's is the start stub, which every
    /// life is); a descriptor's link names what the world holds
    /// (`files::link_name`: a data-directory file, `socket:[N]`, `pipe:[N]`,
    /// an anonymous inode), or, for a file of the machine, the kernel's
    /// text; any other link of its own (`cwd`, `root`) the kernel's text.
    /// The kernel's texts with its own `/proc/<real pid>` written as
    /// `/proc/<vpid>`. `None` for every other path (the kernel's answer, or
    /// the data directory's); an error for a descriptor whose name the
    /// world cannot give.
    fn own_link(
        &self,
        n: u8,
        c: &Notif,
        path: &[u8],
        resolved: &super::paths::Resolved,
    ) -> Option<Result<String, ProcessError>> {
        if path.last() == Some(&b'/') {
            return None;
        }
        let (pid, vpid) = (c.pid, self.world.pid(n) as u32);
        let own = format!("/proc/{pid}");
        let thread = format!("{own}/task/{pid}");
        let last = path.rsplit(|&b| b == b'/').next().unwrap_or(&[]);
        let shown = resolved.shown.as_str();
        if resolved.through_proc && last == b"self" && shown == own {
            return Some(Ok(vpid.to_string()));
        }
        if resolved.through_proc && last == b"thread-self" && shown == thread {
            return Some(Ok(format!("{vpid}/task/{vpid}")));
        }
        let rest = shown.strip_prefix(&format!("{thread}/")).or_else(|| shown.strip_prefix(&format!("{own}/")))?;
        if rest == "exe" {
            return Some(Ok(self.argvs[n as usize][0].to_string_lossy().into_owned()));
        }
        let kernel =
            || std::fs::read_link(shown).ok().map(|t| Ok(super::paths::virtual_name(&t.to_string_lossy(), pid, vpid)));
        let Some(fd) = rest.strip_prefix("fd/").and_then(|f| f.parse::<i32>().ok()) else {
            return kernel();
        };
        match self.through(n, fd) {
            super::paths::Through::Kernel => kernel(),
            super::paths::Through::Dir(dir) => Some(Ok(String::from_utf8_lossy(&dir).into_owned())),
            super::paths::Through::World(_) => Some(self.link_name(n, fd).ok_or_else(|| ProcessError::File {
                node: n,
                call: syscalls::describe(c.nr),
                path: resolved.shown.clone(),
                detail: match fd {
                    3 | 193 => "fds 3 and 193 are the checker's records, which a real run has as its harness made them"
                        .to_string(),
                    _ => "the link of a data-directory file unlinked while open would name it by the name it had, which the world does not keep".to_string(),
                },
            })),
        }
    }

    /// What a path-naming call (`access`, `readlink`, their `at` forms)
    /// names in the data directory: `None` outside it, else whether it
    /// exists there (the directory, or a file it holds).
    fn named_data(&self, n: u8, shown: &str) -> Option<bool> {
        Some(match self.data_path(shown)? {
            DataPath::Dir => true,
            DataPath::Deeper => false,
            DataPath::File(name) => self.world.nodes[n as usize].disk.current().1.contains_key(&name),
        })
    }

    /// `access`, `faccessat`, `faccessat2`: of the data directory and its
    /// files, whether it exists (a node may do anything to its own files);
    /// through a descriptor's magic link to something the world holds, as
    /// its mode allows (a socket's is 0777, a pipe's, an anonymous inode's
    /// and a data file's no execution: measured natively); another
    /// process's `/proc` entry does not exist; anything else runs.
    pub(super) fn on_access(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (dirfd, at, mode) = match c.nr {
            libc::SYS_access => (libc::AT_FDCWD, c.args[0], c.args[1] as i32),
            _ => (c.args[0] as i32, c.args[1], c.args[2] as i32),
        };
        let Some(path) = notif::read_cstr(c.pid, at, libc::PATH_MAX as usize) else { return Ok(Answer::Continue) };
        let resolved = self.resolve_at(n, c, dirfd, &path, true)?;
        if let Some(fd) = resolved.fd {
            let socket = matches!(
                self.world.nodes[n as usize].fds.get(&fd),
                Some(VFd::Conn { .. } | VFd::Socket { .. } | VFd::Pair { .. })
            );
            return Ok(if mode & libc::X_OK != 0 && !socket { Answer::Err(libc::EACCES) } else { Answer::Val(0) });
        }
        Ok(match self.named_data(n, &resolved.shown) {
            None if super::files::hidden(&resolved.shown, c.pid, None).is_err() => Answer::Err(libc::ENOENT),
            None => Answer::Continue,
            Some(true) => Answer::Val(0),
            Some(false) => Answer::Err(libc::ENOENT),
        })
    }

    /// `readlink` and `readlinkat`: a link of the node's own `/proc` entry
    /// as it knows it ([`Self::own_link`]); the data directory and its
    /// files, which are no links (EINVAL); another process's `/proc` entry,
    /// which does not exist; anything else runs.
    pub(super) fn on_readlink(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (dirfd, at, buf, size) = if c.nr == libc::SYS_readlink {
            (libc::AT_FDCWD, c.args[0], c.args[1], c.args[2] as i32)
        } else {
            (c.args[0] as i32, c.args[1], c.args[2], c.args[3] as i32)
        };
        let Some(path) = notif::read_cstr(c.pid, at, libc::PATH_MAX as usize) else { return Ok(Answer::Continue) };
        let resolved = self.resolve_at(n, c, dirfd, &path, false)?;
        if let Some(text) = self.own_link(n, c, &path, &resolved) {
            let text = text?;
            if size <= 0 {
                return Ok(Answer::Err(libc::EINVAL));
            }
            let k = text.len().min(size as usize);
            return Ok(if notif::write_mem(c.pid, buf, &text.as_bytes()[..k]) {
                Answer::Val(k as i64)
            } else {
                Answer::Err(libc::EFAULT)
            });
        }
        Ok(match self.named_data(n, &resolved.shown) {
            None if super::files::hidden(&resolved.shown, c.pid, None).is_err() => Answer::Err(libc::ENOENT),
            None => Answer::Continue,
            Some(true) => Answer::Err(libc::EINVAL),
            Some(false) => Answer::Err(libc::ENOENT),
        })
    }

    /// `getdents64` of the data directory: `.`, `..` and its names, in
    /// the order `dir_order` says, from where the last call stopped; of
    /// anything else, run. Under `DirOrder::Hash`, names no listing has
    /// shown hold the node (`Blocked::Order`) where they may fall more
    /// than one way among those shown (`dir_order`).
    pub(super) fn on_getdents(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(VFd::Dir { pos }) = vfd else {
            return Ok(match vfd {
                Some(_) => Answer::Err(libc::ENOTDIR),
                None => Answer::Continue,
            });
        };
        // A listing at its end gives nothing, and looks at nothing.
        if pos == LISTING_DONE {
            return Ok(Answer::Val(0));
        }
        let hash = self.world.dir_order == DirOrder::Hash;
        let disk = &mut self.world.nodes[n as usize].disk;
        let (_, names) = disk.current();
        // ext4's `EXT4_DIR_REC_LEN`: 8 bytes and the name, to 4; `.` and
        // `..` 12 each.
        let bytes: usize = 24 + names.keys().map(|name| (8 + name.len()).div_ceil(4) * 4).sum::<usize>();
        if hash && bytes > DIR_BLOCK_BYTES {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(c.nr),
                detail: format!(
                    "a listing of the data directory, whose entries take {bytes} bytes: past one block of ext4 \
                     ({DIR_BLOCK_BYTES} bytes) a directory is indexed and lists `.` and `..` first, which the hash \
                     order here does not keep; keep fewer or shorter names, or set dir_order = \"sorted\""
                ),
            });
        }
        // On ext4 `.` and `..` fall in the hash order too (in a directory
        // of one block, which a data directory is).
        let new = if hash { dir_order::unshown(&disk.order, dir_order::listed(&names).iter()) } else { Vec::new() };
        if !new.is_empty() {
            let limit = |limit, max, detail: String| ProcessError::Limit { node: n, limit, max, detail };
            if disk.order.len() + new.len() > limits::LISTED_NAMES_MAX {
                return Err(limit(
                    "listed_names_max",
                    limits::LISTED_NAMES_MAX,
                    "one name too many shown by listings of the data directory (each keeps its place in the \
                     file system's order)"
                        .to_string(),
                ));
            }
            let Some(ways) = dir_order::ways(disk.order.len(), new.len()) else {
                return Err(limit(
                    "dir_orders_max",
                    limits::DIR_ORDERS_MAX,
                    format!(
                        "a listing of the data directory shows {} names no listing has shown, among {}: more ways \
                         for them to fall in the file system's order than the limit; list it before it has so \
                         many, or set dir_order = \"sorted\" (one order)",
                        new.len(),
                        disk.order.len()
                    ),
                ));
            };
            // Positions are the names' (`dir_order::position`): two names
            // of one position could not be told apart by a seekdir.
            let mut positions: Vec<u32> = disk.order.iter().chain(&new).map(|o| dir_order::position(o)).collect();
            positions.sort_unstable();
            if positions.windows(2).any(|w| w[0] == w[1]) {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: syscalls::describe(c.nr),
                    detail: "a listing of the data directory whose names include two of one position (a 32-bit \
                             hash of the name): rename one"
                        .to_string(),
                });
            }
            if ways > 1 {
                return Ok(Answer::Hold(Blocked::Order { fd, choices: ways, trail: Trail::default() }));
            }
            disk.order.extend(new);
        }
        let mut entries: Vec<Entry> = vec![(1, libc::DT_DIR, b".".to_vec()), (1, libc::DT_DIR, b"..".to_vec())];
        entries.extend(names.iter().map(|(name, inode)| (*inode as u64 + 2, libc::DT_REG, name.clone())));
        // Each entry's place: its rank in the file system's order (as
        // ext4's hash), or its index in the sorted listing. A position
        // (d_off, `seekdir`) is where a listing goes on from: under the
        // hash order the position of the entry it goes on from, a
        // function of its name (`dir_order::position`), as ext4's is that
        // entry's hash, so a name placed before it since does not move it
        // (it was a place in the order, which such a name moved: the
        // review's `s9seek`); in the sorted listing, a place. A listing
        // that has given every entry is at its end (`LISTING_DONE`): on
        // ext4 a listing of one block reads it all at its first call, and
        // a name made after it is not listed, nor is one listed twice.
        let mut placed: Vec<(u32, Entry)> = if hash {
            entries.into_iter().map(|e| (dir_order::rank(&disk.order, &e.2) as u32, e)).collect()
        } else {
            entries.into_iter().enumerate().map(|(i, e)| (i as u32, e)).collect()
        };
        placed.sort_by_key(|(place, _)| *place);
        let from = if hash {
            match dir_order::resume(&disk.order, pos) {
                Some(place) => place as u32,
                None => {
                    return Err(ProcessError::Unmodelled {
                        node: n,
                        call: syscalls::describe(c.nr),
                        detail: format!(
                            "a listing of the data directory from position {pos}, which no listing of it gave \
                             (ext4 goes on from the first name whose hash is past it; the hashes are not modelled)"
                        ),
                    });
                }
            }
        } else {
            pos
        };
        let rest: Vec<&(u32, Entry)> = placed.iter().filter(|(place, _)| *place >= from).collect();
        // Where a listing goes on from after `rest[i]`.
        let after = |i: usize| match rest.get(i + 1) {
            Some((_, e)) if hash => dir_order::position(&e.2),
            Some(_) | None if !hash => rest[i].0 + 1,
            _ => LISTING_DONE,
        };
        let room = c.args[2] as usize;
        let mut out = Vec::new();
        let mut given = 0;
        for (i, (_, (ino, kind, name))) in rest.iter().enumerate() {
            // struct linux_dirent64: d_ino, d_off, d_reclen, d_type, name,
            // a NUL, padded to 8.
            let len = (19 + name.len() + 1).div_ceil(8) * 8;
            if out.len() + len > room {
                break;
            }
            let start = out.len();
            out.extend_from_slice(&ino.to_ne_bytes());
            out.extend_from_slice(&(after(i) as i64).to_ne_bytes());
            out.extend_from_slice(&(len as u16).to_ne_bytes());
            out.push(*kind);
            out.extend_from_slice(name);
            out.resize(start + len, 0);
            given += 1;
        }
        if out.is_empty() && !rest.is_empty() {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if !out.is_empty() && !notif::write_mem(c.pid, c.args[1], &out) {
            return Ok(Answer::Err(libc::EFAULT));
        }
        let next = match rest.get(given) {
            Some((_, e)) if hash => dir_order::position(&e.2),
            Some((place, _)) => *place,
            None => LISTING_DONE,
        };
        if let Some(VFd::Dir { pos }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
            *pos = next;
        }
        Ok(Answer::Val(out.len() as i64))
    }
}

/// What a `stat` of the data directory finds.
/// A file outside the data directory that a stat names.
pub(super) enum StatOf {
    /// A descriptor of the node's.
    Fd(i32),
    /// A path, resolved for the node; `follow` a last symbolic link.
    Path {
        /// The resolved path.
        shown: String,
        /// Whether a symbolic link as its last component is followed.
        follow: bool,
    },
}

pub(super) enum DataStat {
    Inode(u32),
    Dir,
    Missing,
}

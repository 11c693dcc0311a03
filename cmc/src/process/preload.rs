//! The preload library (`cmc-preload`), embedded in this library and
//! written out once per process to a per-user cache, so that a crate that
//! depends on `cmc` runs programs with no preload to build or point at.
//!
//! `build.rs` compiles `preload/` into a cdylib and [`BYTES`] includes it.
//! [`path`] writes it, on first use, to `$XDG_CACHE_HOME/cmc`, else
//! `$HOME/.cache/cmc`, else `cmc-UID` in the temporary directory (also the
//! fallback when the first cannot be written, such as a read-only home): a
//! directory made 0700 and refused unless this user owns it and no one
//! else may write in it, since `LD_PRELOAD` runs what it holds in every
//! node. The file is named by a hash of its bytes, so that builds of
//! different versions share the directory, and is written under a
//! temporary name and renamed, so that processes doing the same at once
//! (test binaries run in parallel) never see part of it; a file already
//! there is used only if its bytes are the embedded ones, and replaced
//! otherwise (a write cut short by a crash, say). It owns no policy about
//! which preload a run uses: `$CMC_PRELOAD` overrides it in
//! [`find_preload`](super::find_preload).

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use nix::libc;

/// The preload library, as `build.rs` compiled it for this target.
#[cfg(target_arch = "x86_64")]
pub static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcmc_preload.so"));
/// No preload on this architecture: the process front end is x86-64 only.
#[cfg(not(target_arch = "x86_64"))]
pub static BYTES: &[u8] = &[];

/// Names tried for the temporary file before giving up, each made with
/// `O_EXCL`: another process that shares the directory and the process id
/// (in another pid namespace) takes the next.
const TEMP_ATTEMPTS_MAX: u32 = 16;

/// Why the embedded preload could not be written out. Each names the
/// directory or file concerned.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PreloadError {
    /// The cache directory could not be made or read.
    #[error("preload cache directory {path}: {error}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// The cache directory's path names something else.
    #[error("preload cache directory {path}: not a directory")]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The cache directory belongs to another user.
    #[error(
        "preload cache directory {path}: owned by uid {owner}, not by this user (uid {uid}); \
         remove it or set XDG_CACHE_HOME"
    )]
    NotOwned {
        /// The directory.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// This process's uid.
        uid: u32,
    },
    /// Other users may write in the cache directory.
    #[error(
        "preload cache directory {path}: mode {mode:o} lets other users write in it (chmod 700 it or set XDG_CACHE_HOME)"
    )]
    Writable {
        /// The directory.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// The library file could not be written or checked.
    #[error("preload library {path}: {error}")]
    File {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// No preload is embedded for this architecture.
    #[error("no preload library for {arch}: the process front end runs on x86-64 only")]
    Unsupported {
        /// The architecture, as `std::env::consts::ARCH` names it.
        arch: &'static str,
    },
}

impl PreloadError {
    /// A directory this user must not trust, as opposed to one that could
    /// not be written: never worked around by trying the next.
    fn is_refusal(&self) -> bool {
        matches!(
            self,
            PreloadError::NotADirectory { .. } | PreloadError::NotOwned { .. } | PreloadError::Writable { .. }
        )
    }
}

/// The embedded preload library's path, written out on the first call in
/// this process (see the module documentation); later calls return the
/// same path, or the same error.
pub fn path() -> Result<&'static Path, PreloadError> {
    static PATH: OnceLock<Result<PathBuf, PreloadError>> = OnceLock::new();
    PATH.get_or_init(|| {
        if BYTES.is_empty() {
            return Err(PreloadError::Unsupported { arch: std::env::consts::ARCH });
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let dirs = cache_dirs(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"), std::env::temp_dir(), uid);
        write_out(&dirs, BYTES, uid)
    })
    .as_deref()
    .map_err(Clone::clone)
}

/// The directories to try, in order: the XDG cache directory (either
/// variable is used only if it is an absolute path, as the XDG base
/// directory specification says), then one of this user's in `tmp`.
fn cache_dirs(xdg_cache_home: Option<OsString>, home: Option<OsString>, tmp: PathBuf, uid: u32) -> Vec<PathBuf> {
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let cache = absolute(xdg_cache_home).or_else(|| absolute(home).map(|h| h.join(".cache")));
    cache.map(|c| c.join("cmc")).into_iter().chain([tmp.join(format!("cmc-{uid}"))]).collect()
}

/// `bytes` written to the first of `dirs` (never empty: [`cache_dirs`]
/// always ends with the temporary one) that takes them. A directory that
/// is not to be trusted ends the search with its error; if none could be
/// written, the first one's error is returned (the directory the user
/// expects).
fn write_out(dirs: &[PathBuf], bytes: &[u8], uid: u32) -> Result<PathBuf, PreloadError> {
    assert!(!dirs.is_empty(), "no cache directory to try");
    let mut first = None;
    for dir in dirs {
        match write_into(dir, bytes, uid) {
            Ok(path) => return Ok(path),
            Err(e) if e.is_refusal() => return Err(e),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(first.expect("dirs is not empty"))
}

fn write_into(dir: &Path, bytes: &[u8], uid: u32) -> Result<PathBuf, PreloadError> {
    private_dir(dir, uid)?;
    write_cached(dir, &file_name(bytes), bytes, |_| true)
        .map_err(|(path, e)| PreloadError::File { path, error: Arc::new(e) })
}

/// Writes `bytes` as `dir/name`, mode 0700, through a temporary file and a
/// rename, unless the file there has those bytes already and `usable`
/// says it may stay (the start stub's must be executable). The error
/// names the file it concerns. Shared with the start stub (`start.rs`).
pub(super) fn write_cached(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    usable: impl Fn(&Path) -> bool,
) -> Result<PathBuf, (PathBuf, std::io::Error)> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(existing) if existing == bytes && usable(&path) => return Ok(path),
        // Another file under the name: replaced below.
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err((path, e)),
    }
    // No fsync: a file cut short by a crash differs from the embedded bytes
    // and is replaced by the next process that reads it.
    let mut attempt = 0;
    let (temp, mut file) = loop {
        let temp = dir.join(format!(".{name}.{}-{attempt}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).mode(0o700).open(&temp) {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt + 1 < TEMP_ATTEMPTS_MAX => attempt += 1,
            Err(e) => return Err((temp, e)),
        }
    };
    // Closed before the rename: an executable still open for writing
    // cannot be exec'd (ETXTBSY).
    let written = file.write_all(bytes);
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &path)) {
        let _ = std::fs::remove_file(&temp);
        return Err((path, e));
    }
    Ok(path)
}

/// Makes `dir` (and its missing parents) with mode 0700, then checks that
/// it, or what it links to, is a directory that `uid` owns and no one else
/// can write in. A link must be `uid`'s own: in a shared temporary
/// directory anyone can make one.
fn private_dir(dir: &Path, uid: u32) -> Result<(), PreloadError> {
    let dir_error = |e: std::io::Error| PreloadError::Directory { path: dir.to_path_buf(), error: Arc::new(e) };
    DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(dir_error)?;
    let link = std::fs::symlink_metadata(dir).map_err(dir_error)?;
    if let Some(refused) = refusal(dir, link.uid(), link.mode(), uid) {
        return Err(refused);
    }
    let meta = std::fs::metadata(dir).map_err(dir_error)?;
    if !meta.is_dir() {
        return Err(PreloadError::NotADirectory { path: dir.to_path_buf() });
    }
    match refusal(dir, meta.uid(), meta.mode(), uid) {
        Some(refused) => Err(refused),
        None => Ok(()),
    }
}

/// Why a directory, or a link to one, with this owner and mode is not to
/// be trusted by `uid`, if it is not. A link's own mode is always 0777
/// and means nothing.
fn refusal(path: &Path, owner: u32, mode: u32, uid: u32) -> Option<PreloadError> {
    let is_link = mode & libc::S_IFMT == libc::S_IFLNK;
    if owner != uid {
        return Some(PreloadError::NotOwned { path: path.to_path_buf(), owner, uid });
    }
    if !is_link && mode & 0o022 != 0 {
        return Some(PreloadError::Writable { path: path.to_path_buf(), mode: mode & 0o7777 });
    }
    None
}

/// `libcmc_preload-HASH.so`, HASH the xxh3-128 of `bytes` in hex.
fn file_name(bytes: &[u8]) -> String {
    format!("libcmc_preload-{:032x}.so", xxhash_rust::xxh3::xxh3_128(bytes))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A fresh directory of this test's own under the temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cmc-preload-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn uid() -> u32 {
        // SAFETY: as in `path`.
        unsafe { libc::geteuid() }
    }

    #[test]
    fn the_cache_is_xdg_then_home_then_the_temporary_directory() {
        let tmp = PathBuf::from("/tmp");
        let some = |s: &str| Some(OsString::from(s));
        assert_eq!(
            cache_dirs(some("/x/cache"), some("/home/u"), tmp.clone(), 7),
            [PathBuf::from("/x/cache/cmc"), PathBuf::from("/tmp/cmc-7")]
        );
        assert_eq!(
            cache_dirs(None, some("/home/u"), tmp.clone(), 7),
            [PathBuf::from("/home/u/.cache/cmc"), PathBuf::from("/tmp/cmc-7")]
        );
        // Relative values are ignored, as the XDG specification says.
        assert_eq!(
            cache_dirs(some("rel"), some("/home/u"), tmp.clone(), 7),
            [PathBuf::from("/home/u/.cache/cmc"), PathBuf::from("/tmp/cmc-7")]
        );
        assert_eq!(cache_dirs(None, some(""), tmp, 7), [PathBuf::from("/tmp/cmc-7")]);
    }

    #[test]
    fn the_library_is_written_once_named_by_its_hash_in_a_private_directory() {
        let root = scratch("write");
        let dir = root.join("a/cmc");
        let path = write_out(std::slice::from_ref(&dir), b"library one", uid()).unwrap();
        assert_eq!(path, dir.join(file_name(b"library one")));
        assert_eq!(std::fs::read(&path).unwrap(), b"library one");
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        // Written again: the same file, and no temporary file left.
        assert_eq!(write_out(std::slice::from_ref(&dir), b"library one", uid()).unwrap(), path);
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [path.file_name().unwrap()]);
        std::fs::remove_dir_all(root).unwrap();
    }

    /// Writers at once, with one process id (so their temporary names
    /// collide, as in processes of two pid namespaces): each gets the
    /// whole file.
    #[test]
    fn writers_at_once_each_get_the_whole_file() {
        let root = scratch("race");
        let bytes = vec![7u8; 1 << 20];
        let paths: Vec<PathBuf> = std::thread::scope(|s| {
            let writers: Vec<_> =
                (0..8).map(|_| s.spawn(|| write_out(std::slice::from_ref(&root), &bytes, uid()))).collect();
            writers.into_iter().map(|w| w.join().unwrap().unwrap()).collect()
        });
        assert!(paths.iter().all(|p| *p == root.join(file_name(&bytes))));
        assert!(std::fs::read(&paths[0]).unwrap() == bytes);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1, "temporary files left");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_file_with_other_bytes_under_the_name_is_replaced() {
        let root = scratch("replace");
        let path = root.join(file_name(b"library"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(&path, b"libr").unwrap();
        assert_eq!(write_out(std::slice::from_ref(&root), b"library", uid()).unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), b"library");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_directory_others_can_write_in_is_refused_and_not_worked_around() {
        let root = scratch("writable");
        let open = root.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let fallback = root.join("fallback");
        let e = write_out(&[open.clone(), fallback.clone()], b"library", uid()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "preload cache directory {}: mode 777 lets other users write in it (chmod 700 it or set XDG_CACHE_HOME)",
                open.display()
            )
        );
        assert!(!fallback.exists());
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        let e = refusal(Path::new("/tmp/cmc-7"), 8, libc::S_IFDIR | 0o700, 7).unwrap();
        assert_eq!(
            e.to_string(),
            "preload cache directory /tmp/cmc-7: owned by uid 8, not by this user (uid 7); remove it or set XDG_CACHE_HOME"
        );
        // A link is judged by its owner, whatever its mode.
        assert!(refusal(Path::new("/tmp/cmc-7"), 7, libc::S_IFLNK | 0o777, 7).is_none());
        assert!(refusal(Path::new("/tmp/cmc-7"), 8, libc::S_IFLNK | 0o777, 7).is_some());
        assert!(refusal(Path::new("/tmp/cmc-7"), 7, libc::S_IFDIR | 0o755, 7).is_none());
        assert!(refusal(Path::new("/tmp/cmc-7"), 7, libc::S_IFDIR | 0o770, 7).is_some());
    }

    #[test]
    fn a_directory_that_cannot_be_made_falls_back_to_the_next() {
        let root = scratch("fallback");
        std::fs::create_dir_all(&root).unwrap();
        // A file where the first directory's parent should be.
        std::fs::write(root.join("file"), b"").unwrap();
        let first = root.join("file/cmc");
        let second = root.join("cmc");
        let path = write_out(&[first, second.clone()], b"library", uid()).unwrap();
        assert_eq!(path, second.join(file_name(b"library")));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_embedded_library_is_a_shared_object() {
        assert!(BYTES.starts_with(b"\x7fELF"), "{} bytes", BYTES.len());
        // ET_DYN
        assert_eq!(u16::from_le_bytes([BYTES[16], BYTES[17]]), 3);
    }
}

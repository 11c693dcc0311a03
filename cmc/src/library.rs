//! Shared objects loaded with `dlopen`: a C core's library, or the C
//! properties a model file names. A library stays loaded while its
//! `Library` lives; a C core's is kept for the life of the process.

use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};

/// A shared object, opened with every symbol resolved now (`RTLD_NOW`), so
/// that a broken object fails when it is named, not in mid-search.
#[derive(Debug)]
pub struct Library {
    handle: *mut c_void,
    path: PathBuf,
}

// SAFETY: a dlopen handle may be used from any thread; it is only given to
// dlsym and dlclose.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}

impl Library {
    /// Opens the shared object at `path`. The error names it and says why.
    pub fn open(path: &Path) -> Result<Library, String> {
        if !path.is_file() {
            return Err(format!("{} is not a file", path.display()));
        }
        // dlopen searches the system's library path for a name without a
        // `/`: give it the file, absolute.
        let absolute = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let c = CString::new(absolute.as_os_str().as_encoded_bytes()).map_err(|_| "a NUL in the path".to_string())?;
        // SAFETY: `c` is a NUL-terminated path.
        let handle = unsafe { nix::libc::dlopen(c.as_ptr(), nix::libc::RTLD_NOW | nix::libc::RTLD_LOCAL) };
        if handle.is_null() {
            // The loader's message names the file already.
            return Err(dlerror());
        }
        Ok(Library { handle, path: path.to_path_buf() })
    }

    /// The address of `name` in the library; `what` says what it should
    /// be, for the error (`function`, `core`).
    pub fn symbol(&self, name: &str, what: &str) -> Result<*mut c_void, String> {
        let c = CString::new(name).map_err(|_| format!("`{name}` has a NUL"))?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { nix::libc::dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            return Err(format!("no {what} `{name}` in {}", self.path.display()));
        }
        Ok(p)
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen; whoever holds a symbol
        // holds the library too.
        unsafe { nix::libc::dlclose(self.handle) };
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local message or null.
    let p = unsafe { nix::libc::dlerror() };
    if p.is_null() {
        return "unknown dlopen error".to_string();
    }
    // SAFETY: non-null, NUL-terminated, valid until the next dl call here.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

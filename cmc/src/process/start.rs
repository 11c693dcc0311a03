//! The start stub (`cmc-start`), embedded in this library and written out
//! once per process next to the preload, so that the supervisor can exec
//! it as every node's template (`cmc/start/main.rs` says what it does).
//!
//! `build.rs` compiles `cmc/start/` into a static executable and [`BYTES`]
//! includes it. [`path`] writes it, on first use, into the preload's cache
//! directory ([`super::preload::path`] makes and checks that directory: it
//! must be this user's and no one else's to write in, since what it holds
//! runs in every node), as `cmc-start-HASH`, HASH the xxh3-128 of its
//! bytes, mode 0700, under a temporary name renamed into place, so that
//! processes doing the same at once never see part of it; a file already
//! there is used only if its bytes are the embedded ones and it is
//! executable, and replaced otherwise. [`find_start`] picks it unless
//! `$CMC_START` names another.
//!
//! The protocol the stub speaks (its environment variable, hello, park and
//! exit statuses) is [`protocol`], the stub's own source file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::preload::PreloadError;

// The stub's protocol with the supervisor, shared as source with the stub
// (its own inner docs say so; an outer doc here would resolve their links
// in this module).
#[path = "../../start/protocol.rs"]
pub mod protocol;

/// The start stub, as `build.rs` compiled it for this target.
#[cfg(target_arch = "x86_64")]
pub static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cmc-start"));
/// No stub on this architecture: the process front end is x86-64 only.
#[cfg(not(target_arch = "x86_64"))]
pub static BYTES: &[u8] = &[];

/// Why the embedded stub could not be written out.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StartError {
    /// The cache directory (the preload's) could not be made, or is not to
    /// be trusted.
    #[error(transparent)]
    Directory(#[from] PreloadError),
    /// The stub's file could not be written or checked.
    #[error("start stub {path}: {error}")]
    File {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// `$CMC_START` names no file.
    #[error("start stub {path} (CMC_START): no such file")]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// No stub is embedded for this architecture.
    #[error("no start stub for {arch}: the process front end runs on x86-64 only")]
    Unsupported {
        /// The architecture, as `std::env::consts::ARCH` names it.
        arch: &'static str,
    },
}

/// The embedded stub's path, written out on the first call in this process
/// (see the module documentation); later calls return the same path, or
/// the same error.
pub fn path() -> Result<&'static Path, StartError> {
    static PATH: OnceLock<Result<PathBuf, StartError>> = OnceLock::new();
    PATH.get_or_init(|| {
        if BYTES.is_empty() {
            return Err(StartError::Unsupported { arch: std::env::consts::ARCH });
        }
        let preload = super::preload::path()?;
        let dir = preload.parent().unwrap_or(Path::new("/"));
        write_into(dir, BYTES)
    })
    .as_deref()
    .map_err(Clone::clone)
}

/// The stub the supervisor execs: `$CMC_START` if set and not empty (a
/// user's own build), else the one embedded in this library, written out
/// on the first call ([`path`]).
pub fn find_start() -> Result<PathBuf, StartError> {
    match std::env::var_os("CMC_START") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.is_file() { Ok(p) } else { Err(StartError::Missing { path: p }) }
        }
        _ => Ok(path()?.to_path_buf()),
    }
}

/// Writes `bytes` as `dir/cmc-start-HASH`, mode 0700, unless that file is
/// already there with those bytes and executable. `dir` is trusted (the
/// preload's checked cache directory).
fn write_into(dir: &Path, bytes: &[u8]) -> Result<PathBuf, StartError> {
    let executable = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o100 != 0);
    super::preload::write_cached(dir, &file_name(bytes), bytes, executable)
        .map_err(|(path, e)| StartError::File { path, error: Arc::new(e) })
}

/// The address of the embedded stub's CPUID gate: the instruction pointer
/// of its one `arch_prctl(ARCH_SET_CPUID, 1)` (the hello's `cpuid_gate`),
/// read from the stub's symbol table. The stub is linked at a fixed
/// address, so this is known before any node starts: a seccomp filter can
/// let exactly that call through by its `instruction_pointer`, with no
/// notification per emulated `cpuid`. `None` if the symbol is missing (a
/// stripped stub).
pub fn cpuid_gate() -> Option<u64> {
    symbol(BYTES, b"cmc_start_cpuid_gate_return")
}

/// The value of the symbol `name` in the ELF64 file `elf`'s `.symtab`.
fn symbol(elf: &[u8], name: &[u8]) -> Option<u64> {
    const SHT_SYMTAB: u32 = 2;
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (shentsize, shnum) = (usize::from(u16_at(0x3a)?), usize::from(u16_at(0x3c)?));
    let section = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    for i in 0..shnum {
        let sh = section(i)?;
        if u32_at(sh + 4)? != SHT_SYMTAB {
            continue;
        }
        let (offset, size, entsize) = (u64_at(sh + 0x18)?, u64_at(sh + 0x20)?, u64_at(sh + 0x38)?);
        let strtab = usize::try_from(u64_at(section(usize::try_from(u32_at(sh + 0x28)?).ok()?)? + 0x18)?).ok()?;
        if entsize == 0 {
            return None;
        }
        for s in 0..size / entsize {
            let sym = usize::try_from(offset + s * entsize).ok()?;
            let at = strtab.checked_add(usize::try_from(u32_at(sym)?).ok()?)?;
            let rest = elf.get(at..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            if &rest[..end] == name {
                return u64_at(sym + 8);
            }
        }
    }
    None
}

/// `cmc-start-HASH`, HASH the xxh3-128 of `bytes` in hex.
fn file_name(bytes: &[u8]) -> String {
    format!("cmc-start-{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cmc-start-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_embedded_stub_is_a_static_executable_at_its_address() {
        assert!(BYTES.starts_with(b"\x7fELF"), "{} bytes", BYTES.len());
        // ET_EXEC, x86-64, and its entry in its image.
        assert_eq!(u16::from_le_bytes([BYTES[16], BYTES[17]]), 2);
        assert_eq!(u16::from_le_bytes([BYTES[18], BYTES[19]]), 62);
        let entry = u64::from_le_bytes(BYTES[24..32].try_into().unwrap());
        assert!((protocol::IMAGE_BASE..protocol::IMAGE_BASE + (1 << 20)).contains(&entry), "entry {entry:#x}");
    }

    #[test]
    fn the_cpuid_gate_is_found_in_the_stub_image() {
        let gate = cpuid_gate().expect("the gate's symbol");
        assert!((protocol::IMAGE_BASE..protocol::IMAGE_BASE + (1 << 20)).contains(&gate), "gate {gate:#x}");
        assert_eq!(symbol(BYTES, b"no such symbol"), None);
    }

    #[test]
    fn the_stub_is_written_once_executable_and_named_by_its_hash() {
        let dir = scratch("write");
        let path = write_into(&dir, b"stub one").unwrap();
        assert_eq!(path, dir.join(file_name(b"stub one")));
        assert_eq!(std::fs::read(&path).unwrap(), b"stub one");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(write_into(&dir, b"stub one").unwrap(), path);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "temporary files left");
        // The right bytes, not executable: replaced.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(write_into(&dir, b"stub one").unwrap(), path);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        // Other bytes under the name: replaced.
        std::fs::write(&path, b"stub").unwrap();
        assert_eq!(write_into(&dir, b"stub one").unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), b"stub one");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_cpuid_table_answers_a_leaf_for_any_subleaf_or_the_subleaves_it_holds() {
        use protocol::{ANY_SUBLEAF, CPUID_ENTRIES_MAX, CPUID_MAGIC, CpuidEntry, CpuidTable, hide_entropy};
        let entry = |leaf, subleaf, r: u32| CpuidEntry { leaf, subleaf, regs: [r; 4] };
        let mut t =
            Box::new(CpuidTable { magic: 0, count: 3, reserved: 0, entries: [entry(0, 0, 0); CPUID_ENTRIES_MAX] });
        t.entries[0] = entry(1, ANY_SUBLEAF, 1);
        t.entries[1] = entry(7, 0, 70);
        t.entries[2] = entry(7, 1, 71);
        assert_eq!(t.lookup(1, 0), None, "not filled");
        t.magic = CPUID_MAGIC;
        assert_eq!(t.lookup(1, 0x1234), Some([1; 4]), "any subleaf");
        assert_eq!(t.lookup(7, 1), Some([71; 4]));
        assert_eq!(t.lookup(7, 2), None, "a subleaf it does not hold: the gate");
        assert_eq!(t.lookup(2, 0), None, "a leaf it does not hold: the gate");
        assert_eq!(hide_entropy(1, 0, [0, 0, u32::MAX, 0]), [0, 0, !(1 << 30), 0], "RDRAND");
        assert_eq!(hide_entropy(7, 0, [0, u32::MAX, 0, 0]), [0, !(1 << 18), 0, 0], "RDSEED");
        assert_eq!(hide_entropy(7, 1, [0, u32::MAX, 0, 0]), [0, u32::MAX, 0, 0]);
    }
}

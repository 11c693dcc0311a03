//! Removing the vDSO and its data pages (`[vvar]`, `[vvar_vclock]`) from
//! the address space before parking. The vDSO answers `clock_gettime`,
//! `gettimeofday`, `time`, `getcpu` and (glibc 2.41) `getrandom` in user
//! space, where seccomp never sees them, and the vvar pages hold the real
//! time, readable with no call at all. Without them, and without
//! `AT_SYSINFO_EHDR` (the stub does not pass it on), glibc falls back to
//! the system calls, which the supervisor answers.
//!
//! The mappings are found by name in `/proc/self/maps`, read once: the
//! kernel's names, whatever their number and sizes in this kernel version
//! (three mappings since 6.13, two before). The same read records where
//! the stack mapping ends, for a program that asks for an executable
//! stack.

use crate::sys;

/// Room for the stub's maps: about eight lines of under 100 bytes.
const MAPS_BYTES: usize = 16 * 1024;
/// Mappings named `[vdso]` or `[vvar...]` handled at most.
const RANGES_MAX: usize = 8;

static mut MAPS: [u8; MAPS_BYTES] = [0; MAPS_BYTES];

/// What [`remove`] did.
pub struct Removed {
    /// The vDSO (the mapping `AT_SYSINFO_EHDR` points into, if the kernel
    /// gave one) and every vvar mapping found are gone.
    pub removed: bool,
    /// How many mappings were unmapped.
    pub mappings: u32,
    /// The end of the `[stack]` mapping, 0 if not found.
    pub stack_end: usize,
}

/// Unmaps every `[vdso]` and `[vvar...]` mapping. `ehdr` is
/// `AT_SYSINFO_EHDR` (0 if none).
///
/// # Safety
/// Called once, before parking, while nothing uses the vDSO (the stub
/// never does).
pub unsafe fn remove(ehdr: usize) -> Removed {
    let mut out = Removed { removed: false, mappings: 0, stack_end: 0 };
    // Called once: the only reference to MAPS.
    let maps = unsafe { core::slice::from_raw_parts_mut((&raw mut MAPS) as *mut u8, MAPS_BYTES) };
    let Some(len) = read_maps(maps) else { return out };
    let mut ranges = [(0usize, 0usize); RANGES_MAX];
    let mut count = 0;
    let mut too_many = false;
    let mut vdso_found = ehdr == 0;
    for line in maps[..len].split(|&b| b == b'\n') {
        let Some((start, end, name)) = parse(line) else { continue };
        if name == b"[stack]" {
            out.stack_end = end;
        }
        if !(name.starts_with(b"[vdso") || name.starts_with(b"[vvar")) {
            continue;
        }
        if name == b"[vdso]" && (start..end).contains(&ehdr) {
            vdso_found = true;
        }
        if count == RANGES_MAX {
            too_many = true;
            continue;
        }
        ranges[count] = (start, end);
        count += 1;
    }
    let mut all = true;
    for &(start, end) in &ranges[..count] {
        if unsafe { sys::munmap(start, end - start) } == 0 {
            out.mappings += 1;
        } else {
            all = false;
        }
    }
    out.removed = all && !too_many && vdso_found && count > 0;
    out
}

/// Reads `/proc/self/maps` whole into `buf`; `None` if it cannot be read
/// or does not fit.
fn read_maps(buf: &mut [u8]) -> Option<usize> {
    let fd = sys::open_read(b"/proc/self/maps\0");
    if fd < 0 {
        return None;
    }
    let fd = fd as i32;
    let mut len = 0;
    let complete = loop {
        if len == buf.len() {
            break false;
        }
        let n = unsafe { sys::syscall3(sys::SYS_READ, fd as usize, buf.as_mut_ptr() as usize + len, buf.len() - len) };
        if n == -sys::EINTR {
            continue;
        }
        if n < 0 {
            break false;
        }
        if n == 0 {
            break true;
        }
        len += n as usize;
    };
    sys::close(fd);
    complete.then_some(len)
}

/// One line of maps, `start-end perms offset dev inode [name]`: its range
/// and name (empty for an anonymous mapping).
fn parse(line: &[u8]) -> Option<(usize, usize, &[u8])> {
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let range = fields.next()?;
    let dash = range.iter().position(|&b| b == b'-')?;
    let start = hex(&range[..dash])?;
    let end = hex(&range[dash + 1..])?;
    // perms, offset, dev, inode, then the name (which may hold spaces;
    // only bracketed names matter here, and they hold none).
    for _ in 0..4 {
        fields.next()?;
    }
    let name = fields.next().unwrap_or(b"");
    (start < end).then_some((start, end, name))
}

fn hex(digits: &[u8]) -> Option<usize> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut v = 0usize;
    for &d in digits {
        let x = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        v = (v << 4) | x as usize;
    }
    Some(v)
}

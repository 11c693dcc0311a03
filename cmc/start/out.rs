//! The stub's messages: one line on fd 2, `cmc-start: ...`, then the exit
//! status that says which step failed (`protocol::EXIT_*`). Built in a
//! fixed buffer: no allocation, no formatting machinery.

use crate::sys;

const CAPACITY: usize = 1024;

/// A message under construction; anything past its capacity is cut.
pub struct Msg {
    buf: [u8; CAPACITY],
    len: usize,
}

impl Msg {
    pub fn new() -> Msg {
        let mut m = Msg { buf: [0; CAPACITY], len: 0 };
        m.s(b"cmc-start: ");
        m
    }

    /// Appends bytes.
    pub fn s(&mut self, bytes: &[u8]) -> &mut Msg {
        for &b in bytes {
            // Keep room for the newline.
            if self.len + 1 >= CAPACITY {
                break;
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        self
    }

    /// Appends a path or other NUL-terminated bytes, without the NUL.
    pub fn path(&mut self, bytes: &[u8]) -> &mut Msg {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        self.s(&bytes[..end])
    }

    /// Appends a number in decimal.
    pub fn num(&mut self, mut n: u64) -> &mut Msg {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.s(&digits[i..])
    }

    /// Appends a number in hexadecimal, `0x` first.
    pub fn hex(&mut self, n: u64) -> &mut Msg {
        let mut digits = [0u8; 16];
        let mut i = digits.len();
        let mut v = n;
        loop {
            i -= 1;
            digits[i] = b"0123456789abcdef"[(v & 15) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.s(b"0x").s(&digits[i..])
    }

    /// Appends a system call's error (`-errno`): its name where the stub
    /// knows it, and its number.
    pub fn errno(&mut self, r: isize) -> &mut Msg {
        let e = r.unsigned_abs() as isize;
        let name: &[u8] = match e {
            sys::EPERM => b"EPERM, operation not permitted",
            sys::ENOENT => b"ENOENT, no such file or directory",
            sys::EIO => b"EIO, input/output error or a short file",
            sys::EBADF => b"EBADF, bad file descriptor",
            sys::ENOMEM => b"ENOMEM, out of memory",
            sys::EACCES => b"EACCES, permission denied",
            sys::EEXIST => b"EEXIST, the address range is taken",
            sys::ENODEV => b"ENODEV, no such device",
            sys::ENOTDIR => b"ENOTDIR, not a directory",
            sys::EISDIR => b"EISDIR, is a directory",
            sys::EINVAL => b"EINVAL, invalid argument",
            sys::ENAMETOOLONG => b"ENAMETOOLONG, file name too long",
            sys::ENOSYS => b"ENOSYS, function not implemented",
            sys::ELOOP => b"ELOOP, too many levels of symbolic links",
            _ => b"error",
        };
        self.s(name).s(b" (errno ").num(e as u64).s(b")")
    }

    /// Writes the line to fd 2 and exits with `status`.
    pub fn exit(&mut self, status: i32) -> ! {
        self.buf[self.len] = b'\n';
        sys::write_all(2, &self.buf[..self.len + 1]);
        sys::exit_group(status)
    }
}

/// A limit exceeded: names what, the limit and its value.
pub fn limit(what: &[u8], name: &[u8], max: usize) -> ! {
    Msg::new()
        .s(what)
        .s(b": more than the stub's limit ")
        .s(name)
        .s(b" = ")
        .num(max as u64)
        .exit(crate::protocol::EXIT_LIMIT)
}

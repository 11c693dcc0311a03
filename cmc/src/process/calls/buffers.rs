//! The buffers of a read or write call in the target's memory: the
//! (address, length) pairs a call names, and copying bytes into them
//! (`scatter`) or out of them (`gather`) with `notif`'s memory access.
//!
//! It owns only the layout of the calls' arguments (`iovec`, `msghdr`);
//! what the bytes mean, and which calls reach here, is the handlers'.

use nix::libc;

use super::super::notif::{self, Notif};

/// The target's buffers of a read or write call: (address, length) each.
pub(super) fn iovecs(c: &Notif) -> Result<Vec<(u64, usize)>, i32> {
    let (iov_at, count) = match c.nr {
        libc::SYS_read
        | libc::SYS_write
        | libc::SYS_recvfrom
        | libc::SYS_sendto
        | libc::SYS_pread64
        | libc::SYS_pwrite64 => {
            return Ok(vec![(c.args[1], c.args[2] as usize)]);
        }
        libc::SYS_readv
        | libc::SYS_writev
        | libc::SYS_preadv
        | libc::SYS_pwritev
        | libc::SYS_preadv2
        | libc::SYS_pwritev2 => (c.args[1], c.args[2] as usize),
        libc::SYS_recvmsg | libc::SYS_sendmsg => {
            let h = notif::read_mem(c.pid, c.args[1], 32).ok_or(libc::EFAULT)?;
            let at = u64::from_ne_bytes(h[16..24].try_into().unwrap_or_default());
            let count = u64::from_ne_bytes(h[24..32].try_into().unwrap_or_default());
            (at, count as usize)
        }
        _ => return Err(libc::EINVAL),
    };
    if count > 1024 {
        return Err(libc::EINVAL);
    }
    let raw = notif::read_mem(c.pid, iov_at, 16 * count).ok_or(libc::EFAULT)?;
    Ok(raw
        .chunks_exact(16)
        .map(|v| {
            let base = u64::from_ne_bytes(v[0..8].try_into().unwrap_or_default());
            let len = u64::from_ne_bytes(v[8..16].try_into().unwrap_or_default());
            (base, len as usize)
        })
        .collect())
}

/// Writes `data` into the call's buffers, as far as they go; returns the
/// count. For `recvmsg`, also clears the control length and flags.
pub(super) fn scatter(c: &Notif, data: &[u8]) -> Result<usize, i32> {
    let mut done = 0;
    for (base, len) in iovecs(c)? {
        if done == data.len() {
            break;
        }
        let k = len.min(data.len() - done);
        if !notif::write_mem(c.pid, base, &data[done..done + k]) {
            return Err(libc::EFAULT);
        }
        done += k;
    }
    if c.nr == libc::SYS_recvmsg {
        // msg_namelen (at 8), msg_controllen (at 40), msg_flags (at 48).
        let ok = notif::write_mem(c.pid, c.args[1] + 8, &0u32.to_ne_bytes())
            && notif::write_mem(c.pid, c.args[1] + 40, &0u64.to_ne_bytes())
            && notif::write_mem(c.pid, c.args[1] + 48, &0u32.to_ne_bytes());
        if !ok {
            return Err(libc::EFAULT);
        }
    }
    Ok(done)
}

/// Reads the bytes of a write call (at most 64 KiB: more than any record or
/// message may hold, so the limit checks see the true size).
pub(super) fn gather(c: &Notif) -> Result<Vec<u8>, i32> {
    let mut out = Vec::new();
    for (base, len) in iovecs(c)? {
        let len = len.min((1 << 16) - out.len().min(1 << 16));
        out.extend_from_slice(&notif::read_mem(c.pid, base, len).ok_or(libc::EFAULT)?);
    }
    Ok(out)
}

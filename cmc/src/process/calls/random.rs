//! Entropy: `getrandom` and reads of a random device (`/dev/random` and
//! `/dev/urandom`, the character devices 1:8 and 1:9, whatever path named
//! them) answer from the node's own random stream,
//! a fixed function of the node and the bytes it has used so far (kept in
//! the world), so a replay reads the same bytes.
//!
//! It owns the stream and where each node is in it; opening a random
//! device is `files`'s (`on_open`), and a read reaches here from
//! `connections`'s `on_read`, which dispatches on the descriptor.

use nix::libc;

use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::Answer;
use super::buffers::{iovecs, scatter};

/// One `getrandom` answers at most this much, as the kernel answers at most
/// 32 MiB; the caller loops.
const RANDOM_CALL_MAX: usize = 1 << 20;

/// The random stream of node `n`: byte `i` is byte `i % 8` of the xxh3 of
/// the block number `i / 8`, seeded by the node. Fixed forever: replays and
/// counterexample files depend on it.
pub fn random_stream(n: u8, from: u64, len: usize) -> Vec<u8> {
    let seed = 0x636d_6300 ^ n as u64;
    (from..from + len as u64)
        .map(|i| xxhash_rust::xxh3::xxh3_64_with_seed(&(i / 8).to_le_bytes(), seed).to_le_bytes()[(i % 8) as usize])
        .collect()
}

impl Supervisor {
    pub(super) fn on_getrandom(&mut self, n: u8, c: &Notif) -> Answer {
        // GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE; the last two together,
        // or any other bit, EINVAL, as Linux answers.
        let flags = c.args[2] as u32;
        if flags & !0x7 != 0 || flags & 0x6 == 0x6 {
            return Answer::Err(libc::EINVAL);
        }
        let len = (c.args[1] as usize).min(RANDOM_CALL_MAX);
        let bytes = self.random(n, len);
        if notif::write_mem(c.pid, c.args[0], &bytes) { Answer::Val(len as i64) } else { Answer::Err(libc::EFAULT) }
    }

    /// A read of a random device node `n` opened.
    pub(super) fn read_random(&mut self, n: u8, c: &Notif) -> Answer {
        let want = match iovecs(c) {
            Ok(iov) => iov.iter().map(|(_, l)| l).sum::<usize>().min(RANDOM_CALL_MAX),
            Err(e) => return Answer::Err(e),
        };
        let bytes = self.random(n, want);
        match scatter(c, &bytes) {
            Ok(k) => Answer::Val(k as i64),
            Err(e) => Answer::Err(e),
        }
    }

    fn random(&mut self, n: u8, len: usize) -> Vec<u8> {
        let node = &mut self.world.nodes[n as usize];
        let from = node.random_used;
        node.random_used += len as u64;
        random_stream(n, from, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_streams_are_fixed_and_per_node() {
        let a = random_stream(0, 0, 16);
        assert_eq!(random_stream(0, 0, 16), a);
        assert_eq!(random_stream(0, 5, 4), a[5..9].to_vec(), "a stream is one sequence, whatever the calls");
        assert_ne!(random_stream(1, 0, 16), a);
    }
}

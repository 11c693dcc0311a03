//! Polling: `poll` and `ppoll` over the descriptors the checker owns
//! (connections, sockets, random devices), level-triggered, as the kernel
//! answers them. What is ready when the call is made is answered at once:
//! a connection end with a message received and not read (`Conn::at_*`)
//! or told EOF, a listening socket with a connection in the node's accept
//! queue, any connection for writing (a write never waits in the model),
//! a random device. Otherwise a poll with a timeout of zero returns 0, and
//! any other holds the node in `Blocked::Poll`, its watched descriptors
//! and events in the world (`NodeWorld::watch`), until an action makes
//! something ready: DELIVER moves the oldest message in flight toward a
//! watched end into its receive buffer, ACCEPT puts a waiting connection
//! in the accept queue, EOF marks an end whose peer is gone and which is
//! drained (`End::Eof`), and TIMEOUT, when the poll has a timeout, ends it
//! with nothing ready. The answer is computed again from the world then,
//! and the call's `revents` written.
//!
//! A poll of files only, which does not wait, runs (std's start-up poll of
//! fds 0 to 2); one that waits on files only, or mixes files with
//! descriptors the checker owns, is refused: the machine, not the world,
//! would answer it. It owns the answers to polls; the actions that end one
//! are the supervisor's.

use nix::libc;

use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, End, Label, VFd};
use super::time::read_timespec;
use super::{Answer, refuse};

/// Descriptors in one poll.
const POLLFDS_MAX: usize = 1024;

/// Events that mean "can read" and "can write".
const IN: i16 = libc::POLLIN | libc::POLLRDNORM;
const OUT: i16 = libc::POLLOUT | libc::POLLWRNORM;

/// How long a poll may wait.
enum Wait {
    /// Not at all (a timeout of zero).
    No,
    /// Until a logical second.
    Until(u32),
    /// Until something is ready (a negative timeout, or none).
    Forever,
}

impl Supervisor {
    /// `poll(fds, nfds, timeout_ms)` and `ppoll(fds, nfds, timeout, mask)`.
    pub(super) fn on_poll(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let count = c.args[1] as usize;
        if count > POLLFDS_MAX {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let wait = match self.poll_wait(c) {
            Ok(w) => w,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let Some(raw) = notif::read_mem(c.pid, c.args[0], 8 * count) else { return Ok(Answer::Err(libc::EFAULT)) };
        let entries = parse(&raw);
        let watched = entries.iter().filter(|(fd, _)| *fd >= 0);
        let (owned, files): (Vec<_>, Vec<_>) = watched.partition(|(fd, _)| self.owns(n, *fd));
        if owned.is_empty() {
            if matches!(wait, Wait::No) {
                return Ok(Answer::Continue);
            }
            return refuse(n, c, "a poll that waits on files only: the machine, not the world, would end it");
        }
        if !files.is_empty() {
            return refuse(n, c, "a poll of connections together with files: the machine would answer for the files");
        }
        if owned.iter().any(|(fd, _)| *fd == 3 || *fd == 193) {
            return refuse(n, c, "polling fd 3 or 193, which hold records");
        }
        if let Some(answer) = self.poll_ready(n, c, &raw) {
            return Ok(answer);
        }
        let until = match wait {
            Wait::No => return Ok(self.write_revents(n, c, &raw)),
            Wait::Until(u) => Some(u),
            Wait::Forever => None,
        };
        let mut watch = std::collections::BTreeMap::new();
        for &(fd, events) in &owned {
            *watch.entry(fd).or_insert(0) |= events;
        }
        if self.watches_both_ends(n, &watch) {
            return refuse(n, c, "polling both ends of a connection to itself");
        }
        self.world.nodes[n as usize].watch = watch;
        Ok(Answer::Hold(Blocked::Poll { until }))
    }

    /// Answers node `n`'s held poll from the world as it is now (after the
    /// action that ended it): the events ready, or none after a TIMEOUT.
    pub(in crate::process) fn answer_poll(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let node = &mut self.world.nodes[n as usize];
        node.blocked = Blocked::Nothing;
        node.watch.clear();
        let count = notif.args[1] as usize;
        let answer = match notif::read_mem(notif.pid, notif.args[0], 8 * count) {
            Some(raw) => self.write_revents(n, &notif, &raw),
            None => Answer::Err(libc::EFAULT),
        };
        self.answer(n, &notif, answer)
    }

    /// The end of connection `label` that node `n` watches in its poll,
    /// if it watches one for reading.
    pub(in crate::process) fn watched_end(&self, n: u8, label: &Label) -> Option<super::super::world::Side> {
        let node = &self.world.nodes[n as usize];
        node.watch.iter().find_map(|(fd, &events)| match node.fds.get(fd) {
            Some(VFd::Conn { label: l, side }) if l == label && events & (IN | libc::POLLRDHUP) != 0 => Some(*side),
            _ => None,
        })
    }

    fn poll_wait(&self, c: &Notif) -> Result<Wait, i32> {
        if c.nr == libc::SYS_ppoll {
            if c.args[2] == 0 {
                return Ok(Wait::Forever);
            }
            return Ok(match read_timespec(c, c.args[2])? {
                (0, 0) => Wait::No,
                (sec, nsec) => Wait::Until(self.after(sec, nsec)),
            });
        }
        Ok(match c.args[2] as i32 {
            ms if ms < 0 => Wait::Forever,
            0 => Wait::No,
            ms => Wait::Until(self.after(ms as i64 / 1000, (ms as i64 % 1000) * 1_000_000)),
        })
    }

    /// The answer of a poll whose pollfd array is `raw` if something is
    /// ready, its `revents` written.
    fn poll_ready(&self, n: u8, c: &Notif, raw: &[u8]) -> Option<Answer> {
        let ready = parse(raw).iter().any(|&(fd, events)| fd >= 0 && self.readiness(n, fd, events) != 0);
        ready.then(|| self.write_revents(n, c, raw))
    }

    /// Writes every entry's `revents` and answers with how many are
    /// nonzero.
    fn write_revents(&self, n: u8, c: &Notif, raw: &[u8]) -> Answer {
        let mut out = raw.to_vec();
        let mut ready = 0;
        for (i, (fd, events)) in parse(raw).into_iter().enumerate() {
            let revents = if fd < 0 { 0 } else { self.readiness(n, fd, events) };
            ready += (revents != 0) as i64;
            out[8 * i + 6..8 * i + 8].copy_from_slice(&revents.to_ne_bytes());
        }
        if notif::write_mem(c.pid, c.args[0], &out) { Answer::Val(ready) } else { Answer::Err(libc::EFAULT) }
    }

    /// The events of `events` that descriptor `fd` of node `n` has ready,
    /// and those the kernel reports unasked.
    fn readiness(&self, n: u8, fd: i32, events: i16) -> i16 {
        let node = &self.world.nodes[n as usize];
        let ready = match node.fds.get(&fd) {
            Some(VFd::Conn { label, side }) => match self.world.conns.get(label) {
                Some(c) => {
                    let eof = c.end(*side) == End::Eof;
                    let readable = eof || !c.at(*side).is_empty();
                    (if readable { IN } else { 0 }) | (if eof { libc::POLLRDHUP } else { 0 }) | OUT
                }
                None => OUT,
            },
            Some(VFd::Socket { listening: true, .. }) => {
                if node.accept_queue.is_empty() {
                    0
                } else {
                    IN
                }
            }
            // An unconnected stream socket: writable, and hung up.
            Some(VFd::Socket { listening: false, .. }) => return (OUT & events) | libc::POLLHUP,
            Some(VFd::Random) => IN | OUT,
            None => return libc::POLLNVAL,
        };
        ready & events
    }

    /// Whether `watch` names both ends of one connection (a node's
    /// connection to itself), which one DELIVER token could not tell apart.
    fn watches_both_ends(&self, n: u8, watch: &std::collections::BTreeMap<i32, i16>) -> bool {
        let fds = &self.world.nodes[n as usize].fds;
        let mut labels: Vec<Label> = watch
            .keys()
            .filter_map(|fd| match fds.get(fd) {
                Some(VFd::Conn { label, .. }) => Some(*label),
                _ => None,
            })
            .collect();
        let all = labels.len();
        labels.sort();
        labels.dedup();
        labels.len() != all
    }
}

/// Each `struct pollfd` of `raw`: its descriptor and events.
fn parse(raw: &[u8]) -> Vec<(i32, i16)> {
    raw.chunks_exact(8)
        .map(|p| {
            let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
            (fd, i16::from_ne_bytes([p[4], p[5]]))
        })
        .collect()
}

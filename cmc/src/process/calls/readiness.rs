//! What a descriptor of a node is ready for, read from the world: the
//! events `poll`, `select` and epoll report (a connection's end as
//! `tcp_poll` gives them, a listening socket, a timer, and the pipes,
//! socketpairs and eventfds inside a node as `pipe_poll`, `unix_poll`
//! and `eventfd_poll` give them). A function of the world alone, so that
//! epoll's ready list can follow every change of it, whichever action
//! made it (`ready_list`).

use nix::libc;

use super::super::world::{Local, PairEnd, ProcessWorld, VFd};
use super::poll::{IN, OUT};

impl ProcessWorld {
    /// The events of `events` that descriptor `fd` of node `n` has ready,
    /// and those the kernel reports unasked.
    pub(in crate::process) fn readiness(&self, n: u8, fd: i32, events: i16) -> i16 {
        let node = &self.nodes[n as usize];
        let ready = match node.fds.get(&fd) {
            Some(&v @ (VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. })) => {
                return self.local_readiness(n, v, events);
            }
            // The kernel's events (`Conn::poll_events`); a hang-up and an
            // error are reported unasked.
            Some(VFd::Conn { label, side }) => match self.conns.get(label) {
                Some(c) => {
                    let ev = c.poll_events(*side);
                    return (ev & events) | (ev & (libc::POLLHUP | libc::POLLERR));
                }
                None => OUT,
            },
            Some(VFd::Socket { listening: true, .. }) => {
                let conns = &self.conns;
                if node.accept_queue.iter().any(|l| conns.get(l).is_some_and(|c| c.listener == fd)) { IN } else { 0 }
            }
            // A socket whose connect was refused: closed, readable (its
            // error, then the end), hung up, and in error until the error
            // is taken.
            Some(VFd::Socket { refused: r @ (1 | 2), .. }) => {
                let ev = IN | OUT | libc::POLLRDHUP;
                let unasked = libc::POLLHUP | if *r == 1 { libc::POLLERR } else { 0 };
                return (ev & events) | unasked;
            }
            // An unconnected stream socket: writable, and hung up.
            Some(VFd::Socket { listening: false, .. }) => return (OUT & events) | libc::POLLHUP,
            Some(
                VFd::Random { .. }
                | VFd::File { .. }
                | VFd::Dir { .. }
                | VFd::Device { .. }
                | VFd::Out { .. }
                | VFd::Host { .. },
            ) => IN | OUT,
            // Refused where it would be watched (see `on_wait`, `on_epoll_ctl`).
            Some(VFd::Epoll { .. }) => 0,
            Some(VFd::Timer) => {
                if node.timers.get(&fd).is_some_and(|t| t.expired(self.now_ns())) {
                    IN
                } else {
                    0
                }
            }
            None => return libc::POLLNVAL,
        };
        ready & events
    }

    /// The poll events end `v` of an object inside node
    /// `n` has of `events`, and those the kernel reports unasked
    /// (`POLLERR`, `POLLHUP`): a pipe's `pipe_poll`, a socket's
    /// `unix_poll`, an eventfd's `eventfd_poll`.
    fn local_readiness(&self, n: u8, v: VFd, events: i16) -> i16 {
        let node = &self.nodes[n as usize];
        let Some(id) = v.local_id() else { return libc::POLLNVAL };
        let Some(local) = node.locals.get(id as usize) else { return libc::POLLNVAL };
        let mask = match (v, local) {
            (VFd::Pipe { write: false, .. }, Local::Pipe { bytes }) => {
                let writers = node.local_end_open(id, |v| matches!(v, VFd::Pipe { write: true, .. }));
                (if bytes.is_empty() { 0 } else { IN }) | (if writers { 0 } else { libc::POLLHUP })
            }
            (VFd::Pipe { .. }, Local::Pipe { .. }) => {
                // Within local_bytes_max a pipe always has room.
                let readers = node.local_end_open(id, |v| matches!(v, VFd::Pipe { write: false, .. }));
                OUT | (if readers { 0 } else { libc::POLLERR })
            }
            (VFd::Event { .. }, Local::Event { count, .. }) => {
                (if *count > 0 { libc::POLLIN } else { 0 }) | (if *count < u64::MAX - 1 { libc::POLLOUT } else { 0 })
            }
            (VFd::Pair { end, .. }, Local::Pair { ends, .. }) => {
                let me = &ends[end as usize];
                let mut mask = OUT | libc::POLLWRBAND;
                if me.reset {
                    mask |= libc::POLLERR;
                }
                if me.shutdown & PairEnd::RCV != 0 {
                    mask |= libc::POLLRDHUP | IN;
                }
                if me.shutdown == PairEnd::RCV | PairEnd::SEND {
                    mask |= libc::POLLHUP;
                }
                if !me.queue.is_empty() {
                    mask |= IN;
                }
                mask
            }
            _ => return libc::POLLNVAL,
        };
        mask & (events | libc::POLLERR | libc::POLLHUP)
    }
}

//! Edge-triggered and one-shot epoll (`EPOLLET`, `EPOLLONESHOT`), as the
//! kernel keeps them (`fs/eventpoll.c`), in the world.
//!
//! On Linux an interest is put on its instance's ready list by a wake-up
//! of its file (`ep_poll_callback`), or by `EPOLL_CTL_ADD` and
//! `EPOLL_CTL_MOD` when the file is ready then; `epoll_wait` takes every
//! interest off the list, reports those whose file is ready for what they
//! ask, and puts back only the level-triggered ones. So an edge-triggered
//! interest reports once per wake-up, whatever is still unread, and a
//! one-shot interest that reported reports nothing more until
//! `EPOLL_CTL_MOD`.
//!
//! Two kinds of wake-up, kept two ways ([`Interest`]):
//! - **Arrivals**, which may leave the file's events as they were: a
//!   message delivered to a connection's end (DELIVER: a new message is an
//!   edge, even where one is unread; a part of one read is not), a
//!   connection in a listener's queue (ACCEPT), a write to a pipe, to a
//!   socketpair's end or to an eventfd (every write, even of 0, even
//!   where the count was not 0: mio's waker relies on this), and a read of
//!   an eventfd or a socketpair's end, which wakes its writers (`EPOLLOUT`).
//!   Each sets [`Interest::QUEUED`] where it happens, on the node the
//!   action or call is of.
//! - **Changes of state**: a FIN or a reset arriving, a shutdown, an end
//!   closed, a timer expiring. An interest keeps the events its file had
//!   when the instance last looked at it, less those the node's own calls
//!   took since (`seen`); an event the file has beyond them is an edge.
//!   This is read from the world when the instance looks, so a change
//!   another node's action made (a reset at once, a DROP's) is an edge
//!   with nothing of that node's step reaching this node's part of the
//!   world.
//!
//! An edge-triggered timerfd is an error naming the node and the call:
//! a periodic timer wakes at each expiry, which the world does not count.

use nix::libc;

use super::super::supervisor::Supervisor;
use super::super::world::{ConnKind, Interest, Label, NodeWorld, ProcessWorld, Side, VFd};

impl NodeWorld {
    /// A wake-up, for events `key` (0: any, a change of state), of the
    /// descriptors `is` picks: each edge-triggered interest in one of
    /// them that asks for one of those events, and is not a one-shot that
    /// reported, goes on its instance's ready list.
    pub(in crate::process) fn wake(&mut self, key: u32, is: impl Fn(i32, &VFd) -> bool) {
        let NodeWorld { epolls, fds, .. } = self;
        for interest in epolls.values_mut() {
            for (&fd, i) in interest.iter_mut() {
                let asks = i.events & !Interest::PRIVATE;
                if i.events & Interest::ET != 0
                    && asks != 0
                    && (key == 0 || asks & key != 0)
                    && fds.get(&fd).is_some_and(|v| is(fd, v))
                {
                    i.events |= Interest::QUEUED;
                }
            }
        }
    }

    /// Whether any of the node's epoll interests is edge-triggered.
    fn edge_triggered(&self) -> bool {
        self.epolls.values().flat_map(|i| i.values()).any(|i| i.events & Interest::ET != 0)
    }
}

impl ProcessWorld {
    /// A message arrived at `side` of `label`: a wake-up of that end's
    /// descriptor in its node for `key`.
    pub(in crate::process) fn wake_end(&mut self, label: &Label, side: Side, key: u32) {
        let Some(c) = self.conns.get(label) else { return };
        let node = match side {
            Side::Target => c.target,
            Side::Dialer if label.kind == ConnKind::Node => label.node,
            Side::Dialer => return,
        };
        if let Some(w) = self.nodes.get_mut(node as usize) {
            w.wake(key, |_, v| matches!(v, VFd::Conn { label: l, side: s } if l == label && *s == side));
        }
    }
}

impl Supervisor {
    /// The events of descriptor `fd` of node `n`, all of them.
    fn events_now(&self, n: u8, fd: i32) -> u16 {
        self.readiness(n, fd, !0) as u16
    }

    /// What interest `i` in descriptor `fd` of node `n` reports if its
    /// instance looks now: the events it asks for that are ready (and a
    /// hang-up or an error, unasked); nothing for a one-shot that
    /// reported, nor for an edge-triggered one with no wake-up since it
    /// last looked.
    pub(in crate::process) fn reports(&self, n: u8, fd: i32, i: &Interest) -> i16 {
        if i.events & !Interest::PRIVATE == 0 {
            return 0;
        }
        if i.events & Interest::ET != 0 && i.events & Interest::QUEUED == 0 && self.events_now(n, fd) & !i.seen == 0 {
            return 0;
        }
        self.readiness(n, fd, i.events as u16 as i16)
    }

    /// Epoll instance `epfd` of node `n` looked at every interest and
    /// reported those in `reported`: each edge-triggered one is off the
    /// ready list, having seen what its file has now; each one-shot one
    /// that reported asks for nothing until `EPOLL_CTL_MOD`.
    pub(in crate::process) fn looked(&mut self, n: u8, epfd: i32, reported: &[i32]) {
        let now: Vec<(i32, u16)> = match self.world.nodes[n as usize].epolls.get(&epfd) {
            Some(interest) => interest
                .iter()
                .filter(|(_, i)| i.events & Interest::ET != 0)
                .map(|(&fd, _)| (fd, self.events_now(n, fd)))
                .collect(),
            None => return,
        };
        let Some(interest) = self.world.nodes[n as usize].epolls.get_mut(&epfd) else { return };
        for (fd, seen) in now {
            if let Some(i) = interest.get_mut(&fd) {
                i.events &= !Interest::QUEUED;
                i.seen = seen;
            }
        }
        for fd in reported {
            if let Some(i) = interest.get_mut(fd)
                && i.events & Interest::ONESHOT != 0
            {
                i.events &= Interest::PRIVATE & !Interest::QUEUED;
            }
        }
    }

    /// `EPOLL_CTL_ADD` or `EPOLL_CTL_MOD` of descriptor `fd` of node `n`
    /// with `events` (`old`: the interest it replaces): on the ready list
    /// if its file is ready now for what it asks, or was on it already.
    pub(in crate::process) fn interest(&self, n: u8, fd: i32, events: u32, old: Option<&Interest>) -> Interest {
        let mut i = Interest { events, seen: 0 };
        if events & Interest::ET != 0 {
            let now = self.events_now(n, fd);
            let was = old.is_some_and(|o| {
                o.events & Interest::ET != 0 && (o.events & Interest::QUEUED != 0 || now & !o.seen != 0)
            });
            if was || self.readiness(n, fd, events as u16 as i16) != 0 {
                i.events |= Interest::QUEUED;
            }
            i.seen = now;
        }
        i
    }

    /// After a call of node `n`: what its own calls took from its files
    /// (a message read, an error taken) is no longer seen, so that the
    /// file's gaining it again is an edge.
    pub(in crate::process) fn forget_taken(&mut self, n: u8) {
        if !self.world.nodes[n as usize].edge_triggered() {
            return;
        }
        let now: Vec<(i32, i32, u16)> = self.world.nodes[n as usize]
            .epolls
            .iter()
            .flat_map(|(&epfd, interest)| {
                interest.iter().filter(|(_, i)| i.events & Interest::ET != 0).map(move |(&fd, _)| (epfd, fd))
            })
            .map(|(epfd, fd)| (epfd, fd, self.events_now(n, fd)))
            .collect();
        for (epfd, fd, events) in now {
            if let Some(i) = self.world.nodes[n as usize].epolls.get_mut(&epfd).and_then(|e| e.get_mut(&fd)) {
                i.seen &= events;
            }
        }
    }

    /// A write to (`wrote`) or a read from the end `v` of an object
    /// inside node `n` succeeded: the wake-up it makes (a pipe's readers,
    /// an eventfd's waiters, the other end of a socketpair; a read wakes
    /// writers, of an eventfd or a socketpair).
    pub(in crate::process) fn wake_local(&mut self, n: u8, v: VFd, wrote: bool) {
        let key = if wrote { libc::EPOLLIN } else { libc::EPOLLOUT } as u32;
        let node = &mut self.world.nodes[n as usize];
        match v {
            VFd::Pipe { id, .. } if wrote => {
                node.wake(key, |_, w| matches!(*w, VFd::Pipe { id: i, write: false } if i == id))
            }
            VFd::Event { id } => node.wake(key, |_, w| matches!(*w, VFd::Event { id: i } if i == id)),
            VFd::Pair { id, end } => {
                node.wake(key, |_, w| matches!(*w, VFd::Pair { id: i, end: e } if i == id && e != end))
            }
            _ => {}
        }
    }
}

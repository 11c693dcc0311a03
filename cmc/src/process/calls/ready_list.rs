//! Epoll's ready list, as the kernel keeps it (`fs/eventpoll.c`), in the
//! world: which interests an `epoll_wait` reports, and in which order.
//!
//! On Linux an interest goes on the tail of its instance's ready list at a
//! wake-up of its file that names one of the events it asks for, or names
//! none (`ep_poll_callback`), and at `EPOLL_CTL_ADD` and `EPOLL_CTL_MOD`
//! when its file is ready then; one on the list already keeps its place.
//! `epoll_wait` takes the list from its head (`ep_send_events`): each
//! interest whose file is ready for what it asks is reported, a
//! level-triggered one goes back on the tail, a one-shot one asks for
//! nothing until `EPOLL_CTL_MOD`, and an edge-triggered one stays off until
//! its file's next wake-up; one whose file is not ready is dropped. At
//! `maxevents` the scan stops, and those it did not reach stay at the head,
//! in their order (`ep_done_scan`). So the events come in the order the
//! files were woken, an edge-triggered interest reports once per wake-up
//! whatever is left unread, and a wait with a small `maxevents` takes the
//! oldest wake-ups first.
//!
//! The world keeps each interest's place ([`Interest::rank`]), and makes
//! each wake-up where it happens, two ways:
//! - **Arrivals**, which may leave the file's events as they were: a
//!   message delivered to a connection's end (DELIVER: a new message is a
//!   wake-up, even where one is unread; a part of one read is not), a
//!   connection in a listener's queue (ACCEPT), a write to a pipe, to a
//!   socketpair's end or to an eventfd (every write, even of 0, even
//!   where the count was not 0: mio's waker relies on this), and a read of
//!   an eventfd or a socketpair's end, which wakes its writers (`EPOLLOUT`).
//!   Each calls [`NodeWorld::wake`] with the event it names.
//! - **Changes of state**: a FIN or a reset arriving, a shutdown, an end
//!   closed, an error, a timer expiring. Each interest keeps the events its
//!   file had ([`Interest::seen`]); an interest whose file gained a
//!   hang-up, an error or the end of its stream is woken whatever it asks
//!   (the kernel's `sk_state_change` names no event), and one whose timer
//!   expired, if it asks for `EPOLLIN` ([`ProcessWorld::sync_ready_lists`]).
//!   This is read from the world after each call of the node, before its
//!   first call in a step and before its epoll wait looks, and for every
//!   node after each action. So a change another node's action made (a
//!   DROP's reset, the clock moved by a peer's TIMEOUT) is a wake-up at
//!   that action, in the order the actions ran, with nothing of that
//!   node's own step writing this node's part of the world; the transition
//!   cache makes the same reading after it applies a change.
//!
//! Wake-ups that one action or one call makes at once go on the list in
//! descriptor order (the kernel's order there is that of the wake-ups
//! inside the call). An edge-triggered timerfd is an error naming the node
//! and the call: a periodic timer wakes at each expiry, which the world
//! does not count.

use std::collections::BTreeMap;

use nix::libc;

use super::super::supervisor::Supervisor;
use super::super::world::{ConnKind, Interest, Label, NodeWorld, ProcessWorld, Side, VFd};

/// Events whose gain is a change of state: a wake-up naming no event.
const STATE: u16 = (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) as u16;

impl Interest {
    /// Asks for nothing (a one-shot interest that reported): no wake-up
    /// puts it on the list, and it reports nothing.
    fn disabled(&self) -> bool {
        self.events & !Interest::PRIVATE == 0
    }

    /// Whether its file going from the events it had ([`Interest::seen`])
    /// to `now` wakes it: a change of state wakes every interest, a timer's
    /// expiry those that ask for `EPOLLIN`. Other gains (a message, a
    /// connection, a write to a local object) are arrivals, woken where
    /// they happen.
    fn woken_by(&self, now: u16, timer: bool) -> bool {
        let gained = now & !self.seen;
        !self.disabled()
            && (gained & STATE != 0
                || timer && gained & libc::POLLIN as u16 != 0 && self.events & libc::EPOLLIN as u32 != 0)
    }
}

/// Puts interest `fd` of an instance on its ready list's tail, unless it is
/// on it.
pub(in crate::process) fn enqueue(instance: &mut BTreeMap<i32, Interest>, fd: i32) {
    let tail = instance.values().map(|i| i.rank).max().unwrap_or(0);
    if let Some(i) = instance.get_mut(&fd)
        && i.rank == 0
    {
        i.rank = tail + 1;
    }
}

/// Numbers an instance's ready list from 1, in its order, so that one
/// list is one world.
fn compact(instance: &mut BTreeMap<i32, Interest>) {
    let mut on: Vec<(u16, i32)> = instance.iter().filter(|(_, i)| i.rank != 0).map(|(&fd, i)| (i.rank, fd)).collect();
    on.sort_unstable();
    for (place, (_, fd)) in on.into_iter().enumerate() {
        if let Some(i) = instance.get_mut(&fd) {
            i.rank = place as u16 + 1;
        }
    }
}

impl NodeWorld {
    /// A wake-up, for events `key` (0: any), of the descriptors `is`
    /// picks: each interest in one of them that asks for one of those
    /// events, and is not a one-shot that reported, goes on its instance's
    /// ready list.
    pub(in crate::process) fn wake(&mut self, key: u32, is: impl Fn(i32, &VFd) -> bool) {
        let NodeWorld { epolls, fds, .. } = self;
        for instance in epolls.values_mut() {
            let woken: Vec<i32> = instance
                .iter()
                .filter(|(fd, i)| {
                    !i.disabled() && (key == 0 || i.events & key != 0) && fds.get(fd).is_some_and(|v| is(**fd, v))
                })
                .map(|(&fd, _)| fd)
                .collect();
            for fd in woken {
                enqueue(instance, fd);
            }
        }
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

    /// The events of descriptor `fd` of node `n`, all of them.
    fn events_now(&self, n: u8, fd: i32) -> u16 {
        self.readiness(n, fd, !0) as u16
    }

    /// Node `n`'s epoll interests follow what their files have now: each
    /// one a change of state woke goes on its ready list (in descriptor
    /// order), and each keeps the events its file has.
    pub(in crate::process) fn sync_ready_list(&mut self, n: u8) {
        let Some(node) = self.nodes.get(n as usize) else { return };
        if node.epolls.is_empty() {
            return;
        }
        let now: Vec<(i32, i32, u16, bool)> = node
            .epolls
            .iter()
            .flat_map(|(&epfd, instance)| instance.keys().map(move |&fd| (epfd, fd)))
            .map(|(epfd, fd)| (epfd, fd, self.events_now(n, fd), node.fds.get(&fd) == Some(&VFd::Timer)))
            .collect();
        let epolls = &mut self.nodes[n as usize].epolls;
        for (epfd, fd, now, timer) in now {
            let Some(instance) = epolls.get_mut(&epfd) else { continue };
            let woken = instance.get(&fd).is_some_and(|i| i.woken_by(now, timer));
            if woken {
                enqueue(instance, fd);
            }
            if let Some(i) = instance.get_mut(&fd) {
                i.seen = now;
            }
        }
        epolls.values_mut().for_each(compact);
    }

    /// [`ProcessWorld::sync_ready_list`] of every node: after an action.
    pub(in crate::process) fn sync_ready_lists(&mut self) {
        for n in 0..self.nodes.len() as u8 {
            self.sync_ready_list(n);
        }
    }
}

impl Supervisor {
    /// What interest `i` in descriptor `fd` of node `n` reports if its
    /// instance looks now: the events it asks for that are ready (and a
    /// hang-up or an error, unasked), if it is on the ready list or a
    /// change of state not yet read puts it there; nothing for a one-shot
    /// that reported. A level-triggered interest whose file is ready is
    /// reported whether it is on the list or not (every change that makes
    /// a file ready is a wake-up, so it is; this keeps a wake-up the world
    /// might miss from hiding it).
    pub(in crate::process) fn reports(&self, n: u8, fd: i32, i: &Interest) -> i16 {
        if i.disabled() {
            return 0;
        }
        let timer = self.world.nodes[n as usize].fds.get(&fd) == Some(&VFd::Timer);
        let listed = i.rank != 0 || i.events & Interest::ET == 0 || i.woken_by(self.world.events_now(n, fd), timer);
        if !listed {
            return 0;
        }
        self.readiness(n, fd, i.events as u16 as i16)
    }

    /// What epoll instance `epfd` of node `n` reports to a wait of at most
    /// `max` events, in the order of its ready list, and the list after it
    /// (`ep_send_events`); [`Supervisor::looked`] makes it the instance's.
    pub(in crate::process) fn scan(&mut self, n: u8, epfd: i32, max: usize) -> (Vec<(i32, i16)>, Scan) {
        self.world.sync_ready_list(n);
        let Some(instance) = self.world.nodes[n as usize].epolls.get(&epfd) else {
            return (Vec::new(), Scan::default());
        };
        let mut listed: Vec<(u16, i32)> =
            instance.iter().filter(|(_, i)| i.rank != 0).map(|(&fd, i)| (i.rank, fd)).collect();
        listed.sort_unstable();
        // Then a level-triggered interest ready and not on the list, if the
        // world missed its wake-up (see `reports`), in descriptor order.
        let unlisted =
            instance.iter().filter(|(fd, i)| i.rank == 0 && self.reports(n, **fd, i) != 0).map(|(&fd, _)| fd);
        let order: Vec<i32> = listed.into_iter().map(|(_, fd)| fd).chain(unlisted).collect();
        let mut out = Vec::new();
        let mut scan = Scan::default();
        for (k, &fd) in order.iter().enumerate() {
            if out.len() == max {
                scan.left = order[k..].to_vec();
                break;
            }
            scan.off.push(fd);
            let Some(i) = instance.get(&fd) else { continue };
            let r = self.readiness(n, fd, i.events as u16 as i16);
            if r == 0 || i.disabled() {
                continue;
            }
            out.push((fd, r));
            if i.events & Interest::ONESHOT != 0 {
                scan.disarm.push(fd);
            } else if i.events & Interest::ET == 0 {
                scan.back.push(fd);
            }
        }
        (out, scan)
    }

    /// Epoll instance `epfd` of node `n` reported what [`Supervisor::scan`]
    /// gave: its ready list is those the scan did not reach, then the
    /// level-triggered ones it reported, and each one-shot one that
    /// reported asks for nothing until `EPOLL_CTL_MOD`.
    pub(in crate::process) fn looked(&mut self, n: u8, epfd: i32, scan: Scan) {
        let Some(instance) = self.world.nodes[n as usize].epolls.get_mut(&epfd) else { return };
        for fd in &scan.off {
            if let Some(i) = instance.get_mut(fd) {
                i.rank = 0;
            }
        }
        for (place, fd) in scan.left.iter().chain(&scan.back).enumerate() {
            if let Some(i) = instance.get_mut(fd) {
                i.rank = place as u16 + 1;
            }
        }
        for fd in &scan.disarm {
            if let Some(i) = instance.get_mut(fd) {
                i.events &= Interest::PRIVATE;
            }
        }
    }

    /// `EPOLL_CTL_ADD` or `EPOLL_CTL_MOD` of descriptor `fd` of node `n`
    /// with `events` (`old`: the interest it replaces), in its place on
    /// the ready list if it was on it; and whether it goes on the list's
    /// tail ([`enqueue`], once it is in its instance): its file is ready
    /// now for what it asks.
    pub(in crate::process) fn interest(&self, n: u8, fd: i32, events: u32, old: Option<&Interest>) -> (Interest, bool) {
        let i = Interest { events, seen: self.world.events_now(n, fd), rank: old.map_or(0, |o| o.rank) };
        let ready = self.readiness(n, fd, events as u16 as i16) != 0;
        (i, ready)
    }

    /// A write to (`wrote`) or a read from the end `v` of an object
    /// inside node `n` succeeded: the wake-up it makes, with the kernel's
    /// key (a pipe's readers, `pipe_write`'s `EPOLLIN | EPOLLRDNORM`; an
    /// eventfd's waiters, `EPOLLIN` for a write and `EPOLLOUT` for a read;
    /// the other end of a socketpair, `sock_def_readable`'s
    /// [`READABLE`] for a write and `unix_write_space`'s [`WRITABLE`] for
    /// a read that freed a message, which the caller decides).
    pub(in crate::process) fn wake_local(&mut self, n: u8, v: VFd, wrote: bool) {
        let node = &mut self.world.nodes[n as usize];
        match v {
            VFd::Pipe { id, .. } if wrote => node.wake(
                (libc::EPOLLIN | libc::EPOLLRDNORM) as u32,
                |_, w| matches!(*w, VFd::Pipe { id: i, write: false } if i == id),
            ),
            VFd::Event { id } => {
                let key = if wrote { libc::EPOLLIN } else { libc::EPOLLOUT } as u32;
                node.wake(key, |_, w| matches!(*w, VFd::Event { id: i } if i == id))
            }
            VFd::Pair { id, end } => {
                let key = if wrote { READABLE } else { WRITABLE };
                node.wake(key, |_, w| matches!(*w, VFd::Pair { id: i, end: e } if i == id && e != end))
            }
            _ => {}
        }
    }

    /// A change of state of socketpair end `end` of object `id` in node
    /// `n` (a shutdown, its peer's shutdown or close): the kernel's
    /// `sk_state_change`, a wake-up naming no event, whether or not its
    /// events change.
    pub(in crate::process) fn wake_pair_end(&mut self, n: u8, id: u8, end: u8) {
        self.world.nodes[n as usize].wake(0, |_, w| matches!(*w, VFd::Pair { id: i, end: e } if i == id && e == end));
    }
}

/// `sock_def_readable`'s key: data arrived at a socket (TCP's DELIVER, a
/// connection in a listener's queue, a write to a socketpair's end).
pub(in crate::process) const READABLE: u32 =
    (libc::EPOLLIN | libc::EPOLLPRI | libc::EPOLLRDNORM | libc::EPOLLRDBAND) as u32;

/// `unix_write_space`'s key: room for writing.
const WRITABLE: u32 = (libc::EPOLLOUT | libc::EPOLLWRNORM | libc::EPOLLWRBAND) as u32;

/// What a scan of a ready list did ([`Supervisor::scan`]).
#[derive(Default)]
pub(in crate::process) struct Scan {
    /// Taken off the list (looked at).
    off: Vec<i32>,
    /// Not reached (`maxevents`), in their order: the list's head.
    left: Vec<i32>,
    /// Level-triggered and reported: back on the tail, in this order.
    back: Vec<i32>,
    /// One-shot and reported: asks for nothing until `EPOLL_CTL_MOD`.
    disarm: Vec<i32>,
}

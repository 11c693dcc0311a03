//! Waiting on many descriptors: `poll`, `ppoll`, `select`, `pselect6`,
//! and epoll (`epoll_create`, `epoll_create1`, `epoll_ctl`, `epoll_wait`,
//! `epoll_pwait`, `epoll_pwait2`; an epoll instance is the world's, with
//! its interest list, so a snapshot's forks do not share a kernel object)
//! over the descriptors the checker owns
//! (connections, sockets, random devices, and the pipes, socketpairs and
//! eventfds inside a node, whose readiness is `local`'s), level-triggered,
//! as the kernel answers them. What is ready when the call is made is answered at once:
//! a connection end with a message received and not read (`Conn::at_*`)
//! or at the end of its stream (a FIN, a reset: `Conn::poll_events`, with
//! `POLLRDHUP`, `POLLHUP` and `POLLERR` as Linux sets them), a listening
//! socket with a connection in the node's accept queue, any connection for writing (a write never waits in the model),
//! a random device. Otherwise a poll with a timeout of zero returns 0, and
//! any other holds the node in `Blocked::Poll`, its watched descriptors
//! and events in the world (`NodeWorld::watch`), until an action makes
//! something ready: DELIVER moves the oldest message in flight toward a
//! watched end into its receive buffer, ACCEPT puts a waiting connection
//! in the accept queue, EOF wakes it when a watched end's stream ends, and
//! TIMEOUT, when the poll has a timeout, ends it
//! with nothing ready. The answer is computed again from the world then,
//! and the call's `revents` written.
//!
//! `select` is a poll of its sets' descriptors (reading, writing, and
//! exceptions, never ready), its sets rewritten to the ready ones; epoll
//! is level-triggered, or edge-triggered and one-shot, and reports in
//! the order of its ready list, as `ready_list` keeps them
//! (`EPOLLEXCLUSIVE` is refused), and watches only descriptors the
//! checker owns. Every descriptor a node has
//! is the world's: a file of the machine, a device, stdin, stdout and
//! stderr are always ready, as on Linux; a descriptor that is not open is
//! `POLLNVAL` to a poll and EBADF to a select.
//! It owns the answers to these calls; the actions that end a wait are
//! the supervisor's.

use nix::libc;

use super::super::ProcessAction;
use super::super::ProcessError;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, Interest, Label, Millis, Trail, VFd};
use super::time::{read_timespec, wait_span};
use super::{Answer, refuse};

/// Descriptors in one poll.
const POLLFDS_MAX: usize = 1024;

/// Events that mean "can read" and "can write".
pub(in crate::process) const IN: i16 = libc::POLLIN | libc::POLLRDNORM;
pub(in crate::process) const OUT: i16 = libc::POLLOUT | libc::POLLWRNORM;

/// Whether call `c` writes back into its timeout the time it did not wait
/// (`select`, `pselect6`, `ppoll` with a timeout, as Linux's
/// `poll_select_finish` does).
fn writes_back(c: &Notif) -> bool {
    let at = match c.nr {
        libc::SYS_select | libc::SYS_pselect6 => c.args[4],
        libc::SYS_ppoll => c.args[2],
        _ => return false,
    };
    at != 0
}

/// How long a poll may wait.
enum Wait {
    /// Not at all (a timeout of zero).
    No,
    /// Until a logical time.
    Until(Millis),
    /// Until something is ready (a negative timeout, or none).
    Forever,
}

/// A waiting call, parsed from the node's memory: what it watches, and
/// where its answer goes.
enum Call {
    /// `poll`, `ppoll`: the `struct pollfd` array.
    Poll { raw: Vec<u8> },
    /// `select`, `pselect6`: the read, write and except sets (each absent
    /// or `bytes` long).
    Select { nfds: usize, sets: [Option<Vec<u8>>; 3] },
    /// `epoll_wait`, `epoll_pwait`, `epoll_pwait2`: the epoll instance.
    Epoll { epfd: i32 },
}

/// Descriptors in one `select`: an `fd_set`'s bits.
const SELECT_FDS_MAX: usize = 1024;

/// `struct epoll_event` on x86-64: packed, 4 bytes of events then 8 of
/// data.
const EPOLL_EVENT_BYTES: usize = 12;

/// Epoll flags that change when events are reported; not modelled.
const EPOLL_UNMODELLED: u32 = libc::EPOLLEXCLUSIVE as u32;

impl Supervisor {
    /// `poll(fds, nfds, timeout_ms)` and `ppoll(fds, nfds, timeout, mask)`.
    pub(super) fn on_poll(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if c.args[1] as usize > POLLFDS_MAX {
            return Ok(Answer::Err(libc::EINVAL));
        }
        self.on_wait(n, c)
    }

    /// `select(nfds, r, w, e, timeval)` and `pselect6(nfds, r, w, e,
    /// timespec, mask)`: as a poll of each set's descriptors for reading,
    /// writing and exceptions (never ready), its sets rewritten to the
    /// ready ones.
    pub(super) fn on_select(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if c.args[0] as usize > SELECT_FDS_MAX {
            return Ok(Answer::Err(libc::EINVAL));
        }
        self.on_wait(n, c)
    }

    /// `epoll_wait`, `epoll_pwait`, `epoll_pwait2`: as a poll of the
    /// instance's interest list, the ready ones written in the order of
    /// its ready list, at most `maxevents` (`ready_list`).
    pub(super) fn on_epoll_wait(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        if (c.args[2] as i32) <= 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        self.on_wait(n, c)
    }

    /// `epoll_create`, `epoll_create1`: an epoll instance in the world.
    pub(super) fn on_epoll_create(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let cloexec = c.nr == libc::SYS_epoll_create1 && c.args[0] as i32 & libc::EPOLL_CLOEXEC != 0;
        if c.nr == libc::SYS_epoll_create1 && c.args[0] as i32 & !libc::EPOLL_CLOEXEC != 0 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        if let Some(fd) = self.add_fd(n, c, cloexec)? {
            let node = &mut self.world.nodes[n as usize];
            node.fds.insert(fd, VFd::Epoll { id: fd });
            node.epolls.insert(fd, std::collections::BTreeMap::new());
            // Lower than a duplicate of another instance's it may be.
            self.renumber_epolls(n);
        }
        Ok(Answer::Done)
    }

    /// `epoll_ctl(epfd, op, fd, event)` on an instance in the world: of
    /// descriptors the checker owns only.
    pub(super) fn on_epoll_ctl(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (epfd, op, fd) = (c.args[0] as i32, c.args[1] as i32, c.args[2] as i32);
        let node = &self.world.nodes[n as usize];
        // The instance, by its lowest descriptor.
        let epfd = match node.fds.get(&epfd) {
            Some(VFd::Epoll { id }) => *id,
            Some(_) => return Ok(Answer::Err(libc::EINVAL)),
            None => return Ok(Answer::Err(libc::EBADF)),
        };
        if fd == epfd || node.fds.get(&fd) == Some(&VFd::Epoll { id: epfd }) {
            return Ok(Answer::Err(libc::EINVAL));
        }
        match node.fds.get(&fd) {
            None if fd == 3 || fd == 193 => return refuse(n, c, "watching fd 3 or 193, which hold records"),
            // A descriptor that is not open, or one no instance can watch
            // here, was never added: what the kernel answers for it.
            None if !open_in(c.pid, fd) => return Ok(Answer::Err(libc::EBADF)),
            None if op != libc::EPOLL_CTL_ADD => return Ok(Answer::Err(libc::ENOENT)),
            None => {
                return refuse(n, c, "watching a file, pipe or other descriptor the checker does not own with epoll");
            }
            Some(VFd::Epoll { .. }) => return refuse(n, c, "an epoll instance watching another"),
            // A regular file or a directory, as the kernel answers.
            // Regular files, directories and /dev/null support no polling.
            Some(VFd::File { .. } | VFd::Dir { .. } | VFd::Device { .. } | VFd::Out { .. } | VFd::Host { .. }) => {
                return Ok(Answer::Err(libc::EPERM));
            }
            Some(_) => {}
        }
        let event = if op == libc::EPOLL_CTL_DEL {
            None
        } else {
            let Some(b) = notif::read_mem(c.pid, c.args[3], EPOLL_EVENT_BYTES) else {
                return Ok(Answer::Err(libc::EFAULT));
            };
            let events = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            let data = u64::from_ne_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]]);
            if events & EPOLL_UNMODELLED != 0 {
                return refuse(n, c, "exclusive epoll (EPOLLEXCLUSIVE)");
            }
            if events & Interest::ET != 0 && node.fds.get(&fd) == Some(&VFd::Timer) {
                return refuse(
                    n,
                    c,
                    "an edge-triggered timerfd (EPOLLET): a periodic timer wakes at each expiry, which is not counted",
                );
            }
            // `EPOLLWAKEUP` changes nothing here; a bit that is not one of
            // the kernel's is the world's own. The kernel adds `EPOLLERR`
            // and `EPOLLHUP` to every interest it adds or changes, so one
            // that asks for nothing still reports a hang-up (a review's
            // `hup01`: it waited for ever); only a one-shot that reported
            // asks for nothing at all.
            let always = (libc::EPOLLERR | libc::EPOLLHUP) as u32;
            Some(((events | always) & !(libc::EPOLLWAKEUP as u32), data))
        };
        // Two interests in one file in one instance (a descriptor and its
        // duplicate): one wake-up puts both on the ready list, the one
        // added last first (the file's wait queue), which is not kept.
        let node = &self.world.nodes[n as usize];
        let file = node.fds.get(&fd);
        if op == libc::EPOLL_CTL_ADD
            && matches!(file, Some(VFd::Conn { .. } | VFd::Pipe { .. } | VFd::Event { .. } | VFd::Pair { .. }))
            && node.epolls.get(&epfd).is_some_and(|i| i.keys().any(|&f| f != fd && node.fds.get(&f) == file))
        {
            return refuse(
                n,
                c,
                "a second interest in one file in one epoll instance (a duplicate descriptor): the kernel wakes them \
                 in the reverse of the order they were added, which is not modelled",
            );
        }
        let old = self.world.nodes[n as usize].epolls.get(&epfd).and_then(|i| i.get(&fd)).copied();
        let made = event.map(|(events, data)| (self.interest(n, fd, events, old.as_ref()), data));
        let interest = self.world.nodes[n as usize].epolls.entry(epfd).or_default();
        // The data is the process's (`forkserver::Cookies`).
        let cookies = self.procs[n as usize].as_mut().map(|p| &mut p.cookies);
        Ok(match (op, made) {
            (libc::EPOLL_CTL_ADD, Some(_)) if interest.contains_key(&fd) => Answer::Err(libc::EEXIST),
            (libc::EPOLL_CTL_MOD, Some(_)) | (libc::EPOLL_CTL_DEL, None) if !interest.contains_key(&fd) => {
                Answer::Err(libc::ENOENT)
            }
            (libc::EPOLL_CTL_ADD | libc::EPOLL_CTL_MOD, Some(((i, ready), data))) => {
                interest.insert(fd, i);
                // Ready now: on the ready list's tail (one on it already
                // keeps its place).
                if ready {
                    super::ready_list::enqueue(interest, fd);
                }
                if let Some(c) = cookies {
                    c.insert((epfd, fd), data);
                }
                Answer::Val(0)
            }
            (libc::EPOLL_CTL_DEL, None) => {
                interest.remove(&fd);
                if let Some(c) = cookies {
                    c.remove(&(epfd, fd));
                }
                Answer::Val(0)
            }
            _ => Answer::Err(libc::EINVAL),
        })
    }

    /// Names node `n`'s epoll instances by their lowest descriptors
    /// ([`super::super::world::NodeWorld::renumber_epolls`]), and its
    /// process's data for them with them.
    pub(in crate::process) fn renumber_epolls(&mut self, n: u8) {
        let renamed = self.world.nodes[n as usize].renumber_epolls();
        if let Some(p) = self.procs[n as usize].as_mut() {
            p.cookies = std::mem::take(&mut p.cookies)
                .into_iter()
                .filter_map(|((id, fd), data)| renamed.get(&id).map(|&new| ((new, fd), data)))
                .collect();
        }
    }

    /// A waiting call of any kind: answered at once if anything it watches
    /// is ready or it does not wait, else held with its wait in the world.
    fn on_wait(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let wait = match self.wait_of(c) {
            Ok(w) => w,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let call = match self.parse_call(n, c) {
            Ok(call) => call,
            Err(e) => return Ok(Answer::Err(e)),
        };
        // A wait made again (another thread's change may have ended it)
        // keeps the timeout its call began with, as Linux reads it once.
        let wait = match (self.kept_until, wait) {
            (_, w @ Wait::No) | (None, w) => w,
            (Some(Some(until)), _) => Wait::Until(until),
            (Some(None), _) => Wait::Forever,
        };
        let entries = self.entries(n, &call);
        // No descriptor at all: a sleep (`poll(NULL, 0, ms)`, `select(0,
        // ..., &tv)`), for ever if it has no timeout.
        if entries.iter().all(|(fd, _)| *fd < 0) && !matches!(call, Call::Epoll { .. }) {
            return match wait {
                Wait::No => self.write_answer(n, c, &call),
                Wait::Until(until) => Ok(Answer::Hold(Blocked::Poll { until: Some(until) })),
                Wait::Forever => Ok(Answer::Hold(Blocked::Poll { until: None })),
            };
        }
        // Every descriptor a node has is the world's: one that is not is
        // not open, which a poll reports (POLLNVAL) and a select refuses.
        let owned: Vec<(i32, i16)> = entries.iter().filter(|(fd, _)| *fd >= 0).copied().collect();
        if matches!(call, Call::Select { .. }) && owned.iter().any(|(fd, _)| !self.owns(n, *fd)) {
            return Ok(Answer::Err(libc::EBADF));
        }
        if owned.iter().any(|(fd, _)| *fd == 3 || *fd == 193) {
            return refuse(n, c, "waiting on fd 3 or 193, which hold records");
        }
        let node = &self.world.nodes[n as usize];
        if owned.iter().any(|(fd, _)| matches!(node.fds.get(fd), Some(VFd::Epoll { .. }))) {
            return refuse(n, c, "waiting on an epoll instance in a poll or select");
        }
        let mut watch = std::collections::BTreeMap::new();
        for &(fd, events) in &owned {
            *watch.entry(fd).or_insert(0) |= events;
        }
        let ready = self.wait_ready(n, &call);
        // What a call that writes back its time left has of its timeout
        // when answered now: all of it.
        let left = match wait {
            Wait::Until(until) if writes_back(c) => Some(until.saturating_sub(self.world.clock)),
            _ => None,
        };
        if ready || matches!(wait, Wait::No) {
            // Answered now: something is ready, or the poll does not wait.
            // Held first (a woken wait) while more it watches is on its
            // way, which on Linux may arrive before the process runs, or
            // before a poll that does not wait (RUN then returns it empty);
            // not a wait on both ends of a connection to itself, which a
            // DELIVER could not name: answered at once, as it was before.
            if !self.watches_both_ends(n, &watch) {
                let before = std::mem::replace(&mut self.world.nodes[n as usize].watch, watch);
                if self.stays_woken(n) {
                    return Ok(Answer::Hold(Blocked::Woken { trail: Trail::default(), left }));
                }
                self.world.nodes[n as usize].watch = before;
            }
            return Ok(match (self.write_answer(n, c, &call)?, left) {
                (Answer::Val(k), Some(left)) => self.write_time_left(c, left).map_or(Answer::Val(k), Answer::Err),
                (answer, _) => answer,
            });
        }
        // (`Wait::No` is answered above.)
        let until = match wait {
            Wait::Until(u) => Some(u),
            Wait::Forever | Wait::No => None,
        };
        if self.watches_both_ends(n, &watch) {
            return refuse(n, c, "waiting on both ends of a connection to itself");
        }
        self.world.nodes[n as usize].watch = watch;
        Ok(Answer::Hold(Blocked::Poll { until }))
    }

    /// The actions enabled in the world with node `n` marked `as_` for the
    /// enumeration, and put back after, so no world is copied on this
    /// path (every ready poll takes it).
    fn actions_as(&mut self, n: u8, as_: Blocked) -> Vec<ProcessAction> {
        let before = std::mem::replace(&mut self.world.nodes[n as usize].blocked, as_);
        let mut actions = Vec::new();
        super::super::action::enumerate(&self.world, &mut actions);
        self.world.nodes[n as usize].blocked = before;
        actions
    }

    /// Whether node `n`'s wait over its `watch` (in the world), answered
    /// now, is held first as a woken wait, for what may join its answer
    /// before the process runs. Either more is on its way to a watched
    /// descriptor (a message, a connection to accept, a FIN: the DELIVER,
    /// ACCEPT and EOF a woken wait has enabled), or more may still come:
    /// a peer that may send on a watched connection, or a node that may
    /// dial a watched listening socket, while anything but `n` may act.
    /// On Linux the peers may run before the woken process, even to
    /// answer what its own step sent. (Gating this on what the step had
    /// sent was unsound: a listen sends nothing, and under deadline order
    /// a peer's later TIMEOUT cannot come before this node's.) One
    /// enumeration serves both: with `n` woken, the other nodes' actions
    /// are what they are with `n` waiting for nothing.
    fn stays_woken(&mut self, n: u8) -> bool {
        let actions = self.actions_as(n, Blocked::Woken { trail: Trail::default(), left: None });
        let on_its_way = actions.iter().any(
            |a| matches!(a, ProcessAction::Deliver { node, .. } | ProcessAction::Accept { node, .. } | ProcessAction::Eof { node, .. } if *node == n),
        );
        if on_its_way {
            return true;
        }
        let node = &self.world.nodes[n as usize];
        let peers = node.watch.keys().any(|fd| match node.fds.get(fd) {
            Some(VFd::Conn { label, side }) => self.world.peer_may_send(label, *side),
            Some(VFd::Socket { listening: true, .. }) => self.world.peer_may_dial(n),
            _ => false,
        });
        if !peers {
            return false;
        }
        self.nonlocal = true;
        self.later_to_start(n) || actions.iter().any(|a| a.node() != Some(n))
    }

    /// Whether anything but node `n` may act in the world as it is (an
    /// action of another node, a CLIENT, a DROP): where nothing may, no
    /// peer can send to `n` before `n` itself acts again. This reads the
    /// whole world, not only `n`'s surroundings: the action is marked
    /// `nonlocal`, and the transition cache does not keep it.
    pub(in crate::process) fn others_may_act(&mut self, n: u8) -> bool {
        self.nonlocal = true;
        self.later_to_start(n) || self.actions_as(n, Blocked::Pause).iter().any(|a| a.node() != Some(n))
    }

    /// Whether a node after `n` is still to start: the nodes start one at
    /// a time, in node order, each until it first waits, and on Linux a
    /// later one may have started, and dialled or sent, while `n` ran.
    /// (The review's `startacc` probe: node 0 listens, is busy and accepts
    /// without waiting while node 1 dials; natively 8 of 10 runs find the
    /// connection there.)
    fn later_to_start(&self, n: u8) -> bool {
        self.starting && n + 1 < self.cfg.nodes
    }

    /// Answers node `n`'s held wait from the world as it is now, after an
    /// action: what is ready, or, after a TIMEOUT (`timed_out`), possibly
    /// nothing. If the action made nothing the wait asks for ready (a
    /// message arrived at an end watched only for its peer's hang-up), the
    /// wait goes on, as on the kernel.
    pub(in crate::process) fn answer_poll(&mut self, n: u8, timed_out: bool) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let call = self.parse_call(n, &notif);
        if let Ok(call) = &call {
            let ready = self.wait_ready(n, call);
            if !ready && !timed_out {
                return Ok(());
            }
            // Something is ready, or its time is up: more it watches may
            // join the answer before the process runs (on its way, or
            // sent by a peer that runs first).
            if self.stays_woken(n) {
                // Woken where it waited (its memory is its reported
                // state's), or still held where it did not wait.
                let left = self.time_left(n, &notif);
                let deadline = matches!(self.world.timeout_order, super::super::TimeoutOrder::Deadline { .. });
                let blocked = &mut self.world.nodes[n as usize].blocked;
                let mut trail = blocked.trail().unwrap_or_default();
                // Woken by its TIMEOUT under deadline order: its step began
                // there (`Trail::acted`).
                if deadline && timed_out {
                    trail.acted |= Trail::TIMED;
                }
                *blocked = Blocked::Woken { trail, left };
                return Ok(());
            }
        }
        self.return_poll(n)
    }

    /// Returns node `n`'s held wait with what is ready now (nothing, after
    /// a TIMEOUT).
    pub(in crate::process) fn return_poll(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let call = self.parse_call(n, &notif);
        let left = self.time_left(n, &notif);
        let node = &mut self.world.nodes[n as usize];
        node.blocked = Blocked::Nothing;
        node.watch.clear();
        let answer = match call {
            Ok(call) => self.write_answer(n, &notif, &call)?,
            Err(e) => Answer::Err(e),
        };
        let answer = match (answer, left) {
            (Answer::Val(k), Some(left)) => self.write_time_left(&notif, left).map_or(Answer::Val(k), Answer::Err),
            (answer, _) => answer,
        };
        self.answer(n, &notif, answer)
    }

    /// The milliseconds node `n`'s held wait (`notif`) has left of its
    /// timeout, where the call writes back the time it did not wait
    /// (`select`, `pselect6`, `ppoll`, as Linux's `poll_select_finish`
    /// does): from the deadline of the wait, or what a woken wait kept
    /// when it woke. `None` for any other wait.
    fn time_left(&self, n: u8, notif: &Notif) -> Option<Millis> {
        if !writes_back(notif) {
            return None;
        }
        match self.world.nodes[n as usize].blocked {
            Blocked::Poll { until: Some(until) } => Some(until.saturating_sub(self.world.clock)),
            Blocked::Woken { left, .. } => left,
            _ => None,
        }
    }

    /// Writes back into the held call's timeout what it did not wait of
    /// it: what it asked for less the milliseconds that passed (the
    /// deadline was the first millisecond after its end, `after`), none
    /// after its time was up. An errno where the timeout cannot be read or
    /// written.
    fn write_time_left(&self, notif: &Notif, left: Millis) -> Option<i32> {
        let (at, micro) = match notif.nr {
            libc::SYS_select => (notif.args[4], true),
            libc::SYS_pselect6 => (notif.args[4], false),
            _ => (notif.args[2], false),
        };
        let Some(b) = notif::read_mem(notif.pid, at, 16) else { return Some(libc::EFAULT) };
        let sec = i64::from_ne_bytes(b[0..8].try_into().unwrap_or_default());
        let frac = i64::from_ne_bytes(b[8..16].try_into().unwrap_or_default());
        let nsec = if micro { frac * 1000 } else { frac };
        // Some time passes in any call, a nanosecond at least (the
        // kernel writes back 1,499 µs of 1,500 µs answered at once).
        let passed = (wait_span(sec, nsec).saturating_sub(left) as i128 * 1_000_000).max(1);
        let total = (sec as i128 * 1_000_000_000 + nsec as i128 - passed).max(0);
        let (sec, nsec) = ((total / 1_000_000_000) as i64, (total % 1_000_000_000) as i64);
        let frac = if micro { nsec / 1000 } else { nsec };
        let out = [sec.to_ne_bytes(), frac.to_ne_bytes()].concat();
        (!notif::write_mem(notif.pid, at, &out)).then_some(libc::EFAULT)
    }

    /// The end of connection `label` that node `n` watches in its wait
    /// for any of `events`.
    pub(in crate::process) fn watched_end(
        &self,
        n: u8,
        label: &Label,
        events: i16,
    ) -> Option<super::super::world::Side> {
        let node = &self.world.nodes[n as usize];
        node.watch.iter().find_map(|(fd, &watched)| match node.fds.get(fd) {
            // `!0`: whatever it watches, events 0 too (a hang-up or an
            // error is reported unasked).
            Some(VFd::Conn { label: l, side }) if l == label && (watched & events != 0 || events == !0) => Some(*side),
            _ => None,
        })
    }

    fn wait_of(&self, c: &Notif) -> Result<Wait, i32> {
        let timespec = |at: u64| -> Result<Wait, i32> {
            if at == 0 {
                return Ok(Wait::Forever);
            }
            Ok(match read_timespec(c, at)? {
                (0, 0) => Wait::No,
                (sec, nsec) => Wait::Until(self.after(sec, nsec)),
            })
        };
        let ms = |ms: i32| match ms {
            ms if ms < 0 => Wait::Forever,
            0 => Wait::No,
            ms => Wait::Until(self.after(ms as i64 / 1000, (ms as i64 % 1000) * 1_000_000)),
        };
        match c.nr {
            libc::SYS_ppoll => timespec(c.args[2]),
            libc::SYS_pselect6 => timespec(c.args[4]),
            libc::SYS_epoll_pwait2 => timespec(c.args[3]),
            libc::SYS_select => {
                if c.args[4] == 0 {
                    return Ok(Wait::Forever);
                }
                let b = notif::read_mem(c.pid, c.args[4], 16).ok_or(libc::EFAULT)?;
                let sec = i64::from_ne_bytes(b[0..8].try_into().map_err(|_| libc::EFAULT)?);
                let usec = i64::from_ne_bytes(b[8..16].try_into().map_err(|_| libc::EFAULT)?);
                // As the kernel's `kern_select`: whole seconds of the
                // microseconds carry over (1,500,000 is 1.5 s), and a
                // negative time is EINVAL.
                let (sec, usec) = (sec.saturating_add(usec / 1_000_000), usec % 1_000_000);
                if sec < 0 || usec < 0 {
                    return Err(libc::EINVAL);
                }
                Ok(if (sec, usec) == (0, 0) { Wait::No } else { Wait::Until(self.after(sec, usec * 1000)) })
            }
            libc::SYS_epoll_wait | libc::SYS_epoll_pwait => Ok(ms(c.args[3] as i32)),
            _ => Ok(ms(c.args[2] as i32)),
        }
    }

    fn parse_call(&self, n: u8, c: &Notif) -> Result<Call, i32> {
        match c.nr {
            libc::SYS_select | libc::SYS_pselect6 => {
                let nfds = c.args[0] as usize;
                let bytes = nfds.div_ceil(64) * 8;
                let mut sets = [None, None, None];
                for (i, set) in sets.iter_mut().enumerate() {
                    let at = c.args[1 + i];
                    if at != 0 {
                        *set = Some(notif::read_mem(c.pid, at, bytes).ok_or(libc::EFAULT)?);
                    }
                }
                Ok(Call::Select { nfds, sets })
            }
            libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => {
                let epfd = c.args[0] as i32;
                match self.world.nodes[n as usize].fds.get(&epfd) {
                    Some(VFd::Epoll { id }) => Ok(Call::Epoll { epfd: *id }),
                    Some(_) => Err(libc::EINVAL),
                    None => Err(libc::EBADF),
                }
            }
            _ => {
                let count = c.args[1] as usize;
                Ok(Call::Poll { raw: notif::read_mem(c.pid, c.args[0], 8 * count).ok_or(libc::EFAULT)? })
            }
        }
    }

    /// What `call` watches: each descriptor and its poll events.
    fn entries(&self, n: u8, call: &Call) -> Vec<(i32, i16)> {
        match call {
            Call::Poll { raw } => parse(raw),
            Call::Select { nfds, sets } => (0..*nfds)
                .filter_map(|fd| {
                    let set = |i: usize| sets[i].as_ref().is_some_and(|s| s[fd / 8] & (1 << (fd % 8)) != 0);
                    let events = (if set(0) { libc::POLLIN } else { 0 })
                        | (if set(1) { libc::POLLOUT } else { 0 })
                        | (if set(2) { libc::POLLPRI } else { 0 });
                    (events != 0).then_some((fd as i32, events))
                })
                .collect(),
            // A one-shot interest that reported watches nothing.
            Call::Epoll { epfd } => self.world.nodes[n as usize]
                .epolls
                .get(epfd)
                .map(|interest| {
                    interest
                        .iter()
                        .filter(|(_, i)| i.events & !Interest::PRIVATE != 0)
                        .map(|(&fd, i)| (fd, i.events as u16 as i16))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether `call`, a wait of node `n`, has anything to report now.
    fn wait_ready(&self, n: u8, call: &Call) -> bool {
        match call {
            Call::Epoll { epfd } => self.world.nodes[n as usize]
                .epolls
                .get(epfd)
                .is_some_and(|interest| interest.iter().any(|(&fd, i)| self.reports(n, fd, i) != 0)),
            _ => self.entries(n, call).iter().any(|&(fd, events)| fd >= 0 && self.readiness(n, fd, events) != 0),
        }
    }

    /// Writes what is ready into the call's memory and answers with its
    /// count.
    fn write_answer(&mut self, n: u8, c: &Notif, call: &Call) -> Result<Answer, ProcessError> {
        let ok = |done: bool, count: usize| if done { Answer::Val(count as i64) } else { Answer::Err(libc::EFAULT) };
        Ok(match call {
            Call::Poll { raw } => {
                let mut out = raw.clone();
                let mut ready = 0;
                for (i, (fd, events)) in parse(raw).into_iter().enumerate() {
                    let revents = if fd < 0 { 0 } else { self.readiness(n, fd, events) };
                    ready += (revents != 0) as usize;
                    out[8 * i + 6..8 * i + 8].copy_from_slice(&revents.to_ne_bytes());
                }
                ok(notif::write_mem(c.pid, c.args[0], &out), ready)
            }
            Call::Select { sets, .. } => {
                let mut out = sets.clone();
                let mut ready = 0;
                for set in out.iter_mut().flatten() {
                    set.iter_mut().for_each(|b| *b = 0);
                }
                for (fd, events) in self.entries(n, call) {
                    let r = self.readiness(n, fd, events);
                    // The kernel's POLLIN_SET and POLLOUT_SET: an error
                    // makes a descriptor ready for both.
                    let hits = [r & (IN | libc::POLLHUP | libc::POLLERR) != 0, r & (OUT | libc::POLLERR) != 0, false];
                    for (i, hit) in hits.into_iter().enumerate() {
                        if let (true, Some(set)) =
                            (hit && events & [libc::POLLIN, libc::POLLOUT, libc::POLLPRI][i] != 0, out[i].as_mut())
                        {
                            set[fd as usize / 8] |= 1 << (fd % 8);
                            ready += 1;
                        }
                    }
                }
                let mut done = true;
                for (i, set) in out.iter().enumerate() {
                    if let Some(set) = set {
                        done &= notif::write_mem(c.pid, c.args[1 + i], set);
                    }
                }
                ok(done, ready)
            }
            Call::Epoll { epfd } => {
                // In the order of the instance's ready list, the oldest
                // wake-ups first where more are ready than `maxevents`.
                let max = c.args[2] as i32 as usize;
                let (ready, scan) = self.scan(n, *epfd, max);
                let mut out = Vec::new();
                for (fd, r) in ready {
                    out.extend_from_slice(&(r as u16 as u32).to_ne_bytes());
                    let data = self.procs[n as usize].as_ref().and_then(|p| p.cookies.get(&(*epfd, fd)));
                    out.extend_from_slice(&data.copied().unwrap_or(0).to_ne_bytes());
                }
                let written = out.is_empty() || notif::write_mem(c.pid, c.args[1], &out);
                // An answer that could not be written leaves the list as
                // it was (the kernel puts the event back and stops).
                if written {
                    self.looked(n, *epfd, scan);
                }
                ok(written, out.len() / EPOLL_EVENT_BYTES)
            }
        })
    }

    /// The events of `events` that descriptor `fd` of node `n` has ready,
    /// and those the kernel reports unasked ([`ProcessWorld::readiness`]).
    pub(in crate::process) fn readiness(&self, n: u8, fd: i32, events: i16) -> i16 {
        self.world.readiness(n, fd, events)
    }

    /// The descriptors thread `k` of node `n`, waiting out of the slot,
    /// waits on: its read's, accept's or timer's, those its poll or select
    /// watches, the instance's descriptor its epoll wait names, and for a
    /// read or a write that waits for ever (of an empty pipe, eventfd or
    /// socketpair, of a timer not armed, an eventfd's write waiting for
    /// room: `Blocked::Pause`) its held call's.
    pub(in crate::process) fn waited_fds(&self, n: u8, k: usize) -> Vec<i32> {
        let node = &self.world.nodes[n as usize];
        let Some(crate::process::threads::ThreadRun::Waits { blocked, watch, .. }) =
            node.threads.get(k).map(|t| &t.run)
        else {
            return Vec::new();
        };
        match blocked {
            // An epoll wait waits on its instance, through the descriptor
            // it named: an interest deleted and closed under it is gone
            // from the instance, and the wait goes on, as on Linux.
            Blocked::Poll { .. } => match self.epoll_waited(n, k) {
                Some((through, _)) => vec![through],
                None => watch.keys().copied().collect(),
            },
            Blocked::Pause => self
                .held_of(n, k)
                .filter(|c| reads(c.nr) || writes(c.nr))
                .map(|c| vec![c.args[0] as i32])
                .unwrap_or_default(),
            b => b.fd().into_iter().collect(),
        }
    }

    /// Whether thread `k` of node `n`'s held write to descriptor `fd` would
    /// find room now: an eventfd's count has room for the value it adds
    /// (read from its buffer), anything else is writable.
    fn room_for(&self, n: u8, k: usize, fd: i32) -> bool {
        let node = &self.world.nodes[n as usize];
        let Some(&VFd::Event { id }) = node.fds.get(&fd) else {
            return self.readiness(n, fd, libc::POLLOUT) != 0;
        };
        let Some(crate::process::world::Local::Event { count, .. }) = node.locals.get(id as usize) else {
            return true;
        };
        let Some(c) = self.held_of(n, k) else { return true };
        let base = match c.nr {
            libc::SYS_write => Some(c.args[1]),
            libc::SYS_writev => {
                notif::read_mem(c.pid, c.args[1], 8).map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            }
            _ => None,
        };
        let value = base
            .and_then(|at| notif::read_mem(c.pid, at, 8))
            .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()));
        // Unread, it errs toward yes.
        value.is_none_or(|v| u64::MAX - *count > v)
    }

    /// The call thread `k` of node `n` is held in, out of the slot.
    fn held_of(&self, n: u8, k: usize) -> Option<Notif> {
        self.procs[n as usize].as_ref().and_then(|p| p.threads.get(k)?.held)
    }

    /// After a call of node `n`: each thread waiting out of the slot in an
    /// epoll wait watches what its instance holds now (an interest added,
    /// changed, deleted or closed under the wait is the instance's, and
    /// so the wait's, at once, as on Linux): its deadline (an armed timer
    /// among them), and what the world may answer it with, follow the
    /// instance, not the interests the wait began with (a review's
    /// `tmadd`, `tfreuse`, `tfdel`).
    pub(in crate::process) fn follow_epoll_waits(&mut self, n: u8) -> Result<(), ProcessError> {
        let node = &self.world.nodes[n as usize];
        if node.threads.is_empty() {
            return Ok(());
        }
        let mut now = Vec::new();
        for (k, t) in node.threads.iter().enumerate() {
            if let crate::process::threads::ThreadRun::Waits { blocked: Blocked::Poll { .. }, watch, .. } = &t.run
                && let Some((_, instance)) = self.epoll_waited(n, k)
            {
                let entries = self.entries(n, &Call::Epoll { epfd: instance });
                let mut fresh = std::collections::BTreeMap::new();
                for (fd, events) in entries {
                    *fresh.entry(fd).or_insert(0) |= events;
                }
                if fresh != *watch {
                    // As `on_wait` refuses it (a review's `selfexit`: the
                    // DELIVER offered named the wrong end).
                    if self.watches_both_ends(n, &fresh) {
                        return Err(ProcessError::Unmodelled {
                            node: n,
                            call: "epoll_ctl".to_string(),
                            detail: format!(
                                "thread {k} waits in an epoll instance that now watches both ends of a connection \
                                 to itself"
                            ),
                        });
                    }
                    now.push((k, fresh));
                }
            }
        }
        for (k, fresh) in now {
            if let crate::process::threads::ThreadRun::Waits { watch, .. } =
                &mut self.world.nodes[n as usize].threads[k].run
            {
                *watch = fresh;
            }
        }
        Ok(())
    }

    /// For thread `k` of node `n` held in an epoll wait: the descriptor
    /// it waits through, and its instance (`epolls`' key, the instance's
    /// lowest descriptor, which a duplicate's number is not).
    fn epoll_waited(&self, n: u8, k: usize) -> Option<(i32, i32)> {
        let c = self.held_of(n, k)?;
        if !matches!(c.nr, libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2) {
            return None;
        }
        let through = c.args[0] as i32;
        match self.world.nodes[n as usize].fds.get(&through) {
            Some(&VFd::Epoll { id }) => Some((through, id)),
            // Closed under the wait: the close was refused
            // (`check_waited_on`); an instance no more.
            _ => Some((through, through)),
        }
    }

    /// Whether the wait of thread `k` of node `n`, out of the slot, may
    /// end, or wait otherwise, if its call is made again now (on Linux it
    /// would be woken): what it waits on is ready (a descriptor of
    /// [`Supervisor::waited_fds`], readable, or writable for a write, or for
    /// an epoll wait an interest of its instance, as the instance would
    /// report it), closed, or a timer its read waits on for ever has been
    /// armed. A function of the world and of the held call; it errs toward
    /// yes (a call made again that finds nothing waits again).
    pub(in crate::process) fn wait_may_end(&self, n: u8, k: usize) -> bool {
        let node = &self.world.nodes[n as usize];
        let Some(crate::process::threads::ThreadRun::Waits { blocked, watch, .. }) =
            node.threads.get(k).map(|t| &t.run)
        else {
            return false;
        };
        let fds = self.waited_fds(n, k);
        match *blocked {
            Blocked::Accept { .. } | Blocked::Timer { .. } => fds.iter().any(|&fd| self.readiness(n, fd, IN) != 0),
            Blocked::Read { .. } => fds.iter().any(|&fd| self.readiness(n, fd, IN | libc::POLLRDHUP) != 0),
            // A read (or a write waiting for room) that waits for ever.
            Blocked::Pause => {
                let writing = self.held_of(n, k).is_some_and(|c| writes(c.nr));
                fds.iter().any(|&fd| {
                    if writing {
                        self.room_for(n, k, fd)
                    } else {
                        self.readiness(n, fd, IN | libc::POLLRDHUP) != 0
                            || node.timers.get(&fd).is_some_and(|t| t.deadline.is_some())
                    }
                })
            }
            // An epoll wait: any interest of its instance, as the instance
            // would report it (one added under the wait too).
            Blocked::Poll { .. } => match self.epoll_waited(n, k) {
                Some((_, instance)) => node
                    .epolls
                    .get(&instance)
                    .is_some_and(|interest| interest.iter().any(|(&fd, i)| self.reports(n, fd, i) != 0)),
                None => watch.iter().any(|(&fd, &events)| self.readiness(n, fd, events) != 0),
            },
            _ => false,
        }
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

/// Whether descriptor `fd` is open in process `pid`.
fn open_in(pid: u32, fd: i32) -> bool {
    fd >= 0 && std::fs::symlink_metadata(format!("/proc/{pid}/fd/{fd}")).is_ok()
}

/// Each `struct pollfd` of `raw`: its descriptor and events.
/// Whether call `nr` reads its first argument, a descriptor.
fn reads(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_read
            | libc::SYS_readv
            | libc::SYS_pread64
            | libc::SYS_preadv
            | libc::SYS_preadv2
            | libc::SYS_recvfrom
            | libc::SYS_recvmsg
            | libc::SYS_recvmmsg
    )
}

/// Whether call `nr` writes its first argument, a descriptor.
fn writes(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_write
            | libc::SYS_writev
            | libc::SYS_pwrite64
            | libc::SYS_pwritev
            | libc::SYS_pwritev2
            | libc::SYS_sendto
            | libc::SYS_sendmsg
            | libc::SYS_sendmmsg
    )
}

fn parse(raw: &[u8]) -> Vec<(i32, i16)> {
    raw.chunks_exact(8)
        .map(|p| {
            let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
            (fd, i16::from_ne_bytes([p[4], p[5]]))
        })
        .collect()
}

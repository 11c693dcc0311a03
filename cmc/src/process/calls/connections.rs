//! Sockets and connections: `socket`, `bind`, `listen`, `connect`,
//! `accept` and `accept4`, `shutdown`, `setsockopt` (its timeouts are
//! `socket_timeouts`') and `getsockopt`,
//! `getsockname` and `getpeername`; reads and writes (`read`, `readv`,
//! `recvfrom`, `recvmsg`, `write`, `writev`, `sendto`, `sendmsg`, and the
//! positional calls) on connections and on fds 3 and 193, whose records
//! are the node's reported and durable state; and the completion of a held
//! read or accept when an action answers it.
//!
//! No real socket exists: a socket is a placeholder descriptor and a
//! connection is a pair of queues in the world, which only the node at
//! each end writes to. It owns the connection limits a node can cross in
//! a call; it does not choose actions nor send answers (the supervisor),
//! and a read of a random device is `random`'s, of a pipe, socketpair or
//! eventfd `local`'s.

use nix::libc;

use super::super::lives::Run;
use super::super::notif::{self, Notif};
use super::super::supervisor::Supervisor;
use super::super::world::{Blocked, Conn, ConnKind, End, Label, ProcessWorld, Side, Sock, Trail, VFd};
use super::super::{ProcessError, limits, syscalls};
use super::Answer;
use super::buffers::{gather, scatter};
use super::socket_timeouts::Wait;

/// A dialer's end of connection k of node n has port `EPHEMERAL_BASE +
/// 256 * n + k`.
pub const EPHEMERAL_BASE: u16 = 40000;

impl Supervisor {
    pub(super) fn on_socket(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (domain, ty) = (c.args[0] as i32, c.args[1] as i32);
        // A socket the checker cannot answer for is an error, not an errno
        // a program may take in its stride and exit on, passing with
        // nothing checked.
        if domain != libc::AF_INET {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: "socket".to_string(),
                detail: format!(
                    "address family {} is not modelled: the nodes talk over AF_INET stream sockets (TCP) on 127.0.0.1",
                    family_name(domain)
                ),
            });
        }
        if ty & 0xf != libc::SOCK_STREAM {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: "socket".to_string(),
                detail: format!(
                    "socket type {} is not modelled: the nodes talk over AF_INET stream sockets (TCP) on 127.0.0.1",
                    type_name(ty & 0xf)
                ),
            });
        }
        if let Some(fd) = self.add_fd(n, c, ty & libc::SOCK_CLOEXEC != 0)? {
            let node = &mut self.world.nodes[n as usize];
            node.fds.insert(fd, VFd::Socket { port: None, listening: false, addr: [0; 4], reuse: false, refused: 0 });
            if ty & libc::SOCK_NONBLOCK != 0 {
                node.nonblock.insert(fd);
            }
        }
        Ok(Answer::Done)
    }

    /// `pread64`, `pwrite64`, `preadv`, `pwritev`, `preadv2`, `pwritev2`.
    /// On a connection, socket, pipe, socketpair or eventfd they fail with
    /// ESPIPE, as on the kernel's; `preadv2` and `pwritev2` at offset -1 (the current position)
    /// without flags are `readv` and `writev`; `/dev/urandom` ignores the
    /// offset. Fds 3 and 193 carry records, not a file one could seek in.
    pub(super) fn on_positional(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        if !self.owns(n, fd) {
            return Ok(Answer::Continue);
        }
        let unmodelled = |detail: &str| ProcessError::Unmodelled {
            node: n,
            call: syscalls::describe(c.nr),
            detail: detail.to_string(),
        };
        let writes = matches!(c.nr, libc::SYS_pwrite64 | libc::SYS_pwritev | libc::SYS_pwritev2);
        let flagged = matches!(c.nr, libc::SYS_preadv2 | libc::SYS_pwritev2);
        match vfd {
            Some(VFd::Device { .. }) => return Ok(Answer::Continue),
            Some(VFd::Out { stream }) if writes => return Ok(self.write_out(n, c, stream)),
            Some(VFd::Out { .. } | VFd::Host { .. }) if writes => return Ok(Answer::Err(libc::EBADF)),
            Some(VFd::Out { .. }) => return Ok(Answer::Err(libc::EBADF)),
            Some(VFd::Host { .. }) => {
                if flagged && c.args[5] != 0 {
                    return Err(ProcessError::Unmodelled {
                        node: n,
                        call: syscalls::describe(c.nr),
                        detail: "RWF_ flags on a file".to_string(),
                    });
                }
                return Ok(match c.args[3] as i64 {
                    -1 if flagged => self.read_host(n, c, fd, None),
                    at if at < 0 => Answer::Err(libc::EINVAL),
                    at => self.read_host(n, c, fd, Some(at as u64)),
                });
            }
            _ => {}
        }
        if let Some(VFd::File { .. }) = vfd {
            // A file's positional I/O at its offset (-1 in the `2` forms:
            // at the current one, moving it).
            let at = c.args[3] as i64;
            if flagged && c.args[5] != 0 {
                return Err(unmodelled("RWF_ flags on a file of the data directory"));
            }
            let at = match at {
                -1 if flagged => None,
                at if at < 0 => return Ok(Answer::Err(libc::EINVAL)),
                at => Some(at as u64),
            };
            return if writes { self.write_file(n, c, fd, at) } else { Ok(self.read_file(n, c, fd, at)) };
        }
        if flagged && c.args[5] != 0 {
            return Err(unmodelled(
                "RWF_ flags (RWF_NOWAIT is non-blocking I/O) on a connection, a socket, /dev/urandom or fd 3 or 193",
            ));
        }
        let at_current = flagged && c.args[3] as i64 == -1;
        if at_current || matches!(vfd, Some(VFd::Random { .. })) {
            return if writes { self.on_write(n, c, vfd) } else { self.on_read(n, c, vfd) };
        }
        match vfd {
            Some(VFd::Conn { .. } | VFd::Socket { .. } | VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. }) => {
                Ok(Answer::Err(libc::ESPIPE))
            }
            _ => Err(unmodelled("fds 3 and 193 hold records, not a file: read and write them without an offset")),
        }
    }

    /// The socket options that change what TCP does here: `SO_REUSEADDR`
    /// (kept: two sockets that set it may bind one address while neither
    /// listens), and, refused by name, `SO_REUSEPORT` (several listeners
    /// on one port, the kernel choosing among them) and `SO_LINGER` with a
    /// linger set (a close that resets, or waits). `None`: not one of
    /// these.
    pub(super) fn on_socket_option(
        &mut self,
        n: u8,
        c: &Notif,
        vfd: Option<VFd>,
    ) -> Result<Option<Answer>, ProcessError> {
        let Some(v) = vfd else { return Ok(None) };
        let (level, name) = (c.args[1] as i32, c.args[2] as i32);
        if level != libc::SOL_SOCKET || !matches!(name, libc::SO_REUSEADDR | libc::SO_REUSEPORT | libc::SO_LINGER) {
            return Ok(None);
        }
        let len = c.args[4] as u32 as usize;
        if len < 4 {
            return Ok(Some(Answer::Err(libc::EINVAL)));
        }
        let Some(value) = notif::read_mem(c.pid, c.args[3], 4) else { return Ok(Some(Answer::Err(libc::EFAULT))) };
        let on = i32::from_ne_bytes([value[0], value[1], value[2], value[3]]) != 0;
        let refuse = |detail: &str| {
            Err(ProcessError::Unmodelled { node: n, call: "setsockopt".to_string(), detail: detail.to_string() })
        };
        match name {
            libc::SO_REUSEPORT if on => {
                refuse("SO_REUSEPORT (several sockets on one port, the kernel choosing among them) is not modelled")
            }
            libc::SO_LINGER if on => {
                refuse("SO_LINGER with a linger set (a close that resets or waits) is not modelled")
            }
            libc::SO_REUSEADDR => {
                let fd = c.args[0] as i32;
                if let Some(VFd::Socket { reuse, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
                    *reuse = on;
                }
                let _ = v;
                Ok(Some(Answer::Val(0)))
            }
            _ => Ok(Some(Answer::Val(0))),
        }
    }

    /// The timeouts (`SO_RCVTIMEO`, `SO_SNDTIMEO`) are kept in the world
    /// (`socket_timeouts`); every other option is accepted and changes
    /// nothing.
    pub(super) fn on_setsockopt(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        if vfd.is_none() {
            return Ok(Answer::Continue);
        }
        Ok(self.set_socket_timeout(n, c, c.args[0] as i32).unwrap_or(Answer::Val(0)))
    }

    fn conns_of(&self, n: u8) -> usize {
        self.world.nodes[n as usize].fds.values().filter(|v| matches!(v, VFd::Conn { .. })).count()
    }

    fn check_conn_limit(&self, n: u8, call: &str) -> Result<(), ProcessError> {
        if self.conns_of(n) >= limits::CONNECTIONS_PER_NODE_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "connections_per_node_max",
                max: limits::CONNECTIONS_PER_NODE_MAX,
                detail: format!("{call} would open one more connection"),
            });
        }
        Ok(())
    }

    pub(super) fn on_socket_call(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(VFd::Socket { port, listening, addr, reuse, refused }) = vfd else {
            return Ok(match vfd {
                None => Answer::Continue,
                Some(VFd::Conn { .. }) if c.nr == libc::SYS_connect => Answer::Err(libc::EISCONN),
                Some(VFd::Conn { .. }) if c.nr == libc::SYS_listen => Answer::Err(libc::EINVAL),
                Some(_) => Answer::Err(libc::EINVAL),
            });
        };
        let unmodelled =
            |call: &str, detail: String| ProcessError::Unmodelled { node: n, call: call.to_string(), detail };
        Ok(match c.nr {
            libc::SYS_bind => {
                let sa = match read_sockaddr(c) {
                    Ok(sa) => sa,
                    Err(e) => return Ok(Answer::Err(e)),
                };
                let (family, p, a) = sa;
                if family != libc::AF_INET as u16 {
                    return Ok(Answer::Err(libc::EAFNOSUPPORT));
                }
                if port.is_some() {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                if a != [0; 4] && a[0] != 127 {
                    return Err(unmodelled(
                        "bind",
                        format!(
                            "to {}: the nodes share one machine whose only addresses are the loopback ones (127.0.0.0/8) and any (0.0.0.0)",
                            dotted(a)
                        ),
                    ));
                }
                if p == 0 {
                    return Err(unmodelled(
                        "bind",
                        format!(
                            "to port 0 at {}: a port the kernel chooses is not modelled; bind a port of your own",
                            dotted(a)
                        ),
                    ));
                }
                if self.world.port_taken(n, fd, a, p, reuse, false) {
                    return Ok(Answer::Err(libc::EADDRINUSE));
                }
                let fds = &mut self.world.nodes[n as usize].fds;
                fds.insert(fd, VFd::Socket { port: Some(p), listening, addr: a, reuse, refused });
                Answer::Val(0)
            }
            libc::SYS_listen => {
                let Some(p) = port else {
                    return Err(unmodelled(
                        "listen",
                        "on a socket not bound: the kernel would choose its port, which is not modelled; bind one first"
                            .to_string(),
                    ));
                };
                if !listening && self.world.port_taken(n, fd, addr, p, reuse, true) {
                    return Ok(Answer::Err(libc::EADDRINUSE));
                }
                let fds = &mut self.world.nodes[n as usize].fds;
                fds.insert(fd, VFd::Socket { port, listening: true, addr, reuse, refused });
                Answer::Val(0)
            }
            libc::SYS_connect => {
                if listening {
                    return Ok(Answer::Err(libc::EISCONN));
                }
                if refused == 1 {
                    // A refused non-blocking connect's error, taken.
                    let fds = &mut self.world.nodes[n as usize].fds;
                    fds.insert(fd, VFd::Socket { port, listening, addr, reuse, refused: 2 });
                    return Ok(Answer::Err(libc::ECONNREFUSED));
                }
                let (family, p, to) = match read_sockaddr(c) {
                    Ok(sa) => sa,
                    Err(e) => return Ok(Answer::Err(e)),
                };
                if family != libc::AF_INET as u16 {
                    return Err(unmodelled(
                        "connect",
                        format!("to an address of family {}", family_name(family as i32)),
                    ));
                }
                // 0.0.0.0 dials this machine, as 127.0.0.1.
                let to = if to == [0; 4] { [127, 0, 0, 1] } else { to };
                if to[0] != 127 {
                    return Err(unmodelled(
                        "connect",
                        format!(
                            "to {}:{p}: the nodes share one machine, reached at its loopback addresses (127.0.0.0/8); another host is not modelled",
                            dotted(to)
                        ),
                    ));
                }
                let nonblocking = self.world.nodes[n as usize].nonblock.contains(&fd);
                let Some((target, listener)) = self.world.listener_for(to, p) else {
                    // Nothing listens there (a node not started, not
                    // listening yet, exited or crashed): refused, at once or,
                    // non-blocking, by the time it is asked.
                    if nonblocking {
                        let fds = &mut self.world.nodes[n as usize].fds;
                        fds.insert(fd, VFd::Socket { port, listening, addr, reuse, refused: 1 });
                        return Ok(Answer::Err(libc::EINPROGRESS));
                    }
                    return Ok(Answer::Err(libc::ECONNREFUSED));
                };
                self.check_conn_limit(n, "connect")?;
                let node = &mut self.world.nodes[n as usize];
                if node.dials as usize >= limits::BUDGET_MAX {
                    return Err(ProcessError::Limit {
                        node: n,
                        limit: "connects_per_node_max",
                        max: limits::BUDGET_MAX,
                        detail: "one connect too many".to_string(),
                    });
                }
                let label = Label { kind: ConnKind::Node, node: n, k: node.dials };
                node.dials += 1;
                node.fds.insert(fd, VFd::Conn { label, side: Side::Dialer });
                // The kernel completes the handshake at once on loopback:
                // the connection waits in the listener's queue until the
                // target accepts it (the backlog is not modelled).
                let conn = Conn::new(target, End::Open, End::Pending).at(listener, to, p);
                self.world.conns.insert(label, conn);
                // A non-blocking connect is in progress, and writable (so
                // connected) at its first poll.
                if nonblocking { Answer::Err(libc::EINPROGRESS) } else { Answer::Val(0) }
            }
            _ => {
                // accept, accept4
                if !listening {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                // A connection an ACCEPT made ready while the node polled is
                // taken at once; otherwise the call waits for one, unless
                // the listening socket is non-blocking.
                let node = &mut self.world.nodes[n as usize];
                let conns = &self.world.conns;
                let ready = node.accept_queue.iter().position(|l| conns.get(l).is_some_and(|c| c.listener == fd));
                if let Some(i) = ready {
                    let label = node.accept_queue.remove(i);
                    return self.complete_accept(n, c, label);
                }
                let nonblocking = node.nonblock.contains(&fd);
                match self.receive_wait(n, fd) {
                    Wait::Forever if !nonblocking => Answer::Hold(Blocked::Accept { fd, until: None }),
                    Wait::Until(until) if !nonblocking => Answer::Hold(Blocked::Accept { fd, until: Some(until) }),
                    // An accept that does not wait, with a connection
                    // waiting to be accepted, or a node that may still
                    // dial: on Linux it may be in the queue already.
                    _ => {
                        let node = &self.world.nodes[n as usize];
                        let waiting = self.world.conns.iter().any(|(l, c)| {
                            c.target == n
                                && c.listener == fd
                                && c.target_end == End::Pending
                                && l.kind != ConnKind::Timer
                                && !node.accept_queue.contains(l)
                        });
                        if waiting || self.world.peer_may_dial(n) && self.others_may_act(n) {
                            Answer::Hold(Blocked::AcceptNow { fd, trail: Trail::default() })
                        } else {
                            Answer::Err(libc::EAGAIN)
                        }
                    }
                }
            }
        })
    }

    /// `shutdown` of a connection ([`ProcessWorld::shutdown_end`]); of a
    /// socket not connected, ENOTCONN; of a listening one, refused.
    pub(super) fn on_shutdown(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let how = c.args[1] as i32;
        Ok(match vfd {
            None => Answer::Continue,
            Some(_) if !(libc::SHUT_RD..=libc::SHUT_RDWR).contains(&how) => Answer::Err(libc::EINVAL),
            Some(VFd::Conn { label, side }) => {
                let rd = how != libc::SHUT_WR;
                let wr = how != libc::SHUT_RD;
                match self.world.shutdown_end(&label, side, rd, wr) {
                    Ok(()) => {
                        // `inet_shutdown`'s `sk_state_change`: a wake-up
                        // naming no event, whether or not its events change.
                        self.world.wake_end(&label, side, 0);
                        Answer::Val(0)
                    }
                    Err(e) => Answer::Err(e),
                }
            }
            Some(VFd::Socket { listening: true, .. }) => {
                return Err(ProcessError::Unmodelled {
                    node: n,
                    call: "shutdown".to_string(),
                    detail: "of a listening socket (Linux stops it listening) is not modelled".to_string(),
                });
            }
            Some(_) => Answer::Err(libc::ENOTCONN),
        })
    }

    /// `getsockopt` at `SOL_SOCKET`: `SO_ERROR` takes the error pending
    /// (a reset, a refused connect), `SO_TYPE`, `SO_DOMAIN`,
    /// `SO_PROTOCOL` and `SO_ACCEPTCONN` are a TCP socket's; every other
    /// option reads as 0.
    pub(super) fn on_getsockopt(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Answer {
        let Some(v) = vfd else { return Answer::Continue };
        let fd = c.args[0] as i32;
        let (level, name) = (c.args[1] as i32, c.args[2] as i32);
        let run = self.let_run == Some(n);
        let value = match (level, name, v) {
            (libc::SOL_SOCKET, libc::SO_ERROR, VFd::Conn { label, side }) => {
                if let Some(hold) = self.look_now(n, fd, label, side, Look::Error) {
                    return hold;
                }
                self.world.conns.get_mut(&label).map_or(0, |conn| {
                    let s = conn.sock_mut(side);
                    if run && s.rst {
                        // Made before the reset on its way arrived.
                        return 0;
                    }
                    // Taken: the reset is seen, by reads and polls too.
                    if s.err != 0 {
                        s.rst = false;
                    }
                    std::mem::take(&mut s.err) as i32
                })
            }
            (libc::SOL_SOCKET, libc::SO_ERROR, VFd::Socket { port, listening, addr, reuse, refused: 1 }) => {
                let fds = &mut self.world.nodes[n as usize].fds;
                fds.insert(fd, VFd::Socket { port, listening, addr, reuse, refused: 2 });
                libc::ECONNREFUSED
            }
            (libc::SOL_SOCKET, libc::SO_TYPE, _) => libc::SOCK_STREAM,
            (libc::SOL_SOCKET, libc::SO_DOMAIN, _) => libc::AF_INET,
            (libc::SOL_SOCKET, libc::SO_PROTOCOL, _) => libc::IPPROTO_TCP,
            (libc::SOL_SOCKET, libc::SO_ACCEPTCONN, VFd::Socket { listening, .. }) => listening as i32,
            _ => 0,
        };
        let pid = c.pid;
        if c.args[3] != 0 && !notif::write_mem(pid, c.args[3], &value.to_ne_bytes()) {
            return Answer::Err(libc::EFAULT);
        }
        if c.args[4] != 0 && !notif::write_mem(pid, c.args[4], &4u32.to_ne_bytes()) {
            return Answer::Err(libc::EFAULT);
        }
        Answer::Val(0)
    }

    pub(super) fn on_sockname(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Answer {
        let Some(v) = vfd else { return Answer::Continue };
        let peer = c.nr == libc::SYS_getpeername;
        // A reset end is closed (`TCP_CLOSE`), and has no peer: held, as
        // `SO_ERROR` is, where a reset may come first.
        if let (VFd::Conn { label, side }, true) = (v, peer) {
            let run = self.let_run == Some(n);
            if let Some(hold) = self.look_now(n, c.args[0] as i32, label, side, Look::Error) {
                return hold;
            }
            let reset = self.world.conns.get(&label).is_some_and(|conn| {
                let s = conn.sock(side);
                (s.reset || s.err != 0) && !(run && s.rst)
            });
            if reset {
                return Answer::Err(libc::ENOTCONN);
            }
        }
        let ephemeral = |l: &Label| match l.kind {
            ConnKind::Node => EPHEMERAL_BASE + 256 * l.node as u16 + l.k as u16,
            _ => EPHEMERAL_BASE - 1 - l.k as u16,
        };
        let local = [127, 0, 0, 1];
        let conn = |l: &Label| self.world.conns.get(l);
        let (addr, port) = match (v, peer) {
            (VFd::Socket { port, addr, .. }, false) => (if port.is_some() { addr } else { [0; 4] }, port.unwrap_or(0)),
            (VFd::Conn { label, side: Side::Dialer }, false) => (local, ephemeral(&label)),
            (VFd::Conn { label, side: Side::Target }, false) => conn(&label).map_or((local, 0), |c| (c.addr, c.port)),
            (VFd::Conn { label, side: Side::Dialer }, true) => conn(&label).map_or((local, 0), |c| (c.addr, c.port)),
            (VFd::Conn { label, side: Side::Target }, true) => (local, ephemeral(&label)),
            _ => return Answer::Err(libc::ENOTCONN),
        };
        let mut sa = [0u8; 16];
        sa[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        sa[2..4].copy_from_slice(&port.to_be_bytes());
        sa[4..8].copy_from_slice(&addr);
        write_sockaddr(c.pid, c.args[1], c.args[2], &sa)
    }

    pub(super) fn on_read(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(v) = vfd else {
            return Ok(match fd {
                193 => {
                    let node = &mut self.world.nodes[n as usize];
                    match scatter(c, &node.recovery) {
                        Ok(k) => {
                            node.recovery.drain(..k);
                            Answer::Val(k as i64)
                        }
                        Err(e) => Answer::Err(e),
                    }
                }
                3 => Answer::Val(0),
                _ => Answer::Continue,
            });
        };
        let flags = Self::read_flags(c);
        Ok(match v {
            VFd::Random { .. } => self.read_random(n, c),
            VFd::Host { .. } => self.read_host(n, c, fd, None),
            // The device itself answers (/dev/null, /dev/zero, /dev/full).
            VFd::Device { .. } => Answer::Continue,
            VFd::Out { .. } => Answer::Err(libc::EBADF),
            VFd::File { .. } => self.read_file(n, c, fd, None),
            VFd::Dir { .. } => Answer::Err(libc::EISDIR),
            VFd::Socket { refused: 1, .. } => {
                self.take_refusal(n, fd);
                Answer::Err(libc::ECONNREFUSED)
            }
            // A socket whose connect failed is closed: nothing to read.
            VFd::Socket { refused: 2, .. } => Answer::Val(0),
            VFd::Socket { .. } => Answer::Err(libc::ENOTCONN),
            VFd::Epoll { .. } => Answer::Err(libc::EINVAL),
            VFd::Timer => self.read_timer(n, c, fd),
            VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. } => return self.read_local(n, c, fd, v),
            VFd::Conn { label, side } => {
                let known = libc::MSG_DONTWAIT | libc::MSG_PEEK | libc::MSG_WAITALL | libc::MSG_CMSG_CLOEXEC;
                if flags & !known != 0 {
                    return Err(ProcessError::Unmodelled {
                        node: n,
                        call: syscalls::describe(c.nr),
                        detail: format!(
                            "receive flags {flags:#x} (MSG_DONTWAIT, MSG_PEEK and MSG_WAITALL are modelled)"
                        ),
                    });
                }
                if flags & libc::MSG_WAITALL != 0 {
                    if c.nr != libc::SYS_recvfrom || flags & libc::MSG_PEEK != 0 {
                        return Err(ProcessError::Unmodelled {
                            node: n,
                            call: syscalls::describe(c.nr),
                            detail: "MSG_WAITALL is modelled in recv and recvfrom, without MSG_PEEK".to_string(),
                        });
                    }
                    // A receive timeout of zero waits no more than a
                    // non-blocking socket.
                    let nonblocking = flags & libc::MSG_DONTWAIT != 0
                        || self.world.nodes[n as usize].nonblock.contains(&fd)
                        || self.receive_wait(n, fd) == Wait::Never;
                    // Not waiting, short of its length: more may have
                    // arrived before the call.
                    let short = self.world.conns.get(&label).is_some_and(|conn| {
                        !conn.ended(side)
                            && conn.received(side).iter().map(Vec::len).sum::<usize>() < c.args[2] as usize
                    });
                    if nonblocking
                        && short
                        && let Some(hold) = self.look_now(n, fd, label, side, Look::Stream)
                    {
                        return Ok(hold);
                    }
                    return Ok(self.recv_waitall(n, c, fd, label, side, nonblocking));
                }
                let peek = flags & libc::MSG_PEEK != 0;
                // Only the checker writes to a timer connection, and it did so
                // before the node could read: no race, so answer at once.
                let ready = label.kind == ConnKind::Timer
                    && self.world.queue_toward(&label, side).is_some_and(|q| !q.is_empty());
                if ready {
                    let msg = self.world.queue_toward(&label, side).and_then(|q| q.pop_front()).unwrap_or_default();
                    match scatter(c, &msg) {
                        Ok(k) => Answer::Val(k as i64),
                        Err(e) => Answer::Err(e),
                    }
                } else if let Some(answer) = self.read_arrived(&label, side, c, peek) {
                    answer
                } else if let Some(answer) = self.read_end(&label, side) {
                    answer
                } else {
                    // A read shut for reading never waits either.
                    let shut_rd = self.world.conns.get(&label).is_some_and(|conn| conn.sock(side).shut & Sock::RD != 0);
                    let nonblocking = flags & libc::MSG_DONTWAIT != 0
                        || self.world.nodes[n as usize].nonblock.contains(&fd)
                        || shut_rd;
                    let wait = self.receive_wait(n, fd);
                    match wait {
                        Wait::Forever if !nonblocking => Answer::Hold(Blocked::Read { fd, until: None }),
                        Wait::Until(until) if !nonblocking => Answer::Hold(Blocked::Read { fd, until: Some(until) }),
                        // A read that does not wait, with something on its
                        // way to it, or a peer that may still send: on Linux
                        // it may have arrived before the call (the peer may
                        // even have answered what this step sent).
                        _ => {
                            let coming = self
                                .world
                                .conns
                                .get(&label)
                                .is_some_and(|conn| !conn.queue(side).is_empty() || conn.end_on_its_way(side))
                                || self.world.peer_may_send(&label, side) && self.others_may_act(n);
                            if coming {
                                Answer::Hold(Blocked::ReadNow { fd, trail: Trail::default() })
                            } else if shut_rd {
                                Answer::Val(0)
                            } else {
                                Answer::Err(libc::EAGAIN)
                            }
                        }
                    }
                }
            }
        })
    }

    pub(super) fn on_write(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        match vfd {
            Some(VFd::File { .. }) => return self.write_file(n, c, fd, None),
            Some(VFd::Dir { .. }) => return Ok(Answer::Err(libc::EISDIR)),
            Some(VFd::Out { stream }) => return Ok(self.write_out(n, c, stream)),
            Some(VFd::Device { .. }) => return Ok(Answer::Continue),
            Some(VFd::Host { .. }) => return Ok(Answer::Err(libc::EBADF)),
            Some(v @ (VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. })) => {
                return self.write_local(n, c, fd, v);
            }
            _ => {}
        }
        if vfd.is_none() && fd != 3 && fd != 193 {
            // The node's own stdout and stderr: run as written, and kept
            // for a trace's steps.
            if self.capture
                && (fd == 1 || fd == 2)
                && let Ok(data) = gather(c)
            {
                self.captured(n, &data);
            }
            return Ok(Answer::Continue);
        }
        let data = match gather(c) {
            Ok(d) => d,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let len = data.len() as i64;
        let Some(v) = vfd else {
            let durable = fd == 193;
            let node = &mut self.world.nodes[n as usize];
            let buf = if durable { &mut node.durable_in } else { &mut node.state_in };
            buf.extend_from_slice(&data);
            let record = take_records(buf).map_err(|len| ProcessError::Limit {
                node: n,
                limit: "state_bytes_max",
                max: limits::STATE_BYTES_MAX,
                detail: format!("a {len}-byte record on fd {fd}"),
            })?;
            if let Some(r) = record {
                let node = &mut self.world.nodes[n as usize];
                if durable {
                    node.durable = Some(r);
                } else {
                    node.state = r;
                }
            }
            return Ok(Answer::Val(len));
        };
        let (label, side) = match v {
            VFd::Random { .. } => return Ok(Answer::Val(len)),
            VFd::Socket { refused: 1, .. } => {
                self.take_refusal(n, fd);
                return Ok(Answer::Err(libc::ECONNREFUSED));
            }
            // Not connected (or no more): EPIPE, and SIGPIPE.
            VFd::Socket { .. } => {
                if send_flags(c) & libc::MSG_NOSIGNAL == 0 {
                    self.raise_sigpipe(n, c)?;
                }
                return Ok(Answer::Err(libc::EPIPE));
            }
            VFd::Epoll { .. } | VFd::Timer | VFd::File { .. } | VFd::Dir { .. } => {
                return Ok(Answer::Err(libc::EINVAL));
            }
            VFd::Device { .. } | VFd::Out { .. } | VFd::Host { .. } => return Ok(Answer::Err(libc::EBADF)),
            // Answered above.
            VFd::Pipe { .. } | VFd::Pair { .. } | VFd::Event { .. } => return Ok(Answer::Err(libc::EBADF)),
            VFd::Conn { label, side } => (label, side),
        };
        if data.len() > self.cfg.write_bytes_max {
            return Err(ProcessError::Limit {
                node: n,
                limit: "write_bytes_max",
                max: self.cfg.write_bytes_max,
                detail: format!("a {}-byte {} on connection {label}", data.len(), syscalls::describe(c.nr)),
            });
        }
        let flags = send_flags(c);
        let known = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL | libc::MSG_MORE;
        if flags & !known != 0 {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(c.nr),
                detail: format!(
                    "send flags {flags:#x} on connection {label} (MSG_DONTWAIT, MSG_NOSIGNAL and MSG_MORE are modelled)"
                ),
            });
        }
        // The write is held where the peer's close may come before it: the
        // peer closed (or crashed) in a step of its own, and what that sent
        // is on its way; or the peer is still open with what this node
        // wrote unread, and may close (so reset) while this step runs, once
        // another node acts. RUN makes the write as it stands (toward a
        // peer still open: `let_run`). Not on a connection to itself,
        // whose close came first in its own order.
        let let_through = self.let_run == Some(n);
        let to_itself = ProcessWorld::dialer_node(&label)
            .is_some_and(|d| self.world.conns.get(&label).is_some_and(|conn| conn.target == d));
        if !data.is_empty()
            && !to_itself
            && (self.world.conns.get(&label).is_some_and(|conn| conn.close_on_its_way(side))
                || !let_through
                    && self.world.peer_may_reset(&label, side, self.acted_toward_peer(n, &label, side))
                    && self.others_may_act(n))
        {
            return Ok(Answer::Hold(Blocked::WriteNow { fd, trail: Trail::default() }));
        }
        // The kernel's socket first: an error pending (a reset), then a
        // socket shut for writing or reset (EPIPE, and SIGPIPE unless
        // MSG_NOSIGNAL; an EPIPE taken as the pending error raises it too).
        let sock = self.world.conns.get(&label).map(|conn| *conn.sock(side)).unwrap_or_default();
        let pipe = |me: &mut Self| -> Result<Answer, ProcessError> {
            if flags & libc::MSG_NOSIGNAL == 0 {
                me.raise_sigpipe(n, c)?;
            }
            Ok(Answer::Err(libc::EPIPE))
        };
        if (sock.err != 0 || sock.reset)
            && let Some(conn) = self.world.conns.get_mut(&label)
        {
            // The write sees the reset: so do reads and polls from now on.
            conn.sock_mut(side).rst = false;
        }
        if sock.err != 0 {
            if let Some(conn) = self.world.conns.get_mut(&label) {
                conn.sock_mut(side).err = 0;
            }
            if sock.err as i32 == libc::EPIPE {
                return pipe(self);
            }
            return Ok(Answer::Err(sock.err as i32));
        }
        if sock.reset || (sock.shut & Sock::WR != 0 && !data.is_empty()) {
            return pipe(self);
        }
        if data.is_empty() {
            return Ok(Answer::Val(0));
        }
        match (label.kind, side) {
            (ConnKind::Client, Side::Target) => {
                if self.world.replies.len() >= limits::REPLIES_MAX {
                    return Err(ProcessError::Limit {
                        node: n,
                        limit: "replies_max",
                        max: limits::REPLIES_MAX,
                        detail: format!("one more reply on connection {label}"),
                    });
                }
                if self.cfg.c_view && data.len() > limits::VIEW_REPLY_BYTES_MAX {
                    return Err(ProcessError::Limit {
                        node: n,
                        limit: "CMC_WRITE_MAX",
                        max: limits::VIEW_REPLY_BYTES_MAX,
                        detail: format!(
                            "a {}-byte reply on connection {label}, which the C invariants' view (struct cmc_reply) \
                             does not hold; check replies this long with a Rust property",
                            data.len()
                        ),
                    });
                }
                self.world.replies.push((n, data));
            }
            (ConnKind::Timer, _) => {}
            _ => {
                let toward = side.other();
                // Toward a socket that is closed, gone or shut both ways, the
                // write succeeds, the bytes are lost, and the reset that
                // answers them makes the next write fail.
                if self.world.conns.get(&label).is_none_or(|c| c.refuses_data(toward)) {
                    self.world.write_refused(&label, side);
                } else {
                    self.check_in_flight(n, || format!("one more message on connection {label}"))?;
                    if let Some(q) = self.world.queue_toward(&label, toward) {
                        q.push_back(data);
                    }
                }
            }
        }
        Ok(Answer::Val(len))
    }

    /// Answers node `n`'s held read with `data` (at most its buffer's size);
    /// returns how many bytes were taken.
    pub(in crate::process) fn answer_read(&mut self, n: u8, data: &[u8]) -> Result<usize, ProcessError> {
        let notif = self.held(n)?;
        if Self::read_flags(&notif) & libc::MSG_WAITALL != 0 {
            return self.answer_waitall(n, &notif, data);
        }
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let (answer, taken) = match scatter(&notif, data) {
            Ok(k) => (Answer::Val(k as i64), k),
            Err(e) => (Answer::Err(e), 0),
        };
        self.answer(n, &notif, answer)?;
        Ok(taken)
    }

    /// Node `n`'s held `recv(fd, buf, len, MSG_WAITALL)` gets `data` (empty:
    /// EOF) after the bytes it has already: it returns once it has `len`,
    /// or at EOF, and otherwise waits on with what it has in the world.
    /// Returns how many bytes of `data` it took.
    fn answer_waitall(&mut self, n: u8, notif: &Notif, data: &[u8]) -> Result<usize, ProcessError> {
        let want = notif.args[2] as usize;
        let got = self.world.nodes[n as usize].waitall.len();
        let take = data.len().min(want.saturating_sub(got));
        if take > 0 && !notif::write_mem(notif.pid, notif.args[1] + got as u64, &data[..take]) {
            self.world.nodes[n as usize].waitall.clear();
            self.world.nodes[n as usize].blocked = Blocked::Nothing;
            self.answer(n, notif, Answer::Err(libc::EFAULT))?;
            return Ok(0);
        }
        let node = &mut self.world.nodes[n as usize];
        node.waitall.extend_from_slice(&data[..take]);
        let got = node.waitall.len();
        if got < want && !data.is_empty() {
            return Ok(take);
        }
        // The whole buffer is what the call gave, its first parts written
        // in earlier steps.
        notif::restage_written(notif.pid, notif.args[1], &node.waitall);
        node.waitall.clear();
        node.blocked = Blocked::Nothing;
        let answer = if got == 0 { self.end_answer(n, notif) } else { Answer::Val(got as i64) };
        self.answer(n, notif, answer)?;
        Ok(take)
    }

    /// What node `n`'s read `notif`, held at a connection whose stream has
    /// ended, returns: the pending error (taken) or 0.
    fn end_answer(&mut self, n: u8, notif: &Notif) -> Answer {
        match self.world.conn_of(n, notif.args[0] as i32) {
            Some((label, side)) => self.read_end(&label, side).unwrap_or(Answer::Val(0)),
            None => Answer::Val(0),
        }
    }

    /// EOF: node `n`'s held read reaches the end of its stream: 0 after a
    /// FIN, the pending error after a reset.
    pub(in crate::process) fn answer_end(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        if Self::read_flags(&notif) & libc::MSG_WAITALL != 0 {
            return self.answer_waitall(n, &notif, &[]).map(|_| ());
        }
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let answer = self.end_answer(n, &notif);
        self.answer(n, &notif, answer)
    }

    /// Answers node `n`'s held accept with connection `label`.
    pub(in crate::process) fn answer_accept(&mut self, n: u8, label: Label) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let answer = self.complete_accept(n, &notif, label)?;
        self.answer(n, &notif, answer)
    }

    /// Node `n`'s `accept` (call `notif`) takes connection `label`: its
    /// address written, the connection opened, a descriptor added (which
    /// answers the call).
    fn complete_accept(&mut self, n: u8, notif: &Notif, label: Label) -> Result<Answer, ProcessError> {
        self.check_conn_limit(n, "accept")?;
        if notif.args[1] != 0 {
            let port = match label.kind {
                ConnKind::Node => EPHEMERAL_BASE + 256 * label.node as u16 + label.k as u16,
                _ => EPHEMERAL_BASE - 1 - label.k as u16,
            };
            let mut sa = [0u8; 16];
            sa[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
            sa[2..4].copy_from_slice(&port.to_be_bytes());
            sa[4..8].copy_from_slice(&[127, 0, 0, 1]);
            if let Answer::Err(e) = write_sockaddr(notif.pid, notif.args[1], notif.args[2], &sa) {
                return Ok(Answer::Err(e));
            }
        }
        let flags = if notif.nr == libc::SYS_accept4 { notif.args[3] as i32 } else { 0 };
        if let Some(fd) = self.add_fd(n, notif, flags & libc::SOCK_CLOEXEC != 0)? {
            if let Some(c) = self.world.conns.get_mut(&label) {
                c.target_end = End::Open;
            }
            let node = &mut self.world.nodes[n as usize];
            node.fds.insert(fd, VFd::Conn { label, side: Side::Target });
            if flags & libc::SOCK_NONBLOCK != 0 {
                node.nonblock.insert(fd);
            }
            self.inherit_socket_timeouts(n, notif.args[0] as i32, fd);
        }
        Ok(Answer::Done)
    }

    /// A read (call `c`) of what has arrived at `side` of `label` and is
    /// not read yet, if anything has: the oldest message, or as much of it
    /// as the buffer takes (the rest stays first); with `peek` nothing is
    /// taken.
    fn read_arrived(&mut self, label: &Label, side: Side, c: &Notif, peek: bool) -> Option<Answer> {
        let arrived = self.world.conns.get_mut(label)?.arrived(side);
        let msg = arrived.front()?;
        Some(match scatter(c, msg) {
            Ok(k) => {
                if !peek {
                    if k < msg.len() {
                        let rest = msg[k..].to_vec();
                        arrived[0] = rest;
                    } else {
                        arrived.pop_front();
                    }
                }
                Answer::Val(k as i64)
            }
            Err(e) => Answer::Err(e),
        })
    }

    /// A read at `side` of `label` with nothing received: where its stream
    /// has ended ([`Conn::ended`]), 0 once the peer's FIN has arrived,
    /// else the pending error (taken, by a peek too) or 0. `None`: it
    /// would wait, or, shut for reading (which never waits), be held for
    /// what is on its way.
    fn read_end(&mut self, label: &Label, side: Side) -> Option<Answer> {
        let Some(conn) = self.world.conns.get_mut(label) else { return Some(Answer::Val(0)) };
        let s = conn.sock(side);
        if !conn.ended(side) {
            // (Shut for reading with messages on their way: the read does
            // not wait, and is held for what may have arrived.)
            return None;
        }
        // The peer's FIN has arrived (`SOCK_DONE`): 0, before any error.
        if s.fin && (s.fin_in || s.reset_seen()) {
            return Some(Answer::Val(0));
        }
        // A reset on its way is not seen yet: the read is held for it.
        if s.rst {
            return None;
        }
        if s.err != 0 {
            // Taken, by a peek too (`sock_error` in `tcp_recvmsg`).
            let err = s.err as i32;
            conn.sock_mut(side).err = 0;
            return Some(Answer::Err(err));
        }
        Some(Answer::Val(0))
    }

    /// A refused non-blocking connect's error is taken.
    fn take_refusal(&mut self, n: u8, fd: i32) {
        if let Some(VFd::Socket { refused, .. }) = self.world.nodes[n as usize].fds.get_mut(&fd) {
            *refused = 2;
        }
    }

    /// `recv(fd, buf, len, MSG_WAITALL)` on connection `label`: what has
    /// arrived, as many messages as it takes; all of `len`, or EOF, ends it;
    /// otherwise it waits with what it has (or, non-blocking, returns it,
    /// or EAGAIN if nothing).
    /// Node `n`'s observation of its end `side` of `label` (through `fd`),
    /// which does not wait, held ([`Blocked::LookNow`]) where what it
    /// observes may change first: on Linux a message, the FIN or a reset
    /// may arrive before the call, and a peer that may still send or reset
    /// may do so, while another node acts, before the call too. `None`:
    /// answered now (nothing may come, or RUN made it as it stands).
    pub(super) fn look_now(&mut self, n: u8, fd: i32, label: Label, side: Side, look: Look) -> Option<Answer> {
        if self.let_run == Some(n) {
            return None;
        }
        let conn = self.world.conns.get(&label)?;
        let on_its_way = match look {
            Look::Bytes => !conn.queue(side).is_empty(),
            Look::Stream => !conn.queue(side).is_empty() || conn.end_on_its_way(side),
            Look::Error => conn.sock(side).rst,
        };
        let may_come = match look {
            Look::Bytes | Look::Stream => self.world.peer_may_send(&label, side),
            Look::Error => self.world.peer_may_reset(&label, side, self.acted_toward_peer(n, &label, side)),
        };
        let held = on_its_way || may_come && self.others_may_act(n);
        held.then_some(Answer::Hold(Blocked::LookNow { fd, trail: Trail::default() }))
    }

    /// Whether node `n`'s step has acted toward the peer at the other end
    /// of its end `side` of `label` ([`Trail::acted_toward`]).
    fn acted_toward_peer(&self, n: u8, label: &Label, side: Side) -> bool {
        let peer = match side {
            Side::Dialer => self.world.conns.get(label).map(|c| c.target),
            Side::Target => ProcessWorld::dialer_node(label),
        };
        peer.is_some_and(|p| self.trails[n as usize].acted_toward(p))
    }

    fn recv_waitall(&mut self, n: u8, c: &Notif, fd: i32, label: Label, side: Side, nonblocking: bool) -> Answer {
        let want = c.args[2] as usize;
        // What it has received already, where the call is made again (a
        // thread's wait another thread may have ended, `ThreadRun::Again`):
        // in its buffer, and it goes on from there. Empty for a new call.
        let mut received = std::mem::take(&mut self.world.nodes[n as usize].waitall);
        let mut got = received.len();
        let eof = {
            let Some(conn) = self.world.conns.get_mut(&label) else { return Answer::Err(libc::ENOTCONN) };
            let arrived = conn.arrived(side);
            while got < want {
                let Some(msg) = arrived.front_mut() else { break };
                let take = msg.len().min(want - got);
                if !notif::write_mem(c.pid, c.args[1] + got as u64, &msg[..take]) {
                    return Answer::Err(libc::EFAULT);
                }
                received.extend_from_slice(&msg[..take]);
                got += take;
                if take < msg.len() {
                    msg.drain(..take);
                } else {
                    arrived.pop_front();
                }
            }
            conn.ended(side)
        };
        if got == 0 && eof {
            return self.read_end(&label, side).unwrap_or(Answer::Val(0));
        }
        if got == want || eof || (nonblocking && got > 0) {
            // One buffer, as when it fills over several actions.
            notif::restage_written(c.pid, c.args[1], &received);
            return Answer::Val(got as i64);
        }
        if nonblocking {
            return Answer::Err(libc::EAGAIN);
        }
        self.world.nodes[n as usize].waitall = received;
        let until = match self.receive_wait(n, fd) {
            Wait::Until(until) => Some(until),
            Wait::Forever | Wait::Never => None,
        };
        Answer::Hold(Blocked::Read { fd, until })
    }

    /// RUN of node `n`'s held write ([`Blocked::WriteNow`]): it came
    /// before the peer's close. It succeeds (what it wrote is lost with
    /// the peer's socket), and a FIN on its way becomes a reset, since
    /// the peer then closed with data unread.
    pub(in crate::process) fn write_before_close(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        let Blocked::WriteNow { fd, .. } = self.world.nodes[n as usize].blocked else {
            return Err(ProcessError::NotEnabled { action: format!("RUN({n})") });
        };
        // Toward a peer still open: the write is made as it stands.
        if self.world.conn_of(n, fd).is_some_and(|(label, side)| self.world.peer_may_send(&label, side)) {
            self.let_run = Some(n);
            return self.run_held_call(n);
        }
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let answer = match gather(&notif) {
            Ok(data) => {
                if let Some((label, side)) = self.world.conn_of(n, fd)
                    && let Some(c) = self.world.conns.get_mut(&label)
                {
                    let s = c.sock_mut(side);
                    if s.fin && !s.fin_in && !s.rst {
                        s.fin = false;
                        c.reset_travels(side);
                    }
                }
                Answer::Val(data.len() as i64)
            }
            Err(e) => Answer::Err(e),
        };
        self.answer(n, &notif, answer)
    }

    /// The receive flags of a read call (0 for `read` and `readv`).
    pub(in crate::process) fn read_flags(c: &Notif) -> i32 {
        match c.nr {
            libc::SYS_recvfrom => c.args[3] as i32,
            libc::SYS_recvmsg => c.args[2] as i32,
            _ => 0,
        }
    }

    pub(in crate::process) fn held(&self, n: u8) -> Result<Notif, ProcessError> {
        match self.procs[n as usize].as_ref().map(|p| &p.run) {
            Some(Run::Held(notif)) => Ok(*notif),
            _ => Err(ProcessError::NotEnabled { action: format!("an answer to node {n}, which is not blocked") }),
        }
    }
}

/// Takes every complete record (length byte, bytes) from the front of
/// `buf`; returns the last one. `Err(len)` for a record over the limit.
fn take_records(buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, usize> {
    let mut last = None;
    while let Some(&len) = buf.first() {
        let len = len as usize;
        if len > limits::STATE_BYTES_MAX {
            return Err(len);
        }
        if buf.len() < 1 + len {
            break;
        }
        last = Some(buf[1..1 + len].to_vec());
        buf.drain(..1 + len);
    }
    Ok(last)
}

fn write_sockaddr(pid: u32, addr: u64, len_at: u64, sa: &[u8; 16]) -> Answer {
    if addr == 0 {
        return Answer::Val(0);
    }
    let Some(len) = notif::read_mem(pid, len_at, 4) else { return Answer::Err(libc::EFAULT) };
    let room = u32::from_ne_bytes(len[..4].try_into().unwrap_or_default()) as usize;
    let ok = notif::write_mem(pid, addr, &sa[..room.min(16)]) && notif::write_mem(pid, len_at, &16u32.to_ne_bytes());
    if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
}

/// The send flags of a write call (0 for `write` and `writev`).
fn send_flags(c: &Notif) -> i32 {
    match c.nr {
        libc::SYS_sendto => c.args[3] as i32,
        libc::SYS_sendmsg => c.args[2] as i32,
        _ => 0,
    }
}

/// The `sockaddr_in` a `bind` or `connect` names: its family, port and
/// address; EINVAL for a length short of one, EFAULT where it cannot be
/// read.
fn read_sockaddr(c: &Notif) -> Result<(u16, u16, [u8; 4]), i32> {
    let len = c.args[2] as u32 as usize;
    if len < 2 {
        return Err(libc::EINVAL);
    }
    let b = notif::read_mem(c.pid, c.args[1], len.min(8)).ok_or(libc::EFAULT)?;
    let family = u16::from_ne_bytes([b[0], b[1]]);
    if family == libc::AF_INET as u16 && len < 16 {
        return Err(libc::EINVAL);
    }
    if b.len() < 8 {
        return Ok((family, 0, [0; 4]));
    }
    Ok((family, u16::from_be_bytes([b[2], b[3]]), [b[4], b[5], b[6], b[7]]))
}

/// An IPv4 address as `a.b.c.d`.
fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// `AF_INET6` for 10, or the number.
fn family_name(family: i32) -> String {
    match family {
        libc::AF_UNIX => "AF_UNIX".to_string(),
        libc::AF_INET6 => "AF_INET6".to_string(),
        libc::AF_NETLINK => "AF_NETLINK".to_string(),
        libc::AF_PACKET => "AF_PACKET".to_string(),
        other => format!("{other}"),
    }
}

/// `SOCK_DGRAM` for 2, or the number.
fn type_name(ty: i32) -> String {
    match ty {
        libc::SOCK_DGRAM => "SOCK_DGRAM".to_string(),
        libc::SOCK_RAW => "SOCK_RAW".to_string(),
        libc::SOCK_SEQPACKET => "SOCK_SEQPACKET".to_string(),
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_taken_whole_and_the_last_wins() {
        let mut buf = vec![2, b'a', b'b', 1];
        assert_eq!(take_records(&mut buf), Ok(Some(b"ab".to_vec())));
        assert_eq!(buf, vec![1]);
        buf.push(b'c');
        assert_eq!(take_records(&mut buf), Ok(Some(b"c".to_vec())));
        assert!(buf.is_empty());
        let mut big = vec![65];
        assert_eq!(take_records(&mut big), Err(65));
    }
}

/// What an observation that does not wait reads of a connection's end
/// ([`Supervisor::look_now`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Look {
    /// The bytes received and not read (`FIONREAD`).
    Bytes,
    /// The bytes received and whether the stream has ended (a receive
    /// with `MSG_WAITALL` that does not wait).
    Stream,
    /// The error pending (`SO_ERROR`).
    Error,
}

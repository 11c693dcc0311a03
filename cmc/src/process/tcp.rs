//! TCP as Linux keeps it on loopback, on the world's connections: what a
//! close, a shutdown, a write toward a closed end, a crash, an exit and a
//! DROP do to each end's kernel socket ([`Sock`]), and which listening
//! socket a connect reaches. Every rule here was measured natively, on
//! real loopback sockets in a private network namespace (SEMANTICS,
//! "Connections"; `cmc/tests/process_tcp.rs`).
//!
//! The model's one departure from loopback is the one it has always had:
//! messages travel (DELIVER), where loopback puts them in the peer's
//! buffer at once. What follows them travels in order: a FIN or a reset
//! reaches a read, or a poll, only after every message before it, and
//! arrives apart from them, by its own EOF. A writer whose data meets a
//! closed end sees the reset at once, as the kernel's `sk_err`.
//!
//! The calls (`calls::connections`) and the actions (the supervisor) use
//! these; this module does no I/O and reads no process.

use nix::libc;

use super::world::{Conn, End, Label, Life, ProcessWorld, Side, Sock, VFd};

impl Side {
    /// The other end.
    pub fn other(self) -> Side {
        match self {
            Side::Dialer => Side::Target,
            Side::Target => Side::Dialer,
        }
    }
}

impl Conn {
    /// A reset reaches `side` (`tcp_reset`, then `tcp_done`): ECONNRESET
    /// pending, or EPIPE where the peer's FIN had arrived and this end had
    /// not sent its own (`CLOSE_WAIT`); nothing where both FINs had
    /// passed (the connection was closed already). What has arrived at it
    /// stays readable, before the error. A FIN still on its way counts as
    /// arrived here: it was sent before whatever drew the reset, and
    /// arrives before the reset does.
    pub fn reset(&mut self, side: Side) {
        let s = self.sock_mut(side);
        s.rst = false;
        if s.reset {
            return;
        }
        let closed = s.fin && s.shut & Sock::WR != 0;
        if !closed {
            s.err = if s.fin { libc::EPIPE as u8 } else { libc::ECONNRESET as u8 };
        }
        s.reset = true;
    }

    /// Whether the socket at `side` answers data with a reset: it is
    /// closed, its process gone, or it shut both ways (a FIN sent and
    /// reads shut: data arriving then resets it).
    pub fn refuses_data(&self, side: Side) -> bool {
        match self.end(side) {
            End::Closed | End::Gone => true,
            End::Pending => false,
            End::Open => self.sock(side).shut == Sock::RD | Sock::WR,
        }
    }

    /// Whether a read at `side` ends now, once what has arrived is read:
    /// nothing travels toward it and the peer's FIN has arrived, or a
    /// reset, an error or its own `SHUT_RD` is there.
    pub fn ended(&self, side: Side) -> bool {
        let s = self.sock(side);
        self.queue(side).is_empty() && (s.fin && s.fin_in || s.reset_seen() || s.shut & Sock::RD != 0)
    }

    /// Whether the peer's FIN or reset is on its way to `side` with
    /// nothing before it, so that an EOF brings it: on Linux each arrives
    /// apart from the last message (`tcp_fin`, `tcp_reset` run when the
    /// segment comes), and a read or a poll between the two finds the data
    /// and not the end.
    pub fn end_on_its_way(&self, side: Side) -> bool {
        let s = self.sock(side);
        self.queue(side).is_empty() && (s.fin && !s.fin_in && !self.ended(side) || s.rst)
    }

    /// Whether a write at `side` may come before its peer's close: the
    /// peer's end is closed or gone and the reset (or the FIN) it sent is
    /// still on its way, not seen here (a write then holds the node:
    /// [`super::world::Blocked::WriteNow`]).
    pub fn close_on_its_way(&self, side: Side) -> bool {
        let s = self.sock(side);
        self.end(side.other()).done() && s.shut & Sock::WR == 0 && (s.rst || s.fin && !s.fin_in && !s.reset)
    }

    /// The write at `side` comes after the peer's close: what it sent (a
    /// FIN, a reset) is there for it.
    pub fn close_arrives(&mut self, side: Side) {
        let s = self.sock_mut(side);
        if s.rst {
            s.rst = false;
        } else if s.fin && !s.fin_in {
            s.fin_in = true;
        }
    }

    /// EOF: what is on its way to `side` arrives ([`Conn::end_on_its_way`]),
    /// the FIN first where a reset follows it.
    pub fn end_arrives(&mut self, side: Side) {
        if !self.end_on_its_way(side) {
            return;
        }
        let s = self.sock_mut(side);
        if s.fin && !s.fin_in {
            s.fin_in = true;
        } else {
            s.rst = false;
        }
    }

    /// The peer reset the connection: the socket at `side` is reset at
    /// once for writes (a write fails, as on loopback), and the reset
    /// travels toward its reads and polls, behind what was sent before
    /// it ([`Sock::rst`]), unless the end was reset already.
    pub fn reset_travels(&mut self, side: Side) {
        if !self.sock(side).reset {
            self.reset(side);
            self.sock_mut(side).rst = true;
        }
    }

    /// The events a poll of `side` reports (`tcp_poll`): readable with a
    /// message received or at the end; `POLLRDHUP` once the peer's FIN (or
    /// a reset, or its own `SHUT_RD`) is there; `POLLHUP` when it is shut
    /// both ways or reset; `POLLERR` with an error pending. A write never
    /// waits in the model: always `POLLOUT`.
    pub fn poll_events(&self, side: Side) -> i16 {
        let s = self.sock(side);
        let drained = self.queue(side).is_empty();
        // The end's own SHUT_RD shuts it for reading at once, whatever is
        // on its way (`tcp_poll`: RCV_SHUTDOWN gives EPOLLIN and
        // EPOLLRDHUP); a FIN or a reset, once it has arrived.
        let own_shut = s.shut & Sock::RD != 0;
        let rcv_shut = own_shut || drained && (s.fin && s.fin_in || s.reset_seen());
        let mut ev = libc::POLLOUT | libc::POLLWRNORM;
        if !self.received(side).is_empty() || self.ended(side) || own_shut {
            ev |= libc::POLLIN | libc::POLLRDNORM;
        }
        if rcv_shut {
            ev |= libc::POLLRDHUP;
        }
        if s.reset_seen() || (rcv_shut && s.shut & Sock::WR != 0) {
            ev |= libc::POLLHUP;
        }
        if drained && s.err != 0 && !s.rst {
            ev |= libc::POLLERR;
        }
        ev
    }
}

impl ProcessWorld {
    /// Whether another node could still send something toward end `side`
    /// of `label` (data, a FIN, a reset), besides what is on its way: the
    /// peer's end is another node's, and open (or not yet accepted). A
    /// call that does not wait observes the end at one instant, and on
    /// Linux the peer may have run before it, even to answer what this
    /// node's own step sent (SEMANTICS, "Non-blocking I/O"). Client and
    /// timer connections' far ends are the checker's, which sends nothing
    /// unasked.
    pub fn peer_may_send(&self, label: &Label, side: Side) -> bool {
        let Some(c) = self.conns.get(label) else { return false };
        let peer = match side {
            Side::Target => label.node,
            Side::Dialer => c.target,
        };
        let me = match side {
            Side::Target => c.target,
            Side::Dialer => label.node,
        };
        label.kind == super::world::ConnKind::Node && peer != me && !c.end(side.other()).done()
    }

    /// Whether the peer of `side` may still close (or shut, or its
    /// listener close) before `side`'s next write, in a way no world puts
    /// before the node's step: the peer is another node with its end open
    /// or not yet accepted (`peer_may_send`), `side` is neither reset nor
    /// shut for writing, and either what `side` wrote is unread there
    /// (travelling toward it, or arrived: a close then resets,
    /// `close_end`), or the step has `acted`: given the others something
    /// to react to, or begun at a TIMEOUT, whose later deadlines no world
    /// puts first (`Trail::acted`). On Linux the peer may then close
    /// between two calls of one step of this node (SEMANTICS,
    /// "Non-blocking I/O").
    pub fn peer_may_reset(&self, label: &Label, side: Side, acted: bool) -> bool {
        let Some(c) = self.conns.get(label) else { return false };
        let s = c.sock(side);
        let other = side.other();
        self.peer_may_send(label, side)
            && !s.reset
            && !s.rst
            && s.shut & Sock::WR == 0
            && (acted || !c.queue(other).is_empty() || !c.received(other).is_empty())
    }

    /// Whether a connection could still come to a listening socket of node
    /// `n`, besides those on their way: another node lives (or is down,
    /// and may restart) and could dial, or a client is left for `n`.
    pub fn peer_may_dial(&self, n: u8) -> bool {
        self.nodes[n as usize].clients_left > 0
            || self.nodes.iter().enumerate().any(|(m, w)| m != n as usize && matches!(w.life, Life::Live | Life::Down))
    }

    /// Node `n` closed its end `side` of `label` (`tcp_close`): with data
    /// it had not read (arrived, or travelling toward it), the peer is
    /// reset; otherwise it gets a FIN, after what this end wrote. What was
    /// travelling toward the closed end is lost.
    pub fn close_end(&mut self, label: &Label, side: Side) {
        if let Some(c) = self.conns.get_mut(label) {
            let unread = !c.queue(side).is_empty() || !c.received(side).is_empty();
            let me = *c.sock(side);
            if !me.reset {
                if unread {
                    c.reset_travels(side.other());
                } else if me.shut & Sock::WR == 0 {
                    c.sock_mut(side.other()).fin = true;
                }
            }
            Self::forget_end(c, side, End::Closed);
        }
        self.retire();
    }

    /// `shutdown(fd, how)` of `side` of `label`: `SHUT_WR` sends a FIN
    /// (once); `SHUT_RD` ends reads once what has arrived is read. Returns
    /// the errno of a shutdown of a reset connection (ENOTCONN).
    pub fn shutdown_end(&mut self, label: &Label, side: Side, rd: bool, wr: bool) -> Result<(), i32> {
        let Some(c) = self.conns.get_mut(label) else { return Err(libc::ENOTCONN) };
        if c.sock(side).reset {
            // Seen: reads and polls see the reset from now on.
            c.sock_mut(side).rst = false;
            return Err(libc::ENOTCONN);
        }
        if rd {
            c.sock_mut(side).shut |= Sock::RD;
        }
        if wr && c.sock(side).shut & Sock::WR == 0 {
            c.sock_mut(side).shut |= Sock::WR;
            c.sock_mut(side.other()).fin = true;
        }
        Ok(())
    }

    /// A write of `side` of `label` reached a socket that answers with a
    /// reset ([`Conn::refuses_data`]): the bytes are lost, and both ends
    /// are reset (the writer's next write fails).
    pub fn write_refused(&mut self, label: &Label, side: Side) {
        if let Some(c) = self.conns.get_mut(label) {
            c.reset(side);
            if c.end(side.other()) == End::Open {
                c.reset(side.other());
            }
        }
    }

    /// DROP: the oldest message toward `side` of `label` is lost, and with
    /// it the connection (the manual's FIFO DROP): nothing after it
    /// arrives, and both ends are reset.
    pub fn drop_reset(&mut self, label: &Label, side: Side) {
        if let Some(c) = self.conns.get_mut(label) {
            match side {
                Side::Target => c.to_target.clear(),
                Side::Dialer => c.to_dialer.clear(),
            }
            c.set_split(side, false);
            // A FIN behind the lost message is lost with it: the reset is
            // ECONNRESET, not the EPIPE of a FIN that arrived.
            let s = c.sock_mut(side);
            if s.fin && !s.fin_in {
                s.fin = false;
            }
            c.reset(Side::Target);
            c.reset(Side::Dialer);
        }
    }

    /// Node `n` closed its listening socket `fd`: the connections waiting
    /// at it are reset (their dialers read ECONNRESET once it arrives),
    /// and forgotten.
    pub fn close_listener(&mut self, n: u8, fd: i32) {
        for c in self.conns.values_mut() {
            if c.target == n && c.listener == fd && c.target_end == End::Pending {
                c.reset_travels(Side::Dialer);
                Self::forget_end(c, Side::Target, End::Gone);
            }
        }
        let node = &mut self.nodes[n as usize];
        let conns = &self.conns;
        node.accept_queue.retain(|l| conns.get(l).is_some_and(|c| c.target_end == End::Pending));
        self.retire();
    }

    /// Node `n`'s process is gone. After an exit, the kernel closes each
    /// of its connections as `close` does (a FIN, or a reset if it left
    /// data unread) and its listening sockets (the connections waiting at
    /// them are reset). After a CRASH the machine is gone: each peer reads
    /// what the node wrote and then a reset; what travelled toward the
    /// node is lost.
    pub fn ends_gone(&mut self, n: u8, crashed: bool) {
        let labels: Vec<Label> = self.conns.keys().copied().collect();
        for label in labels {
            let Some(c) = self.conns.get(&label) else { continue };
            let mut mine = Vec::new();
            if Self::dialer_node(&label) == Some(n) {
                mine.push(Side::Dialer);
            }
            if c.target == n {
                mine.push(Side::Target);
            }
            for side in mine {
                let Some(c) = self.conns.get_mut(&label) else { continue };
                match c.end(side) {
                    End::Open if !crashed => {
                        self.close_end(&label, side);
                        if let Some(c) = self.conns.get_mut(&label) {
                            Self::forget_end(c, side, End::Gone);
                        }
                    }
                    End::Open | End::Pending => {
                        if matches!(c.end(side.other()), End::Open | End::Pending) {
                            c.reset_travels(side.other());
                        }
                        Self::forget_end(c, side, End::Gone);
                    }
                    End::Closed | End::Gone => Self::forget_end(c, side, End::Gone),
                }
            }
        }
        self.retire();
    }

    /// The end at `side` has no owner any more (`end`: closed, or gone
    /// with its process): what travelled toward it is lost.
    fn forget_end(c: &mut Conn, side: Side, end: End) {
        match side {
            Side::Dialer => {
                c.dialer_end = end;
                c.to_dialer.clear();
                c.at_dialer.clear();
                c.split_dialer = false;
                c.dialer_sock.rst = false;
                c.dialer_sock.fin_in = false;
            }
            Side::Target => {
                c.target_end = end;
                c.to_target.clear();
                c.at_target.clear();
                c.split_target = false;
                c.target_sock.rst = false;
                c.target_sock.fin_in = false;
            }
        }
    }

    /// The listening socket a connect to `addr`:`port` reaches: its node
    /// and descriptor, bound to that address or to any (0.0.0.0), of a
    /// live node.
    pub fn listener_for(&self, addr: [u8; 4], port: u16) -> Option<(u8, i32)> {
        let mut any = None;
        for (n, node) in self.nodes.iter().enumerate() {
            if node.life != Life::Live {
                continue;
            }
            for (&fd, v) in &node.fds {
                if let VFd::Socket { port: Some(p), listening: true, addr: a, .. } = *v
                    && p == port
                {
                    if a == addr {
                        return Some((n as u8, fd));
                    }
                    if a == [0; 4] {
                        any.get_or_insert((n as u8, fd));
                    }
                }
            }
        }
        any
    }

    /// The listening socket a client of node `n` reaches: the one at
    /// 127.0.0.1, port [`super::PORT_BASE`] + `n`.
    pub fn client_listener(&self, n: u8) -> Option<(u8, i32)> {
        self.listener_for([127, 0, 0, 1], super::PORT_BASE + n as u16)
    }

    /// Whether `addr`:`port` is taken for socket `fd` of node `n`: another
    /// socket of a live node is bound to it, or to any address on it (or
    /// `addr` is any, and another is bound to the port), unless both set
    /// `SO_REUSEADDR` and neither listens. With `listening`, the question
    /// is `listen`'s: whether another socket listens there.
    pub fn port_taken(&self, n: u8, fd: i32, addr: [u8; 4], port: u16, reuse: bool, listening: bool) -> bool {
        self.nodes.iter().enumerate().filter(|(_, node)| node.life == Life::Live).any(|(m, node)| {
            node.fds.iter().any(|(&f, v)| {
                let VFd::Socket { port: Some(p), listening: l, addr: a, reuse: r, .. } = *v else { return false };
                let same = (m as u8, f) == (n, fd);
                let overlap = p == port && (a == addr || a == [0; 4] || addr == [0; 4]);
                !same && overlap && if listening { l } else { !(reuse && r && !l) }
            })
        })
    }

    /// A hash of what node `n` has done that others can see: its reported
    /// record (which a crash clears, but which the properties read), its
    /// durable record, its data directory,
    /// the replies, and,
    /// on each of its connections, what travels toward the other end and
    /// that end's socket (a FIN, a reset), and the connections it has
    /// opened. A call that changes it has an effect outside the process,
    /// and the node's next call is a crash point (issue 27, item 3); a
    /// read, which changes only what is travelling toward the node, is
    /// not one.
    pub fn effects_of(&self, n: u8) -> u64 {
        let node = &self.nodes[n as usize];
        let mut out = Vec::new();
        out.extend_from_slice(&(self.replies.len() as u64).to_le_bytes());
        out.push(node.state.len() as u8);
        out.extend_from_slice(&node.state);
        match &node.durable {
            Some(d) => {
                out.push(1);
                out.push(d.len() as u8);
                out.extend_from_slice(d);
            }
            None => out.push(0),
        }
        node.disk.encode_files(&mut out);
        self.encode_outputs(n, &mut out);
        xxhash_rust::xxh3::xxh3_64(&out)
    }

    /// What each other node has been sent by node `n`, per node: the
    /// messages travelling toward it on their connections, and what `n`
    /// made of its ends (closed, shut, a FIN or a reset sent), summed over
    /// them. A call that changes a node's gives that node something to
    /// react to within `n`'s step (`Trail::acted`). A connect or a listen
    /// alone changes none (a limit: SEMANTICS, "Non-blocking I/O").
    pub fn seen_by_others(&self, n: u8) -> [u64; super::limits::NODES_MAX] {
        let mut sent = [0u64; super::limits::NODES_MAX];
        for (label, c) in self.conns.iter().filter(|(l, c)| Self::involves(n, l, c)) {
            let Some(dialer) = Self::dialer_node(label) else { continue };
            for (side, peer) in [(Side::Dialer, c.target), (Side::Target, dialer)] {
                let mine = match side {
                    Side::Dialer => dialer == n,
                    Side::Target => c.target == n,
                };
                if !mine || peer == n || peer as usize >= sent.len() {
                    continue;
                }
                let other = side.other();
                let ended = c.end(side).done() as u64 + c.sock(side).shut as u64 + c.sock(other).bits() as u64;
                sent[peer as usize] += (c.queue(other).len() as u64) << 16 | ended;
            }
        }
        sent
    }

    /// Node `n`'s connections as its peers see them, into `out`: for each
    /// end of its, what travels toward the other end, its own end's state
    /// and the other end's socket.
    fn encode_outputs(&self, n: u8, out: &mut Vec<u8>) {
        for (label, c) in self.conns.iter().filter(|(l, c)| Self::involves(n, l, c)) {
            out.extend_from_slice(&[label.kind as u8, label.node, label.k]);
            let mine: &[Side] = match (Self::dialer_node(label) == Some(n), c.target == n) {
                (true, true) => &[Side::Dialer, Side::Target],
                (true, false) => &[Side::Dialer],
                _ => &[Side::Target],
            };
            for &side in mine {
                let other = side.other();
                out.extend_from_slice(&(c.queue(other).len() as u64).to_le_bytes());
                out.extend_from_slice(&[c.end(side) as u8, c.sock(other).bits(), c.sock(other).err]);
            }
        }
    }

    /// Every bound socket of every node, into `out`: what a connect, a
    /// bind or a listen of one node reads of the others (part of the
    /// transition cache's key).
    pub fn encode_ports(&self, out: &mut Vec<u8>) {
        for (n, node) in self.nodes.iter().enumerate() {
            for (&fd, v) in &node.fds {
                if let VFd::Socket { port: Some(p), listening, addr, reuse, .. } = *v {
                    out.push(n as u8);
                    out.extend_from_slice(&fd.to_le_bytes());
                    out.extend_from_slice(&p.to_le_bytes());
                    out.extend_from_slice(&addr);
                    out.push(listening as u8 | (reuse as u8) << 1);
                }
            }
        }
        out.push(0xff);
    }
}

//! The process world (DESIGN 6.2): every node's reported state, durable
//! record, what its reads of fd 193 will return, its partial records, liveness and what it is blocked in, its virtual descriptors, every
//! connection's messages in order, the connections waiting to be accepted,
//! the ghost log of client replies, the budgets left, the logical clock and
//! each node's count of random bytes consumed.
//!
//! This module owns the world's data and its canonical encoding; the
//! supervisor edits it as the nodes make calls, and `action` reads it. Every
//! identity in it is keyed by (node, per-node counter), never by the order in
//! which notifications arrived (research, pitfall 5), and every collection is
//! kept sorted, so two worlds are the same state exactly when their
//! encodings are equal.
//!
//! Encoding, in order (integers little endian):
//!
//! 1. budgets left: crashes, drops, timeouts (one byte each); the clock (u32);
//! 2. per node: life (tag, i32 status), blocked-in (tag, fd, and for a
//!    sleep the logical second it ends, u32), clients
//!    left, dials, timer connections, random bytes used (u64), the state
//!    record (length, bytes), the durable record (a presence byte, then
//!    length and bytes), what reads of fd 193 will return in this life,
//!    the partial records written to fd 3 and fd 193 (each a length and
//!    bytes), its virtual descriptors (count, then each as fd and a tagged
//!    kind);
//! 3. connections in label order: a wide count, then each as label (kind,
//!    node, k), target, the two ends' states, the queue toward the target and
//!    the queue toward the dialer (each a count, then length-prefixed
//!    messages);
//! 4. the ghost log: count, then each reply as node, length, bytes.
//!
//! No count, length or descriptor number wraps. Counts and lengths take one
//! byte below 255 and otherwise 255 and then eight bytes; the connection
//! count and descriptor numbers take two bytes below 65,535 and otherwise
//! 65,535 and then eight (a descriptor: four) bytes. Each field says where
//! it ends, so the encoding stays injective. Descriptors have no limit of
//! their own (the kernel's descriptor table has one, which a program may
//! raise): a node may hold 256 of them, or fd 65,540. Everything else is
//! bounded by a limit the supervisor enforces before it enters the world
//! (records, messages and replies of at most 64 bytes, and so at most 65
//! for what fd 193 has left to read and for a partial record, 128 messages
//! in flight, 64 replies, 255 connects, clients and timer connections per
//! node), so it takes the short form; a world with fewer than 255
//! descriptors per node, all below 65,535, is written exactly as when these
//! fields were plain `u8` and `u16`, and its fingerprint did not change.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use crate::world::{Fingerprint, fingerprint};

/// Who opened a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConnKind {
    /// A node dialled another node's port.
    Node = 0,
    /// The checker dialled a node as a client (CLIENT).
    Client = 1,
    /// The checker's synthetic timer connection (TIMEOUT in `accept`).
    Timer = 2,
}

/// A connection's identity: `Node` connections are numbered by their dialer
/// (`node` is the dialer, `k` its count of connects), client and timer
/// connections by the node they reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label {
    /// Who opened it.
    pub kind: ConnKind,
    /// The dialer of a `Node` connection; the node reached by a client or
    /// timer connection.
    pub node: u8,
    /// Its number among that node's connections of this kind, from 0.
    pub k: u8,
}

impl fmt::Display for Label {
    /// `0.2` (node 0's third connect), `c1.0` (first client of node 1),
    /// `t1.0` (first timer connection of node 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ConnKind::Node => write!(f, "{}.{}", self.node, self.k),
            ConnKind::Client => write!(f, "c{}.{}", self.node, self.k),
            ConnKind::Timer => write!(f, "t{}.{}", self.node, self.k),
        }
    }
}

impl std::str::FromStr for Label {
    type Err = ();
    fn from_str(s: &str) -> Result<Label, ()> {
        let (kind, rest) = match s.as_bytes().first() {
            Some(b'c') => (ConnKind::Client, &s[1..]),
            Some(b't') => (ConnKind::Timer, &s[1..]),
            _ => (ConnKind::Node, s),
        };
        let (node, k) = rest.split_once('.').ok_or(())?;
        Ok(Label { kind, node: node.parse().map_err(|_| ())?, k: k.parse().map_err(|_| ())? })
    }
}

/// The state of one end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Not yet accepted (the target end only).
    Pending = 0,
    /// Open: its owner may read and write.
    Open = 1,
    /// Closed by its owner; the owner is still alive.
    Closed = 2,
    /// Its owner's process is gone (exited or crashed), or it never had one
    /// (the checker's end of a timer connection).
    Gone = 3,
    /// Open, and told by an EOF action while it polled that its peer is
    /// gone and nothing more will come: a read returns 0 at once.
    Eof = 4,
}

impl End {
    /// Nothing more will be read at this end.
    pub fn done(self) -> bool {
        matches!(self, End::Closed | End::Gone)
    }
}

/// One connection. Its dialer end belongs to node `label.node` for `Node`
/// connections and to the checker otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conn {
    /// The node dialled, whose listening socket accepts it.
    pub target: u8,
    /// The state of the dialer's end.
    pub dialer_end: End,
    /// The state of the target's end.
    pub target_end: End,
    /// Messages in flight toward the target, oldest first, one per write.
    pub to_target: VecDeque<Vec<u8>>,
    /// Messages in flight toward the dialer, oldest first, one per write.
    pub to_dialer: VecDeque<Vec<u8>>,
    /// Messages delivered to an end while its node polled, not yet read:
    /// the socket's receive buffer. A read takes from here first.
    pub at_target: VecDeque<Vec<u8>>,
    /// The same at the dialer's end.
    pub at_dialer: VecDeque<Vec<u8>>,
    /// Under `stream = true`: the oldest message toward the end is the
    /// rest of one split already, and is not split again.
    pub split_target: bool,
    /// The same toward the dialer.
    pub split_dialer: bool,
}

impl Conn {
    /// A connection with nothing in flight and nothing received.
    pub fn new(target: u8, dialer_end: End, target_end: End) -> Conn {
        Conn {
            target,
            dialer_end,
            target_end,
            to_target: VecDeque::new(),
            to_dialer: VecDeque::new(),
            at_target: VecDeque::new(),
            at_dialer: VecDeque::new(),
            split_target: false,
            split_dialer: false,
        }
    }

    /// The messages in flight toward `side`, oldest first.
    pub fn queue(&self, side: Side) -> &VecDeque<Vec<u8>> {
        match side {
            Side::Target => &self.to_target,
            Side::Dialer => &self.to_dialer,
        }
    }

    /// Whether the oldest message toward `side` was split already.
    pub fn split(&self, side: Side) -> bool {
        match side {
            Side::Target => self.split_target,
            Side::Dialer => self.split_dialer,
        }
    }

    /// Marks the oldest message toward `side` as split already (or not).
    pub fn set_split(&mut self, side: Side, split: bool) {
        match side {
            Side::Target => self.split_target = split,
            Side::Dialer => self.split_dialer = split,
        }
    }

    /// What has arrived at `side` and is not read yet.
    pub fn arrived(&mut self, side: Side) -> &mut VecDeque<Vec<u8>> {
        match side {
            Side::Target => &mut self.at_target,
            Side::Dialer => &mut self.at_dialer,
        }
    }

    /// What has arrived at `side` and is not read yet.
    pub fn at(&self, side: Side) -> &VecDeque<Vec<u8>> {
        match side {
            Side::Target => &self.at_target,
            Side::Dialer => &self.at_dialer,
        }
    }

    /// The state of the end at `side`.
    pub fn end(&self, side: Side) -> End {
        match side {
            Side::Target => self.target_end,
            Side::Dialer => self.dialer_end,
        }
    }
}

/// Which end of a connection a descriptor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The end of whoever connected.
    Dialer = 0,
    /// The end the target accepted.
    Target = 1,
}

/// A descriptor the checker answers for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VFd {
    /// A socket not (yet) connected: bound to `port`, maybe listening.
    Socket {
        /// The port bound, if any.
        port: Option<u16>,
        /// Whether `listen` was called on it.
        listening: bool,
    },
    /// One end of a connection.
    Conn {
        /// The connection.
        label: Label,
        /// Which end.
        side: Side,
    },
    /// `/dev/urandom` and its kin: reads draw from the node's random stream.
    Random,
    /// An epoll instance; what it watches is the node's `epolls` entry.
    Epoll,
    /// A timerfd; its setting is the node's `timers` entry.
    Timer,
    /// A file of the node's data directory, open at `offset`; `mode` bits:
    /// 1 readable, 2 writable, 4 appending, 8 every write durable
    /// (`O_SYNC`, `O_DSYNC`).
    File {
        /// The file, by its number in [`Disk::files`].
        inode: u32,
        /// Where the next read or write starts, in bytes.
        offset: u32,
        /// The mode bits above.
        mode: u8,
    },
    /// The data directory itself (to `fsync` its names, or list them:
    /// `pos` entries listed so far).
    Dir {
        /// Entries listed so far.
        pos: u32,
    },
}

/// One change of a node's data directory not yet durable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiskOp {
    /// Bytes written to file `inode` at `offset`.
    Write {
        /// The file.
        inode: u32,
        /// Where the bytes start, in bytes.
        offset: u32,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// File `inode` cut, or grown with zeros, to `len` bytes.
    Truncate {
        /// The file.
        inode: u32,
        /// Its new length, in bytes.
        len: u32,
    },
    /// Name `name` made to name file `inode` (a create).
    Link {
        /// The name.
        name: Vec<u8>,
        /// The file.
        inode: u32,
    },
    /// Name `name` removed.
    Unlink {
        /// The name.
        name: Vec<u8>,
    },
    /// Name `from` renamed `to`, atomically (what `to` named is gone).
    Rename {
        /// The old name.
        from: Vec<u8>,
        /// The new name.
        to: Vec<u8>,
    },
}

/// A node's data directory (model key `data_dir`): flat, files only. What
/// a crash keeps is `files` and `names`; what the node has changed since
/// and not made durable is `pending`, oldest first, and the node sees both
/// (`current`). `fsync` of a file makes its writes durable, `fsync` of the
/// directory its names; a crash keeps a prefix of the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disk {
    /// Durable files' contents, by inode.
    pub files: BTreeMap<u32, Vec<u8>>,
    /// Durable names, each naming an inode.
    pub names: BTreeMap<Vec<u8>, u32>,
    /// Changes not yet durable, oldest first.
    pub pending: Vec<DiskOp>,
}

impl Disk {
    /// Whether the directory has no file, no name and no pending change.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.names.is_empty() && self.pending.is_empty()
    }

    /// The inodes something still reaches: a durable name, a pending
    /// change, or one of `open` (the node's open files).
    fn reached(&self, open: &BTreeSet<u32>) -> BTreeSet<u32> {
        let mut reached: BTreeSet<u32> = self.names.values().copied().collect();
        reached.extend(open);
        for op in &self.pending {
            match op {
                DiskOp::Write { inode, .. } | DiskOp::Truncate { inode, .. } | DiskOp::Link { inode, .. } => {
                    reached.insert(*inode);
                }
                DiskOp::Unlink { .. } | DiskOp::Rename { .. } => {}
            }
        }
        reached
    }

    /// Forgets the files nothing reaches any more (`open`: the node's open
    /// files), so that equal directories are equal bytes.
    pub fn collect(&mut self, open: &BTreeSet<u32>) {
        let reached = self.reached(open);
        self.files.retain(|inode, _| reached.contains(inode));
    }

    /// The number for a new file: the lowest nothing reaches, so that it
    /// does not depend on how many files came and went before.
    pub fn free_inode(&self, open: &BTreeSet<u32>) -> u32 {
        let reached = self.reached(open);
        (0..).find(|i| !reached.contains(i) && !self.files.contains_key(i)).unwrap_or(0)
    }

    /// Applies `op` to a view of the directory.
    pub fn apply(files: &mut BTreeMap<u32, Vec<u8>>, names: &mut BTreeMap<Vec<u8>, u32>, op: &DiskOp) {
        match op {
            DiskOp::Write { inode, offset, bytes } => {
                let file = files.entry(*inode).or_default();
                let end = *offset as usize + bytes.len();
                if file.len() < end {
                    file.resize(end, 0);
                }
                file[*offset as usize..end].copy_from_slice(bytes);
            }
            DiskOp::Truncate { inode, len } => files.entry(*inode).or_default().resize(*len as usize, 0),
            DiskOp::Link { name, inode } => {
                names.insert(name.clone(), *inode);
            }
            DiskOp::Unlink { name } => {
                names.remove(name);
            }
            DiskOp::Rename { from, to } => {
                if let Some(inode) = names.remove(from) {
                    names.insert(to.clone(), inode);
                }
            }
        }
    }

    /// What the node sees: the durable directory with every change since.
    pub fn current(&self) -> (BTreeMap<u32, Vec<u8>>, BTreeMap<Vec<u8>, u32>) {
        let (mut files, mut names) = (self.files.clone(), self.names.clone());
        for op in &self.pending {
            Self::apply(&mut files, &mut names, op);
        }
        (files, names)
    }

    /// Makes the pending changes that `durable` selects durable, in order,
    /// and keeps the others pending.
    fn sync(&mut self, durable: impl Fn(&DiskOp) -> bool) {
        let pending = std::mem::take(&mut self.pending);
        for op in pending {
            if durable(&op) {
                Self::apply(&mut self.files, &mut self.names, &op);
            } else {
                self.pending.push(op);
            }
        }
    }

    /// `fsync` of file `inode`: its contents are durable.
    pub fn sync_file(&mut self, inode: u32) {
        self.sync(|op| matches!(op, DiskOp::Write { inode: i, .. } | DiskOp::Truncate { inode: i, .. } if *i == inode));
    }

    /// `syncfs`: every change is durable.
    pub fn sync_all(&mut self) {
        self.sync(|_| true);
    }

    /// `fsync` of the directory: its names are durable.
    pub fn sync_dir(&mut self) {
        self.sync(|op| matches!(op, DiskOp::Link { .. } | DiskOp::Unlink { .. } | DiskOp::Rename { .. }));
    }

    /// A crash that let the first `keep` pending changes reach the disk:
    /// the rest are lost, and a file no name reaches is gone.
    pub fn crash(&mut self, keep: usize) {
        let pending = std::mem::take(&mut self.pending);
        for op in pending.iter().take(keep) {
            Self::apply(&mut self.files, &mut self.names, op);
        }
        let named: BTreeSet<u32> = self.names.values().copied().collect();
        self.files.retain(|inode, _| named.contains(inode));
    }

    fn encode(&self, out: &mut Vec<u8>) {
        push_count(out, self.names.len());
        for (name, inode) in &self.names {
            push_bytes(out, name);
            out.extend_from_slice(&inode.to_le_bytes());
        }
        push_count(out, self.files.len());
        for (inode, bytes) in &self.files {
            out.extend_from_slice(&inode.to_le_bytes());
            push_bytes(out, bytes);
        }
        push_count(out, self.pending.len());
        for op in &self.pending {
            match op {
                DiskOp::Write { inode, offset, bytes } => {
                    out.push(0);
                    out.extend_from_slice(&inode.to_le_bytes());
                    out.extend_from_slice(&offset.to_le_bytes());
                    push_bytes(out, bytes);
                }
                DiskOp::Truncate { inode, len } => {
                    out.push(1);
                    out.extend_from_slice(&inode.to_le_bytes());
                    out.extend_from_slice(&len.to_le_bytes());
                }
                DiskOp::Link { name, inode } => {
                    out.push(2);
                    push_bytes(out, name);
                    out.extend_from_slice(&inode.to_le_bytes());
                }
                DiskOp::Unlink { name } => {
                    out.push(3);
                    push_bytes(out, name);
                }
                DiskOp::Rename { from, to } => {
                    out.push(4);
                    push_bytes(out, from);
                    push_bytes(out, to);
                }
            }
        }
    }
}

/// A timerfd's setting, in logical seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerFd {
    /// When it next expires (`None`: disarmed). It has expired once the
    /// clock reaches it, whoever moved the clock.
    pub deadline: Option<u32>,
    /// Seconds between expirations after the first (0: once).
    pub interval: u32,
    /// What `CLOCK_REALTIME` and its kin add to the logical clock, for an
    /// absolute setting: 0 for the monotonic clocks.
    pub realtime: bool,
}

impl TimerFd {
    /// Whether it has expired at logical second `clock`.
    pub fn expired(&self, clock: u32) -> bool {
        self.deadline.is_some_and(|d| d <= clock)
    }
}

/// What became of a node's process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    /// Running, or blocked in a call.
    Live,
    /// Exited with this status.
    Exited(i32),
    /// Killed by a signal it caused (not by a CRASH action).
    Signaled(i32),
}

/// The modelled call a node is blocked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// Running (never at quiescence) or exited.
    Nothing,
    /// `accept` on a listening socket with no connection ready.
    Accept {
        /// The listening socket.
        fd: i32,
    },
    /// A read of a connection with nothing received.
    Read {
        /// The connection's descriptor.
        fd: i32,
    },
    /// `nanosleep`, `clock_nanosleep` (and so `sleep`, `usleep`): asleep
    /// until logical second `until`; TIMEOUT wakes it.
    Sleep {
        /// The logical second it wakes at.
        until: u32,
    },
    /// `pause`: only a signal would end it, and none is modelled, so no
    /// action does.
    Pause,
    /// `poll` or `ppoll` with nothing ready, waiting for what the node's
    /// `watch` names, and with a timeout until logical second `until`
    /// (`None`: none, so TIMEOUT ends it only to expire a watched timer).
    Poll {
        /// The logical second its timeout ends at, if it has one.
        until: Option<u32>,
    },
    /// A read of timerfd `fd`, armed and not expired: TIMEOUT expires it.
    Timer {
        /// The timerfd.
        fd: i32,
    },
}

/// One node's part of the world.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeWorld {
    /// Whether its process lives, and how it ended if not.
    pub life: Life,
    /// The modelled call it waits in.
    pub blocked: Blocked,
    /// Client connections it has yet to receive (CLIENT).
    pub clients_left: u8,
    /// Connects made so far: the `k` of its next connection.
    pub dials: u8,
    /// Timer connections made so far at this node.
    pub timer_conns: u8,
    /// Bytes drawn from its random stream so far, in every life.
    pub random_used: u64,
    /// The last record written to fd 3 (empty until the first).
    pub state: Vec<u8>,
    /// The last record written to fd 193, kept across crashes.
    pub durable: Option<Vec<u8>>,
    /// What reads of fd 193 return in this life, from where the node has
    /// read to: the durable record when the life began (length byte, then
    /// bytes), empty on a first start and once read.
    pub recovery: Vec<u8>,
    /// What the node has written to fd 3 and fd 193 past its last whole
    /// record: the start of its next one.
    pub state_in: Vec<u8>,
    /// The same for fd 193.
    pub durable_in: Vec<u8>,
    /// The descriptors the checker answers for, by number.
    pub fds: BTreeMap<i32, VFd>,
    /// Descriptors the checker owns that are non-blocking (`O_NONBLOCK`).
    pub nonblock: BTreeSet<i32>,
    /// Connections an ACCEPT made ready while the node polled its
    /// listening socket, oldest first: what `accept` returns next.
    pub accept_queue: Vec<Label>,
    /// While the node is blocked in a poll: each descriptor it watches
    /// and the events it asks for (`POLLIN`, `POLLOUT`, ...).
    pub watch: BTreeMap<i32, i16>,
    /// Each epoll instance's interest list: per descriptor, the events
    /// (`EPOLLIN`, ...) and the data `epoll_wait` returns with them.
    pub epolls: BTreeMap<i32, BTreeMap<i32, (u32, u64)>>,
    /// Each timerfd's setting.
    pub timers: BTreeMap<i32, TimerFd>,
    /// While the node waits in a `recv` with `MSG_WAITALL`: the bytes of
    /// it received so far, written into its buffer already. The bytes, not
    /// only their count: the node's memory holds them, and two worlds that
    /// differ only in them are two states.
    pub waitall: Vec<u8>,
    /// Its data directory, kept across crashes as a disk is.
    pub disk: Disk,
}

impl NodeWorld {
    /// The data directory's files the node has open.
    pub fn open_files(&self) -> BTreeSet<u32> {
        self.fds
            .values()
            .filter_map(|v| match v {
                VFd::File { inode, .. } => Some(*inode),
                _ => None,
            })
            .collect()
    }
}

/// One global state of the process front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessWorld {
    /// Crashes left on this path.
    pub crashes: u8,
    /// Drops left on this path.
    pub drops: u8,
    /// Timeouts left on this path.
    pub timeouts: u8,
    /// Logical seconds: one per TIMEOUT.
    pub clock: u32,
    /// The run's `stream` setting (a read may get part of a message, or
    /// two merged): a constant of the run, like the node count, so not in
    /// the encoding.
    pub stream: bool,
    /// Every node, in node order.
    pub nodes: Vec<NodeWorld>,
    /// Every connection, in label order.
    pub conns: BTreeMap<Label, Conn>,
    /// The ghost log: (node, bytes written on a client connection).
    pub replies: Vec<(u8, Vec<u8>)>,
}

impl ProcessWorld {
    /// A world before any node has started.
    pub fn new(nodes: u8, budgets: &super::Budgets) -> ProcessWorld {
        let node = NodeWorld {
            life: Life::Live,
            blocked: Blocked::Nothing,
            clients_left: budgets.clients,
            dials: 0,
            timer_conns: 0,
            random_used: 0,
            state: Vec::new(),
            durable: None,
            recovery: Vec::new(),
            state_in: Vec::new(),
            durable_in: Vec::new(),
            fds: BTreeMap::new(),
            nonblock: BTreeSet::new(),
            accept_queue: Vec::new(),
            watch: BTreeMap::new(),
            epolls: BTreeMap::new(),
            timers: BTreeMap::new(),
            waitall: Vec::new(),
            disk: Disk::default(),
        };
        ProcessWorld {
            crashes: budgets.crashes,
            drops: budgets.drops,
            timeouts: budgets.timeouts,
            clock: 0,
            stream: false,
            nodes: vec![node; nodes as usize],
            conns: BTreeMap::new(),
            replies: Vec::new(),
        }
    }

    /// When node `n`'s wait ends by itself, in logical seconds: the end of
    /// its sleep, of its poll's timeout or of the earliest armed timer its
    /// poll watches, or its timer's expiry; `None` for a wait only an
    /// action ends (a read, an accept, a poll without either).
    pub fn deadline(&self, n: u8) -> Option<u32> {
        let node = &self.nodes[n as usize];
        let armed = |fd: &i32| node.timers.get(fd).and_then(|t| t.deadline);
        match node.blocked {
            Blocked::Sleep { until } => Some(until),
            Blocked::Poll { until } => until.into_iter().chain(node.watch.keys().filter_map(armed)).min(),
            Blocked::Timer { fd } => armed(&fd),
            _ => None,
        }
    }

    /// Whether node `n`'s wait has ended already: the clock passed its
    /// deadline (another node's TIMEOUT moved it), and only its waking is
    /// left.
    pub fn overdue(&self, n: u8) -> bool {
        self.deadline(n).is_some_and(|d| d <= self.clock)
    }

    /// Messages in flight on every connection.
    pub fn in_flight(&self) -> usize {
        // Received and not read yet is still a message the world holds.
        self.conns.values().map(|c| c.to_target.len() + c.to_dialer.len() + c.at_target.len() + c.at_dialer.len()).sum()
    }

    /// The node owning the dialer end of `label`, if a node does.
    pub fn dialer_node(label: &Label) -> Option<u8> {
        (label.kind == ConnKind::Node).then_some(label.node)
    }

    /// The connection `fd` of node `n` is an end of, and which end.
    pub fn conn_of(&self, n: u8, fd: i32) -> Option<(Label, Side)> {
        match self.nodes[n as usize].fds.get(&fd) {
            Some(VFd::Conn { label, side }) => Some((*label, *side)),
            _ => None,
        }
    }

    /// The queue toward `side` of connection `label`.
    pub fn queue_toward(&mut self, label: &Label, side: Side) -> Option<&mut VecDeque<Vec<u8>>> {
        let c = self.conns.get_mut(label)?;
        Some(match side {
            Side::Target => &mut c.to_target,
            Side::Dialer => &mut c.to_dialer,
        })
    }

    /// The far end of `side` has gone (exited or crashed, or never had a
    /// process): EOF may be delivered once the connection is drained.
    pub fn peer_gone(&self, label: &Label, side: Side) -> bool {
        let Some(c) = self.conns.get(label) else { return true };
        match side {
            Side::Target => c.dialer_end == End::Gone,
            Side::Dialer => c.target_end == End::Gone,
        }
    }

    /// Removes connections nobody can read any more. A client connection's
    /// checker end never reads, so it goes with its node's end.
    pub fn retire(&mut self) {
        self.conns.retain(|label, c| {
            let dialer_done = label.kind == ConnKind::Client || c.dialer_end.done();
            !(dialer_done && c.target_end.done())
        });
    }

    /// Node `n` closed its end `side` of `label`: what was travelling toward
    /// that end can never be read.
    pub fn close_end(&mut self, label: &Label, side: Side) {
        if let Some(c) = self.conns.get_mut(label) {
            match side {
                Side::Dialer => {
                    c.dialer_end = End::Closed;
                    c.to_dialer.clear();
                    c.at_dialer.clear();
                    c.split_dialer = false;
                }
                Side::Target => {
                    c.target_end = End::Closed;
                    c.to_target.clear();
                    c.at_target.clear();
                    c.split_target = false;
                }
            }
        }
        self.retire();
    }

    /// Node `n`'s process is gone: every end it owned is gone, connections
    /// waiting at it are refused, its descriptors and blocked call vanish.
    /// After an exit, what it wrote before is still delivered (a closing
    /// socket sends its data, then EOF); after a crash (the machine died) it
    /// is lost with everything else in flight to and from the node, as the
    /// in-process engine's CRASH empties the node's channels.
    pub fn node_gone(&mut self, n: u8, crashed: bool) {
        for (label, c) in self.conns.iter_mut() {
            if Self::dialer_node(label) == Some(n) {
                c.dialer_end = End::Gone;
                c.to_dialer.clear();
                c.at_dialer.clear();
                c.split_dialer = false;
                if crashed {
                    c.to_target.clear();
                    c.split_target = false;
                }
            }
            if c.target == n {
                c.target_end = End::Gone;
                c.to_target.clear();
                c.at_target.clear();
                c.split_target = false;
                if crashed {
                    c.to_dialer.clear();
                    c.split_dialer = false;
                }
            }
        }
        self.retire();
        let node = &mut self.nodes[n as usize];
        node.fds.clear();
        node.nonblock.clear();
        node.accept_queue.clear();
        node.watch.clear();
        node.epolls.clear();
        node.timers.clear();
        node.waitall.clear();
        node.blocked = Blocked::Nothing;
        // A record half written is not written; a new life reads fd 193
        // afresh.
        node.recovery.clear();
        node.state_in.clear();
        node.durable_in.clear();
    }

    /// The canonical encoding (see the module doc), into `out` (cleared).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&[self.crashes, self.drops, self.timeouts]);
        out.extend_from_slice(&self.clock.to_le_bytes());
        for n in 0..self.nodes.len() {
            self.push_node(n, out);
        }
        push_wide_count(out, self.conns.len());
        for (label, c) in &self.conns {
            push_conn(out, label, c);
        }
        push_count(out, self.replies.len());
        for (n, r) in &self.replies {
            out.push(*n);
            push_bytes(out, r);
        }
    }

    /// Node `n`'s part of the encoding, into `out` (cleared): what
    /// determines its process at quiescence, the key of its snapshots.
    pub fn encode_node(&self, n: u8, out: &mut Vec<u8>) {
        out.clear();
        out.push(n);
        self.push_node(n as usize, out);
    }

    /// Whether connection `label` has an end at node `n` (a connection it
    /// dialled, or one to it: client and timer connections included).
    pub fn involves(n: u8, label: &Label, conn: &Conn) -> bool {
        Self::dialer_node(label) == Some(n) || conn.target == n
    }

    /// Everything a run of node `n` can read of the world, into `out`
    /// (cleared): its own part ([`ProcessWorld::encode_node`]), the clock,
    /// every node's life (a connect to a node that is gone is gone at
    /// once) and every connection with an end at `n`, whole. What else a
    /// run reads are two totals checked against limits (messages in flight,
    /// replies), which the transition cache checks itself. The key of the
    /// transition cache (`transitions`).
    pub fn encode_local(&self, n: u8, out: &mut Vec<u8>) {
        self.encode_node(n, out);
        out.extend_from_slice(&self.clock.to_le_bytes());
        for node in &self.nodes {
            out.push(match node.life {
                Life::Live => 0,
                Life::Exited(_) => 1,
                Life::Signaled(_) => 2,
            });
        }
        for (label, c) in self.conns.iter().filter(|(l, c)| Self::involves(n, l, c)) {
            push_conn(out, label, c);
        }
    }

    fn push_node(&self, n: usize, out: &mut Vec<u8>) {
        let node = &self.nodes[n];
        let (tag, status) = match node.life {
            Life::Live => (0u8, 0),
            Life::Exited(c) => (1, c),
            Life::Signaled(s) => (2, s),
        };
        // Bit 7: the node has the fields of polling and non-blocking I/O,
        // written after its descriptors (a world without them is written
        // as before they existed).
        let extended = !node.nonblock.is_empty()
            || !node.accept_queue.is_empty()
            || !node.watch.is_empty()
            || !node.epolls.is_empty()
            || !node.timers.is_empty()
            || !node.waitall.is_empty()
            || !node.disk.is_empty();
        out.push(tag | (extended as u8) << 7);
        out.extend_from_slice(&status.to_le_bytes());
        let (tag, fd) = match node.blocked {
            Blocked::Nothing => (0u8, 0),
            Blocked::Accept { fd } => (1, fd),
            Blocked::Read { fd } => (2, fd),
            Blocked::Sleep { .. } => (3, 0),
            Blocked::Pause => (4, 0),
            Blocked::Poll { .. } => (5, 0),
            Blocked::Timer { fd } => (6, fd),
        };
        out.push(tag);
        push_fd(out, fd);
        match node.blocked {
            Blocked::Sleep { until } => out.extend_from_slice(&until.to_le_bytes()),
            Blocked::Poll { until: None } => out.push(0),
            Blocked::Poll { until: Some(until) } => {
                out.push(1);
                out.extend_from_slice(&until.to_le_bytes());
            }
            _ => {}
        }
        out.extend_from_slice(&[node.clients_left, node.dials, node.timer_conns]);
        out.extend_from_slice(&node.random_used.to_le_bytes());
        push_bytes(out, &node.state);
        match &node.durable {
            None => out.push(0),
            Some(d) => {
                out.push(1);
                push_bytes(out, d);
            }
        }
        push_bytes(out, &node.recovery);
        push_bytes(out, &node.state_in);
        push_bytes(out, &node.durable_in);
        push_count(out, node.fds.len());
        for (&fd, v) in &node.fds {
            push_fd(out, fd);
            match *v {
                VFd::Socket { port, listening } => {
                    out.push(0);
                    out.extend_from_slice(&port.unwrap_or(0).to_le_bytes());
                    out.push(port.is_some() as u8 | (listening as u8) << 1);
                }
                VFd::Conn { label, side } => {
                    out.push(1);
                    push_label(out, &label);
                    out.push(side as u8);
                }
                VFd::Random => out.push(2),
                VFd::Epoll => out.push(3),
                VFd::Timer => out.push(4),
                VFd::File { inode, offset, mode } => {
                    out.push(5);
                    out.extend_from_slice(&inode.to_le_bytes());
                    out.extend_from_slice(&offset.to_le_bytes());
                    out.push(mode);
                }
                VFd::Dir { pos } => {
                    out.push(6);
                    out.extend_from_slice(&pos.to_le_bytes());
                }
            }
        }
        if extended {
            push_count(out, node.nonblock.len());
            for &fd in &node.nonblock {
                push_fd(out, fd);
            }
            push_count(out, node.accept_queue.len());
            for label in &node.accept_queue {
                push_label(out, label);
            }
            push_count(out, node.watch.len());
            for (&fd, &events) in &node.watch {
                push_fd(out, fd);
                out.extend_from_slice(&events.to_le_bytes());
            }
            push_count(out, node.epolls.len());
            for (&epfd, interest) in &node.epolls {
                push_fd(out, epfd);
                push_count(out, interest.len());
                for (&fd, &(events, data)) in interest {
                    push_fd(out, fd);
                    out.extend_from_slice(&events.to_le_bytes());
                    out.extend_from_slice(&data.to_le_bytes());
                }
            }
            push_count(out, node.timers.len());
            for (&fd, t) in &node.timers {
                push_fd(out, fd);
                match t.deadline {
                    None => out.push(t.realtime as u8),
                    Some(d) => {
                        out.push(2 | t.realtime as u8);
                        out.extend_from_slice(&d.to_le_bytes());
                    }
                }
                out.extend_from_slice(&t.interval.to_le_bytes());
            }
            push_bytes(out, &node.waitall);
            node.disk.encode(out);
        }
    }

    /// The 128-bit xxh3 fingerprint of the encoding; `buf` is scratch.
    pub fn fingerprint(&self, buf: &mut Vec<u8>) -> Fingerprint {
        self.encode(buf);
        fingerprint(buf)
    }
}

/// A length, then the bytes. Every record, message and reply is at most
/// 64 bytes, and a recovery record or a partial one at most 65 (the
/// supervisor enforces the limits before anything enters the world), so
/// its length takes one byte; a longer one would not wrap.
fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    push_count(out, b.len());
    out.extend_from_slice(b);
}

/// A count or length: one byte below 255, else 255 and then eight bytes.
fn push_count(out: &mut Vec<u8>, n: usize) {
    match u8::try_from(n) {
        Ok(short) if short < u8::MAX => out.push(short),
        _ => {
            out.push(u8::MAX);
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
    }
}

/// A count that may pass 254: two bytes below 65,535, else 65,535 and then
/// eight bytes.
fn push_wide_count(out: &mut Vec<u8>, n: usize) {
    match u16::try_from(n) {
        Ok(short) if short < u16::MAX => out.extend_from_slice(&short.to_le_bytes()),
        _ => {
            out.extend_from_slice(&u16::MAX.to_le_bytes());
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
    }
}

/// A descriptor number: two bytes from 0 to 65,534, else 65,535 and then
/// the number's four bytes.
fn push_fd(out: &mut Vec<u8>, fd: i32) {
    match u16::try_from(fd) {
        Ok(short) if short < u16::MAX => out.extend_from_slice(&short.to_le_bytes()),
        _ => {
            out.extend_from_slice(&u16::MAX.to_le_bytes());
            out.extend_from_slice(&fd.to_le_bytes());
        }
    }
}

/// A connection: its label, target, the two ends' states, then the queue
/// toward the target and the queue toward the dialer.
/// Bit 7 of an end's state says it has received messages not read yet,
/// written after both queues (the target's first); bit 6 that the oldest
/// message toward it is the rest of a split.
fn push_conn(out: &mut Vec<u8>, label: &Label, c: &Conn) {
    push_label(out, label);
    let flag = |q: &VecDeque<Vec<u8>>| (!q.is_empty() as u8) << 7;
    out.extend_from_slice(&[
        c.target,
        c.dialer_end as u8 | flag(&c.at_dialer) | (c.split_dialer as u8) << 6,
        c.target_end as u8 | flag(&c.at_target) | (c.split_target as u8) << 6,
    ]);
    for q in [&c.to_target, &c.to_dialer] {
        push_queue(out, q);
    }
    for q in [&c.at_target, &c.at_dialer] {
        if !q.is_empty() {
            push_queue(out, q);
        }
    }
}

fn push_queue(out: &mut Vec<u8>, q: &VecDeque<Vec<u8>>) {
    push_count(out, q.len());
    for m in q {
        push_bytes(out, m);
    }
}

fn push_label(out: &mut Vec<u8>, l: &Label) {
    out.extend_from_slice(&[l.kind as u8, l.node, l.k]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_node() -> ProcessWorld {
        ProcessWorld::new(1, &crate::process::Budgets::default())
    }

    fn bytes(w: &ProcessWorld) -> Vec<u8> {
        let mut out = Vec::new();
        w.encode(&mut out);
        out
    }

    /// Issue 10, 1g: the descriptor count was one byte, so a node with 256
    /// descriptors wrote the count of a node with none, and the encoding no
    /// longer said where its descriptors end. Two worlds that differ only in
    /// their descriptors must differ at the count.
    #[test]
    fn the_one_byte_descriptor_count_does_not_wrap() {
        let none = one_node();
        let mut many = one_node();
        for fd in 0..256 {
            many.nodes[0].fds.insert(1000 + fd, VFd::Random);
        }
        let (a, b) = (bytes(&none), bytes(&many));
        let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
        // Budgets and clock (7), life (5), blocked (3), counters (3),
        // random bytes used (8), the empty state (1), no durable record (1),
        // nothing to recover nor partly written (3).
        let count_at = 7 + 5 + 3 + 3 + 8 + 1 + 1 + 3;
        assert_eq!(first_difference, Some(count_at), "{:?}\n{:?}", &a[..count_at + 4], &b[..count_at + 4]);
    }

    /// The counts the limits bound take the same wide form past them: the
    /// encoding does not rely on the supervisor to stay injective.
    #[test]
    fn queue_and_reply_counts_past_their_limits_do_not_wrap() {
        let first_difference = |a: &ProcessWorld, b: &ProcessWorld| {
            let (a, b) = (bytes(a), bytes(b));
            a.iter().zip(&b).position(|(x, y)| x != y)
        };
        // The node (31 bytes) and its descriptor count.
        let node_end = 31 + 1;
        let mut replies = one_node();
        replies.replies = vec![(0, Vec::new()); 256];
        assert_eq!(first_difference(&one_node(), &replies), Some(node_end + 2), "after the connection count");
        let conn = |messages: usize| {
            let mut w = one_node();
            let to_target = vec![Vec::new(); messages].into();
            let c = Conn { to_target, ..Conn::new(0, End::Open, End::Open) };
            w.conns.insert(Label { kind: ConnKind::Node, node: 0, k: 0 }, c);
            w
        };
        // The connection count, its label, target and ends.
        assert_eq!(first_difference(&conn(0), &conn(256)), Some(node_end + 2 + 6), "at the queue's count");
    }

    /// What polling and non-blocking I/O add to a world is in its bytes:
    /// each of these worlds is its own state.
    #[test]
    fn received_messages_and_what_a_node_polls_are_in_the_encoding() {
        let label = Label { kind: ConnKind::Node, node: 0, k: 0 };
        let with_conn = |f: &dyn Fn(&mut Conn)| {
            let mut w = one_node();
            let mut c = Conn::new(0, End::Open, End::Open);
            f(&mut c);
            w.conns.insert(label, c);
            w
        };
        let with_node = |f: &dyn Fn(&mut NodeWorld)| {
            let mut w = one_node();
            f(&mut w.nodes[0]);
            w
        };
        let worlds = [
            one_node(),
            with_conn(&|_| {}),
            with_conn(&|c| c.to_target.push_back(b"m".to_vec())),
            with_conn(&|c| c.at_target.push_back(b"m".to_vec())),
            with_conn(&|c| c.at_dialer.push_back(b"m".to_vec())),
            with_conn(&|c| c.target_end = End::Eof),
            with_node(&|n| {
                n.nonblock.insert(4);
            }),
            with_node(&|n| n.accept_queue.push(label)),
            with_node(&|n| {
                n.watch.insert(4, 1);
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::new());
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::from([(5, (1, 0))]));
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::from([(5, (1, 7))]));
            }),
            with_node(&|n| n.blocked = Blocked::Poll { until: None }),
            with_node(&|n| n.blocked = Blocked::Poll { until: Some(0) }),
            with_node(&|n| n.blocked = Blocked::Sleep { until: 0 }),
            with_node(&|n| n.blocked = Blocked::Pause),
            with_node(&|n| n.blocked = Blocked::Timer { fd: 4 }),
            with_node(&|n| {
                n.timers.insert(4, TimerFd { deadline: None, interval: 0, realtime: false });
            }),
            with_node(&|n| {
                n.timers.insert(4, TimerFd { deadline: Some(0), interval: 0, realtime: false });
            }),
            with_node(&|n| {
                n.timers.insert(4, TimerFd { deadline: Some(0), interval: 1, realtime: false });
            }),
            with_node(&|n| {
                n.timers.insert(4, TimerFd { deadline: None, interval: 0, realtime: true });
            }),
            with_node(&|n| n.waitall = b"ab".to_vec()),
            with_node(&|n| n.waitall = b"cd".to_vec()),
            with_conn(&|c| c.split_target = true),
        ];
        let mut buf = Vec::new();
        let mut seen: Vec<_> = worlds.iter().map(|w| w.fingerprint(&mut buf)).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), worlds.len());
        // A world without any of them is written as before they existed:
        // budgets and clock (7), the node (25), no connection (2), no
        // reply (1).
        assert_eq!(bytes(&one_node()).len(), 35);
    }

    /// Issue 10, 1g: descriptor numbers were written as two bytes, so fd
    /// 65,540 (a node may raise its descriptor limit) was fd 4, in a node's
    /// table and in the call it is blocked in.
    #[test]
    fn descriptor_numbers_past_two_bytes_do_not_wrap() {
        let world = |fd: i32| {
            let mut w = one_node();
            w.nodes[0].fds.insert(fd, VFd::Random);
            w
        };
        let blocked = |fd: i32| {
            let mut w = one_node();
            w.nodes[0].blocked = Blocked::Read { fd };
            w
        };
        let mut buf = Vec::new();
        assert_ne!(world(4).fingerprint(&mut buf), world(65_540).fingerprint(&mut buf));
        assert_ne!(blocked(4).fingerprint(&mut buf), blocked(65_540).fingerprint(&mut buf));
        assert_ne!(world(-1).fingerprint(&mut buf), world(65_535).fingerprint(&mut buf));
    }
}

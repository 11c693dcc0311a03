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
//! 1. budgets left: crashes, drops, timeouts (one byte each); the clock
//!    with the reads of it (`ProcessWorld::now_ns`, u64 nanoseconds);
//! 2. per node: life (tag, i32 status, and where the tag's bit 4 says so
//!    its lives before this one, a byte, and where bit 3 does its clock
//!    reads in this life, u32), blocked-in (tag, fd, and for a
//!    sleep, or a read or an accept with a receive timeout, the logical
//!    millisecond it ends, u64), clients
//!    left, dials, timer connections, random bytes used (u64), the state
//!    record (length, bytes), the durable record (a presence byte, then
//!    length and bytes), what reads of fd 193 will return in this life,
//!    the partial records written to fd 3 and fd 193 (each a length and
//!    bytes), its virtual descriptors (count, then each as fd and a tagged
//!    kind), when it has any (bit 6 of its first byte), the
//!    pipes, socketpairs and eventfds inside it, in their canonical order
//!    (by the lowest descriptor of each, so a world does not depend on the
//!    order they were made or closed in), and last, when it has any (bit
//!    5), its sockets' timeouts (count, then each as fd and the two
//!    timeouts, each a presence byte and jiffies, u64);
//! 3. connections in label order: a wide count, then each as label (kind,
//!    node, k), target, the two ends' states, the queue toward the target and
//!    the queue toward the dialer (each a count, then length-prefixed
//!    messages);
//! 4. the ghost log: count, then each reply as node, length, bytes;
//! 5. only where there are any (the worlds the nodes' start reaches), the
//!    choices the nodes' start may make otherwise: count, then each crash
//!    as node, the last node started before it, point (u32) and what it
//!    keeps (0; 1 and j; 2 and the set, u64), and each order of a listing
//!    as 3, node, listing (u32), way (u32).
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
//! node, 16 objects inside a node), so it takes the short form (the bytes
//! buffered in one of those objects, at most 4,096, take the long one past
//! 254, as any count); a world with fewer than 255
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
}

impl End {
    /// Nothing more will be read at this end.
    pub fn done(self) -> bool {
        matches!(self, End::Closed | End::Gone)
    }
}

/// What the kernel's socket at one end of a connection holds besides its
/// data, as Linux's `struct sock` has it (`calls::tcp` changes it): the
/// peer's FIN, its own shutdowns, a pending error and whether the
/// connection was reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sock {
    /// The peer shut its writing (`close`, `shutdown(SHUT_WR)`): its FIN
    /// travels toward this end, behind the messages sent before it.
    pub fin: bool,
    /// The peer's FIN has arrived (EOF(n, conn) brought it, once nothing
    /// travelled before it): the end of the stream is there, after what
    /// has arrived. Apart from the last message, as on Linux, where a
    /// poll may see the data without the hang-up.
    pub fin_in: bool,
    /// Its own `shutdown`s: [`Sock::RD`], [`Sock::WR`] (a FIN sent).
    pub shut: u8,
    /// The error pending at it (`sk_err`: ECONNRESET, EPIPE), 0 if none:
    /// the next write, `SO_ERROR`, or read once the messages before it
    /// are read, returns it and clears it.
    pub err: u8,
    /// The connection was reset here (`tcp_done`): reads end, writes fail
    /// with EPIPE once the error is taken.
    pub reset: bool,
    /// The peer's reset is on its way to this end's reads and polls,
    /// behind the messages sent before it (a close with data unread, a
    /// crash, a listener closed). The socket is reset already, and a write
    /// sees it at once, as on loopback; a read or a poll sees it once
    /// EOF(n, conn) brings it, or once a write or `SO_ERROR` has taken it.
    pub rst: bool,
}

impl Sock {
    /// `SHUT_RD`: reads end once what has arrived is read.
    pub const RD: u8 = 1;
    /// `SHUT_WR`: a FIN sent; writes fail with EPIPE.
    pub const WR: u8 = 2;

    /// Whether this end's reads and polls see its reset (or error): it
    /// is there, and not on its way.
    pub fn reset_seen(&self) -> bool {
        (self.reset || self.err != 0) && !self.rst
    }

    pub(crate) fn bits(&self) -> u8 {
        self.fin as u8 | self.shut << 1 | (self.reset as u8) << 3 | (self.fin_in as u8) << 4 | (self.rst as u8) << 5
    }
}

/// One connection. Its dialer end belongs to node `label.node` for `Node`
/// connections and to the checker otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conn {
    /// The node dialled, whose listening socket accepts it.
    pub target: u8,
    /// The target's listening socket (its descriptor) that accepts it.
    pub listener: i32,
    /// The address dialled (a loopback address).
    pub addr: [u8; 4],
    /// The port dialled.
    pub port: u16,
    /// The state of the dialer's end.
    pub dialer_end: End,
    /// The state of the target's end.
    pub target_end: End,
    /// The kernel's socket at the dialer's end.
    pub dialer_sock: Sock,
    /// The kernel's socket at the target's end.
    pub target_sock: Sock,
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
    /// A connection with nothing in flight and nothing received, to node
    /// `target`'s conventional port on 127.0.0.1 (its listener unknown:
    /// -1; see [`Conn::at`]).
    pub fn new(target: u8, dialer_end: End, target_end: End) -> Conn {
        Conn {
            target,
            listener: -1,
            addr: [127, 0, 0, 1],
            port: super::PORT_BASE + target as u16,
            dialer_end,
            target_end,
            dialer_sock: Sock::default(),
            target_sock: Sock::default(),
            to_target: VecDeque::new(),
            to_dialer: VecDeque::new(),
            at_target: VecDeque::new(),
            at_dialer: VecDeque::new(),
            split_target: false,
            split_dialer: false,
        }
    }

    /// The same, accepted by listening socket `listener`, dialled at
    /// `addr`:`port`.
    pub fn at(mut self, listener: i32, addr: [u8; 4], port: u16) -> Conn {
        self.listener = listener;
        self.addr = addr;
        self.port = port;
        self
    }

    /// The kernel's socket at `side`.
    pub fn sock(&self, side: Side) -> &Sock {
        match side {
            Side::Target => &self.target_sock,
            Side::Dialer => &self.dialer_sock,
        }
    }

    /// The kernel's socket at `side`.
    pub fn sock_mut(&mut self, side: Side) -> &mut Sock {
        match side {
            Side::Target => &mut self.target_sock,
            Side::Dialer => &mut self.dialer_sock,
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
    pub fn received(&self, side: Side) -> &VecDeque<Vec<u8>> {
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
    /// A socket not (yet) connected: bound to `addr`:`port`, maybe
    /// listening.
    Socket {
        /// The port bound, if any.
        port: Option<u16>,
        /// Whether `listen` was called on it.
        listening: bool,
        /// The address bound (0.0.0.0: any), with `port`.
        addr: [u8; 4],
        /// `SO_REUSEADDR` is set: two such sockets may bind one address
        /// while neither listens.
        reuse: bool,
        /// A connect of it failed: 0 none did; 1 a non-blocking connect
        /// was refused and ECONNREFUSED is pending (`SO_ERROR`, the next
        /// read, write or connect take it); 2 taken (the socket is closed,
        /// as `tcp_done` leaves it: reads return 0).
        refused: u8,
    },
    /// One end of a connection.
    Conn {
        /// The connection.
        label: Label,
        /// Which end.
        side: Side,
    },
    /// `/dev/urandom` (minor 9) or `/dev/random` (8): reads draw from the
    /// node's random stream.
    Random {
        /// The device's minor number (major 1), as it names itself.
        minor: u8,
    },
    /// An epoll instance; what it watches is the node's `epolls` entry
    /// `id`, the lowest descriptor of the instance (a duplicate,
    /// `F_DUPFD`, refers to it too: [`NodeWorld::renumber_epolls`]).
    Epoll {
        /// The instance: its lowest descriptor.
        id: i32,
    },
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
    /// A character device of no state: `/dev/null` (minor 3), `/dev/zero`
    /// (5) or `/dev/full` (7), opened with access mode `mode` (stdin is
    /// `/dev/null`, read and write). The node holds the real device; its
    /// reads and writes run on it.
    Device {
        /// The device's minor number (major 1).
        minor: u8,
        /// `O_RDONLY`, `O_WRONLY` or `O_RDWR`.
        mode: u8,
    },
    /// The node's stdout (1) or stderr (2), wherever it has been
    /// duplicated: to the node, `/dev/null` opened for writing; the checker
    /// keeps what is written (the log, a trace's output).
    Out {
        /// 1 for stdout, 2 for stderr.
        stream: u8,
    },
    /// One end of a pipe the node made, whose state is the node's
    /// `locals` entry `id`.
    Pipe {
        /// The object, by its number in [`NodeWorld::locals`].
        id: u8,
        /// The write end (`true`) or the read end.
        write: bool,
    },
    /// One end of a socketpair the node made (`end` 0 or 1, in the order
    /// the call returned them); its state is the node's `locals` entry
    /// `id`.
    Pair {
        /// The object, by its number in [`NodeWorld::locals`].
        id: u8,
        /// Which end: 0 or 1.
        end: u8,
    },
    /// An eventfd the node made; its counter is the node's `locals` entry
    /// `id`.
    Event {
        /// The object, by its number in [`NodeWorld::locals`].
        id: u8,
    },
    /// A file or directory of the machine, opened for reading (a node's
    /// file system is read-only), named by its device and inode: the
    /// checker answers every call that reads or moves its offset, which is
    /// here, so that a snapshot's forks, which share the kernel's open file
    /// description, never see each other's reads.
    Host {
        /// `st_dev` of the file.
        dev: u64,
        /// `st_ino` of the file.
        ino: u64,
        /// The file's offset; a directory's position (`d_off`).
        offset: u64,
        /// The status flags it was opened with (`O_PATH`, `O_DIRECTORY`,
        /// `O_NOATIME`, ...), as `F_GETFL` reports them.
        flags: u32,
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
    /// File `inode` grown to `len` bytes by the write that follows (under
    /// [`CrashStates::Ext4`] a write past a file's end is this change of
    /// its size and then a [`DiskOp::Write`] of its bytes, which a crash
    /// may keep apart: ext4 journals the size, and writes the bytes back
    /// when it will). Zeros where no kept write put bytes.
    Grow {
        /// The file.
        inode: u32,
        /// Its new length, in bytes.
        len: u32,
    },
    /// File `inode`'s delayed writes given blocks at a close, under
    /// [`CrashStates::Ext4`]: ext4's `auto_da_alloc` after a truncation to
    /// zero. It changes nothing the node sees; a crash that keeps it keeps
    /// the file's size changes before it (`crash_states`).
    Allocate {
        /// The file.
        inode: u32,
    },
}

impl DiskOp {
    /// The file whose contents or size the change is to: every change but
    /// those of names.
    pub fn inode(&self) -> Option<u32> {
        match *self {
            DiskOp::Write { inode, .. }
            | DiskOp::Truncate { inode, .. }
            | DiskOp::Grow { inode, .. }
            | DiskOp::Allocate { inode } => Some(inode),
            DiskOp::Link { .. } | DiskOp::Unlink { .. } | DiskOp::Rename { .. } => None,
        }
    }
}

/// Which states of a node's data directory a crash may leave (model key
/// `crash_states`), beside what was made durable: the manual's prefixes
/// of the pending changes, or those and every state ext4 can leave
/// (`crash_states`, the module that enumerates them). A constant of the
/// run, like `stream`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CrashStates {
    /// The manual's `CRASH(n, j)`: the oldest j pending changes reached
    /// the disk, for each j.
    Prefix,
    /// ext4's reorderings too (default mount: `data=ordered`, delayed
    /// allocation, `auto_da_alloc`): one journal of the changes of names
    /// and sizes, kept in order, and each file's writes, kept in order
    /// but apart from the journal and from other files.
    #[default]
    Ext4,
}

impl CrashStates {
    /// The model-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            CrashStates::Prefix => "prefix",
            CrashStates::Ext4 => "ext4",
        }
    }
}

impl std::str::FromStr for CrashStates {
    type Err = String;

    fn from_str(s: &str) -> Result<CrashStates, String> {
        match s {
            "prefix" => Ok(CrashStates::Prefix),
            "ext4" => Ok(CrashStates::Ext4),
            _ => Err(format!("`{s}`: crash_states is \"ext4\" or \"prefix\"")),
        }
    }
}

/// In which order a listing of a node's data directory gives its names
/// (model key `dir_order`). A constant of the run, like `stream`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DirOrder {
    /// ext4's: `.` and `..`, then the names in the order of a hash of each
    /// under the file system's seed, which is made at `mkfs` and unknown:
    /// any order, fixed once a listing has shown it (`Disk::order`,
    /// `dir_order`).
    #[default]
    Hash,
    /// The names sorted, as a file system of one seed might list them: a
    /// pass covers that one order.
    Sorted,
}

impl DirOrder {
    /// The model-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            DirOrder::Hash => "hash",
            DirOrder::Sorted => "sorted",
        }
    }
}

impl std::str::FromStr for DirOrder {
    type Err = String;

    fn from_str(s: &str) -> Result<DirOrder, String> {
        match s {
            "hash" => Ok(DirOrder::Hash),
            "sorted" => Ok(DirOrder::Sorted),
            _ => Err(format!("`{s}`: dir_order is \"hash\" or \"sorted\"")),
        }
    }
}

/// What a node's state is (model key `node_state`): what it reports (the
/// manual's), or that and every input of its life so far, for a program
/// that keeps in memory what it cannot report (an event loop's timers and
/// buffers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NodeState {
    /// The manual's: its report on fd 3 and fd 193, and what the kernel
    /// keeps for it (descriptors, connections, its wait).
    #[default]
    Report,
    /// That, and a digest of every answer the node's process got in this
    /// life: each call's result and every byte written into its memory
    /// ([`NodeWorld::inputs`]). Two paths that gave a process different
    /// inputs are two worlds, whatever it reports.
    Inputs,
}

impl NodeState {
    /// The model-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            NodeState::Report => "report",
            NodeState::Inputs => "inputs",
        }
    }
}

impl std::str::FromStr for NodeState {
    type Err = String;

    fn from_str(s: &str) -> Result<NodeState, String> {
        match s {
            "report" => Ok(NodeState::Report),
            "inputs" => Ok(NodeState::Inputs),
            _ => Err(format!("`{s}`: node_state is \"report\" or \"inputs\"")),
        }
    }
}

/// A node's data directory (model key `data_dir`): flat, files only. What
/// a crash keeps is `files` and `names`; what the node has changed since
/// and not made durable is `pending`, oldest first, and the node sees both
/// (`current`). `fsync` of a file makes its writes and size durable,
/// `fsync` of the directory its names (and the sizes its renames over
/// existing names forced); of the rest a crash keeps what
/// [`CrashStates`] allows (`crash_states` enumerates it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disk {
    /// Durable files' contents, by inode.
    pub files: BTreeMap<u32, Vec<u8>>,
    /// Durable names, each naming an inode.
    pub names: BTreeMap<Vec<u8>, u32>,
    /// Changes not yet durable, oldest first.
    pub pending: Vec<DiskOp>,
    /// The names a listing has shown, in the order the file system's hash
    /// puts them (`DirOrder::Hash`; `dir_order`): a property of the file
    /// system, so a crash keeps it, and names gone since stay in it (one
    /// may come back, in the same place).
    pub order: Vec<Vec<u8>>,
}

impl Disk {
    /// Whether the directory has no file, no name, no pending change and
    /// has shown no order.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.names.is_empty() && self.pending.is_empty() && self.order.is_empty()
    }

    /// The inodes something still reaches: a durable name, a pending
    /// change, or one of `open` (the node's open files).
    fn reached(&self, open: &BTreeSet<u32>) -> BTreeSet<u32> {
        let mut reached: BTreeSet<u32> = self.names.values().copied().collect();
        reached.extend(open);
        for op in &self.pending {
            match op {
                DiskOp::Link { inode, .. } => {
                    reached.insert(*inode);
                }
                op => reached.extend(op.inode()),
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
        Self::apply_as(files, names, op, false);
    }

    /// [`Disk::apply`], but with `clip` a write changes only the bytes
    /// within the file's size and never grows it: what a crash keeps of a
    /// write whose size change ([`DiskOp::Grow`]) it did not keep.
    fn apply_as(files: &mut BTreeMap<u32, Vec<u8>>, names: &mut BTreeMap<Vec<u8>, u32>, op: &DiskOp, clip: bool) {
        match op {
            DiskOp::Write { inode, offset, bytes } => {
                let file = files.entry(*inode).or_default();
                let end = *offset as usize + bytes.len();
                let end = if clip { end.min(file.len()) } else { end };
                if file.len() < end {
                    file.resize(end, 0);
                }
                if let Some(kept) = end.checked_sub(*offset as usize) {
                    file[*offset as usize..end].copy_from_slice(&bytes[..kept]);
                }
            }
            DiskOp::Truncate { inode, len } => files.entry(*inode).or_default().resize(*len as usize, 0),
            DiskOp::Grow { inode, len } => {
                let file = files.entry(*inode).or_default();
                if file.len() < *len as usize {
                    file.resize(*len as usize, 0);
                }
            }
            DiskOp::Allocate { .. } => {}
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

    /// Makes the pending changes that `durable` selects (by index and
    /// change) durable, in order, and keeps the others pending.
    fn sync(&mut self, durable: impl Fn(usize, &DiskOp) -> bool) {
        let pending = std::mem::take(&mut self.pending);
        for (i, op) in pending.into_iter().enumerate() {
            if durable(i, &op) {
                Self::apply(&mut self.files, &mut self.names, &op);
            } else {
                self.pending.push(op);
            }
        }
    }

    /// `fsync` of file `inode`: its contents and size are durable.
    pub fn sync_file(&mut self, inode: u32) {
        self.sync(|_, op| op.inode() == Some(inode));
    }

    /// `syncfs`: every change is durable.
    pub fn sync_all(&mut self) {
        self.sync(|_, _| true);
    }

    /// `fsync` of the directory: its names are durable, and with each
    /// rename over an existing name the growths ([`DiskOp::Grow`]) of the
    /// renamed file made before it, which ext4's `auto_da_alloc` commits
    /// with the rename (`crash_states`); not the bytes of its writes.
    pub fn sync_dir(&mut self) {
        let mut forced = BTreeSet::new();
        for (at, inode) in self.renames_over() {
            let grows = self.pending[..at].iter().enumerate();
            forced.extend(
                grows.filter(|(_, op)| matches!(op, DiskOp::Grow { inode: i, .. } if *i == inode)).map(|(i, _)| i),
            );
        }
        self.sync(|i, op| {
            matches!(op, DiskOp::Link { .. } | DiskOp::Unlink { .. } | DiskOp::Rename { .. }) || forced.contains(&i)
        });
    }

    /// Each pending rename over a name that exists when it is made: its
    /// index in `pending` and the file it renames.
    pub fn renames_over(&self) -> Vec<(usize, u32)> {
        let mut names = self.names.clone();
        let mut out = Vec::new();
        for (i, op) in self.pending.iter().enumerate() {
            match op {
                DiskOp::Link { name, inode } => {
                    names.insert(name.clone(), *inode);
                }
                DiskOp::Unlink { name } => {
                    names.remove(name);
                }
                DiskOp::Rename { from, to } => {
                    let over = names.contains_key(to);
                    if let Some(inode) = names.remove(from) {
                        if over {
                            out.push((i, inode));
                        }
                        names.insert(to.clone(), inode);
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// A crash that let the pending changes whose bits `kept` sets reach
    /// the disk (bit i: the i-th oldest), in the order they were made: the
    /// rest are lost, and a file no name reaches is gone. With `clip` a
    /// kept write whose size change was lost changes only the bytes within
    /// the size it finds (`crash_states`: a state of ext4's beyond the
    /// prefixes; a prefix keeps each size change with its write).
    pub fn crash(&mut self, kept: u64, clip: bool) {
        let pending = std::mem::take(&mut self.pending);
        for (i, op) in pending.iter().enumerate() {
            if i < 64 && kept >> i & 1 != 0 {
                Self::apply_as(&mut self.files, &mut self.names, op, clip);
            }
        }
        let named: BTreeSet<u32> = self.names.values().copied().collect();
        self.files.retain(|inode, _| named.contains(inode));
    }

    /// Its encoding: [`Disk::encode_files`], then the order shown.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        self.encode_files(out);
        push_count(out, self.order.len());
        for name in &self.order {
            push_bytes(out, name);
        }
    }

    /// What it holds and what is pending, without the order a listing
    /// showed (which is the file system's, not a change a node made).
    pub(crate) fn encode_files(&self, out: &mut Vec<u8>) {
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
                DiskOp::Grow { inode, len } => {
                    out.push(5);
                    out.extend_from_slice(&inode.to_le_bytes());
                    out.extend_from_slice(&len.to_le_bytes());
                }
                DiskOp::Allocate { inode } => {
                    out.push(6);
                    out.extend_from_slice(&inode.to_le_bytes());
                }
            }
        }
    }
}

/// What of a node's pending changes a CRASH lets reach the disk; the rest
/// are lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The oldest `j`: the manual's `CRASH(n, j)`.
    Oldest(u8),
    /// Those whose bits are set, bit i for the i-th oldest: a state of
    /// ext4's that is no prefix (`CRASH(n, {0, 2})`).
    Set(u64),
}

impl Keep {
    /// The changes kept, bit i for the i-th oldest.
    pub fn mask(self) -> u64 {
        match self {
            Keep::Oldest(j) => prefix_mask(j as usize),
            Keep::Set(m) => m,
        }
    }

    /// Whether it keeps every one of `pending` changes (what a process's
    /// death alone, with the machine up, does).
    pub fn keeps_all(self, pending: usize) -> bool {
        self.mask() == prefix_mask(pending)
    }
}

/// The set of the oldest `j` changes.
pub(super) fn prefix_mask(j: usize) -> u64 {
    if j >= 64 { u64::MAX } else { (1u64 << j) - 1 }
}

/// A crash that may fall while the nodes start ([`ProcessWorld::start_choices`]):
/// node `node`'s first life stops before the call that follows its
/// `point`-th call with an effect outside its process (1 for the first;
/// in the start a listen counts, and a close of a listener), the nodes
/// after it up to `after` start meanwhile (none where `after` is `node`),
/// and then it is killed, `keep` saying which of its pending
/// data-directory changes reached the disk (`None` when none is pending);
/// the nodes after `after` start then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StartCrash {
    /// The node.
    pub node: u8,
    /// After how many of its calls with an effect, from 1.
    pub point: u32,
    /// Which pending changes the crash keeps.
    pub keep: Option<Keep>,
    /// The last node whose start comes before the crash: `node` itself,
    /// or a later one.
    pub after: u8,
}

/// A choice made while the nodes start, which the world START reaches
/// lists as an action ([`ProcessWorld::start_choices`]): a crash, or the
/// way the names a listing of a data directory shows first fall in the
/// file system's order (`dir_order`; START takes way 0 at each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StartChoice {
    /// A crash in a node's start.
    Crash(StartCrash),
    /// Node `node`'s `listing`-th listing in its start (from 1) that shows
    /// names more than one way takes way `way`.
    Order {
        /// The node.
        node: u8,
        /// Which of its listings, from 1.
        listing: u32,
        /// Which way ([`crate::process::ProcessAction::Order`]'s).
        way: u32,
    },
}

impl StartChoice {
    /// The node whose start it is in.
    pub fn node(&self) -> u8 {
        match *self {
            StartChoice::Crash(c) => c.node,
            StartChoice::Order { node, .. } => node,
        }
    }
}

/// A logical time or span, in milliseconds: the clock, a deadline, an
/// interval. The clock starts at 0 and only TIMEOUT moves it.
pub type Millis = u64;

/// How far a TIMEOUT that reads the manual's `T` moves the clock: one
/// second, as the manual says.
pub const T_MS: Millis = 1000;

/// A timerfd's setting, in nanoseconds of the logical clock, as the kernel
/// keeps it (`timerfd_gettime` reads back what was set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerFd {
    /// When it next expires, in nanoseconds (`None`: disarmed). It has
    /// expired once the clock reaches it, whoever moved the clock; a wait
    /// for it ends at the millisecond that covers it
    /// ([`TimerFd::wakes_at`]).
    pub deadline: Option<u64>,
    /// Nanoseconds between expirations after the first (0: once).
    pub interval: u64,
    /// What `CLOCK_REALTIME` and its kin add to the logical clock, for an
    /// absolute setting: 0 for the monotonic clocks.
    pub realtime: bool,
}

impl TimerFd {
    /// When a wait for its next expiry ends: the logical millisecond that
    /// covers it.
    pub fn wakes_at(&self) -> Option<Millis> {
        self.deadline.map(|d| d.div_ceil(1_000_000))
    }

    /// Whether it has expired for a node whose clocks say `now_ns`
    /// ([`ProcessWorld::now_ns`]).
    pub fn expired(&self, now_ns: u64) -> bool {
        self.deadline.is_some_and(|d| d <= now_ns)
    }
}

/// A socket's timeouts (`SO_RCVTIMEO`, `SO_SNDTIMEO`) as the kernel keeps
/// them: in jiffies of [`SocketTimeouts::HZ`], `None` for none (the
/// kernel's `MAX_SCHEDULE_TIMEOUT`, what a socket starts with), `Some(0)`
/// for a call that does not wait at all (a negative setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketTimeouts {
    /// How long a read, `recv` or `accept` waits before EAGAIN.
    pub receive: Option<u64>,
    /// How long a write would wait for room: set and read back, but a
    /// write never waits in the model (the peer's buffer is never full).
    pub send: Option<u64>,
}

impl SocketTimeouts {
    /// The kernel's tick, in which it keeps a socket's timeouts: Debian's
    /// `CONFIG_HZ`, as for the coarse clocks.
    pub const HZ: u64 = 250;

    /// Whether the socket has neither timeout (kept out of the world).
    pub fn is_none(&self) -> bool {
        self.receive.is_none() && self.send.is_none()
    }
}

/// Which waits TIMEOUT may end, and in what order: a constant of the run,
/// like `stream` (model-file keys `timeout_order`, `timeout_drift_s` or
/// `timeout_drift_ms`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeoutOrder {
    /// Any wait may time out first, whatever its deadline: the
    /// over-approximation, the default.
    #[default]
    Any,
    /// TIMEOUT wakes only a wait whose deadline is at most `drift_ms`
    /// milliseconds after the earliest deadline of every node's wait, so
    /// the clock never passes the earliest by more than the drift.
    Deadline {
        /// How far the nodes' clocks may disagree, in milliseconds.
        drift_ms: u64,
    },
}

/// An object inside one node (`calls::local`): a pipe, a socketpair or
/// an eventfd, whose every end the node holds. The kernel's own in a real
/// process, and deterministic there (one thread); here the world's, so
/// that a snapshot's forks share none. No action is involved: what one end
/// writes the other reads at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Local {
    /// A pipe: what was written at its write end and not yet read at its
    /// read end, oldest first (the kernel merges writes into pages, so
    /// their boundaries are not kept).
    Pipe {
        /// The bytes buffered.
        bytes: Vec<u8>,
    },
    /// A pair of connected `AF_UNIX` sockets.
    Pair {
        /// `SOCK_SEQPACKET` (each write one message, each read at most
        /// one) rather than `SOCK_STREAM` (reads cross writes).
        seqpacket: bool,
        /// Ends 0 and 1.
        ends: [PairEnd; 2],
    },
    /// An eventfd's counter.
    Event {
        /// The counter, at most `u64::MAX - 1`.
        count: u64,
        /// `EFD_SEMAPHORE`: a read takes 1, not the whole count.
        semaphore: bool,
    },
}

/// One end of a socketpair, as the kernel's `struct sock` has it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairEnd {
    /// What the other end wrote and this one has not read, oldest first,
    /// one entry per write (the kernel's receive queue of skbs; a stream's
    /// read crosses them, and a part read leaves the rest first).
    pub queue: VecDeque<Vec<u8>>,
    /// The kernel's `sk_shutdown` bits: [`PairEnd::RCV`] (nothing more to
    /// read) and [`PairEnd::SEND`] (no more writing).
    pub shutdown: u8,
    /// `ECONNRESET` pending (`sk_err`): the other end was closed with data
    /// unread at it.
    pub reset: bool,
}

impl PairEnd {
    /// `RCV_SHUTDOWN`: nothing more will arrive.
    pub const RCV: u8 = 1;
    /// `SEND_SHUTDOWN`: no more writing.
    pub const SEND: u8 = 2;
}

impl VFd {
    /// The object inside the node this descriptor is an end of, if it is
    /// one.
    pub fn local_id(&self) -> Option<u8> {
        match *self {
            VFd::Pipe { id, .. } | VFd::Pair { id, .. } | VFd::Event { id } => Some(id),
            _ => None,
        }
    }

    fn set_local_id(&mut self, new: u8) {
        if let VFd::Pipe { id, .. } | VFd::Pair { id, .. } | VFd::Event { id } = self {
            *id = new;
        }
    }
}

/// One descriptor in an epoll instance's interest list (`struct epitem`),
/// but for the data `epoll_wait` hands back with its events: the process
/// gave it only to be given it back, so it is the process's, kept with it
/// (`forkserver::Cookies`), not the world's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interest {
    /// The events asked for (`EPOLLIN`, ...), with `EPOLLERR` and
    /// `EPOLLHUP`, which the kernel adds, and `EPOLLET` and `EPOLLONESHOT`
    /// as given (a one-shot interest that reported keeps only these).
    pub events: u32,
    /// The poll events its file had when the world last read it; a
    /// change of state beyond them is a wake-up (`calls/ready_list.rs`).
    pub seen: u16,
    /// Its place on its instance's ready list, from 1 at the head; 0 off
    /// the list.
    pub rank: u16,
}

impl Interest {
    /// `EPOLLET`.
    pub const ET: u32 = 1 << 31;
    /// `EPOLLONESHOT`.
    pub const ONESHOT: u32 = 1 << 30;
    /// The bits that are not events (the kernel's `EP_PRIVATE_BITS`): a
    /// one-shot interest that reported keeps only these, and reports
    /// nothing until `EPOLL_CTL_MOD`.
    pub const PRIVATE: u32 = Self::ET | Self::ONESHOT | 1 << 29 | 1 << 28;
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
    /// Crashed, and not restarted yet: it has no process, nothing listens
    /// at its ports (a connect there is refused), and RESTART starts its
    /// new life.
    Down,
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
        /// With a receive timeout (`SO_RCVTIMEO`), the logical time it
        /// ends at: TIMEOUT then fails the call with EAGAIN.
        until: Option<Millis>,
    },
    /// A read of a connection with nothing received.
    Read {
        /// The connection's descriptor.
        fd: i32,
        /// With a receive timeout (`SO_RCVTIMEO`), the logical time it
        /// ends at: TIMEOUT then fails the call with EAGAIN (or returns
        /// what a `MSG_WAITALL` receive has).
        until: Option<Millis>,
    },
    /// `nanosleep`, `clock_nanosleep` (and so `sleep`, `usleep`): asleep
    /// until logical time `until`; TIMEOUT wakes it.
    Sleep {
        /// The logical time it wakes at.
        until: Millis,
    },
    /// `pause`: only a signal would end it, and none is modelled, so no
    /// action does.
    Pause,
    /// `poll` or `ppoll` with nothing ready, waiting for what the node's
    /// `watch` names, and with a timeout until logical time `until`
    /// (`None`: none, so TIMEOUT ends it only to expire a watched timer).
    Poll {
        /// The logical time its timeout ends at, if it has one.
        until: Option<Millis>,
    },
    /// A read of timerfd `fd`, armed and not expired: TIMEOUT expires it.
    Timer {
        /// The timerfd.
        fd: i32,
    },
    /// Held between two calls, after one with an effect outside the
    /// process (a crash point): RUN lets it go on, CRASH kills it there.
    /// The process is in the middle of its step, so its memory is not what
    /// its reported state says: `trail` stands for it, a hash of what
    /// determines it (the surroundings the step began in, as the
    /// transition cache's key, the action, and the crash points passed
    /// since), so that two worlds share a snapshot only where their
    /// processes are one.
    CrashPoint {
        /// What the node's memory is a function of.
        trail: Trail,
    },
    /// A poll, select or epoll wait with something ready (or whose time
    /// is up), held before it returns while more of what it watches is on
    /// its way (a message, a connection to accept): on Linux that may
    /// arrive before the process runs and join the ready set. RUN returns the wait with
    /// what is ready now; DELIVER, EOF and ACCEPT on what it watches add
    /// to it first. Its watched descriptors are `NodeWorld::watch`; no
    /// TIMEOUT ends it (it has something to return). A poll that does not
    /// wait (a zero timeout) with nothing ready is held so too while
    /// something it watches is on its way, and RUN returns it empty.
    Woken {
        /// What the node's memory is a function of, when the wait did not
        /// wait (it found something ready, or has a zero timeout): the
        /// node is then in the middle of its step. The default where it
        /// waited first (its memory is its reported state's).
        trail: Trail,
        /// The milliseconds its timeout had left when it woke, for a call
        /// that writes back the time it did not wait (`select`,
        /// `pselect6`, `ppoll`, after a wait with a timeout); `None`
        /// otherwise.
        left: Option<Millis>,
    },
    /// A read of connection `fd` that does not wait (non-blocking,
    /// `MSG_DONTWAIT`, a zero receive timeout), with nothing received while
    /// a message, a FIN or a reset is on its way to it: on Linux that may
    /// have arrived before the call. DELIVER and EOF answer it as a
    /// waiting read's; RUN answers EAGAIN. No TIMEOUT ends it.
    ReadNow {
        /// The connection's descriptor.
        fd: i32,
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// An `accept` of listening socket `fd` that does not wait, with no
    /// connection in its queue while one is waiting to be accepted: ACCEPT
    /// answers it with that connection, RUN with EAGAIN.
    AcceptNow {
        /// The listening socket.
        fd: i32,
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// A write on connection `fd` that the peer's close may come before.
    /// Either the peer has closed or crashed, and the reset (or the FIN)
    /// that sent is on its way: on Linux the write may come before the
    /// close. RUN makes it so (the write succeeds, and a FIN on its way
    /// becomes a reset, the peer having closed with it unread); EOF makes
    /// the close come first (the reset or FIN arrives, and the write is
    /// answered as after it). Or the peer is still open with what this
    /// node wrote unread there (`ProcessWorld::peer_may_reset`), and may
    /// close while the step runs: the others act meanwhile, and RUN makes
    /// the write as it stands.
    WriteNow {
        /// The connection's descriptor.
        fd: i32,
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// An observation of connection `fd`'s end that does not wait
    /// (`ioctl(FIONREAD)`, `SO_ERROR`, a receive with `MSG_WAITALL` that
    /// does not wait) while something is on its way to the end or may
    /// still come: on Linux it may have arrived before the call. DELIVER
    /// adds a message to what the end has received, EOF brings the FIN or
    /// the reset, and the node stays held; RUN answers the call from the
    /// world as it is then (`SO_ERROR` with a reset still on its way: 0).
    LookNow {
        /// The connection's descriptor.
        fd: i32,
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// A listing (`getdents64`) of the data directory that shows names no
    /// listing has shown (`DirOrder::Hash`): where they fall among those
    /// shown before is the file system's hash, unknown, so the node is held
    /// before the answer, and each of the `choices` ways is an action
    /// (`ORDER(n, i)`, `dir_order`).
    Order {
        /// The directory's descriptor.
        fd: i32,
        /// The ways the new names may fall, at least 2.
        choices: u32,
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// A node that has made threads, held where the thread that runs
    /// next is a choice (two or more may run, and thread switches are left):
    /// RUN(n) runs the fixed one (the lowest-numbered), SWITCH(n, t)
    /// thread t instead, spending a switch. The node is in the middle of
    /// its step; no thread is in its slot meanwhile.
    Choice {
        /// What the node's memory is a function of ([`Trail`]).
        trail: Trail,
    },
    /// A futex wait of a node that has made threads (`threads`): the
    /// thread waits until another wakes the word at `addr` with a bitset
    /// that meets `bitset`, or, for a timed wait, until TIMEOUT ends it at
    /// `until` (ETIMEDOUT). (A node that never made a thread waits in
    /// `Pause` instead: nothing could wake it.)
    Futex {
        /// The futex word's address in the process.
        addr: u64,
        /// The wait's bitset (`FUTEX_BITSET_MATCH_ANY` for a plain wait).
        bitset: u32,
        /// For a timed wait, the logical time its timeout ends at.
        until: Option<Millis>,
    },
}

/// What the memory of a node held in the middle of its step is a function
/// of, where its reported state does not say it: a crash point, or a call
/// that does not wait held for what is on its way (`Blocked::ReadNow`,
/// `AcceptNow`, `WriteNow`, `LookNow`, a `Woken` wait that did not wait). Between
/// two of its waits a process may change its memory without reporting it
/// (a count of its EAGAINs), so two holds with one reported state may be
/// two processes; a trail in the world keeps them apart, so that two
/// worlds share a snapshot only where their processes are one. The
/// default (hash 0) is a node whose memory is its reported state's: a
/// `Woken` wait that waited first. (A state record just before the hold
/// does not stand for the memory: a program honest at its waits reports
/// the state it will wait in, and `counter.c`'s record before its reply
/// is the one it reports after its accept, at another place in its code.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trail {
    /// A hash of what determines the memory: the surroundings the step
    /// began in (as the transition cache's key) and its action, and the
    /// holds passed since, each with the calls the step made before it;
    /// never 0 but for the default.
    pub hash: u64,
    /// The calls that do not wait held since the node last waited, bounded
    /// by
    /// [`super::limits::HOLDS_PER_STEP_MAX`].
    pub holds: u8,
    /// The nodes the step has given something to react to before its end
    /// (bit `p` for node `p`: a message, a close or a connect toward it;
    /// every node's for a listen: `ProcessWorld::seen_by_others`), and
    /// [`Trail::TIMED`] where the step began at a TIMEOUT under deadline
    /// order: such a node may act within the step in a way no world puts
    /// before it, and a write toward it is held
    /// ([`ProcessWorld::peer_may_reset`]).
    pub acted: u16,
}

impl Trail {
    /// [`Trail::acted`]'s bit for a step that began at a TIMEOUT under
    /// deadline order: any peer's later deadline may pass while it runs.
    pub const TIMED: u16 = 1 << 8;

    /// Whether the step has acted toward node `p` ([`Trail::acted`]).
    pub fn acted_toward(&self, p: u8) -> bool {
        self.acted & (1 << p | Self::TIMED) != 0
    }
}

impl Blocked {
    /// The descriptor the wait is on, if it is on one.
    pub fn fd(&self) -> Option<i32> {
        match *self {
            Blocked::Accept { fd, .. }
            | Blocked::Read { fd, .. }
            | Blocked::Timer { fd }
            | Blocked::ReadNow { fd, .. }
            | Blocked::AcceptNow { fd, .. }
            | Blocked::WriteNow { fd, .. }
            | Blocked::LookNow { fd, .. }
            | Blocked::Order { fd, .. } => Some(fd),
            _ => None,
        }
    }

    /// When the wait's own timeout ends, for a wait that has one (a
    /// sleep, a receive timeout, a poll's timeout).
    pub fn until(&self) -> Option<Millis> {
        match *self {
            Blocked::Sleep { until } => Some(until),
            Blocked::Read { until, .. } | Blocked::Accept { until, .. } | Blocked::Poll { until } => until,
            _ => None,
        }
    }

    /// The same wait with the timeout `to` (none, or its end): a wait
    /// made again by a thread keeps the first call's, as Linux reads a
    /// receive timeout or a poll's once, when the call begins.
    pub fn keep_until(self, to: Option<Millis>) -> Blocked {
        match self {
            Blocked::Read { fd, .. } => Blocked::Read { fd, until: to },
            Blocked::Accept { fd, .. } => Blocked::Accept { fd, until: to },
            Blocked::Poll { .. } => Blocked::Poll { until: to },
            other => other,
        }
    }

    /// Whether the node is held in the middle of its step (its memory not
    /// its reported state's): a hold with a trail, but a woken wait that
    /// waited first, whose memory is its reported state's.
    pub fn mid_step(&self) -> bool {
        self.trail().is_some_and(|t| t != Trail::default())
    }

    /// The trail of a node held in the middle of its step, if it is.
    pub fn trail(&self) -> Option<Trail> {
        match *self {
            Blocked::CrashPoint { trail }
            | Blocked::Woken { trail, .. }
            | Blocked::ReadNow { trail, .. }
            | Blocked::AcceptNow { trail, .. }
            | Blocked::WriteNow { trail, .. }
            | Blocked::LookNow { trail, .. }
            | Blocked::Order { trail, .. }
            | Blocked::Choice { trail } => Some(trail),
            _ => None,
        }
    }

    /// Sets the trail of a node held in the middle of its step; nothing
    /// for a wait.
    pub fn set_trail(&mut self, to: Trail) {
        match self {
            Blocked::CrashPoint { trail }
            | Blocked::Woken { trail, .. }
            | Blocked::ReadNow { trail, .. }
            | Blocked::AcceptNow { trail, .. }
            | Blocked::WriteNow { trail, .. }
            | Blocked::LookNow { trail, .. }
            | Blocked::Order { trail, .. }
            | Blocked::Choice { trail } => *trail = to,
            _ => {}
        }
    }
}

/// As traces show it: the fields of each variant, a receive timeout's
/// end only where there is one (so a trace without one reads as before
/// timeouts existed).
impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Blocked::Accept { fd, until: None } => write!(f, "Accept {{ fd: {fd} }}"),
            Blocked::Read { fd, until: None } => write!(f, "Read {{ fd: {fd} }}"),
            Blocked::Accept { fd, until: Some(until) } => write!(f, "Accept {{ fd: {fd}, until: {until} ms }}"),
            Blocked::Read { fd, until: Some(until) } => write!(f, "Read {{ fd: {fd}, until: {until} ms }}"),
            Blocked::Sleep { until } => write!(f, "Sleep {{ until: {until} ms }}"),
            Blocked::Poll { until: Some(until) } => write!(f, "Poll {{ until: {until} ms }}"),
            // The trail is the checker's: a trace shows where the node is.
            Blocked::CrashPoint { .. } => write!(f, "held at a crash point"),
            Blocked::Woken { .. } => write!(f, "Woken"),
            Blocked::ReadNow { fd, .. } => write!(f, "ReadNow {{ fd: {fd} }}"),
            Blocked::AcceptNow { fd, .. } => write!(f, "AcceptNow {{ fd: {fd} }}"),
            Blocked::WriteNow { fd, .. } => write!(f, "WriteNow {{ fd: {fd} }}"),
            Blocked::LookNow { fd, .. } => write!(f, "LookNow {{ fd: {fd} }}"),
            Blocked::Order { fd, choices, .. } => write!(f, "Order {{ fd: {fd}, choices: {choices} }}"),
            Blocked::Choice { .. } => write!(f, "held where its next thread is a choice"),
            // A futex's address is the build's, not the protocol's.
            Blocked::Futex { until: None, .. } => write!(f, "futex"),
            Blocked::Futex { until: Some(until), .. } => write!(f, "futex {{ until: {until} ms }}"),
            other => write!(f, "{other:?}"),
        }
    }
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
    /// Its lives before this one (its RESTARTs): each life is a process
    /// of its own, with a pid of its own ([`ProcessWorld::pid`]).
    pub restarts: u8,
    /// Bytes drawn from its random stream so far, in every life.
    pub random_used: u64,
    /// Its reads of a clock in this life ([`ProcessWorld::clock_reads`]):
    /// its CPU-time clocks say that many nanoseconds (a new process starts
    /// from none).
    pub life_clock_reads: u32,
    /// Under [`NodeState::Inputs`], a digest of every answer its process
    /// got in this life (0 at its start, and always under
    /// [`NodeState::Report`]): what its memory is a function of, beyond
    /// what it reports.
    pub inputs: u64,
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
    pub epolls: BTreeMap<i32, BTreeMap<i32, Interest>>,
    /// Each timerfd's setting.
    pub timers: BTreeMap<i32, TimerFd>,
    /// While the node waits in a `recv` with `MSG_WAITALL`: the bytes of
    /// it received so far, written into its buffer already. The bytes, not
    /// only their count: the node's memory holds them, and two worlds that
    /// differ only in them are two states.
    pub waitall: Vec<u8>,
    /// Its data directory, kept across crashes as a disk is.
    pub disk: Disk,
    /// The pipes, socketpairs and eventfds it has made and holds an end
    /// of, numbered canonically: by the lowest descriptor of each, so
    /// that two worlds differing only in the order objects were made or
    /// closed in are one state ([`NodeWorld::renumber_locals`]).
    pub locals: Vec<Local>,
    /// The timeouts of its sockets and connections that have one, by
    /// descriptor (an accepted connection inherits its listener's).
    pub socket_timeouts: BTreeMap<i32, SocketTimeouts>,
    /// Its threads, by number, once its life has made one (empty before:
    /// the node is its one thread): `threads`.
    pub threads: Vec<super::threads::ThreadWorld>,
    /// The threads waiting on futexes (`Blocked::Futex`), oldest first: a
    /// wake takes the oldest waiters of its word.
    pub futex_queue: Vec<u8>,
}

impl NodeWorld {
    /// The deadline of a wait in `blocked` watching `watch` (a poll's)
    /// of this node: a sleep's end, a receive timeout's, a poll's timeout
    /// or the earliest armed timerfd it watches for reading (a timer is
    /// never writable: a review's `tfout`), an armed timerfd read.
    pub fn deadline_of(&self, blocked: &Blocked, watch: &BTreeMap<i32, i16>) -> Option<Millis> {
        let armed = |fd: &i32| self.timers.get(fd).and_then(|t| t.wakes_at());
        let read = |(&fd, &events): (&i32, &i16)| (events & nix::libc::POLLIN != 0).then_some(fd);
        match *blocked {
            Blocked::Sleep { until } => Some(until),
            Blocked::Read { until, .. } | Blocked::Accept { until, .. } => until,
            Blocked::Poll { until } => {
                until.into_iter().chain(watch.iter().filter_map(read).filter_map(|fd| armed(&fd))).min()
            }
            Blocked::Timer { fd } => armed(&fd),
            Blocked::Futex { until, .. } => until,
            _ => None,
        }
    }

    /// Numbers the objects inside the node canonically, by the lowest
    /// descriptor of each, and forgets an object no descriptor is an end
    /// of any more (its last end was closed). Called after every change
    /// of them or of the node's descriptors.
    pub fn renumber_locals(&mut self) {
        let mut lowest: Vec<Option<i32>> = vec![None; self.locals.len()];
        // Descriptors in ascending order: the first seen is the lowest.
        for (&fd, v) in &self.fds {
            if let Some(slot) = v.local_id().and_then(|id| lowest.get_mut(id as usize)) {
                slot.get_or_insert(fd);
            }
        }
        let mut order: Vec<(i32, usize)> =
            lowest.iter().enumerate().filter_map(|(id, fd)| fd.map(|fd| (fd, id))).collect();
        order.sort_unstable();
        let mut renamed = vec![0u8; self.locals.len()];
        for (new, &(_, old)) in order.iter().enumerate() {
            renamed[old] = new as u8;
        }
        let mut old: Vec<Option<Local>> = std::mem::take(&mut self.locals).into_iter().map(Some).collect();
        self.locals = order.iter().filter_map(|&(_, id)| old[id].take()).collect();
        for v in self.fds.values_mut() {
            if let Some(id) = v.local_id() {
                v.set_local_id(renamed[id as usize]);
            }
        }
    }

    /// Names each epoll instance by its lowest descriptor, in `epolls` and
    /// in every descriptor of it, and forgets an instance no descriptor
    /// holds: so that which of its descriptors was made first, or closed,
    /// makes no second state. Returns each instance left, by its old name,
    /// with its new one.
    pub fn renumber_epolls(&mut self) -> BTreeMap<i32, i32> {
        let mut lowest: BTreeMap<i32, i32> = BTreeMap::new();
        for (&fd, v) in &self.fds {
            if let VFd::Epoll { id } = *v {
                lowest.entry(id).or_insert(fd);
            }
        }
        let mut old = std::mem::take(&mut self.epolls);
        for (&id, &low) in &lowest {
            self.epolls.insert(low, old.remove(&id).unwrap_or_default());
        }
        for v in self.fds.values_mut() {
            if let VFd::Epoll { id } = v {
                *id = lowest[&*id];
            }
        }
        lowest
    }

    /// Whether an end of object `id` matching `end` is open in the node.
    pub fn local_end_open(&self, id: u8, end: impl Fn(&VFd) -> bool) -> bool {
        self.fds.values().any(|v| v.local_id() == Some(id) && end(v))
    }

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

/// Where two descriptions first differ: a window of each around it.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let window = |s: &str| {
        // Debug output escapes all but printable characters: whole ones
        // around the place, by char boundaries.
        let from = (0..=at.saturating_sub(60)).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        let to = ((at + 60).min(s.len())..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
        format!("...{}...", &s[from..to])
    };
    format!("{} then {}", window(a), window(b))
}

/// One global state of the process front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessWorld {
    /// Thread switches left (SWITCH), where the model has a budget of
    /// them; written last, only then.
    pub thread_switches: Option<u8>,
    /// Crashes left on this path.
    pub crashes: u8,
    /// Drops left on this path.
    pub drops: u8,
    /// Timeouts left on this path.
    pub timeouts: u8,
    /// Logical milliseconds, moved only by TIMEOUT (to a wait's deadline,
    /// or one second on for the manual's `T`).
    pub clock: Millis,
    /// Reads of a clock by any node so far (`clock_gettime`,
    /// `gettimeofday`, and so `rdtsc`, and `timerfd_gettime`): each adds a
    /// nanosecond to what the clocks say after it ([`Self::now_ns`]), as on
    /// Linux two reads differ. Below a millisecond's worth
    /// ([`limits::CLOCK_READS_MAX`](super::limits::CLOCK_READS_MAX)), so
    /// the clock and the reads are written as one number.
    pub clock_reads: u32,
    /// The run's `stream` setting (a read may get part of a message, or
    /// two merged): a constant of the run, like the node count, so not in
    /// the encoding.
    pub stream: bool,
    /// The run's `timeout_byte` setting (the manual's convention: TIMEOUT
    /// may end a read or an accept that has no timeout, with the byte
    /// `T`): a constant of the run, not in the encoding.
    pub timeout_byte: bool,
    /// The run's order of TIMEOUTs: a constant of the run, not in the
    /// encoding.
    pub timeout_order: TimeoutOrder,
    /// The run's `crash_states` setting: a constant of the run, so not in
    /// the encoding either.
    pub crash_states: CrashStates,
    /// The run's `dir_order` setting: a constant of the run, not in the
    /// encoding.
    pub dir_order: DirOrder,
    /// Every node, in node order.
    pub nodes: Vec<NodeWorld>,
    /// Every connection, in label order.
    pub conns: BTreeMap<Label, Conn>,
    /// The ghost log: (node, bytes written on a client connection).
    pub replies: Vec<(u8, Vec<u8>)>,
    /// The choices the nodes' start may make otherwise (crashes, and the
    /// order of a listing's names), as the world START reaches (or such a
    /// choice, for what comes after it in the start) found them, in that
    /// order; empty in every other world, since any action is after the
    /// start.
    pub start_choices: Vec<StartChoice>,
}

impl ProcessWorld {
    /// The first thing that differs between this world and `other`, for
    /// the errors that find two worlds where there should be one: a node's
    /// report, or where their descriptions first differ.
    pub fn difference(&self, other: &ProcessWorld) -> String {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        for (n, (x, y)) in self.nodes.iter().zip(&other.nodes).enumerate() {
            if x.state != y.state {
                return format!("node {n}: state {} then {}", hex(&x.state), hex(&y.state));
            }
            if x.durable != y.durable {
                let d = |v: &Option<Vec<u8>>| v.as_deref().map_or("-".to_string(), hex);
                return format!("node {n}: durable {} then {}", d(&x.durable), d(&y.durable));
            }
            if x != y {
                return format!("node {n}: {}", first_difference(&format!("{x:?}"), &format!("{y:?}")));
            }
        }
        first_difference(&format!("{self:?}"), &format!("{other:?}"))
    }

    /// What the clocks say now, in nanoseconds: the logical clock, and a
    /// nanosecond for each read of a clock before ([`Self::clock_reads`]).
    /// One clock for every node, as a machine has: a time one node read
    /// and sent has passed for the others.
    pub fn now_ns(&self) -> u64 {
        self.clock.saturating_mul(1_000_000).saturating_add(self.clock_reads as u64)
    }

    /// Node `n`'s pid in its life: `VIRTUAL_PID_BASE` plus the node, and
    /// [`limits::NODES_MAX`](super::limits::NODES_MAX) more for each life
    /// before (on Linux a restarted process has a new pid).
    pub fn pid(&self, n: u8) -> i64 {
        let restarts = self.nodes.get(n as usize).map_or(0, |node| node.restarts);
        super::calls::VIRTUAL_PID_BASE + n as i64 + super::limits::NODES_MAX as i64 * restarts as i64
    }

    /// A world before any node has started.
    pub fn new(nodes: u8, budgets: &super::Budgets) -> ProcessWorld {
        let node = NodeWorld {
            life: Life::Live,
            blocked: Blocked::Nothing,
            clients_left: budgets.clients,
            dials: 0,
            timer_conns: 0,
            restarts: 0,
            random_used: 0,
            life_clock_reads: 0,
            inputs: 0,
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
            locals: Vec::new(),
            socket_timeouts: BTreeMap::new(),
            threads: Vec::new(),
            futex_queue: Vec::new(),
        };
        ProcessWorld {
            crashes: budgets.crashes,
            drops: budgets.drops,
            timeouts: budgets.timeouts,
            thread_switches: (budgets.thread_switches > 0).then_some(budgets.thread_switches),
            clock: 0,
            clock_reads: 0,
            stream: false,
            timeout_byte: false,
            timeout_order: TimeoutOrder::Any,
            crash_states: CrashStates::default(),
            dir_order: DirOrder::default(),
            nodes: vec![node; nodes as usize],
            conns: BTreeMap::new(),
            replies: Vec::new(),
            start_choices: Vec::new(),
        }
    }

    /// When node `n`'s wait ends by itself, in logical time: the end of
    /// its sleep, of its read's or accept's receive timeout, of its poll's
    /// timeout or of the earliest armed timer its poll watches, or its
    /// timer's expiry; `None` for a wait only an action ends (a read or
    /// an accept without a timeout, a poll without either).
    pub fn deadline(&self, n: u8) -> Option<Millis> {
        let node = &self.nodes[n as usize];
        node.deadline_of(&node.blocked, &node.watch)
    }

    /// The earliest deadline of every node's wait ([`Self::deadline`]),
    /// its threads' out of the slot included, if any waits for one: under
    /// deadline order, the clock is never more than the drift past it.
    pub fn earliest_deadline(&self) -> Option<Millis> {
        let threads = self.nodes.iter().flat_map(|node| {
            node.threads.iter().filter_map(move |t| match &t.run {
                // A wait that may end now (`changed`) is not timed out
                // (`action::answers_at_choice`): its deadline holds no one
                // back.
                super::threads::ThreadRun::Waits { blocked, watch, changed: false, .. } => {
                    node.deadline_of(blocked, watch)
                }
                _ => None,
            })
        });
        (0..self.nodes.len() as u8).filter_map(|n| self.deadline(n)).chain(threads).min()
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

    /// Removes connections nobody can read any more. A client connection's
    /// checker end never reads, so it goes with its node's end.
    pub fn retire(&mut self) {
        self.conns.retain(|label, c| {
            let dialer_done = label.kind == ConnKind::Client || c.dialer_end.done();
            !(dialer_done && c.target_end.done())
        });
    }

    /// Node `n`'s process is gone: its connections as TCP has them
    /// ([`ProcessWorld::ends_gone`]), its descriptors and blocked call
    /// vanish.
    pub fn node_gone(&mut self, n: u8, crashed: bool) {
        self.ends_gone(n, crashed);
        self.retire();
        let node = &mut self.nodes[n as usize];
        node.fds.clear();
        node.nonblock.clear();
        node.accept_queue.clear();
        node.watch.clear();
        node.epolls.clear();
        node.timers.clear();
        node.waitall.clear();
        node.locals.clear();
        node.socket_timeouts.clear();
        node.blocked = Blocked::Nothing;
        node.threads.clear();
        node.futex_queue.clear();
        node.inputs = 0;
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
        out.extend_from_slice(&self.now_ns().to_le_bytes());
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
        // Only the worlds the start reaches have any: every other world is
        // written as before.
        if !self.start_choices.is_empty() {
            push_count(out, self.start_choices.len());
            for choice in &self.start_choices {
                let c = match *choice {
                    StartChoice::Crash(c) => c,
                    StartChoice::Order { node, listing, way } => {
                        out.extend_from_slice(&[3, node]);
                        out.extend_from_slice(&listing.to_le_bytes());
                        out.extend_from_slice(&way.to_le_bytes());
                        continue;
                    }
                };
                out.extend_from_slice(&[c.node, c.after]);
                out.extend_from_slice(&c.point.to_le_bytes());
                match c.keep {
                    None => out.push(0),
                    Some(Keep::Oldest(j)) => out.extend_from_slice(&[1, j]),
                    Some(Keep::Set(m)) => {
                        out.push(2);
                        out.extend_from_slice(&m.to_le_bytes());
                    }
                }
            }
        }
        // A model without a budget of thread switches is written as before.
        if let Some(left) = self.thread_switches {
            out.push(left);
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
    /// every node's life, every connection with an end at `n`, whole, and
    /// every node's bound sockets (a connect, a bind or a listen reads
    /// them). What else a
    /// run reads are two totals checked against limits (messages in flight,
    /// replies), which the transition cache checks itself. The key of the
    /// transition cache (`transitions`).
    pub fn encode_local(&self, n: u8, out: &mut Vec<u8>) {
        self.encode_node_and_lives(n, out);
        for (label, c) in self.conns.iter().filter(|(l, c)| Self::involves(n, l, c)) {
            push_conn(out, label, c);
        }
        self.encode_ports(out);
    }

    /// What node `n`'s process memory may depend on within a step, into
    /// `out`: [`ProcessWorld::encode_local`] without what travels from it
    /// toward its peers (the messages, and what of them has arrived
    /// there), which no answer the node gets reads. A trail built from this (`Trail::hash`) keeps
    /// two holds apart where the node's own surroundings differ, not where
    /// a peer has read more or less of what the node wrote.
    pub fn encode_memory_key(&self, n: u8, out: &mut Vec<u8>) {
        self.encode_node_and_lives(n, out);
        for (label, c) in self.conns.iter().filter(|(l, c)| Self::involves(n, l, c)) {
            let dialer = Self::dialer_node(label) == Some(n);
            if dialer && c.target == n {
                push_conn(out, label, c);
                continue;
            }
            // What travels toward the peer, and has arrived there, which
            // no answer the node gets reads. The peer's socket stays: its
            // own shutdowns decide what the node's writes get (a review
            // found a SHUT_RD left out make two processes one).
            let peer = if dialer { Side::Target } else { Side::Dialer };
            let mut seen = c.clone();
            match peer {
                Side::Target => {
                    seen.to_target.clear();
                    seen.at_target.clear();
                    seen.split_target = false;
                }
                Side::Dialer => {
                    seen.to_dialer.clear();
                    seen.at_dialer.clear();
                    seen.split_dialer = false;
                }
            }
            push_conn(out, label, &seen);
        }
        self.encode_ports(out);
    }

    /// Node `n`'s part, the clock, and every node's life, into `out`.
    fn encode_node_and_lives(&self, n: u8, out: &mut Vec<u8>) {
        self.encode_node(n, out);
        out.extend_from_slice(&self.now_ns().to_le_bytes());
        for node in &self.nodes {
            out.push(match node.life {
                Life::Live => 0,
                Life::Exited(_) => 1,
                Life::Signaled(_) => 2,
                Life::Down => 3,
            });
        }
    }

    fn push_node(&self, n: usize, out: &mut Vec<u8>) {
        let node = &self.nodes[n];
        let (tag, status) = match node.life {
            Life::Live => (0u8, 0),
            Life::Exited(c) => (1, c),
            Life::Signaled(s) => (2, s),
            Life::Down => (3, 0),
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
        // Bit 6: it has objects inside it (pipes, socketpairs, eventfds),
        // written after those fields.
        let locals = !node.locals.is_empty();
        // Bit 5: it has sockets with timeouts, written last.
        let timeouts = !node.socket_timeouts.is_empty();
        // Bit 4: it has lives before this one, their count after the
        // status; bit 3: it has read a clock in this life, the count after
        // that.
        let restarted = node.restarts > 0;
        let read_clock = node.life_clock_reads > 0;
        // Bit 2: it has a digest of its inputs, after the clock reads.
        let inputs = node.inputs != 0;
        out.push(
            tag | (extended as u8) << 7
                | (locals as u8) << 6
                | (timeouts as u8) << 5
                | (restarted as u8) << 4
                | (read_clock as u8) << 3
                | (inputs as u8) << 2,
        );
        out.extend_from_slice(&status.to_le_bytes());
        if restarted {
            out.push(node.restarts);
        }
        if read_clock {
            out.extend_from_slice(&node.life_clock_reads.to_le_bytes());
        }
        if inputs {
            out.extend_from_slice(&node.inputs.to_le_bytes());
        }
        node.push_threads(out);
        push_blocked(out, &node.blocked);
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
                VFd::Socket { port, listening, addr, reuse, refused } => {
                    out.push(0);
                    out.extend_from_slice(&port.unwrap_or(0).to_le_bytes());
                    out.push(port.is_some() as u8 | (listening as u8) << 1 | (reuse as u8) << 2 | refused << 3);
                    out.extend_from_slice(&addr);
                }
                VFd::Conn { label, side } => {
                    out.push(1);
                    push_label(out, &label);
                    out.push(side as u8);
                }
                VFd::Random { minor } => out.extend_from_slice(&[2, minor]),
                // A duplicate names the instance's lowest descriptor.
                VFd::Epoll { id } if id == fd => out.push(3),
                VFd::Epoll { id } => {
                    out.push(13);
                    push_fd(out, id);
                }
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
                VFd::Device { minor, mode } => out.extend_from_slice(&[7, minor, mode]),
                VFd::Out { stream } => out.extend_from_slice(&[8, stream]),
                VFd::Host { dev, ino, offset, flags } => {
                    out.push(9);
                    out.extend_from_slice(&dev.to_le_bytes());
                    out.extend_from_slice(&ino.to_le_bytes());
                    out.extend_from_slice(&offset.to_le_bytes());
                    out.extend_from_slice(&flags.to_le_bytes());
                }
                VFd::Pipe { id, write } => out.extend_from_slice(&[10, id, write as u8]),
                VFd::Pair { id, end } => out.extend_from_slice(&[11, id, end]),
                VFd::Event { id } => out.extend_from_slice(&[12, id]),
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
                for (&fd, i) in interest {
                    push_fd(out, fd);
                    out.extend_from_slice(&i.events.to_le_bytes());
                    out.extend_from_slice(&i.seen.to_le_bytes());
                    out.extend_from_slice(&i.rank.to_le_bytes());
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
        if locals {
            // In their canonical order, so the number of each is its place.
            push_count(out, node.locals.len());
            for local in &node.locals {
                match local {
                    Local::Pipe { bytes } => {
                        out.push(0);
                        push_bytes(out, bytes);
                    }
                    Local::Pair { seqpacket, ends } => {
                        out.push(1 + *seqpacket as u8);
                        for end in ends {
                            out.push(end.shutdown | (end.reset as u8) << 2);
                            push_queue(out, &end.queue);
                        }
                    }
                    Local::Event { count, semaphore } => {
                        out.push(3 + *semaphore as u8);
                        out.extend_from_slice(&count.to_le_bytes());
                    }
                }
            }
        }
        if timeouts {
            push_count(out, node.socket_timeouts.len());
            for (&fd, t) in &node.socket_timeouts {
                push_fd(out, fd);
                for timeout in [t.receive, t.send] {
                    match timeout {
                        None => out.push(0),
                        Some(jiffies) => {
                            out.push(1);
                            out.extend_from_slice(&jiffies.to_le_bytes());
                        }
                    }
                }
            }
        }
    }

    /// The 128-bit xxh3 fingerprint of the encoding; `buf` is scratch.
    pub fn fingerprint(&self, buf: &mut Vec<u8>) -> Fingerprint {
        self.encode(buf);
        fingerprint(buf)
    }
}

/// What a thread waits in: a tag, a descriptor, and what the wait has
/// of its own (its end, its trail). A read or an accept with a timeout has
/// a tag of its own, so a world without one is written as before timeouts
/// existed.
pub(super) fn push_blocked(out: &mut Vec<u8>, b: &Blocked) {
    let (tag, fd) = match *b {
        Blocked::Nothing => (0u8, 0),
        Blocked::Accept { fd, until: None } => (1, fd),
        Blocked::Read { fd, until: None } => (2, fd),
        Blocked::Sleep { .. } => (3, 0),
        Blocked::Pause => (4, 0),
        Blocked::Poll { .. } => (5, 0),
        Blocked::Timer { fd } => (6, fd),
        Blocked::Accept { fd, until: Some(_) } => (7, fd),
        Blocked::Read { fd, until: Some(_) } => (8, fd),
        Blocked::CrashPoint { .. } => (9, 0),
        Blocked::Woken { left: None, .. } => (10, 0),
        Blocked::Woken { left: Some(_), .. } => (15, 0),
        Blocked::ReadNow { fd, .. } => (11, fd),
        Blocked::AcceptNow { fd, .. } => (12, fd),
        Blocked::WriteNow { fd, .. } => (13, fd),
        Blocked::LookNow { fd, .. } => (14, fd),
        Blocked::Order { fd, .. } => (16, fd),
        Blocked::Futex { until: None, .. } => (17, 0),
        Blocked::Futex { until: Some(_), .. } => (19, 0),
        Blocked::Choice { .. } => (18, 0),
    };
    out.push(tag);
    push_fd(out, fd);
    match *b {
        Blocked::Sleep { until }
        | Blocked::Accept { until: Some(until), .. }
        | Blocked::Read { until: Some(until), .. } => out.extend_from_slice(&until.to_le_bytes()),
        Blocked::CrashPoint { trail }
        | Blocked::Woken { trail, left: None }
        | Blocked::ReadNow { trail, .. }
        | Blocked::AcceptNow { trail, .. }
        | Blocked::WriteNow { trail, .. }
        | Blocked::LookNow { trail, .. }
        | Blocked::Choice { trail } => {
            push_trail(out, &trail);
        }
        Blocked::Woken { trail, left: Some(left) } => {
            push_trail(out, &trail);
            out.extend_from_slice(&left.to_le_bytes());
        }
        Blocked::Order { trail, choices, .. } => {
            push_trail(out, &trail);
            out.extend_from_slice(&choices.to_le_bytes());
        }
        Blocked::Poll { until: None } => out.push(0),
        Blocked::Poll { until: Some(until) } => {
            out.push(1);
            out.extend_from_slice(&until.to_le_bytes());
        }
        Blocked::Futex { addr, bitset, until } => {
            out.extend_from_slice(&addr.to_le_bytes());
            out.extend_from_slice(&bitset.to_le_bytes());
            if let Some(until) = until {
                out.extend_from_slice(&until.to_le_bytes());
            }
        }
        _ => {}
    }
}

/// A length, then the bytes. Every record, message and reply is at most
/// 64 bytes, and a recovery record or a partial one at most 65 (the
/// supervisor enforces the limits before anything enters the world), so
/// its length takes one byte; a longer one would not wrap.
pub(super) fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    push_count(out, b.len());
    out.extend_from_slice(b);
}

/// A count or length: one byte below 255, else 255 and then eight bytes.
pub(super) fn push_count(out: &mut Vec<u8>, n: usize) {
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
pub(super) fn push_fd(out: &mut Vec<u8>, fd: i32) {
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
    out.push(c.target);
    push_fd(out, c.listener);
    out.extend_from_slice(&c.addr);
    out.extend_from_slice(&c.port.to_le_bytes());
    out.extend_from_slice(&[
        c.dialer_end as u8 | flag(&c.at_dialer) | (c.split_dialer as u8) << 6,
        c.target_end as u8 | flag(&c.at_target) | (c.split_target as u8) << 6,
        c.dialer_sock.bits(),
        c.dialer_sock.err,
        c.target_sock.bits(),
        c.target_sock.err,
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

/// A trail: its hash, its holds (bit 7: `acted` follows, where it is not
/// 0, so a trail without it is written as before it existed).
fn push_trail(out: &mut Vec<u8>, trail: &Trail) {
    out.extend_from_slice(&trail.hash.to_le_bytes());
    out.push(trail.holds | ((trail.acted != 0) as u8) << 7);
    if trail.acted != 0 {
        out.extend_from_slice(&trail.acted.to_le_bytes());
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
            many.nodes[0].fds.insert(1000 + fd, VFd::Random { minor: 9 });
        }
        let (a, b) = (bytes(&none), bytes(&many));
        let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
        // Budgets and clock (11), life (5), blocked (3), counters (3),
        // random bytes used (8), the empty state (1), no durable record (1),
        // nothing to recover nor partly written (3).
        let count_at = 11 + 5 + 3 + 3 + 8 + 1 + 1 + 3;
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
        // The node (35 bytes, budgets and clock included) and its
        // descriptor count.
        let node_end = 35 + 1;
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
        // The connection count, its label, target, listener (-1: six
        // bytes), address, port, ends and their sockets.
        let conn_head = 3 + 1 + 6 + 4 + 2 + 2 + 4;
        assert_eq!(first_difference(&conn(0), &conn(256)), Some(node_end + 2 + conn_head), "at the queue's count");
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
        let with_locals = |locals: Vec<Local>, end: VFd| {
            let mut w = one_node();
            w.nodes[0].locals = locals;
            w.nodes[0].fds.insert(4, end);
            w
        };
        let pair = |seqpacket: bool, f: fn(&mut [PairEnd; 2])| {
            let mut ends: [PairEnd; 2] = Default::default();
            f(&mut ends);
            Local::Pair { seqpacket, ends }
        };
        let worlds = [
            one_node(),
            with_conn(&|_| {}),
            with_conn(&|c| c.to_target.push_back(b"m".to_vec())),
            with_conn(&|c| c.at_target.push_back(b"m".to_vec())),
            with_conn(&|c| c.at_dialer.push_back(b"m".to_vec())),
            with_conn(&|c| c.target_end = End::Closed),
            with_conn(&|c| c.target_sock.fin = true),
            with_conn(&|c| c.dialer_sock.fin = true),
            with_conn(&|c| {
                c.target_sock.fin = true;
                c.target_sock.fin_in = true;
            }),
            with_conn(&|c| c.target_sock.shut = Sock::RD),
            with_conn(&|c| c.target_sock.shut = Sock::WR),
            with_conn(&|c| c.target_sock.err = 104),
            with_conn(&|c| c.target_sock.reset = true),
            with_conn(&|c| c.target_sock.rst = true),
            with_conn(&|c| c.listener = 5),
            with_conn(&|c| c.port = 20001),
            with_conn(&|c| c.addr = [127, 0, 0, 2]),
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
                n.epolls.insert(4, BTreeMap::from([(5, Interest { events: 1, seen: 0, rank: 0 })]));
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::from([(5, Interest { events: 1 | Interest::ET, seen: 0, rank: 0 })]));
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::from([(5, Interest { events: 1 | Interest::ET, seen: 4, rank: 0 })]));
            }),
            with_node(&|n| {
                n.epolls.insert(4, BTreeMap::from([(5, Interest { events: 1 | Interest::ET, seen: 4, rank: 1 })]));
            }),
            with_node(&|n| n.blocked = Blocked::Poll { until: None }),
            with_node(&|n| n.blocked = Blocked::Poll { until: Some(0) }),
            with_node(&|n| n.blocked = Blocked::Sleep { until: 0 }),
            with_node(&|n| n.blocked = Blocked::Pause),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail::default(), left: None }),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail { hash: 1, holds: 1, acted: 0 }, left: None }),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail { hash: 1, holds: 2, acted: 0 }, left: None }),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail { hash: 2, holds: 1, acted: 0 }, left: None }),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail::default(), left: Some(0) }),
            with_node(&|n| n.blocked = Blocked::Woken { trail: Trail::default(), left: Some(1) }),
            with_node(&|n| n.life = Life::Down),
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
            with_locals(vec![Local::Pipe { bytes: Vec::new() }], VFd::Pipe { id: 0, write: false }),
            with_locals(vec![Local::Pipe { bytes: b"a".to_vec() }], VFd::Pipe { id: 0, write: false }),
            with_locals(vec![Local::Pipe { bytes: b"b".to_vec() }], VFd::Pipe { id: 0, write: false }),
            with_locals(vec![Local::Pipe { bytes: b"b".to_vec() }], VFd::Pipe { id: 0, write: true }),
            with_locals(vec![Local::Event { count: 0, semaphore: false }], VFd::Event { id: 0 }),
            with_locals(vec![Local::Event { count: 1, semaphore: false }], VFd::Event { id: 0 }),
            with_locals(vec![Local::Event { count: 1, semaphore: true }], VFd::Event { id: 0 }),
            with_locals(vec![pair(false, |_| {})], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |_| {})], VFd::Pair { id: 0, end: 1 }),
            with_locals(vec![pair(true, |_| {})], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[0].queue.push_back(b"m".to_vec()))], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[1].queue.push_back(b"m".to_vec()))], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[0].queue.push_back(Vec::new()))], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[0].shutdown = PairEnd::RCV)], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[0].shutdown = PairEnd::SEND)], VFd::Pair { id: 0, end: 0 }),
            with_locals(vec![pair(false, |e| e[0].reset = true)], VFd::Pair { id: 0, end: 0 }),
            with_node(&|n| n.blocked = Blocked::Read { fd: 4, until: None }),
            with_node(&|n| n.blocked = Blocked::Read { fd: 4, until: Some(0) }),
            with_node(&|n| n.blocked = Blocked::Read { fd: 4, until: Some(1) }),
            with_node(&|n| n.blocked = Blocked::Accept { fd: 4, until: None }),
            with_node(&|n| n.blocked = Blocked::Accept { fd: 4, until: Some(0) }),
            with_node(&|n| n.blocked = Blocked::ReadNow { fd: 4, trail: Trail::default() }),
            with_node(&|n| n.blocked = Blocked::ReadNow { fd: 4, trail: Trail { hash: 1, holds: 1, acted: 0 } }),
            with_node(&|n| n.blocked = Blocked::AcceptNow { fd: 4, trail: Trail::default() }),
            with_node(&|n| n.blocked = Blocked::WriteNow { fd: 4, trail: Trail::default() }),
            with_node(&|n| {
                n.socket_timeouts.insert(4, SocketTimeouts { receive: Some(0), send: None });
            }),
            with_node(&|n| {
                n.socket_timeouts.insert(4, SocketTimeouts { receive: None, send: Some(0) });
            }),
            with_node(&|n| {
                n.socket_timeouts.insert(4, SocketTimeouts { receive: Some(125), send: None });
            }),
            with_node(&|n| {
                n.socket_timeouts.insert(5, SocketTimeouts { receive: Some(125), send: None });
            }),
        ];
        let mut buf = Vec::new();
        let mut seen: Vec<_> = worlds.iter().map(|w| w.fingerprint(&mut buf)).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), worlds.len());
        // A world without any of them is written as before they existed:
        // budgets and clock (11), the node (25), no connection (2), no
        // reply (1).
        assert_eq!(bytes(&one_node()).len(), 39);
    }

    /// Objects inside a node are numbered by the lowest descriptor of
    /// each, whatever order they were made in, so two worlds that differ
    /// only in that order are one state; an object no descriptor is an
    /// end of is forgotten.
    #[test]
    fn objects_inside_a_node_are_numbered_canonically() {
        let pipe = Local::Pipe { bytes: b"x".to_vec() };
        let event = Local::Event { count: 3, semaphore: false };
        // The pipe made first, at fds 10 and 11; the eventfd at fd 4.
        let mut a = one_node();
        let node = &mut a.nodes[0];
        node.locals = vec![pipe.clone(), event.clone()];
        node.fds.insert(10, VFd::Pipe { id: 0, write: false });
        node.fds.insert(11, VFd::Pipe { id: 0, write: true });
        node.fds.insert(4, VFd::Event { id: 1 });
        node.renumber_locals();
        // The eventfd made first.
        let mut b = one_node();
        let node = &mut b.nodes[0];
        node.locals = vec![event.clone(), pipe.clone()];
        node.fds.insert(4, VFd::Event { id: 0 });
        node.fds.insert(10, VFd::Pipe { id: 1, write: false });
        node.fds.insert(11, VFd::Pipe { id: 1, write: true });
        node.renumber_locals();
        assert_eq!(a, b);
        assert_eq!(a.nodes[0].locals, [event, pipe.clone()]);
        assert_eq!(bytes(&a), bytes(&b));
        // Its last descriptor closed, the eventfd is forgotten.
        a.nodes[0].fds.remove(&4);
        a.nodes[0].renumber_locals();
        assert_eq!(a.nodes[0].locals, [pipe]);
        assert_eq!(a.nodes[0].fds[&10], VFd::Pipe { id: 0, write: false });
        a.nodes[0].fds.remove(&10);
        a.nodes[0].fds.remove(&11);
        a.nodes[0].renumber_locals();
        assert!(a.nodes[0].locals.is_empty());
        assert_eq!(bytes(&a), bytes(&one_node()), "as if never made");
    }

    /// Issue 10, 1g: descriptor numbers were written as two bytes, so fd
    /// 65,540 (a node may raise its descriptor limit) was fd 4, in a node's
    /// table and in the call it is blocked in.
    #[test]
    fn descriptor_numbers_past_two_bytes_do_not_wrap() {
        let world = |fd: i32| {
            let mut w = one_node();
            w.nodes[0].fds.insert(fd, VFd::Random { minor: 9 });
            w
        };
        let blocked = |fd: i32| {
            let mut w = one_node();
            w.nodes[0].blocked = Blocked::Read { fd, until: None };
            w
        };
        let mut buf = Vec::new();
        assert_ne!(world(4).fingerprint(&mut buf), world(65_540).fingerprint(&mut buf));
        assert_ne!(blocked(4).fingerprint(&mut buf), blocked(65_540).fingerprint(&mut buf));
        assert_ne!(world(-1).fingerprint(&mut buf), world(65_535).fingerprint(&mut buf));
    }
}

//! Actions of the process front end (manual, "Programs as nodes"; DESIGN
//! 6.2), computed from the world alone: this module reads a
//! [`ProcessWorld`] and never a process.
//!
//! The enumeration order is fixed, so runs are deterministic and
//! counterexamples stable:
//!
//! 1. DELIVER(n, conn) by node, then connection: n is blocked reading
//!    `conn`, or polls it for reading, and a message is travelling toward
//!    it (the oldest is delivered: to the read, or into the end's receive
//!    buffer for the poll); under `stream = true` each is followed by
//!    DELIVER(n, conn, k) for k in 1, len / 2 and len - 1 (distinct, below
//!    len), the first k bytes of a message not split before, and
//!    DELIVER(n, conn, +), the oldest two messages as one;
//! 2. EOF(n, conn) by node, then connection: n is blocked reading `conn`,
//!    or polls it, and its stream has ended there (`Conn::ended`: a FIN, a
//!    reset, an error, with nothing travelling before it; for a poll, only
//!    while that makes an event it waits for, or `POLLHUP`, `POLLERR`);
//! 3. ACCEPT(n, from) by node, then dialer (nodes ascending, then `client`):
//!    n is blocked in `accept` on a listening socket, or polls listening
//!    sockets for reading, and a connection from `from` waits at one of them
//!    (the oldest from that dialer is taken, or put in the node's accept
//!    queue for the poll; connections from one dialer arrive in the order
//!    they were made, connections from different dialers race);
//! 4. RUN(n) by node: n's poll, select or epoll wait has something
//!    ready and is held while more it watches is on its way
//!    (`Blocked::Woken`): RUN returns it with what is ready now, where the
//!    DELIVERs and ACCEPTs above add to it first;
//! 5. DROP(conn, to) by connection label, toward the target then toward the
//!    dialer, while drop budget is left: the oldest message is lost and the
//!    connection reset (`tcp`). On a connection a node dialled to itself
//!    both ends are that node's, so the action names the end too:
//!    DROP(conn, n, target), DROP(conn, n, dialer);
//! 6. TIMEOUT(n) by node, while timeout budget is left: n's wait has a
//!    deadline ([`ProcessWorld::deadline`]: a sleep, a read or an accept
//!    with a receive timeout, a read of an armed timerfd, a poll with a
//!    timeout or watching an armed timerfd), or, under `timeout_byte`, n
//!    is blocked in a read or an accept without one; under deadline
//!    order, only if the clock it leaves is at most the drift past the
//!    earliest deadline of any node's wait. With no budget, when n's wait
//!    has a deadline the clock has passed already (`overdue`), in either
//!    order;
//! 7. CLIENT(n) by node: n is live, has client budget left, and a live node
//!    listens at n's conventional address (a client there would be
//!    refused, and change nothing);
//! 8. CRASH(n) by node, while crash budget is left: n is live; when n has
//!    changes of its data directory not made durable, one CRASH per state
//!    the crash may leave instead ([`crash_states::keeps`]): CRASH(n, j)
//!    for j from 0 to their count (the first j reached the disk), then,
//!    under `crash_states = "ext4"`, CRASH(n, {i, ...}) for each other set
//!    of them ext4 may have written, by their bits.
//! 9. CRASH(n, start k) (and with a data directory `CRASH(n, start k, j)`,
//!    `CRASH(n, start k, {i, ...})`), only in the world START reaches, in
//!    the order the start found them ([`ProcessWorld::start_choices`]):
//!    node n's first life is killed in its start, before the call after
//!    its k-th call with an effect outside its process, and the nodes
//!    after it start then; `CRASH(n, start k after m)`, the same with the
//!    nodes after n up to m started while n was stopped there, before
//!    the crash; in the world that reaches, those of the nodes after n,
//!    while crash budget is left; and ORDER(n, start j, i), the j-th
//!    listing of node n's start that shows names more than one way takes
//!    way i (START takes way 0), where found after the start's other
//!    choices;
//! 10. RESTART(n) by node: n is down after its CRASH (`Life::Down`): its
//!     new life starts, recovers, and runs to quiescence.
//!
//! A node whose threads wait for the world at once has the slot's actions
//! above, and each other such thread's, naming it (`thread k`), after the
//! slot's of the same kind and node ([`enumerate`]).
//!
//! A node held at a crash point (`Blocked::CrashPoint`: after a call with
//! an effect outside the process, while crash budget is left) is in the
//! middle of its step, and only two things can happen to it: RUN(n), it
//! goes on, or its CRASH (as in 8). A node whose listing of its data
//! directory shows names no listing has shown (`Blocked::Order`) is held
//! before the answer, and the only actions are ORDER(n, i), one for each
//! way the new names may fall among those shown (`dir_order`). A node
//! whose next thread is a choice (`Blocked::Choice`: two or more of its
//! threads may run, and thread switches are left) is held too, and the
//! only actions are RUN(n), the fixed thread (the lowest-numbered), and
//! SWITCH(n, t) for each other thread t that may run, spending a switch.
//!
//! Tokens (`Display`, `FromStr`), as counterexample files store them:
//! `DELIVER(1, 0.2)`, `DELIVER(1, 0.2, 3)`, `DELIVER(1, 0.2, +)`, `EOF(1, 0.2)`, `ACCEPT(0, 1)`, `ACCEPT(0, client)`,
//! `DROP(0.2, 1)`, `DROP(0.2, 0, target)`, `DROP(0.2, 0, dialer)`,
//! `TIMEOUT(1)`, `CLIENT(0)`, `RUN(1)`, `RESTART(2)`, `CRASH(2)`, `CRASH(2, 1)`, `CRASH(2, {0, 3})`,
//! `CRASH(2, start 3)`, `CRASH(2, start 3, 1)`, `CRASH(1, start 3 after 2)`, `ORDER(1, 5)`, `SWITCH(0, 2)`,
//! `ORDER(0, start 2, 3)`, and for a thread out of its node's slot
//! `DELIVER(0, c0.1, thread 2)`, `EOF(0, 0.0, thread 1)`,
//! `ACCEPT(0, client, thread 1)`, `TIMEOUT(0, thread 2)`,
//! `RUN(0, thread 2)`; connection labels are described
//! in [`super::world::Label`]. A DROP's third argument appears exactly on a
//! node's connection to itself, so every other token reads as it always
//! did. A CRASH's set is written only where no j says the same (it is no
//! prefix), so the manual's tokens keep their meaning.

use std::fmt;
use std::str::FromStr;

use nix::libc;

use super::crash_states::{self, Keep};
use super::world::{Blocked, ConnKind, End, Label, Life, ProcessWorld, Side, StartCrash, TimeoutOrder, VFd};

/// Poll events that mean "can read".
const IN: i16 = libc::POLLIN | libc::POLLRDNORM;

/// How much a DELIVER hands over: the oldest message as it was written
/// (always), or, under `stream = true`, only its first bytes or it and the
/// next one merged, as TCP may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The whole message, as it was written.
    Whole,
    /// The first `k` bytes, `0 < k < len`; the rest stays first, and is
    /// not split again.
    First(u16),
    /// The oldest message and the next one, as one read.
    Merged,
}

/// One possible step of the process environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessAction {
    /// DELIVER: the oldest message travelling toward `node` on `conn`
    /// reaches it, to its blocked read or into its receive buffer.
    Deliver {
        /// The receiving node.
        node: u8,
        /// The connection.
        conn: Label,
        /// How much of it: [`Part::Whole`] unless `stream = true`.
        part: Part,
        /// The thread it answers, where its node has several waiting for
        /// the world and it is not the slot's (the lowest-numbered of
        /// them): `None` for the slot's.
        thread: Option<u8>,
    },
    /// EOF: the peer's FIN on `conn` arrives at `node`'s read (or poll),
    /// or its read reaches the end of its stream: 0 after a FIN, the
    /// pending error after a reset.
    Eof {
        /// The reading node.
        node: u8,
        /// The connection.
        conn: Label,
        /// The thread it answers, where its node has several waiting for
        /// the world and it is not the slot's (the lowest-numbered of
        /// them): `None` for the slot's.
        thread: Option<u8>,
    },
    /// ACCEPT: `node` takes the oldest connection waiting from `from`.
    Accept {
        /// The accepting node.
        node: u8,
        /// The dialing node, or `None` for a client of the checker.
        from: Option<u8>,
        /// The thread it answers, where its node has several waiting for
        /// the world and it is not the slot's (the lowest-numbered of
        /// them): `None` for the slot's.
        thread: Option<u8>,
    },
    /// The oldest message on `conn` travelling toward node `to`; `end`
    /// names which of its ends on a connection node `to` dialled to itself,
    /// where `to` alone does not say, and is `None` on every other.
    Drop {
        /// The connection.
        conn: Label,
        /// The node the lost message travelled toward.
        to: u8,
        /// Which end, on a connection a node dialled to itself.
        end: Option<Side>,
    },
    /// TIMEOUT: `node`'s wait (a sleep, a read or an accept with a
    /// receive timeout, a timerfd, a poll with a timeout) ends at its
    /// deadline, the logical clock moving to it and one timeout spent; a
    /// wait whose deadline the clock has passed already ends with neither.
    /// Under `timeout_byte` a read or an accept with no timeout may end
    /// too (a `T`), the clock moving one second.
    Timeout {
        /// The waiting node.
        node: u8,
        /// The thread it answers, where its node has several waiting for
        /// the world and it is not the slot's (the lowest-numbered of
        /// them): `None` for the slot's.
        thread: Option<u8>,
    },
    /// CLIENT: a client of the checker connects to `node` and sends the
    /// model's request (if not empty), spending one of the node's
    /// clients.
    Client {
        /// The node connected to.
        node: u8,
    },
    /// RUN: `node`, held at a crash point (after a call with an effect
    /// outside it), goes on.
    Run {
        /// The node.
        node: u8,
        /// The thread it answers, where its node has several waiting for
        /// the world and it is not the slot's (the lowest-numbered of
        /// them): `None` for the slot's.
        thread: Option<u8>,
    },
    /// SWITCH: node `node`, held where its next thread is a choice
    /// (`Blocked::Choice`), runs thread `thread` rather than the fixed
    /// one, spending one of the model's thread switches.
    Switch {
        /// The node.
        node: u8,
        /// The thread that runs next, by the world's number.
        thread: u8,
    },
    /// ORDER: `node`'s listing of its data directory, held where it shows
    /// names no listing has shown, shows them the `choice`-th way among
    /// those shown before (`dir_order`), and the node goes on.
    Order {
        /// The node.
        node: u8,
        /// Which way, from 0.
        choice: u32,
    },
    /// CRASH: `node`'s process is killed, spending one crash; the node is
    /// down until its RESTART.
    Crash {
        /// The node.
        node: u8,
        /// With changes of its data directory pending, which of them
        /// reached the disk; `None` when none is pending.
        keep: Option<Keep>,
    },
    /// CRASH while the nodes start: a node's first life is killed in its
    /// start, after a call with an effect outside it, spending one crash,
    /// and the nodes after it start then. Enabled only in the world START
    /// reaches, and in the world such a crash reaches for the nodes after
    /// its ([`ProcessWorld::start_choices`]).
    StartCrash(StartCrash),
    /// ORDER in a node's start: its `listing`-th listing there (from 1)
    /// that shows names more than one way takes way `way` (START takes way
    /// 0 at each). Enabled, as a crash in a start, only in the world START
    /// reaches, and in the worlds such choices reach for what comes after
    /// them in the start.
    StartOrder {
        /// The node.
        node: u8,
        /// Which of its listings, from 1.
        listing: u32,
        /// Which way, from 1.
        way: u32,
    },
    /// RESTART: `node`, down after a CRASH, starts its new life, which
    /// recovers from fd 193 and its data directory.
    Restart {
        /// The node.
        node: u8,
    },
}

impl ProcessAction {
    /// The node whose process the action changes: the one it answers, or
    /// the one CRASH restarts. CLIENT and DROP change only the world.
    pub fn node(&self) -> Option<u8> {
        match *self {
            ProcessAction::Deliver { node, .. }
            | ProcessAction::Eof { node, .. }
            | ProcessAction::Accept { node, .. }
            | ProcessAction::Timeout { node, .. }
            | ProcessAction::Run { node, .. }
            | ProcessAction::Order { node, .. }
            | ProcessAction::Switch { node, .. }
            | ProcessAction::Crash { node, .. }
            | ProcessAction::StartCrash(StartCrash { node, .. })
            | ProcessAction::StartOrder { node, .. }
            | ProcessAction::Restart { node } => Some(node),
            ProcessAction::Drop { .. } | ProcessAction::Client { .. } => None,
        }
    }

    /// The thread the action answers, where it names one (`thread k`):
    /// a thread waiting for the world out of its node's slot.
    pub fn thread(&self) -> Option<u8> {
        match *self {
            ProcessAction::Deliver { thread, .. }
            | ProcessAction::Eof { thread, .. }
            | ProcessAction::Accept { thread, .. }
            | ProcessAction::Timeout { thread, .. }
            | ProcessAction::Run { thread, .. } => thread,
            _ => None,
        }
    }

    /// The same action for thread `k` (out of its node's slot); itself
    /// for an action that answers no thread.
    fn on(mut self, k: u8) -> ProcessAction {
        if let ProcessAction::Deliver { thread, .. }
        | ProcessAction::Eof { thread, .. }
        | ProcessAction::Accept { thread, .. }
        | ProcessAction::Timeout { thread, .. }
        | ProcessAction::Run { thread, .. } = &mut self
        {
            *thread = Some(k);
        }
        self
    }

    /// Whether it answers a waiting thread of node `n`: a DELIVER, EOF,
    /// ACCEPT, TIMEOUT or RUN (of a woken poll) of `n`.
    fn answers_thread_of(&self, n: u8) -> bool {
        self.node() == Some(n)
            && matches!(
                self,
                ProcessAction::Deliver { .. }
                    | ProcessAction::Eof { .. }
                    | ProcessAction::Accept { .. }
                    | ProcessAction::Timeout { .. }
                    | ProcessAction::Run { .. }
            )
    }

    /// Where the action's kind comes in the enumeration, and for the
    /// kinds that answer a thread, its node: the key the actions of
    /// threads out of the slot are merged by.
    fn rank(&self) -> (u8, u8) {
        match *self {
            ProcessAction::Deliver { node, .. } => (1, node),
            ProcessAction::Eof { node, .. } => (2, node),
            ProcessAction::Accept { node, .. } => (3, node),
            ProcessAction::Run { node, .. } => (4, node),
            ProcessAction::Drop { .. } => (5, 0),
            ProcessAction::Timeout { node, .. } => (6, node),
            ProcessAction::Client { .. } => (7, 0),
            ProcessAction::Crash { .. } => (8, 0),
            ProcessAction::StartCrash(_) | ProcessAction::StartOrder { .. } => (9, 0),
            ProcessAction::Restart { .. } => (10, 0),
            ProcessAction::Order { .. } | ProcessAction::Switch { .. } => (0, 0),
        }
    }

    /// The action that makes start choice `c`.
    pub fn start_choice(c: super::world::StartChoice) -> ProcessAction {
        match c {
            super::world::StartChoice::Crash(c) => ProcessAction::StartCrash(c),
            super::world::StartChoice::Order { node, listing, way } => ProcessAction::StartOrder { node, listing, way },
        }
    }

    /// The start choice the action makes, if it is one.
    pub fn as_start_choice(&self) -> Option<super::world::StartChoice> {
        match *self {
            ProcessAction::StartCrash(c) => Some(super::world::StartChoice::Crash(c)),
            ProcessAction::StartOrder { node, listing, way } => {
                Some(super::world::StartChoice::Order { node, listing, way })
            }
            _ => None,
        }
    }

    /// For a DROP, the connection and the end its lost message travels
    /// toward.
    pub fn dropped(&self) -> Option<(Label, Side)> {
        let ProcessAction::Drop { conn, to, end } = *self else { return None };
        let side = end.unwrap_or(match ProcessWorld::dialer_node(&conn) {
            Some(d) if d == to => Side::Dialer,
            _ => Side::Target,
        });
        Some((conn, side))
    }

    /// The node whose blocked process the action answers, so whose
    /// process must run: every action of [`ProcessAction::node`] but CRASH,
    /// which kills it, and RESTART, which starts a new life instead.
    pub fn node_process(&self) -> Option<u8> {
        match self {
            ProcessAction::Crash { .. }
            | ProcessAction::StartCrash(_)
            | ProcessAction::StartOrder { .. }
            | ProcessAction::Restart { .. } => None,
            _ => self.node(),
        }
    }
}

/// Lists the actions enabled in `world`, in the documented order, into `out`
/// (cleared first).
///
/// A node with several threads waiting for the world (SEMANTICS,
/// "Threads") holds the lowest-numbered in its slot, and the actions above
/// are the slot's; each other such thread k, waiting out of the slot, has
/// the actions it would have in the slot too, naming it (`thread k`),
/// after the slot's of the same kind and node. None while the node is held
/// in the middle of a step: that is atomic, with threads as without.
pub fn enumerate(world: &ProcessWorld, out: &mut Vec<ProcessAction>) {
    if !enumerate_slots(world, out) {
        return;
    }
    let mut more = Vec::new();
    let mut threads = Vec::new();
    for (n, node) in world.nodes.iter().enumerate() {
        if node.threads.is_empty() || node.blocked.mid_step() {
            continue;
        }
        for k in node.outward_out_of_slot() {
            let mut w = world.clone();
            w.nodes[n].swap_slot(k, None);
            enumerate_slots(&w, &mut more);
            threads.extend(more.iter().filter(|a| a.answers_thread_of(n as u8)).map(|a| a.on(k as u8)));
        }
    }
    if threads.is_empty() {
        return;
    }
    out.extend(threads);
    // Stable: each kind's order by node, the slot's first, then the
    // threads out of it by number.
    out.sort_by_key(ProcessAction::rank);
}

/// The actions for node `n`'s threads waiting for the world out of its
/// slot, where `n` is held at a choice of its next thread
/// (`Blocked::Choice`) with switches left: the world answers one of them
/// before the node's running thread goes on (or before the fixed thread
/// runs), spending a switch. Each names its thread, in thread order.
pub fn answers_at_choice(world: &ProcessWorld, n: u8) -> Vec<ProcessAction> {
    let mut out = Vec::new();
    let mut more = Vec::new();
    for k in world.nodes[n as usize].outward_out_of_slot() {
        let mut w = world.clone();
        w.nodes[n as usize].answer_at_choice(k);
        if !enumerate_slots(&w, &mut more) {
            continue;
        }
        // A wait that may end now (`Waits { changed }`) is not timed out:
        // Linux looks at what it waits on before its timeout.
        let may_end =
            matches!(world.nodes[n as usize].threads[k].run, super::threads::ThreadRun::Waits { changed: true, .. });
        out.extend(
            more.iter()
                .filter(|a| a.answers_thread_of(n) && !(may_end && matches!(a, ProcessAction::Timeout { .. })))
                .map(|a| a.on(k as u8)),
        );
    }
    out
}

/// The actions enabled in `world` for each node's slot; `false` where a
/// node held in the middle of its step leaves no other action.
fn enumerate_slots(world: &ProcessWorld, out: &mut Vec<ProcessAction>) -> bool {
    out.clear();
    let nodes = world.nodes.len() as u8;
    // A node held at a crash point is in the middle of its step: it goes
    // on, or crashes there; nothing else happens meanwhile.
    if let Some(n) = (0..nodes).find(|&n| matches!(world.nodes[n as usize].blocked, Blocked::CrashPoint { .. })) {
        out.push(ProcessAction::Run { node: n, thread: None });
        crashes(world, n, out);
        return false;
    }
    // A node held where its next thread is a choice: the fixed one, or
    // another while switches are left; nothing else happens meanwhile.
    for (n, node) in world.nodes.iter().enumerate() {
        if let Blocked::Choice { .. } = node.blocked {
            out.push(ProcessAction::Run { node: n as u8, thread: None });
            if world.thread_switches.is_some_and(|s| s > 0) {
                out.extend(
                    node.switch_to().into_iter().map(|k| ProcessAction::Switch { node: n as u8, thread: k as u8 }),
                );
                out.extend(answers_at_choice(world, n as u8));
            }
            return false;
        }
    }
    // A listing held where it shows new names: which way they fall is the
    // file system's, decided before anything else happens (in START it is
    // a choice of the start's instead, never held).
    for (n, node) in world.nodes.iter().enumerate() {
        if let Blocked::Order { choices, .. } = node.blocked {
            out.extend((0..choices).map(|choice| ProcessAction::Order { node: n as u8, choice }));
            return false;
        }
    }
    let reading = |n: u8| match world.nodes[n as usize].blocked {
        Blocked::Read { fd, .. } | Blocked::ReadNow { fd, .. } => world.conn_of(n, fd),
        _ => None,
    };
    // The connection ends a polling node watches for any of `mask`, by
    // label: for input or its peer's hang-up (a message arriving where
    // only the hang-up is watched leaves the poll waiting).
    let watched = |n: u8, mask: i16| -> Vec<(Label, Side)> {
        let node = &world.nodes[n as usize];
        if !matches!(node.blocked, Blocked::Poll { .. } | Blocked::Woken { .. }) {
            return Vec::new();
        }
        let mut ends: Vec<(Label, Side)> = node
            .watch
            .iter()
            .filter(|(_, events)| **events & mask != 0)
            .filter_map(|(fd, _)| world.conn_of(n, *fd))
            .collect();
        ends.sort_by_key(|(label, _)| *label);
        ends
    };
    // A held observation ([`Blocked::LookNow`]) of a connection's end.
    let looking = |n: u8| match world.nodes[n as usize].blocked {
        Blocked::LookNow { fd, .. } => world.conn_of(n, fd),
        _ => None,
    };
    for n in 0..nodes {
        for (conn, side) in reading(n).into_iter().chain(looking(n)).chain(watched(n, IN | libc::POLLRDHUP)) {
            let Some(c) = world.conns.get(&conn) else { continue };
            let queue = c.queue(side);
            let Some(head) = queue.front() else { continue };
            out.push(ProcessAction::Deliver { node: n, conn, part: Part::Whole, thread: None });
            if !world.stream {
                continue;
            }
            // A byte stream: a message may come in two parts, split once,
            // at its first byte, its middle or its last byte; and the
            // oldest two may come as one.
            if !c.split(side) && head.len() >= 2 {
                let mut at = vec![1, head.len() / 2, head.len() - 1];
                at.dedup();
                for k in at {
                    out.push(ProcessAction::Deliver { node: n, conn, part: Part::First(k as u16), thread: None });
                }
            }
            if queue.len() >= 2 {
                out.push(ProcessAction::Deliver { node: n, conn, part: Part::Merged, thread: None });
            }
        }
    }
    for n in 0..nodes {
        // A reader waiting at an end whose stream has ended (a reset
        // there, nothing travelling before it), or where the peer's FIN or
        // reset is on its way with nothing before it.
        if let Some((conn, side)) = reading(n)
            && world.conns.get(&conn).is_none_or(|c| c.ended(side) || c.end_on_its_way(side))
        {
            out.push(ProcessAction::Eof { node: n, conn, thread: None });
        }
        // A write that may come before its peer's close: EOF makes the
        // close come first, once the close is on its way.
        if let Blocked::WriteNow { fd, .. } = world.nodes[n as usize].blocked
            && let Some((conn, side)) = world.conn_of(n, fd)
            && world.conns.get(&conn).is_some_and(|c| c.close_on_its_way(side))
        {
            out.push(ProcessAction::Eof { node: n, conn, thread: None });
        }
        // An observation that may come after its end's FIN or reset.
        if let Some((conn, side)) = looking(n)
            && world.conns.get(&conn).is_some_and(|c| c.end_on_its_way(side))
        {
            out.push(ProcessAction::Eof { node: n, conn, thread: None });
        }
        // A polling node: a watched end's FIN or reset is on its way, or the end it
        // found not ready has come to its end since (a poll reports the
        // hang-up and the error unasked). A woken wait has only the first:
        // RUN returns it with the end's events as they are.
        let node = &world.nodes[n as usize];
        let woken = matches!(node.blocked, Blocked::Woken { .. });
        if woken || matches!(node.blocked, Blocked::Poll { .. }) {
            let mut ended: Vec<Label> = Vec::new();
            for (&fd, &asked) in &node.watch {
                let Some((conn, side)) = world.conn_of(n, fd) else { continue };
                let Some(c) = world.conns.get(&conn) else { continue };
                let unasked = libc::POLLHUP | libc::POLLERR;
                let now = c.poll_events(side) & (asked | unasked) & !(libc::POLLOUT | libc::POLLWRNORM);
                if c.end_on_its_way(side) || !woken && c.ended(side) && now != 0 {
                    ended.push(conn);
                }
            }
            ended.sort();
            ended.dedup();
            out.extend(ended.into_iter().map(|conn| ProcessAction::Eof { node: n, conn, thread: None }));
        }
    }
    for n in 0..nodes {
        let node = &world.nodes[n as usize];
        let polls_listener = matches!(node.blocked, Blocked::Poll { .. } | Blocked::Woken { .. })
            && node.watch.iter().any(|(fd, events)| {
                events & IN != 0 && matches!(node.fds.get(fd), Some(VFd::Socket { listening: true, .. }))
            });
        if !matches!(node.blocked, Blocked::Accept { .. } | Blocked::AcceptNow { .. }) && !polls_listener {
            continue;
        }
        // The listening sockets it waits at.
        let listeners: Vec<i32> = match node.blocked {
            Blocked::Accept { fd, .. } | Blocked::AcceptNow { fd, .. } => vec![fd],
            _ => node.watch.iter().filter(|(_, e)| **e & IN != 0).map(|(fd, _)| *fd).collect(),
        };
        let mut from: Vec<Option<u8>> = world
            .conns
            .iter()
            .filter(|(l, c)| {
                c.target == n
                    && c.target_end == End::Pending
                    && listeners.contains(&c.listener)
                    && !node.accept_queue.contains(l)
            })
            .filter_map(|(l, _)| match l.kind {
                ConnKind::Node => Some(Some(l.node)),
                ConnKind::Client => Some(None),
                ConnKind::Timer => None,
            })
            .collect();
        // Nodes ascending, then the client (`None` sorts first in Option).
        from.sort_by_key(|f| (f.is_none(), *f));
        from.dedup();
        out.extend(from.into_iter().map(|from| ProcessAction::Accept { node: n, from, thread: None }));
    }
    for n in 0..nodes {
        // A woken wait returns with what is ready now; a read or an
        // accept that does not wait, with nothing arrived, with EAGAIN; a
        // write that may come before its peer's close, so; an observation,
        // from the world as it is then.
        if matches!(
            world.nodes[n as usize].blocked,
            Blocked::Woken { .. }
                | Blocked::ReadNow { .. }
                | Blocked::AcceptNow { .. }
                | Blocked::WriteNow { .. }
                | Blocked::LookNow { .. }
        ) {
            out.push(ProcessAction::Run { node: n, thread: None });
        }
    }
    if world.drops > 0 {
        for (label, c) in &world.conns {
            let dialer = ProcessWorld::dialer_node(label);
            // Both ends are one node's: the action names the end.
            let end = |side| (dialer == Some(c.target)).then_some(side);
            if !c.to_target.is_empty() {
                out.push(ProcessAction::Drop { conn: *label, to: c.target, end: end(Side::Target) });
            }
            if let (false, Some(d)) = (c.to_dialer.is_empty(), dialer) {
                out.push(ProcessAction::Drop { conn: *label, to: d, end: end(Side::Dialer) });
            }
        }
    }
    // Under deadline order, the latest second the clock may reach: the
    // drift past the earliest deadline of any wait, none if none waits.
    let horizon = match world.timeout_order {
        TimeoutOrder::Any => None,
        TimeoutOrder::Deadline { drift_ms } => {
            world.earliest_deadline().map(|earliest| earliest.saturating_add(drift_ms))
        }
    };
    for n in 0..nodes {
        let node = &world.nodes[n as usize];
        // Where the clock stands after TIMEOUT(n): its wait's deadline,
        // or one second on for the manual's `T` in a read or an accept
        // that has no timeout of its own.
        let clock_after = match (world.deadline(n), node.blocked) {
            (Some(deadline), _) => Some(deadline),
            (None, Blocked::Read { .. } | Blocked::Accept { .. }) if world.timeout_byte => {
                Some(world.clock.saturating_add(super::world::T_MS))
            }
            _ => None,
        };
        let budgeted =
            world.timeouts > 0 && clock_after.is_some_and(|after| horizon.is_none_or(|latest| after <= latest));
        // A wait whose deadline another node's TIMEOUT passed ends with no
        // budget: time has passed already, only the waking is left.
        if budgeted || world.overdue(n) {
            out.push(ProcessAction::Timeout { node: n, thread: None });
        }
    }
    for n in 0..nodes {
        // A client dials node n's port; where nothing listens it is
        // refused, and nothing happens.
        let node = &world.nodes[n as usize];
        if node.life == Life::Live && node.clients_left > 0 && world.client_listener(n).is_some() {
            out.push(ProcessAction::Client { node: n });
        }
    }
    for n in 0..nodes {
        crashes(world, n, out);
    }
    // The world the start reaches: the other choices its start could have
    // made (crashes, found with budget left; orders of listings).
    out.extend(world.start_choices.iter().map(|&c| ProcessAction::start_choice(c)));
    for n in 0..nodes {
        if world.nodes[n as usize].life == Life::Down {
            out.push(ProcessAction::Restart { node: n });
        }
    }
    true
}

/// CRASH(n) of live node `n`, while crash budget is left; with changes of
/// its data directory pending, one CRASH per state the crash may leave.
fn crashes(world: &ProcessWorld, n: u8, out: &mut Vec<ProcessAction>) {
    let node = &world.nodes[n as usize];
    if world.crashes == 0 || node.life != Life::Live {
        return;
    }
    // As a core's CRASH(n, j): any prefix of the changes not made durable
    // reached the disk; and under ext4's orders, more.
    match node.disk.pending.len() {
        0 => out.push(ProcessAction::Crash { node: n, keep: None }),
        _ => out.extend(
            crash_states::keeps(world.crash_states, &node.disk)
                .into_iter()
                .map(|k| ProcessAction::Crash { node: n, keep: Some(k) }),
        ),
    }
}

impl fmt::Display for ProcessAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProcessAction::Deliver { node, conn, part: Part::Whole, thread } => {
                write!(f, "DELIVER({node}, {conn}{})", On(thread))
            }
            ProcessAction::Deliver { node, conn, part: Part::First(k), thread } => {
                write!(f, "DELIVER({node}, {conn}, {k}{})", On(thread))
            }
            ProcessAction::Deliver { node, conn, part: Part::Merged, thread } => {
                write!(f, "DELIVER({node}, {conn}, +{})", On(thread))
            }
            ProcessAction::Eof { node, conn, thread } => write!(f, "EOF({node}, {conn}{})", On(thread)),
            ProcessAction::Accept { node, from: Some(d), thread } => write!(f, "ACCEPT({node}, {d}{})", On(thread)),
            ProcessAction::Accept { node, from: None, thread } => write!(f, "ACCEPT({node}, client{})", On(thread)),
            ProcessAction::Drop { conn, to, end: None } => write!(f, "DROP({conn}, {to})"),
            ProcessAction::Drop { conn, to, end: Some(Side::Target) } => write!(f, "DROP({conn}, {to}, target)"),
            ProcessAction::Drop { conn, to, end: Some(Side::Dialer) } => write!(f, "DROP({conn}, {to}, dialer)"),
            ProcessAction::Timeout { node, thread } => write!(f, "TIMEOUT({node}{})", On(thread)),
            ProcessAction::Client { node } => write!(f, "CLIENT({node})"),
            ProcessAction::Run { node, thread } => write!(f, "RUN({node}{})", On(thread)),
            ProcessAction::Order { node, choice } => write!(f, "ORDER({node}, {choice})"),
            ProcessAction::Switch { node, thread } => write!(f, "SWITCH({node}, {thread})"),
            ProcessAction::StartOrder { node, listing, way } => write!(f, "ORDER({node}, start {listing}, {way})"),
            ProcessAction::Restart { node } => write!(f, "RESTART({node})"),
            ProcessAction::Crash { node, keep } => write!(f, "CRASH({node}{})", Kept(keep)),
            ProcessAction::StartCrash(StartCrash { node, point, keep, after }) if after == node => {
                write!(f, "CRASH({node}, start {point}{})", Kept(keep))
            }
            ProcessAction::StartCrash(StartCrash { node, point, keep, after }) => {
                write!(f, "CRASH({node}, start {point} after {after}{})", Kept(keep))
            }
        }
    }
}

/// A token's thread, last: nothing for the slot's, `, thread k` for
/// another.
struct On(Option<u8>);

impl fmt::Display for On {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(k) => write!(f, ", thread {k}"),
        }
    }
}

/// A CRASH token's last argument: nothing, `, j` or `, {i, ...}`.
struct Kept(Option<Keep>);

impl fmt::Display for Kept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(Keep::Oldest(j)) => write!(f, ", {j}"),
            Some(Keep::Set(m)) => {
                let kept: Vec<String> = (0..64).filter(|i| m >> i & 1 != 0).map(|i: u32| i.to_string()).collect();
                write!(f, ", {{{}}}", kept.join(", "))
            }
        }
    }
}

/// A token that is not a process action.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad process action `{0}`")]
pub struct BadProcessAction(pub String);

impl FromStr for ProcessAction {
    type Err = BadProcessAction;

    fn from_str(s: &str) -> Result<ProcessAction, BadProcessAction> {
        let bad = || BadProcessAction(s.to_string());
        let open = s.find('(').ok_or_else(bad)?;
        let inner = s[open + 1..].strip_suffix(')').ok_or_else(bad)?;
        if &s[..open] == "CRASH" {
            return crash_from_str(inner).ok_or_else(bad);
        }
        let mut args: Vec<&str> = inner.split(',').map(str::trim).collect();
        // A thread other than the slot's, last (`, thread k`), on the
        // actions that answer one.
        let thread = match args.last().and_then(|a| a.strip_prefix("thread ")) {
            Some(k) if matches!(&s[..open], "DELIVER" | "EOF" | "ACCEPT" | "TIMEOUT" | "RUN") => {
                args.pop();
                Some(k.parse::<u8>().map_err(|_| bad())?)
            }
            _ => None,
        };
        let node =
            |i: usize| -> Result<u8, BadProcessAction> { args.get(i).ok_or_else(bad)?.parse().map_err(|_| bad()) };
        let label =
            |i: usize| -> Result<Label, BadProcessAction> { args.get(i).ok_or_else(bad)?.parse().map_err(|_| bad()) };
        let arity = |n: usize| if args.len() == n { Ok(()) } else { Err(bad()) };
        Ok(match &s[..open] {
            "DELIVER" => {
                let part = match args.get(2) {
                    None => Part::Whole,
                    Some(&"+") => Part::Merged,
                    Some(k) => match k.parse::<u16>() {
                        Ok(k) if k > 0 => Part::First(k),
                        _ => return Err(bad()),
                    },
                };
                if args.len() > 3 {
                    return Err(bad());
                }
                ProcessAction::Deliver { node: node(0)?, conn: label(1)?, part, thread }
            }
            "EOF" => {
                arity(2)?;
                ProcessAction::Eof { node: node(0)?, conn: label(1)?, thread }
            }
            "ACCEPT" => {
                arity(2)?;
                let from = if args[1] == "client" { None } else { Some(node(1)?) };
                ProcessAction::Accept { node: node(0)?, from, thread }
            }
            "DROP" => {
                let (conn, to) = (label(0)?, node(1)?);
                let end = match args.get(2) {
                    None => None,
                    Some(&"target") => Some(Side::Target),
                    Some(&"dialer") => Some(Side::Dialer),
                    Some(_) => return Err(bad()),
                };
                // An end is named exactly on a node's connection to itself.
                if args.len() > 3 || (end.is_some() && ProcessWorld::dialer_node(&conn) != Some(to)) {
                    return Err(bad());
                }
                ProcessAction::Drop { conn, to, end }
            }
            "TIMEOUT" => {
                arity(1)?;
                ProcessAction::Timeout { node: node(0)?, thread }
            }
            "CLIENT" => {
                arity(1)?;
                ProcessAction::Client { node: node(0)? }
            }
            "RUN" => {
                arity(1)?;
                ProcessAction::Run { node: node(0)?, thread }
            }
            "SWITCH" => {
                arity(2)?;
                ProcessAction::Switch { node: node(0)?, thread: args[1].parse().map_err(|_| bad())? }
            }
            "RESTART" => {
                arity(1)?;
                ProcessAction::Restart { node: node(0)? }
            }
            "ORDER" if args.len() == 3 => {
                let listing = args[1].strip_prefix("start ").ok_or_else(bad)?.parse().map_err(|_| bad())?;
                let way = args[2].parse().map_err(|_| bad())?;
                if listing == 0 || way == 0 {
                    return Err(bad());
                }
                ProcessAction::StartOrder { node: node(0)?, listing, way }
            }
            "ORDER" => {
                arity(2)?;
                ProcessAction::Order { node: node(0)?, choice: args[1].parse().map_err(|_| bad())? }
            }
            _ => return Err(bad()),
        })
    }
}

/// A CRASH token's arguments: `n`, `n, j` or `n, {i, ...}`, the set
/// ascending, below 64 and no prefix (which `n, j` says); in a start,
/// `n, start k` and then either of those.
fn crash_from_str(inner: &str) -> Option<ProcessAction> {
    let (node, rest) = match inner.split_once(',') {
        None => (inner, None),
        Some((node, rest)) => (node, Some(rest.trim())),
    };
    let node = node.trim().parse().ok()?;
    if let Some(start) = rest.and_then(|r| r.strip_prefix("start ")) {
        let (point, rest) = match start.split_once(',') {
            None => (start, None),
            Some((point, rest)) => (point, Some(rest.trim())),
        };
        let (point, after) = match point.split_once(" after ") {
            None => (point, node),
            Some((point, after)) => (point, after.trim().parse().ok().filter(|&m| m > node)?),
        };
        let point = point.trim().parse().ok().filter(|&k| k > 0)?;
        return Some(ProcessAction::StartCrash(StartCrash { node, point, keep: keep_from_str(rest)?, after }));
    }
    Some(ProcessAction::Crash { node, keep: keep_from_str(rest)? })
}

/// What a CRASH token keeps: nothing said, `j`, or `{i, ...}`.
fn keep_from_str(rest: Option<&str>) -> Option<Option<Keep>> {
    Some(match rest {
        None => None,
        Some(set) if set.starts_with('{') => {
            let items = set.strip_prefix('{')?.strip_suffix('}')?;
            let mut mask = 0u64;
            let mut last = None;
            for item in items.split(',') {
                let i: u32 = item.trim().parse().ok()?;
                if i >= 64 || last.is_some_and(|l| l >= i) {
                    return None;
                }
                mask |= 1 << i;
                last = Some(i);
            }
            if mask == Keep::Oldest(mask.count_ones() as u8).mask() {
                return None;
            }
            Some(Keep::Set(mask))
        }
        Some(j) => Some(Keep::Oldest(j.parse().ok()?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes blocked in `a` and `b`, the clock at `clock`, `timeouts`
    /// left, under `order` and `timeout_byte`: the nodes TIMEOUT is
    /// enabled for.
    fn timeouts_enabled(
        a: Blocked,
        b: Blocked,
        clock: super::super::world::Millis,
        timeouts: u8,
        order: TimeoutOrder,
        byte: bool,
    ) -> Vec<u8> {
        let mut w = ProcessWorld::new(2, &crate::process::Budgets { timeouts, ..Default::default() });
        w.nodes[0].blocked = a;
        w.nodes[1].blocked = b;
        w.clock = clock;
        w.timeout_order = order;
        w.timeout_byte = byte;
        let mut out = Vec::new();
        enumerate(&w, &mut out);
        out.iter()
            .filter_map(|a| if let ProcessAction::Timeout { node, .. } = a { Some(*node) } else { None })
            .collect()
    }

    #[test]
    fn timeout_is_enabled_by_deadlines_and_their_order() {
        let sleep = |until| Blocked::Sleep { until };
        let (any, deadline) = (TimeoutOrder::Any, |drift_s: u64| TimeoutOrder::Deadline { drift_ms: drift_s * 1000 });
        // Any order: either sleeper may wake first.
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 0, 2, any, false), [0, 1]);
        // Deadline order: the earliest, or within the drift of it.
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 0, 2, deadline(0), false), [0]);
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 0, 2, deadline(3), false), [0]);
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 0, 2, deadline(4), false), [0, 1]);
        assert_eq!(timeouts_enabled(sleep(1000), sleep(1000), 0, 2, deadline(0), false), [0, 1], "a tie");
        // A drift of milliseconds (`timeout_drift_ms`).
        let ms = |drift_ms| TimeoutOrder::Deadline { drift_ms };
        assert_eq!(timeouts_enabled(sleep(1000), sleep(1004), 0, 2, ms(3), false), [0]);
        assert_eq!(timeouts_enabled(sleep(1000), sleep(1004), 0, 2, ms(4), false), [0, 1]);
        // No budget: only a wait the clock has passed, in either order.
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 0, 0, any, false), Vec::<u8>::new());
        assert_eq!(timeouts_enabled(sleep(1000), sleep(5000), 3000, 0, deadline(4), false), [0]);
    }

    #[test]
    fn a_read_or_an_accept_times_out_only_if_it_asked_unless_under_the_t_convention() {
        let read = |until| Blocked::Read { fd: 4, until };
        let accept = |until| Blocked::Accept { fd: 5, until };
        let any = TimeoutOrder::Any;
        assert_eq!(timeouts_enabled(read(None), accept(None), 0, 2, any, false), Vec::<u8>::new());
        assert_eq!(timeouts_enabled(read(Some(2000)), accept(Some(1000)), 0, 2, any, false), [0, 1]);
        assert_eq!(timeouts_enabled(read(None), accept(None), 0, 2, any, true), [0, 1], "the manual's `T`");
        // Under deadline order a `T` moves the clock one second, and may
        // not pass the earliest deadline (with the drift).
        let deadline = TimeoutOrder::Deadline { drift_ms: 0 };
        assert_eq!(timeouts_enabled(read(None), Blocked::Sleep { until: 1000 }, 0, 2, deadline, true), [0, 1]);
        assert_eq!(timeouts_enabled(read(None), Blocked::Sleep { until: 1000 }, 1000, 2, deadline, true), [1]);
        assert_eq!(timeouts_enabled(read(None), Blocked::Pause, 7000, 2, deadline, true), [0], "nothing to pass");
    }

    /// A node whose slot's poll has woken (held while more is on its way,
    /// having waited first) and whose thread 1 reads a connection with a
    /// message on its way: that DELIVER is listed, naming thread 1, beside
    /// the woken poll's RUN; none while the slot is in the middle of its
    /// step.
    #[test]
    fn a_waiting_threads_actions_are_listed_beside_a_woken_slot() {
        use crate::process::threads::{ThreadRun, ThreadWorld};
        use crate::process::world::{Conn, Trail};
        let mut w = ProcessWorld::new(1, &crate::process::Budgets::default());
        let conn = Label { kind: ConnKind::Client, node: 0, k: 0 };
        let mut c = Conn::new(0, End::Gone, End::Open);
        c.to_target.push_back(b"x".to_vec());
        w.conns.insert(conn, c);
        let node = &mut w.nodes[0];
        node.fds.insert(5, VFd::Conn { label: conn, side: Side::Target });
        node.threads = vec![
            ThreadWorld { run: ThreadRun::Slot, clear_tid: 0 },
            ThreadWorld {
                run: ThreadRun::Waits {
                    blocked: Blocked::Read { fd: 5, until: None },
                    watch: Default::default(),
                    waitall: Vec::new(),
                    changed: false,
                },
                clear_tid: 0,
            },
        ];
        node.blocked = Blocked::Woken { trail: Trail::default(), left: None };
        let mut out = Vec::new();
        enumerate(&w, &mut out);
        let tokens: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(tokens, ["DELIVER(0, c0.0, thread 1)", "RUN(0)"]);
        w.nodes[0].blocked = Blocked::Woken { trail: Trail { hash: 7, holds: 1, acted: 0 }, left: None };
        enumerate(&w, &mut out);
        let tokens: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(tokens, ["RUN(0)"]);
    }

    #[test]
    fn tokens_round_trip() {
        let l = Label { kind: ConnKind::Node, node: 0, k: 2 };
        let c = Label { kind: ConnKind::Client, node: 1, k: 0 };
        let t = Label { kind: ConnKind::Timer, node: 3, k: 9 };
        let all = [
            ProcessAction::Deliver { node: 1, conn: l, part: Part::Whole, thread: None },
            ProcessAction::Deliver { node: 1, conn: l, part: Part::First(3), thread: None },
            ProcessAction::Deliver { node: 1, conn: l, part: Part::Merged, thread: None },
            ProcessAction::Eof { node: 1, conn: t, thread: None },
            ProcessAction::Accept { node: 0, from: Some(1), thread: None },
            ProcessAction::Accept { node: 0, from: None, thread: None },
            ProcessAction::Drop { conn: c, to: 1, end: None },
            ProcessAction::Drop { conn: l, to: 1, end: None },
            ProcessAction::Drop { conn: l, to: 0, end: Some(Side::Target) },
            ProcessAction::Drop { conn: l, to: 0, end: Some(Side::Dialer) },
            ProcessAction::Timeout { node: 1, thread: None },
            ProcessAction::Client { node: 0 },
            ProcessAction::Run { node: 1, thread: None },
            ProcessAction::Crash { node: 2, keep: None },
            ProcessAction::Crash { node: 2, keep: Some(Keep::Oldest(1)) },
            ProcessAction::Crash { node: 2, keep: Some(Keep::Set(0b1101)) },
            ProcessAction::Crash { node: 2, keep: Some(Keep::Set(1 << 63 | 1 << 1)) },
            ProcessAction::StartCrash(StartCrash { node: 2, point: 3, keep: None, after: 2 }),
            ProcessAction::StartCrash(StartCrash { node: 2, point: 1, keep: Some(Keep::Oldest(0)), after: 2 }),
            ProcessAction::StartCrash(StartCrash { node: 1, point: 7, keep: Some(Keep::Set(0b101)), after: 3 }),
            ProcessAction::Restart { node: 2 },
            ProcessAction::Order { node: 1, choice: 5 },
            ProcessAction::Switch { node: 1, thread: 2 },
            ProcessAction::StartOrder { node: 0, listing: 2, way: 3 },
            ProcessAction::Deliver { node: 1, conn: l, part: Part::First(3), thread: Some(2) },
            ProcessAction::Deliver { node: 1, conn: l, part: Part::Whole, thread: Some(4) },
            ProcessAction::Eof { node: 1, conn: t, thread: Some(2) },
            ProcessAction::Accept { node: 0, from: None, thread: Some(1) },
            ProcessAction::Timeout { node: 1, thread: Some(3) },
            ProcessAction::Run { node: 1, thread: Some(2) },
        ];
        for a in all {
            let token = a.to_string();
            assert_eq!(token.parse::<ProcessAction>(), Ok(a), "{token}");
        }
        assert_eq!(all[0].to_string(), "DELIVER(1, 0.2)");
        assert_eq!(all[1].to_string(), "DELIVER(1, 0.2, 3)");
        assert_eq!(all[2].to_string(), "DELIVER(1, 0.2, +)");
        assert_eq!(all[5].to_string(), "ACCEPT(0, client)");
        // A thread out of its node's slot, last.
        assert_eq!(all[24].to_string(), "DELIVER(1, 0.2, 3, thread 2)");
        assert_eq!(all[27].to_string(), "ACCEPT(0, client, thread 1)");
        for bad in ["DROP(0.2, 1, thread 2)", "CLIENT(0, thread 1)", "RUN(1, thread x)", "SWITCH(0, thread 1)"] {
            assert!(bad.parse::<ProcessAction>().is_err(), "{bad}");
        }
        // A connection of node 0 to itself: both drops name node 0, and the
        // end; every other drop keeps its two-argument token.
        assert_eq!(all[7].to_string(), "DROP(0.2, 1)");
        assert_eq!(all[8].to_string(), "DROP(0.2, 0, target)");
        assert_eq!(all[9].to_string(), "DROP(0.2, 0, dialer)");
        for bad in ["DELIVER(1, 0.2, 0)", "DELIVER(1, 0.2, -)", "DELIVER(1, 0.2, 3, 4)"] {
            assert!(bad.parse::<ProcessAction>().is_err(), "{bad}");
        }
        for bad in
            ["DROP(0.2, 1, target)", "DROP(c1.0, 1, dialer)", "DROP(0.2, 0, accepted)", "DROP(0.2, 0, target, 1)"]
        {
            assert!(bad.parse::<ProcessAction>().is_err(), "{bad}");
        }
        // The manual's CRASH tokens read as they always did; a set is
        // written only where it is no prefix.
        assert_eq!(all[13].to_string(), "CRASH(2)");
        assert_eq!(all[14].to_string(), "CRASH(2, 1)");
        assert_eq!(all[15].to_string(), "CRASH(2, {0, 2, 3})");
        assert_eq!(all[16].to_string(), "CRASH(2, {1, 63})");
        assert_eq!("CRASH(2, {0,2 , 3})".parse::<ProcessAction>(), Ok(all[15]));
        // A crash while the nodes start names the point.
        assert_eq!(all[17].to_string(), "CRASH(2, start 3)");
        assert_eq!(all[18].to_string(), "CRASH(2, start 1, 0)");
        assert_eq!(all[19].to_string(), "CRASH(1, start 7 after 3, {0, 2})");
        for bad in [
            "CRASH(2, {0, 1})",
            "CRASH(2, {})",
            "CRASH(2, {3, 0})",
            "CRASH(2, {0, 0, 2})",
            "CRASH(2, {0, 64})",
            "CRASH(2, {0, 2)",
            "CRASH(2, 1, 2)",
            "CRASH(2, -1)",
            "CRASH(x)",
            "CRASH(2, start 0)",
            "CRASH(2, start)",
            "CRASH(2, start 1, 2, 3)",
            "CRASH(2, start x)",
            "CRASH(2, start 1 after 2)",
            "CRASH(2, start 1 after 1)",
            "CRASH(2, start 1 after)",
        ] {
            assert!(bad.parse::<ProcessAction>().is_err(), "{bad}");
        }
        assert!("DELIVER(1)".parse::<ProcessAction>().is_err());
        assert!("FIRE(1, 2)".parse::<ProcessAction>().is_err());
    }
}

//! The model's side of the gate: which of the checker's schedules Linux can
//! follow, and the checker's worlds along the one it follows.
//!
//! Linux does some of the checker's actions itself, whenever it can: it
//! accepts a connection (ACCEPT), hands a node what was written to it
//! (DELIVER) and tells it its peer is gone (EOF) as soon as the node
//! waits for it. Those are the *kernel's* actions. The gate drives the
//! others from outside, one at a time, waiting for quiescence after each:
//! CLIENT (it dials the node and sends the model's request), TIMEOUT (a
//! timer connection carrying `T` to a node in `accept`, a `T` on a client
//! connection the node is reading, or, for a wait that ends by itself on
//! Linux (a sleep, a poll's timeout, a timerfd), waiting for it) and
//! CRASH (its sockets reset, SIGKILL) and RESTART (a new life). Those are
//! the *external* actions.
//!
//! So the gate follows a schedule *eagerly*: after START and after each
//! external action, every kernel action enabled is taken before the next
//! external one, as Linux takes them. A schedule that is not eager (a
//! TIMEOUT while a connection waits to be accepted) is reordered into the
//! eager one: its kernel actions are taken as soon as Linux would take
//! them, its external actions in its order after them, and where that
//! leaves a later action of the schedule not enabled, following stops
//! there; the kernel actions the schedule leaves untaken at its end are
//! added. Each stretch
//! from an external action (or START) to the next is a [`Segment`]; the
//! gate compares Linux with the checker at the end of every segment, and
//! each node's records along it.
//!
//! Linux's order must be the checker's, so a schedule is *followable* only
//! while the kernel has no choice to make that could change what a node
//! sees (a world that breaks a rule stops the following there, with the
//! reason; what came before is still compared):
//!
//! - each node has at most one kernel action it could take: two
//!   connections waiting at one `accept` are accepted in the order they
//!   were made, so they race unless one is from an earlier segment (or,
//!   during the start, from a node started earlier); two messages a
//!   polling node could receive race;
//! - where several nodes each have one, every order of them reaches the
//!   same world (checked by exploring every order, up to
//!   [`CLOSURE_WORLDS_MAX`] worlds);
//! - at most one message is on its way to, or waiting unread at, any end
//!   of a connection: TCP would give two of them to one read, where the
//!   checker (without `stream`) gives one write per read. With `stream`,
//!   two on their way (none received yet) are followed: the checker has
//!   the merged read too, DELIVER(n, conn, +), and the closure checks
//!   that it and the two whole ones end in one world, then follows the
//!   merged one, whose records (one report after both) are a subsequence
//!   of Linux's whichever way Linux delivered them;
//! - a woken wait (`Blocked::Woken`: a poll with something ready and more
//!   on its way), or a read or an accept that does not wait with
//!   something on its way (`Blocked::ReadNow`, `AcceptNow`), returns by
//!   RUN, the kernel's action, or takes what is on its way first: two
//!   actions of one node, so Linux's timing decides, unless both orders
//!   end in one world, or what is on its way is the request of the
//!   segment's own CLIENT: the gate sends it in the connection's SYN (TCP
//!   Fast Open, enabled in the gate's namespace), so Linux's node finds
//!   the connection with the request in it, and the DELIVER (or the
//!   ACCEPT) goes first;
//! - a wait that ends by itself on Linux (a sleep, a timeout, a timerfd)
//!   is followed by its TIMEOUT before any other external action, since
//!   Linux's clock does not wait for the gate;
//! - the gate starts the nodes one at a time, in order, each after the
//!   ones before it are quiescent, so that a node's connects at its start
//!   find the nodes below it listening: a node that dials a node above it
//!   at its start would race that node's start;
//! - a crash is followed only when every change it loses could be lost by
//!   a process's death: CRASH(n, j) keeps every pending change of the
//!   data directory (a SIGKILL keeps the page cache). The crashed node is
//!   down until RESTART, in the checker as on Linux, so a peer's dial in
//!   between is refused on both;
//! - a listing of a data directory whose names may fall more than one way
//!   is never followed: on Linux the file system's hash orders them, which
//!   the checker cannot know. In a node's start START takes way 0 (and
//!   lists the others as `ORDER(n, start j, i)`), so such a start stops
//!   the following at START; after it the node is held for its ORDER, and
//!   the segment stops there;
//! - DROP is never followed: on loopback a message a write accepted is in
//!   the peer's socket, and nothing loses it (the model's DROP loses it and
//!   resets the connection, as a network's loss ends one); nor is a DELIVER
//!   of part of a write (`stream`), nor a TIMEOUT in a read of a
//!   connection whose other end is a node's.
//!
//! What the checker answers and Linux does not, where Linux can follow the
//! schedule, is no reason to stop: those are compared, and are the
//! divergences the gate exists to find (issue 27 found three: a connect
//! to a node that did not listen succeeded, a close did not reach the
//! peer, and a crash deleted what the node had written).
//!
//! Nothing here runs a real program natively; the checker's worlds come
//! from a [`ProcessEngine`], as a search's do.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::fmt;

use cmc::process::{
    Blocked, ConnKind, Label, Life, Part, ProcessAction, ProcessEngine, ProcessError, ProcessWorld, Side, VFd,
};

/// The most worlds the gate explores to see that every order of the
/// kernel's actions in one segment ends in one world.
pub const CLOSURE_WORLDS_MAX: usize = 512;

/// What the native runner does to start a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drive {
    /// START: every node started, in order, each once the ones before it
    /// are quiescent.
    Start,
    /// CLIENT(node): dial the node, send the model's request, and keep
    /// the connection as `label`, reading what comes back.
    Client {
        /// The node dialled.
        node: u8,
        /// The connection's label in the checker's world.
        label: Label,
    },
    /// TIMEOUT(node) in `accept`: dial the listener the node waits at
    /// and write `T`; the connection stays open, as the model's timer
    /// connection does (no FIN follows its `T`).
    TimerConnection {
        /// The node.
        node: u8,
        /// The address its listener is bound to (any: 127.0.0.1).
        addr: [u8; 4],
        /// Its port.
        port: u16,
    },
    /// TIMEOUT(node) in a read of client connection `label`: write `T`
    /// on it.
    ClientTimeout {
        /// The node.
        node: u8,
        /// The client connection it reads.
        label: Label,
    },
    /// TIMEOUT(node) of a wait that ends by itself on Linux: wait for it.
    Timed {
        /// The node.
        node: u8,
    },
    /// CRASH(node): its sockets reset and SIGKILL; the node stays down.
    Crash {
        /// The node.
        node: u8,
    },
    /// RESTART(node): a new life reading the last durable record on fd
    /// 193.
    Restart {
        /// The node.
        node: u8,
    },
}

impl Drive {
    /// The node the native runner acts on, if one.
    pub fn node(&self) -> Option<u8> {
        match *self {
            Drive::Start => None,
            Drive::Client { node, .. }
            | Drive::TimerConnection { node, .. }
            | Drive::ClientTimeout { node, .. }
            | Drive::Timed { node }
            | Drive::Crash { node }
            | Drive::Restart { node } => Some(node),
        }
    }
}

/// One stretch of a followed schedule: an external action (or START) and
/// the kernel's actions after it, up to a world where the kernel has
/// nothing left to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// What the native runner does.
    pub drive: Drive,
    /// Its first step: 0 for START, else the external action's.
    pub first: usize,
    /// Its last step, where Linux is quiescent and the two are compared.
    pub last: usize,
}

/// Why the gate stopped following a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfollowable {
    /// The step it stopped at: the steps before it, in whole segments,
    /// were followed.
    pub step: usize,
    /// The action it could not follow there, if it is one.
    pub action: Option<String>,
    /// Why, in a sentence.
    pub reason: String,
}

impl fmt::Display for Unfollowable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            Some(a) => write!(f, "step {} ({a}): {}", self.step, self.reason),
            None => write!(f, "step {}: {}", self.step, self.reason),
        }
    }
}

/// A schedule as the gate follows it: the checker's worlds step by step,
/// in whole segments.
#[derive(Clone, Debug)]
pub struct Followed {
    /// `worlds[i]` is the world after step `i`; step 0 is START.
    pub worlds: Vec<ProcessWorld>,
    /// `actions[i - 1]` is step `i`.
    pub actions: Vec<ProcessAction>,
    /// Whether step `i`'s action was in the schedule (`in_schedule[i - 1]`),
    /// or added by the eager order.
    pub in_schedule: Vec<bool>,
    /// The segments, in order, covering every step.
    pub segments: Vec<Segment>,
    /// Why following stopped before the schedule's end, if it did.
    pub stopped: Option<Unfollowable>,
    /// Schedule actions taken earlier than the schedule took them.
    pub reordered: usize,
    /// Kernel actions the schedule did not have, taken as Linux takes them.
    pub added: usize,
    /// Schedule actions not followed, after a stop.
    pub left: usize,
    /// For a walk: the enabled external actions it did not draw from
    /// because Linux cannot follow them where they were enabled, by kind
    /// (`DROP`, `TIMEOUT`, `CRASH`), counted at each draw.
    pub left_out: BTreeMap<&'static str, usize>,
}

impl Followed {
    /// The token of step `i` (`START` for 0).
    pub fn token(&self, step: usize) -> String {
        match step {
            0 => "START".to_string(),
            i => self.actions[i - 1].to_string(),
        }
    }

    /// The number of steps followed, START included.
    pub fn steps(&self) -> usize {
        self.worlds.len()
    }
}

/// What stops following: a world Linux cannot follow, or the checker's
/// own error.
#[derive(Debug)]
enum Stop {
    Unfollowable(String),
    Engine(ProcessError),
}

impl From<ProcessError> for Stop {
    fn from(e: ProcessError) -> Stop {
        Stop::Engine(e)
    }
}

/// Follows a schedule step by step on a [`ProcessEngine`].
pub struct Follower<'e> {
    engine: &'e mut ProcessEngine,
    f: Followed,
    /// Each connection's epoch: the segment (or, during the start, the
    /// node started) in which it was made. Linux accepts connections in the
    /// order they were made; epochs are that order as far as the gate
    /// knows it.
    epochs: BTreeMap<Label, u32>,
    epoch: u32,
    /// The client connection the current segment's CLIENT made: the gate
    /// dials and sends its request with the node stopped, so on Linux the
    /// request is in the node's socket before the node looks.
    sent: Option<Label>,
    /// Where this segment began in `f` (its first step).
    segment_first: usize,
}

impl<'e> Follower<'e> {
    /// START, and the kernel's actions after it as Linux takes them while
    /// the gate starts the nodes one at a time; the kernel actions of
    /// `pending` taken are removed from it.
    pub fn start(
        engine: &'e mut ProcessEngine,
        pending: &mut VecDeque<ProcessAction>,
    ) -> Result<Follower<'e>, ProcessError> {
        let world = engine.initial()?;
        let nodes = world.nodes.len() as u32;
        let mut epochs = BTreeMap::new();
        let mut early = None;
        for (label, c) in &world.conns {
            // Made by a node at its start: the gate starts node d before
            // node d + 1, so its connects come first.
            epochs.insert(*label, label.node as u32);
            if label.kind == ConnKind::Node && c.target > label.node && early.is_none() {
                early = Some(format!(
                    "node {} dials node {} at its start: the gate starts nodes in order, so on Linux that races node \
                     {}'s start",
                    label.node, c.target, c.target
                ));
            }
        }
        let f = Followed {
            worlds: vec![world],
            actions: Vec::new(),
            in_schedule: Vec::new(),
            segments: Vec::new(),
            stopped: None,
            reordered: 0,
            added: 0,
            left: 0,
            left_out: BTreeMap::new(),
        };
        // A listing of a data directory in a node's start that shows names
        // more than one way: START took way 0, and lists the others as
        // ORDER(n, start j, i). Linux's way is its file system's hash, which
        // the checker's way 0 need not be.
        if early.is_none() {
            let mut all = Vec::new();
            ProcessEngine::actions(&f.worlds[0], &mut all);
            let mut ways: BTreeMap<(u8, u32), u32> = BTreeMap::new();
            for a in all {
                if let ProcessAction::StartOrder { node, listing, .. } = a {
                    *ways.entry((node, listing)).or_insert(1) += 1;
                }
            }
            if let Some((&(node, listing), &n)) = ways.iter().next() {
                early = Some(format!(
                    "node {node}'s listing {listing} of its data directory in its start, whose names fall {n} ways: \
                     START took way 0, and on Linux the file system's hash decides it"
                ));
            }
        }
        let mut me = Follower { engine, f, epochs, epoch: 0, sent: None, segment_first: 0 };
        if let Some(reason) = early {
            me.stop_segment(Stop::Unfollowable(reason))?;
            return Ok(me);
        }
        for phase in 0..nodes {
            me.epoch = phase;
            if let Err(stop) = me.closure(phase, pending) {
                me.stop_segment(stop)?;
                return Ok(me);
            }
        }
        me.epoch = nodes;
        me.f.segments.push(Segment { drive: Drive::Start, first: 0, last: me.f.worlds.len() - 1 });
        Ok(me)
    }

    /// Whether following has stopped.
    pub fn stopped(&self) -> bool {
        self.f.stopped.is_some()
    }

    /// The world following has reached.
    pub fn world(&self) -> &ProcessWorld {
        self.f.worlds.last().unwrap_or_else(|| unreachable!("START is always there"))
    }

    /// The followed schedule; `left` schedule actions were not followed.
    pub fn finish(mut self, left: usize) -> Followed {
        self.f.left = left;
        self.f
    }

    /// The external actions Linux can follow from here, in the checker's
    /// order: CLIENT, TIMEOUT of the kinds the gate drives, CRASH that
    /// keeps every pending change; only the TIMEOUT of a wait that ends by
    /// itself while there is one.
    pub fn followable(&self) -> Vec<ProcessAction> {
        if self.stopped() {
            return Vec::new();
        }
        let w = self.world();
        let mut all = Vec::new();
        ProcessEngine::actions(w, &mut all);
        all.into_iter().filter(|a| self.drive(w, a).is_ok()).collect()
    }

    /// Follows the external action `a` and the kernel's actions after it
    /// (taking those of `pending` it takes out of it). A stop is recorded
    /// in the result, not returned: only the checker's errors are.
    pub fn external(&mut self, a: ProcessAction, pending: &mut VecDeque<ProcessAction>) -> Result<(), ProcessError> {
        if self.stopped() {
            return Ok(());
        }
        let w = self.world().clone();
        let drive = match self.drive(&w, &a) {
            Ok(d) => d,
            Err(reason) => {
                let step = self.f.worlds.len();
                self.f.stopped = Some(Unfollowable { step, action: Some(a.to_string()), reason });
                return Ok(());
            }
        };
        self.epoch += 1;
        self.sent = match drive {
            Drive::Client { label, .. } => Some(label),
            _ => None,
        };
        self.segment_first = self.f.worlds.len();
        self.apply(a, true)?;
        if let Err(stop) = self.closure(u32::MAX, pending) {
            return self.stop_segment(stop);
        }
        let last = self.f.worlds.len() - 1;
        self.f.segments.push(Segment { drive, first: self.segment_first, last });
        Ok(())
    }

    /// What the native runner does for external action `a` in world `w`,
    /// or why Linux cannot follow it there.
    fn drive(&self, w: &ProcessWorld, a: &ProcessAction) -> Result<Drive, String> {
        let mut all = Vec::new();
        ProcessEngine::actions(w, &mut all);
        let never = matches!(
            a,
            ProcessAction::Drop { .. } | ProcessAction::Deliver { part: Part::First(_) | Part::Merged, .. }
        );
        // A choice of the nodes' start after the start: refused below, with
        // its reason, wherever the schedule takes it.
        let start_choice = matches!(a, ProcessAction::StartCrash(_) | ProcessAction::StartOrder { .. });
        if !all.contains(a) && !never && !start_choice {
            return Err(
                "not enabled where Linux's order leads (the schedule chose an order Linux does not take)".into()
            );
        }
        // A thread waiting for the world out of its node's slot: on Linux
        // it waits beside the others, and which wakes first is timing.
        if a.thread().is_some() {
            return Err("an action for one of several threads of a node waiting at once, which Linux's timing orders \
                        (not followed)"
                .into());
        }
        let drive = match *a {
            ProcessAction::Client { node } => {
                let k = self.engine.config().budgets.clients - w.nodes[node as usize].clients_left;
                Drive::Client { node, label: Label { kind: ConnKind::Client, node, k } }
            }
            ProcessAction::Timeout { node, .. } => match w.nodes[node as usize].blocked {
                // A receive timeout (SO_RCVTIMEO) ends by itself on Linux.
                Blocked::Accept { until: Some(_), .. } | Blocked::Read { until: Some(_), .. } => Drive::Timed { node },
                Blocked::Accept { fd, until: None } => match w.nodes[node as usize].fds.get(&fd) {
                    // Where Linux's accept waits: the port the node bound,
                    // whatever the convention says (`bind` is honoured).
                    Some(&VFd::Socket { port: Some(port), addr, .. }) => {
                        let addr = if addr == [0; 4] { [127, 0, 0, 1] } else { addr };
                        Drive::TimerConnection { node, addr, port }
                    }
                    _ => return Err("a TIMEOUT in an accept of no bound socket".into()),
                },
                Blocked::Read { fd, until: None } => match w.conn_of(node, fd) {
                    Some((label, Side::Target)) if label.kind == ConnKind::Client => {
                        Drive::ClientTimeout { node, label }
                    }
                    Some((label, _)) => {
                        return Err(format!(
                            "a TIMEOUT in a read of {label}: only its peer could write the `T` on Linux, and its peer \
                             is not the gate"
                        ));
                    }
                    None => return Err("a TIMEOUT in a read of no connection".into()),
                },
                Blocked::Sleep { .. } | Blocked::Poll { .. } | Blocked::Timer { .. } => Drive::Timed { node },
                Blocked::Nothing
                | Blocked::Pause
                | Blocked::CrashPoint { .. }
                | Blocked::Woken { .. }
                | Blocked::ReadNow { .. }
                | Blocked::AcceptNow { .. }
                | Blocked::WriteNow { .. }
                | Blocked::LookNow { .. }
                | Blocked::Order { .. }
                | Blocked::Futex { .. }
                | Blocked::Choice { .. } => {
                    return Err("a TIMEOUT of a node that waits for nothing".into());
                }
            },
            ProcessAction::Crash { node, .. }
                if matches!(w.nodes[node as usize].blocked, Blocked::CrashPoint { .. }) =>
            {
                return Err(format!(
                    "a CRASH of node {node} between two of its calls: a SIGKILL from outside cannot be made to fall \
                     there"
                ));
            }
            ProcessAction::Switch { node, .. } => {
                return Err(format!(
                    "node {node}'s threads in an order the schedule chose: on Linux the kernel's scheduler decides it"
                ));
            }
            ProcessAction::Run { node, .. } if matches!(w.nodes[node as usize].blocked, Blocked::Choice { .. }) => {
                return Err(format!(
                    "node {node}'s threads in the fixed order at a choice: on Linux the kernel's scheduler decides it"
                ));
            }
            ProcessAction::Order { node, .. } | ProcessAction::StartOrder { node, .. } => {
                return Err(format!(
                    "node {node}'s listing of its data directory in an order the schedule chose: on Linux the file \
                     system's hash decides it"
                ));
            }
            ProcessAction::StartCrash(c) => {
                return Err(format!(
                    "a CRASH of node {} in its start, between two of its calls: a SIGKILL from outside cannot be \
                     made to fall there",
                    c.node
                ));
            }
            ProcessAction::Crash { node, keep } => {
                let pending = w.nodes[node as usize].disk.pending.len();
                if keep.is_some_and(|k| !k.keeps_all(pending)) {
                    return Err(format!(
                        "a crash that keeps {} of {pending} pending changes of the data directory: a SIGKILL keeps \
                         them all (only a machine's crash loses some)",
                        keep.map_or(0, |k| k.mask().count_ones())
                    ));
                }
                Drive::Crash { node }
            }
            ProcessAction::Restart { node } => Drive::Restart { node },
            ProcessAction::Drop { .. } => {
                return Err("a DROP: on loopback nothing loses a message a write accepted".into());
            }
            ProcessAction::Deliver { part: Part::First(_) | Part::Merged, .. } => {
                return Err("a write split or merged by the byte stream: on loopback a short write arrives whole, \
                            one at a time here"
                    .into());
            }
            ProcessAction::Deliver { .. }
            | ProcessAction::Eof { .. }
            | ProcessAction::Accept { .. }
            | ProcessAction::Run { .. } => {
                return Err("a kernel action after Linux had done all it could (the schedule leaves it for later, or \
                            chose another)"
                    .into());
            }
        };
        // A wait that ends by itself on Linux ends before anything else the
        // gate would do.
        let timed: Vec<u8> = (0..w.nodes.len() as u8)
            .filter(|&n| w.nodes[n as usize].life == Life::Live && w.deadline(n).is_some())
            .collect();
        match (&drive, timed.as_slice()) {
            (_, []) => {}
            (Drive::Timed { node }, [m]) if node == m => {}
            (_, [m]) => {
                return Err(format!(
                    "node {m} waits with a deadline (a sleep, a timeout, a timerfd), which on Linux ends by itself \
                     before this"
                ));
            }
            (_, _) => return Err(format!("nodes {timed:?} each wait with a deadline: on Linux their clocks race")),
        }
        Ok(drive)
    }

    /// Takes the kernel's actions until it has none left, as Linux does,
    /// allowing only connections of epoch `allowed` or earlier.
    fn closure(&mut self, allowed: u32, pending: &mut VecDeque<ProcessAction>) -> Result<(), Stop> {
        let mut explored = false;
        loop {
            let w = self.world().clone();
            if self.epoch < w.nodes.len() as u32 {
                // During the start: a node the gate has not started yet
                // cannot be dialled on Linux.
                let early = w.conns.iter().find(|(l, c)| {
                    l.kind == ConnKind::Node
                        && c.target as u32 > allowed
                        && l.node as u32 <= allowed
                        && self.epoch_of(l) == allowed
                });
                if let Some((l, c)) = early {
                    return Err(Stop::Unfollowable(format!(
                        "node {} dials node {} ({l}) before the gate has started it",
                        l.node, c.target
                    )));
                }
            }
            let choice = self.kernel(&w, allowed).map_err(Stop::Unfollowable)?;
            if choice.is_empty() {
                return Ok(());
            }
            if choice.len() >= 2 && !explored {
                self.confluent(allowed)?;
                explored = true;
            }
            // Two writes Linux may hand to one read: follow them merged,
            // whatever the schedule did, taking the schedule's DELIVERs of
            // both out of it. The checker's records along the merged
            // delivery are the coarser ones (the node reports once, after
            // both), and so a subsequence of Linux's records whichever way
            // Linux delivered them; `confluent` has checked that both ways
            // end in one world.
            if let Some(&merged) =
                choice.iter().find(|a| matches!(a, ProcessAction::Deliver { part: Part::Merged, .. }))
            {
                let ProcessAction::Deliver { node, conn, thread, .. } = merged else { unreachable!("found so") };
                let whole = ProcessAction::Deliver { node, conn, part: Part::Whole, thread };
                let mut taken = 0;
                while taken < 2
                    && let Some(i) = pending.iter().position(|p| *p == whole)
                {
                    pending.remove(i);
                    taken += 1;
                }
                self.apply(merged, taken > 0)?;
                continue;
            }
            // The schedule's own next one if it is here, else the first.
            let at = pending.iter().position(|p| choice.contains(p));
            let a = match at {
                Some(i) => {
                    if i > 0 && pending.iter().take(i).any(|p| !is_kernel(p)) {
                        self.f.reordered += 1;
                    }
                    pending.remove(i).unwrap_or_else(|| unreachable!("found"))
                }
                None => choice[0],
            };
            self.apply(a, at.is_some())?;
        }
    }

    /// Every order of the kernel's actions from here ends in one world,
    /// and no world on the way breaks a rule.
    fn confluent(&mut self, allowed: u32) -> Result<(), Stop> {
        let base = self.f.actions.clone();
        let mut buf = Vec::new();
        let mut seen = HashSet::new();
        let mut ends = BTreeSet::new();
        let mut queue = VecDeque::from([(Vec::new(), self.world().clone())]);
        seen.insert(ProcessEngine::fingerprint(self.world(), &mut buf));
        while let Some((suffix, w)) = queue.pop_front() {
            let choice = self.kernel(&w, allowed).map_err(Stop::Unfollowable)?;
            if choice.is_empty() {
                ends.insert(ProcessEngine::fingerprint(&w, &mut buf));
                continue;
            }
            let mut prefix = base.clone();
            prefix.extend(&suffix);
            for a in choice {
                let next = self.engine.apply(&prefix, &a)?;
                if seen.insert(ProcessEngine::fingerprint(&next, &mut buf)) {
                    if seen.len() > CLOSURE_WORLDS_MAX {
                        return Err(Stop::Unfollowable(format!(
                            "the kernel's orders from here make more than {CLOSURE_WORLDS_MAX} worlds"
                        )));
                    }
                    let mut s = suffix.clone();
                    s.push(a);
                    queue.push_back((s, next));
                }
            }
        }
        if ends.len() != 1 {
            return Err(Stop::Unfollowable(format!(
                "the kernel's order decides the outcome here: its orders end in {} different worlds",
                ends.len()
            )));
        }
        Ok(())
    }

    /// The kernel actions Linux would take next in `w`, one per node at
    /// most, or why its order there is not the checker's.
    fn kernel(&self, w: &ProcessWorld, allowed: u32) -> Result<Vec<ProcessAction>, String> {
        // A node held at a crash point runs on: on Linux nothing stops it
        // between two calls.
        if let Some(n) = (0..w.nodes.len()).find(|&n| matches!(w.nodes[n].blocked, Blocked::CrashPoint { .. })) {
            return Ok(vec![ProcessAction::Run { node: n as u8, thread: None }]);
        }
        // A node held at a listing of its data directory whose names fall
        // more than one way: the checker's ORDER picks one, Linux's file
        // system's hash another, which the gate cannot know.
        if let Some((n, choices)) = w.nodes.iter().enumerate().find_map(|(n, node)| match node.blocked {
            Blocked::Order { choices, .. } => Some((n, choices)),
            _ => None,
        }) {
            return Err(format!(
                "node {n} lists its data directory, whose names fall {choices} ways: the checker's ORDER picks one, \
                 and on Linux the file system's hash decides it"
            ));
        }
        for (label, c) in &w.conns {
            for side in [Side::Target, Side::Dialer] {
                if side == Side::Dialer && label.kind != ConnKind::Node {
                    continue;
                }
                if c.end(side).done() {
                    continue;
                }
                // Two writes in flight may reach one read, or two. With
                // `stream` the checker has both (DELIVER whole and merged,
                // below), and the closure takes both. Anything more (a
                // third, or one received already, to which the kernel
                // appends) the checker's reads do not show.
                let (queued, received) = (c.queue(side).len(), c.received(side).len());
                if queued + received >= 2 && !(w.stream && (queued, received) == (2, 0)) {
                    let node = if side == Side::Target { c.target } else { label.node };
                    return Err(format!(
                        "{} messages on their way to node {node}'s end of {label}{}: on Linux one read may get all \
                         of them{}",
                        queued + received,
                        if received > 0 { ", one of them received already" } else { "" },
                        if w.stream || received > 0 || queued > 2 {
                            ""
                        } else {
                            " (with `stream` the gate follows both ways)"
                        }
                    ));
                }
            }
        }
        let mut all = Vec::new();
        ProcessEngine::actions(w, &mut all);
        let mut by_node: BTreeMap<u8, Vec<(ProcessAction, u32)>> = BTreeMap::new();
        for a in all {
            let epoch = match a {
                ProcessAction::Deliver { conn, part: Part::Whole, .. } | ProcessAction::Eof { conn, .. } => {
                    self.epoch_of(&conn)
                }
                ProcessAction::Accept { node, from, .. } => self.epoch_of(&oldest(w, node, from)),
                // A woken wait returning: the kernel's, as soon as the
                // process runs.
                ProcessAction::Run { .. } => 0,
                _ => continue,
            };
            if epoch <= allowed {
                let node = a.node().unwrap_or_else(|| unreachable!("a kernel action has a node"));
                by_node.entry(node).or_default().push((a, epoch));
            }
        }
        let mut out = Vec::new();
        for (node, mut list) in by_node {
            let accepts = list.iter().filter(|(a, _)| matches!(a, ProcessAction::Accept { .. })).count();
            if accepts >= 2 {
                // Linux accepts in the order of the connects: the oldest
                // epoch goes first, if it is alone.
                let min = list.iter().filter(|(a, _)| matches!(a, ProcessAction::Accept { .. })).map(|(_, e)| *e).min();
                let first: Vec<String> = list
                    .iter()
                    .filter(|(a, e)| matches!(a, ProcessAction::Accept { .. }) && Some(*e) == min)
                    .map(|(a, _)| a.to_string())
                    .collect();
                if first.len() >= 2 {
                    return Err(format!(
                        "node {node} could take {}: connects made in one segment race on Linux",
                        first.join(" or ")
                    ));
                }
                list.retain(|(a, e)| !matches!(a, ProcessAction::Accept { .. }) || Some(*e) == min);
            }
            // A woken wait, or a read or an accept that does not wait,
            // with the request of this segment's client on its way: the
            // gate sent it with the node stopped, so Linux's node finds it
            // there when it looks (the DELIVER, or the ACCEPT, before RUN).
            if list.len() == 2
                && let Some(sent) = self.sent
                && list.iter().any(|(a, _)| matches!(a, ProcessAction::Run { .. }))
                && let Some(i) = list.iter().position(|(a, _)| match *a {
                    ProcessAction::Deliver { conn, part: Part::Whole, .. } => conn == sent,
                    ProcessAction::Accept { node, from, .. } => oldest(w, node, from) == sent,
                    _ => false,
                })
            {
                let kept = list.swap_remove(i);
                list = vec![kept];
            }
            if list.len() >= 2 {
                let names: Vec<String> = list.iter().map(|(a, _)| a.to_string()).collect();
                return Err(format!("node {node} could take {}: on Linux their timing decides", names.join(" or ")));
            }
            for (a, _) in list {
                // Two writes waiting at the end this DELIVER reads: Linux
                // may hand them to one read. The merged delivery comes
                // first, and the closure prefers it (see `closure`).
                if let ProcessAction::Deliver { node, conn, part: Part::Whole, thread } = a
                    && w.stream
                    && two_waiting(w, node, &conn)
                {
                    out.push(ProcessAction::Deliver { node, conn, part: Part::Merged, thread });
                }
                out.push(a);
            }
        }
        Ok(out)
    }

    fn epoch_of(&self, label: &Label) -> u32 {
        self.epochs.get(label).copied().unwrap_or(self.epoch)
    }

    fn apply(&mut self, a: ProcessAction, in_schedule: bool) -> Result<(), ProcessError> {
        let w = self.engine.apply(&self.f.actions, &a)?;
        for label in w.conns.keys() {
            self.epochs.entry(*label).or_insert(self.epoch);
        }
        if !in_schedule {
            self.f.added += 1;
        }
        self.f.actions.push(a);
        self.f.in_schedule.push(in_schedule);
        self.f.worlds.push(w);
        Ok(())
    }

    /// Records a stop inside the current segment and drops the segment:
    /// Linux runs it to its end, which the checker's worlds do not reach.
    fn stop_segment(&mut self, stop: Stop) -> Result<(), ProcessError> {
        let reason = match stop {
            Stop::Unfollowable(r) => r,
            Stop::Engine(e) => return Err(e),
        };
        let step = self.f.worlds.len() - 1;
        let action = (step > 0).then(|| self.f.actions[step - 1].to_string());
        let first = self.segment_first;
        let drop_from = first.max(1);
        // Keep the START world even when START itself cannot be followed:
        // no segment covers it, so nothing is compared.
        self.f.worlds.truncate(drop_from);
        self.f.actions.truncate(drop_from - 1);
        self.f.in_schedule.truncate(drop_from - 1);
        self.f.stopped = Some(Unfollowable { step, action, reason });
        Ok(())
    }
}

/// The oldest connection waiting at `node` from `from` (a node, or the
/// checker's client).
fn oldest(w: &ProcessWorld, node: u8, from: Option<u8>) -> Label {
    w.conns
        .iter()
        .filter(|(l, c)| {
            c.target == node
                && c.target_end == cmc::process::End::Pending
                && !w.nodes[node as usize].accept_queue.contains(l)
                && match from {
                    Some(d) => l.kind == ConnKind::Node && l.node == d,
                    None => l.kind == ConnKind::Client,
                }
        })
        .map(|(l, _)| *l)
        .min()
        .unwrap_or_else(|| unreachable!("an enabled ACCEPT has a connection"))
}

/// Whether exactly two writes are on their way to `node`'s end of `conn`
/// (a connection a node made to itself has two ends of one node: never).
fn two_waiting(w: &ProcessWorld, node: u8, conn: &Label) -> bool {
    let Some(c) = w.conns.get(conn) else { return false };
    let target = c.target == node;
    let dialer = conn.kind == ConnKind::Node && conn.node == node;
    match (target, dialer) {
        (true, false) => c.queue(Side::Target).len() == 2,
        (false, true) => c.queue(Side::Dialer).len() == 2,
        _ => false,
    }
}

/// The kind of an action, as its token starts.
fn kind(a: &ProcessAction) -> &'static str {
    match a {
        ProcessAction::Deliver { .. } => "DELIVER",
        ProcessAction::Eof { .. } => "EOF",
        ProcessAction::Accept { .. } => "ACCEPT",
        ProcessAction::Drop { .. } => "DROP",
        ProcessAction::Timeout { .. } => "TIMEOUT",
        ProcessAction::Client { .. } => "CLIENT",
        ProcessAction::Crash { .. } | ProcessAction::StartCrash(_) => "CRASH",
        ProcessAction::Run { .. } => "RUN",
        ProcessAction::Order { .. } | ProcessAction::StartOrder { .. } => "ORDER",
        ProcessAction::Switch { .. } => "SWITCH",
        ProcessAction::Restart { .. } => "RESTART",
    }
}

fn is_kernel(a: &ProcessAction) -> bool {
    matches!(
        a,
        ProcessAction::Deliver { .. }
            | ProcessAction::Eof { .. }
            | ProcessAction::Accept { .. }
            | ProcessAction::Run { .. }
    )
}

/// Follows `schedule` (action tokens after START) as far as Linux can.
pub fn follow(engine: &mut ProcessEngine, schedule: &[ProcessAction]) -> Result<Followed, ProcessError> {
    let mut pending: VecDeque<ProcessAction> = schedule.iter().copied().collect();
    let mut f = Follower::start(engine, &mut pending)?;
    while !f.stopped() {
        let Some(a) = pending.pop_front() else { break };
        f.external(a, &mut pending)?;
    }
    let left = pending.len();
    Ok(f.finish(left))
}

/// A seeded walk of at most `externals_max` external actions, each drawn
/// among those Linux can follow, with the kernel's actions after each.
pub fn walk(engine: &mut ProcessEngine, seed: u64, externals_max: usize) -> Result<Followed, ProcessError> {
    let mut none = VecDeque::new();
    let mut f = Follower::start(engine, &mut none)?;
    let mut rng = SplitMix64(seed);
    for _ in 0..externals_max {
        let choices = f.followable();
        if !f.stopped() {
            let mut all = Vec::new();
            ProcessEngine::actions(f.world(), &mut all);
            for a in all.iter().filter(|a| !choices.contains(a)) {
                *f.f.left_out.entry(kind(a)).or_default() += 1;
            }
        }
        if choices.is_empty() {
            break;
        }
        let a = choices[(rng.next() % choices.len() as u64) as usize];
        f.external(a, &mut none)?;
    }
    Ok(f.finish(0))
}

/// SplitMix64, as the searches' simulation uses: fixed, so a seed gives
/// the same walk on every machine.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

//! Actions: what can happen next in a world, computed from the world's bytes
//! and the model's fixed environment alone. This module never calls a core:
//! that is the manual's first rule (no omniscient oracle).
//!
//! The enumeration order is fixed, so runs are deterministic and
//! counterexamples stable:
//!
//! 1. DELIVER, by channel (from, to) ascending (FIFO: the head; bag: each
//!    distinct message in sorted order);
//! 2. DROP, in the same order, while drop budget is left;
//! 3. DUP, in the same order, bag mode only, while dup budget is left;
//! 4. FIRE(n, t) by node, then timer;
//! 5. FLUSH(n) by node;
//! 6. WAKE(n, w) by node, then waiter;
//! 7. CLIENT(n) by node;
//! 8. CRASH(n, j) by node, then j from 0 to n's pending persists, while
//!    crash budget is left;
//! 9. RESET(n, p) by node, then peer.
//!
//! A direct-actions core has instead `ACTION(i)` for every index in order.

use std::fmt;
use std::str::FromStr;

use crate::core::{NodeId, Payload, limits};
use crate::model::Budgets;
use crate::network::{Msg, Network};
use crate::trace::{hex, unhex};
use crate::world::World;

/// One possible step of the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Build initial world number `variant` (first step of every trace).
    Init {
        /// Which initial world: 0 for a message-passing core.
        variant: u32,
    },
    /// DELIVER: a message in flight reaches its receiver, which steps on
    /// [`Event::Deliver`](crate::Event::Deliver). FIFO delivers the head of
    /// a channel; a bag, any message.
    Deliver {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: Payload,
    },
    /// DROP: the network loses a message, spending one drop. FIFO resets
    /// the connection: both directions emptied, each end told by a RESET.
    Drop {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: Payload,
    },
    /// DUP: a bag gains a second copy of a message, spending one dup.
    Dup {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: Payload,
    },
    /// FIRE: an armed timer fires (disarmed first), spending one timeout
    /// when the model has a timeout budget.
    Fire {
        /// The node whose timer fires.
        node: NodeId,
        /// The timer.
        timer: u8,
    },
    /// FLUSH: a node's oldest pending persist reaches disk
    /// ([`Core::apply_persist`](crate::Core::apply_persist), then
    /// [`Event::Flushed`](crate::Event::Flushed)).
    Flush {
        /// The node.
        node: NodeId,
    },
    /// WAKE: a pending wake is delivered.
    Wake {
        /// The node.
        node: NodeId,
        /// The waiter.
        waiter: u8,
    },
    /// CLIENT: a node receives its next client request.
    Client {
        /// The node.
        node: NodeId,
    },
    /// CRASH: a node crashes and restarts, spending one crash. The first
    /// `keep` of its pending persists reach disk and the rest are lost;
    /// its volatile bytes, timers, wakes and channels are cleared, and
    /// every peer is told by a RESET.
    Crash {
        /// The node.
        node: NodeId,
        /// How many of its pending persists, oldest first, survive: from
        /// 0 to all of them.
        keep: u8,
    },
    /// RESET: a node is told that its connection to a peer was reset (by a
    /// FIFO drop or a crash at either end).
    Reset {
        /// The node told.
        node: NodeId,
        /// The peer at the connection's other end.
        peer: NodeId,
    },
    /// ACTION: a direct-actions core takes one of its actions.
    Direct {
        /// The action, below
        /// [`DirectActions::actions`](crate::DirectActions::actions).
        index: u16,
    },
}

/// A world has more possible actions than [`limits::ACTIONS_PER_STATE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{count} possible actions in one world (limit actions_per_state = {max})", max = limits::ACTIONS_PER_STATE)]
pub struct TooManyActions {
    /// How many there were.
    pub count: usize,
}

/// The fixed parts of a run that decide which actions exist.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Environment {
    pub network: Network,
    pub budgets: Budgets,
    pub direct: Option<u16>,
}

/// Lists the actions enabled in `world`, in the documented order, into
/// `out` (cleared first).
pub(crate) fn enumerate(env: &Environment, world: &World, out: &mut Vec<Action>) -> Result<(), TooManyActions> {
    out.clear();
    if let Some(count) = env.direct {
        out.extend((0..count).map(|index| Action::Direct { index }));
        return Ok(());
    }
    let net = &world.net;
    let distinct = |i: usize| match env.network {
        // FIFO: only the head of each channel.
        Network::Fifo => i == 0 || (net[i - 1].from, net[i - 1].to) != (net[i].from, net[i].to),
        // Bag: each distinct message once.
        Network::Bag => i == 0 || net[i - 1] != net[i],
    };
    let heads = || (0..net.len()).filter(move |&i| distinct(i)).map(move |i| net[i]);
    out.extend(heads().map(|Msg { from, to, payload }| Action::Deliver { from, to, msg: payload }));
    if world.drops > 0 {
        out.extend(heads().map(|Msg { from, to, payload }| Action::Drop { from, to, msg: payload }));
    }
    if env.network == Network::Bag && world.dups > 0 {
        out.extend(heads().map(|Msg { from, to, payload }| Action::Dup { from, to, msg: payload }));
    }
    let fire_ok = env.budgets.timeouts.is_none() || world.timeouts > 0;
    let nodes = world.nodes();
    if fire_ok {
        for node in 0..nodes {
            let timers = world.env[node as usize].timers;
            for timer in 0..limits::TIMERS_MAX as u8 {
                if timers & (1 << timer) != 0 {
                    out.push(Action::Fire { node, timer });
                }
            }
        }
    }
    for node in 0..nodes {
        if world.persists.iter().any(|(n, _)| *n == node) {
            out.push(Action::Flush { node });
        }
    }
    for node in 0..nodes {
        let wakes = world.env[node as usize].wakes;
        for waiter in 0..limits::WAITERS_MAX as u8 {
            if wakes & (1 << waiter) != 0 {
                out.push(Action::Wake { node, waiter });
            }
        }
    }
    for node in 0..nodes {
        if world.env[node as usize].clients_left > 0 {
            out.push(Action::Client { node });
        }
    }
    if world.crashes > 0 {
        for node in 0..nodes {
            let pending = world.persists.iter().filter(|(n, _)| *n == node).count();
            for keep in 0..=pending {
                out.push(Action::Crash { node, keep: keep as u8 });
            }
        }
    }
    for node in 0..nodes {
        let resets = world.env[node as usize].resets;
        for peer in 0..nodes {
            if resets & (1 << peer) != 0 {
                out.push(Action::Reset { node, peer });
            }
        }
    }
    if out.len() > limits::ACTIONS_PER_STATE {
        return Err(TooManyActions { count: out.len() });
    }
    Ok(())
}

impl fmt::Display for Action {
    /// The token form, which counterexample files store and `FromStr` reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Init { variant } => write!(f, "INIT({variant})"),
            Action::Deliver { from, to, msg } => write!(f, "DELIVER({from}->{to}, {})", hex(msg.as_slice())),
            Action::Drop { from, to, msg } => write!(f, "DROP({from}->{to}, {})", hex(msg.as_slice())),
            Action::Dup { from, to, msg } => write!(f, "DUP({from}->{to}, {})", hex(msg.as_slice())),
            Action::Fire { node, timer } => write!(f, "FIRE({node}, {timer})"),
            Action::Flush { node } => write!(f, "FLUSH({node})"),
            Action::Wake { node, waiter } => write!(f, "WAKE({node}, {waiter})"),
            Action::Client { node } => write!(f, "CLIENT({node})"),
            Action::Crash { node, keep } => write!(f, "CRASH({node}, {keep})"),
            Action::Reset { node, peer } => write!(f, "RESET({node}, {peer})"),
            Action::Direct { index } => write!(f, "ACTION({index})"),
        }
    }
}

/// An action token that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad action `{0}`")]
pub struct BadAction(pub String);

impl FromStr for Action {
    type Err = BadAction;

    fn from_str(s: &str) -> Result<Action, BadAction> {
        let bad = || BadAction(s.to_string());
        let open = s.find('(').ok_or_else(bad)?;
        let name = &s[..open];
        let inner = s[open + 1..].strip_suffix(')').ok_or_else(bad)?;
        let args: Vec<&str> = inner.split(',').map(str::trim).collect();
        let num = |i: usize| -> Result<u64, BadAction> { args.get(i).ok_or_else(bad)?.parse().map_err(|_| bad()) };
        let byte = |i: usize| -> Result<u8, BadAction> { u8::try_from(num(i)?).map_err(|_| bad()) };
        let link = || -> Result<(u8, u8, Payload), BadAction> {
            if args.len() != 2 {
                return Err(bad());
            }
            let (a, b) = args[0].split_once("->").ok_or_else(bad)?;
            let from = a.trim().parse().map_err(|_| bad())?;
            let to = b.trim().parse().map_err(|_| bad())?;
            let bytes = unhex(args[1]).ok_or_else(bad)?;
            Ok((from, to, Payload::new(&bytes).ok_or_else(bad)?))
        };
        let arity = |n: usize| if args.len() == n { Ok(()) } else { Err(bad()) };
        Ok(match name {
            "INIT" => {
                arity(1)?;
                Action::Init { variant: u32::try_from(num(0)?).map_err(|_| bad())? }
            }
            "DELIVER" => {
                let (from, to, msg) = link()?;
                Action::Deliver { from, to, msg }
            }
            "DROP" => {
                let (from, to, msg) = link()?;
                Action::Drop { from, to, msg }
            }
            "DUP" => {
                let (from, to, msg) = link()?;
                Action::Dup { from, to, msg }
            }
            "FIRE" => {
                arity(2)?;
                Action::Fire { node: byte(0)?, timer: byte(1)? }
            }
            "FLUSH" => {
                arity(1)?;
                Action::Flush { node: byte(0)? }
            }
            "WAKE" => {
                arity(2)?;
                Action::Wake { node: byte(0)?, waiter: byte(1)? }
            }
            "CLIENT" => {
                arity(1)?;
                Action::Client { node: byte(0)? }
            }
            "CRASH" => {
                arity(2)?;
                Action::Crash { node: byte(0)?, keep: byte(1)? }
            }
            "RESET" => {
                arity(2)?;
                Action::Reset { node: byte(0)?, peer: byte(1)? }
            }
            "ACTION" => {
                arity(1)?;
                Action::Direct { index: u16::try_from(num(0)?).map_err(|_| bad())? }
            }
            _ => return Err(bad()),
        })
    }
}

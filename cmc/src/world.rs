//! The world: one global state, as one canonical byte string.
//!
//! The engine works on a decoded [`World`] (vectors it can edit) and stores
//! and hashes its encoding. The encoding is, in order:
//!
//! 1. every node's state, `state_size` bytes each;
//! 2. the header: drops, dups, crashes and timeouts left (one byte each),
//!    then per node: clients left, the armed-timer bitmap (two bytes, little
//!    endian), the pending-wake bitmap and the pending-reset bitmap over
//!    peers;
//! 3. the network (see [`crate::network`]);
//! 4. per node, its count of pending persists, then each record (length
//!    byte, bytes), oldest first;
//! 5. the ghost log: its count, then each reply (node, length byte, bytes)
//!    in emission order.
//!
//! A direct-actions (calibration) core's world is its one state and nothing
//! else, as the manual says: such a core has one node, no budgets and no
//! effects, so the other parts would be constant.
//!
//! Every part is canonical (FIFO channels in a fixed order, a bag sorted), so
//! two worlds are the same state exactly when their bytes are equal. The
//! fingerprint is the 128-bit xxh3 of those bytes. This module owns the
//! layout and nothing else: it does not know what an action is.

use crate::core::{NodeId, Payload};
use crate::network::{Msg, Network};

/// A 128-bit fingerprint of a world's bytes.
pub type Fingerprint = u128;

/// Fingerprints a world encoding.
#[inline]
pub fn fingerprint(bytes: &[u8]) -> Fingerprint {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Per-node environment the engine owns, kept in the header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeEnv {
    /// Client requests this node has yet to receive.
    pub clients_left: u8,
    /// Armed timers: bit `t` for timer `t`.
    pub timers: u16,
    /// Pending wakes: bit `w` for waiter `w`.
    pub wakes: u8,
    /// Pending resets: bit `p` for a reset of the connection to peer `p`,
    /// not yet told to this node.
    pub resets: u8,
}

/// What is fixed for a run and needed to read a world's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The number of nodes.
    pub nodes: u8,
    /// The size of one node's state, in bytes.
    pub state_size: usize,
    /// How messages travel, which decides the network's encoding.
    pub network: Network,
    /// A direct-actions core: the encoding is the state bytes alone.
    pub direct: bool,
}

/// One global state, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    pub(crate) states: Vec<u8>,
    pub(crate) drops: u8,
    pub(crate) dups: u8,
    pub(crate) crashes: u8,
    pub(crate) timeouts: u8,
    pub(crate) env: Vec<NodeEnv>,
    /// Messages in flight. FIFO: grouped by (from, to) ascending, arrival
    /// order within a channel. Bag: sorted, copies adjacent.
    pub(crate) net: Vec<Msg>,
    /// Pending persists: grouped by node ascending, oldest first.
    pub(crate) persists: Vec<(NodeId, Payload)>,
    /// The ghost log of client replies, in emission order.
    pub(crate) replies: Vec<(NodeId, Payload)>,
}

/// The bytes do not form a world of this shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed world encoding: {0}")]
pub struct DecodeError(pub &'static str);

impl World {
    /// A world of `shape` with every byte zero and nothing in flight.
    pub fn empty(shape: &Shape) -> World {
        World {
            states: vec![0; shape.nodes as usize * shape.state_size],
            drops: 0,
            dups: 0,
            crashes: 0,
            timeouts: 0,
            env: vec![NodeEnv::default(); shape.nodes as usize],
            net: Vec::new(),
            persists: Vec::new(),
            replies: Vec::new(),
        }
    }

    /// Copies `other` into `self`, reusing allocations.
    pub fn copy_from(&mut self, other: &World) {
        self.states.clone_from(&other.states);
        self.drops = other.drops;
        self.dups = other.dups;
        self.crashes = other.crashes;
        self.timeouts = other.timeouts;
        self.env.clone_from(&other.env);
        self.net.clone_from(&other.net);
        self.persists.clone_from(&other.persists);
        self.replies.clone_from(&other.replies);
    }

    /// How many nodes the world has.
    pub fn nodes(&self) -> u8 {
        self.env.len() as u8
    }

    /// Node `n`'s state bytes.
    pub fn state_bytes(&self, n: NodeId, state_size: usize) -> &[u8] {
        let at = n as usize * state_size;
        &self.states[at..at + state_size]
    }

    /// The engine's environment of node `n`: clients left, timers, wakes,
    /// resets.
    pub fn env(&self, n: NodeId) -> NodeEnv {
        self.env[n as usize]
    }

    /// Budgets left: (drops, dups, crashes, timeouts).
    pub fn budgets_left(&self) -> (u8, u8, u8, u8) {
        (self.drops, self.dups, self.crashes, self.timeouts)
    }

    /// Messages in flight, in canonical order.
    pub fn messages(&self) -> &[Msg] {
        &self.net
    }

    /// Node `n`'s pending persists, oldest first.
    pub fn persists_of(&self, n: NodeId) -> impl Iterator<Item = &[u8]> {
        self.persists.iter().filter(move |(m, _)| *m == n).map(|(_, p)| p.as_slice())
    }

    /// The ghost log: (node, reply) in emission order.
    pub fn replies(&self) -> impl Iterator<Item = (NodeId, &[u8])> {
        self.replies.iter().map(|(n, p)| (*n, p.as_slice()))
    }

    /// Writes the canonical encoding to `out` (cleared first).
    pub fn encode(&self, shape: &Shape, out: &mut Vec<u8>) {
        out.clear();
        self.encode_append(shape, out);
    }

    /// Appends the canonical encoding to `out`.
    pub fn encode_append(&self, shape: &Shape, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.states);
        if shape.direct {
            return;
        }
        out.extend_from_slice(&[self.drops, self.dups, self.crashes, self.timeouts]);
        for e in &self.env {
            let t = e.timers.to_le_bytes();
            out.extend_from_slice(&[e.clients_left, t[0], t[1], e.wakes, e.resets]);
        }
        crate::network::encode(shape, &self.net, out);
        let mut i = 0;
        for n in 0..shape.nodes {
            let start = i;
            while i < self.persists.len() && self.persists[i].0 == n {
                i += 1;
            }
            out.push((i - start) as u8);
            for (_, p) in &self.persists[start..i] {
                push_payload(out, p);
            }
        }
        out.push(self.replies.len() as u8);
        for (n, p) in &self.replies {
            out.push(*n);
            push_payload(out, p);
        }
    }

    /// Decodes `bytes` into `self`, reusing allocations.
    pub fn decode_into(&mut self, shape: &Shape, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader { bytes, at: 0 };
        let states = r.take(shape.nodes as usize * shape.state_size)?;
        self.states.clear();
        self.states.extend_from_slice(states);
        if shape.direct {
            if r.at != bytes.len() {
                return Err(DecodeError("trailing bytes"));
            }
            return Ok(());
        }
        self.drops = r.byte()?;
        self.dups = r.byte()?;
        self.crashes = r.byte()?;
        self.timeouts = r.byte()?;
        self.env.clear();
        for _ in 0..shape.nodes {
            let clients_left = r.byte()?;
            let timers = u16::from_le_bytes([r.byte()?, r.byte()?]);
            let wakes = r.byte()?;
            let resets = r.byte()?;
            self.env.push(NodeEnv { clients_left, timers, wakes, resets });
        }
        self.net.clear();
        crate::network::decode(shape, &mut r, &mut self.net)?;
        self.persists.clear();
        for n in 0..shape.nodes {
            let count = r.byte()?;
            for _ in 0..count {
                let p = r.payload()?;
                self.persists.push((n, p));
            }
        }
        self.replies.clear();
        let count = r.byte()?;
        for _ in 0..count {
            let n = r.byte()?;
            let p = r.payload()?;
            self.replies.push((n, p));
        }
        if r.at != bytes.len() {
            return Err(DecodeError("trailing bytes"));
        }
        Ok(())
    }
}

pub(crate) fn push_payload(out: &mut Vec<u8>, p: &Payload) {
    let s = p.as_slice();
    out.push(s.len() as u8);
    out.extend_from_slice(s);
}

/// A cursor over a world encoding.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or(DecodeError("length overflow"))?;
        let s = self.bytes.get(self.at..end).ok_or(DecodeError("truncated"))?;
        self.at = end;
        Ok(s)
    }

    pub(crate) fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn payload(&mut self) -> Result<Payload, DecodeError> {
        let len = self.byte()? as usize;
        let s = self.take(len)?;
        Payload::new(s).ok_or(DecodeError("payload over 32 bytes"))
    }
}

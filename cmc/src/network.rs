//! The network: messages in flight between nodes, FIFO or bag.
//!
//! FIFO (the default) is one ordered channel per ordered pair of distinct
//! nodes, as with TCP; only the head of a channel can be delivered or
//! dropped, and a drop resets the connection. A bag is an unordered multiset
//! that may duplicate. Both are stored as one vector of [`Msg`] kept in
//! canonical order: FIFO grouped by (from, to) with arrival order inside a
//! channel, a bag fully sorted with copies adjacent.
//!
//! Encoding: FIFO writes, for each pair (from, to) with from != to in
//! ascending order, a count byte and then each message (length byte,
//! bytes). A bag writes a two-byte little-endian count, then each message
//! (from, to, length byte, bytes) in sorted order.

use serde::{Deserialize, Serialize};

use crate::core::{NodeId, Payload, limits};
use crate::world::{DecodeError, Reader, Shape, push_payload};

/// How messages travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// One ordered channel per pair of nodes; never duplicates.
    #[default]
    Fifo,
    /// An unordered multiset that may duplicate (with a dup budget).
    Bag,
}

impl Network {
    /// The mode's name, as `--network` and files spell it: `fifo` or
    /// `bag`.
    pub fn name(self) -> &'static str {
        match self {
            Network::Fifo => "fifo",
            Network::Bag => "bag",
        }
    }
}

impl std::str::FromStr for Network {
    type Err = String;
    fn from_str(s: &str) -> Result<Network, String> {
        match s {
            "fifo" => Ok(Network::Fifo),
            "bag" => Ok(Network::Bag),
            _ => Err(format!("unknown network mode `{s}` (expected fifo or bag)")),
        }
    }
}

/// One message in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Msg {
    /// The sender.
    pub from: NodeId,
    /// The receiver.
    pub to: NodeId,
    /// The message's bytes.
    pub payload: Payload,
}

/// A channel would hold more than [`limits::QUEUE_MAX`] messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelFull;

/// Adds `msg` to the network.
pub(crate) fn send(mode: Network, net: &mut Vec<Msg>, msg: Msg) -> Result<(), ChannelFull> {
    let key = (msg.from, msg.to);
    let start = net.partition_point(|m| (m.from, m.to) < key);
    let end = start + net[start..].partition_point(|m| (m.from, m.to) == key);
    if end - start >= limits::QUEUE_MAX {
        return Err(ChannelFull);
    }
    match mode {
        Network::Fifo => net.insert(end, msg),
        Network::Bag => {
            let at = start + net[start..end].partition_point(|m| m.payload <= msg.payload);
            net.insert(at, msg);
        }
    }
    Ok(())
}

/// The index of the head of channel (from, to), if any.
pub(crate) fn head(net: &[Msg], from: NodeId, to: NodeId) -> Option<usize> {
    let at = net.partition_point(|m| (m.from, m.to) < (from, to));
    (at < net.len() && net[at].from == from && net[at].to == to).then_some(at)
}

/// The index of one copy of `msg` in a bag.
pub(crate) fn find(net: &[Msg], msg: &Msg) -> Option<usize> {
    net.binary_search(msg).ok()
}

/// Empties both directions between `a` and `b`.
pub(crate) fn reset_pair(net: &mut Vec<Msg>, a: NodeId, b: NodeId) {
    net.retain(|m| !((m.from == a && m.to == b) || (m.from == b && m.to == a)));
}

/// Empties every channel to and from `n`.
pub(crate) fn isolate(net: &mut Vec<Msg>, n: NodeId) {
    net.retain(|m| m.from != n && m.to != n);
}

pub(crate) fn encode(shape: &Shape, net: &[Msg], out: &mut Vec<u8>) {
    match shape.network {
        Network::Fifo => {
            let mut i = 0;
            for from in 0..shape.nodes {
                for to in 0..shape.nodes {
                    if from == to {
                        continue;
                    }
                    let start = i;
                    while i < net.len() && net[i].from == from && net[i].to == to {
                        i += 1;
                    }
                    out.push((i - start) as u8);
                    for m in &net[start..i] {
                        push_payload(out, &m.payload);
                    }
                }
            }
            debug_assert_eq!(i, net.len(), "FIFO network not in canonical order");
        }
        Network::Bag => {
            out.extend_from_slice(&(net.len() as u16).to_le_bytes());
            for m in net {
                out.push(m.from);
                out.push(m.to);
                push_payload(out, &m.payload);
            }
        }
    }
}

pub(crate) fn decode(shape: &Shape, r: &mut Reader<'_>, net: &mut Vec<Msg>) -> Result<(), DecodeError> {
    match shape.network {
        Network::Fifo => {
            for from in 0..shape.nodes {
                for to in 0..shape.nodes {
                    if from == to {
                        continue;
                    }
                    let count = r.byte()?;
                    for _ in 0..count {
                        let payload = r.payload()?;
                        net.push(Msg { from, to, payload });
                    }
                }
            }
        }
        Network::Bag => {
            let count = u16::from_le_bytes([r.byte()?, r.byte()?]);
            for _ in 0..count {
                let from = r.byte()?;
                let to = r.byte()?;
                let payload = r.payload()?;
                net.push(Msg { from, to, payload });
            }
        }
    }
    Ok(())
}

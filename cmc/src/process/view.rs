//! `struct cmc_view` of `cmc.h`: what a C invariant sees of a process world
//! (nodes, liveness, reported and durable bytes, the clock, the ghost log).
//! The layout is C's; a test compiles `cmc.h` and compares sizes and
//! offsets.

use super::limits;
use super::world::{Life, ProcessWorld};

/// `CMC_VIEW_VERSION` in `cmc.h`.
pub const VIEW_VERSION: u32 = 1;

/// `struct cmc_record`: a state or durable record.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcRecord {
    /// Bytes used, 0 to [`limits::STATE_BYTES_MAX`].
    pub len: u8,
    /// The record's bytes, then zeros.
    pub bytes: [u8; limits::STATE_BYTES_MAX],
}

/// `struct cmc_node_view`: one node.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcNodeView {
    /// `CMC_LIVE` 0, `CMC_EXITED` 1, `CMC_SIGNALED` 2.
    pub life: u8,
    /// 1 once the node wrote a record to fd 193, else 0.
    pub has_durable: u8,
    /// Zero: padding C would add, made explicit.
    pub reserved: [u8; 2],
    /// The exit code or the signal; 0 while live.
    pub status: i32,
    /// The last record written to fd 3.
    pub state: CmcRecord,
    /// The last record written to fd 193.
    pub durable: CmcRecord,
}

/// `struct cmc_reply`: one reply of the ghost log.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcReply {
    /// The node that wrote it on a client connection.
    pub node: u8,
    /// Bytes used, 0 to [`limits::VIEW_REPLY_BYTES_MAX`].
    pub len: u8,
    /// The reply's bytes, then zeros.
    pub bytes: [u8; limits::VIEW_REPLY_BYTES_MAX],
}

/// `struct cmc_view`: what a C invariant is given of one world.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcView {
    /// [`VIEW_VERSION`].
    pub version: u32,
    /// Nodes used in `node`, 1 to [`limits::NODES_MAX`].
    pub nodes: u32,
    /// The logical clock, in whole seconds passed (the world keeps
    /// milliseconds), moved only by TIMEOUT.
    pub clock: u32,
    /// Entries used in `reply`.
    pub replies: u32,
    /// Every node; the first `nodes` are used, the rest zero.
    pub node: [CmcNodeView; limits::NODES_MAX],
    /// The ghost log, oldest first; the first `replies` are used.
    pub reply: [CmcReply; limits::REPLIES_MAX],
}

fn record(bytes: &[u8]) -> CmcRecord {
    let mut r = CmcRecord { len: bytes.len() as u8, bytes: [0; limits::STATE_BYTES_MAX] };
    r.bytes[..bytes.len()].copy_from_slice(bytes);
    r
}

impl CmcView {
    /// The view of `world`. Every byte is defined (unused entries are zero),
    /// so a predicate cannot read garbage.
    pub fn of(world: &ProcessWorld) -> Box<CmcView> {
        let empty = CmcNodeView {
            life: 0,
            has_durable: 0,
            reserved: [0; 2],
            status: 0,
            state: record(&[]),
            durable: record(&[]),
        };
        let mut v = Box::new(CmcView {
            version: VIEW_VERSION,
            nodes: world.nodes.len() as u32,
            clock: u32::try_from(world.clock / 1000).unwrap_or(u32::MAX),
            replies: world.replies.len() as u32,
            node: [empty; limits::NODES_MAX],
            reply: [CmcReply { node: 0, len: 0, bytes: [0; limits::VIEW_REPLY_BYTES_MAX] }; limits::REPLIES_MAX],
        });
        for (i, n) in world.nodes.iter().enumerate() {
            let (life, status) = match n.life {
                Life::Live => (0, 0),
                Life::Exited(c) => (1, c),
                Life::Signaled(s) => (2, s),
                Life::Down => (3, 0),
            };
            v.node[i] = CmcNodeView {
                life,
                has_durable: n.durable.is_some() as u8,
                reserved: [0; 2],
                status,
                state: record(&n.state),
                durable: record(n.durable.as_deref().unwrap_or(&[])),
            };
        }
        for (i, (node, bytes)) in world.replies.iter().enumerate() {
            v.reply[i].node = *node;
            v.reply[i].len = bytes.len() as u8;
            v.reply[i].bytes[..bytes.len()].copy_from_slice(bytes);
        }
        v
    }
}

//! `struct cmc_view` of `cmc.h`: what a C invariant sees of a process world
//! (nodes, liveness, reported and durable bytes, the clock, the ghost log).
//! The layout is C's; a test compiles `cmc.h` and compares sizes and
//! offsets.

use super::limits;
use super::world::{Life, ProcessWorld};

/// `CMC_VIEW_VERSION` in `cmc.h`.
pub const VIEW_VERSION: u32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcRecord {
    pub len: u8,
    pub bytes: [u8; limits::STATE_BYTES_MAX],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcNodeView {
    /// `CMC_LIVE` 0, `CMC_EXITED` 1, `CMC_SIGNALED` 2.
    pub life: u8,
    pub has_durable: u8,
    pub reserved: [u8; 2],
    pub status: i32,
    pub state: CmcRecord,
    pub durable: CmcRecord,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcReply {
    pub node: u8,
    pub len: u8,
    pub bytes: [u8; limits::WRITE_BYTES_MAX],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmcView {
    pub version: u32,
    pub nodes: u32,
    pub clock: u32,
    pub replies: u32,
    pub node: [CmcNodeView; limits::NODES_MAX],
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
            clock: world.clock,
            replies: world.replies.len() as u32,
            node: [empty; limits::NODES_MAX],
            reply: [CmcReply { node: 0, len: 0, bytes: [0; limits::WRITE_BYTES_MAX] }; limits::REPLIES_MAX],
        });
        for (i, n) in world.nodes.iter().enumerate() {
            let (life, status) = match n.life {
                Life::Live => (0, 0),
                Life::Exited(c) => (1, c),
                Life::Signaled(s) => (2, s),
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

//! At-least-once delivery made exactly-once: node 0 (the sender) keeps each
//! client request on disk until node 1 (the receiver) acknowledges it, and
//! sends it again on a timer; the receiver delivers each request once, in
//! order, and remembers on disk how far it got.

use std::fmt;

use cmc::{Context, Core, Effects, Event, Model, PayloadKind};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

cmc::settings! {
    /// Settings of the outbox.
    pub struct OutboxSettings {
        /// Planted bug: the receiver delivers a request before its
        /// progress is on disk.
        bug_deliver_before_persist: u8 = 0,
    }
}

/// One node's state. The first two bytes are durable.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Node {
    /// Durable. Sender: requests accepted (numbered 1, 2, ...).
    pub accepted: u8,
    /// Durable. Receiver: requests delivered.
    pub delivered: u8,
    /// Sender: requests accepted or being written to disk.
    pub requested: u8,
    /// Sender: the highest request acknowledged.
    pub acked: u8,
    /// Receiver: the request being written to disk (0: none).
    pub writing: u8,
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "disk(accepted {}, delivered {}) requested {} acked {} writing {}",
            self.accepted, self.delivered, self.requested, self.acked, self.writing
        )
    }
}

/// Message tags: `[SEND, n]` carries request n, `[ACK, n]` acknowledges
/// every request up to n.
pub const SEND: u8 = 1;
pub const ACK: u8 = 2;

/// The sender's retransmission timer.
pub const RETRY: u8 = 0;

/// Persist records: `[ACCEPTED, n]` and `[DELIVERED, n]`.
pub const ACCEPTED: u8 = 1;
pub const DELIVERED: u8 = 2;

/// The core.
pub struct Outbox;

impl Core for Outbox {
    const NAME: &'static str = "outbox";
    type State = Node;
    type Settings = OutboxSettings;
    const DURABLE: usize = 2;

    fn step(ctx: &Context<'_, OutboxSettings>, s: &mut Node, event: Event<'_>, out: &mut Effects) {
        if ctx.node == 0 {
            sender(s, event, out);
        } else {
            receiver(ctx, s, event, out);
        }
    }

    fn apply_persist(_ctx: &Context<'_, OutboxSettings>, s: &mut Node, record: &[u8]) {
        match *record {
            [ACCEPTED, n] => s.accepted = n,
            [DELIVERED, n] => s.delivered = n,
            _ => {}
        }
    }

    /// Traces show `send 1` rather than `0101`.
    fn show_payload(_settings: &OutboxSettings, kind: PayloadKind, bytes: &[u8]) -> Option<String> {
        match (kind, bytes) {
            (PayloadKind::Message { .. }, [SEND, n]) => Some(format!("send {n}")),
            (PayloadKind::Message { .. }, [ACK, n]) => Some(format!("ack {n}")),
            (PayloadKind::Persist { .. }, [ACCEPTED, n]) => Some(format!("accepted {n}")),
            (PayloadKind::Persist { .. }, [DELIVERED, n]) => Some(format!("delivered {n}")),
            (PayloadKind::Reply { .. }, [n]) => Some(format!("delivered {n}")),
            _ => None,
        }
    }
}

/// Sends the oldest request not yet acknowledged, if any, and keeps the
/// timer armed while one is outstanding.
fn send_next(s: &Node, out: &mut Effects) {
    if s.acked < s.accepted {
        out.send(1, &[SEND, s.acked + 1]);
        out.arm(RETRY);
    } else {
        out.cancel(RETRY);
    }
}

fn sender(s: &mut Node, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Client { .. } => {
            s.requested += 1;
            out.persist(&[ACCEPTED, s.requested]);
        }
        // A request is on disk: if it is the next one, send it.
        Event::Flushed => send_next(s, out),
        Event::Deliver { msg: &[ACK, n], .. } if n > s.acked => {
            s.acked = n;
            send_next(s, out);
        }
        // The timer fired, or the connection was reset (a message was lost
        // or the receiver crashed): send again what is outstanding.
        Event::Fire { timer: RETRY } | Event::Reset { .. } => send_next(s, out),
        Event::Restart => {
            s.requested = s.accepted;
            send_next(s, out);
        }
        _ => {}
    }
}

fn receiver(ctx: &Context<'_, OutboxSettings>, s: &mut Node, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Deliver { msg: &[SEND, n], .. } if n == s.delivered + 1 && s.writing == 0 => {
            s.writing = n;
            out.persist(&[DELIVERED, n]);
            if ctx.settings.bug_deliver_before_persist != 0 {
                out.reply(&[n]);
            }
        }
        // Delivered already: say so again, the ack may have been lost.
        Event::Deliver { msg: &[SEND, n], .. } if n <= s.delivered => out.send(0, &[ACK, s.delivered]),
        Event::Flushed => {
            if ctx.settings.bug_deliver_before_persist == 0 {
                out.reply(&[s.writing]);
            }
            out.send(0, &[ACK, s.writing]);
            s.writing = 0;
        }
        _ => {}
    }
}

/// The model: a sender and a receiver, and what must hold.
pub fn model(settings: OutboxSettings) -> Model<Outbox> {
    Model::<Outbox>::new(settings)
        .nodes(2)
        .always("delivered-once", |w| {
            let mut seen = [false; 256];
            w.replies().all(|(_, r)| !std::mem::replace(&mut seen[r[0] as usize], true))
        })
        .eventually("all-delivered", |w| w.state(1).delivered == w.state(0).accepted)
}

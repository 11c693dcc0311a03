//! A replicated register with a primary and backups, as the core
//! `primary-backup`.
//!
//! Node 0 is the primary, nodes 1.. are backups. Client request number `i`
//! at the primary (CLIENT(0)) writes the value `i + 1`: the primary keeps it
//! in memory, queues it for its own disk and sends `Write(v)` to every
//! backup. A backup queues the value for its disk and, once it is durable
//! (`Flushed`), acknowledges with `Ack(bitmap of its durable values)`. The
//! primary replies to the client (the ghost log) only when the value is
//! durable on its own disk and acknowledged by every backup. A connection
//! reset (a dropped message or a crashed backup) makes the primary send
//! again every write that backup has not acknowledged; a backup answers a
//! write it already holds on disk with a fresh ack. A crashed node restarts
//! from its durable bytes; the writes a crashed primary had not yet
//! acknowledged are lost, and their clients never got a reply. Backups take
//! no client requests (CLIENT at a backup does nothing), and a primary
//! ignores requests past the seventh, which have no value bit.
//!
//! Properties: `acknowledged-writes-survive` (every value in the ghost log is
//! in every node's current store, which after a crash is what its disk
//! held) and `writes-complete` (eventually: a primary that still holds a
//! write has acknowledged it).
//!
//! Planted bugs: `bug_ack_before_flush` (the primary replies once the
//! backups have acked, before its own write is durable: CRASH(0, 0) loses an
//! acknowledged value), `bug_backup_ack_before_flush` (a backup acks a write
//! as soon as it is queued for disk: CRASH(1, 0) loses it) and
//! `bug_no_resend_on_reset` (the primary ignores a connection reset, so a
//! write whose message was dropped is never acknowledged).
//!
//! Actions exercised (FIFO network with a drop): CLIENT, DELIVER, DROP,
//! RESET, FLUSH, CRASH(n, j) with torn prefixes (two writes pending at the
//! primary, of which a crash may keep the first).

use std::fmt;

use cmc::{Context, Core, Effects, Event, Model, limits};
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

cmc::settings! {
    /// Settings of `primary-backup`.
    pub struct PrimaryBackupSettings {
        /// Planted bug: the primary replies to the client before its own
        /// write of the value is durable.
        bug_ack_before_flush: u8 = 0,
        /// Planted bug: a backup acknowledges a write before it is durable.
        bug_backup_ack_before_flush: u8 = 0,
        /// Planted bug: the primary does not send writes again after a
        /// connection reset.
        bug_no_resend_on_reset: u8 = 0,
    }
}

/// Values are 1..=VALUE_MAX, one bit each in a `u8`.
pub const VALUE_MAX: u8 = 7;

/// Message tags: `Write` carries a value, `Ack` a bitmap of values.
pub mod msg {
    /// `Write(v)`, primary to backup: store value `v`.
    pub const WRITE: u8 = 1;
    /// `Ack(bitmap)`, backup to primary: the values durable on its disk.
    pub const ACK: u8 = 2;
}

/// One node's state. The first byte is durable; a persist record is one
/// value, which `apply_persist` adds to it.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PrimaryBackupState {
    /// Durable: the values on this node's disk, by bit.
    pub stored: u8,
    /// The values this node holds: on disk or queued for it.
    pub store: u8,
    /// Primary: values written but not yet acknowledged to their client.
    pub pending: u8,
    /// Primary: for backup `b`, at `b - 1`, the values it acked as durable.
    pub acks: [u8; limits::NODES_MAX - 1],
}

/// The values in the set `v`, in order. An iterator, not a list: `step`
/// must not allocate (the purity gate).
fn values(v: u8) -> impl Iterator<Item = u8> + Clone {
    (1..=VALUE_MAX).filter(move |i| v & (1 << i) != 0)
}

/// A set of values as `[1, 3]`, for people.
struct Values(u8);

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(values(self.0)).finish()
    }
}

impl fmt::Debug for PrimaryBackupState {
    /// `disk` is durable; the primary's pending writes and acks follow.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "disk {:?} store {:?}", Values(self.stored), Values(self.store))?;
        if self.pending != 0 {
            write!(f, " pending {:?}", Values(self.pending))?;
        }
        for (b, acked) in self.acks.iter().enumerate() {
            if *acked != 0 {
                write!(f, " acked by {} {:?}", b + 1, Values(*acked))?;
            }
        }
        Ok(())
    }
}

/// The core `primary-backup`.
pub struct PrimaryBackup;

impl Core for PrimaryBackup {
    const NAME: &'static str = "primary-backup";
    type State = PrimaryBackupState;
    type Settings = PrimaryBackupSettings;
    const DURABLE: usize = 1;

    fn step(ctx: &Context<'_, Self::Settings>, s: &mut PrimaryBackupState, event: Event<'_>, out: &mut Effects) {
        if ctx.node == 0 {
            primary(ctx, s, event, out);
        } else {
            backup(ctx, s, event, out);
        }
    }

    fn apply_persist(_ctx: &Context<'_, Self::Settings>, s: &mut PrimaryBackupState, record: &[u8]) {
        if let [v @ 1..=VALUE_MAX] = *record {
            s.stored |= 1 << v;
        }
    }
}

/// Replies for every pending value that is durable here and acked by every
/// backup, lowest value first.
fn complete(ctx: &Context<'_, PrimaryBackupSettings>, s: &mut PrimaryBackupState, out: &mut Effects) {
    for v in 1..=VALUE_MAX {
        let bit = 1 << v;
        if s.pending & bit == 0 {
            continue;
        }
        let mut durable = s.stored & bit != 0;
        if ctx.settings.bug_ack_before_flush != 0 {
            // Queued for disk is taken for on disk.
            durable = s.store & bit != 0;
        }
        let acked = (1..ctx.nodes).all(|b| s.acks[b as usize - 1] & bit != 0);
        if durable && acked {
            s.pending &= !bit;
            out.reply(&[v]);
        }
    }
}

fn primary(ctx: &Context<'_, PrimaryBackupSettings>, s: &mut PrimaryBackupState, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Init { .. } => *s = PrimaryBackupState::new_zeroed(),
        Event::Client { index } if index < VALUE_MAX => {
            let v = index + 1;
            s.store |= 1 << v;
            s.pending |= 1 << v;
            out.persist(&[v]);
            for b in 1..ctx.nodes {
                out.send(b, &[msg::WRITE, v]);
            }
        }
        Event::Deliver { from, msg: [msg::ACK, acked] } => {
            s.acks[from as usize - 1] |= *acked;
            complete(ctx, s, out);
        }
        Event::Flushed => complete(ctx, s, out),
        Event::Reset { peer } => {
            if ctx.settings.bug_no_resend_on_reset != 0 {
                return;
            }
            // Whatever was in flight either way is gone: send again every
            // write this backup has not acked.
            let missing = s.pending & !s.acks[peer as usize - 1];
            for v in values(missing) {
                out.send(peer, &[msg::WRITE, v]);
            }
        }
        Event::Restart => {
            s.store = s.stored;
        }
        _ => {}
    }
}

fn backup(ctx: &Context<'_, PrimaryBackupSettings>, s: &mut PrimaryBackupState, event: Event<'_>, out: &mut Effects) {
    match event {
        Event::Init { .. } => *s = PrimaryBackupState::new_zeroed(),
        Event::Deliver { msg: [msg::WRITE, v @ 1..=VALUE_MAX], .. } => {
            let bit = 1 << *v;
            if s.store & bit == 0 {
                s.store |= bit;
                out.persist(&[*v]);
                if ctx.settings.bug_backup_ack_before_flush != 0 {
                    out.send(0, &[msg::ACK, s.store]);
                }
            } else if s.stored & bit != 0 {
                // Sent again after a reset: the ack may have been lost.
                out.send(0, &[msg::ACK, s.stored]);
            }
        }
        Event::Flushed => out.send(0, &[msg::ACK, s.stored]),
        Event::Restart => {
            s.store = s.stored;
        }
        _ => {}
    }
}

/// Two nodes (a primary and one backup), FIFO, two client writes, one drop
/// and one crash.
pub fn model(settings: PrimaryBackupSettings) -> Model<PrimaryBackup> {
    Model::<PrimaryBackup>::new(settings)
        .nodes(2)
        .clients(2)
        .drops(1)
        .crashes(1)
        .always("acknowledged-writes-survive", |w| {
            w.replies().all(|(_, r)| match *r {
                [v @ 1..=VALUE_MAX] => w.states().all(|s| s.store & (1 << v) != 0),
                _ => false,
            })
        })
        .eventually("writes-complete", |w| w.state(0).pending == 0)
}

//! Where a candidate and an event stand in one-thread BFS order, and how
//! they travel.

use super::wire::{In, Out};
use crate::property::Kind;

/// A candidate's place in one-thread BFS order: its parent's id, then
/// [`SUB_ERROR`], the successor's index plus one, or [`SUB_TERMINAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub(super) parent: u64,
    pub(super) sub: u32,
}

/// Expanding the parent failed: before any of its successors.
pub(super) const SUB_ERROR: u32 = 0;
/// The parent has no successor and failed a terminal check: after
/// everything else it leads to (nothing).
pub(super) const SUB_TERMINAL: u32 = u32::MAX;

/// Something that ends the search, at a place in BFS order.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Event {
    pub(super) key: Key,
    pub(super) what: What,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum What {
    /// `states_max`: the new world at the key would be one too many.
    Cap,
    /// Invariant `.0` fails in the new world at the key.
    Violation(u32),
    /// Property `.0`'s code failed on the new world at the key.
    PropertyError(u32, String),
    /// Expanding the parent failed.
    ExpandError(String),
    /// The parent has no successor and fails this terminal check.
    Terminal(String, Kind),
    /// A terminal check's code failed on the parent.
    TerminalError(String),
}

impl Event {
    /// The order events are met in: by key, and at one key the cap first
    /// (one thread checks the cap before it records the world).
    pub(super) fn order(&self) -> (Key, u8) {
        (self.key, u8::from(self.what != What::Cap))
    }

    /// Whether the event is at a new world that one thread records.
    pub(super) fn discovered(&self) -> bool {
        matches!(self.what, What::Violation(_) | What::PropertyError(..))
    }

    pub(super) fn write(&self, o: &mut Out) {
        o.u64(self.key.parent);
        o.u32(self.key.sub);
        match &self.what {
            What::Cap => o.u8(0),
            What::Violation(i) => {
                o.u8(1);
                o.u32(*i);
            }
            What::PropertyError(i, e) => {
                o.u8(2);
                o.u32(*i);
                o.str(e);
            }
            What::ExpandError(e) => {
                o.u8(3);
                o.str(e);
            }
            What::Terminal(name, kind) => {
                o.u8(4);
                o.str(name);
                o.kind(*kind);
            }
            What::TerminalError(e) => {
                o.u8(5);
                o.str(e);
            }
        }
    }

    pub(super) fn read(i: &mut In<'_>) -> Result<Event, String> {
        let key = Key { parent: i.u64()?, sub: i.u32()? };
        let what = match i.u8()? {
            0 => What::Cap,
            1 => What::Violation(i.u32()?),
            2 => What::PropertyError(i.u32()?, i.str()?),
            3 => What::ExpandError(i.str()?),
            4 => What::Terminal(i.str()?, i.kind()?),
            5 => What::TerminalError(i.str()?),
            t => return Err(format!("internal: unknown event {t} in a distributed search message")),
        };
        Ok(Event { key, what })
    }
}

pub(super) fn earliest(a: Option<Event>, b: Option<Event>) -> Option<Event> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.order() < a.order() { b } else { a }),
        (a, b) => a.or(b),
    }
}

pub(super) fn write_opt_event(o: &mut Out, e: &Option<Event>) {
    match e {
        None => o.u8(0),
        Some(e) => {
            o.u8(1);
            e.write(o);
        }
    }
}

pub(super) fn read_opt_event(i: &mut In<'_>) -> Result<Option<Event>, String> {
    Ok(match i.u8()? {
        0 => None,
        _ => Some(Event::read(i)?),
    })
}

pub(super) fn write_opt_key(o: &mut Out, k: Option<Key>) {
    match k {
        None => o.u8(0),
        Some(k) => {
            o.u8(1);
            o.u64(k.parent);
            o.u32(k.sub);
        }
    }
}

pub(super) fn read_opt_key(i: &mut In<'_>) -> Result<Option<Key>, String> {
    Ok(match i.u8()? {
        0 => None,
        _ => Some(Key { parent: i.u64()?, sub: i.u32()? }),
    })
}

//! Probe: a global counter reached through a pointer stored in read-only
//! data, so that the code itself references only read-only memory.

use std::sync::atomic::{AtomicU64, Ordering};

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

static HIDDEN: AtomicU64 = AtomicU64::new(0);
/// Read-only itself: only the pointer it holds leads to writable data.
static SLOT: &AtomicU64 = &HIDDEN;

pub struct ReadOnlyPointer;

impl Core for ReadOnlyPointer {
    const NAME: &'static str = "probe-read-only-pointer";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // `black_box` hides which static the pointer came from, so the
        // compiler must load it from SLOT instead of folding it to HIDDEN.
        let slot: &&AtomicU64 = core::hint::black_box(&SLOT);
        base(s, event, out, slot.fetch_add(1, Ordering::Relaxed));
    }
}

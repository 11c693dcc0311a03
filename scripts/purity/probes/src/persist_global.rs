//! Probe: a global counter read in `apply_persist` rather than `step`.

use std::sync::atomic::{AtomicU64, Ordering};

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

static FLUSHES: AtomicU64 = AtomicU64::new(0);

pub struct PersistGlobal;

impl Core for PersistGlobal {
    const NAME: &'static str = "probe-persist-global";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 8;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, 0);
    }

    fn apply_persist(_: &Context<'_, NoSettings>, s: &mut ProbeState, _record: &[u8]) {
        s.n = FLUSHES.fetch_add(1, Ordering::Relaxed);
    }
}

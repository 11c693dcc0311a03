//! Probe: a global counter (a static `AtomicU64`).

use std::sync::atomic::{AtomicU64, Ordering};

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

static COUNTER: AtomicU64 = AtomicU64::new(0);

pub struct GlobalCounter;

impl Core for GlobalCounter {
    const NAME: &'static str = "probe-global-counter";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, COUNTER.fetch_add(1, Ordering::Relaxed));
    }
}

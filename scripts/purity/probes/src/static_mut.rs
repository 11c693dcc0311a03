//! Probe: a `static mut` counter.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

static mut COUNT: u64 = 0;

pub struct StaticMut;

impl Core for StaticMut {
    const NAME: &'static str = "probe-static-mut";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // SAFETY: none; this is the forbidden thing.
        let extra = unsafe {
            COUNT += 1;
            COUNT
        };
        base(s, event, out, extra);
    }
}

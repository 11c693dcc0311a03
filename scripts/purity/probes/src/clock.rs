//! Probe: a clock read (`std::time::Instant`).

use std::time::Instant;

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Clock;

impl Core for Clock {
    const NAME: &'static str = "probe-clock";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let now = Instant::now();
        base(s, event, out, now.elapsed().as_nanos() as u64);
    }
}

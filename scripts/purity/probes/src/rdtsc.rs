//! Probe: the time-stamp counter (`core::arch::x86_64::_rdtsc`).

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Rdtsc;

impl Core for Rdtsc {
    const NAME: &'static str = "probe-rdtsc";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // SAFETY: rdtsc has no preconditions; reading it is the forbidden thing.
        let tsc = unsafe { core::arch::x86_64::_rdtsc() };
        base(s, event, out, tsc);
    }
}

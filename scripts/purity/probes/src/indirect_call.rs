//! Probe: a call through a function pointer the gate cannot follow.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

fn double(x: u64) -> u64 {
    x.wrapping_mul(2)
}

pub struct IndirectCall;

impl Core for IndirectCall {
    const NAME: &'static str = "probe-indirect-call";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let f: fn(u64) -> u64 = core::hint::black_box(double);
        base(s, event, out, f(s.n));
    }
}

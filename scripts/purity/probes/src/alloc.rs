//! Probe: a heap allocation (`Vec`).

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Alloc;

impl Core for Alloc {
    const NAME: &'static str = "probe-alloc";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let v = vec![s.n; 4];
        base(s, event, out, core::hint::black_box(v).len() as u64);
    }
}

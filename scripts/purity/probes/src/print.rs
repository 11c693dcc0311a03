//! Probe: output (`println!`).

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Print;

impl Core for Print {
    const NAME: &'static str = "probe-print";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        println!("step {}", s.n);
        base(s, event, out, 0);
    }
}

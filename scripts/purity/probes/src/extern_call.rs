//! Probe: a call to a foreign function outside the allowed set.

unsafe extern "C" {
    /// Defined nowhere: the probe is compiled, never linked.
    fn purity_probe_elsewhere(x: u64) -> u64;
}

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct ExternCall;

impl Core for ExternCall {
    const NAME: &'static str = "probe-extern-call";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // SAFETY: none; calling it is the forbidden thing.
        let extra = unsafe { purity_probe_elsewhere(s.n) };
        base(s, event, out, extra);
    }
}

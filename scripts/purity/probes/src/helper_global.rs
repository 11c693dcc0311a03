//! Probe: writable data reached only through helper functions in another module (a generic one, then a never-inlined one).

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct HelperGlobal;

impl Core for HelperGlobal {
    const NAME: &'static str = "probe-helper-global";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, crate::helpers::through(s.n));
    }
}

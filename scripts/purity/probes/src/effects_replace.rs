//! Probe: replacing the whole effect buffer, which erases what was emitted.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct EffectsReplace;

impl Core for EffectsReplace {
    const NAME: &'static str = "probe-effects-replace";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, 0);
        *out = Effects::default();
    }
}

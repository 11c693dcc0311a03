//! Probe: a direct write into the effect buffer, behind the methods' back.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct EffectsWrite;

impl Core for EffectsWrite {
    const NAME: &'static str = "probe-effects-write";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // SAFETY: none; writing the private buffer is the forbidden thing.
        unsafe { (out as *mut Effects).cast::<u8>().add(8).write(1) };
        base(s, event, out, 0);
    }
}

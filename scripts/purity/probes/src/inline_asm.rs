//! Probe: inline assembly that does nothing the machine code would betray.

use std::arch::asm;

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct InlineAsm;

impl Core for InlineAsm {
    const NAME: &'static str = "probe-inline-asm";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let mut extra = s.n;
        // SAFETY: moves a register to itself.
        unsafe { asm!("mov {0}, {0}", inout(reg) extra) };
        base(s, event, out, extra);
    }
}

//! Probe: CPU identification through `core::arch`, where `__cpuid` is a
//! safe function: no `unsafe`, no `asm!`, only the instruction betrays it.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Cpuid;

impl Core for Cpuid {
    const NAME: &'static str = "probe-cpuid";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let leaf = core::arch::x86_64::__cpuid(0);
        base(s, event, out, leaf.eax as u64);
    }
}

//! Probe: a random number from the `getrandom` system call, through libc.

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Getrandom;

impl Core for Getrandom {
    const NAME: &'static str = "probe-getrandom";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let mut extra = 0u64;
        // SAFETY: writes 8 bytes into `extra`; the call itself is the forbidden thing.
        unsafe { libc::getrandom((&raw mut extra).cast(), 8, 0) };
        base(s, event, out, extra);
    }
}

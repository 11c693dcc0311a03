//! Probe: a random number (`RandomState`, seeded from the OS).

use std::hash::{BuildHasher, RandomState};

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct RandomStateProbe;

impl Core for RandomStateProbe {
    const NAME: &'static str = "probe-random-state";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, RandomState::new().hash_one(s.n));
    }
}

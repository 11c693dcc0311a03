//! Probe: a thread-local counter (`thread_local!`).

use std::cell::Cell;

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

thread_local! {
    static LOCAL_COUNT: Cell<u64> = const { Cell::new(0) };
}

pub struct ThreadLocal;

impl Core for ThreadLocal {
    const NAME: &'static str = "probe-thread-local";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        let extra = LOCAL_COUNT.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        base(s, event, out, extra);
    }
}

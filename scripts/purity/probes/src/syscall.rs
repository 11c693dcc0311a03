//! Probe: a raw system call (`libc::syscall`).

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

pub struct Syscall;

impl Core for Syscall {
    const NAME: &'static str = "probe-syscall";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // SAFETY: getpid has no arguments; the call itself is the forbidden thing.
        let pid = unsafe { libc::syscall(libc::SYS_getpid) };
        base(s, event, out, pid as u64);
    }
}

//! Probe: a `memcpy` of the crate's own, which counts its calls in a
//! global. The name is on the gate's allowed list, but only the C library's
//! `memcpy` is trusted: one defined in a built crate is checked like any
//! other function.

use std::sync::atomic::{AtomicU64, Ordering};

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

static COPIES: AtomicU64 = AtomicU64::new(0);

/// # Safety
///
/// As the C library's `memcpy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    COPIES.fetch_add(1, Ordering::Relaxed);
    for i in 0..n {
        // SAFETY: the caller's, as for memcpy; volatile so that the loop
        // does not become a call to memcpy.
        unsafe { dest.add(i).write_volatile(src.add(i).read_volatile()) };
    }
    dest
}

pub struct OwnMemcpy;

impl Core for OwnMemcpy {
    const NAME: &'static str = "probe-own-memcpy";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        // A copy big enough that the compiler calls memcpy for it.
        let big = core::hint::black_box([s.n as u8; 4096]);
        let copy = big;
        base(s, event, out, core::hint::black_box(copy)[usize::from(copy[1])] as u64);
    }
}

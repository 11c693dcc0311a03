//! Helpers for the `helper_global` probe: the forbidden thing is two calls
//! away from `step`, in another module.

use std::sync::atomic::{AtomicU64, Ordering};

static TOTAL: AtomicU64 = AtomicU64::new(0);

/// Generic, so it is monomorphised into the caller's crate.
pub fn through<T: Into<u64>>(x: T) -> u64 {
    bump(x.into())
}

#[inline(never)]
fn bump(x: u64) -> u64 {
    TOTAL.fetch_add(x, Ordering::Relaxed)
}

//! `lock-service`: a lock server with waiters; the lost wake-up is found by
//! an `eventually` property.

use cmc::Model;
use cmc_examples::lock_service::{LockService, LockServiceSettings, model};

fn with(f: impl FnOnce(&mut LockServiceSettings)) -> LockServiceSettings {
    let mut s = LockServiceSettings::default();
    f(&mut s);
    s
}

#[cmc::model(core = LockService, network = bag, dups = 1)]
fn correct() -> Model<LockService> {
    model(LockServiceSettings::default())
}

#[cmc::model(network = fifo, dups = 0)]
fn correct_fifo() -> Model<LockService> {
    model(LockServiceSettings::default())
}

#[cmc::model(expect = violation("all-requests-served"))]
fn bug_lost_wakeup() -> Model<LockService> {
    model(with(|s| s.bug_lost_wakeup = 1))
}

#[cmc::model(expect = violation("mutual-exclusion"))]
fn bug_unchecked_release() -> Model<LockService> {
    model(with(|s| s.bug_unchecked_release = 1))
}

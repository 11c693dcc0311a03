//! The outbox's models: the protocol as it should be, and with its planted
//! bug, which the search must find.

use cmc::Model;
use outbox::{Outbox, OutboxSettings, model};

#[cmc::model(clients = 2, drops = 1, crashes = 1, timeouts = 2)]
fn correct() -> Model<Outbox> {
    model(OutboxSettings::default())
}

#[cmc::model(clients = 2, crashes = 1, timeouts = 2, expect = violation("delivered-once"))]
fn bug_deliver_before_persist() -> Model<Outbox> {
    model(OutboxSettings { bug_deliver_before_persist: 1 })
}

cmc_runner::main!();

//! `disk-paxos`: Disk Paxos (`HDiskSynod`), the calibration core. The
//! correct model is calibration configuration c02 with the paper's
//! invariants (TLC: 1,902 distinct, 12,740 generated, depth 19); each
//! planted bug is its mutant module's configuration (c19, c21, c22), caught
//! by `Agreement` as TLC catches it.

use cmc::Model;
use cmc_examples::disk_paxos::{DiskPaxos, DiskPaxosSettings, model, model_with};

fn agreement(settings: DiskPaxosSettings) -> Model<DiskPaxos> {
    model_with(settings, &["Agreement"]).expect("a known invariant")
}

/// c02: N = 2, two inputs, one disk, K = 1.
#[cmc::model(core = DiskPaxos)]
fn correct() -> Model<DiskPaxos> {
    model(DiskPaxosSettings::default())
}

/// MutOwnValue (c19).
#[cmc::model(expect = violation("Agreement"))]
fn bug_own_value() -> Model<DiskPaxos> {
    agreement(DiskPaxosSettings { bug_own_value: 1, ..DiskPaxosSettings::default() })
}

/// MutNoAbort (c21).
#[cmc::model(expect = violation("Agreement"))]
fn bug_no_abort() -> Model<DiskPaxos> {
    agreement(DiskPaxosSettings { bug_no_abort: 1, ..DiskPaxosSettings::default() })
}

/// MutSkipRead (c22).
#[cmc::model(expect = violation("Agreement"))]
fn bug_skip_read() -> Model<DiskPaxos> {
    agreement(DiskPaxosSettings { bug_skip_read: 1, ..DiskPaxosSettings::default() })
}

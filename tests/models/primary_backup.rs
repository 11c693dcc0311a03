//! `primary-backup`: a replicated register; acknowledged writes must survive
//! any crash, torn persist prefixes included.

use cmc::Model;
use cmc_examples::primary_backup::{PrimaryBackup, PrimaryBackupSettings, model};

fn with(f: impl FnOnce(&mut PrimaryBackupSettings)) -> PrimaryBackupSettings {
    let mut s = PrimaryBackupSettings::default();
    f(&mut s);
    s
}

#[cmc::model(core = PrimaryBackup, nodes = 2, clients = 2, drops = 1, crashes = 1)]
fn correct() -> Model<PrimaryBackup> {
    model(PrimaryBackupSettings::default())
}

#[cmc::model(nodes = 2, clients = 2, drops = 1, crashes = 2)]
fn correct_with_two_crashes() -> Model<PrimaryBackup> {
    model(PrimaryBackupSettings::default())
}

#[cmc::model(expect = violation("acknowledged-writes-survive"))]
fn bug_ack_before_flush() -> Model<PrimaryBackup> {
    model(with(|s| s.bug_ack_before_flush = 1))
}

#[cmc::model(expect = violation("acknowledged-writes-survive"))]
fn bug_backup_ack_before_flush() -> Model<PrimaryBackup> {
    model(with(|s| s.bug_backup_ack_before_flush = 1))
}

#[cmc::model(expect = violation("writes-complete"))]
fn bug_no_resend_on_reset() -> Model<PrimaryBackup> {
    model(with(|s| s.bug_no_resend_on_reset = 1))
}

//! `two-phase-tla`: Lamport's TwoPhase; TLC's counts pinned in the
//! snapshots (N=3: 288 distinct, 1,146 generated, depth 11).

use cmc::Model;
use cmc_examples::two_phase_tla::{TwoPhaseTla, TwoPhaseTlaSettings, model};

#[cmc::model(core = TwoPhaseTla)]
fn rms_3() -> Model<TwoPhaseTla> {
    model(TwoPhaseTlaSettings { rms: 3 })
}

#[cmc::model]
fn rms_5() -> Model<TwoPhaseTla> {
    model(TwoPhaseTlaSettings { rms: 5 })
}

#[cmc::model(search = dfs, depth_max = 11)]
fn rms_3_dfs() -> Model<TwoPhaseTla> {
    model(TwoPhaseTlaSettings { rms: 3 })
}

/// TLC: 296,448 distinct, 2,744,706 generated, depth 23.
#[cmc::model]
fn rms_7() -> Model<TwoPhaseTla> {
    model(TwoPhaseTlaSettings { rms: 7 })
}

/// TLC: 1,745,408 distinct, 18,507,778 generated, depth 26.
#[cmc::model]
fn rms_8() -> Model<TwoPhaseTla> {
    model(TwoPhaseTlaSettings { rms: 8 })
}

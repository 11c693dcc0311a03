//! The outbox's models: the protocol as it should be, and with its planted
//! bug, which the search must find.

use cmc::Model;
use outbox::{Outbox, OutboxSettings, model};

/// Two requests, one lost message, one crash: every interleaving.
#[cmc::model(clients = 2, drops = 1, crashes = 1, timeouts = 2)]
fn correct() -> Model<Outbox> {
    model(OutboxSettings::default())
}

/// The receiver delivers before its progress is on disk: a crash makes it
/// deliver the same request twice.
#[cmc::model(clients = 2, crashes = 1, timeouts = 2, expect = violation("delivered-once"))]
fn bug_deliver_before_persist() -> Model<Outbox> {
    model(OutboxSettings { bug_deliver_before_persist: 1 })
}

cmc_runner::main!();

/// A program as nodes: `logship.c`, built by `build.rs`.
mod programs {
    use cmc::process::{ProcessWorld, ProgramModel};

    /// Every backup's log is a prefix of the primary's (node 0's). A node
    /// reports {role, phase, subscribed, length, log...}.
    fn backups_are_prefixes(w: &ProcessWorld) -> bool {
        let log = |state: &[u8]| match state {
            [_, _, _, length, log @ ..] if log.len() == *length as usize => Some(log.to_vec()),
            _ => None,
        };
        let Some(logs) = w.nodes.iter().map(|n| log(&n.state)).collect::<Option<Vec<_>>>() else { return false };
        logs[1..].iter().all(|backup| logs[0].starts_with(backup))
    }

    /// A primary ships its log to two backups over TCP, whatever one lost
    /// message does.
    #[cmc::model(program = concat!(env!("OUT_DIR"), "/logship"), nodes = 3, drops = 1, timeouts = 2, timeout_byte)]
    fn logship() -> ProgramModel {
        ProgramModel::default().always("backups_are_prefixes", backups_are_prefixes)
    }
}

/// A core written in C: `two_phase.c`, built by `build.rs` into a static
/// library linked into this test.
mod ccores {
    use cmc::Kind;
    use cmc::ccore::{CModel, CmcCore, CmcWorld};

    unsafe extern "C" {
        static two_phase_core: CmcCore;
        fn atomicity(world: *const CmcWorld) -> i32;
    }

    /// Two-phase commit with a coordinator and two participants, one crash:
    /// no node commits while another aborts.
    #[cmc::model(nodes = 3, crashes = 1)]
    fn two_phase() -> CModel {
        // SAFETY: the `struct cmc_core` that build.rs links in.
        let core = unsafe { &two_phase_core };
        CModel::new(core).expect("a valid struct cmc_core").c_property(Kind::Always, "atomicity", atomicity)
    }
}

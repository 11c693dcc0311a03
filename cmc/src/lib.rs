//! cmc: an explicit-state model checker for protocol code.
//!
//! A [`Core`] is a step function over a fixed-size state per node; a
//! [`Model`] puts a core in an environment (nodes, network, budgets) with
//! properties; the searches in [`search`] explore every world reachable by
//! the environment's actions and return a [`Report`]. The engine does no I/O:
//! files, clocks and terminals belong to the caller (`cmc-runner`).

#![warn(missing_docs)]

// Lets `cmc::settings!` expand inside this crate's own tests.
extern crate self as cmc;

pub mod action;
pub mod catalog;
pub mod ccore;
pub mod chart;
pub mod core;
pub mod engine;
pub mod harness;
#[cfg(target_os = "linux")]
pub mod library;
pub mod model;
pub mod network;
pub mod property;
pub mod replay;
pub mod report;
pub mod search;
pub mod session;
pub mod symmetry;
pub mod trace;
pub mod world;

#[cfg(target_os = "linux")]
pub mod process;

/// The `linkme` crate, for the code `#[cmc::model]` and [`reads_models!`]
/// write, so that a crate declaring models needs no dependency on it.
pub use linkme;
/// The `zerocopy` crate, for the code [`settings!`] writes, so that its
/// derives need no dependency of the declaring crate.
pub use zerocopy;

/// Declares a model as a test: see the `cmc-macros` crate.
pub use cmc_macros::model;

pub use crate::action::Action;
pub use crate::core::{
    Context, Core, DirectActions, Effect, EffectError, Effects, Event, NoSettings, NodeId, Payload, PayloadKind,
    SettingError, SettingKey, Settings, limits,
};
pub use crate::engine::{Engine, StepError, StepErrorKind};
pub use crate::model::{Budgets, Identity, Model, ModelError};
pub use crate::network::{Msg, Network};
pub use crate::property::{Kind, Property, View};
pub use crate::replay::{ReplayError, replay, replay_with};
pub use crate::report::{CounterexampleFile, ProcessCounts, Report, Verdict};
pub use crate::search::{
    Control, CoreExplorer, DistributedError, Exchange, Explore, NoControl, Options, Progress, Search, Stop, check,
    check_with, explore, explore_keeping,
};
pub use crate::symmetry::{NodeSet, Renaming};
pub use crate::world::{Fingerprint, World};

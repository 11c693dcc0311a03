//! Shared by the gates that run the models suite's declarations themselves
//! (`planted.rs`, `determinism.rs`), under libtest's harness: the models'
//! generated check that their target has `harness = false` must pass here.
//! A program model finds `cmc-preload` as the runner does: `$CMC_PRELOAD`,
//! or the library embedded in `cmc`.

cmc::reads_models!();

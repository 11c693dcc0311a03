//! Shared by the gates that run the models suite's declarations
//! (`planted.rs`, `determinism.rs`): a program model's attributes with the
//! `cmc-preload` library, found or built as the models suite's runner
//! finds or builds it.

use cmc::harness::{Attributes, Declared};

/// `d`'s attributes; for a program model, with the preload.
pub fn attributes(d: &Declared) -> Attributes {
    let mut a = d.attributes;
    #[cfg(target_os = "linux")]
    if a.program.is_some() {
        a.preload = Some(preload());
    }
    a
}

/// `$CMC_PRELOAD`, or built under this target's temporary folder.
#[cfg(target_os = "linux")]
fn preload() -> &'static std::path::Path {
    let given = std::env::var_os("CMC_PRELOAD").map(std::path::PathBuf::from);
    cmc_runner::harness::preload_library(
        env!("CARGO"),
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        given.as_deref(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

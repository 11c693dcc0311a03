//! The bodies of the fuzz targets in `fuzz/`: what the `cmc` command does
//! with each input a user hands it (a model file, a TLC configuration, a
//! counterexample file, `--set KEY=VALUE`), up to where it would start a
//! search, then a short walk in place of the search. They live here so that
//! a fuzz target and the regression test that replays its findings
//! (`tests/tests/fuzz_regressions.rs`) run the same code under `cargo test`.
//!
//! Each returns the error the command would print (exit code 2). None may
//! panic, whatever its input: a panic is the finding. Nothing here reads a
//! file, loads a library or starts a process: the model file is parsed as
//! text (`model_file::parse`), and a counterexample of a program is not
//! replayed.

use std::path::Path;

use anyhow::{Result, anyhow, bail};

use cmc::catalog::Overrides;
use cmc::process::model_file;
use cmc::{CounterexampleFile, NoControl, Options, Search};
use cmc_examples::disk_paxos::cfg::{self, Module};
use cmc_examples::disk_paxos::model_with;

/// What a target returns: the error the command would print, if any.
pub type Outcome = Result<()>;

/// The walk that stands in for a search: one simulated walk of at most
/// this many actions, so that a model the input built runs its core a
/// little, in microseconds.
pub const WALK_LENGTH_MAX: u32 = 16;

fn walk() -> Options {
    Options { search: Search::Simulate { walks: 1, walk_length: WALK_LENGTH_MAX, seed: 0 }, ..Options::default() }
}

/// `cmc --model-file FILE`: the text of a model file, parsed and checked
/// as text, as a C core's when it names one (`core`), else as a
/// program's.
pub fn model_file(text: &str) -> Outcome {
    let path = Path::new("fuzz/model.toml");
    if cmc::ccore::model_file::names_core(text) {
        cmc::ccore::model_file::parse(text, path)?;
    } else {
        model_file::parse(text, path)?;
    }
    Ok(())
}

/// `cmc calibrate --config FILE.cfg MODULE`, for each module: the
/// configuration read, its model built and walked. The first error.
pub fn cfg(text: &str) -> Outcome {
    let mut first = Ok(());
    for module in Module::ALL {
        let result = cfg::read("fuzz.cfg", text, module).map_err(anyhow::Error::from).and_then(|cal| {
            let names: Vec<&str> = cal.invariants.iter().map(String::as_str).collect();
            let model = model_with(cal.settings, &names).map_err(|n| anyhow!("unknown invariant `{n}`"))?;
            cmc::check_with(&model, &walk(), &mut NoControl)?;
            Ok(())
        });
        if first.is_ok() {
            first = result;
        }
    }
    first
}

/// `cmc replay FILE`: the counterexample file read, written and read back
/// to the same value, and replayed against the catalog model it names.
pub fn counterexample(text: &str) -> Outcome {
    let file = CounterexampleFile::from_json(text)?;
    let again = CounterexampleFile::from_json(&file.to_json());
    assert_eq!(again.as_ref().ok(), Some(&file), "a counterexample file does not read back as written");
    if file.cmc_counterexample != 1 {
        bail!("format version {} (this cmc reads 1)", file.cmc_counterexample);
    }
    if file.model.model_file.is_some() || file.model.core.starts_with("program:") {
        // A program's replay starts processes: not here.
        return Ok(());
    }
    let catalog = cmc_examples::catalog();
    let entry = catalog.iter().find(|e| e.name == file.model.core).ok_or_else(|| anyhow!("unknown core"))?;
    let model = entry.build(&Overrides::from_identity(&file.model))?;
    model.replay(&file, false)?;
    Ok(())
}

/// `cmc check CORE --set KEY=VALUE...`: the first line names the core, each
/// other line is one `--set` argument; the model is built and walked.
pub fn set(text: &str) -> Outcome {
    let mut lines = text.split('\n');
    let name = lines.next().unwrap_or_default();
    let catalog = cmc_examples::catalog();
    let entry = catalog.iter().find(|e| e.name == name).ok_or_else(|| anyhow!("unknown core `{name}`"))?;
    let mut overrides = Overrides::default();
    for kv in lines {
        overrides.settings.push(crate::cli::parse_set(kv)?);
    }
    let model = entry.build(&overrides)?;
    model.check(&walk(), &mut NoControl)?;
    Ok(())
}

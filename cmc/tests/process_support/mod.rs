//! Shared by the `process_*` tests: builds the preload and the C example
//! programs once per test binary, and makes configurations for them.
//!
//! The preload is built by a nested `cargo build -p cmc-preload` into its
//! own target directory under `CARGO_TARGET_TMPDIR`: `cargo test -p cmc`
//! does not build the cdylib, and the outer cargo holds the lock of the
//! main target directory while tests run. `CMC_PRELOAD` overrides it. The C
//! programs in `examples/c` are compiled with the distribution's `cc`,
//! `-no-pie`, as a user would build a target.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cmc::process::{Config, ProcessAction, ProcessEngine, ProcessWorld};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cmc sits in the workspace").to_path_buf()
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// `libcmc_preload.so`, built once per test binary.
pub fn preload() -> PathBuf {
    static PRELOAD: OnceLock<PathBuf> = OnceLock::new();
    PRELOAD
        .get_or_init(|| {
            if let Some(p) = std::env::var_os("CMC_PRELOAD") {
                return PathBuf::from(p);
            }
            let target = tmp().join("preload-target");
            let out = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "cmc-preload", "--target-dir"])
                .arg(&target)
                .current_dir(repo())
                .output()
                .expect("cargo runs");
            assert!(out.status.success(), "building cmc-preload failed:\n{}", String::from_utf8_lossy(&out.stderr));
            target.join("debug/libcmc_preload.so")
        })
        .clone()
}

/// `examples/c/NAME.c`, compiled once per test binary with `extra` flags
/// (`-no-pie` unless `extra` says otherwise).
pub fn program_with(name: &str, extra: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let key = format!("{name}{}", extra.join(""));
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let dir = tmp().join("c");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out_path = dir.join(key.replace(['-', ' '], "_"));
    let mut cmd = Command::new("cc");
    cmd.args(["-O1", "-g", "-Wall", "-Werror"]);
    if !extra.contains(&"-pie") {
        cmd.arg("-no-pie");
    }
    cmd.args(extra).arg("-I").arg(repo()).arg(repo().join(format!("examples/c/{name}.c"))).arg("-o").arg(&out_path);
    cmd.arg("-lpthread");
    let out = cmd.output().expect("cc runs (install gcc)");
    assert!(out.status.success(), "cc {name}.c failed:\n{}", String::from_utf8_lossy(&out.stderr));
    built.insert(key, out_path.clone());
    out_path
}

pub fn program(name: &str) -> PathBuf {
    program_with(name, &[])
}

/// A configuration for `nodes` nodes of `examples/c/NAME.c`, with the
/// preload.
pub fn config(name: &str, nodes: u8) -> Config {
    let mut c = Config::new(program(name), nodes);
    c.preload = Some(preload());
    c.stall_timeout = Duration::from_secs(10);
    c
}

/// Parses a list of action tokens.
pub fn actions(tokens: &[&str]) -> Vec<ProcessAction> {
    tokens.iter().map(|t| t.parse().unwrap_or_else(|e| panic!("{e}"))).collect()
}

/// The enabled actions of `world`, as tokens.
pub fn enabled(world: &ProcessWorld) -> Vec<String> {
    let mut out = Vec::new();
    ProcessEngine::actions(world, &mut out);
    out.iter().map(|a| a.to_string()).collect()
}

/// Replays `tokens` from scratch on a fresh engine.
pub fn replay(config: &Config, tokens: &[&str]) -> ProcessWorld {
    let mut e = ProcessEngine::new(config.clone()).expect("valid config");
    e.replay(&actions(tokens)).unwrap_or_else(|err| panic!("{err}"))
}

//! Builds the example C programs (`make -C ../examples/c`) before the models
//! suite declares them as `#[cmc::model(program = ...)]`, so that a plain
//! `cargo test` on a clean clone checks them: the same build, into the same
//! `examples/c/build/`, that the model files and the README use.
//!
//! It reruns when a C source, the Makefile or `cmc.h` changes (not on every
//! build: the programs are inputs of the tests, not of the Rust code). The
//! process front end is Linux only; elsewhere this builds nothing. `make`
//! and `cc` are what `.ci/run` installs; without them the build fails with
//! make's error, rather than leaving program models to fail one by one.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.parent().expect("tests/ sits in the workspace");
    let dir = root.join("examples/c");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    sources.push(dir.join("Makefile"));
    sources.push(root.join("cmc.h"));
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    // Serial: a dozen small compiles, only when a source changed; cargo's
    // jobserver protocol and the installed make's need not agree.
    let out = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(&dir)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .output()
        .unwrap_or_else(|e| panic!("running make: {e} (install make and gcc: apt-get install make gcc libc6-dev)"));
    if !out.status.success() {
        panic!(
            "make -C {} failed ({}):\n{}{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

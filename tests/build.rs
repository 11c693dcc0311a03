//! Builds the example C programs (`make -C ../examples/c`) before the models
//! suite declares them as `#[cmc::model(program = ...)]`, so that a plain
//! `cargo test` on a clean clone checks them: the same build, into the same
//! `examples/c/build/`, that the model files and the README use. Builds the
//! example C cores the same way (`make -C ../examples/ccores`) and links
//! their static libraries, and the probe core `c/abi_probe.c`, into this
//! package, where `src/ccores.rs` declares them.
//!
//! It reruns when a C source, the Makefile or `cmc.h` changes (not on every
//! build: the programs are inputs of the tests, not of the Rust code). The
//! process front end is Linux only; elsewhere this builds nothing. `make`
//! and `cc` are what `.ci/run` installs; without them the build fails with
//! make's error, rather than leaving program models to fail one by one.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.parent().expect("tests/ sits in the workspace");
    make(root, &root.join("examples/c"));
    let cores = root.join("examples/ccores");
    make(root, &cores);
    println!("cargo:rustc-link-search=native={}", cores.join("build").display());
    println!("cargo:rustc-link-lib=static=two_phase");
    println!("cargo:rustc-link-lib=static=two_phase_tla");

    let probe = manifest.join("c/abi_probe.c");
    println!("cargo:rerun-if-changed={}", probe.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let object = out.join("abi_probe.o");
    run(Command::new("cc")
        .args(["-std=c11", "-O1", "-g", "-Wall", "-Werror", "-fPIC", "-c", "-I"])
        .arg(root)
        .arg(&probe)
        .arg("-o")
        .arg(&object));
    run(Command::new("ar").arg("rcs").arg(out.join("libabi_probe.a")).arg(&object));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=abi_probe");
}

/// Runs `make -s -C dir`, rerunning when a C source there, its Makefile or
/// `cmc.h` changes.
fn make(root: &Path, dir: &Path) {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(dir)
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
    run(Command::new("make").arg("-s").arg("-C").arg(dir).env_remove("MAKEFLAGS").env_remove("MFLAGS"));
}

fn run(command: &mut Command) {
    let out = command.output().unwrap_or_else(|e| {
        panic!("running {command:?}: {e} (install make and gcc: apt-get install make gcc libc6-dev)")
    });
    if !out.status.success() {
        panic!(
            "{command:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

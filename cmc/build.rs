//! Three build steps of the process front end, on Linux only.
//!
//! The preload: on x86-64, compiles `preload/lib.rs` (the `cmc-preload`
//! sources, kept inside this package so that they ship with it) into
//! `$OUT_DIR/libcmc_preload.so`, with the `rustc` cargo runs this script
//! with, for the target being built; `process::preload` embeds the result.
//! So any crate depending on `cmc` gets the preload with no nested cargo
//! and no environment variable. The preload depends on no crate, so a bare
//! `rustc` can build it; a failure fails this build with rustc's messages.
//!
//! The start stub: on x86-64, compiles `start/main.rs` the same way into
//! `$OUT_DIR/cmc-start`, a static executable with no libc, linked at a
//! fixed address by `start/start.ld`; `process::start` embeds it.
//!
//! libseccomp: lets the link find it on a machine that has the library but
//! not its development files: Debian installs `libseccomp.so.2` with
//! systemd, while the unversioned `libseccomp.so` that `-lseccomp` looks
//! for comes only with `libseccomp-dev`. When that name is missing, a link
//! to the versioned library in this crate's output directory stands in for
//! it, so that `cargo test` on a fresh machine needs no package installed.

use std::path::{Path, PathBuf};
use std::process::Command;

const DIRS: &[&str] = &["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        build_preload();
        build_start();
    }
    link_seccomp();
}

/// Compiles the preload as a cdylib into `$OUT_DIR`, or exits with rustc's
/// messages (passed through on stderr, which cargo shows for a failed
/// build script).
///
/// Optimised and without debug information (std's would be most of the
/// file, embedded in every binary that links `cmc`) whatever profile `cmc`
/// is built with: the preload runs inside every node, and one build of it
/// serves every profile. Rustflags and linker settings meant for the
/// target's crates are not passed on: the preload needs none.
fn build_preload() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let source_dir = manifest_dir.join("preload");
    // A directory: cargo reruns this script when any file in it changes.
    println!("cargo:rerun-if-changed={}", source_dir.display());
    // The start stub's protocol, which the preload includes.
    println!("cargo:rerun-if-changed={}", manifest_dir.join("start/protocol.rs").display());
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let out = out_dir.join("libcmc_preload.so");
    let rustc = env("RUSTC");
    let target = env("TARGET");
    let status = Command::new(&rustc)
        .arg(source_dir.join("lib.rs"))
        .args(["--crate-type", "cdylib", "--crate-name", "cmc_preload", "--edition", "2024"])
        .args(["--target", &target])
        .args(["-C", "opt-level=2", "-C", "debuginfo=0", "-C", "strip=debuginfo"])
        // Paths in the library (panic locations) relative to the package,
        // so that its bytes do not depend on where the package lies.
        .arg(format!("--remap-path-prefix={}=cmc", manifest_dir.display()))
        .arg("-o")
        .arg(&out)
        // rustc writes nothing to stdout, but cargo reads this script's
        // stdout for instructions: keep anything off it.
        .stdout(std::io::stderr())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("{rustc} failed ({s}) compiling {}", source_dir.join("lib.rs").display())),
        Err(e) => fail(&format!("cannot run {rustc} to compile {}: {e}", source_dir.join("lib.rs").display())),
    }
    if !Path::new(&out).is_file() {
        fail(&format!("{rustc} made no {}", out.display()));
    }
}

/// Compiles the start stub into `$OUT_DIR/cmc-start`, or exits with
/// rustc's messages. Optimised, without debug information, whatever
/// profile `cmc` is built with, as the preload.
///
/// `no_std` and `no_main`, so no crt objects and no libraries
/// (`-nostartfiles -nostdlib`); static (`crt-static`) and not
/// position-independent (relocation model `static`), so the kernel maps it
/// at the one address `start.ld` gives it, which needs the large code
/// model (the address does not fit the small model's 32 bits). The script
/// works with GNU ld and with lld, whichever rustc's linker uses. No build
/// id, so the bytes depend on the sources and the compiler only.
fn build_start() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let source_dir = manifest_dir.join("start");
    println!("cargo:rerun-if-changed={}", source_dir.display());
    let out = PathBuf::from(env("OUT_DIR")).join("cmc-start");
    let rustc = env("RUSTC");
    let main = source_dir.join("main.rs");
    let script = source_dir.join("start.ld");
    let status = Command::new(&rustc)
        .arg(&main)
        .args(["--crate-type", "bin", "--crate-name", "cmc_start", "--edition", "2024"])
        .args(["--target", &env("TARGET")])
        .args(["-C", "panic=abort", "-C", "opt-level=2", "-C", "debuginfo=0", "-C", "strip=debuginfo"])
        .args(["-C", "relocation-model=static", "-C", "code-model=large", "-C", "target-feature=+crt-static"])
        .args(["-C", "link-arg=-nostartfiles", "-C", "link-arg=-nostdlib"])
        .arg("-C")
        .arg(format!("link-arg=-Wl,-T,{}", script.display()))
        .args(["-C", "link-arg=-Wl,--build-id=none", "-C", "link-arg=-Wl,-z,norelro"])
        .arg(format!("--remap-path-prefix={}=cmc", manifest_dir.display()))
        .arg("-o")
        .arg(&out)
        .stdout(std::io::stderr())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("{rustc} failed ({s}) compiling {}", main.display())),
        Err(e) => fail(&format!("cannot run {rustc} to compile {}: {e}", main.display())),
    }
    if !out.is_file() {
        fail(&format!("{rustc} made no {}", out.display()));
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(&format!("cargo did not set ${name} for the build script")))
}

fn fail(message: &str) -> ! {
    eprintln!("cmc: building the preload library or the start stub: {message}");
    std::process::exit(1);
}

fn link_seccomp() {
    if DIRS.iter().any(|d| Path::new(d).join("libseccomp.so").exists()) {
        return;
    }
    let Some(versioned) = DIRS.iter().map(|d| Path::new(d).join("libseccomp.so.2")).find(|p| p.exists()) else {
        // Neither: the link fails naming -lseccomp; libseccomp-dev (or
        // libseccomp2) is what to install.
        return;
    };
    let Ok(out) = std::env::var("OUT_DIR") else { return };
    let link = Path::new(&out).join("libseccomp.so");
    let _ = std::fs::remove_file(&link);
    if std::os::unix::fs::symlink(&versioned, &link).is_ok() {
        println!("cargo:rustc-link-search=native={out}");
    }
}

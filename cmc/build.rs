//! Lets the link find libseccomp on a machine that has the library but not
//! its development files: Debian installs `libseccomp.so.2` with systemd,
//! while the unversioned `libseccomp.so` that `-lseccomp` looks for comes
//! only with `libseccomp-dev`. When that name is missing, a link to the
//! versioned library in this crate's output directory stands in for it, so
//! that `cargo test` on a fresh machine needs no package installed.

use std::path::Path;

const DIRS: &[&str] = &["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
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

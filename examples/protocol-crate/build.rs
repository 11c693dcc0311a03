//! Builds the C program the models check as nodes: this repository's
//! `examples/c/logship.c`, as a crate that ships a C node would build its
//! own (cmc accepts PIE and non-PIE builds alike).

use std::path::Path;
use std::process::Command;

fn main() {
    let source = Path::new("../c/logship.c");
    let include = Path::new("../.."); // cmc.h
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed=../../cmc.h");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-I"])
        .arg(include)
        .arg(source)
        .arg("-o")
        .arg(Path::new(&out).join("logship"))
        .status()
        .expect("running cc (apt-get install gcc)");
    assert!(status.success(), "cc failed on {}", source.display());
}

//! Builds the C code the models check: the program they run as nodes,
//! this repository's `examples/c/logship.c`, as a crate that ships a C node
//! would build its own (cmc accepts PIE and non-PIE builds alike); and the
//! C core `examples/ccores/two_phase.c`, as a static library linked into
//! the tests.

use std::path::Path;
use std::process::Command;

fn main() {
    let include = Path::new("../.."); // cmc.h
    println!("cargo:rerun-if-changed=../../cmc.h");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);

    let program = Path::new("../c/logship.c");
    println!("cargo:rerun-if-changed={}", program.display());
    cc(Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-I"])
        .arg(include)
        .arg(program)
        .arg("-o")
        .arg(out.join("logship")));

    let core = Path::new("../ccores/two_phase.c");
    println!("cargo:rerun-if-changed={}", core.display());
    let object = out.join("two_phase.o");
    cc(Command::new("cc")
        .args(["-O2", "-std=c11", "-Wall", "-Werror", "-fPIC", "-c", "-I"])
        .arg(include)
        .arg(core)
        .arg("-o")
        .arg(&object));
    cc(Command::new("ar").arg("rcs").arg(out.join("libtwo_phase.a")).arg(&object));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=two_phase");
}

fn cc(command: &mut Command) {
    let status = command.status().unwrap_or_else(|e| panic!("running {command:?}: {e} (apt-get install gcc)"));
    assert!(status.success(), "{command:?} failed");
}

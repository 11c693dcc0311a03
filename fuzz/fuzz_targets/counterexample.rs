//! A counterexample file: `cmc_cli::fuzzing::counterexample`. Any input may be
//! an error; none may panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = cmc_cli::fuzzing::counterexample(text);
});

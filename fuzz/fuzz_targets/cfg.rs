//! A TLC configuration (`.cfg`): `cmc_cli::fuzzing::cfg`. Any input may be an
//! error; none may panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = cmc_cli::fuzzing::cfg(text);
});

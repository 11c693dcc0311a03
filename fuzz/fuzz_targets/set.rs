//! A core name, then `--set KEY=VALUE` arguments, one a line:
//! `cmc_cli::fuzzing::set`. Any input may be an error; none may panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = cmc_cli::fuzzing::set(text);
});

//! A model file's text: `cmc_cli::fuzzing::model_file`. Any input may be an
//! error; none may panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = cmc_cli::fuzzing::model_file(text);
});

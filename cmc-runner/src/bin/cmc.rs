//! The `cmc` command: glue over `cmc_runner::cli`.

fn main() -> std::process::ExitCode {
    cmc_runner::cli::main()
}

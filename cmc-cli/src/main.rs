//! The `cmc` command: glue over `cmc_cli::cli`.

fn main() -> std::process::ExitCode {
    cmc_cli::cli::main()
}

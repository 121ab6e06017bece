//! `geogen`: the command line of geogen.
//!
//! Exit codes: 0 success, 1 script error (compile, run or render), 2 usage error (bad flags,
//! unreadable files, bad parameter syntax).

mod args;
mod commands;
mod info;
mod render;
mod report;
mod test;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let result = commands::dispatch(cli);
    match result {
        Ok(code) => code,
        Err(err) => {
            report::usage_error(&err);
            ExitCode::from(report::EXIT_USAGE)
        }
    }
}

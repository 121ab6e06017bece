//! `geogen`: the command line of geogen.
//!
//! Exit codes: 0 success, 1 script error (compile, run or render), 2 usage error (bad flags or
//! values, unknown parameters or maps, unreadable files, an unusable output directory); the rule
//! lives in [`report::exit_status`].

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

mod args;
mod commands;
mod export;
mod finish;
mod info;
mod measure;
mod names;
mod outdir;
mod pmtiles;
mod render;
mod report;
mod sidecar;
mod signals;
mod slang;
mod stats;
mod streamed;
mod test;
mod tiles;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: geogen::host::LargePages = geogen::host::LargePages::new();

fn main() -> ExitCode {
    geogen::host::keep_small_pages();
    let cli = args::Cli::parse();
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => ExitCode::from(report::report_error(&error)),
    }
}

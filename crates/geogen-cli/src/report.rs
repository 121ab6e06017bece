//! How the CLI shows errors: diagnostics with source snippets on stderr, colored on a terminal.

use std::io::IsTerminal;

use geogen::Failure;
use geogen_diag::RenderOptions;

pub const EXIT_SCRIPT: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// Prints a script failure: messages printed before it, then every diagnostic.
pub fn failure(failure: &Failure) {
    for m in &failure.messages {
        println!("{m}");
    }
    eprint!("{}", failure.render(RenderOptions { color: color_stderr() }));
}

pub fn usage_error(message: &str) {
    eprintln!("error: {message}");
}

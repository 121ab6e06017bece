//! How the CLI shows errors: diagnostics with source snippets on stderr, colored on a terminal.

use std::io::IsTerminal;

use geogen::Failure;
use geogen_diag::codes::{ErrorCode, Stage};
use geogen_diag::RenderOptions;

/// Exit status of a script error: the script does not compile, fails while running or cannot be
/// rendered (GGE1xxx, 2xxx, 3xxx, and the 5xxx internal errors, 6000, 9000).
pub const EXIT_SCRIPT: u8 = 1;
/// Exit status of a usage error: the command line, its values (host codes GGE4xxx: unknown or bad
/// `-p`, bad sizes or scale, unknown `--maps`), the files it names, or the output directory.
pub const EXIT_USAGE: u8 = 2;

/// The one rule from a diagnostic's code to the exit status: host codes (GGE4xxx) are the user's
/// settings meeting the script, so usage errors; every other code is the script's.
pub fn exit_status(code: ErrorCode) -> u8 {
    match code.info().map(|info| info.stage) {
        Some(Stage::Host) => EXIT_USAGE,
        _ => EXIT_SCRIPT,
    }
}

/// The exit status of a failure: that of its first (primary) diagnostic.
pub fn failure_status(failure: &Failure) -> u8 {
    failure.diagnostics.first().map_or(EXIT_SCRIPT, |d| exit_status(d.code))
}

/// Why a command stopped, as far as the exit status is concerned.
#[derive(Debug)]
pub enum CliError {
    /// The command line, a file it names or the output directory (exit 2); printed as `error: ...`.
    Usage(String),
    /// The script's diagnostics; the exit status follows [`failure_status`].
    Script(Box<Failure>),
    /// Already reported; exit with this status.
    Reported(u8),
}

impl From<String> for CliError {
    fn from(message: String) -> CliError {
        CliError::Usage(message)
    }
}

/// A file geogen could not write or encode: GGE4023 when the system refused the write (no space
/// left, no permission), GGE4021 when the format cannot hold the map, GGE4003 for a map of no
/// pixels or one too large for the format.
impl From<geogen_io::IoError> for CliError {
    fn from(e: geogen_io::IoError) -> CliError {
        use geogen::diag::codes;
        let code = match e {
            geogen_io::IoError::Io { .. } => codes::GGE4023,
            geogen_io::IoError::Encode { .. } => codes::GGE4021,
            _ => codes::GGE4003,
        };
        CliError::Usage(format!("{code}: {e}"))
    }
}

impl From<Failure> for CliError {
    fn from(failure: Failure) -> CliError {
        CliError::Script(Box::new(failure))
    }
}

/// Prints the error (unless it was already reported) and returns the exit status.
pub fn report_error(error: &CliError) -> u8 {
    match error {
        CliError::Usage(message) => {
            usage_error(message);
            EXIT_USAGE
        }
        CliError::Script(f) => {
            failure(f);
            failure_status(f)
        }
        CliError::Reported(status) => *status,
    }
}

pub fn color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// Prints a script failure: messages printed before it, then every diagnostic.
pub fn failure(failure: &Failure) {
    for m in &failure.messages {
        outln(m);
    }
    eprint!("{}", failure.render(RenderOptions { color: color_stderr() }));
}

pub fn usage_error(message: &str) {
    // Every error names its code: the specific one where the message gives it, else GGE4000
    // (the command was used in a way that cannot work).
    if message.starts_with("GGE") {
        eprintln!("error: {message}");
    } else {
        eprintln!("error: {}: {message}", geogen::diag::codes::GGE4000);
    }
}

/// Writes to stdout; a closed pipe (`geogen ... | head`) ends the program quietly instead of
/// panicking like `println!` does.
pub fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let result = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// `out` with a trailing newline.
pub fn outln(text: &str) {
    out(&format!("{text}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_diag::codes;

    #[test]
    fn host_codes_are_usage_errors_and_every_other_code_is_the_scripts() {
        for info in codes::TABLE {
            let expected = if info.code.number() / 1000 == 4 { EXIT_USAGE } else { EXIT_SCRIPT };
            assert_eq!(exit_status(info.code), expected, "{}", info.code);
        }
        assert_eq!(exit_status(codes::GGE4001), EXIT_USAGE);
        assert_eq!(exit_status(codes::GGE1315), EXIT_SCRIPT);
        assert_eq!(exit_status(codes::GGE3001), EXIT_SCRIPT);
    }
}

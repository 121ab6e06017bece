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
        outln(m);
    }
    eprint!("{}", failure.render(RenderOptions { color: color_stderr() }));
}

pub fn usage_error(message: &str) {
    eprintln!("error: {message}");
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

/// A JSON number that shows integers without a fraction (`3`, not `3.0`).
pub fn json_number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Value::from(n)
    }
}

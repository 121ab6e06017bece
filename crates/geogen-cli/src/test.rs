//! `geogen test`: runs test scripts with the test library and reports each as passed or failed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use geogen::{CompileOptions, Failure, MessageMode, RunSettings, Script};
use geogen_diag::{codes, ErrorCode};
use serde_json::json;

use crate::args::LimitArgs;
use crate::report;

/// The outcome of one test file.
struct Outcome {
    file: String,
    messages: Vec<String>,
    error: Option<ErrorReport>,
}

struct ErrorReport {
    code: ErrorCode,
    message: String,
    line: Option<u32>,
    column: Option<u32>,
    rendered: String,
}

fn error_report(failure: &Failure) -> ErrorReport {
    let first = failure.first();
    let position = first.span.map(|s| failure.source.line_col(s.start));
    ErrorReport {
        code: first.code,
        message: first.message.clone(),
        line: position.map(|p| p.line),
        column: position.map(|p| p.column),
        rendered: failure.render(geogen_diag::RenderOptions { color: report::color_stderr() }),
    }
}

/// Runs one test file. `messages` decides what happens to its `Print` messages: kept in the
/// outcome (for `--json`) or printed as they come.
fn run_one(path: &Path, limits: &LimitArgs, messages: MessageMode) -> Outcome {
    let file = path.display().to_string();
    let options = CompileOptions {
        test_library: true,
        main_map_mandatory: false,
        max_script_bytes: limits.source.max_script_bytes(),
    };
    let source = match geogen::read_script(path, options.max_script_bytes) {
        Ok(s) => s,
        Err(e) => {
            let e = format!("cannot read `{}`: {e}", path.display());
            return Outcome {
                file,
                messages: Vec::new(),
                error: Some(ErrorReport {
                    code: codes::GGE4000,
                    message: e.clone(),
                    line: None,
                    column: None,
                    rendered: format!("error: {e}\n"),
                }),
            };
        }
    };
    let settings = RunSettings { limits: limits.limits(), messages, ..RunSettings::default() };
    let result = Script::compile_bytes(&file, &source, &options).and_then(|script| script.run(&settings));
    match result {
        Ok(output) => Outcome { file, messages: output.messages, error: None },
        Err(failure) => Outcome { file, messages: failure.messages.clone(), error: Some(error_report(&failure)) },
    }
}

pub fn test(files: &[PathBuf], as_json: bool, limits: &LimitArgs) -> Result<ExitCode, crate::report::CliError> {
    if as_json {
        // Every message goes into its file's object, so they are kept (bounded by the heap limit).
        let outcomes: Vec<Outcome> = files.iter().map(|f| run_one(f, limits, MessageMode::Collect)).collect();
        let status = worst_status(outcomes.iter().filter_map(|o| o.error.as_ref()));
        let array: Vec<_> = outcomes
            .iter()
            .map(|o| {
                json!({
                    "file": o.file,
                    "passed": o.error.is_none(),
                    "error": o.error.as_ref().map(|e| json!({
                        "code": e.code.to_string(),
                        "message": e.message,
                        "line": e.line,
                        "column": e.column,
                    })),
                    "messages": o.messages,
                })
            })
            .collect();
        report::outln(&format!("{}", serde_json::Value::Array(array)));
        return Ok(ExitCode::from(status));
    }
    // Text: each file's messages as they are printed, then its PASS or FAIL line.
    let mut failed = 0;
    let mut status = 0;
    for file in files {
        let outcome = run_one(file, limits, MessageMode::stream(|m| report::outln(&format!("  | {m}"))));
        match &outcome.error {
            None => report::outln(&format!("PASS {}", outcome.file)),
            Some(e) => {
                failed += 1;
                status = status.max(report::exit_status(e.code));
                report::outln(&format!("FAIL {}", outcome.file));
                eprint!("{}", e.rendered);
            }
        }
    }
    report::outln(&format!("{} passed, {} failed", files.len() - failed, failed));
    Ok(ExitCode::from(status))
}

/// The most serious failure decides: an unreadable file (a usage error, 2) over a failing test (1).
fn worst_status<'a>(errors: impl Iterator<Item = &'a ErrorReport>) -> u8 {
    errors.map(|e| report::exit_status(e.code)).max().unwrap_or(0)
}

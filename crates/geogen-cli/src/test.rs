//! `geogen test`: runs test scripts with the test library and reports each as passed or failed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use geogen::{CompileOptions, Failure, RunSettings, Script};
use geogen_diag::{codes, ErrorCode};
use serde_json::json;

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

fn run_one(path: &Path) -> Outcome {
    let file = path.display().to_string();
    let source = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            return Outcome {
                file,
                messages: Vec::new(),
                error: Some(ErrorReport {
                    code: codes::GGE4000,
                    message: format!("cannot read the file: {e}"),
                    line: None,
                    column: None,
                    rendered: format!("error: cannot read `{}`: {e}\n", path.display()),
                }),
            }
        }
    };
    let options = CompileOptions { test_library: true, main_map_mandatory: false };
    let result = Script::compile(&file, &source, &options).and_then(|script| script.run(&RunSettings::default()));
    match result {
        Ok(output) => Outcome { file, messages: output.messages, error: None },
        Err(failure) => Outcome { file, messages: failure.messages.clone(), error: Some(error_report(&failure)) },
    }
}

pub fn test(files: &[PathBuf], as_json: bool) -> Result<ExitCode, crate::report::CliError> {
    let outcomes: Vec<Outcome> = files.iter().map(|f| run_one(f)).collect();
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    if as_json {
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
    } else {
        for o in &outcomes {
            match &o.error {
                None => report::outln(&format!("PASS {}", o.file)),
                Some(e) => {
                    report::outln(&format!("FAIL {}", o.file));
                    for m in &o.messages {
                        report::outln(&format!("  | {m}"));
                    }
                    eprint!("{}", e.rendered);
                }
            }
        }
        report::outln(&format!("{} passed, {} failed", outcomes.len() - failed, failed));
    }
    // The most serious failure decides: an unreadable file (a usage error) over a failing test.
    let status =
        outcomes.iter().filter_map(|o| o.error.as_ref()).map(|e| report::exit_status(e.code)).max().unwrap_or(0);
    Ok(ExitCode::from(status))
}

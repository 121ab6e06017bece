//! `geogen info`: what a script declares: name, description, parameters, map size, map names.

use std::path::Path;
use std::process::ExitCode;

use geogen::{CompileOptions, Dimension, Failure, ParameterKind, ScriptInfo};
use geogen_diag::codes;
use serde_json::{json, Value};

use crate::commands::compile;
use crate::report::{self, CliError};

pub fn info(path: &Path, as_json: bool) -> Result<ExitCode, CliError> {
    let compiled = match compile(path, &CompileOptions::default()) {
        Ok(compiled) => compiled,
        Err(CliError::Usage(message)) if as_json => {
            // A program reading stdout gets an answer it can parse, whatever went wrong.
            report::usage_error(&message);
            let error = json!({ "code": codes::GGE4000.to_string(), "message": message, "line": null, "column": null, "hint": null });
            report::outln(&pretty(&json!({ "diagnostics": [error] })));
            return Err(CliError::Reported(report::EXIT_USAGE));
        }
        Err(other) => return Err(other),
    };
    let script = match compiled {
        Ok(script) => script,
        Err(failure) if as_json => {
            report::failure(&failure);
            report::outln(&pretty(&failure_json(&failure)));
            return Err(CliError::Reported(report::failure_status(&failure)));
        }
        Err(failure) => return Err(failure.into()),
    };
    let info = script.info();
    if as_json {
        report::outln(&pretty(&info.to_json()));
    } else {
        report::out(&to_text(&info));
    }
    Ok(ExitCode::SUCCESS)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// `{"diagnostics": [{"code", "message", "line", "column", "hint"}]}`, positions 1-based (null when
/// a diagnostic has no position in the script).
fn failure_json(failure: &Failure) -> Value {
    let diagnostics: Vec<Value> = failure
        .diagnostics
        .iter()
        .map(|d| {
            let position = d.span.map(|s| failure.source.span_start(s));
            json!({
                "code": d.code.to_string(),
                "message": d.message,
                "line": position.map(|p| p.line),
                "column": position.map(|p| p.column),
                "hint": d.hint,
            })
        })
        .collect();
    json!({ "diagnostics": diagnostics })
}

fn dimension_text(d: &Dimension) -> String {
    match d {
        Dimension::Infinite => "infinite".to_string(),
        Dimension::Finite { default, min, max } => {
            let default = default.map(|d| format!("default {d}, ")).unwrap_or_default();
            format!("finite ({default}{min} to {max})")
        }
    }
}

fn to_text(info: &ScriptInfo) -> String {
    let mut out = String::new();
    out.push_str(&format!("name:        {}\n", info.metadata.name.as_deref().unwrap_or("(unnamed)")));
    if let Some(d) = &info.metadata.description {
        out.push_str(&format!("description: {d}\n"));
    }
    if let Some(a) = &info.metadata.author {
        out.push_str(&format!("author:      {a}\n"));
    }
    out.push_str(&format!("width:       {}\n", dimension_text(&info.metadata.width)));
    out.push_str(&format!("height:      {}\n", dimension_text(&info.metadata.height)));
    out.push_str(&format!("maps:        {}\n", info.maps.join(", ")));
    if info.metadata.parameters.is_empty() {
        out.push_str("parameters:  none\n");
    } else {
        out.push_str("parameters:\n");
        for p in &info.metadata.parameters {
            let detail = match &p.kind {
                ParameterKind::Boolean { default } => format!("Boolean, default {default}"),
                ParameterKind::Number { default, min, max, restriction } => {
                    format!("Number, default {default}, range {min} to {max}, {}", restriction.name())
                }
                ParameterKind::Enum { type_name, items, default } => {
                    let items: Vec<String> = items.iter().map(|(n, v)| format!("{n}={v}")).collect();
                    format!("{type_name} ({}), default {default}", items.join(", "))
                }
            };
            out.push_str(&format!("  {:<16} {detail}\n", p.name));
            if p.label != *p.name {
                out.push_str(&format!("  {:<16} label: {}\n", "", p.label));
            }
            if !p.description.is_empty() {
                out.push_str(&format!("  {:<16} {}\n", "", p.description));
            }
        }
    }
    out
}

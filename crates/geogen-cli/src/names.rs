//! `geogen names`: names from Lodestone rules, or every name they can make with its probability.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use geogen::diag::{Diagnostic, Diagnostics, SourceFile};
use geogen::names::{self as lodestone, EnumerationLimits, Limits, Mode, OnStepLimit, RuleSet, ScriptCode, Value};

use crate::args::NamesCmd;
use crate::report::{self, CliError};

/// Reads a rule file, at most the size limit plus one byte (a larger one is GGE7107).
pub fn read_rules(path: &Path, mode: Mode) -> Result<RuleSet, CliError> {
    let limit = lodestone::DEFAULT_MAX_RULES_BYTES;
    let bytes = geogen::read_script(path, limit).map_err(|e| {
        CliError::Usage(format!("{}: cannot read `{}`: {e}", geogen::diag::codes::GGE4024, path.display()))
    })?;
    lodestone::parse_bytes(&path.display().to_string(), &bytes, mode, limit)
        .map_err(|(diagnostics, file)| failure(diagnostics, Arc::new(file)))
}

fn failure(diagnostics: impl Into<Diagnostics>, source: Arc<SourceFile>) -> CliError {
    CliError::Script(Box::new(geogen::Failure { diagnostics: diagnostics.into(), source, messages: Vec::new() }))
}

pub fn names(cmd: &NamesCmd) -> Result<ExitCode, CliError> {
    let mode = if cmd.strict { Mode::Strict } else { Mode::Extended };
    let rules = read_rules(&cmd.rules, mode)?;
    let start = match &cmd.start {
        Some(start) => lodestone::start_name(start),
        None => rules.first_rule().unwrap_or_default().to_string(),
    };
    if rules.rule(&start).is_none() {
        let known: Vec<&str> = rules.rules().iter().map(|r| r.name.as_str()).filter(|n| !n.starts_with("<$")).collect();
        return Err(CliError::Usage(format!(
            "the rules have no rule `{start}` to start from (--start); they define {}",
            known.join(", ")
        )));
    }
    let mut vars = Vec::new();
    for (name, value) in &cmd.vars {
        lodestone::check_variable_name(name).map_err(|why| CliError::Usage(format!("--var {name}: {why}")))?;
        vars.retain(|(n, _): &(String, Value)| n != name);
        vars.push((name.clone(), Value::from_cli(value)));
    }
    let limits = Limits {
        max_steps: usize::try_from(cmd.max_steps).unwrap_or(usize::MAX),
        on_step_limit: if cmd.truncate { OnStepLimit::Truncate } else { OnStepLimit::Error },
        max_work: cmd.max_work,
        ..Limits::default()
    };
    let mut code_limits = lodestone::default_code_limits();
    if let Some(n) = cmd.max_code_instructions {
        code_limits.instruction_budget = n;
    }
    let mut code = ScriptCode::new(code_limits);
    let source = Arc::clone(rules.source());
    let fail = |d: Diagnostic| failure(d, Arc::clone(&source));
    if cmd.enumerate {
        let enumeration =
            EnumerationLimits { max_outputs: cmd.max_outputs, max_work: cmd.max_work, ..EnumerationLimits::default() };
        let outcomes = lodestone::enumerate(&rules, &start, &limits, &enumeration, &mut code, &vars).map_err(fail)?;
        if cmd.json {
            let list: Vec<serde_json::Value> = outcomes
                .iter()
                .map(|o| {
                    let mut entry = serde_json::json!({ "text": o.text, "p": o.probability });
                    if let Some(f) = o.fraction {
                        entry["fraction"] = serde_json::Value::from(f.to_string());
                    }
                    entry
                })
                .collect();
            report::outln(&serde_json::Value::Array(list).to_string());
        } else {
            let mut out = String::new();
            for o in &outcomes {
                let fraction = o.fraction.map(|f| f.to_string()).unwrap_or_default();
                out.push_str(&format!("{:<12} {:>11}  {}\n", probability(o.probability), fraction, o.text));
            }
            report::out(&out);
            eprintln!("{} output{}", outcomes.len(), if outcomes.len() == 1 { "" } else { "s" });
        }
        return Ok(ExitCode::SUCCESS);
    }
    let seed = geogen_random::recognize_seed(&cmd.seed);
    let distinct = cmd.distinct.then_some(cmd.max_tries);
    let batch = lodestone::Batch { seed, count: cmd.count, distinct };
    let made = lodestone::names(&rules, &start, batch, &limits, &mut code, &vars).map_err(fail)?;
    for warning in &made.warnings {
        let at = warning.span.map(|s| format!(" at {}", source.line_col(s.start))).unwrap_or_default();
        eprintln!("warning[{}]{at}: {} (the text so far was kept)", warning.code, warning.message);
    }
    if cmd.json {
        report::outln(&serde_json::Value::from(made.names).to_string());
    } else {
        let mut out = String::new();
        for name in &made.names {
            out.push_str(name);
            out.push('\n');
        }
        report::out(&out);
    }
    Ok(ExitCode::SUCCESS)
}

/// A probability with six decimals, or in scientific notation when that would show nothing.
fn probability(p: f64) -> String {
    if p >= 0.000_001 {
        format!("{p:.6}")
    } else {
        format!("{p:.3e}")
    }
}

//! One function per subcommand.

use std::path::Path;
use std::process::ExitCode;

use geogen::{CompileOptions, RunSettings, Script};

use crate::args::{Cli, Command, RunArgs};
use crate::report::{self, EXIT_SCRIPT};

/// Runs a command; `Err` is a usage error (exit 2).
pub fn dispatch(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Check { script } => check(&script),
        Command::Run { script, settings } => run(&script, &settings),
        Command::Info { script, json } => crate::info::info(&script, json),
        Command::Test { files, json } => crate::test::test(&files, json),
    }
}

pub fn read_script(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

pub fn compile(path: &Path, options: &CompileOptions) -> Result<Result<Script, geogen::Failure>, String> {
    let source = read_script(path)?;
    Ok(Script::compile(&path.display().to_string(), &source, options))
}

pub fn run_settings(args: &RunArgs) -> RunSettings {
    RunSettings {
        seed: geogen_random::recognize_seed(&args.seed),
        parameters: args.params.clone(),
        map_width: args.map_size.map(|s| s.0),
        map_height: args.map_size.map(|s| s.1),
        render_width: args.size.map(|s| s.0),
        render_height: args.size.map(|s| s.1),
        ..RunSettings::default()
    }
}

fn check(path: &Path) -> Result<ExitCode, String> {
    match compile(path, &CompileOptions::default())? {
        Ok(_) => {
            eprintln!("{}: ok", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => {
            report::failure(&failure);
            Ok(ExitCode::from(EXIT_SCRIPT))
        }
    }
}

fn run(path: &Path, args: &RunArgs) -> Result<ExitCode, String> {
    let script = match compile(path, &CompileOptions::default())? {
        Ok(s) => s,
        Err(failure) => {
            report::failure(&failure);
            return Ok(ExitCode::from(EXIT_SCRIPT));
        }
    };
    match script.run(&run_settings(args)) {
        Ok(output) => {
            for m in &output.messages {
                report::outln(&format!("{m}"));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => {
            report::failure(&failure);
            Ok(ExitCode::from(EXIT_SCRIPT))
        }
    }
}

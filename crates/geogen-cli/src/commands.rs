//! One function per subcommand.

use std::path::Path;
use std::process::ExitCode;

use geogen::{CompileOptions, RunSettings, Script};

use crate::args::{Cli, Command, RunArgs, ScriptArgs};
use crate::report::{self, CliError};

/// Runs a command; `Err` says why it stopped (and so its exit status).
pub fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Check { script } => check(&script),
        Command::Run { script, settings, sequence, bounds } => run(&script, &settings, sequence, bounds),
        Command::Render(cmd) => crate::render::render(&cmd),
        Command::Tiles(cmd) => crate::tiles::tiles(&cmd),
        Command::Info { script, json } => crate::info::info(&script, json),
        Command::Test { files, json } => crate::test::test(&files, json),
    }
}

pub fn read_script(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::Usage(format!("cannot read `{}`: {e}", path.display())))
}

pub fn compile(path: &Path, options: &CompileOptions) -> Result<Result<Script, geogen::Failure>, CliError> {
    let source = read_script(path)?;
    Ok(Script::compile(&path.display().to_string(), &source, options))
}

pub fn script_settings(args: &ScriptArgs) -> RunSettings {
    RunSettings {
        seed: geogen_random::recognize_seed(&args.seed),
        parameters: args.params.clone(),
        map_width: args.map_size.map(|s| s.0),
        map_height: args.map_size.map(|s| s.1),
        render_scale: args.scale,
        ..RunSettings::default()
    }
}

pub fn run_settings(args: &RunArgs) -> RunSettings {
    RunSettings {
        render_width: args.size.map(|s| s.0),
        render_height: args.size.map(|s| s.1),
        render_origin: args.origin.unwrap_or((0, 0)),
        ..script_settings(&args.script)
    }
}

fn check(path: &Path) -> Result<ExitCode, CliError> {
    compile(path, &CompileOptions::default())??;
    eprintln!("{}: ok", path.display());
    Ok(ExitCode::SUCCESS)
}

fn run(path: &Path, args: &RunArgs, show_sequence: bool, show_bounds: bool) -> Result<ExitCode, CliError> {
    let script = compile(path, &CompileOptions::default())??;
    let simulation = script.simulate(&run_settings(args))?;
    for m in &simulation.output.messages {
        report::outln(m);
    }
    if show_sequence && !show_bounds {
        report::out(&simulation.sequence.listing());
    }
    if show_bounds {
        let meta =
            geogen::RenderMetadata::calculate(&simulation.sequence).map_err(|e| script.failure(e.to_diagnostic()))?;
        report::out(&meta.annotated_listing(&simulation.sequence));
        report::outln(&format!("peak memory: {}", crate::render::bytes(meta.plan.peak())));
    }
    Ok(ExitCode::SUCCESS)
}

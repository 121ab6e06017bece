//! One function per subcommand.

use std::path::Path;
use std::process::ExitCode;

use geogen::{CompileOptions, MessageMode, RunSettings, Script};

use crate::args::{Cli, Command, RunArgs, ScriptArgs, SourceArgs};
use crate::report::{self, CliError};

/// Runs a command; `Err` says why it stopped (and so its exit status).
pub fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    // Every command's kernels run the one instruction set GEOGEN_ISA asks for, or none.
    geogen::instruction_set().map_err(|d| CliError::Usage(format!("{}: {}", d.code, d.message)))?;
    match cli.command {
        Command::Check { script, source } => check(&script, &source),
        Command::Run { script, settings, sequence, bounds } => run(&script, &settings, sequence, bounds),
        Command::Render(cmd) => crate::render::render(&cmd),
        Command::Tiles(cmd) => crate::tiles::tiles(&cmd),
        Command::FinishTiles(cmd) => crate::finish::finish_tiles(&cmd),
        Command::Info { script, json } => crate::info::info(&script, json),
        Command::Test { files, json, limits } => crate::test::test(&files, json, &limits),
        Command::Measure { files, sea, json } => crate::measure::measure(&files, sea, json),
        Command::Names(cmd) => crate::names::names(&cmd),
        Command::Studio(cmd) => studio(&cmd),
        Command::Serve(cmd) => serve(&cmd),
        Command::Slang { command } => crate::slang::slang(&command),
        Command::Mkheightmap { args } => crate::slang::mkheightmap_command(&args),
    }
}

/// The bytes of a script file, at most `max_bytes + 1` of them (a longer file is refused by the
/// compiler with GGE1107 rather than read whole: `geogen check /dev/urandom` ends).
pub fn read_script(path: &Path, max_bytes: usize) -> Result<Vec<u8>, CliError> {
    geogen::read_script(path, max_bytes).map_err(|e| {
        CliError::Usage(format!("{}: cannot read `{}`: {e}", geogen::diag::codes::GGE4024, path.display()))
    })
}

/// Compiles a script file in its language (a `.hs` file is Height-Slang).
pub fn compile(path: &Path, options: &CompileOptions) -> Result<Result<Script, geogen::Failure>, CliError> {
    compile_as(path, options, crate::slang::language_of(path))
}

pub fn compile_as(
    path: &Path,
    options: &CompileOptions,
    language: crate::slang::Language,
) -> Result<Result<Script, geogen::Failure>, CliError> {
    let source = read_script(path, options.max_script_bytes)?;
    Ok(crate::slang::compile_in(language, &path.display().to_string(), &source, options))
}

/// Compile options with the script size limit given on the command line.
pub fn compile_options(source: &SourceArgs) -> CompileOptions {
    CompileOptions { max_script_bytes: source.max_script_bytes(), ..CompileOptions::default() }
}

pub fn script_settings(args: &ScriptArgs) -> RunSettings {
    RunSettings {
        seed: geogen_random::recognize_seed(&args.seed),
        parameters: args.params.clone(),
        map_width: args.map_size.map(|s| s.0),
        map_height: args.map_size.map(|s| s.1),
        render_scale: args.scale,
        limits: args.limits.limits(),
        rules: args.rules.clone(),
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

fn check(path: &Path, source: &SourceArgs) -> Result<ExitCode, CliError> {
    compile(path, &compile_options(source))??;
    eprintln!("{}: ok", path.display());
    Ok(ExitCode::SUCCESS)
}

fn run(path: &Path, args: &RunArgs, show_sequence: bool, show_bounds: bool) -> Result<ExitCode, CliError> {
    let language = crate::slang::language(Some(path), &args.script)?;
    let script = compile_as(path, &compile_options(&args.script.limits.source), language)??;
    // Messages are printed as the script prints them, not held until it ends.
    let settings = RunSettings {
        messages: MessageMode::stream(report::outln),
        inputs: crate::export::load_inputs(&script, &args.script.inputs, crate::render::default_memory_limit())?,
        ..run_settings(args)
    };
    let simulation = script.simulate(&settings)?;
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

/// `--cache-mb` in bytes.
fn cache_bytes(mib: u64) -> Result<usize, CliError> {
    mib.checked_mul(1 << 20)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| CliError::Usage(format!("--cache-mb {mib} is more memory than this machine can address")))
}

/// Says so when a server listens where other machines can reach it.
fn warn_if_reachable(host: std::net::IpAddr, what: &str) {
    if !host.is_loopback() {
        eprintln!(
            "warning: listening on {host}: other machines that can reach this one can reach {what} (they still need the token in its URL); use --host 127.0.0.1 to keep it to this machine"
        );
    }
}

/// The studio and the tile server read GeoGen Script only: a Height-Slang program is refused
/// with what to use instead, not with the GeoGen parser's first error.
fn refuse_height_slang(path: Option<&Path>, command: &str) -> Result<(), CliError> {
    match path {
        Some(path) if matches!(crate::slang::language_of(path), crate::slang::Language::HeightSlang(_)) => {
            Err(CliError::Usage(format!(
                "{}: geogen {command} reads GeoGen Script (.ggs) only, and `{}` is a Height-Slang program; render it \
                 with `geogen render {}` (or `geogen mkheightmap`)",
                geogen::diag::codes::GGE4000,
                path.display(),
                path.display()
            )))
        }
        _ => Ok(()),
    }
}

/// A server that did not start: a script that does not compile is reported as script errors
/// (exit 1), anything else as a usage error.
fn server_error(message: String) -> CliError {
    if message.starts_with("error[") {
        eprintln!("{message}");
        CliError::Reported(1)
    } else {
        CliError::Usage(message)
    }
}

fn studio(cmd: &crate::args::StudioCmd) -> Result<ExitCode, CliError> {
    refuse_height_slang(cmd.script.as_deref(), "studio")?;
    let export_dir = cmd.export_dir.clone().unwrap_or_else(|| geogen_studio::default_export_dir(cmd.script.as_deref()));
    let memory_limit =
        cmd.memory_limit.map(|mib| mib.saturating_mul(1 << 20)).unwrap_or_else(crate::render::default_memory_limit);
    let options = geogen_studio::StudioOptions {
        script: cmd.script.clone(),
        address: std::net::SocketAddr::new(cmd.host, cmd.port),
        memory_limit,
        limits: cmd.limits.limits(),
        token: None,
        mode: geogen_studio::Mode::Studio,
        tile_defaults: geogen_studio::TileDefaults::default(),
        export_dir: export_dir.clone(),
        cache_bytes: cache_bytes(cmd.cache_mb)?,
        allowed_hosts: cmd.allowed_hosts.clone(),
        read_timeout: geogen_studio::DEFAULT_READ_TIMEOUT,
        tile_origins: cmd.tile_origins.clone(),
    };
    warn_if_reachable(cmd.host, "the studio");
    geogen_studio::run(options, |studio| {
        report::outln(&format!("geogen studio is running; open {}", studio.url()));
        eprintln!("(exports are written into {}; Ctrl-C stops it)", export_dir.display());
    })
    .map_err(server_error)?;
    Ok(ExitCode::SUCCESS)
}

fn serve(cmd: &crate::args::ServeCmd) -> Result<ExitCode, CliError> {
    refuse_height_slang(Some(&cmd.script), "serve")?;
    let usage = |why: String| CliError::Usage(format!("{}: {why}", geogen::diag::codes::GGE4021));
    if !(cmd.height_scale.is_finite() && cmd.height_scale > 0.0 && cmd.height_scale <= 30_000.0) {
        return Err(usage(format!(
            "--height-scale {} is not a number of metres from above 0 to 30000 (Terrarium tiles reach ±32768 m)",
            cmd.height_scale
        )));
    }
    let scheme = match &cmd.geo_origin {
        None => geogen_studio::tiles::TileScheme::Plain,
        Some(text) => {
            let origin = crate::export::parse_geo_origin(text).map_err(usage)?;
            geogen_studio::tiles::TileScheme::mercator(origin, cmd.pixel_size)
                .map_err(|why| usage(format!("--pixel-size: {why}")))?
        }
    };
    let memory_limit =
        cmd.memory_limit.map(|mib| mib.saturating_mul(1 << 20)).unwrap_or_else(crate::render::default_memory_limit);
    let options = geogen_studio::StudioOptions {
        script: Some(cmd.script.clone()),
        address: std::net::SocketAddr::new(cmd.host, cmd.port),
        memory_limit,
        limits: cmd.limits.limits(),
        token: None,
        mode: geogen_studio::Mode::TileServer,
        tile_defaults: geogen_studio::TileDefaults {
            seed: geogen_random::recognize_seed(&cmd.seed),
            parameters: cmd.params.clone(),
            map_size: cmd.map_size,
            scheme,
            height_scale: cmd.height_scale,
        },
        export_dir: geogen_studio::default_export_dir(Some(&cmd.script)),
        cache_bytes: cache_bytes(cmd.cache_mb)?,
        allowed_hosts: cmd.allowed_hosts.clone(),
        read_timeout: geogen_studio::DEFAULT_READ_TIMEOUT,
        tile_origins: cmd.tile_origins.clone(),
    };
    warn_if_reachable(cmd.host, "the tile server");
    geogen_studio::run(options, |server| {
        report::outln(&format!("serving tiles of {}: {}", cmd.script.display(), server.tile_template()));
        report::outln(&format!("their TileJSON (for web maps' sources): {}", server.tile_json()));
        eprintln!("(docs/studio.md describes the tile scheme; Ctrl-C stops it)");
    })
    .map_err(server_error)?;
    Ok(ExitCode::SUCCESS)
}

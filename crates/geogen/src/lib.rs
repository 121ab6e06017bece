//! geogen as a library.
//!
//! ```text
//! let script = Script::compile("island.ggs", source, &CompileOptions::default())?;
//! let output = script.run(&RunSettings::default())?;   // simulate: messages, yielded maps
//! ```
//!
//! A [`Script`] is immutable and `Send + Sync`: compile once, then run it from several threads.
//! Each run creates its own [`geogen_vm::Vm`] (values are single-threaded and live only during a
//! run); the compiled code and the native library are shared.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod architecture_doc;
mod height_slang;
mod info_json;
pub mod labels;
mod record;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use geogen_compile::{CompiledScript, CORE_TYPE_NAMES};
use geogen_diag::{codes, Diagnostic, Diagnostics, RenderOptions, SourceFile};
use geogen_vm::{Library, MapGeometry, MessageSink, Name, Vm, VmConfig};

pub use geogen_compile::metadata::{
    Dimension, ParameterKind, ParameterValue, Restriction, ScriptMetadata, ScriptParameter,
};
pub use geogen_compile::{check_map_name, MapNameError, MAP_NAME_CHARACTERS, MAP_NAME_MAX_LEN};
pub use geogen_diag as diag;
pub use geogen_render::{
    HeightMap, InputRaster, Progress, Rect, RenderConfig, RenderMetadata, RenderingSequence, SharedParts, SolveCache,
    StopSignal, DEFAULT_MAX_SOLVE_CELLS, DEFAULT_MEMORY_LIMIT,
};
/// The instruction set the kernels run on (`GEOGEN_ISA`; [`simd::set_active`] for a host).
pub use geogen_simd as simd;
pub use geogen_vm::{Label, Limits};
pub use height_slang::{height_slang_wrapper, Dialect, HEIGHT_SLANG_UNIT_SIZE};

/// What geogen's own programs (the CLI, the studio, the C library, the Python package) share
/// beyond rendering: the process allocator that hands rasters large pages, sizes and numbers as
/// their messages and JSON write them, the run record's hashes, and the memory-bandwidth floor
/// `--stats` compares kernels with. A program that only renders needs none of it.
pub mod host {
    pub use crate::info_json::json_number;
    pub use crate::record::{parameter_value_json, sha256_hex};
    pub use geogen_render::error::human_bytes;
    pub use geogen_render::rows::copy_floor_ns_per_pixel;
    pub use geogen_render::{fresh_bytes, keep_small_pages, LargePages};
}

/// Lodestone, the name grammar (`geogen names`), with geogen's evaluator of its embedded code.
pub mod names {
    pub use geogen_lodestone::*;
    pub use geogen_stdlib::names::check_variable_name;
    pub use geogen_stdlib::names::code::{default_code_limits, ScriptCode};
}

/// The instruction set the kernels will run on, or GGE4025 when `GEOGEN_ISA` names one that
/// cannot be used: a render refuses to start rather than run another than the one asked for.
pub fn instruction_set() -> Result<simd::Isa, Diagnostic> {
    simd::check_environment().map_err(|e| {
        Diagnostic::new(codes::GGE4025, e.to_string())
            .with_hint("unset GEOGEN_ISA to run the widest instruction set this processor has")
    })
}

/// The built-in example script `geogen render` renders when no script is given.
pub const EXAMPLE_ISLAND: &str = include_str!("../../../examples/island.ggs");

/// The smallest and largest render scale a host may ask for (reference §2.3).
pub const RENDER_SCALE_MIN: f64 = 0.001;
/// See [`RENDER_SCALE_MIN`].
pub const RENDER_SCALE_MAX: f64 = 10.0;
/// The render size of a dimension that has no other size to go by.
pub const RENDER_SIZE_DEFAULT: u32 = 1000;

/// The default largest script, in bytes (4 MiB): far above any real script (the examples are a
/// few KiB), and small enough that compiling the worst text of that size (a million tiny
/// statements, each a token pair, a tree node and instructions) stays under 1 GiB and a few
/// seconds.
pub const DEFAULT_MAX_SCRIPT_BYTES: usize = 4 << 20;

/// How to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Adds the test library (`AssertEquals`) to the script's globals.
    pub test_library: bool,
    /// Requires a `yield` of "main" somewhere in the script (GGE1312) and at the end of a run
    /// (GGE2801). The test runner turns it off.
    pub main_map_mandatory: bool,
    /// Larger scripts are refused before parsing (GGE1107). A host reading a file should read
    /// no more than this plus one byte (see [`read_script`]).
    pub max_script_bytes: usize,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions { test_library: false, main_map_mandatory: true, max_script_bytes: DEFAULT_MAX_SCRIPT_BYTES }
    }
}

/// Reads a script file, at most `max_bytes + 1` bytes of it: enough for [`Script::compile_bytes`]
/// to tell that a longer one is too large, without reading a huge (or endless) file.
pub fn read_script(path: &std::path::Path, max_bytes: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    // A named pipe or a socket is refused before it is opened: opening a pipe waits for a writer,
    // for ever if none comes. (Devices are read, within the limit.)
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::metadata(path)?.file_type();
        if kind.is_fifo() || kind.is_socket() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is a named pipe or a socket, not a file",
            ));
        }
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX).saturating_add(1);
    std::fs::File::open(path)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What a run does with the messages `Print` prints.
#[derive(Clone, Default)]
pub enum MessageMode {
    /// Keep them, in order, in [`RunOutput::messages`] (or [`Failure::messages`] when the run
    /// fails). Kept messages count on the script heap (`Limits::max_heap_bytes`, GGE2508).
    #[default]
    Collect,
    /// Hand each message to the function as soon as it is printed; nothing is kept.
    Stream(Arc<dyn Fn(&str) + Send + Sync>),
}

impl MessageMode {
    /// Streams every message to `sink` as it is printed.
    pub fn stream(sink: impl Fn(&str) + Send + Sync + 'static) -> MessageMode {
        MessageMode::Stream(Arc::new(sink))
    }
}

impl std::fmt::Debug for MessageMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageMode::Collect => f.write_str("Collect"),
            MessageMode::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

/// Everything a run depends on besides the script.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// The script's seed (`--seed`; text seeds are hashed by the host, see `geogen_random`).
    pub seed: u32,
    /// Script parameter values as the user typed them (`-p NAME=VALUE`), parsed by the parameter's type.
    pub parameters: Vec<(String, String)>,
    /// The map size for finite dimensions; `None` = derived from the render size and scale.
    /// Ignored in an infinite dimension.
    pub map_width: Option<u32>,
    /// See [`RunSettings::map_width`].
    pub map_height: Option<u32>,
    /// The render rectangle's top-left corner, in physical pixels (map units × scale).
    pub render_origin: (i64, i64),
    /// `None` = the map size in a finite dimension, 1000 in an infinite one.
    pub render_width: Option<u32>,
    /// See [`RunSettings::render_width`].
    pub render_height: Option<u32>,
    /// Physical pixels per map unit, within [`RENDER_SCALE_MIN`]..=[`RENDER_SCALE_MAX`].
    pub render_scale: f64,
    /// The script's limits: instructions, heap, call depth and the like.
    pub limits: geogen_vm::Limits,
    /// Only these yielded maps are rendered (`--maps a,b`); `None` renders all.
    pub maps: Option<Vec<String>>,
    /// Where `Print` messages go: kept in the output (the default) or streamed as printed.
    pub messages: MessageMode,
    /// Height maps the script can read by name with `HeightMap.Input(name)` (`--input`), shared
    /// read-only: each render references them, none copies them.
    pub inputs: BTreeMap<String, Arc<InputRaster>>,
    /// Pixels each rendered map holds beyond the render rectangle on every side (clipped to a
    /// finite map), exact like every other pixel: what a host needs to derive normal maps,
    /// slopes or meshes of a tile that match a larger render. [`Rendered::yield_rect`] is the
    /// render rectangle without them. 0 by default.
    pub yield_margin: u32,
    /// Lodestone rule files by name, for `Names.Load(name)` (`--rules NAME=FILE`).
    pub rules: Vec<(String, Arc<str>)>,
}

impl Default for RunSettings {
    fn default() -> RunSettings {
        RunSettings {
            seed: 0,
            parameters: Vec::new(),
            map_width: None,
            map_height: None,
            render_origin: (0, 0),
            render_width: None,
            render_height: None,
            render_scale: 1.0,
            limits: geogen_vm::Limits::default(),
            maps: None,
            messages: MessageMode::Collect,
            inputs: BTreeMap::new(),
            yield_margin: 0,
            rules: Vec::new(),
        }
    }
}

/// The result of simulating a script.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// `Print` messages in order (none when they were streamed, see [`RunSettings::messages`]).
    pub messages: Vec<String>,
    /// Map names yielded, in order.
    pub yielded: Vec<String>,
    /// Instructions executed.
    pub instructions: u64,
    /// The map size and render rectangle the run used (as `Parameters` showed them).
    pub geometry: MapGeometry,
    /// Labels the script placed (`Names.PlaceLabel`), in logical map units, in order.
    pub labels: Vec<Label>,
}

/// The result of simulating: the run's output and the recorded rendering sequence, in the order
/// the renderer runs it ([`RenderingSequence::scheduled`]: generator chains moved to just before
/// their first reader, slots renumbered).
#[derive(Debug)]
pub struct Simulation {
    /// What the run printed, yielded and placed.
    pub output: RunOutput,
    /// The recorded rendering steps, scheduled.
    pub sequence: RenderingSequence,
}

/// Rendered maps by name, each with its physical rectangle.
#[derive(Debug)]
pub struct Rendered {
    /// What the run printed, yielded and placed.
    pub output: RunOutput,
    /// Each rendered map by its yielded name.
    pub maps: std::collections::BTreeMap<String, HeightMap>,
    /// The render rectangle clipped to the map, in physical pixels: what each map covers when
    /// [`RunSettings::yield_margin`] is 0, and the part of it inside the margin otherwise.
    pub yield_rect: Rect,
    /// How long each rendering step took, in order (for `geogen render --profile`).
    pub timings: Vec<StepTiming>,
    /// The memory plan's peak, in bytes (what the memory limit was checked against).
    pub planned_peak: u64,
}

/// The time one rendering step took.
#[derive(Clone, Debug)]
pub struct StepTiming {
    /// 0-based position in the rendering sequence.
    pub index: usize,
    /// The operation's name (`HeightMap.Blur`).
    pub name: String,
    /// Script line and column of the call that recorded the step.
    pub location: Option<(u32, u32)>,
    /// Pixels the step computed (its rendering bounds); 0 for steps nobody needed.
    pub pixels: u64,
    /// Steps timed together: 1, or the length of a fused pass (this step and the `steps - 1`
    /// following ones, run band by band in one pass over the map), or of two units run at once.
    pub steps: usize,
    /// When an independent unit ran at the same time as this one (`geogen_render::Renderer::advance`):
    /// its first step (0-based) and that step's operation. `steps` and `pixels` count both.
    pub alongside: Option<(usize, String)>,
    /// Wall time of the step (of all `steps`).
    pub duration: std::time::Duration,
}

/// Errors with the source they refer to, ready to print.
#[derive(Clone, Debug)]
pub struct Failure {
    /// At least one; at most [`geogen_diag::MAX_DIAGNOSTICS`] kept, the others counted.
    pub diagnostics: Diagnostics,
    /// Shared with the compiled script (a failure does not copy the text).
    pub source: Arc<SourceFile>,
    /// Messages printed before a runtime error, so nothing is lost (none when they were
    /// streamed).
    pub messages: Vec<String>,
}

impl Failure {
    fn new(diagnostics: impl Into<Diagnostics>, source: &Arc<SourceFile>) -> Failure {
        Failure { diagnostics: diagnostics.into(), source: Arc::clone(source), messages: Vec::new() }
    }

    /// The diagnostics as text, with the source lines they point at.
    pub fn render(&self, options: RenderOptions) -> String {
        geogen_diag::render_diagnostics(&self.diagnostics, &self.source, options)
    }

    /// The first (primary) diagnostic.
    pub fn first(&self) -> &Diagnostic {
        &self.diagnostics[0]
    }

    /// The `line:column` of the first diagnostic, if it points into the script.
    pub fn first_location(&self) -> Option<geogen_diag::LineCol> {
        self.diagnostics.first().and_then(|d| d.span).map(|s| self.source.span_start(s))
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(RenderOptions::default()))
    }
}

impl std::error::Error for Failure {}

/// What `geogen info` shows about a script: its metadata, parameters and maps.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptInfo {
    /// Name, description, author, size per dimension and parameters, as the metadata declares.
    pub metadata: ScriptMetadata,
    /// The names the script yields, in source order ("main" for an unnamed yield).
    pub maps: Vec<String>,
}

/// A compiled script.
pub struct Script {
    source: Arc<SourceFile>,
    compiled: Arc<CompiledScript>,
    library: Arc<Library>,
    main_map_mandatory: bool,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script").field("name", &self.source.name()).finish()
    }
}

/// The core library, built once per process (it is immutable and shared by every script).
fn core_library() -> Arc<Library> {
    static CORE: OnceLock<Arc<Library>> = OnceLock::new();
    Arc::clone(CORE.get_or_init(|| Arc::new(geogen_stdlib::core_library())))
}

/// The core library plus the test library.
fn test_library() -> Arc<Library> {
    static TEST: OnceLock<Arc<Library>> = OnceLock::new();
    Arc::clone(TEST.get_or_init(|| {
        let mut library = geogen_stdlib::core_library();
        library.extend(&geogen_stdlib::test_library());
        Arc::new(library)
    }))
}

impl Script {
    /// Parses and compiles; all syntax errors of the file are reported together (and compile
    /// errors only when the syntax is clean, since they would mostly repeat them). A script
    /// larger than `options.max_script_bytes` is GGE1107.
    pub fn compile(name: &str, source: &str, options: &CompileOptions) -> Result<Script, Failure> {
        if source.len() > options.max_script_bytes {
            return Err(too_large(name, options.max_script_bytes));
        }
        let file = Arc::new(SourceFile::new(name, source));
        let parsed = geogen_syntax::parse(source);
        if !parsed.diagnostics.is_empty() {
            return Err(Failure::new(parsed.diagnostics, &file));
        }
        let library = if options.test_library { test_library() } else { core_library() };
        let natives = library.global_names().filter(|n| n.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        let types = CORE_TYPE_NAMES.iter().copied().chain(library.types.keys().map(|k| &**k));
        let compile_options = geogen_compile::CompileOptions::new(natives, types, options.main_map_mandatory);
        let compiled =
            geogen_compile::compile(&parsed.script, &compile_options).map_err(|errors| Failure::new(errors, &file))?;
        Ok(Script {
            source: file,
            compiled: Arc::new(compiled),
            library,
            main_map_mandatory: options.main_map_mandatory,
        })
    }

    /// [`Script::compile`] for the bytes of a file: text that is not UTF-8 is GGE1106 at the
    /// first invalid byte, and more than `options.max_script_bytes` bytes GGE1107.
    pub fn compile_bytes(name: &str, bytes: &[u8], options: &CompileOptions) -> Result<Script, Failure> {
        if bytes.len() > options.max_script_bytes {
            return Err(too_large(name, options.max_script_bytes));
        }
        match std::str::from_utf8(bytes) {
            Ok(source) => Script::compile(name, source, options),
            Err(error) => {
                let at = error.valid_up_to();
                let shown = String::from_utf8_lossy(bytes);
                let bad: Vec<String> = bytes[at..]
                    .iter()
                    .take(error.error_len().unwrap_or(bytes.len() - at).min(4))
                    .map(|b| format!("0x{b:02X}"))
                    .collect();
                let file = Arc::new(SourceFile::new(name, shown.into_owned()));
                // In the shown text the invalid bytes became one U+FFFD (3 bytes) at the same offset.
                let offset = u32::try_from(at).unwrap_or(u32::MAX);
                let d = Diagnostic::at(
                    codes::GGE1106,
                    geogen_diag::Span::new(offset, offset.saturating_add(3)),
                    format!("the script is not valid UTF-8: invalid byte {} here", bad.join(" ")),
                )
                .with_hint("save the script as UTF-8 text");
                Err(Failure::new(d, &file))
            }
        }
    }

    /// The script's text, as compiled.
    pub fn source(&self) -> &SourceFile {
        &self.source
    }

    /// The intermediate code (for the disassembler).
    pub fn compiled(&self) -> &Arc<CompiledScript> {
        &self.compiled
    }

    /// The natives the script runs with.
    pub fn library(&self) -> &Arc<Library> {
        &self.library
    }

    /// Metadata, parameters and maps, for `geogen info`.
    pub fn info(&self) -> ScriptInfo {
        ScriptInfo {
            metadata: self.compiled.metadata.clone(),
            maps: self.compiled.map_names.iter().map(|n| n.to_string()).collect(),
        }
    }

    /// Simulates the script with these settings.
    pub fn run(&self, settings: &RunSettings) -> Result<RunOutput, Failure> {
        let mut vm = self.vm(settings)?;
        let result = vm.run();
        let messages = take_messages(&mut vm);
        match result {
            Ok(()) => Ok(RunOutput {
                messages,
                yielded: vm.yielded().iter().map(|(name, _)| name.to_string()).collect(),
                instructions: vm.instructions_executed(),
                geometry: vm.env().geometry.clone(),
                labels: std::mem::take(&mut vm.env_mut().labels),
            }),
            Err(diagnostic) => {
                Err(Failure { diagnostics: diagnostic.into(), source: Arc::clone(&self.source), messages })
            }
        }
    }

    /// Simulates the script and returns its rendering sequence with the run's output (for
    /// `geogen run --sequence`, `--bounds`, and rendering).
    pub fn simulate(&self, settings: &RunSettings) -> Result<Simulation, Failure> {
        self.simulate_until(settings, &|| false).map(|s| s.expect("never stopped"))
    }

    /// [`Script::simulate`] that asks `stop` every few thousand instructions whether to give up,
    /// and returns `Ok(None)` when it did (a host whose newer request makes this one useless).
    pub fn simulate_until(
        &self,
        settings: &RunSettings,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Simulation>, Failure> {
        self.simulate_ordered(settings, stop, true)
    }

    /// [`Script::simulate`] with the steps in the order the script made them: not scheduled, no
    /// generator chain moved or split (`RenderingSequence::scheduled`). The same bytes; tests
    /// render both orders and compare them.
    pub fn simulate_in_script_order(&self, settings: &RunSettings) -> Result<Simulation, Failure> {
        self.simulate_ordered(settings, &|| false, false).map(|s| s.expect("never stopped"))
    }

    fn simulate_ordered(
        &self,
        settings: &RunSettings,
        stop: &dyn Fn() -> bool,
        schedule: bool,
    ) -> Result<Option<Simulation>, Failure> {
        self.check_map_names(settings)?;
        let mut vm = self.vm(settings)?;
        let result = loop {
            if stop() {
                return Ok(None);
            }
            match vm.run_for(STOP_CHECK_INSTRUCTIONS) {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(diagnostic) => break Err(diagnostic),
            }
        };
        let messages = take_messages(&mut vm);
        if let Err(diagnostic) = result {
            return Err(Failure { diagnostics: diagnostic.into(), source: Arc::clone(&self.source), messages });
        }
        let output = RunOutput {
            messages,
            yielded: vm.yielded().iter().map(|(name, _)| name.to_string()).collect(),
            instructions: vm.instructions_executed(),
            geometry: vm.env().geometry.clone(),
            labels: std::mem::take(&mut vm.env_mut().labels),
        };
        let scale = vm.env().geometry.render_scale;
        let empty = RenderingSequence::new(scale).map_err(|e| self.render_failure(&e, Vec::new()))?;
        // In the order that holds fewest maps at once (generator chains just before their
        // readers); the same bytes.
        let sequence = std::mem::replace(&mut vm.env_mut().sequence, empty);
        let sequence = if schedule { sequence.scheduled() } else { sequence };
        Ok(Some(Simulation { output, sequence }))
    }

    /// Simulates, then renders every yielded map (or those of `settings.maps`). The memory plan is
    /// checked against `config.memory_limit` before any pixel is computed (GGE3001). `progress`
    /// is called after each rendering step.
    pub fn render(
        &self,
        settings: &RunSettings,
        config: &RenderConfig,
        progress: Option<Box<dyn FnMut(Progress) + Send>>,
    ) -> Result<Rendered, Failure> {
        self.render_until(settings, config, progress, &|| false).map(|r| r.expect("never stopped"))
    }

    /// [`Script::render`] that asks `stop` during the simulation and before each rendering step
    /// whether to give up, and returns `Ok(None)` when it did.
    pub fn render_until(
        &self,
        settings: &RunSettings,
        config: &RenderConfig,
        progress: Option<Box<dyn FnMut(Progress) + Send>>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Rendered>, Failure> {
        Ok(self.render_inner(settings, config, progress, stop, |_| ())?.map(|(rendered, ())| rendered))
    }

    /// [`Script::render`] for a host running several renders at once within one memory budget:
    /// once the memory plan is known (and within `config.memory_limit`), before any pixel is
    /// computed, `admit` is called with the plan's peak in bytes and may wait until that much of the
    /// budget is free; what it returns (a reservation) comes back with the maps, to be dropped when
    /// the host is done with them.
    pub fn render_admitted<G>(
        &self,
        settings: &RunSettings,
        config: &RenderConfig,
        admit: impl FnOnce(u64) -> G,
    ) -> Result<(Rendered, G), Failure> {
        self.render_inner(settings, config, None, &|| false, admit).map(|r| r.expect("never stopped"))
    }

    fn render_inner<G>(
        &self,
        settings: &RunSettings,
        config: &RenderConfig,
        progress: Option<Box<dyn FnMut(Progress) + Send>>,
        stop: &dyn Fn() -> bool,
        admit: impl FnOnce(u64) -> G,
    ) -> Result<Option<(Rendered, G)>, Failure> {
        instruction_set().map_err(|d| self.failure(d))?;
        let Some(simulation) = self.simulate_until(settings, stop)? else { return Ok(None) };
        let messages = simulation.output.messages.clone();
        let mut renderer = geogen_render::Renderer::new(simulation.sequence, config)
            .map_err(|e| self.render_failure(&e, messages.clone()))?;
        let reservation = admit(renderer.metadata().plan.peak());
        if let Some(callback) = progress {
            renderer.set_progress_callback(callback);
        }
        let mut timings = Vec::with_capacity(renderer.sequence().len());
        loop {
            if stop() {
                return Ok(None);
            }
            let index = renderer.progress().done;
            let started = std::time::Instant::now();
            let steps = renderer.advance().map_err(|e| self.render_failure(&e, messages.clone()))?;
            if steps == 0 {
                break;
            }
            let duration = started.elapsed();
            let step = &renderer.sequence().steps()[index];
            let bounds = &renderer.metadata().bounds;
            let alongside =
                renderer.last_advance_alongside().map(|j| (j, renderer.sequence().steps()[j].op.name().to_string()));
            let pixels =
                bounds[index].pixels().saturating_add(alongside.as_ref().map_or(0, |(j, _)| bounds[*j].pixels()));
            timings.push(StepTiming {
                index,
                name: step.op.name().to_string(),
                location: step.location,
                pixels,
                steps,
                alongside,
                duration,
            });
        }
        let planned_peak = renderer.metadata().plan.peak();
        let yield_rect = simulation.output.geometry.yield_rect();
        let rendered =
            Rendered { output: simulation.output, maps: renderer.into_outputs(), yield_rect, timings, planned_peak };
        Ok(Some((rendered, reservation)))
    }

    /// A diagnostic about this script as a printable failure.
    pub fn failure(&self, diagnostic: Diagnostic) -> Failure {
        Failure::new(vec![diagnostic], &self.source)
    }

    /// A renderer error as a failure pointing at the script line of the step concerned.
    fn render_failure(&self, error: &geogen_render::RenderError, messages: Vec<String>) -> Failure {
        let mut diagnostic = error.to_diagnostic();
        let location = match error {
            geogen_render::RenderError::MemoryLimit { location, .. }
            | geogen_render::RenderError::InvalidStep { location, .. }
            | geogen_render::RenderError::SolveGridTooLarge { location, .. }
            | geogen_render::RenderError::SolveNesting { location, .. }
            | geogen_render::RenderError::Kernel { location, .. } => *location,
            _ => None,
        };
        if let Some((line, column)) = location {
            diagnostic.span = Some(geogen_diag::Span::at(self.source.offset(line, column)));
        }
        Failure { diagnostics: diagnostic.into(), source: Arc::clone(&self.source), messages }
    }

    /// `--maps` may only name maps the script yields.
    fn check_map_names(&self, settings: &RunSettings) -> Result<(), Failure> {
        let Some(wanted) = &settings.maps else { return Ok(()) };
        let known = &self.compiled.map_names;
        for name in wanted {
            if !known.iter().any(|k| &**k == name.as_str()) {
                let list: Vec<&str> = known.iter().map(|k| &**k).collect();
                let d = Diagnostic::new(codes::GGE4000, format!("the script yields no map named \"{name}\""))
                    .with_hint(format!("it yields: {}", list.join(", ")));
                return Err(Failure::new(vec![d], &self.source));
            }
        }
        Ok(())
    }

    /// A VM ready to run the script with these settings, for stepping in a debugger. Bad
    /// parameters are GGE4001/GGE4002, a bad map size, render size or scale GGE4003.
    pub fn vm(&self, settings: &RunSettings) -> Result<Vm, Failure> {
        let parameters = self.parameters(settings).map_err(|d| Failure::new(vec![d], &self.source))?;
        let geometry = self.geometry(settings).map_err(|d| Failure::new(vec![d], &self.source))?;
        let config = VmConfig {
            seed: settings.seed,
            geometry,
            limits: settings.limits.clone(),
            parameters,
            main_map_mandatory: self.main_map_mandatory,
            enabled_maps: settings.maps.clone(),
            source: Some(Arc::clone(&self.source)),
            inputs: settings.inputs.clone(),
            yield_margin: settings.yield_margin,
        };
        let mut vm = Vm::new(Arc::clone(&self.compiled), Arc::clone(&self.library), config)
            .map_err(|d| Failure::new(vec![d], &self.source))?;
        vm.env_mut().named_texts = Arc::new(settings.rules.clone());
        if let MessageMode::Stream(sink) = &settings.messages {
            let sink = Arc::clone(sink);
            vm.env_mut().message_sink = Some(MessageSink::new(move |message| sink(&message.text)));
        }
        Ok(vm)
    }

    /// Reads the `-p NAME=VALUE` texts by the declared types (a later value of one name wins).
    fn parameters(&self, settings: &RunSettings) -> Result<Vec<(Name, ParameterValue)>, Diagnostic> {
        let declared = &self.compiled.metadata.parameters;
        let mut values = Vec::new();
        for (name, text) in &settings.parameters {
            let Some(parameter) = declared.iter().find(|p| &*p.name == name.as_str()) else {
                return Err(unknown_parameter(name, declared));
            };
            let value = geogen_compile::parse_parameter_value(parameter, text)?;
            values.push((parameter.name.clone(), value));
        }
        Ok(values)
    }

    /// The value every declared parameter takes in a run with these settings, in declaration
    /// order: the value given (read by the parameter's type, so `1` and `1.0` agree) or the
    /// default. Bad settings are GGE4001/GGE4002, as for a run.
    pub fn parameter_values(&self, settings: &RunSettings) -> Result<Vec<(String, ParameterValue)>, Failure> {
        let given = self.parameters(settings).map_err(|d| Failure::new(vec![d], &self.source))?;
        let mut values = Vec::new();
        for parameter in &self.compiled.metadata.parameters {
            let value = match given.iter().rev().find(|(name, _)| *name == parameter.name) {
                Some((_, value)) => value.clone(),
                None => geogen_compile::default_value(parameter),
            };
            values.push((parameter.name.to_string(), value));
        }
        Ok(values)
    }

    /// The map size and render rectangle (reference §2.4, §5.5).
    pub fn geometry(&self, settings: &RunSettings) -> Result<MapGeometry, Diagnostic> {
        let scale = settings.render_scale;
        if !(RENDER_SCALE_MIN..=RENDER_SCALE_MAX).contains(&scale) {
            return Err(Diagnostic::new(
                codes::GGE4003,
                format!("the render scale {scale} is outside [{RENDER_SCALE_MIN}, {RENDER_SCALE_MAX}]"),
            )
            .with_hint("1 renders one pixel per map unit, 0.5 zooms out twice, 2 zooms in twice"));
        }
        let meta = &self.compiled.metadata;
        let (map_width, render_width) = axis("width", &meta.width, settings.map_width, settings.render_width, scale)?;
        let (map_height, render_height) =
            axis("height", &meta.height, settings.map_height, settings.render_height, scale)?;
        // Map coordinates are 32-bit, as in the original: the logical coordinate of every pixel of
        // the render, from the first (origin / scale) to the last ((origin + size - 1) / scale),
        // must be a 32-bit integer coordinate, i32::MIN and i32::MAX included.
        let (lowest, highest) = (f64::from(i32::MIN), f64::from(i32::MAX));
        for (axis, origin, size) in
            [("x", settings.render_origin.0, render_width), ("y", settings.render_origin.1, render_height)]
        {
            let first = origin as f64 / scale;
            let last = (origin as f64 + f64::from(size) - 1.0) / scale;
            if first < lowest || last > highest {
                return Err(Diagnostic::new(
                    codes::GGE4003,
                    format!(
                        "the render reaches {axis} = {} map units, outside the 32-bit coordinate range",
                        if first < lowest { first } else { last }
                    ),
                )
                .with_hint(format!(
                    "every pixel of the render, divided by the scale, must lie in [{}, {}]",
                    i32::MIN,
                    i32::MAX
                )));
            }
        }
        Ok(MapGeometry {
            map_width,
            map_height,
            render_origin_x: settings.render_origin.0,
            render_origin_y: settings.render_origin.1,
            render_width,
            render_height,
            render_scale: scale,
        })
    }
}

/// How many instructions a stoppable simulation runs between two questions to its `stop`.
const STOP_CHECK_INSTRUCTIONS: u64 = 1 << 16;

/// The messages a run kept (none when they were streamed), as text.
fn take_messages(vm: &mut Vm) -> Vec<String> {
    std::mem::take(&mut vm.env_mut().messages).into_iter().map(|m| m.text).collect()
}

fn too_large(name: &str, max_bytes: usize) -> Failure {
    let d = Diagnostic::new(
        codes::GGE1107,
        format!(
            "the script `{name}` is larger than the limit of {max_bytes} bytes ({})",
            host::human_bytes(max_bytes as u64)
        ),
    )
    .with_hint("is this the right file? otherwise raise the limit with --max-script-size MIB");
    Failure::new(d, &Arc::new(SourceFile::new(name, "")))
}

/// One axis: (map size if finite, render size).
fn axis(
    axis: &str,
    dimension: &Dimension,
    map_size: Option<u32>,
    render_size: Option<u32>,
    scale: f64,
) -> Result<(Option<u32>, u32), Diagnostic> {
    if render_size == Some(0) {
        return Err(Diagnostic::new(codes::GGE4003, format!("the render {axis} must be at least 1 pixel")));
    }
    match dimension {
        // A map size makes no sense for an infinite axis; it is ignored so that one command line
        // can serve scripts of both kinds.
        Dimension::Infinite => Ok((None, render_size.unwrap_or(RENDER_SIZE_DEFAULT))),
        Dimension::Finite { min, max, .. } => match map_size {
            Some(size) => {
                if size < *min || size > *max {
                    return Err(Diagnostic::new(
                        codes::GGE4003,
                        format!("the map {axis} {size} is outside the script's range [{min}, {max}]"),
                    )
                    .with_hint(format!("choose a map {axis} from {min} to {max}")));
                }
                // The default render is the whole map, in physical pixels.
                let whole_map = ((f64::from(size) * scale).floor() as u32).max(1);
                Ok((Some(size), render_size.unwrap_or(whole_map)))
            }
            None => {
                let render = render_size.unwrap_or(RENDER_SIZE_DEFAULT);
                // The render is the whole map: its logical size is the physical size / scale.
                let derived = (f64::from(render) / scale).floor().clamp(f64::from(*min), f64::from(*max));
                Ok((Some(derived as u32), render))
            }
        },
    }
}

fn unknown_parameter(name: &str, declared: &[ScriptParameter]) -> Diagnostic {
    let error = Diagnostic::new(codes::GGE4001, format!("the script has no parameter `{name}`"));
    if declared.is_empty() {
        return error.with_hint("this script declares no parameters");
    }
    let names: Vec<&str> = declared.iter().map(|p| &*p.name).collect();
    let close = geogen_vm::did_you_mean(name, names.iter().copied());
    let list = format!("its parameters are {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "));
    error.with_hint(match close {
        Some(close) => format!("{close} ({list})"),
        None => list,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Script>();
        assert_send_sync::<Failure>();
        assert_send_sync::<RunSettings>();
        assert_send_sync::<MessageMode>();
    }

    #[test]
    fn the_render_may_reach_both_ends_of_the_32_bit_range_and_no_further() {
        let script = Script::compile("t.ggs", "yield HeightMap.Flat(0);", &CompileOptions::default()).unwrap();
        let at = |x: i64, width: u32, scale: f64| {
            let settings = RunSettings {
                render_origin: (x, 0),
                render_width: Some(width),
                render_height: Some(1),
                render_scale: scale,
                ..RunSettings::default()
            };
            script.geometry(&settings).map(|_| ()).map_err(|d| d.code)
        };
        let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
        assert_eq!(at(min, 4, 1.0), Ok(()));
        assert_eq!(at(min - 1, 4, 1.0), Err(codes::GGE4003));
        assert_eq!(at(max - 3, 4, 1.0), Ok(()), "the last pixel is i32::MAX");
        assert_eq!(at(max - 2, 4, 1.0), Err(codes::GGE4003));
        // At scale 2 the physical range is twice as wide.
        assert_eq!(at(2 * min, 4, 2.0), Ok(()));
        assert_eq!(at(2 * min - 1, 4, 2.0), Err(codes::GGE4003));
        assert_eq!(at(i64::MIN, 1, 1.0), Err(codes::GGE4003));
        assert_eq!(at(i64::MAX, 1, 1.0), Err(codes::GGE4003));
    }

    #[test]
    fn parameter_values_give_every_parameter_its_effective_value() {
        let source = "metadata { Parameters: { Count: { Min: 1, Max: 10, Default: 3, Restriction: Integers }, \
                      Snow: { Default: true }, Dir: { Type: Direction, Default: Vertical } } }\n\
                      yield HeightMap.Flat(0);";
        let script = Script::compile("t.ggs", source, &CompileOptions::default()).unwrap();
        let with = |params: &[(&str, &str)]| {
            let parameters = params.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            script.parameter_values(&RunSettings { parameters, ..RunSettings::default() })
        };
        let defaults = with(&[]).unwrap();
        assert_eq!(
            defaults,
            [
                ("Count".to_string(), ParameterValue::Number(3.0)),
                ("Snow".to_string(), ParameterValue::Boolean(true)),
                ("Dir".to_string(), ParameterValue::Enum("Vertical".into(), 1.0)),
            ]
        );
        assert_eq!(with(&[("Count", "1")]).unwrap(), with(&[("Count", "1.0")]).unwrap());
        assert_eq!(with(&[("Dir", "1")]).unwrap(), defaults, "an enum by number is the same item");
        assert_eq!(with(&[("Count", "3"), ("Snow", "yes")]).unwrap(), defaults);
        assert_eq!(with(&[("Nope", "1")]).unwrap_err().first().code, codes::GGE4001);
        assert_eq!(with(&[("Count", "many")]).unwrap_err().first().code, codes::GGE4002);
    }

    fn finite(min: u32, max: u32) -> Dimension {
        Dimension::Finite { default: None, min, max }
    }

    #[test]
    fn axis_sizes() {
        // Infinite: the render size or 1000; a map size is ignored.
        assert_eq!(axis("width", &Dimension::Infinite, None, None, 1.0).unwrap(), (None, 1000));
        assert_eq!(axis("width", &Dimension::Infinite, Some(5), Some(64), 1.0).unwrap(), (None, 64));
        // Finite with a map size: the render defaults to it.
        assert_eq!(axis("width", &finite(1, 5000), Some(640), None, 1.0).unwrap(), (Some(640), 640));
        // Finite without: floor(render / scale), clamped.
        assert_eq!(axis("width", &finite(1, 5000), None, Some(333), 0.5).unwrap(), (Some(666), 333));
        assert_eq!(axis("width", &finite(1, 5000), None, None, 3.0).unwrap(), (Some(333), 1000));
        assert_eq!(axis("width", &finite(1, 500), None, None, 1.0).unwrap(), (Some(500), 1000));
        assert_eq!(axis("width", &finite(2000, 5000), None, Some(10), 1.0).unwrap(), (Some(2000), 10));
        // An explicit size out of range names the range.
        let e = axis("width", &finite(10, 20), Some(30), None, 1.0).unwrap_err();
        assert_eq!(e.code, codes::GGE4003);
        assert!(e.message.contains("[10, 20]"), "{}", e.message);
        assert_eq!(axis("height", &finite(1, 20), None, Some(0), 1.0).unwrap_err().code, codes::GGE4003);
    }
}

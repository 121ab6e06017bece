//! geogen as a library.
//!
//! ```text
//! let script = Script::compile("island.ggs", source, &CompileOptions::default())?;
//! let output = script.run(&RunSettings::default())?;   // simulate: messages, yielded maps
//! ```
//!
//! A [`Script`] is immutable and `Send + Sync`: compile once, then run it from several threads.

use geogen_diag::{Diagnostic, RenderOptions, SourceFile};

pub use geogen_diag as diag;

/// How to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Adds the test library (`AssertEquals`) to the script's globals.
    pub test_library: bool,
    /// Requires a `yield` of "main" somewhere in the script (GGE1312) and at the end of a run
    /// (GGE2801). The test runner turns it off.
    pub main_map_mandatory: bool,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions { test_library: false, main_map_mandatory: true }
    }
}

/// Everything a run depends on besides the script.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub seed: u32,
    /// Script parameter values as the user typed them (`-p NAME=VALUE`), parsed by the parameter's type.
    pub parameters: Vec<(String, String)>,
    /// The map size for finite dimensions; `None` = derived from the render size and scale.
    pub map_width: Option<u32>,
    pub map_height: Option<u32>,
    pub render_origin: (i64, i64),
    /// `None` = the map size in a finite dimension, 1000 in an infinite one.
    pub render_width: Option<u32>,
    pub render_height: Option<u32>,
    pub render_scale: f64,
    pub limits: geogen_vm::Limits,
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
        }
    }
}

/// The result of simulating a script.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// `Print` messages in order.
    pub messages: Vec<String>,
    /// Map names yielded, in order.
    pub yielded: Vec<String>,
    /// Instructions executed.
    pub instructions: u64,
}

/// Errors with the source they refer to, ready to print.
#[derive(Clone, Debug)]
pub struct Failure {
    pub diagnostics: Vec<Diagnostic>,
    pub source: SourceFile,
    /// Messages printed before a runtime error, so nothing is lost.
    pub messages: Vec<String>,
}

impl Failure {
    pub fn render(&self, options: RenderOptions) -> String {
        geogen_diag::render_diagnostics(&self.diagnostics, &self.source, options)
    }

    /// The first (primary) diagnostic.
    pub fn first(&self) -> &Diagnostic {
        &self.diagnostics[0]
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(RenderOptions::default()))
    }
}

/// A compiled script.
pub struct Script {
    source: SourceFile,
}

impl Script {
    /// Parses and compiles; all syntax errors of the file are reported together.
    pub fn compile(name: &str, source: &str, options: &CompileOptions) -> Result<Script, Failure> {
        let _ = options;
        let _ = (name, source);
        todo!("wire syntax -> compile")
    }

    pub fn source(&self) -> &SourceFile {
        &self.source
    }

    /// Simulates the script with these settings.
    pub fn run(&self, settings: &RunSettings) -> Result<RunOutput, Failure> {
        let _ = settings;
        todo!("wire vm + stdlib")
    }
}

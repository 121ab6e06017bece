//! The GeoGen Script compiler: a syntax tree to intermediate code ([`ir`]), with the compile-time
//! checks of reference §1.6 and the metadata validation of reference §2.
//!
//! ```text
//! let parsed = geogen_syntax::parse(source);
//! let compiled = geogen_compile::compile(&parsed.script, &CompileOptions::default())?;
//! println!("{compiled}"); // the disassembly
//! ```
//!
//! - [`compile`] lowers `<main>` and every function, and reports all errors it finds, sorted by
//!   position.
//! - [`params`] reads host-supplied parameter values (`-p Size=5`) by the declared types.

mod compiler;
mod disasm;
pub mod ir;
mod lower;
pub mod metadata;
mod options;
pub mod params;
mod validate_metadata;

pub use compiler::{compile, MAIN_FUNCTION};
pub use ir::{BlockId, CodeBlock, CompiledScript, EnumDef, Instruction, Name, Op, ScriptFunction};
pub use metadata::{Dimension, ParameterKind, ParameterValue, Restriction, ScriptMetadata, ScriptParameter};
pub use options::{CompileOptions, CORE_TYPE_NAMES};
pub use params::{default_value, parse_parameter_value};

#[cfg(test)]
mod test_ast;
#[cfg(test)]
mod tests;

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
//! - `CompiledScript` implements `Display` (the disassembly, used by `geogen run --code`); see
//!   also [`CompiledScript::disassemble`] for a listing with source positions.
//!
//! Lowering decisions (details in the `lower` module):
//! - `var x = e` evaluates `e` before declaring `x`, so an inner `var x = x + 1` reads the outer x.
//! - `continue` in a `for` leaves only the body block, so the step runs; `break` leaves the loop.
//! - `&&`/`||` short-circuit; both operands must be Booleans (GGE2104 otherwise).
//! - `switch` follows JavaScript: one evaluation of the scrutinee, labels compared with `==` in
//!   order and lazily, fall-through, `default` anywhere; each case body is its own scope.
//! - `a[] = e` pushes back; as a value it yields `e` (parked in a hidden local named `<pushN>`).
//! - Hidden locals have names containing `<`, which user identifiers cannot contain.
//! - Two parameters of one function with the same name are GGE1306 at compile time.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

mod compiler;
mod disasm;
pub mod ir;
mod lower;
pub mod map_name;
pub mod metadata;
mod options;
pub mod params;
mod validate_metadata;

pub use compiler::{compile, MAIN_FUNCTION};
pub use ir::{BlockId, CodeBlock, CompiledScript, EnumDef, Instruction, Name, Op, ScriptFunction};
pub use map_name::{check_map_name, is_valid_map_name, MapNameError, MAP_NAME_CHARACTERS, MAP_NAME_MAX_LEN};
pub use metadata::{Dimension, ParameterKind, ParameterValue, Restriction, ScriptMetadata, ScriptParameter};
pub use options::{CompileOptions, CORE_TYPE_NAMES};
pub use params::{default_value, parse_parameter_value};

#[cfg(test)]
mod test_ast;
#[cfg(test)]
mod tests;

//! The GeoGen Script compiler: a syntax tree to intermediate code ([`ir`]), with the compile-time
//! checks of reference §1.6 and the metadata validation of reference §2.

pub mod ir;
pub mod metadata;

pub use ir::{BlockId, CodeBlock, CompiledScript, EnumDef, Instruction, Name, Op, ScriptFunction};
pub use metadata::{Dimension, ParameterKind, ParameterValue, Restriction, ScriptMetadata, ScriptParameter};

//! The GeoGen Script virtual machine.
//!
//! It runs compiled intermediate code one instruction at a time ([`Vm::step`]); natives (operators,
//! the core library, map operations) are supplied by a [`Library`]. It knows nothing of pixels: map
//! operations only record rendering steps.
//!
//! ```text
//! let mut vm = Vm::new(Arc::new(compiled), Arc::new(library), VmConfig::default())?;
//! vm.run()?;                  // or vm.step() in a debugger, inspecting vm.call_stack(), vm.scopes()...
//! for (name, map) in vm.yielded() { ... }
//! ```

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

pub mod array;
mod describe;
pub mod env;
mod error;
pub mod heap;
pub mod host;
pub mod library;
pub mod machine;
pub mod native;
mod suggest;
pub mod types;
pub mod value;

pub use describe::{describe_number, describe_value};
pub use env::{Env, Limits, MapGeometry, Message, MessageSink};
pub use error::RuntimeError;
pub use heap::{Charge, Heap};
pub use host::{Extensions, Label, NamedTexts};
pub use library::Library;
pub use machine::{BlockInfo, FrameInfo, ScopeInfo, VariableInfo, Vm, VmConfig, VmStatus, MAIN_FUNCTION, MAIN_MAP};
pub use native::{Args, Ctx, Native, NativeFn, SignatureText};
pub use suggest::{close_names, did_you_mean};
pub use types::{TypeId, TypeInfo, TypeKind, TypeMethods, TypeRegistry};
pub use value::{Coordinate, EnumValue, Name, ObjectId, Point, ScriptString, Value};

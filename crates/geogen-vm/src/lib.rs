//! The GeoGen Script virtual machine.
//!
//! It runs compiled intermediate code one instruction at a time ([`Vm::step`]); natives (operators,
//! the core library, map operations) are supplied by a [`Library`]. It knows nothing of pixels: map
//! operations only record rendering steps.

pub mod array;
pub mod env;
mod error;
pub mod library;
pub mod native;
pub mod types;
pub mod value;

pub use env::{Env, Limits, MapGeometry, Message};
pub use error::RuntimeError;
pub use library::Library;
pub use native::{Args, Ctx, Native, NativeFn};
pub use types::{TypeId, TypeInfo, TypeKind, TypeMethods, TypeRegistry};
pub use value::{Coordinate, EnumValue, Name, ObjectId, Point, Value};

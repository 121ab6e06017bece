//! The GeoGen Script standard library, by family (spec §5): operators, math, arrays, coordinates,
//! randomness and messages (reference §4.1-§4.6); the HeightMap and HeightProfile operations
//! (§4.7, §4.8) in `generators`, `combiners`, `filters`, `transforms` and `profiles`; plus the test
//! library (`AssertEquals`).
//!
//! Core natives are small functions next to their [`Native`](geogen_vm::Native) declaration. Map
//! and profile operations are declared units ([`operation`]): one file each holds the script
//! signature, the argument checks, the recording of rendering steps, and the pixel side (bounds
//! rule, memory need, kernel).
//!
//! Numbers are computed with the pure-Rust `libm` so that results are identical on every platform;
//! no fused multiply-add is used anywhere.

// Tests pass one-element argument lists as `&[v.clone()]`, which reads better than `from_ref`.
#![cfg_attr(test, allow(clippy::cloned_ref_to_slice_refs))]

pub mod array;
pub mod combiners;
pub mod coordinates;
pub mod filters;
pub mod generators;
pub mod math;
pub mod messages;
pub mod names;
pub mod operation;
pub mod operators;
pub mod profiles;
pub mod random;
pub mod support;
pub mod testlib;
pub mod transforms;
mod util;

#[cfg(test)]
mod test_support;

use geogen_vm::Library;

pub use coordinates::{resolve_coordinate, resolve_point, Axis};
pub use messages::{format_number, format_template, format_value};

/// Everything of the core library: operators, math, Array, Number/Coordinate/Point/enum statics,
/// Random, RandomSequence2D, CreateNoiseLayers, Print and TriggerError, and `Names` (Lodestone names
/// and map labels).
pub fn core_library() -> Library {
    let mut lib = Library::new();
    operators::register(&mut lib);
    math::register(&mut lib);
    array::register(&mut lib);
    coordinates::register(&mut lib);
    random::register(&mut lib);
    messages::register(&mut lib);
    names::register(&mut lib);
    operation::register(&mut lib);
    lib
}

/// The test library: `AssertEquals(expected, actual)`.
pub fn test_library() -> Library {
    let mut lib = Library::new();
    testlib::register(&mut lib);
    lib
}

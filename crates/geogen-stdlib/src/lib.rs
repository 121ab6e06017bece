//! The GeoGen Script core standard library: operators, math, arrays, coordinates, randomness and
//! messages (reference §4.1-§4.6), the HeightMap operations (§4.7, recorded as rendering steps),
//! plus the test library (`AssertEquals`).
//!
//! Every native is a small function next to its [`Native`](geogen_vm::Native) declaration (name,
//! human signature, arity). Each family module has a `register` function that adds its natives to a
//! [`Library`].
//!
//! Numbers are computed with the pure-Rust `libm` so that results are identical on every platform;
//! no fused multiply-add is used anywhere.

// Tests pass one-element argument lists as `&[v.clone()]`, which reads better than `from_ref`.
#![cfg_attr(test, allow(clippy::cloned_ref_to_slice_refs))]

pub mod array;
pub mod coordinates;
pub mod maps;
pub mod math;
pub mod messages;
pub mod operators;
pub mod random;
pub mod testlib;
mod util;

#[cfg(test)]
mod test_support;

use geogen_vm::Library;

pub use coordinates::{resolve_coordinate, resolve_point, Axis};
pub use messages::{format_number, format_template, format_value};

/// Everything of the core library: operators, math, Array, Number/Coordinate/Point/enum statics,
/// Random, RandomSequence2D, CreateNoiseLayers, Print and TriggerError.
pub fn core_library() -> Library {
    let mut lib = Library::new();
    operators::register(&mut lib);
    math::register(&mut lib);
    array::register(&mut lib);
    coordinates::register(&mut lib);
    random::register(&mut lib);
    messages::register(&mut lib);
    maps::register(&mut lib);
    lib
}

/// The test library: `AssertEquals(expected, actual)`.
pub fn test_library() -> Library {
    let mut lib = Library::new();
    testlib::register(&mut lib);
    lib
}

//! The map operations, grouped by family. Each operation is one struct implementing
//! [`crate::Operation`]: its constant parameters, name, argument kinds, bounds rule, memory need and
//! kernel live together in one `impl`.
//!
//! To add an operation: write the struct and its `impl Operation` in the family file, then add one
//! line to [`OPERATION_NAMES`] (and a `pub use` if it lives in a new file).
//!
//! Heights are `f32` in [-1, 1] (the original's 16-bit `h × 32767`). Every operation saturates to
//! [-1, 1] where the original saturates; `Abs`, `Invert`, `Intersect`, `Unify`, `Combine`,
//! `MultiplyMap`, `Fill`, `CropHeights`, `Clone` and `Blur` cannot leave the range given in-range
//! inputs, and constants are saturated when an operation is constructed.

mod combiners;
mod filters;
mod generators;
mod pointwise;

pub use combiners::{AddMap, AddMasked, Clone, Combine, Intersect, MultiplyMap, Unify};
pub use filters::Blur;
pub use generators::{amplitude_units, default_noise_layers, push_noise, Flat, Gradient, NoiseLayer, RadialGradient};
pub use pointwise::{Abs, AddNumber, ClampHeights, CropHeights, Fill, Invert, MultiplyNumber};

/// The names of all operations this crate provides (the registry).
pub const OPERATION_NAMES: &[&str] = &[
    "HeightMap.Flat",
    "HeightMap.Gradient",
    "HeightMap.RadialGradient",
    "HeightMap.NoiseLayer",
    "HeightMap.Clone",
    "HeightMap.Abs",
    "HeightMap.Add",
    "HeightMap.AddMap",
    "HeightMap.AddMasked",
    "HeightMap.Multiply",
    "HeightMap.MultiplyMap",
    "HeightMap.Blur",
    "HeightMap.ClampHeights",
    "HeightMap.Combine",
    "HeightMap.Fill",
    "HeightMap.Intersect",
    "HeightMap.Unify",
    "HeightMap.Invert",
    "HeightMap.CropHeights",
    "Yield",
];

/// Shared argument-kind tables.
pub(crate) mod kinds {
    use crate::operation::ObjectKind::{self, Map};
    pub const NONE: &[ObjectKind] = &[];
    pub const ONE_MAP: &[ObjectKind] = &[Map];
    pub const TWO_MAPS: &[ObjectKind] = &[Map, Map];
    pub const THREE_MAPS: &[ObjectKind] = &[Map, Map, Map];
}

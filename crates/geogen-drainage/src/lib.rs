//! Whole-map drainage for geogen: the landscape a finite map becomes when rivers cut into it for a
//! while (stream-power incision with uplift, solved implicitly on a jittered mesh, lakes that fill
//! and spill, hillslope and marine diffusion, sediment laid down in lakes and at river mouths), the
//! river detail of that landscape at any resolution, and the D8 drainage measures of any height
//! map (closed pits, catchments, flow paths, direction bias) that tell whether a map drains.
//!
//! Pure numerics: no script, no renderer. The `Drainage` operation of the standard library feeds
//! it a grid rendered at a resolution fixed in map units, and renders its result at any scale.
//! Everything is deterministic: IEEE arithmetic in a fixed order, `libm` for powers, no FMA, and
//! parallel loops whose items never depend on each other.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

pub mod detail;
pub mod evolve;
pub mod flood;
pub mod measure;
pub mod mesh;
pub mod queue;
pub mod solve;

pub use detail::{Detail, Need, RiverShape, Sample, Sampler};
pub use measure::{measure, Measures};
pub use solve::{solve, Drainage, Input, Params, Stats};

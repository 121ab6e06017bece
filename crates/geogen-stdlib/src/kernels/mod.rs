//! Pixel kernels shared by several operations (each operation's own loop lives in its file). The
//! parallel row loops come from the engine (`geogen_render::kernels`).
//!
//! Determinism rules (spec §4): each output pixel is computed by exactly one thread, from its
//! inputs, in a fixed order that does not depend on where the buffer starts or how rows are split
//! among threads; no FMA (`mul_add`), no platform math (only IEEE basic operations and `libm`).

pub mod blur;
pub mod coherent;
pub mod distance;
pub mod erosion;
#[doc(hidden)]
pub mod erosion_reference;
pub(crate) mod lanes;
pub mod noise;
pub mod pointwise;
pub mod profile;
pub mod sample;
#[cfg(test)]
pub(crate) mod tested_builds;

pub use geogen_render::kernels::{for_each_row, map_pixels, zip1, zip2};

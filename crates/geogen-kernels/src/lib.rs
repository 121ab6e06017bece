//! geogen's pixel kernels: the numeric work of the map and profile operations, with nothing of
//! scripts in them. The operations of `geogen-stdlib` check their arguments and call these.
//!
//! Determinism rules (spec §4): each output pixel is computed by exactly one thread, from its
//! inputs, in a fixed order that does not depend on where the buffer starts or how rows are split
//! among threads; no FMA (`mul_add`), no platform math (only IEEE basic operations and `libm`).
//!
//! Vector code is written once over [`lanes::Lanes`] (f32 and i32 lanes with IEEE basic
//! operations, scalar, AVX2 and AVX-512), with the scalar build as the definition; a kernel asks
//! `geogen_simd::active()` which build to run. The parallel row loops are the engine's
//! (`geogen_render::rows`).

pub mod blur;
pub mod coherent;
pub mod distance;
pub mod erosion;
#[doc(hidden)]
pub mod erosion_reference;
pub mod lanes;
pub mod lanes64;
pub mod noise;
pub mod profile;
pub mod sample;

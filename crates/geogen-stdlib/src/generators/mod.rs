//! Generators: operations that create a map from constants and logical coordinates (and `Clone`).
//! Each pixel is a pure function of its coordinate, seeds and constants, so any tile reproduces the
//! same pixels.

mod cell_noise;
mod cellular_noise;
mod clone;
pub(crate) mod coherent_noise;
mod flat;
mod from_height_slang;
mod gradient;
mod input;
mod noise;
mod pattern;
mod perlin_noise;
mod picogen_noise;
mod projection;
mod radial_gradient;
mod ridged_noise;
mod simplex_noise;

pub use cell_noise::CellNoise;
pub use cellular_noise::CellularNoise;
pub use clone::Clone;
pub use coherent_noise::CoherentNoise;
pub use flat::Flat;
pub use from_height_slang::FromHeightSlang;
pub use gradient::Gradient;
pub use input::{example_inputs, Input};
pub use noise::{push_noise, Noise, NoiseLayer};
pub use pattern::Pattern;
pub use perlin_noise::PerlinNoise;
pub use picogen_noise::PicogenNoise;
pub use projection::Projection;
pub use radial_gradient::RadialGradient;
pub use ridged_noise::RidgedNoise;
pub use simplex_noise::SimplexNoise;

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![
    flat::Flat,
    gradient::Gradient,
    radial_gradient::RadialGradient,
    noise::Noise,
    ridged_noise::RidgedNoise,
    clone::Clone,
    projection::Projection,
    cell_noise::CellNoise,
    pattern::Pattern,
    from_height_slang::FromHeightSlang,
    picogen_noise::PicogenNoise,
    input::Input,
    perlin_noise::PerlinNoise,
    simplex_noise::SimplexNoise,
    cellular_noise::CellularNoise,
];

//! Filters: operations changing heights, pointwise (their bounds rule is the default: the argument
//! needs exactly B) or from a neighbourhood (their rule adds the margin they read).

mod abs;
mod blur;
mod clamp_heights;
mod convexity_map;
mod crop;
mod crop_heights;
mod distance_map;
mod drainage;
mod draw_line;
mod fill;
mod fill_rectangle;
mod glaciate;
mod gullies;
mod hydraulic_erosion;
mod invert;
mod stratify;
mod terrace;
mod thermal_erosion;
mod transform_heights;

pub use abs::Abs;
pub use blur::Blur;
pub use clamp_heights::ClampHeights;
pub use convexity_map::ConvexityMap;
pub use crop::{logical_rect_pixels, Crop};
pub use crop_heights::CropHeights;
pub use distance_map::DistanceMap;
pub use drainage::{Drainage, DrainageOutput};
pub use draw_line::DrawLine;
pub use fill::Fill;
pub use fill_rectangle::FillRectangle;
pub use glaciate::Glaciate;
pub use gullies::Gullies;
pub use hydraulic_erosion::HydraulicErosion;
pub use invert::Invert;
pub use stratify::{terrace_profile, Stratify, TERRACE_SAMPLES};
pub use thermal_erosion::ThermalErosion;
pub use transform_heights::{remap_heights, TransformHeights};

pub use crate::combiners::{AddNumber, MultiplyNumber};

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![
    abs::Abs,
    invert::Invert,
    fill::Fill,
    clamp_heights::ClampHeights,
    crop_heights::CropHeights,
    blur::Blur,
    fill_rectangle::FillRectangle,
    transform_heights::TransformHeights,
    stratify::Stratify,
    crop::Crop,
    draw_line::DrawLine,
    glaciate::Glaciate,
    distance_map::DistanceMap,
    convexity_map::ConvexityMap,
    terrace::Terrace,
    thermal_erosion::ThermalErosion,
    hydraulic_erosion::HydraulicErosion,
    gullies::Gullies,
    drainage::Drainage,
];

//! Filters: operations changing heights, pointwise (their bounds rule is the default: the argument
//! needs exactly B) or from a neighbourhood (their rule adds the margin they read).

mod abs;
mod blur;
mod clamp_heights;
mod crop_heights;
mod fill;
mod fill_rectangle;
mod invert;
mod stratify;
mod transform_heights;

pub use abs::Abs;
pub use blur::Blur;
pub use clamp_heights::ClampHeights;
pub use crop_heights::CropHeights;
pub use fill::Fill;
pub use fill_rectangle::FillRectangle;
pub use invert::Invert;
pub use stratify::{terrace_profile, Stratify, TERRACE_SAMPLES};
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
];

//! HeightProfile operations: the 1-D counterparts of the map operations, over intervals
//! (reference §4.8). A profile is a run of heights over a physical interval; its steps have their
//! own 1-D bounds (an interval), and the map operations that read profiles (`Projection`, `Shift`,
//! `TransformHeights`) ask for the interval they read.
//!
//! Positions given to profile operations are logical and resolved like map coordinates: whole
//! units, scaled to physical pixels with `trunc(x × scale)`; a pair of positions (`FillInterval`,
//! `Crop`, `Pattern`) spans both ends inclusive in either order, which fixes the original's broken
//! `Interval::FromCoordinates`.

mod abs;
mod add;
mod blur;
mod clamp_heights;
mod clone;
mod combine;
mod crop;
mod crop_heights;
mod fill;
mod fill_interval;
mod flat;
mod flip;
mod from_array;
mod gradient;
mod intersect;
mod invert;
mod r#move;
mod multiply;
mod noise;
mod pattern;
mod rescale;
mod slice;
mod unify;

pub use abs::ProfileAbs;
pub use add::ProfileAdd;
pub use blur::ProfileBlur;
pub use clamp_heights::ProfileClampHeights;
pub use clone::ProfileClone;
pub use combine::ProfileCombine;
pub use crop::ProfileCrop;
pub use crop_heights::ProfileCropHeights;
pub use fill::ProfileFill;
pub use fill_interval::ProfileFillInterval;
pub use flat::ProfileFlat;
pub use flip::ProfileFlip;
pub use from_array::ProfileFromArray;
pub use gradient::ProfileGradient;
pub use intersect::ProfileIntersect;
pub use invert::ProfileInvert;
pub use multiply::ProfileMultiply;
pub use noise::{ProfileNoise, ProfileNoiseLayer};
pub use pattern::ProfilePattern;
pub use r#move::ProfileMove;
pub use rescale::ProfileRescale;
pub use slice::ProfileSlice;
pub use unify::ProfileUnify;

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![
    flat::ProfileFlat,
    from_array::ProfileFromArray,
    gradient::ProfileGradient,
    noise::ProfileNoise,
    pattern::ProfilePattern,
    slice::ProfileSlice,
    clone::ProfileClone,
    abs::ProfileAbs,
    add::ProfileAdd,
    blur::ProfileBlur,
    clamp_heights::ProfileClampHeights,
    combine::ProfileCombine,
    crop::ProfileCrop,
    crop_heights::ProfileCropHeights,
    fill::ProfileFill,
    fill_interval::ProfileFillInterval,
    flip::ProfileFlip,
    intersect::ProfileIntersect,
    invert::ProfileInvert,
    r#move::ProfileMove,
    multiply::ProfileMultiply,
    rescale::ProfileRescale,
    unify::ProfileUnify,
];

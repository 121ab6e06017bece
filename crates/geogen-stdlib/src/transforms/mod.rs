//! Transforms: operations that move pixels around (translate, rescale, rotate, shear, flip,
//! distort, shift). Their bounds rules map B back through the transform.

mod distort;
mod flip;
mod r#move;
mod rescale;
mod rotate;
mod shear;
mod shift;
mod transform;
mod warp;

pub use distort::{Distort, NoiseDistort};
pub use flip::Flip;
pub use r#move::Move;
pub use rescale::Rescale;
pub use rotate::Rotate;
pub use shear::Shear;
pub use shift::Shift;
pub use transform::Transform;
pub use warp::Warp;

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![
    r#move::Move,
    rescale::Rescale,
    rotate::Rotate,
    shear::Shear,
    flip::Flip,
    transform::Transform,
    distort::Distort,
    shift::Shift,
    warp::Warp,
];

//! Transforms: operations that move pixels around (translate, rescale, rotate, shear, flip,
//! distort, shift). Their bounds rules map B back through the transform.

mod shift;

pub use shift::Shift;

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![shift::Shift];

//! HeightProfile operations: the 1-D counterparts of the map operations, over intervals.

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] = crate::operations![];

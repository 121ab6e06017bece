//! `map.Flip(direction)`: a mirror image about an axis through the origin [0, 0].

use geogen_vm::{RuntimeError, Value};

use super::transform::record_transform;
use crate::coordinates::Axis;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Flip;

impl Declared for Flip {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Flip",
        receiver: Receiver::Method,
        params: &[Param::direction("direction")],
        checks: &[],
        family: Family::Transform,
        summary: "Mirrors the map about the origin [0, 0]: Horizontal swaps left and right (the transform \
                  (−1, 0; 0, 1), pixel x takes −x), Vertical swaps top and bottom ((1, 0; 0, −1)).",
        examples: &[
            Example {
                script: "yield HeightMap.Gradient([-4, 0], [4, 0], -1, 1).Flip(Direction.Horizontal);",
                size: (5, 2),
                expect: &[(0, 0, 0.0), (2, 1, -0.5), (4, 0, -1.0)],
            },
            Example {
                script: "yield HeightMap.Gradient([0, -4], [0, 4], -1, 1).Flip(Direction.Vertical);",
                size: (2, 5),
                expect: &[(0, 0, 0.0), (1, 1, -0.25), (0, 4, -1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let matrix = match call.axis("direction")? {
            Axis::Horizontal => [-1.0, 0.0, 0.0, 1.0],
            Axis::Vertical => [1.0, 0.0, 0.0, -1.0],
        };
        record_transform(rec, "HeightMap.Flip", matrix)
    }
}

//! `map.Shear(factor, direction)`: a shear about the origin [0, 0].

use geogen_vm::{RuntimeError, Value};

use super::transform::record_transform;
use crate::coordinates::Axis;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Shear;

impl Declared for Shear {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Shear",
        receiver: Receiver::Method,
        params: &[Param::number("factor"), Param::direction("direction")],
        checks: &[],
        family: Family::Transform,
        summary: "Shears the map about the origin [0, 0]: Horizontal is the transform (1, factor; 0, 1) \
                  (row y slides by factor × y), Vertical is (1, 0; factor, 1). Pixels are sampled \
                  bilinearly.",
        examples: &[
            Example {
                // Row y slides right by y: pixel (x, y) takes (x − y, y) of the ramp x / 4.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Shear(1, Direction.Horizontal);",
                size: (5, 3),
                expect: &[(1, 0, 0.25), (3, 1, 0.5), (4, 2, 0.5), (1, 2, 0.0)],
            },
            Example {
                // Column x slides down by x / 2: pixel (x, y) takes (x, y − x / 2) of the ramp y / 4.
                script: "yield HeightMap.Gradient([0, 0], [0, 4], 0, 1).Shear(0.5, Direction.Vertical);",
                size: (3, 4),
                expect: &[(2, 3, 0.5), (1, 2, 0.375), (0, 1, 0.25)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let f = call.number("factor")?;
        let matrix = match call.axis("direction")? {
            Axis::Horizontal => [1.0, f, 0.0, 1.0],
            Axis::Vertical => [1.0, 0.0, f, 1.0],
        };
        record_transform(rec, "HeightMap.Shear", matrix)
    }
}

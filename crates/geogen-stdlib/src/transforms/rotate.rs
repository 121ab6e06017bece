//! `map.Rotate(angle)`: rotation about the origin [0, 0] by `angle` radians.

use geogen_vm::{RuntimeError, Value};

use super::transform::record_transform;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Rotate;

impl Declared for Rotate {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Rotate",
        receiver: Receiver::Method,
        params: &[Param::number("angle")],
        checks: &[],
        family: Family::Transform,
        summary: "Rotates the map about the origin [0, 0] by `angle` radians: the transform (cos, −sin; \
                  sin, cos), clockwise on screen since y points down. Pixels are sampled bilinearly.",
        examples: &[Example {
            // A raised pixel at (2, 0) turns a quarter clockwise to (0, 2).
            script: "yield HeightMap.Flat(0).FillRectangle([2, 0], [2, 0], 1).Rotate(1.5707963267948966);",
            size: (3, 3),
            expect: &[(0, 2, 1.0), (2, 0, 0.0), (0, 0, 0.0), (1, 1, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let angle = call.number("angle")?;
        let (sin, cos) = (libm::sin(angle), libm::cos(angle));
        record_transform(rec, "HeightMap.Rotate", [cos, -sin, sin, cos])
    }
}

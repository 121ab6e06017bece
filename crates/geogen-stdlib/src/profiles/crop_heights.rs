//! `profile.CropHeights(min, max, replace = 0)`: heights outside [min, max] become `replace`.

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Check, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileCropHeights {
    pub min: f32,
    pub max: f32,
    pub replace: f32,
}

impl Declared for ProfileCropHeights {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "CropHeights",
        receiver: Receiver::Method,
        params: &[Param::height("min"), Param::height("max"), Param::height("replace").or(0.0)],
        checks: &[Check::Ordered(0, 1)],
        family: Family::Filter,
        summary: "Heights below `min` or above `max` become `replace`; the others stay. (It crashed the \
                  original at render time.)",
        examples: &[Example {
            script: "var p = HeightProfile.Gradient(0, 4, -1, 1).CropHeights(-0.5, 0.5, 0.75);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (5, 1),
            expect: &[(0, 0, 0.75), (1, 0, -0.5), (2, 0, 0.0), (3, 0, 0.5), (4, 0, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileCropHeights {
            min: height_from_f64(call.number("min")?),
            max: height_from_f64(call.number("max")?),
            replace: height_from_f64(call.number("replace")?),
        };
        rec.modify(op, &[])
    }
}

crate::pointwise_operation!(
    ProfileCropHeights,
    "HeightProfile.CropHeights",
    Profile,
    |d| format!("{}, {}, {}", d.min, d.max, d.replace),
    |s, h| {
        // All three read before the choice, so the loop vectorises to a select.
        let (min, max, replace) = (s.min, s.max, s.replace);
        if (h < min) | (h > max) {
            replace
        } else {
            h
        }
    }
);

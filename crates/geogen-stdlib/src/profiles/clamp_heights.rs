//! `profile.ClampHeights(min, max)`: clamp every height into [min, max].

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Check, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileClampHeights {
    pub min: f32,
    pub max: f32,
}

impl Declared for ProfileClampHeights {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "ClampHeights",
        receiver: Receiver::Method,
        params: &[Param::height("min"), Param::height("max")],
        checks: &[Check::Ordered(0, 1)],
        family: Family::Filter,
        summary: "Clamps every height into [min, max]. Unlike the original (which crashed at render \
                  time and did not check), min above max is GGE2705, as for maps.",
        examples: &[Example {
            script: "var p = HeightProfile.Gradient(0, 4, -1, 1).ClampHeights(-0.5, 0.25);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (5, 1),
            expect: &[(0, 0, -0.5), (1, 0, -0.5), (2, 0, 0.0), (3, 0, 0.25), (4, 0, 0.25)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileClampHeights {
            min: height_from_f64(call.number("min")?),
            max: height_from_f64(call.number("max")?),
        };
        rec.modify(op, &[])
    }
}

crate::pointwise_operation!(
    ProfileClampHeights,
    "HeightProfile.ClampHeights",
    Profile,
    |d| format!("{}, {}", d.min, d.max),
    |s, h| h.max(s.min).min(s.max)
);

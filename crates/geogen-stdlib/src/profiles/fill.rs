//! `profile.Fill(height)`: one height everywhere.

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileFill {
    pub height: f32,
}

impl Declared for ProfileFill {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Fill",
        receiver: Receiver::Method,
        params: &[Param::height("height")],
        checks: &[],
        family: Family::Filter,
        summary: "Sets every height of the profile to `height`.",
        examples: &[Example {
            script: "yield HeightMap.Projection(HeightProfile.Noise().Fill(0.75), Direction.Vertical);",
            size: (3, 1),
            expect: &[(0, 0, 0.75), (2, 0, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileFill { height: height_from_f64(call.number("height")?) }, &[])
    }
}

crate::pointwise_operation!(ProfileFill, "HeightProfile.Fill", Profile, |d| d.height.to_string(), |s, _h| s.height);

//! `profile.Invert()`: −h.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileInvert;

impl Declared for ProfileInvert {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Invert",
        receiver: Receiver::Method,
        params: &[],
        checks: &[],
        family: Family::Filter,
        summary: "Turns the profile upside down: every height h becomes −h.",
        examples: &[Example {
            script: "yield HeightMap.Projection(HeightProfile.Gradient(0, 4, -1, 0).Invert(), Direction.Vertical);",
            size: (5, 1),
            expect: &[(0, 0, 1.0), (1, 0, 0.75), (4, 0, 0.0)],
        }],
    };

    fn record(_: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileInvert, &[])
    }
}

crate::pointwise_operation!(ProfileInvert, "HeightProfile.Invert", Profile, |_d| String::new(), |_s, h| -h);

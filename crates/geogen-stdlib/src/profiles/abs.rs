//! `profile.Abs()`: |h|.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileAbs;

impl Declared for ProfileAbs {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Abs",
        receiver: Receiver::Method,
        params: &[],
        checks: &[],
        family: Family::Filter,
        summary: "Replaces every height by its absolute value. (It crashed the original at render time.)",
        examples: &[Example {
            script: "yield HeightMap.Projection(HeightProfile.Gradient(0, 4, -1, 1).Abs(), Direction.Vertical);",
            size: (5, 1),
            expect: &[(0, 0, 1.0), (1, 0, 0.5), (2, 0, 0.0), (3, 0, 0.5), (4, 0, 1.0)],
        }],
    };

    fn record(_: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileAbs, &[])
    }
}

crate::pointwise_operation!(ProfileAbs, "HeightProfile.Abs", Profile, |_d| String::new(), |_s, h| h.abs());

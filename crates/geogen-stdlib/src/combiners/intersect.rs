//! `map.Intersect(other)`: the lower of the two heights.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Intersect;

impl Declared for Intersect {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Intersect",
        receiver: Receiver::Method,
        params: &[Param::map("other")],
        checks: &[],
        family: Family::Combiner,
        summary: "Keeps the lower of the two heights at each pixel (min), where both maps exist.",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [2, 0], -1, 1).Intersect(HeightMap.Flat(0.5));",
            size: (3, 1),
            expect: &[(0, 0, -1.0), (1, 0, 0.0), (2, 0, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Intersect, &[call.object("other")?])
    }
}

super::binary_map_operation!(Intersect, "HeightMap.Intersect", |h, o| h.min(o), unchanged where |b, range| {
    crate::support::at_least_all(b, range)
});

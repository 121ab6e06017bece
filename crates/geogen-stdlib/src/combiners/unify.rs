//! `map.Unify(other)`: the higher of the two heights.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Unify;

impl Declared for Unify {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Unify",
        receiver: Receiver::Method,
        params: &[Param::map("other")],
        checks: &[],
        family: Family::Combiner,
        summary: "Keeps the higher of the two heights at each pixel (max), where both maps exist.",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [2, 0], -1, 1).Unify(HeightMap.Flat(-0.5));",
            size: (3, 1),
            expect: &[(0, 0, -0.5), (1, 0, 0.0), (2, 0, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Unify, &[call.object("other")?])
    }
}

super::binary_map_operation!(Unify, "HeightMap.Unify", |h, o| h.max(o), unchanged where |b, range| {
    crate::support::at_most_all(b, range)
});

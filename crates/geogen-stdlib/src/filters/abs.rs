//! `map.Abs()`: |h|.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Abs;

impl Declared for Abs {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Abs",
        receiver: Receiver::Method,
        params: &[],
        checks: &[],
        family: Family::Filter,
        summary: "Replaces every height by its absolute value: valleys below 0 become hills.",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [2, 0], -1, 1).Abs();",
            size: (3, 1),
            expect: &[(0, 0, 1.0), (1, 0, 0.0), (2, 0, 1.0)],
        }],
    };

    fn record(_: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Abs, &[])
    }
}

crate::pointwise_operation!(Abs, "HeightMap.Abs", Map, |_d| String::new(), |_s, h| h.abs());

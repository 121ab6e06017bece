//! `map.Invert()`: −h.

use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Invert;

impl Declared for Invert {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Invert",
        receiver: Receiver::Method,
        params: &[],
        checks: &[],
        family: Family::Filter,
        summary: "Turns the map upside down: every height h becomes −h.",
        examples: &[Example { script: "yield HeightMap.Flat(0.25).Invert();", size: (2, 2), expect: &[(0, 0, -0.25)] }],
    };

    fn record(_: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Invert, &[])
    }
}

crate::pointwise_operation!(Invert, "HeightMap.Invert", Map, |_d| String::new(), |_s, h| -h);

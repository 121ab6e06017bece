//! `map.ClampHeights(min, max)`: clamp every height into [min, max].

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Check, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ClampHeights {
    pub min: f32,
    pub max: f32,
}

impl ClampHeights {
    pub fn new(min: f64, max: f64) -> ClampHeights {
        ClampHeights { min: height_from_f64(min), max: height_from_f64(max) }
    }
}

impl Declared for ClampHeights {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "ClampHeights",
        receiver: Receiver::Method,
        params: &[Param::height("min"), Param::height("max")],
        checks: &[Check::Ordered(0, 1)],
        family: Family::Filter,
        summary: "Clamps every height into [min, max]: lower heights become `min`, higher ones `max`.",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [4, 0], -1, 1).ClampHeights(-0.5, 0.25);",
            size: (5, 1),
            expect: &[(0, 0, -0.5), (1, 0, -0.5), (2, 0, 0.0), (3, 0, 0.25), (4, 0, 0.25)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ClampHeights::new(call.number("min")?, call.number("max")?), &[])
    }
}

crate::pointwise_operation!(
    ClampHeights,
    "HeightMap.ClampHeights",
    Map,
    |d| format!("{}, {}", d.min, d.max),
    |s, h| h.max(s.min).min(s.max)
);

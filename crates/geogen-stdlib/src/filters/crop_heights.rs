//! `map.CropHeights(min, max, replace = 0)`: heights outside [min, max] become `replace`.

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Check, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct CropHeights {
    pub min: f32,
    pub max: f32,
    pub replace: f32,
}

impl CropHeights {
    pub fn new(min: f64, max: f64, replace: f64) -> CropHeights {
        CropHeights { min: height_from_f64(min), max: height_from_f64(max), replace: height_from_f64(replace) }
    }
}

impl Declared for CropHeights {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "CropHeights",
        receiver: Receiver::Method,
        params: &[Param::height("min"), Param::height("max"), Param::height("replace").or(0.0)],
        checks: &[Check::Ordered(0, 1)],
        family: Family::Filter,
        summary: "Heights below `min` or above `max` become `replace`; the others stay. With min = max it \
                  selects one exact height (a sharpening trick).",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [4, 0], -1, 1).CropHeights(-0.5, 0.5, 0.75);",
            size: (5, 1),
            expect: &[(0, 0, 0.75), (1, 0, -0.5), (2, 0, 0.0), (3, 0, 0.5), (4, 0, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(CropHeights::new(call.number("min")?, call.number("max")?, call.number("replace")?), &[])
    }
}

crate::pointwise_operation!(
    CropHeights,
    "HeightMap.CropHeights",
    Map,
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

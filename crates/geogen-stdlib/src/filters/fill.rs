//! `map.Fill(height)`: one height everywhere the map exists.

use geogen_render::raster::height_from_f64;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    pub height: f32,
}

impl Fill {
    pub fn new(height: f64) -> Fill {
        Fill { height: height_from_f64(height) }
    }
}

impl Declared for Fill {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Fill",
        receiver: Receiver::Method,
        params: &[Param::height("height")],
        checks: &[],
        family: Family::Filter,
        summary: "Sets every height of the map to `height`.",
        examples: &[Example {
            script: "yield HeightMap.Noise().Fill(-0.75);",
            size: (3, 3),
            expect: &[(0, 0, -0.75), (2, 2, -0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Fill::new(call.number("height")?), &[])
    }
}

crate::pointwise_operation!(Fill, "HeightMap.Fill", Map, |d| d.height.to_string(), |s, _h| s.height);

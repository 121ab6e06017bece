//! `map.Terrace(levels, sharpness = 1)`: cuts the height range into equal steps, like rice
//! terraces or a contour model. (Not in the original GeoGen.)

use geogen_diag::codes;
use geogen_render::raster::saturate;
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Terrace {
    /// Number of steps over [-1, 1], whole.
    pub levels: f64,
    /// 0 leaves heights unchanged, 1 makes flat steps with vertical risers.
    pub sharpness: f64,
}

impl Terrace {
    /// The terraced height of `h`: with u = (h + 1) / 2 × levels, its step k = ⌊u⌋ and the fraction
    /// f = u − k, the lower part f < sharpness of every step is flat (at k) and the rest rises
    /// linearly to the next step, so the riser gets steeper as sharpness grows.
    fn apply(&self, h: f32) -> f32 {
        let u = (f64::from(h) + 1.0) * 0.5 * self.levels;
        let step = libm::floor(u);
        let fraction = u - step;
        let rise =
            if self.sharpness >= 1.0 { 0.0 } else { ((fraction - self.sharpness) / (1.0 - self.sharpness)).max(0.0) };
        saturate(((step + rise) / self.levels * 2.0 - 1.0) as f32)
    }
}

impl Declared for Terrace {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Terrace",
        receiver: Receiver::Method,
        params: &[
            Param::new("levels", Kind::Range { min: 1.0, max: 1000.0, code: codes::GGE2716 }),
            Param::new("sharpness", Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2715 }).or(1.0),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Cuts [-1, 1] into `levels` equal steps (whole, in [1, 1000], GGE2716): in each step the \
                  lower `sharpness` part (in [0, 1], GGE2715) is flat and the rest rises linearly to the \
                  next step; 1 gives flat terraces with vertical risers, 0 changes nothing. Unlike \
                  `Stratify`, steps are equal and the same for negative heights. (Not in the original.)",
        examples: &[
            Example {
                // levels 4: steps at -1, -0.5, 0, 0.5. A ramp from -1 to 1 over 8 pixels.
                script: "yield HeightMap.Gradient([0, 0], [8, 0], -1, 1).Terrace(4);",
                size: (9, 1),
                expect: &[
                    (0, 0, -1.0),
                    (1, 0, -1.0),
                    (2, 0, -0.5),
                    (3, 0, -0.5),
                    (5, 0, 0.0),
                    (7, 0, 0.5),
                    (8, 0, 1.0),
                ],
            },
            Example {
                // sharpness 0.5: within each half-unit step, the first half is flat, the second rises.
                // x = 3: h = -0.25, u = 1.5, fraction 0.5 → flat at step 1 (-0.5); x = 7: h = 0.75,
                // u = 3.5 → 0.5; x = 1: h = -0.75, u = 0.5 → -1.
                script: "yield HeightMap.Gradient([0, 0], [8, 0], -1, 1).Terrace(4, 0.5);",
                size: (9, 1),
                expect: &[(1, 0, -1.0), (3, 0, -0.5), (7, 0, 0.5)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Terrace { levels: libm::trunc(call.number("levels")?), sharpness: call.number("sharpness")? }, &[])
    }
}

crate::pointwise_operation!(Terrace, "HeightMap.Terrace", Map, |d| format!("{}, {}", d.levels, d.sharpness), |s, h| s
    .apply(h));

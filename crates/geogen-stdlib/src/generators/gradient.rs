//! `HeightMap.Gradient(source, destination, fromHeight, toHeight)`: a linear ramp.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::kernels::for_each_row;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    pub source: (f64, f64),
    pub destination: (f64, f64),
    pub from: f32,
    pub to: f32,
}

impl Gradient {
    pub fn new(source: (f64, f64), destination: (f64, f64), from: f64, to: f64) -> Gradient {
        Gradient { source, destination, from: height_from_f64(from), to: height_from_f64(to) }
    }
}

impl Declared for Gradient {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Gradient",
        receiver: Receiver::Static,
        params: &[
            Param::point("source"),
            Param::point("destination"),
            Param::height("fromHeight"),
            Param::height("toHeight"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A linear ramp from `fromHeight` at `source` to `toHeight` at `destination`, constant \
                  beyond either end: each pixel's logical point is projected exactly onto the line (the \
                  original truncated the length to whole units, which made its ramp up to 68/32767 \
                  higher).",
        examples: &[Example {
            script: "yield HeightMap.Gradient([0, 0], [4, 0], -1, 1);",
            size: (6, 2),
            expect: &[(0, 0, -1.0), (1, 0, -0.5), (2, 1, 0.0), (3, 0, 0.5), (4, 0, 1.0), (5, 1, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = Gradient::new(call.point_f64(0)?, call.point_f64(1)?, call.number(2)?, call.number(3)?);
        rec.create(op, &[])
    }
}

impl Operation for Gradient {
    fn name(&self) -> &str {
        "HeightMap.Gradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!(
            "[{}, {}], [{}, {}], {}, {}",
            self.source.0, self.source.1, self.destination.0, self.destination.1, self.from, self.to
        )
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let (sx, sy) = self.source;
        let (vx, vy) = (self.destination.0 - sx, self.destination.1 - sy);
        let len2 = vx * vx + vy * vy;
        let (from, to) = (f64::from(self.from), f64::from(self.to));
        let scale = ctx.scale;
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let ly = to_logical(py, scale);
            for (i, h) in row.iter_mut().enumerate() {
                let lx = to_logical(x0 + i as i64, scale);
                // Projection parameter of the pixel on the segment (0 at source, 1 at destination).
                let t = if len2 > 0.0 { ((lx - sx) * vx + (ly - sy) * vy) / len2 } else { 0.0 };
                let v = if t <= 0.0 {
                    from
                } else if t >= 1.0 {
                    to
                } else {
                    from + (to - from) * t
                };
                *h = saturate(v as f32);
            }
        });
        Ok(())
    }
}

//! `HeightMap.RadialGradient(center, radius, centerHeight, rimHeight)`: a cone.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::scale::{scaled_distance, to_physical};
use geogen_render::{
    Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, Rect, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::kernels::for_each_row;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct RadialGradient {
    pub center: (f64, f64),
    pub radius: f64,
    pub center_height: f32,
    pub rim_height: f32,
}

impl RadialGradient {
    pub fn new(center: (f64, f64), radius: f64, center_height: f64, rim_height: f64) -> RadialGradient {
        RadialGradient {
            center,
            radius,
            center_height: height_from_f64(center_height),
            rim_height: height_from_f64(rim_height),
        }
    }
}

impl Declared for RadialGradient {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "RadialGradient",
        receiver: Receiver::Static,
        params: &[
            Param::point("center"),
            Param::size("radius"),
            Param::height("centerHeight"),
            Param::height("rimHeight"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A cone: `centerHeight` at `center`, falling linearly to `rimHeight` at distance \
                  `radius` and `rimHeight` beyond. Distances are measured in pixels from the scaled \
                  centre against the scaled radius, as the original does.",
        examples: &[Example {
            script: "yield HeightMap.RadialGradient([2, 2], 4, 1, -1);",
            size: (8, 8),
            expect: &[(2, 2, 1.0), (4, 2, 0.0), (2, 6, -1.0), (7, 7, -1.0), (2, 3, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = RadialGradient::new(call.point_f64(0)?, call.number(1)?, call.number(2)?, call.number(3)?);
        rec.create(op, &[])
    }
}

impl Operation for RadialGradient {
    fn name(&self) -> &str {
        "HeightMap.RadialGradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], {}, {}, {}", self.center.0, self.center.1, self.radius, self.center_height, self.rim_height)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    /// Beyond the radius every pixel is the rim height as the kernel writes it. A pixel more than
    /// `ceil(r) + 1` from the centre along either axis has a computed distance above `r` (the
    /// rounding of `sqrt(dx² + dy²)` is far below a pixel at these magnitudes).
    fn support(&self, _: &[Facts], ctx: &OpContext) -> Option<Support> {
        const FAR: i64 = 1 << 50;
        let cx = to_physical(self.center.0, ctx.scale);
        let cy = to_physical(self.center.1, ctx.scale);
        let r = scaled_distance(self.radius, ctx.scale) as f64;
        if !(0.0..FAR as f64).contains(&r) || cx.unsigned_abs() > FAR as u64 || cy.unsigned_abs() > FAR as u64 {
            return None;
        }
        let reach = libm::ceil(r) as i64 + 1;
        Some(Support {
            rect: Rect::from_corners((cx - reach, cy - reach), (cx + reach, cy + reach)),
            background: saturate(f64::from(self.rim_height) as f32),
        })
    }
    /// Between the two heights: the interpolation `center + (rim − center) × d / r` with
    /// `d ≤ r` (see `interpolated_range`).
    fn range(&self, _: &[Facts], _: &OpContext) -> Range {
        crate::support::interpolated_range(Range::between(self.center_height, self.rim_height))
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let cx = to_physical(self.center.0, ctx.scale) as f64;
        let cy = to_physical(self.center.1, ctx.scale) as f64;
        let r = scaled_distance(self.radius, ctx.scale) as f64;
        let (center, rim) = (f64::from(self.center_height), f64::from(self.rim_height));
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let dy = py as f64 - cy;
            for (i, h) in row.iter_mut().enumerate() {
                let dx = (x0 + i as i64) as f64 - cx;
                let d = libm::sqrt(dx * dx + dy * dy);
                let v = if d > r {
                    rim
                } else if r == 0.0 {
                    center
                } else {
                    center + (rim - center) * d / r
                };
                *h = saturate(v as f32);
            }
        });
        Ok(())
    }
}

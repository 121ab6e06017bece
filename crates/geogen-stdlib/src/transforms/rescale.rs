//! `map.Rescale(hScale, vScale = hScale)`: scales the map about the origin [0, 0].

use geogen_diag::codes;
use geogen_render::{
    Bounds, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_kernels::sample::{covering_rect, resample_separable};

const FACTOR: Kind = Kind::Range { min: 0.1, max: 10.0, code: codes::GGE2714 };

/// Output pixel `p` is the bilinear sample of the map at `(px / horizontal, py / vertical)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rescale {
    pub horizontal: f64,
    pub vertical: f64,
}

impl Rescale {
    #[inline]
    fn source(&self, px: i64, py: i64) -> (f64, f64) {
        (px as f64 / self.horizontal, py as f64 / self.vertical)
    }
}

impl Declared for Rescale {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Rescale",
        receiver: Receiver::Method,
        params: &[Param::new("hScale", FACTOR), Param::new("vScale", FACTOR).same_as(0)],
        checks: &[],
        family: Family::Transform,
        summary: "Stretches the map about the origin [0, 0] by `hScale` horizontally and `vScale` \
                  vertically (each in [0.1, 10], GGE2714): pixel (x, y) becomes the bilinear sample at \
                  (x / hScale, y / vScale). Unlike the original, shrinking keeps the whole map (it \
                  left everything beyond factor × size at 0).",
        examples: &[
            Example {
                // Twice as wide: pixel x takes x / 2 of the ramp x / 4.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Rescale(2, 1);",
                size: (8, 2),
                expect: &[(1, 0, 0.125), (4, 1, 0.5), (7, 0, 0.875)],
            },
            Example {
                // Half as tall (vScale defaults to hScale here): pixel y takes 2y of the ramp y / 8.
                script: "yield HeightMap.Gradient([0, 0], [0, 8], 0, 1).Rescale(0.5);",
                size: (2, 6),
                expect: &[(0, 1, 0.25), (1, 3, 0.75), (0, 5, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Rescale { horizontal: call.number("hScale")?, vertical: call.number("vScale")? }, &[])
    }
}

impl Operation for Rescale {
    fn name(&self) -> &str {
        "HeightMap.Rescale"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}", self.horizontal, self.vertical)
    }
    /// The map must cover B divided by the factors, rounded outward, plus one pixel for the
    /// bilinear neighbour and rounding.
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        let r = own.rect();
        let (x1, y1) = r.last_pixel();
        let (ax, ay) = self.source(r.x, r.y);
        let (bx, by) = self.source(x1, y1);
        vec![Bounds::Map(covering_rect((ax, bx), (ay, by), 1))]
    }
    /// The result covers exactly B.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn support(&self, args: &[Facts], _: &OpContext) -> Option<Support> {
        let (h, v) = (self.horizontal, self.vertical);
        let condition = (h.max(v) / h.min(v)).max(1.0);
        crate::support::resampled_support(crate::support::support_of(args, 0), condition, |x, y| (x * h, y * v))
    }
    fn range(&self, args: &[Facts], _: &OpContext) -> Range {
        crate::support::interpolated_range(crate::support::range_of(args, 0))
    }
    fn replaces_target(&self) -> bool {
        true
    }
    fn render_replacing(&self, ctx: &KernelContext, source: &Object, _: &[&Object]) -> Result<Object, RenderError> {
        self.render_from(Isa::best(), ctx, source)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        self.render_on(Isa::best(), ctx, target)
    }
}

impl Rescale {
    /// The kernel on `isa` (the tests force each). The positions are separable: each column's X
    /// (`px / horizontal`) is computed once, each row's Y once per row, with the formula of
    /// [`Rescale::source`].
    pub fn render_on(&self, isa: Isa, ctx: &KernelContext, target: &mut Object) -> Result<(), RenderError> {
        *target = self.render_from(isa, ctx, target)?;
        Ok(())
    }

    /// The rescaled map of `source`, over the step's bounds.
    fn render_from(&self, isa: Isa, ctx: &KernelContext, source: &Object) -> Result<Object, RenderError> {
        let rect = ctx.bounds.rect();
        let columns: Vec<f64> = (0..rect.width as i64).map(|i| self.source(rect.x + i, 0).0).collect();
        Ok(Object::Map(resample_separable(isa, source.as_map()?, rect, &columns, |py| self.source(0, py).1)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_kernels::sample::resample_on;
    use geogen_render::{Bounds, HeightMap, Rect};

    /// The separable kernel on every instruction set gives the bits of the plain resampling with
    /// the two-coordinate formula, for stretching and shrinking factors and off-origin tiles.
    #[test]
    fn separable_kernel_equals_the_plain_resampling_on_every_isa() {
        let source_rect = Rect::new(-70, -50, 140, 100);
        // Signed zeros and infinities too: a kept fraction must not turn −0 into +0 or ∞ into NaN.
        let data: Vec<f32> = (0..14000u32)
            .map(|k| match k % 29 {
                0 => -0.0,
                1 => f32::INFINITY,
                _ => geogen_random::hash1(k) as f32 / u32::MAX as f32 * 2.0 - 1.0,
            })
            .collect();
        let source = HeightMap::from_data(source_rect, data).unwrap();
        for (h, v) in [(3.0, 1.0), (0.7, 2.5), (1.0, 1.0), (10.0, 0.1), (1.3, 1.7), (1.0, 3.0), (0.1, 10.0)] {
            let op = Rescale { horizontal: h, vertical: v };
            // The last reads well beyond the source on every side (clamped columns and rows).
            for rect in [Rect::new(-60, -40, 120, 80), Rect::new(13, -7, 67, 29), Rect::new(-200, -120, 400, 240)] {
                let plain = resample_on(Isa::Scalar, &source, rect, |px, py| op.source(px, py)).unwrap();
                let ctx = KernelContext::new(1.0, Bounds::Map(rect));
                for isa in Isa::available() {
                    let mut target = Object::Map(source.clone());
                    op.render_on(isa, &ctx, &mut target).unwrap();
                    let got = target.as_map().unwrap();
                    assert_eq!(got.rect(), rect);
                    let same = got.data().iter().zip(plain.data()).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{isa:?} Rescale({h}, {v}) over {rect:?}");
                }
            }
        }
    }
}

//! `map.Transform(a11, a12, a21, a22)`: a linear map about the origin, and the one kernel of
//! `Rotate`, `Shear` and `Flip` too.
//!
//! Each output pixel `p` is mapped back through the inverse matrix and the map is sampled there
//! bilinearly. Since the matrix is linear and the physical grid is the logical one scaled about the
//! origin, `M⁻¹ × (p / scale) × scale = M⁻¹ × p`: the kernel works in physical pixels and is the
//! same at every scale. Each pixel's source position is computed from its absolute coordinates
//! alone, so every tile samples the same positions.

use geogen_diag::codes;
use geogen_render::{
    Bounds, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use crate::util::n;
use geogen_kernels::coherent::Isa;
use geogen_kernels::sample::{covering_rect, resample_linear};

/// The rendering step of every linear transform: output over its bounds B, each pixel sampled from
/// the map at `inverse × p`.
#[derive(Clone, Debug, PartialEq)]
pub struct Transform {
    /// The script operation it was recorded for (`HeightMap.Rotate`, ...), for listings.
    pub name: &'static str,
    /// The matrix as given, row-major `[a11, a12, a21, a22]`.
    pub matrix: [f64; 4],
    /// Its inverse, row-major.
    pub inverse: [f64; 4],
}

impl Transform {
    /// The transform with this matrix, or GGE2712 if it cannot be inverted (a zero or non-finite
    /// determinant, or an inverse that overflows).
    pub fn new(name: &'static str, matrix: [f64; 4]) -> Result<Transform, RuntimeError> {
        let [a11, a12, a21, a22] = matrix;
        let det = a11 * a22 - a12 * a21;
        let inverse = [a22 / det, -a12 / det, -a21 / det, a11 / det];
        if det == 0.0 || !det.is_finite() || inverse.iter().any(|v| !v.is_finite()) {
            return Err(RuntimeError::new(
                codes::GGE2712,
                format!(
                    "the matrix ({}, {}; {}, {}) cannot be inverted (its determinant is {})",
                    n(a11),
                    n(a12),
                    n(a21),
                    n(a22),
                    n(det)
                ),
            )
            .with_hint("a transformation must not collapse the map onto a line or a point"));
        }
        Ok(Transform { name, matrix, inverse })
    }

    /// The physical source position of output pixel `(px, py)`.
    #[inline]
    fn source(&self, px: i64, py: i64) -> (f64, f64) {
        let [i11, i12, i21, i22] = self.inverse;
        let (x, y) = (px as f64, py as f64);
        (i11 * x + i12 * y, i21 * x + i22 * y)
    }
}

/// Records a linear transform of the receiver.
pub(crate) fn record_transform(
    rec: &mut Recorder<'_, '_>,
    name: &'static str,
    matrix: [f64; 4],
) -> Result<Value, RuntimeError> {
    rec.modify(Transform::new(name, matrix)?, &[])
}

impl Declared for Transform {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Transform",
        receiver: Receiver::Method,
        params: &[Param::number("a11"), Param::number("a12"), Param::number("a21"), Param::number("a22")],
        checks: &[],
        family: Family::Transform,
        summary: "Applies the linear map (a11, a12; a21, a22) about the origin [0, 0]: each pixel becomes \
                  the bilinear sample of the map at the inverse image of its position. A matrix that \
                  cannot be inverted (determinant 0) is GGE2712.",
        examples: &[
            Example {
                // Doubling X: pixel x samples x / 2, halfway between two ramp pixels at odd x.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Transform(2, 0, 0, 1);",
                size: (6, 2),
                expect: &[(0, 0, 0.0), (1, 0, 0.125), (2, 1, 0.25), (5, 0, 0.625)],
            },
            Example {
                // Swapping the axes: pixel (x, y) takes (y, x).
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Transform(0, 1, 1, 0);",
                size: (5, 5),
                expect: &[(3, 0, 0.0), (0, 2, 0.5), (4, 4, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let matrix = [call.number("a11")?, call.number("a12")?, call.number("a21")?, call.number("a22")?];
        record_transform(rec, "HeightMap.Transform", matrix)
    }
}

impl Operation for Transform {
    fn name(&self) -> &str {
        self.name
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        let [a, b, c, d] = self.matrix;
        format!("{a}, {b}, {c}, {d}")
    }
    /// The map must cover the inverse image of B: the bounding box of B's corners mapped back,
    /// rounded outward, plus one pixel for the bilinear neighbour and rounding.
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        let r = own.rect();
        let (x0, y0) = (r.x, r.y);
        let (x1, y1) = r.last_pixel();
        let corners = [self.source(x0, y0), self.source(x1, y0), self.source(x0, y1), self.source(x1, y1)];
        let min_max = |f: fn(&(f64, f64)) -> f64| {
            corners.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        vec![Bounds::Map(covering_rect(min_max(|c| c.0), min_max(|c| c.1), 1))]
    }
    /// The result covers exactly B.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn support(&self, args: &[Facts], _: &OpContext) -> Option<Support> {
        let [a11, a12, a21, a22] = self.matrix;
        // The condition number, bounded by the product of the Frobenius norms.
        let norm = |m: [f64; 4]| libm::sqrt(m.iter().map(|v| v * v).sum::<f64>());
        let condition = norm(self.matrix) * norm(self.inverse);
        crate::support::resampled_support(crate::support::support_of(args, 0), condition, |x, y| {
            (a11 * x + a12 * y, a21 * x + a22 * y)
        })
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
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        *target = self.render_replacing(ctx, target, inputs)?;
        Ok(())
    }
}

impl Transform {
    /// The transformed map of `source` over the step's bounds, on `isa` (the tests force each):
    /// each pixel's position is [`Transform::source`]'s arithmetic, a row piece at a time.
    pub fn render_from(&self, isa: Isa, ctx: &KernelContext, source: &Object) -> Result<Object, RenderError> {
        Ok(Object::Map(resample_linear(isa, source.as_map()?, ctx.bounds.rect(), self.inverse)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_kernels::sample::bilinear;
    use geogen_render::{HeightMap, Rect};

    /// The kernel on every instruction set gives each pixel the bits of the bilinear sample at
    /// `Transform::source` of its own coordinates: rotations (steep and shallow), a shear and a
    /// flip, over rectangles narrower than a block, not whole blocks or bands, and far from the
    /// origin, with the source over the step's required bounds.
    #[test]
    fn kernel_equals_the_per_pixel_definition_on_every_isa() {
        let rotation = |a: f64| [libm::cos(a), -libm::sin(a), libm::sin(a), libm::cos(a)];
        let matrices = [rotation(0.5), rotation(1.3), rotation(2.5), [1.0, 0.7, 0.0, 1.0], [-1.0, 0.0, 0.0, 1.0]];
        let rects = [Rect::new(-3, 2, 1, 1), Rect::new(-40, -33, 131, 70), Rect::new(100_003, -70_001, 67, 35)];
        for matrix in matrices {
            let op = Transform::new("HeightMap.Transform", matrix).unwrap();
            for rect in rects {
                let source_rect = op.required_bounds(Bounds::Map(rect), &OpContext { scale: 1.0 })[0].rect();
                let len = (source_rect.width * source_rect.height) as u32;
                let data = (0..len).map(|k| geogen_random::hash1(k) as f32 / u32::MAX as f32 - 0.5).collect();
                let source = Object::Map(HeightMap::from_data(source_rect, data).unwrap());
                let ctx = KernelContext::new(1.0, Bounds::Map(rect));
                for isa in Isa::available() {
                    let got = op.render_from(isa, &ctx, &source).unwrap();
                    let got = got.as_map().unwrap();
                    for py in rect.y..rect.y + rect.height as i64 {
                        for px in rect.x..rect.x + rect.width as i64 {
                            let (x, y) = op.source(px, py);
                            let want = bilinear(source.as_map().unwrap(), x, y).to_bits();
                            assert_eq!(
                                got.get(px, py).unwrap().to_bits(),
                                want,
                                "{isa:?} {matrix:?} {rect} ({px}, {py})"
                            );
                        }
                    }
                }
            }
        }
    }
}

//! `HeightMap.Gradient(source, destination, fromHeight, toHeight)`: a linear ramp.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_render::rows::for_each_row;

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
        let op = Gradient::new(
            call.point_f64("source")?,
            call.point_f64("destination")?,
            call.number("fromHeight")?,
            call.number("toHeight")?,
        );
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
        let map = target.as_map_mut()?;
        // A segment of no length (or NaN): every pixel is at its source (t = 0).
        if len2.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            let h = saturate(from as f32);
            for_each_row(map, |_, _, row| row.fill(h));
            return Ok(());
        }
        // The column's part of each pixel's projection, the same for every row.
        let rect = map.rect();
        let mut columns: Vec<f64> = Vec::new();
        columns
            .try_reserve_exact(map.width())
            .map_err(|_| RenderError::Allocation { bytes: rect.width.saturating_mul(8) })?;
        columns.extend((0..rect.width as i64).map(|i| (to_logical(rect.x + i, scale) - sx) * vx));
        let isa = Isa::best();
        for_each_row(map, |py, _, row| {
            let across = (to_logical(py, scale) - sy) * vy;
            ramp_row(isa, &columns, across, len2, (from, to), row);
        });
        Ok(())
    }
}

/// A row of the ramp: pixel `i`'s projection parameter on the segment (0 at the source, 1 at the
/// destination) is `(columns[i] + across) / len2`, then the height between `from` and `to`. On
/// `isa` (the tests force each); LLVM vectorises the loop for AVX2, with the same operations in
/// the same order per pixel, so the same bits.
fn ramp_row(isa: Isa, columns: &[f64], across: f64, len2: f64, heights: (f64, f64), row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_available() {
        // SAFETY: AVX2 is available (checked just above).
        return unsafe { ramp_row_avx2(columns, across, len2, heights, row) };
    }
    let _ = isa;
    ramp_row_on(columns, across, len2, heights, row);
}

/// # Safety
/// AVX2 must be available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ramp_row_avx2(columns: &[f64], across: f64, len2: f64, heights: (f64, f64), row: &mut [f32]) {
    ramp_row_on(columns, across, len2, heights, row);
}

#[inline(always)]
fn ramp_row_on(columns: &[f64], across: f64, len2: f64, (from, to): (f64, f64), row: &mut [f32]) {
    for (h, &column) in row.iter_mut().zip(columns) {
        let t = (column + across) / len2;
        let v = if t <= 0.0 {
            from
        } else if t >= 1.0 {
            to
        } else {
            from + (to - from) * t
        };
        *h = saturate(v as f32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_render::{Bounds, HeightMap, Rect};

    /// The ramp as defined pixel by pixel (what the kernel computed before it was vectorised).
    fn defined(g: &Gradient, scale: f64, px: i64, py: i64) -> f32 {
        let (sx, sy) = g.source;
        let (vx, vy) = (g.destination.0 - sx, g.destination.1 - sy);
        let len2 = vx * vx + vy * vy;
        let (from, to) = (f64::from(g.from), f64::from(g.to));
        let (lx, ly) = (to_logical(px, scale), to_logical(py, scale));
        let t = if len2 > 0.0 { ((lx - sx) * vx + (ly - sy) * vy) / len2 } else { 0.0 };
        let v = if t <= 0.0 {
            from
        } else if t >= 1.0 {
            to
        } else {
            from + (to - from) * t
        };
        saturate(v as f32)
    }

    #[test]
    fn the_ramp_is_its_definition_on_every_isa() {
        let gradients = [
            Gradient::new((0.0, 0.0), (300.0, 100.0), -1.0, 1.0),
            Gradient::new((5.5, -3.0), (-20.0, 40.0), 0.7, -0.2),
            Gradient::new((1.0, 1.0), (1.0, 1.0), 0.4, -1.0),
            Gradient::new((0.0, 0.0), (1e-170, 0.0), 1.0, 0.0),
            Gradient::new((0.0, 0.0), (1e200, -1e200), 1.0, -1.0),
            Gradient::new((0.0, f64::NAN), (3.0, 4.0), 1.0, -1.0),
        ];
        let rects = [Rect::new(-17, -5, 37, 6), Rect::new(1 << 40, -(1 << 41), 9, 3), Rect::new(0, 0, 1, 1)];
        for (k, g) in gradients.iter().enumerate() {
            for scale in [1.0, 0.7, 3.0] {
                for rect in rects {
                    let ctx = KernelContext::new(scale, Bounds::Map(rect));
                    for isa in [Isa::Scalar, Isa::Avx2] {
                        let mut target = Object::Map(HeightMap::try_zeroed(rect).unwrap());
                        let mut columns = Vec::new();
                        let (vx, vy) = (g.destination.0 - g.source.0, g.destination.1 - g.source.1);
                        if vx * vx + vy * vy > 0.0 {
                            // The rows through `ramp_row` on this ISA.
                            columns.extend(
                                (0..rect.width as i64).map(|i| (to_logical(rect.x + i, scale) - g.source.0) * vx),
                            );
                            let map = target.as_map_mut().unwrap();
                            let width = map.width();
                            for (r, row) in map.data_mut().chunks_mut(width).enumerate() {
                                let across = (to_logical(rect.y + r as i64, scale) - g.source.1) * vy;
                                let heights = (f64::from(g.from), f64::from(g.to));
                                ramp_row(isa, &columns, across, vx * vx + vy * vy, heights, row);
                            }
                        } else {
                            g.render(&ctx, &mut target, &[]).unwrap();
                        }
                        let mut rendered = Object::Map(HeightMap::try_zeroed(rect).unwrap());
                        g.render(&ctx, &mut rendered, &[]).unwrap();
                        for (map, what) in [(target.as_map().unwrap(), "row"), (rendered.as_map().unwrap(), "render")] {
                            for (i, h) in map.data().iter().enumerate() {
                                let (px, py) =
                                    (rect.x + (i as u64 % rect.width) as i64, rect.y + (i as u64 / rect.width) as i64);
                                let want = defined(g, scale, px, py);
                                assert_eq!(
                                    h.to_bits(),
                                    want.to_bits(),
                                    "gradient {k}, {what} {isa:?}, scale {scale}, ({px}, {py})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

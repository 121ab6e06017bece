//! `HeightMap.Pattern(pattern, a, b)`: repeats a rectangle of a map over the whole plane.

use geogen_render::rows::for_each_row;
use geogen_render::{
    Bounds, Effect, HeightMap, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::filters::logical_rect_pixels;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// Opposite corners of the repeated rectangle in logical units, both included.
    pub a: (f64, f64),
    pub b: (f64, f64),
}

/// Far enough out that the memory plan refuses it, near enough that nothing overflows.
const FAR: f64 = (1u64 << 62) as f64;

impl Pattern {
    /// The repeated rectangle in physical pixels, at least one pixel on each axis (a rectangle
    /// narrower than a pixel at a small scale repeats its first pixel).
    fn tile(&self, scale: f64) -> Rect {
        let r = logical_rect_pixels(self.a, self.b, scale);
        let at_least_one = |i: Interval, lo: f64, hi: f64| {
            if i.is_empty() {
                let c = libm::ceil(lo.min(hi) * scale);
                Interval::new(if c.is_nan() { 0 } else { c.clamp(-FAR, FAR) as i64 }, 1)
            } else {
                i
            }
        };
        Rect::from_intervals(
            at_least_one(r.x_interval(), self.a.0, self.b.0),
            at_least_one(r.y_interval(), self.a.1, self.b.1),
        )
    }
}

/// The part of the period `[start, start + len)` that the pixels `needed` map to: all of it, or
/// the one unwrapped run `needed` falls on.
fn needed_part(period: Interval, needed: Interval) -> Interval {
    let len = period.length as i128;
    if needed.length as i128 >= len {
        return period;
    }
    let first = (needed.start as i128).rem_euclid(len);
    let last = (needed.end() - 1).rem_euclid(len);
    if first <= last {
        Interval::from_range(period.start as i128 + first, period.start as i128 + last + 1)
    } else {
        period
    }
}

impl Declared for Pattern {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Pattern",
        receiver: Receiver::Static,
        params: &[Param::map("pattern"), Param::point("a"), Param::point("b")],
        checks: &[],
        family: Family::Generator,
        summary: "A new map tiling the plane with the rectangle of `pattern` with corners `a` and `b` (both \
                  included): its size is the period, and the copies are anchored at the origin, so pixel \
                  (x, y) takes the rectangle's pixel (x mod width, y mod height) from its corner, for \
                  negative coordinates too.",
        examples: &[Example {
            // The ramp x / 3 (0, 1/3, 2/3, 1) with columns 1–2 repeated: x even → 1/3, x odd → 2/3.
            script: "yield HeightMap.Pattern(HeightMap.Gradient([0, 0], [3, 0], 0, 1), [1, 0], [2, 0]);",
            size: (5, 2),
            expect: &[(0, 0, 1.0 / 3.0), (1, 1, 2.0 / 3.0), (2, 0, 1.0 / 3.0), (3, 1, 2.0 / 3.0), (4, 1, 1.0 / 3.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(Pattern { a: call.point_f64("a")?, b: call.point_f64("b")? }, &[call.object("pattern")?])
    }
}

impl Operation for Pattern {
    fn name(&self) -> &str {
        "HeightMap.Pattern"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], [{}, {}]", self.a.0, self.a.1, self.b.0, self.b.1)
    }
    /// The pattern needs the repeated rectangle, or just the part of it B's pixels map to.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let tile = self.tile(ctx.scale);
        let r = own.rect();
        vec![Bounds::Map(Rect::from_intervals(
            needed_part(tile.x_interval(), r.x_interval()),
            needed_part(tile.y_interval(), r.y_interval()),
        ))]
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let pattern: &HeightMap =
            inputs.first().ok_or_else(|| RenderError::Internal("Pattern without its pattern".into()))?.as_map()?;
        let tile = self.tile(ctx.scale);
        let (w, h) = (tile.width as i128, tile.height as i128);
        let source = |p: i64, start: i64, len: i128| (start as i128 + (p as i128).rem_euclid(len)) as i64;
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let sy = source(py, tile.y, h);
            for (i, v) in row.iter_mut().enumerate() {
                // Inside the needed part when the bounds hold; 0 otherwise.
                *v = pattern.get(source(x0 + i as i64, tile.x, w), sy).unwrap_or(0.0);
            }
        });
        Ok(())
    }
}

//! `map.Crop(a, b, replace = 0)`: keeps a rectangle, replaces everything else.

use geogen_render::raster::height_from_f64;
use geogen_render::{
    Bounds, Effect, HeightMap, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::for_each_row;

/// The physical pixels whose logical coordinates lie in the rectangle with the *inclusive* logical
/// corners `a` and `b` (in any order): logical `[lo, hi + 1)` on each axis, i.e. pixels
/// `[⌈lo × scale⌉, ⌈(hi + 1) × scale⌉)`. At scale 1 that is `lo..=hi`; at scale 0.5 pixel p is in
/// it exactly when pixel 2p is at scale 1. May be empty on an axis at small scales.
pub fn logical_rect_pixels(a: (f64, f64), b: (f64, f64), scale: f64) -> Rect {
    let axis = |p: f64, q: f64| {
        let (lo, hi) = (p.min(q), p.max(q));
        let edge = |v: f64| {
            let c = libm::ceil(v * scale);
            if c.is_nan() {
                0
            } else {
                c.clamp(i64::MIN as f64, i64::MAX as f64) as i128
            }
        };
        Interval::from_range(edge(lo), edge(hi + 1.0))
    };
    Rect::from_intervals(axis(a.0, b.0), axis(a.1, b.1))
}

#[derive(Clone, Debug, PartialEq)]
pub struct Crop {
    /// Opposite corners in logical units, both included.
    pub a: (f64, f64),
    pub b: (f64, f64),
    pub replace: f32,
}

impl Declared for Crop {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Crop",
        receiver: Receiver::Method,
        params: &[Param::point("a"), Param::point("b"), Param::height("replace").or(0.0)],
        checks: &[],
        family: Family::Filter,
        summary: "Keeps the rectangle with corners `a` and `b` (both included, in any order) and sets every \
                  other pixel to `replace`. The map is only computed inside the rectangle. (The \
                  original's Crop did nothing when the map was also used elsewhere.)",
        examples: &[
            Example {
                script: "yield HeightMap.Flat(0.5).Crop([1, 1], [2, 3], -0.25);",
                size: (4, 5),
                expect: &[(0, 0, -0.25), (1, 1, 0.5), (2, 3, 0.5), (3, 3, -0.25), (1, 4, -0.25), (0, 2, -0.25)],
            },
            Example {
                // Crop works on a map that is also used elsewhere (the original's did not).
                script: "var m = HeightMap.Flat(0.5); var c = HeightMap.Clone(m); m.Crop([2, 0], [0, 1]);\
                         yield m; yield c as \"copy\";",
                size: (4, 3),
                expect: &[(0, 0, 0.5), (2, 1, 0.5), (3, 0, 0.0), (0, 2, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = Crop {
            a: call.point_f64("a")?,
            b: call.point_f64("b")?,
            replace: height_from_f64(call.number("replace")?),
        };
        rec.modify(op, &[])
    }
}

impl Operation for Crop {
    fn name(&self) -> &str {
        "HeightMap.Crop"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], [{}, {}], {}", self.a.0, self.a.1, self.b.0, self.b.1, self.replace)
    }
    /// Only the part of B inside the rectangle is read.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().intersect(&logical_rect_pixels(self.a, self.b, ctx.scale)))]
    }
    /// The result covers exactly B (the map may have been computed on less of it).
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let keep = logical_rect_pixels(self.a, self.b, ctx.scale);
        let source = target.as_map()?;
        let mut out = HeightMap::try_zeroed(ctx.bounds.rect())?;
        let replace = self.replace;
        for_each_row(&mut out, |py, x0, row| {
            for (i, h) in row.iter_mut().enumerate() {
                let px = x0 + i as i64;
                *h = if keep.contains_point(px, py) { source.get(px, py).unwrap_or(replace) } else { replace };
            }
        });
        *target = Object::Map(out);
        Ok(())
    }
}

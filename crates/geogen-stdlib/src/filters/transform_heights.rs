//! `map.TransformHeights(profile, start = 0, end = 100, minHeight = 0, maxHeight = 1)`: map every
//! height through a profile used as a transfer function.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::{
    Bounds, Effect, HeightMap, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{
    Along, Call, Check, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature,
};
use geogen_kernels::profile::{physical_interval, profile_input, sample_linear};
use geogen_render::rows::map_pixels;

#[derive(Clone, Debug, PartialEq)]
pub struct TransformHeights {
    /// The part of the profile used, logical positions, both ends included, in either order.
    pub start: i32,
    pub end: i32,
    /// The heights transformed; the others stay.
    pub min: f32,
    pub max: f32,
}

impl TransformHeights {
    /// The physical interval of the profile that is read.
    fn interval(&self, scale: f64) -> Interval {
        physical_interval(self.start, self.end, scale)
    }
}

/// Replaces every height `h` of `map` in `[min, max]` by `transfer` read at `t·(len − 1)`, where
/// t = (h − min) / (max − min) runs from 0 to 1 (0 when min = max) and `transfer(position)` reads
/// a table of `len` entries (fractional positions read between two entries). Heights outside the
/// range stay. Pointwise, so exact on any tile.
pub fn remap_heights(map: &mut HeightMap, min: f32, max: f32, len: u64, transfer: impl Fn(f64) -> f32 + Sync + Send) {
    let (lo, hi) = (f64::from(min), f64::from(max));
    let last = len.saturating_sub(1) as f64;
    map_pixels(map, |h| {
        if h < min || h > max {
            return h;
        }
        let t = if hi > lo { (f64::from(h) - lo) / (hi - lo) } else { 0.0 };
        transfer(t * last)
    });
}

impl Declared for TransformHeights {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "TransformHeights",
        receiver: Receiver::Method,
        params: &[
            Param::profile("profile"),
            Param::new("start", Kind::Coordinate(Along::Absolute)).or(0.0),
            Param::new("end", Kind::Coordinate(Along::Absolute)).or(100.0),
            Param::height("minHeight").or(0.0),
            Param::height("maxHeight").or(1.0),
        ],
        checks: &[Check::Ordered(3, 4)],
        family: Family::Filter,
        summary: "Maps every height through a profile: heights in [minHeight, maxHeight] are spread over \
                  the positions [start, end] of the profile (both ends included, in either order; \
                  absolute, GGE2703 otherwise), minHeight to the lower end and maxHeight to the higher \
                  one, and take the profile's height there, read linearly between positions. Other \
                  heights stay. (The original used one position when start < end, so its default \
                  (0, 100) mapped everything to the profile at 0.)",
        examples: &[
            Example {
                // The profile falls from 1 at 0 to −1 at 100; heights 0, 0.5, 1 read it at 0, 50,
                // 100; the negative heights stay.
                script: "var p = HeightProfile.FromArray({0: 1, 100: -1});\
                         yield HeightMap.Gradient([0, 0], [4, 0], -1, 1).TransformHeights(p);",
                size: (5, 1),
                expect: &[(0, 0, -1.0), (1, 0, -0.5), (2, 0, 1.0), (3, 0, 0.0), (4, 0, -1.0)],
            },
            Example {
                // The whole range [−1, 1] over [100, 0] (the same interval as [0, 100]).
                script: "var p = HeightProfile.FromArray({0: 1, 100: -1});\
                         yield HeightMap.Gradient([0, 0], [4, 0], -1, 1).TransformHeights(p, 100, 0, -1, 1);",
                size: (5, 1),
                expect: &[(0, 0, 1.0), (1, 0, 0.5), (2, 0, 0.0), (3, 0, -0.5), (4, 0, -1.0)],
            },
            Example {
                // A spike at position 1 of [0, 2]: heights between positions read linearly.
                script: "var p = HeightProfile.Flat(0).FillInterval(1, 1, 1);\
                         yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).TransformHeights(p, 0, 2);",
                size: (5, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.5), (2, 0, 1.0), (3, 0, 0.5), (4, 0, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = TransformHeights {
            start: call.coordinate("start")?,
            end: call.coordinate("end")?,
            min: height_from_f64(call.number("minHeight")?),
            max: height_from_f64(call.number("maxHeight")?),
        };
        rec.modify(op, &[call.object("profile")?])
    }
}

impl Operation for TransformHeights {
    fn name(&self) -> &str {
        "HeightMap.TransformHeights"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}, {}", self.start, self.end, self.min, self.max)
    }
    /// The map needs B; the profile needs its interval [start, end] (scaled), whatever B is.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![own, Bounds::Profile(self.interval(ctx.scale))]
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let profile = profile_input(inputs, 0)?;
        let interval = self.interval(ctx.scale);
        let first = interval.start as f64;
        remap_heights(target.as_map_mut()?, self.min, self.max, interval.length, |position| {
            saturate(sample_linear(profile, first + position))
        });
        Ok(())
    }
}
